"""The hooks a model may install, how often it draws each, and what each must end as.

Behaviours are the step library's plain-English phrases (``fakes/_behaviours.py``), so any
run can be written back as Gherkin. ``expected`` is the model's oracle for one provider call in
isolation: what the RFC says that hook's outcome is before any per-dispatch ceiling applies
(SPEC §4: a failure is compact and isolated; budgets are per hook).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pwh._core import codes

HANG = "does not return within its timeout"
FIRST_FAILS = "fails on its first call only"
MUTATES = "tries to change its input"
SIBLING = "sibling"  # the second part of a hook id sharing another installed hook's capability
VERSIONED = "versioned"  # a hook proposing one intent under a policy version the run can move
PERIODIC = "periodic_report"  # the real capability

# Hook ids the model draws from: distinct capabilities, installed in any order (hook_id order is
# what the dispatcher must follow, M08).
HOOK_IDS: tuple[str, ...] = ("a.alpha", "b.bravo", "c.charlie", "d.delta")
PERIODIC_HOOK_ID = "periodic_report.runtime_trigger"

# Draw weights; the first phrase is what Hypothesis shrinks towards. A hanging hook costs its real
# 200 ms timeout on every call and is retried on every replay and recovery, so the CI profile
# leaves it to the tests that hunt timeouts (:data:`HANG_WEIGHTS`) and soaks draw it rarely.
CI_WEIGHTS: dict[str, int] = {
    "proposes one intent": 16,
    "answers not applicable": 6,
    "raises an error": 8,
    "proposes a different intent on every call": 8,
    FIRST_FAILS: 6,
    "proposes two intents": 4,
    "returns an invalid result": 4,
    "returns a result over its byte limit": 2,
    "proposes an intent requesting write scope report.publish": 4,
    "proposes an intent that claims an external write": 4,
    MUTATES: 4,
    HANG: 0,
}
SOAK_WEIGHTS: dict[str, int] = {**CI_WEIGHTS, HANG: 1}
HANG_WEIGHTS: dict[str, int] = {"proposes one intent": 1, HANG: 1}


@dataclass(frozen=True)
class Expected:
    """One hook's outcome for one provider call, before per-dispatch ceilings."""

    status: str  # proposed | not_applicable | failed
    code: str | None = None
    intents: int = 0


_PROPOSES_ONE = Expected("proposed", None, 1)
_FAILED_CONTRACT = Expected("failed", codes.RESULT_CONTRACT_REJECTED)

_FIXED: dict[str, Expected] = {
    "proposes one intent": _PROPOSES_ONE,
    "proposes two intents": Expected("proposed", None, 2),
    "answers not applicable": Expected("not_applicable"),
    "raises an error": Expected("failed", codes.PRODUCER_FAILED),
    HANG: Expected("failed", codes.PRODUCER_TIMED_OUT),
    "returns an invalid result": _FAILED_CONTRACT,
    "returns a result over its byte limit": _FAILED_CONTRACT,
    "proposes an intent requesting write scope report.publish": _PROPOSES_ONE,
    "proposes an intent that claims an external write": _FAILED_CONTRACT,
    "proposes a different intent on every call": _PROPOSES_ONE,
    VERSIONED: _PROPOSES_ONE,
    # That a mutation cannot reach core or another hook is normative; that trying fails the
    # producer is the reference's reading (SPEC §0), so a hook whose attempt went nowhere and
    # answered not_applicable passes too (:data:`ALSO`).
    MUTATES: Expected("failed", codes.PRODUCER_FAILED),
}
ALSO: dict[str, Expected] = {MUTATES: Expected("not_applicable")}

_ELIGIBLE = {"todo_completed": "segment_completed", "replan_recorded": "replanned"}


def expected(behaviour: str, call_number: int, hook_input: Mapping[str, Any]) -> Expected:
    """What one call of a hook with ``behaviour`` must end as (SPEC §4, §5 M10/M11)."""
    if behaviour == FIRST_FAILS:
        return Expected("failed", codes.PRODUCER_FAILED) if call_number == 1 else _PROPOSES_ONE
    if behaviour == PERIODIC:
        source = hook_input.get("source", {})
        projection = hook_input.get("projection", {})
        eligible = projection.get("transition") == _ELIGIBLE.get(source.get("event_kind", ""))
        return _PROPOSES_ONE if eligible else Expected("not_applicable")
    return _FIXED[behaviour]


@dataclass(frozen=True)
class HookSpec:
    """What the model knows of one installed hook (its registration, as the step library makes it)."""

    hook_id: str
    behaviour: str
    max_invocations: int = 3
    max_result_bytes: int = 16384
    timeout_ms: int = 500
    event_kinds: tuple[str, ...] = ("todo_completed", "replan_recorded")

    @property
    def hangs(self) -> bool:
        return self.behaviour == HANG


def spec_for(hook_id: str, behaviour: str) -> HookSpec:
    """The registration facts the oracle needs, read from the same sources the installer uses."""
    if behaviour == PERIODIC:
        from pwh.capabilities.periodic_report import REGISTRATION

        budget = REGISTRATION["budget"]
        return HookSpec(
            hook_id,
            behaviour,
            budget["max_invocations_per_dispatch"],
            budget["max_result_bytes"],
            budget["timeout_ms"],
            tuple(REGISTRATION["event_kinds"]),
        )
    from fakes._behaviours import BEHAVIOURS
    from fakes._packets import registration

    extra = BEHAVIOURS[behaviour].budget if behaviour in BEHAVIOURS else {}
    budget = registration(hook_id, budget=dict(extra))["budget"]
    return HookSpec(hook_id, behaviour, budget["max_invocations_per_dispatch"], budget["max_result_bytes"], budget["timeout_ms"])
