"""Validators for every packet that crosses the hook boundary: schema first, then the cross-field
rules the schemas cannot say (rules REG, INP, RES, ADM).

Each validator returns a list of :class:`Rejection` (empty means valid) and never raises for bad
input: a hostile packet gets a stable code and a JSON path, never a traceback.

A provider's answer has one check, :func:`check_result` (the contract and the public boundary):
cheap first, a one-pass accept of a valid, clean result, and only when that does not accept, the
general path that says why. Both apply the same rules; each rule the schemas cannot say is stated
once, here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pwh._core import codes
from pwh._core.boundary import BoundaryScanner
from pwh._core.canonical import CanonicalError, dumps_plain, to_plain
from pwh._core.codes import Rejection, json_path
from pwh._core.identity import plain_intent_id
from pwh._core.result_shape import ResultShape
from pwh._core.schemas import schema_rejections, validator

POST_WRITEBACK_EVENT_KINDS: tuple[str, ...] = ("todo_completed", "replan_recorded")

# Which projected transitions each event kind may carry (the per-event-kind bounded projection).
TRANSITIONS_BY_EVENT: dict[str, tuple[str, ...]] = {
    "todo_completed": ("segment_completed", "segment_progressed"),
    "replan_recorded": ("replanned",),
}

REGISTRATION_SCHEMA_VERSION = "loopx_post_writeback_capability_hook_registration_v0"
HOOK_INPUT_SCHEMA_VERSION = "loopx_post_writeback_hook_input_v0"
PROJECTION_SCHEMA_VERSION = "loopx_post_writeback_event_projection_v0"
RESULT_SCHEMA_VERSION = "loopx_post_writeback_hook_result_v0"
INTENT_SCHEMA_VERSION = "loopx_post_writeback_intent_v0"
SIDECAR_SCHEMA_VERSION = "pwh_post_writeback_sidecar_receipt_v0"

BOUNDARY_FLAGS: tuple[str, ...] = (
    "raw_task_text_recorded",
    "raw_logs_recorded",
    "raw_trajectory_recorded",
    "raw_session_transcript_recorded",
    "credential_values_recorded",
    "absolute_paths_recorded",
)


_PATHS = BoundaryScanner()


def _public(found: list[Rejection]) -> list[Rejection]:
    """Rejections whose paths name no private key: a packet's own keys are its author's text,
    and a path that spelled out a token or a host name would carry it into every report."""
    return [r if (p := _PATHS.public_path(r.path)) == r.path else Rejection(r.code, p, r.reason) for r in found]


def _plain_or_reject(value: Any, code: str) -> tuple[Any, list[Rejection]]:
    try:
        return to_plain(value), []
    except CanonicalError as exc:
        return None, [Rejection(code, exc.path, exc.reason)]


def validate_registration(registration: Any, *, known_intent_kinds: frozenset[str], ceilings: Mapping[str, int]) -> list[Rejection]:
    """REG: exact field set, bounded token arrays, known kinds, budget under the ceilings."""
    return _public(_registration_rejections(registration, known_intent_kinds, ceilings))


def _registration_rejections(registration: Any, known_intent_kinds: frozenset[str], ceilings: Mapping[str, int]) -> list[Rejection]:
    code = codes.REGISTRATION_REJECTED
    plain, bad = _plain_or_reject(registration, code)
    if bad:
        return bad
    if not isinstance(plain, dict):
        return [Rejection(code, "$", "a registration must be a JSON object")]
    found = schema_rejections(validator("registration"), plain, code)
    if found:
        return found
    for i, kind in enumerate(plain["intent_kinds"]):
        if kind not in known_intent_kinds:
            found.append(Rejection(code, json_path(("intent_kinds", i)), "intent kind is not in the catalog"))
    for key, value in plain["budget"].items():
        limit = ceilings.get(key)
        if limit is not None and value > limit:
            found.append(Rejection(code, json_path(("budget", key)), f"over the profile ceiling of {limit}"))
    return found


def validate_source(source: Any) -> tuple[dict[str, Any] | None, list[Rejection]]:
    """The source receipt's shape (schema), returning a plain copy on success."""
    plain, found = _source(source)
    return plain, _public(found)


def _source(source: Any) -> tuple[dict[str, Any] | None, list[Rejection]]:
    code = codes.SOURCE_REJECTED
    plain, bad = _plain_or_reject(source, code)
    if bad:
        return None, bad
    if not isinstance(plain, dict):
        return None, [Rejection(code, "$", "a source receipt must be a JSON object")]
    found = schema_rejections(validator("source_receipt"), plain, code)
    return (None, found) if found else (plain, [])


def admissibility(source: Mapping[str, Any], phase_enabled: bool) -> Rejection | None:
    """ADM (RFC §5.1): only a committed, durable receipt of the active plan's effect dispatches.

    Returns the first reason the receipt is not admissible, or ``None``. The checks run in the
    order a maintainer reads them; ``post_writeback_actions`` are ignored on purpose: they are
    operator hints, never registrations or commands.
    """
    for key in ("goal_id", "agent_id", "todo_id", "turn_instance_id", "effect_id"):
        if not source.get(key):
            return Rejection(codes.SOURCE_REJECTED, json_path((key,)), "identity must not be empty")
    if source["effect_id"] != source["plan_effect_id"]:
        return Rejection(codes.EFFECT_MISMATCH, "$.effect_id", "differs from the active plan's effect id")
    if source["step_status"] != "committed":
        return Rejection(codes.SOURCE_NOT_COMMITTED, "$.step_status", "the durable-writeback step is not committed")
    if source["durable_checkpoint"] is not True:
        return Rejection(codes.SOURCE_NOT_DURABLE, "$.durable_checkpoint", "the receipt is not durably checkpointed")
    if not phase_enabled:
        return Rejection(codes.PHASE_DISABLED, "$", "the execution profile disables the phase")
    if source["event_kind"] not in POST_WRITEBACK_EVENT_KINDS:
        return Rejection(codes.NOT_A_HOOK_EVENT, "$.event_kind", "not a post-writeback event kind")
    transition = source["event"]["transition"]
    if transition not in TRANSITIONS_BY_EVENT[source["event_kind"]]:
        return Rejection(codes.SOURCE_REJECTED, "$.event.transition", "transition does not belong to the event kind")
    return None


def build_hook_input(source: Mapping[str, Any], registration: Mapping[str, Any], dispatch: str) -> dict[str, Any]:
    """The RFC §7 input for one hook: opaque identities, the bounded projection if the hook asked
    for it, and the boundary block (all six flags false: nothing raw was included)."""
    hook_input: dict[str, Any] = {
        "schema_version": HOOK_INPUT_SCHEMA_VERSION,
        "dispatch_id": dispatch,
        "hook_id": registration["hook_id"],
        "capability_id": registration["capability_id"],
        "source": {
            "receipt_id": source["receipt_id"],
            "effect_id": source["effect_id"],
            "step_kind": "durable_writeback",
            "goal_id": source["goal_id"],
            "agent_id": source["agent_id"],
            "todo_id": source["todo_id"],
            "turn_instance_id": source["turn_instance_id"],
            "event_kind": source["event_kind"],
            "state_revision": source["state_revision"],
            "committed_at": source["committed_at"],
        },
        "boundary": {flag: False for flag in BOUNDARY_FLAGS},
    }
    if "bounded_event_projection" in registration["requested_read_scope"]:
        event = source["event"]
        hook_input["projection"] = {
            "schema_version": PROJECTION_SCHEMA_VERSION,
            "transition": event["transition"],
            "segment_ref": event["segment_ref"],
            "fact_refs": list(event["fact_refs"]),
        }
    return hook_input


def validate_hook_input(hook_input: Mapping[str, Any]) -> list[Rejection]:
    """The built input must itself satisfy the contract; if not, the boundary is not proven."""
    return _public(schema_rejections(validator("hook_input"), hook_input, codes.INPUT_BOUNDARY_REJECTED))


def validate_result(
    result: Any,
    *,
    registration: Mapping[str, Any],
    dispatch: str,
    payload_validators: Mapping[str, Any],
) -> tuple[dict[str, Any] | None, bytes, list[Rejection]]:
    """RES: size, shape, intent count, and every intent bound to this hook, dispatch and kind.

    Returns ``(plain_result, canonical_bytes, rejections)``: the size budget, the result digest
    and the journal all use those same bytes.
    """
    plain, raw, found = _result(result, registration, dispatch, payload_validators)
    return plain, raw, _public(found)


def _result(
    result: Any, registration: Mapping[str, Any], dispatch: str, payload_validators: Mapping[str, Any]
) -> tuple[dict[str, Any] | None, bytes, list[Rejection]]:
    code = codes.RESULT_CONTRACT_REJECTED
    budget = registration["budget"]
    try:
        plain = to_plain(result, max_bytes=budget["max_result_bytes"])
    except CanonicalError as exc:
        return None, b"", [Rejection(code, exc.path, exc.reason)]
    raw = dumps_plain(plain)
    over = _size_rejections(raw, budget)
    if over:
        return None, raw, over
    if not isinstance(plain, dict):
        return None, raw, [Rejection(code, "$", "a hook result must be a JSON object")]
    found = schema_rejections(validator("hook_result"), plain, code)
    if found:
        return None, raw, found
    found = _cross_field_rejections(plain, registration, dispatch, payload_validators)
    return (None if found else plain), raw, found


def _size_rejections(raw: bytes, budget: Mapping[str, Any]) -> list[Rejection]:
    """The result's own byte budget, over its canonical bytes."""
    if len(raw) > budget["max_result_bytes"]:
        return [Rejection(codes.RESULT_CONTRACT_REJECTED, "$", f"serialised result is over the {budget['max_result_bytes']}-byte budget")]
    return []


def _cross_field_rejections(
    plain: dict[str, Any], registration: Mapping[str, Any], dispatch: str, payload_validators: Mapping[str, Any]
) -> list[Rejection]:
    """The rules a plain, schema-valid result must keep that the schemas cannot say: the intent
    count under the hook's budget, every intent bound to this hook, dispatch and kind, no intent
    twice. Both ways through the result check (:func:`check_result`) ask this one function."""
    code = codes.RESULT_CONTRACT_REJECTED
    budget = registration["budget"]
    intents = plain["intents"]
    if len(intents) > budget["max_intents_per_dispatch"]:
        return [Rejection(code, "$.intents", f"more than {budget['max_intents_per_dispatch']} intents")]
    found: list[Rejection] = []
    seen: set[str] = set()
    for i, intent in enumerate(intents):
        found.extend(_intent_rejections(intent, i, registration, dispatch, payload_validators))
        if intent["intent_id"] in seen:
            found.append(Rejection(code, json_path(("intents", i, "intent_id")), "duplicate intent"))
        seen.add(intent["intent_id"])
    return found


def _payload_rejections(check: Any, payload: Any, code: str, at: tuple[Any, ...]) -> list[Rejection]:
    """The payload against its kind's schema. The catalog refuses a schema it cannot resolve, but
    a validator that still fails (a catalog built some other way) rejects this intent only: it
    never escapes the dispatch nor takes another hook with it."""
    try:
        return schema_rejections(check, payload, code, at)
    except Exception:
        return [Rejection(code, json_path(at), "the payload could not be checked against its kind's schema")]


def _intent_rejections(
    intent: Mapping[str, Any],
    index: int,
    registration: Mapping[str, Any],
    dispatch: str,
    payload_validators: Mapping[str, Any],
) -> list[Rejection]:
    code = codes.RESULT_CONTRACT_REJECTED
    at = ("intents", index)
    out: list[Rejection] = []
    bindings = (
        ("hook_id", registration["hook_id"], "does not match the admitted registration"),
        ("capability_id", registration["capability_id"], "does not match the admitted registration"),
        ("source_dispatch_id", dispatch, "does not match this dispatch"),
    )
    for key, expected, reason in bindings:
        if intent[key] != expected:
            out.append(Rejection(code, json_path(at + (key,)), reason))
    kind = intent["intent_kind"]
    if kind not in registration["intent_kinds"] or kind not in payload_validators:
        out.append(Rejection(code, json_path(at + ("intent_kind",)), "not an intent kind the hook registered"))
    else:
        out.extend(_payload_rejections(payload_validators[kind], intent["payload"], code, at + ("payload",)))
    expected_id = plain_intent_id(dispatch, kind, intent["policy_version"], intent["payload"])  # the payload is a plain copy
    if intent["intent_id"] != expected_id:
        out.append(Rejection(code, json_path(at + ("intent_id",)), "does not equal the digest of its semantic inputs"))
    if intent["budget"]["max_result_bytes"] > registration["budget"]["max_result_bytes"]:
        out.append(Rejection(code, json_path(at + ("budget", "max_result_bytes")), "over the hook's budget"))
    return out


# -- the one result check -----------------------------------------------------------------------

_SHAPE = ResultShape()


def check_result(
    result: Any,
    *,
    registration: Mapping[str, Any],
    dispatch: str,
    payload_validators: Mapping[str, Any],
    scanner: BoundaryScanner,
) -> tuple[dict[str, Any], bytes] | Rejection:
    """RES and the public boundary, as one check: ``(plain_result, canonical_bytes)`` for a result
    that may be recorded, else the first :class:`Rejection`.

    Cheap first: :func:`accept_clean_result` accepts a result that is certainly valid and certainly
    clean in one pass. Only a result it does not accept takes the general path,
    :func:`validate_result` and then the full scan (:func:`judge_validated_result`), which decides
    the same and says why. The dispatcher takes these two steps through its own seams
    (``_accept_fast``, ``_judge_in_full``), so a test adapter can replace either one.
    """
    accepted = accept_clean_result(result, registration, dispatch, payload_validators, scanner)
    if accepted is not None:
        return accepted
    plain, raw, rejected = validate_result(result, registration=registration, dispatch=dispatch, payload_validators=payload_validators)
    return judge_validated_result(plain, raw, rejected, scanner)


def accept_clean_result(
    result: Any,
    registration: Mapping[str, Any],
    dispatch: str,
    payload_validators: Mapping[str, Any],
    scanner: BoundaryScanner,
) -> tuple[dict[str, Any], bytes] | None:
    """The early exit of :func:`check_result`: ``(plain_result, canonical_bytes)`` when ``result``
    is certainly valid and certainly clean (the full scan of the copy would find nothing), else
    ``None``, never a rejection. The copy and the schema check are one pass
    (pwh/_core/result_shape.py); the byte budget and the cross-field rules are the general
    path's own functions, applied to that copy."""
    budget = registration["budget"]
    plain = _SHAPE.copy(result, budget["max_result_bytes"])
    if plain is None:
        return None
    raw = dumps_plain(plain)
    if _size_rejections(raw, budget) or _cross_field_rejections(plain, registration, dispatch, payload_validators):
        return None
    if not _SHAPE.clean(plain, scanner):
        return None
    return plain, raw


def judge_validated_result(
    plain: dict[str, Any] | None, raw: bytes, rejected: list[Rejection], scanner: BoundaryScanner
) -> tuple[dict[str, Any], bytes] | Rejection:
    """The general path's verdict on what :func:`validate_result` returned: its first rejection,
    else the public-boundary scan of the copy, whose first finding rejects the result at its path."""
    if plain is None:
        return rejected[0]
    leak = scanner.scan_value(plain)
    if leak:
        reason = f"result carries a {leak[0].category.replace('_', ' ')}"
        return Rejection(codes.RESULT_CONTRACT_REJECTED, leak[0].path, reason)
    return plain, raw
