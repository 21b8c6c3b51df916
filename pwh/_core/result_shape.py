"""The hook-result and intent schemas read into a one-pass copy: the early exit's first step in the
result check (:func:`pwh._core.contracts.check_result`).

The check's general path copies an untrusted answer with paths (``to_plain``) and validates the
copy against the JSON Schemas (jsonschema, to say why): general code that pays path bookkeeping
and a call per node. :class:`ResultShape` does both at once for the shipped hook-result and intent
schemas, their constants, patterns and bounds read from ``pwh/schemas/``, not restated. It never
rejects: whatever it is not sure of (a float where an integer is due, a tuple, a read-only view, a
dict key that is not an exact string, any schema rule broken) returns ``None``, and the general
path decides and explains. It knows no registration and no dispatch: the rules beyond the schemas
(the byte budget, the intent count, bindings, digests, duplicates) are stated once, in the
contracts, and the early exit applies them to this copy as the general path does to its own. A
property test (tests/core/test_result_check.py) holds the early exit to accepting only what the
general path accepts, with the same copy and the same bytes.

If the shipped schemas ever stop having the shape this module knows, it switches itself off
(``enabled`` is false) rather than guess; a test asserts it is on for the shipped schemas.
"""

from __future__ import annotations

import re
from operator import itemgetter
from typing import Any

from pwh._core.boundary import BoundaryScanner
from pwh._core.canonical import QuickCopyUnsure, quick_copy
from pwh._core.schemas import load_schema

_RESULT_KEYS = ("schema_version", "status", "intents")
_INTENT_KEYS = tuple(
    """
    schema_version intent_id hook_id capability_id source_dispatch_id intent_kind operation
    policy_version payload budget requested_write_scope failure_policy grants_new_action_authority
    external_write_performed
    """.split()
)
_TOKENS = ("intent_id", "hook_id", "capability_id", "source_dispatch_id", "intent_kind", "operation", "policy_version")
_CONSTS = ("schema_version", "failure_policy", "grants_new_action_authority", "external_write_performed")
_STATUS_RULE = (
    {"properties": {"status": {"const": "not_applicable"}}},
    {"properties": {"intents": {"maxItems": 0}}},
    {"properties": {"intents": {"minItems": 1}}},
)


class ResultShape:
    """The one-pass copy; build once, share (it holds no per-call state)."""

    def __init__(self) -> None:
        try:
            self._read(load_schema("hook_result"), load_schema("intent"))
            self.enabled = True
        except (KeyError, TypeError, ValueError, AssertionError, re.error):
            self.enabled = False

    def _read(self, result: dict[str, Any], intent: dict[str, Any]) -> None:
        props = result["properties"]
        assert tuple(props) == _RESULT_KEYS and tuple(result["required"]) == _RESULT_KEYS
        assert result["additionalProperties"] is False and result["type"] == "object"
        assert (result["if"], result["then"], result["else"]) == _STATUS_RULE
        assert set(result) <= {
            "$schema",
            "$id",
            "title",
            "description",
            "type",
            "properties",
            "required",
            "additionalProperties",
            "if",
            "then",
            "else",
        }
        self._result_version = props["schema_version"]["const"]
        self._statuses = frozenset(props["status"]["enum"])
        assert props["intents"] == {"type": "array", "items": {"$ref": intent["$id"]}, "maxItems": props["intents"]["maxItems"]}
        self._max_intents = int(props["intents"]["maxItems"])

        iprops = intent["properties"]
        assert tuple(iprops) == _INTENT_KEYS and tuple(intent["required"]) == _INTENT_KEYS
        assert intent["additionalProperties"] is False and intent["type"] == "object"
        assert set(intent) <= {"$schema", "$id", "title", "description", "type", "properties", "required", "additionalProperties"}
        consts = {}
        for key in _CONSTS:
            assert set(iprops[key]) == {"const"}
            consts[key] = iprops[key]["const"]
        assert type(consts["schema_version"]) is str and type(consts["failure_policy"]) is str
        assert consts["grants_new_action_authority"] is False and consts["external_write_performed"] is False
        self._consts = tuple((key, type(want), want) for key, want in consts.items())
        tokens = []
        for key in _TOKENS:
            assert set(iprops[key]) == {"type", "pattern"} and iprops[key]["type"] == "string"
            tokens.append((key, re.compile(iprops[key]["pattern"]).search))
        self._tokens = tuple(tokens)
        assert iprops["payload"] == {"type": "object"}
        budget = iprops["budget"]
        assert set(budget) == {"type", "properties", "required", "additionalProperties"} and budget["additionalProperties"] is False
        assert tuple(budget["required"]) == ("max_attempts", "max_result_bytes") == tuple(budget["properties"])
        bounds = []
        for key, rule in budget["properties"].items():
            assert set(rule) == {"type", "minimum", "maximum"} and rule["type"] == "integer"
            bounds.append((key, int(rule["minimum"]), int(rule["maximum"])))
        self._bounds = tuple(bounds)
        scope = iprops["requested_write_scope"]
        assert set(scope) == {"type", "items", "maxItems", "uniqueItems"} and scope["uniqueItems"] is True
        assert set(scope["items"]) == {"type", "pattern"} and scope["items"]["type"] == "string"
        self._scope_pattern = re.compile(scope["items"]["pattern"])
        self.keys = _RESULT_KEYS + _INTENT_KEYS + tuple(key for key, _, _ in self._bounds)  # every key outside a payload
        self._scope_max = int(scope["maxItems"])

    def copy(self, value: Any, max_bytes: int) -> dict[str, Any] | None:
        """The plain copy ``to_plain(value, max_bytes=max_bytes)`` would make, when ``value``
        certainly satisfies the hook-result schema (and the intent schema in each intent), else
        ``None``. ``max_bytes`` stops a huge payload early: an over-budget answer is left to the
        general path, which says so."""
        if not self.enabled or type(value) is not dict:
            return None
        try:
            return self._result(value, [max_bytes])
        except Exception:  # unsure, too deep, over the budget: the general path decides
            return None

    def clean(self, plain: dict[str, Any], scanner: BoundaryScanner) -> bool:
        """Whether ``scanner.scan_value(plain)`` would find nothing, for a copy this class made,
        knowing its shape: every key but a payload's is one of the schemas' own, and every string
        but a payload's is a token, so each is judged alone (memoised); only the payloads are
        walked. A finding of any kind means 'unsure': the full scan then says where."""
        if not scanner.keys_clean(self.keys):
            return False
        texts = [plain["schema_version"], plain["status"]]
        for intent in plain["intents"]:
            texts.extend(_texts_of(intent))
            texts.extend(intent["requested_write_scope"])
            if not scanner.quickly_clean(intent["payload"]):
                return False
        return scanner.texts_clean(texts)

    # A key the schemas require that is missing raises KeyError (the copy is then 'unsure'): with
    # exactly as many keys as the schema names, all of them present means no other key is.

    def _result(self, value: dict[Any, Any], room: list[int]) -> dict[str, Any] | None:
        result = _fields(value, len(_RESULT_KEYS))
        version, status, intents = result["schema_version"], result["status"], result["intents"]
        if type(version) is not str or version != self._result_version:
            return None
        if type(status) is not str or status not in self._statuses or type(intents) is not list:
            return None
        intents = list(intents)
        count = len(intents)
        if count > self._max_intents:
            return None
        if (count == 0) != (status == "not_applicable"):
            return None
        copies: list[dict[str, Any]] = []
        for item in intents:
            copy = self._intent(item, room)
            if copy is None:
                return None
            copies.append(copy)
        result["intents"] = copies  # ``result`` is this pass's own copy: the key keeps its place
        return result

    def _intent(self, item: Any, room: list[int]) -> dict[str, Any] | None:
        if type(item) is not dict:
            return None
        intent = _fields(item, len(_INTENT_KEYS))
        for key, kind, want in self._consts:
            got = intent[key]
            if type(got) is not kind or got != want:
                return None
        for key, search in self._tokens:
            text = intent[key]
            if type(text) is not str or search(text) is None:
                return None
        limits = intent["budget"]
        if type(limits) is not dict:
            return None
        limits = _fields(limits, len(self._bounds))
        for key, low, high in self._bounds:
            number = limits[key]
            if type(number) is not int or not low <= number <= high:
                return None
        scope = intent["requested_write_scope"]
        if type(scope) is not list:
            return None
        scope = list(scope)
        if scope:
            if len(scope) > self._scope_max:
                return None
            for entry in scope:
                if type(entry) is not str or self._scope_pattern.search(entry) is None:
                    return None
            if len(set(scope)) != len(scope):
                return None
        payload = intent["payload"]
        if type(payload) is not dict:
            return None
        intent["payload"] = quick_copy(payload, 3, room)  # the depth to_plain gives it: result 0, intents 1, intent 2
        intent["budget"], intent["requested_write_scope"] = limits, scope
        return intent


_texts_of = itemgetter(*_TOKENS, "schema_version", "failure_policy")  # every string of an intent outside its payload and scope


def _fields(value: dict[Any, Any], expected: int) -> dict[str, Any]:
    """A copy of an exact dict whose keys are all exact strings, ``expected`` of them. Copying an
    exact dict is one atomic step that runs none of its keys' code (the stored hashes are reused,
    nothing is compared), so a key of a hostile type is only looked at by ``type`` afterwards."""
    out = dict(value)
    if len(out) != expected:
        raise QuickCopyUnsure
    for key in out:
        if type(key) is not str:
            raise QuickCopyUnsure
    return out
