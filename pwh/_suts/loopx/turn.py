"""LoopX 2.1.1 behind the turn seam: seed 003's rows judged by LoopX's own primary-Turn code.

- provider registration: ``loopx.capabilities.registry.CapabilityRegistry.register_provider``,
  which refuses an out-of-order lifecycle at registration time (registry.py, the three
  ``cannot be ... but ...`` checks);
- the host request: ``executor.build_loopx_turn_host_request``;
- the host output: read by ``executor._run_host`` (the executor's own read of a host process's
  stdout, capped at ``HOST_RESULT_MAX_BYTES = 12_000`` by its Node process bridge), then judged by
  ``executor.validate_loopx_turn_host_result``.

The candidate arrives in pwh's host-result vocabulary; :func:`render_candidate` writes it as a
LoopX host result of the same byte length (padded with JSON whitespace), adding the fields LoopX
requires of every material result with fixed, valid values. LoopX's answers (error strings) are
mapped onto seed 003's failure classes by :data:`ERROR_CLASSES`. A case LoopX cannot express
raises :class:`Unsupported` naming what it lacks.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pwh._suts.loopx.map import row
from pwh._suts.seam import Unsupported
from pwh._suts.turn_seam import HostVerdict, ProviderAnswer, RequestView, key_paths

__all__ = ["ERROR_CLASSES", "LoopxTurn", "loopx_turn_key", "render_candidate"]

# pwh's result kinds and phases -> LoopX's (LoopXTurnResultKind, TRANSACTION_PHASES).
RESULT_KINDS = {
    "validated_completion": "validated_completion",
    "progress": "validated_progress",
    "replan": "replan_required",
    "waiting": "wait",
    "failed": "iteration_failed",
}
PHASES = {"validation": "validation", "writeback": "durable_writeback", "spend": "quota_spend"}
MATERIAL = frozenset({"validated_completion", "validated_progress", "replan_required", "repair_required"})
EVENT_KINDS = {"validated_completion": "todo_completed", "validated_progress": "progress_recorded", "replan_required": "replan_recorded"}

# What LoopX requires of every material result beyond pwh's vocabulary: fixed values that pass
# its own checks (executor.py, HOST_RESULT_TEXT_LIMITS, delivery scale and outcome, path delta).
MATERIAL_FILLER: dict[str, str] = {
    "classification": "pwh_candidate",
    "recommended_action": "continue",
    "next_action": "continue",
    "delivery_batch_scale": "test_only",
    "delivery_outcome": "primary_goal_outcome",
    "path_delta_mode": "unchanged",
    "vision_unchanged_reason": "unchanged",
}
PROGRESS_OBSERVATION = json.dumps({"result_class": "advanced"})

# LoopX's validation and read errors (fixed strings of executor.py) -> seed 003's classes, in the
# order a verdict names them: the first class any error belongs to wins.
ERROR_CLASSES: tuple[tuple[str, str, str | None], ...] = (
    ("host stdout exceeded the result budget", "host_output_oversize", "$"),
    ("host stdout is not one JSON value", "host_output_not_json", "$"),
    ("host stdout must be one JSON object", "host_output_not_json", "$"),
    ("host result turn_key does not match the transaction plan", "host_result_binding_mismatch", "$.turn_key"),
    ("host result completed_phases must be host_execute, typed_result", "host_phase_overclaim", "$.completed_phases"),
    ("validated_completion requires a todo lifecycle adapter", "completion_lifecycle_missing", "$.lifecycle"),
    ("non-material host results cannot declare", "non_material_with_evidence", None),
)

# registry.py's lifecycle refusals -> the flag each names.
LIFECYCLE_REFUSALS = {
    "cannot be installed but undeclared": "$.installed",
    "cannot be enabled but uninstalled": "$.enabled",
    "cannot be ready but disabled": "$.ready",
}

# The host process: reads LoopX's request from stdin, answers the candidate file's bytes.
_HOST = "import sys; sys.stdin.buffer.read(); sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())"
HOST_TIMEOUT_SECONDS = 60.0


# The Turn's bounds LoopX's request carries inside the envelope its planner builds (HST-1).
_ENVELOPE_BOUNDS = ("gate", "scope", "evidence_requirements", "stop_conditions", "resume_conditions")


def _envelope_value(value: Any) -> Any:
    return list(value) if isinstance(value, (list, tuple)) else value


def loopx_turn_key(turn_key: str) -> str:
    """LoopX's turn keys are ``sha256:<64 hex>``; pwh's opaque key crosses as its digest."""
    return "sha256:" + hashlib.sha256(turn_key.encode("utf-8")).hexdigest()


def _loopx_plan(plan: Mapping[str, Any]) -> dict[str, Any]:
    """The Turn plan as LoopX's executor reads it: a transaction's turn key, a host-executable
    route, and the Turn envelope its planner would build, with the Turn's bounds in it."""
    envelope = {
        "schema_version": "loopx_turn_envelope_v0",
        "goal_id": plan["goal_id"],
        "agent_id": plan["agent_id"],
        "action": {"selected_todo": {"todo_id": plan["todo_id"]}},
        **{bound: _envelope_value(plan[bound]) for bound in _ENVELOPE_BOUNDS},
    }
    return {
        "transaction": {"turn_key": loopx_turn_key(plan["turn_key"])},
        "route": {"kind": plan["route"], "would_invoke_host": True},
        "session": {},
        "turn_envelope": envelope,
    }


def render_candidate(plan: Mapping[str, Any], raw: bytes, result_schema: str) -> tuple[bytes, bool]:
    """``raw`` (pwh's vocabulary) as a LoopX host result of the same length, and whether the
    completion lifecycle is configured. Bytes that are not one JSON object cross unchanged, for
    LoopX's reader to judge."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return raw, False
    if not isinstance(value, dict):
        return raw, False
    if value.get("effect_ref") != plan["effect_ref"]:
        raise Unsupported(row("turn.effect_ref").note)
    if value.get("path_delta") and value.get("result_kind") in ("validated_completion", "progress", "replan"):
        raise Unsupported(row("turn.path_delta").note)
    lifecycle = value.get("lifecycle")
    configured = isinstance(lifecycle, dict) and bool(lifecycle.get("adapter"))
    if configured and not lifecycle.get("followup"):  # type: ignore[union-attr]
        raise Unsupported(row("turn.followup").note)
    kind = RESULT_KINDS.get(value.get("result_kind"), value.get("result_kind"))  # type: ignore[arg-type]
    phases = value.get("completed_phases")
    out: dict[str, Any] = {
        "schema_version": result_schema,
        "turn_key": loopx_turn_key(str(value.get("turn_key"))),
        "result_kind": kind,
        "completed_phases": [PHASES.get(p, p) for p in phases] if isinstance(phases, list) else phases,
    }
    if kind in MATERIAL:
        out.update(MATERIAL_FILLER)
    if value.get("evidence"):
        out["work_evidence"] = value["evidence"]
    if value.get("path_delta"):
        out["path_delta_mode"] = "material_replan"
    if value.get("progress_observation") is not None:
        out["progress_observation_json"] = PROGRESS_OBSERVATION
    encoded = json.dumps(out, separators=(",", ":")).encode("utf-8")
    return encoded + b" " * max(0, len(raw) - len(encoded)), configured


def classify(errors: list[str]) -> tuple[str, str | None]:
    """The seed-003 class of LoopX's first recognised error (else a shape rejection)."""
    for fragment, code, path in ERROR_CLASSES:
        if any(fragment in error for error in errors):
            return code, path
    return "host_result_shape_rejected", None


class LoopxTurn:
    """LoopX's registry, request builder, host read and validator, in the turn seam's terms."""

    name = "loopx"
    operations = frozenset({"register_provider", "build_host_request", "accept_host_output"})

    def __init__(self, workdir: Path) -> None:
        from loopx.capabilities.registry import CapabilityRegistry
        from loopx.control_plane.turn_driver import executor

        self._executor = executor
        self._registry = CapabilityRegistry()
        self._workdir = workdir
        self._workdir.mkdir(parents=True, exist_ok=True)
        self._outputs = 0

    def register_provider(self, provider_id: str, flags: Mapping[str, bool]) -> ProviderAnswer:
        try:
            self._registry.register_provider({"id": provider_id, "origin": "extension", **flags})
        except ValueError as exc:
            named = next((path for fragment, path in LIFECYCLE_REFUSALS.items() if fragment in str(exc)), None)
            return ProviderAnswer(False, path=named)
        stored = next(p for p in self._registry.providers() if p["id"] == provider_id)
        reached = [flag for flag in ("declared", "installed", "enabled", "ready") if stored.get(flag) is True]
        return ProviderAnswer(True, stage=reached[-1] if reached else None)

    def build_host_request(self, plan: Mapping[str, Any]) -> RequestView:
        request = self._executor.build_loopx_turn_host_request(_loopx_plan(plan))
        contract = request.get("result_contract") or {}
        envelope = request.get("turn_envelope") or {}
        todo = ((envelope.get("action") or {}).get("selected_todo") or {}).get("todo_id")
        found = {
            "route": request.get("route") == plan["route"],
            "todo": todo == plan["todo_id"],
            "output_schema": bool(contract.get("schema_version")),
            **{b: envelope.get(b) == _envelope_value(plan[b]) for b in _ENVELOPE_BOUNDS},
        }
        return RequestView(
            tuple(contract.get("completed_phases") or ()), frozenset(b for b, ok in found.items() if ok), tuple(key_paths(request))
        )

    def accept_host_output(self, plan: Mapping[str, Any], raw: bytes) -> HostVerdict:
        ex = self._executor
        loopx_plan = _loopx_plan(plan)
        rendered, configured = render_candidate(plan, raw, ex.LOOPX_TURN_RESULT_SCHEMA_VERSION)
        self._outputs += 1
        output = self._workdir / f"host-output-{self._outputs}.bin"
        output.write_bytes(rendered)
        observed = ex._run_host(
            ex.build_loopx_turn_host_request(loopx_plan),
            argv=[sys.executable, "-c", _HOST, str(output)],
            project=self._workdir,
            timeout_seconds=HOST_TIMEOUT_SECONDS,
        )
        output.unlink(missing_ok=True)
        if not observed.get("ok"):
            code, path = classify([str(observed.get("reason") or "")])
            return HostVerdict(False, code=code, path=path)
        validation = ex.validate_loopx_turn_host_result(loopx_plan, observed["value"], completion_lifecycle_configured=configured)
        if not validation.get("ok"):
            code, path = classify([str(e) for e in validation.get("errors") or ()])
            return HostVerdict(False, code=code, path=path)
        result = validation["result"]
        return HostVerdict(True, event_kind=EVENT_KINDS.get(result.get("result_kind")), evidence=tuple(result.get("work_evidence") or ()))
