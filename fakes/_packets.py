"""Builders for well-formed packets, so tests and steps state only what they change."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pwh._identity import intent_id

REGISTRATION_V0 = "loopx_post_writeback_capability_hook_registration_v0"

GENERIC_INTENT_KIND = "synthetic.follow_up"
GENERIC_PAYLOAD_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "note_ref": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}(?!\\n)$"},
        "n": {"type": "integer", "minimum": 0, "maximum": 1000000},
        "score": {"type": "number"},
        "filler": {"type": "string", "maxLength": 70000},
        "detail": {"type": "string", "maxLength": 512},
    },
    "required": ["note_ref"],
    "additionalProperties": False,
}


def registration(hook_id: str = "a.reporter", **overrides: Any) -> dict[str, Any]:
    """A valid registration for ``hook_id`` (capability = the part before the first dot)."""
    reg: dict[str, Any] = {
        "schema_version": REGISTRATION_V0,
        "hook_id": hook_id,
        "capability_id": hook_id.split(".", 1)[0],
        "phase": "post_writeback",
        "event_kinds": ["todo_completed", "replan_recorded"],
        "intent_kinds": [GENERIC_INTENT_KIND],
        "requested_read_scope": ["settlement_identity", "bounded_event_projection"],
        "budget": {
            "max_invocations_per_dispatch": 3,
            "max_intents_per_dispatch": 2,
            "max_result_bytes": 16384,
            "timeout_ms": 500,
        },
        "failure_policy": "isolate",
    }
    budget = overrides.pop("budget", None)
    reg.update(overrides)
    if budget:
        reg["budget"] = {**reg["budget"], **budget}
    return reg


def source(n: int = 1, *, event_kind: str = "todo_completed", transition: str | None = None, **overrides: Any) -> dict[str, Any]:
    """A committed, durable primary receipt numbered ``n``."""
    if transition is None:
        transition = {"todo_completed": "segment_completed", "replan_recorded": "replanned"}.get(event_kind, "progressed")
    receipt: dict[str, Any] = {
        "schema_version": "pwh_primary_receipt_v0",
        "receipt_id": f"receipt_{n:04d}",
        "effect_id": f"effect_{n:04d}",
        "plan_effect_id": f"effect_{n:04d}",
        "step_kind": "durable_writeback",
        "step_status": "committed",
        "durable_checkpoint": True,
        "goal_id": "goal_0001",
        "agent_id": "agent_0001",
        "todo_id": f"todo_{n:04d}",
        "turn_instance_id": f"turn_{n:04d}",
        "event_kind": event_kind,
        "state_revision": f"rev_{n:04d}",
        "committed_at": "2026-08-26T00:00:00Z",
        "event": {"transition": transition, "segment_ref": "segment_0001", "fact_refs": [f"fact_{n:04d}"]},
    }
    receipt.update(overrides)
    return receipt


def intent_for(hook_input: Mapping[str, Any], payload: Mapping[str, Any] | None = None, *,
               kind: str = GENERIC_INTENT_KIND, policy_version: str = "v0", **overrides: Any) -> dict[str, Any]:
    """An intent bound to ``hook_input``'s dispatch with a correct ``intent_id``."""
    payload = dict(payload) if payload is not None else {"note_ref": "note_" + hook_input["source"]["receipt_id"]}
    did = hook_input["dispatch_id"]
    intent = {
        "schema_version": "loopx_post_writeback_intent_v0",
        "intent_id": intent_id(did, kind, policy_version, payload),
        "hook_id": hook_input["hook_id"],
        "capability_id": hook_input["capability_id"],
        "source_dispatch_id": did,
        "intent_kind": kind,
        "operation": "follow_up",
        "policy_version": policy_version,
        "payload": payload,
        "budget": {"max_attempts": 1, "max_result_bytes": 16384},
        "requested_write_scope": [],
        "failure_policy": "isolate",
        "grants_new_action_authority": False,
        "external_write_performed": False,
    }
    intent.update(copy.deepcopy(overrides))
    return intent


def proposed(*intents: Mapping[str, Any]) -> dict[str, Any]:
    return {"schema_version": "loopx_post_writeback_hook_result_v0", "status": "proposed", "intents": list(intents)}


def not_applicable() -> dict[str, Any]:
    return {"schema_version": "loopx_post_writeback_hook_result_v0", "status": "not_applicable", "intents": []}
