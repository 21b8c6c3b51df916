"""Well-formed example packets: one place that knows what a valid registration, a committed
primary receipt, an intent and a hook result look like. The fakes, the benchmark and the reliability campaign all build on it
(core cannot import the fakes, so the builders live here)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pwh._core.identity import intent_id

REGISTRATION_V0 = "loopx_post_writeback_capability_hook_registration_v0"

_TRANSITION = {"todo_completed": "segment_completed", "replan_recorded": "replanned"}


def example_registration(
    hook_id: str, *, intent_kinds: list[str], budget: dict[str, int] | None = None, **overrides: Any
) -> dict[str, Any]:
    """A valid registration for ``hook_id`` (capability = the part before the first dot);
    ``budget`` entries replace the defaults one by one, ``overrides`` replace whole fields."""
    reg: dict[str, Any] = {
        "schema_version": REGISTRATION_V0,
        "hook_id": hook_id,
        "capability_id": hook_id.split(".", 1)[0],
        "phase": "post_writeback",
        "event_kinds": ["todo_completed", "replan_recorded"],
        "intent_kinds": list(intent_kinds),
        "requested_read_scope": ["settlement_identity", "bounded_event_projection"],
        "budget": {"max_invocations_per_dispatch": 3, "max_intents_per_dispatch": 2, "max_result_bytes": 16384, "timeout_ms": 500},
        "failure_policy": "isolate",
    }
    reg["budget"].update(budget or {})
    reg.update(overrides)
    return reg


def example_receipt(
    n: int, *, width: int = 4, event_kind: str = "todo_completed", transition: str | None = None, **overrides: Any
) -> dict[str, Any]:
    """A committed, durably checkpointed primary receipt numbered ``n`` (ids zero-padded to
    ``width`` digits); ``overrides`` replace whole fields."""
    tag = f"{n:0{width}d}"
    receipt: dict[str, Any] = {
        "schema_version": "pwh_primary_receipt_v0",
        "receipt_id": f"receipt_{tag}",
        "effect_id": f"effect_{tag}",
        "plan_effect_id": f"effect_{tag}",
        "step_kind": "durable_writeback",
        "step_status": "committed",
        "durable_checkpoint": True,
        "goal_id": "goal_0001",
        "agent_id": "agent_0001",
        "todo_id": f"todo_{tag}",
        "turn_instance_id": f"turn_{tag}",
        "event_kind": event_kind,
        "state_revision": f"rev_{tag}",
        "committed_at": "2026-08-26T00:00:00Z",
        "event": {
            "transition": transition or _TRANSITION.get(event_kind, "progressed"),
            "segment_ref": "segment_0001",
            "fact_refs": [f"fact_{tag}"],
        },
    }
    receipt.update(overrides)
    return receipt


def example_intent(
    dispatch: str,
    hook_id: str,
    payload: Mapping[str, Any],
    *,
    kind: str,
    capability_id: str | None = None,
    policy_version: str = "v0",
    max_result_bytes: int = 16384,
) -> dict[str, Any]:
    """A valid intent of ``hook_id`` for the dispatch ``dispatch``, its ``intent_id`` the digest of
    its semantic inputs; callers change fields afterwards (the one with a bad field is the test)."""
    return {
        "schema_version": "loopx_post_writeback_intent_v0",
        "intent_id": intent_id(dispatch, kind, policy_version, payload),
        "hook_id": hook_id,
        "capability_id": capability_id if capability_id is not None else hook_id.split(".", 1)[0],
        "source_dispatch_id": dispatch,
        "intent_kind": kind,
        "operation": "follow_up",
        "policy_version": policy_version,
        "payload": payload,
        "budget": {"max_attempts": 1, "max_result_bytes": max_result_bytes},
        "requested_write_scope": [],
        "failure_policy": "isolate",
        "grants_new_action_authority": False,
        "external_write_performed": False,
    }


def example_result(status: str, *intents: Mapping[str, Any]) -> dict[str, Any]:
    """A hook result: ``proposed`` with its intents, or ``not_applicable`` with none."""
    return {"schema_version": "loopx_post_writeback_hook_result_v0", "status": status, "intents": list(intents)}
