"""The primary Turn end to end (issue: fake orchestrator, scheduler, sink; periodic report)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from fakes._baseline import NoHooksSUT
from fakes._orchestrator import PRIMARY_CRASH_POINTS, FakeOrchestrator, spend_eligible
from fakes._packets import (
    GENERIC_INTENT_KIND,
    GENERIC_PAYLOAD_SCHEMA,
    intent_for,
    proposed,
    registration,
)
from fakes._scheduler import FakeScheduler, GovernedAdmission
from fakes._sink import FakeSink
from pwh import Profile, ReferenceSUT, SimulatedCrash
from pwh._core import crash as _crash
from pwh.capabilities import periodic_report
from pwh.capabilities.periodic_report import INTENT_KIND, TriggerReducer


@pytest.fixture
def release() -> Iterator[threading.Event]:
    gate = threading.Event()
    yield gate
    gate.set()


def make(tmp_path: Path, name: str = "run", *, hooks: bool = True, segment_size: int = 1, journal: str = "sqlite") -> FakeOrchestrator:
    sut = ReferenceSUT(journal=journal, workdir=tmp_path / name / "sut")
    sut.set_profile(Profile(phase_enabled=True))
    if hooks:
        periodic_report.install(sut)
    return FakeOrchestrator(sut, tmp_path / name / "primary", seed=3, segment_size=segment_size)


def consume(orch: FakeOrchestrator) -> tuple[FakeScheduler, TriggerReducer, FakeSink]:
    admission = GovernedAdmission()
    reducer = TriggerReducer()
    sink = FakeSink(trusted=admission)
    scheduler = FakeScheduler(admission, {INTENT_KIND: reducer.reduce})
    scheduler.consume(orch.intent_receipts())
    return scheduler, reducer, sink


@pytest.mark.parametrize("action, reason", [("complete_todo", "below_threshold"), ("replan", "replan_transition")])
def test_a_turn_ends_in_one_intent_receipt_and_one_trigger_decision(tmp_path: Path, action: str, reason: str) -> None:
    orch = make(tmp_path)
    turn = getattr(orch, action)()
    assert turn.committed and turn.dispatch.hook("periodic_report.runtime_trigger").status == "proposed"
    intents = orch.intent_receipts()
    assert len(intents) == 1 and intents[0]["intent_kind"] == INTENT_KIND
    scheduler, reducer, sink = consume(orch)
    assert [e.status for e in scheduler.entries] == ["executed"]
    assert [d.reason for d in reducer.decisions()] == [reason]
    assert not sink.touched
    orch.close()


@pytest.mark.parametrize("action", ["complete_todo", "replan"])
def test_replay_gives_no_duplicate_intent_and_no_second_spend(tmp_path: Path, action: str) -> None:
    orch = make(tmp_path)
    turn = getattr(orch, action)()
    before = orch.primary_snapshot()
    for _ in range(3):
        again = orch.replay(turn.turn_key)
        assert again.dispatch.hook("periodic_report.runtime_trigger").replayed
    assert len(orch.intent_receipts()) == 1
    assert len(orch.spends()) == 1 and orch.primary_snapshot() == before
    scheduler, reducer, _ = consume(orch)
    scheduler.consume(orch.intent_receipts())
    assert sum(scheduler.executions.values()) == 1 and len(reducer.decisions()) == 1
    orch.close()


def _misbehaving(kind: str, release: threading.Event):  # type: ignore[no-untyped-def]
    def produce(hook_input: Mapping[str, Any]) -> Any:
        if kind == "raises":
            raise RuntimeError("boom")
        release.wait(30)
        return proposed(intent_for(hook_input))

    return produce


@pytest.mark.parametrize("kind", ["raises", "hangs"])
def test_a_failing_hook_leaves_primary_and_spend_byte_identical_to_no_hooks(tmp_path: Path, kind: str, release: threading.Event) -> None:
    orch = make(tmp_path, "with")
    orch.sut.register_intent_kind(GENERIC_INTENT_KIND, GENERIC_PAYLOAD_SCHEMA)
    assert orch.sut.install(registration("z.bad", budget={"timeout_ms": 100}), _misbehaving(kind, release)) == []
    base = FakeOrchestrator(NoHooksSUT(), tmp_path / "without", seed=3, segment_size=1)
    for o in (orch, base):
        o.complete_todo()
        o.replan()
        o.complete_todo()
    assert orch.primary_snapshot() == base.primary_snapshot()
    assert orch.spends() == base.spends() and len(orch.spends()) == 3
    codes = {t.dispatch.hook("z.bad").failure_code for t in orch.turns}
    assert codes == {"producer_failed" if kind == "raises" else "producer_timed_out"}
    orch.close()
    base.close()


def test_spend_eligibility_reads_the_primary_receipt_alone() -> None:
    receipt = {"step_status": "committed", "durable_checkpoint": True}
    assert spend_eligible(receipt)
    assert not spend_eligible({**receipt, "step_status": "prepared"})
    assert not spend_eligible({**receipt, "durable_checkpoint": False})


def test_plain_progress_dispatches_nothing_and_still_spends(tmp_path: Path) -> None:
    orch = make(tmp_path)
    turn = orch.progress()
    assert turn.committed and not turn.dispatch.admitted and turn.dispatch.code == "not_a_post_writeback_event"
    assert orch.intent_receipts() == [] and len(orch.spends()) == 1
    orch.close()


def test_segment_threshold_decides_the_transition(tmp_path: Path) -> None:
    orch = make(tmp_path, segment_size=3)
    transitions = [orch.complete_todo().receipt["event"]["transition"] for _ in range(4)]
    assert transitions == ["segment_progressed", "segment_progressed", "segment_completed", "segment_progressed"]
    assert len(orch.intent_receipts()) == 1
    orch.close()


def test_two_runs_of_one_script_are_byte_identical(tmp_path: Path) -> None:
    outputs = []
    for name in ("a", "b"):
        orch = make(tmp_path, name, segment_size=2)
        orch.complete_todo()
        orch.complete_todo()
        orch.replan()
        t = orch.progress()
        orch.replay(t.turn_key)
        _, reducer, _ = consume(orch)
        outputs.append(
            (
                orch.primary_snapshot(),
                json.dumps(orch.sut.journal_records(), sort_keys=True),
                json.dumps([d.to_json() for d in reducer.decisions()], sort_keys=True),
            )
        )
        orch.close()
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("point", PRIMARY_CRASH_POINTS + _crash.SIDECAR_CRASH_POINTS)
def test_a_crash_at_any_boundary_recovers_to_one_intent_and_one_spend(tmp_path: Path, point: str) -> None:
    orch = make(tmp_path)
    orch.arm_crash(point)
    with pytest.raises(SimulatedCrash):
        orch.complete_todo()
    orch.restart()
    receipts = orch.receipts()
    if point in ("primary.before_writeback", "primary.inside_writeback"):
        assert receipts == [] and orch.intent_receipts() == [] and orch.spends() == []
    else:
        assert len(receipts) == 1 and len(orch.intent_receipts()) == 1 and len(orch.spends()) == 1
    orch.close()


def test_losing_every_rollout_event_changes_nothing(tmp_path: Path) -> None:
    runs = []
    for name, lose in (("kept", False), ("lost", True)):
        orch = make(tmp_path, name)
        orch.rollout.fail_appends = lose
        orch.complete_todo()
        orch.replan()
        runs.append((orch.primary_snapshot(), json.dumps(orch.sut.journal_records(), sort_keys=True)))
        assert (orch.rollout.events == []) == lose
        orch.close()
    assert runs[0] == runs[1]


def test_validation_failure_writes_nothing_and_calls_no_hook(tmp_path: Path) -> None:
    from fakes._host import make_host_result

    orch = make(tmp_path)
    turn = orch.run_turn(lambda r: make_host_result(r, "validated_completion", evidence=["ok"]))
    assert turn.stage == "validation_rejected" and turn.code == "completion_lifecycle_missing"
    assert orch.receipts() == [] and orch.sut.journal_records() == [] and orch.spends() == []
    orch.close()
