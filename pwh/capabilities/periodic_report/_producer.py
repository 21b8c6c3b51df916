"""The periodic-report hook producer: capability policy only (RFC §8, rules M10/M11).

It decides *whether* a committed writeback deserves a trigger evaluation and proposes exactly
one typed intent if so. It never decides whether a report is due (the reducer's job, reached
through a separately admitted executor), never touches a sink, and never mutates its input.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from pwh._core.canonical import canonical_bytes
from pwh._core.identity import intent_id

from ._registration import (
    CAPABILITY_ID,
    ELIGIBLE_TRANSITIONS,
    HOOK_ID,
    INPUT_SCHEMA_VERSION,
    INTENT_BUDGET,
    INTENT_KIND,
    INTENT_SCHEMA_VERSION,
    MAX_SOURCE_EVENT_REFS,
    OPERATION,
    POLICY_VERSION,
    PROJECTION_SCHEMA_VERSION,
    RESULT_SCHEMA_VERSION,
    is_opaque_token,
)


def not_applicable() -> dict[str, Any]:
    """The result for a receipt this capability has nothing to say about."""
    return {"schema_version": RESULT_SCHEMA_VERSION, "status": "not_applicable", "intents": []}


def produce(hook_input: Mapping[str, Any]) -> dict[str, Any]:
    """Map one hook input to a hook result: one trigger-evaluation intent, or ``not_applicable``.

    Pure and deterministic. Anything it cannot read as an eligible projection (missing
    projection, other transition, unsafe token) is ``not_applicable`` rather than an error:
    the dispatcher owns input validation, the capability only owns relevance.
    """
    try:
        payload = _eligible_payload(hook_input)
        if payload is None:
            return not_applicable()
        dispatch = hook_input["dispatch_id"]
        return {
            "schema_version": RESULT_SCHEMA_VERSION,
            "status": "proposed",
            "intents": [build_intent(dispatch, payload)],
        }
    except Exception:  # a hostile mapping must not turn relevance into a producer failure
        return not_applicable()


def build_intent(dispatch: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The RFC §8 intent for ``payload``, identified by the digest of its semantic inputs."""
    return {
        "schema_version": INTENT_SCHEMA_VERSION,
        "intent_id": intent_id(dispatch, INTENT_KIND, POLICY_VERSION, payload),
        "hook_id": HOOK_ID,
        "capability_id": CAPABILITY_ID,
        "source_dispatch_id": dispatch,
        "intent_kind": INTENT_KIND,
        "operation": OPERATION,
        "policy_version": POLICY_VERSION,
        "payload": payload,
        "budget": dict(INTENT_BUDGET),
        "requested_write_scope": [],
        "failure_policy": "isolate",
        "grants_new_action_authority": False,
        "external_write_performed": False,
    }


def _eligible_payload(hook_input: Mapping[str, Any]) -> dict[str, Any] | None:
    if not isinstance(hook_input, Mapping):
        return None
    if hook_input.get("schema_version") != INPUT_SCHEMA_VERSION:
        return None
    if type(hook_input.get("dispatch_id")) is not str or not hook_input["dispatch_id"]:
        return None
    source = hook_input.get("source")
    projection = hook_input.get("projection")
    if not isinstance(source, Mapping) or not isinstance(projection, Mapping):
        return None
    if projection.get("schema_version") != PROJECTION_SCHEMA_VERSION:
        return None
    event_kind = source.get("event_kind")
    transition = projection.get("transition")
    if type(event_kind) is not str or type(transition) is not str:
        return None
    if ELIGIBLE_TRANSITIONS.get(event_kind) != transition:
        return None
    segment_ref = projection["segment_ref"] if "segment_ref" in projection else _derived_segment_ref(source, transition)
    refs = _event_refs(projection.get("fact_refs", ()))
    if not is_opaque_token(segment_ref) or refs is None:
        return None
    return {"transition": transition, "segment_ref": segment_ref, "source_event_refs": refs}


def _derived_segment_ref(source: Mapping[str, Any], transition: str) -> str | None:
    """An opaque reference to the segment this transition closed, from what RFC §7 guarantees.

    §7's example projection carries only ``transition`` and ``fact_refs``; the intent's payload
    names a ``segment_ref``. An implementation whose projection carries one (pwh's does) is taken
    at its word; for one that follows §7's example the segment is the Goal's state at this
    committed receipt, so its reference is a digest of the source's opaque goal id, state revision
    and receipt id: the same receipt always names the same segment, two receipts never one."""
    parts = [source.get(key) for key in ("goal_id", "state_revision", "receipt_id")]
    if not all(type(part) is str and part for part in parts):
        return None
    digest = hashlib.sha256(canonical_bytes({"segment": parts, "transition": transition})).hexdigest()
    return f"seg_{digest[:32]}"


def _event_refs(fact_refs: Any) -> list[str] | None:
    """Unique fact refs in first-seen order, at most the schema's bound; ``None`` if any is unsafe.

    Past the bound the first refs are kept: the trigger itself must not be lost because the
    evidence list is long, and the refs are pointers, not the evidence.
    """
    if not isinstance(fact_refs, Sequence) or isinstance(fact_refs, (str, bytes)):
        return None
    refs: list[str] = []
    seen: set[str] = set()
    for ref in fact_refs:
        if not is_opaque_token(ref):
            return None
        if ref not in seen:
            seen.add(ref)
            refs.append(ref)
    return refs[:MAX_SOURCE_EVENT_REFS]
