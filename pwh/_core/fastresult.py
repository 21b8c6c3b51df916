"""A fast accept-only check for a hook result that is valid, the usual case.

:func:`pwh._core.contracts.validate_result` copies an untrusted answer (``to_plain``), validates it
against the JSON Schemas, then checks each intent's bindings, budget and digest: general code
that pays path bookkeeping and a call per node. :class:`FastResults` applies the same rules,
specialised to the hook-result and intent schemas (read from ``pwh/schemas/``, not restated), in
one pass. It never rejects: whatever it is not sure of (a float where an integer is due, a tuple,
a read-only view, a dict key that is not an exact string, any rule broken) returns ``None``, and
the general path decides and explains. A property test holds it to accepting only what
``validate_result`` accepts, with the same copy and the same bytes.

If the shipped schemas ever stop having the shape this module knows, it switches itself off
(``enabled`` is false) rather than guess; a test asserts it is on for the shipped schemas.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pwh._core.boundary import BoundaryScanner
from pwh._core.canonical import QuickCopyUnsure, dumps_plain, quick_copy
from pwh._core.identity import plain_intent_id
from pwh._core.schemas import is_valid, load_schema

_RESULT_KEYS = ("schema_version", "status", "intents")
_INTENT_KEYS = (
    "schema_version",
    "intent_id",
    "hook_id",
    "capability_id",
    "source_dispatch_id",
    "intent_kind",
    "operation",
    "policy_version",
    "payload",
    "budget",
    "requested_write_scope",
    "failure_policy",
    "grants_new_action_authority",
    "external_write_performed",
)
_TOKENS = ("intent_id", "hook_id", "capability_id", "source_dispatch_id", "intent_kind", "operation", "policy_version")
_CONSTS = ("schema_version", "failure_policy", "grants_new_action_authority", "external_write_performed")
_STATUS_RULE = (
    {"properties": {"status": {"const": "not_applicable"}}},
    {"properties": {"intents": {"maxItems": 0}}},
    {"properties": {"intents": {"minItems": 1}}},
)


class FastResults:
    """The accept-only check; build once, share across dispatches (it holds no per-call state)."""

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
        self._consts = {}
        for key in _CONSTS:
            assert set(iprops[key]) == {"const"}
            self._consts[key] = iprops[key]["const"]
        assert type(self._consts["schema_version"]) is str and type(self._consts["failure_policy"]) is str
        assert self._consts["grants_new_action_authority"] is False and self._consts["external_write_performed"] is False
        self._patterns = {}
        for key in _TOKENS:
            assert set(iprops[key]) == {"type", "pattern"} and iprops[key]["type"] == "string"
            self._patterns[key] = re.compile(iprops[key]["pattern"])
        assert iprops["payload"] == {"type": "object"}
        budget = iprops["budget"]
        assert set(budget) == {"type", "properties", "required", "additionalProperties"} and budget["additionalProperties"] is False
        assert tuple(budget["required"]) == ("max_attempts", "max_result_bytes") == tuple(budget["properties"])
        self._bounds = {}
        for key, rule in budget["properties"].items():
            assert set(rule) == {"type", "minimum", "maximum"} and rule["type"] == "integer"
            self._bounds[key] = (int(rule["minimum"]), int(rule["maximum"]))
        scope = iprops["requested_write_scope"]
        assert set(scope) == {"type", "items", "maxItems", "uniqueItems"} and scope["uniqueItems"] is True
        assert set(scope["items"]) == {"type", "pattern"} and scope["items"]["type"] == "string"
        self._scope_pattern = re.compile(scope["items"]["pattern"])
        self.keys = _RESULT_KEYS + _INTENT_KEYS + tuple(self._bounds)  # every key outside a payload
        self._scope_max = int(scope["maxItems"])

    def accept(
        self,
        value: Any,
        registration: Mapping[str, Any],
        dispatch: str,
        payload_validators: Mapping[str, Any],
        scanner: BoundaryScanner,
    ) -> tuple[dict[str, Any], bytes] | None:
        """``(plain_result, canonical_bytes)`` when ``value`` is certainly valid and certainly
        clean (``scanner.scan_value`` of the copy would find nothing), else ``None``."""
        if not self.enabled or type(value) is not dict:
            return None
        try:
            accepted = self._accept(value, registration, dispatch, payload_validators)
        except Exception:
            return None
        if accepted is not None and not self._clean(accepted[0], scanner):
            return None
        return accepted

    def _clean(self, plain: dict[str, Any], scanner: BoundaryScanner) -> bool:
        """The scan, knowing the shape: every key but a payload's is one of the schemas' own, and
        every string but a payload's is a token, so each is judged alone (memoised); only the
        payloads are walked. A finding of any kind means 'unsure': the full scan then says where."""
        if not scanner.keys_clean(self.keys):
            return False
        texts = [plain["schema_version"], plain["status"]]
        for intent in plain["intents"]:
            texts.extend(intent[key] for key in _TOKENS)
            texts.append(intent["schema_version"])
            texts.append(intent["failure_policy"])
            texts.extend(intent["requested_write_scope"])
            if not scanner.quickly_clean(intent["payload"]):
                return False
        return scanner.texts_clean(texts)

    def _accept(
        self, value: dict[Any, Any], registration: Mapping[str, Any], dispatch: str, payload_validators: Mapping[str, Any]
    ) -> tuple[dict[str, Any], bytes] | None:
        budget = registration["budget"]
        room = [budget["max_result_bytes"]]
        result = _fields(value, len(_RESULT_KEYS))
        version, status, intents = result.get("schema_version"), result.get("status"), result.get("intents")
        if type(version) is not str or version != self._result_version:
            return None
        if type(status) is not str or status not in self._statuses or type(intents) is not list:
            return None
        intents = list(intents)
        count = len(intents)
        if count > self._max_intents or count > budget["max_intents_per_dispatch"]:
            return None
        if (count == 0) != (status == "not_applicable"):
            return None
        copies: list[dict[str, Any]] = []
        seen: set[str] = set()
        for item in intents:
            copy = self._intent(item, registration, dispatch, payload_validators, room)
            if copy is None or copy["intent_id"] in seen:
                return None
            seen.add(copy["intent_id"])
            copies.append(copy)
        plain = {key: (copies if key == "intents" else field) for key, field in result.items()}
        raw = dumps_plain(plain)
        if len(raw) > budget["max_result_bytes"]:
            return None
        return plain, raw

    def _intent(
        self,
        item: Any,
        registration: Mapping[str, Any],
        dispatch: str,
        payload_validators: Mapping[str, Any],
        room: list[int],
    ) -> dict[str, Any] | None:
        if type(item) is not dict:
            return None
        intent = _fields(item, len(_INTENT_KEYS))
        for key, want in self._consts.items():
            got = intent.get(key)
            if type(got) is not type(want) or got != want:
                return None
        patterns = self._patterns
        for key in _TOKENS:
            text = intent.get(key)
            if type(text) is not str or patterns[key].search(text) is None:
                return None
        if (
            intent["hook_id"] != registration["hook_id"]
            or intent["capability_id"] != registration["capability_id"]
            or intent["source_dispatch_id"] != dispatch
        ):
            return None
        kind = intent["intent_kind"]
        if kind not in registration["intent_kinds"] or kind not in payload_validators:
            return None
        limits = intent.get("budget")
        if type(limits) is not dict:
            return None
        limits = _fields(limits, len(self._bounds))
        for key, (low, high) in self._bounds.items():
            number = limits.get(key)
            if type(number) is not int or not low <= number <= high:
                return None
        if limits["max_result_bytes"] > registration["budget"]["max_result_bytes"]:
            return None
        scope = intent.get("requested_write_scope")
        if type(scope) is not list:
            return None
        scope = list(scope)
        if len(scope) > self._scope_max:
            return None
        for entry in scope:
            if type(entry) is not str or self._scope_pattern.search(entry) is None:
                return None
        if len(set(scope)) != len(scope):
            return None
        payload = intent.get("payload")
        if type(payload) is not dict:
            return None
        payload = quick_copy(payload, 3, room)  # the depth to_plain gives it: result 0, intents 1, intent 2
        if not is_valid(payload_validators[kind], payload):
            return None
        if intent["intent_id"] != plain_intent_id(dispatch, kind, intent["policy_version"], payload):
            return None
        intent["payload"], intent["budget"], intent["requested_write_scope"] = payload, limits, scope
        return intent


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
