"""The host side of a Turn, before the primary writeback (seed 003 §4, experiments B–D).

The host is an executor, not a judge of fact: it gets a bounded request (HST-1), returns bytes,
and those bytes become a *candidate* result only after a size-capped read (HST-5) and
validation (HST-2, HST-3, HST-4, HST-6). Only a :class:`ValidatedResult` may reach the primary
writeback, and it says which event kind that writeback records.
"""

from __future__ import annotations

import copy
import json
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ._errors import FakeRejected, is_token, json_path

HOST_RESULT_MAX_BYTES = 12_000
REQUEST_SCHEMA_VERSION = "pwh_host_request_v0"
RESULT_SCHEMA_VERSION = "pwh_host_result_v0"

# HST-1/HST-2: a host may complete only the first two of the Turn's phases.
HOST_PHASES: tuple[str, ...] = ("host_execute", "typed_result")

# HST-1: no request key may contain any of these (compared case-insensitively, as substrings),
# so a host is never handed a way to write state, commit, journal, spend or call back.
REQUEST_FORBIDDEN_KEYS: frozenset[str] = frozenset({"write", "commit", "journal", "spend", "state_path", "callback"})

MATERIAL_KINDS: tuple[str, ...] = ("validated_completion", "progress", "replan")
NON_MATERIAL_KINDS: tuple[str, ...] = ("waiting", "failed")
RESULT_KINDS: tuple[str, ...] = MATERIAL_KINDS + NON_MATERIAL_KINDS
FOLLOWUP_KINDS: tuple[str, ...] = ("successor", "active_goal", "no_followup")

# What the primary writeback records for each material kind; non-material kinds write nothing.
EVENT_KINDS: Mapping[str, str] = {
    "validated_completion": "todo_completed",
    "replan": "replan_recorded",
    "progress": "progress_recorded",
}

RESULT_FIELDS: tuple[str, ...] = (
    "schema_version",
    "turn_key",
    "effect_ref",
    "result_kind",
    "completed_phases",
    "evidence",
    "path_delta",
    "progress_observation",
    "lifecycle",
)

# Stable codes.
TURN_PLAN_REJECTED = "turn_plan_rejected"
HOST_REQUEST_REJECTED = "host_request_rejected"
HOST_REQUEST_FORBIDDEN_KEY = "host_request_forbidden_key"
FAKE_HOST_SCRIPT_EXHAUSTED = "fake_host_script_exhausted"
HOST_OUTPUT_OVERSIZE = "host_output_oversize"
HOST_OUTPUT_NOT_JSON = "host_output_not_json"
HOST_RESULT_SHAPE_REJECTED = "host_result_shape_rejected"
HOST_RESULT_BINDING_MISMATCH = "host_result_binding_mismatch"
HOST_PHASE_OVERCLAIM = "host_phase_overclaim"
COMPLETION_LIFECYCLE_MISSING = "completion_lifecycle_missing"
NON_MATERIAL_WITH_EVIDENCE = "non_material_with_evidence"
HOST_EVIDENCE_REJECTED = "host_evidence_rejected"


class HostRequestRejected(FakeRejected):
    """A Turn plan or host request is malformed, or would hand the host a write entry."""


class HostResultRejected(FakeRejected):
    """Host output could not become a validated result."""


class FakeHostExhausted(FakeRejected):
    """The fake host was asked for more outputs than its script holds."""


# ---------------------------------------------------------------------------------------------
# HST-1: the bounded host request.

_PLAN_TOKENS = ("turn_key", "effect_ref", "goal_id", "agent_id", "todo_id", "route", "gate", "output_schema")
# name -> must be non-empty: a host needs a scope and a way to know when to stop.
_PLAN_TUPLES = {
    "scope": True,
    "evidence_requirements": False,
    "stop_conditions": True,
    "resume_conditions": False,
}


@dataclass(frozen=True, slots=True)
class TurnPlan:
    """What the orchestrator decided for this Turn; validated on construction, so it is never half-formed."""

    turn_key: str
    effect_ref: str
    goal_id: str
    agent_id: str
    todo_id: str
    route: str
    gate: str
    scope: tuple[str, ...]
    output_schema: str
    evidence_requirements: tuple[str, ...]
    stop_conditions: tuple[str, ...]
    resume_conditions: tuple[str, ...]

    def __post_init__(self) -> None:
        for name in _PLAN_TOKENS:
            if not is_token(getattr(self, name)):
                raise HostRequestRejected(TURN_PLAN_REJECTED, json_path(name), f"{name} must be an opaque token")
        for name, non_empty in _PLAN_TUPLES.items():
            value = getattr(self, name)
            if type(value) is list:
                value = tuple(value)
                object.__setattr__(self, name, value)
            if type(value) is not tuple or (non_empty and not value):
                kind = "a non-empty" if non_empty else "a"
                raise HostRequestRejected(TURN_PLAN_REJECTED, json_path(name), f"{name} must be {kind} tuple of tokens")
            for index, item in enumerate(value):
                if not is_token(item):
                    raise HostRequestRejected(TURN_PLAN_REJECTED, json_path(name, index), "not an opaque token")
                if item in value[:index]:
                    raise HostRequestRejected(TURN_PLAN_REJECTED, json_path(name, index), "duplicate token")


def build_host_request(plan: TurnPlan) -> dict[str, Any]:
    """HST-1: route, Todo, gate, scope, schema, evidence and stop/resume conditions; phases 1–2 only."""
    if type(plan) is not TurnPlan:
        raise HostRequestRejected(HOST_REQUEST_REJECTED, "$", "plan must be a TurnPlan")
    request = {
        "schema_version": REQUEST_SCHEMA_VERSION,
        "turn_key": plan.turn_key,
        "effect_ref": plan.effect_ref,
        "route": plan.route,
        "todo_id": plan.todo_id,
        "gate": plan.gate,
        "scope": list(plan.scope),
        "output_schema": plan.output_schema,
        "evidence_requirements": list(plan.evidence_requirements),
        "stop_conditions": list(plan.stop_conditions),
        "resume_conditions": list(plan.resume_conditions),
        "allowed_phases": list(HOST_PHASES),
    }
    _refuse_forbidden_keys(request)
    return request


def forbidden_key_paths(value: Any, _path: tuple[str | int, ...] = ()) -> list[str]:
    """Paths of every key, at any depth, that contains a :data:`REQUEST_FORBIDDEN_KEYS` fragment."""
    if not _path and _certainly_clean(value):
        return []
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            text = key.lower() if isinstance(key, str) else ""
            if any(fragment in text for fragment in REQUEST_FORBIDDEN_KEYS):
                found.append(json_path(*_path, key))
            found.extend(forbidden_key_paths(item, (*_path, key)))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found.extend(forbidden_key_paths(item, (*_path, index)))
    return found


_FORBIDDEN_SEARCH: tuple[frozenset[str], Callable[[str], Any]] | None = None
_CLEAN_MAX_DEPTH = 64  # deeper than any request: the general walk decides (and fails as it always did)


def _certainly_clean(value: Any) -> bool:
    """True when ``value`` is a tree of exact dicts, lists and tuples over plain leaves (strings,
    numbers, booleans, None) in which no key holds a forbidden fragment: then
    :func:`forbidden_key_paths` finds nothing. False on any doubt (a mapping of another type, a key
    that is not an exact string, a leaf of another type, a deep tree), and the general walk decides.
    One regular-expression search per key instead of a search per fragment, and no paths built."""
    global _FORBIDDEN_SEARCH
    kept = _FORBIDDEN_SEARCH
    if kept is None or kept[0] is not REQUEST_FORBIDDEN_KEYS:  # the fragments, as the general walk reads them now
        kept = _FORBIDDEN_SEARCH = (
            REQUEST_FORBIDDEN_KEYS,
            re.compile("|".join(re.escape(f) for f in sorted(REQUEST_FORBIDDEN_KEYS))).search,
        )
    search = kept[1]
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        kind = type(node)
        if kind is dict:
            if depth >= _CLEAN_MAX_DEPTH:
                return False
            for key, item in node.items():
                if type(key) is not str or search(key.lower()):
                    return False
                if not _PLAIN_LEAF.get(type(item), False):
                    stack.append((item, depth + 1))
        elif kind is list or kind is tuple:
            if depth >= _CLEAN_MAX_DEPTH:
                return False
            stack.extend((item, depth + 1) for item in node if not _PLAIN_LEAF.get(type(item), False))
        elif not _PLAIN_LEAF.get(kind, False):
            return False
    return True


_PLAIN_LEAF: dict[type, bool] = {str: True, int: True, float: True, bool: True, type(None): True}


def _refuse_forbidden_keys(request: Any) -> None:
    found = forbidden_key_paths(request)
    if found:
        raise HostRequestRejected(HOST_REQUEST_FORBIDDEN_KEY, found[0], "host requests carry no state-write entry")


# ---------------------------------------------------------------------------------------------
# The scriptable fake host.

ScriptOutput = Mapping[str, Any] | list | bytes | str
ScriptEntry = ScriptOutput | Callable[[dict[str, Any]], ScriptOutput]


def _encode(output: Any) -> bytes:
    if isinstance(output, (bytes, bytearray)):
        return bytes(output)
    if isinstance(output, str):
        return output.encode("utf-8")
    return json.dumps(output, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


class FakeHost:
    """Returns scripted candidate outputs in order and remembers every request.

    It holds no registry, journal, file or callback, and has no attribute slots to be given
    one: the only thing a host can do is hand back bytes. Dict outputs are serialised when the
    script is built, so mutating them afterwards cannot change what the host says.
    """

    __slots__ = ("_script", "_requests")

    def __init__(self, script: Iterable[ScriptEntry]) -> None:
        self._script: deque[bytes | Callable[[dict[str, Any]], ScriptOutput]] = deque(
            entry if callable(entry) else _encode(entry) for entry in script
        )
        self._requests: list[dict[str, Any]] = []

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Copies of every request received, oldest first."""
        return copy.deepcopy(self._requests)

    @property
    def remaining(self) -> int:
        return len(self._script)

    def execute(self, request: Mapping[str, Any]) -> bytes:
        """The next scripted output as bytes; a callable entry sees a private copy of the request."""
        received = _private_copy(dict(request))
        self._requests.append(received)
        _refuse_forbidden_keys(received)
        if not self._script:
            raise FakeHostExhausted(FAKE_HOST_SCRIPT_EXHAUSTED, "$", "the fake host's script has no more outputs")
        entry = self._script.popleft()
        if isinstance(entry, bytes):
            return entry
        return _encode(entry(_private_copy(received)))


class _NotATree(Exception):
    """Raised by :func:`_tree_copy` on anything but a plain tree: ``copy.deepcopy`` copies it."""


def _private_copy(value: Any) -> Any:
    """``copy.deepcopy(value)``, faster for the usual request: a tree of exact dicts and lists
    (each held once) over strings, numbers, booleans and None is copied container by container,
    the leaves kept (deepcopy keeps them too: they are immutable), keys and order as they were.
    Anything else (another type anywhere, a container held twice, a deep tree) is deep-copied."""
    try:
        return _tree_copy(value, set(), 0)
    except _NotATree:
        return copy.deepcopy(value)


def _tree_copy(value: Any, seen: set[int], depth: int) -> Any:
    kind = type(value)
    if _PLAIN_LEAF.get(kind, False):
        return value
    if depth >= _CLEAN_MAX_DEPTH or id(value) in seen or (kind is not dict and kind is not list):
        raise _NotATree
    seen.add(id(value))
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotATree
            out[key] = _tree_copy(item, seen, depth + 1)
        return out
    return [_tree_copy(item, seen, depth + 1) for item in value]


def make_host_result(
    request: Mapping[str, Any],
    result_kind: str,
    *,
    evidence: Iterable[str] = (),
    path_delta: Iterable[str] = (),
    progress_observation: str | None = None,
    lifecycle: Mapping[str, Any] | None = None,
    completed_phases: Iterable[str] = HOST_PHASES,
    **extra: Any,
) -> dict[str, Any]:
    """A candidate result bound to ``request``; ``extra`` adds or overrides keys (for negative tests)."""
    result: dict[str, Any] = {
        "schema_version": RESULT_SCHEMA_VERSION,
        "turn_key": request["turn_key"],
        "effect_ref": request["effect_ref"],
        "result_kind": result_kind,
        "completed_phases": list(completed_phases),
        "evidence": list(evidence),
        "path_delta": list(path_delta),
        "progress_observation": progress_observation,
        "lifecycle": None if lifecycle is None else _private_copy(dict(lifecycle)),
    }
    result.update(extra)
    return result


# ---------------------------------------------------------------------------------------------
# HST-5: reading host output.


class _Refused(ValueError):
    """Raised inside the JSON parser's hooks; caught with every other parse failure."""


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Refused("duplicate key")
        out[key] = value
    return out


def _no_constants(name: str) -> Any:
    raise _Refused("non-finite number")


def read_host_output(raw: bytes, max_bytes: int = HOST_RESULT_MAX_BYTES) -> dict[str, Any]:
    """Size first, then UTF-8, then strict JSON object. Never truncates, never half-parses."""
    if type(max_bytes) is not int or max_bytes < 0:
        raise ValueError("max_bytes must be a non-negative int")
    if not isinstance(raw, (bytes, bytearray)):
        raise HostResultRejected(HOST_OUTPUT_NOT_JSON, "$", "host output must be bytes")
    size = len(raw)
    if size > max_bytes:
        raise HostResultRejected(
            HOST_OUTPUT_OVERSIZE,
            "$",
            f"host output is {size} bytes, over the {max_bytes}-byte cap; ask the host for a smaller result or a stored reference",
        )
    try:
        text = bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise HostResultRejected(HOST_OUTPUT_NOT_JSON, "$", "host output is not valid UTF-8") from None
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constants)
    except (ValueError, RecursionError):
        # ValueError covers JSONDecodeError, our hooks and over-long integers.
        raise HostResultRejected(HOST_OUTPUT_NOT_JSON, "$", "host output is not one strict JSON document") from None
    if type(value) is not dict:
        raise HostResultRejected(HOST_OUTPUT_NOT_JSON, "$", "host output is not a JSON object")
    return value


# ---------------------------------------------------------------------------------------------
# HST-2, HST-3, HST-4, HST-6: validating a candidate result.


@dataclass(frozen=True, slots=True)
class Lifecycle:
    """HST-3: who takes over after a completion, or an explicit ``no_followup``."""

    adapter: str
    followup_kind: str
    followup_ref: str | None

    def to_json(self) -> dict[str, Any]:
        return {"adapter": self.adapter, "followup": {"kind": self.followup_kind, "ref": self.followup_ref}}


@dataclass(frozen=True, slots=True)
class ValidatedResult:
    """A result that passed validation. Its invariants are re-checked here, so none other can exist."""

    turn_key: str
    effect_ref: str
    result_kind: str
    evidence: tuple[str, ...] = ()
    lifecycle: Lifecycle | None = None
    completed_phases: tuple[str, ...] = ()
    path_delta: tuple[str, ...] = ()
    progress_observation: str | None = None
    event_kind: str | None = field(init=False)

    def __post_init__(self) -> None:
        kind = self.result_kind
        object.__setattr__(self, "event_kind", EVENT_KINDS.get(kind) if type(kind) is str else None)
        if kind not in RESULT_KINDS:
            raise ValueError("unknown result kind")
        if (self.result_kind == "validated_completion") != isinstance(self.lifecycle, Lifecycle):
            raise ValueError("a lifecycle is carried by, and required for, validated_completion only")
        if self.result_kind in NON_MATERIAL_KINDS and (self.evidence or self.path_delta or self.progress_observation is not None):
            raise ValueError("a non-material result carries no evidence, path delta or observation")
        if not set(self.completed_phases) <= set(HOST_PHASES):
            raise ValueError("a host completes only host_execute and typed_result")

    @property
    def material(self) -> bool:
        return self.result_kind in MATERIAL_KINDS

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in ("evidence", "completed_phases", "path_delta"):
            out[name] = list(out[name])
        out["lifecycle"] = None if self.lifecycle is None else self.lifecycle.to_json()
        return out


def _reject(code: str, reason: str, *path: str | int) -> HostResultRejected:
    return HostResultRejected(code, json_path(*path), reason)


def _request_binding(request: Any) -> tuple[str, str]:
    if not isinstance(request, Mapping):
        raise HostRequestRejected(HOST_REQUEST_REJECTED, "$", "request must be a mapping")
    for name in ("turn_key", "effect_ref"):
        if not is_token(request.get(name)):
            raise HostRequestRejected(HOST_REQUEST_REJECTED, json_path(name), f"request has no {name} token")
    return request["turn_key"], request["effect_ref"]


def _list(result: dict[str, Any], name: str) -> list[Any]:
    value = result[name]
    if type(value) is not list:
        raise _reject(HOST_RESULT_SHAPE_REJECTED, f"{name} must be a list", name)
    return value


def _tokens(items: list[Any], name: str, code: str) -> tuple[str, ...]:
    for index, item in enumerate(items):
        if not is_token(item):
            raise _reject(code, f"{name} items must be opaque tokens", name, index)
        if item in items[:index]:
            raise _reject(code, f"duplicate {name} item", name, index)
    return tuple(items)


def _phases(items: list[Any]) -> tuple[str, ...]:
    for index, item in enumerate(items):
        if type(item) is not str:
            raise _reject(HOST_RESULT_SHAPE_REJECTED, "phases are strings", "completed_phases", index)
        if item not in HOST_PHASES:
            raise _reject(
                HOST_PHASE_OVERCLAIM,
                "a host may complete only host_execute and typed_result; validation, writeback and spend belong to the core",
                "completed_phases",
                index,
            )
        if item in items[:index]:
            raise _reject(HOST_RESULT_SHAPE_REJECTED, "duplicate phase", "completed_phases", index)
    return tuple(items)


def _absent(value: Any) -> bool:
    return value is None or (type(value) is str and value == "")


def _exact_keys(value: dict[Any, Any], allowed: tuple[str, ...], *path: str) -> None:
    for key in value:
        if key not in allowed:
            raise _reject(HOST_RESULT_SHAPE_REJECTED, "unknown field", *path, key)


def _lifecycle(raw: Any) -> Lifecycle:
    """HST-3: missing parts are named; a completion is never accepted without them."""
    missing = COMPLETION_LIFECYCLE_MISSING
    if raw is None:
        raise _reject(missing, "validated_completion needs a lifecycle adapter and a followup intent", "lifecycle")
    if type(raw) is not dict:
        raise _reject(HOST_RESULT_SHAPE_REJECTED, "lifecycle must be an object", "lifecycle")
    _exact_keys(raw, ("adapter", "followup"), "lifecycle")
    adapter = raw.get("adapter")
    if _absent(adapter):
        raise _reject(missing, "validated_completion needs a lifecycle adapter", "lifecycle", "adapter")
    if not is_token(adapter):
        raise _reject(HOST_RESULT_SHAPE_REJECTED, "adapter must be an opaque token", "lifecycle", "adapter")
    followup = raw.get("followup")
    if followup is None:
        raise _reject(
            missing,
            "validated_completion needs a successor, active_goal or no_followup intent",
            "lifecycle",
            "followup",
        )
    if type(followup) is not dict:
        raise _reject(HOST_RESULT_SHAPE_REJECTED, "followup must be an object", "lifecycle", "followup")
    _exact_keys(followup, ("kind", "ref"), "lifecycle", "followup")
    kind = followup.get("kind")
    if _absent(kind):
        raise _reject(missing, "followup needs a kind", "lifecycle", "followup", "kind")
    if type(kind) is not str or kind not in FOLLOWUP_KINDS:
        raise _reject(
            HOST_RESULT_SHAPE_REJECTED,
            "followup kind must be successor, active_goal or no_followup",
            "lifecycle",
            "followup",
            "kind",
        )
    ref = followup.get("ref")  # an absent ref reads as null
    if kind == "no_followup":
        if ref is not None:
            raise _reject(HOST_RESULT_SHAPE_REJECTED, "no_followup takes no ref", "lifecycle", "followup", "ref")
    elif _absent(ref):
        raise _reject(missing, f"a {kind} followup needs a ref", "lifecycle", "followup", "ref")
    elif not is_token(ref):
        raise _reject(HOST_RESULT_SHAPE_REJECTED, "ref must be an opaque token", "lifecycle", "followup", "ref")
    return Lifecycle(str(adapter), kind, ref)


def validate_host_result(result: Any, request: Mapping[str, Any]) -> ValidatedResult:
    """Turn a candidate into a :class:`ValidatedResult` or raise :class:`HostResultRejected`.

    Order: shape, binding (HST-6), kind, phases (HST-2), non-material purity (HST-4), evidence
    tokens, completion lifecycle (HST-3). The first failure wins; nothing is repaired or guessed.
    """
    turn_key, effect_ref = _request_binding(request)
    if type(result) is not dict:
        raise _reject(HOST_RESULT_SHAPE_REJECTED, "host result must be an object")
    _exact_keys(result, RESULT_FIELDS)
    for name in RESULT_FIELDS:
        if name not in result:
            raise _reject(HOST_RESULT_SHAPE_REJECTED, "required field is missing", name)
    version = result["schema_version"]
    if type(version) is not str or version != RESULT_SCHEMA_VERSION:
        raise _reject(HOST_RESULT_SHAPE_REJECTED, f"schema_version must be {RESULT_SCHEMA_VERSION}", "schema_version")

    for name, expected in (("turn_key", turn_key), ("effect_ref", effect_ref)):
        value = result[name]
        if type(value) is not str or value != expected:
            raise _reject(HOST_RESULT_BINDING_MISMATCH, f"result is not bound to this Turn's {name}", name)

    kind = result["result_kind"]
    if type(kind) is not str or kind not in RESULT_KINDS:
        raise _reject(HOST_RESULT_SHAPE_REJECTED, "unknown result_kind", "result_kind")

    phases = _phases(_list(result, "completed_phases"))
    evidence = _list(result, "evidence")
    path_delta = _list(result, "path_delta")
    observation = result["progress_observation"]
    if observation is not None and type(observation) is not str:
        raise _reject(HOST_RESULT_SHAPE_REJECTED, "progress_observation must be a string or null", "progress_observation")

    if kind in NON_MATERIAL_KINDS:
        for name, present in (
            ("evidence", bool(evidence)),
            ("path_delta", bool(path_delta)),
            ("progress_observation", observation is not None),
        ):
            if present:
                raise _reject(NON_MATERIAL_WITH_EVIDENCE, f"a {kind} result carries no {name}", name)

    evidence_items = _tokens(evidence, "evidence", HOST_EVIDENCE_REJECTED)
    delta_items = _tokens(path_delta, "path_delta", HOST_RESULT_SHAPE_REJECTED)

    lifecycle: Lifecycle | None = None
    if kind == "validated_completion":
        lifecycle = _lifecycle(result["lifecycle"])
    elif result["lifecycle"] is not None:
        raise _reject(HOST_RESULT_SHAPE_REJECTED, "only validated_completion carries a lifecycle", "lifecycle")

    return ValidatedResult(
        turn_key=turn_key,
        effect_ref=effect_ref,
        result_kind=kind,
        evidence=evidence_items,
        lifecycle=lifecycle,
        completed_phases=phases,
        path_delta=delta_items,
        progress_observation=observation,
    )
