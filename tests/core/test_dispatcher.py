"""The reference dispatcher (SPEC §4) through the SUT seam: each behaviour fails its test if removed."""

from __future__ import annotations

import atexit
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from fakes._packets import (
    GENERIC_INTENT_KIND,
    GENERIC_PAYLOAD_SCHEMA,
    intent_for,
    not_applicable,
    proposed,
    registration,
    source,
)
from pwh import Profile, ReferenceSUT, SimulatedCrash
from pwh._core import codes
from pwh._core import crash as _crash
from pwh._core.canonical import to_plain
from pwh._core.dispatcher import Dispatcher
from pwh._core.runner import ThreadRunner

ON = Profile(phase_enabled=True)


class Calls:
    """Counts provider calls and what each call saw, in whatever process the provider runs (the
    reference's default runner calls it in a worker process): one JSON line per call in a file."""

    def __init__(self) -> None:
        handle, name = tempfile.mkstemp(prefix="pwh-calls-", suffix=".jsonl")
        os.close(handle)
        self.path = Path(name)
        atexit.register(self.path.unlink, missing_ok=True)

    def note(self, hook_input: Mapping[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as log:
            log.write(json.dumps(to_plain(hook_input)) + "\n")

    def _seen(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.path.read_text("utf-8").splitlines() if line]

    @property
    def count(self) -> int:
        return len(self._seen())

    @property
    def inputs(self) -> list[Mapping[str, Any]]:
        return self._seen()

    @property
    def order(self) -> list[str]:
        return [i["hook_id"] for i in self._seen()]


@pytest.fixture(params=["sqlite", "memory"])
def sut(request: pytest.FixtureRequest) -> Iterator[ReferenceSUT]:
    s = ReferenceSUT(journal=request.param)
    s.register_intent_kind(GENERIC_INTENT_KIND, GENERIC_PAYLOAD_SCHEMA)
    s.set_profile(ON)
    yield s
    s.close()


@pytest.fixture
def release() -> Iterator[threading.Event]:
    gate = threading.Event()
    yield gate
    gate.set()  # let abandoned 'hanging' producers finish so no thread outlives the test


def producer(calls: Calls, behave: Callable[[Mapping[str, Any]], Any] | None = None):  # type: ignore[no-untyped-def]
    def produce(hook_input: Mapping[str, Any]) -> Any:
        calls.note(hook_input)
        return behave(hook_input) if behave else proposed(intent_for(hook_input))

    return produce


def install(sut: ReferenceSUT, hook_id: str, calls: Calls, behave=None, **reg) -> None:  # type: ignore[no-untyped-def]
    assert sut.install(registration(hook_id, **reg), producer(calls, behave)) == []


def test_committed_receipt_gives_one_dispatch_per_admitted_hook(sut: ReferenceSUT) -> None:
    calls = Calls()
    install(sut, "a.reporter", calls)
    install(sut, "b.reporter", calls)
    out = sut.dispatch(source())
    assert out.admitted and [h.status for h in out.hooks] == ["proposed", "proposed"]
    assert len({h.dispatch_id for h in out.hooks}) == 2
    assert len(sut.journal_records()) == 2 and calls.count == 2


def test_phase_disabled_calls_nobody(sut: ReferenceSUT) -> None:
    calls = Calls()
    install(sut, "a.reporter", calls)
    sut.set_profile(Profile(phase_enabled=False))
    out = sut.dispatch(source())
    assert not out.admitted and out.code == codes.PHASE_DISABLED
    assert calls.count == 0 and sut.journal_records() == []


def test_allowlist_admits_only_listed_hooks(sut: ReferenceSUT) -> None:
    calls = Calls()
    install(sut, "a.reporter", calls)
    install(sut, "b.reporter", calls)
    sut.set_profile(ON.with_(allowlist={"b.reporter"}))
    out = sut.dispatch(source())
    assert [h.hook_id for h in out.hooks] == ["b.reporter"] and calls.order == ["b.reporter"]


def test_replay_returns_stored_receipt_without_calling_provider(sut: ReferenceSUT) -> None:
    calls = Calls()
    install(sut, "a.reporter", calls)
    first = sut.dispatch(source())
    again = sut.dispatch(source())
    assert calls.count == 1
    assert again.hook("a.reporter").replayed and again.hook("a.reporter").intents == first.hook("a.reporter").intents
    assert len(sut.journal_records()) == 1


def test_different_result_for_recorded_dispatch_is_a_conflict(sut: ReferenceSUT) -> None:
    calls = Calls()
    install(sut, "a.reporter", calls, lambda i: proposed(intent_for(i, {"note_ref": f"n{calls.count}"})))
    first = sut.dispatch(source()).hook("a.reporter")
    second = sut.redeliver(source()).hook("a.reporter")
    assert second.failure_code == codes.INTENT_CONFLICT
    assert second.intents == first.intents
    [record] = sut.journal_records()
    assert record["intents"] == list(first.intents)


def test_redelivery_with_the_same_result_is_a_no_op(sut: ReferenceSUT) -> None:
    calls = Calls()
    install(sut, "a.reporter", calls)
    first = sut.dispatch(source()).hook("a.reporter")
    second = sut.redeliver(source()).hook("a.reporter")
    assert second.status == "proposed" and second.replayed and second.intents == first.intents


def test_hanging_producer_times_out_and_later_hooks_still_run(sut: ReferenceSUT, release: threading.Event) -> None:
    calls = Calls()
    late = threading.Event()

    def hang(i: Mapping[str, Any]) -> Any:
        try:
            release.wait(30)
        except BaseException:  # a hostile producer swallows the stop signal and answers late
            release.wait(30)
        late.set()
        return proposed(intent_for(i))

    install(sut, "a.hangs", calls, hang, budget={"timeout_ms": 200})
    install(sut, "b.reporter", calls)
    started = time.monotonic()
    out = sut.dispatch(source())
    elapsed = time.monotonic() - started
    assert out.hook("a.hangs").failure_code == codes.PRODUCER_TIMED_OUT
    assert out.hook("b.reporter").status == "proposed"
    assert elapsed < 15  # generous (a loaded machine): a missing timeout would block until release (30 s)
    release.set()
    # The default runner killed the hung provider's worker process, so no late return comes at
    # all; under the thread runner it comes and is dropped. Either way it is never recorded.
    late.wait(0.3)
    [rec] = [r for r in sut.journal_records() if r["hook_id"] == "a.hangs"]
    assert rec["status"] == "failed" and rec["intents"] == []  # the late return was never recorded


def test_raising_producer_is_isolated_and_compact(sut: ReferenceSUT) -> None:
    calls = Calls()

    def boom(i: Mapping[str, Any]) -> Any:
        raise RuntimeError("secret path /home/alice/.ssh/id_rsa")

    install(sut, "a.flaky", calls, boom)
    install(sut, "b.reporter", calls)
    out = sut.dispatch(source())
    assert out.hook("a.flaky").failure_code == codes.PRODUCER_FAILED
    assert out.hook("b.reporter").status == "proposed"
    assert "alice" not in repr(sut.journal_records()) and "alice" not in repr(out.to_json())


@pytest.mark.parametrize("exc", [SystemExit(2), KeyboardInterrupt(), GeneratorExit()])
def test_base_exceptions_are_producer_failures(sut: ReferenceSUT, exc: BaseException) -> None:
    def raise_it(i: Mapping[str, Any]) -> Any:
        raise exc

    install(sut, "a.flaky", Calls(), raise_it)
    assert sut.dispatch(source()).hook("a.flaky").failure_code == codes.PRODUCER_FAILED


def test_invalid_result_is_rejected(sut: ReferenceSUT) -> None:
    install(sut, "a.bad", Calls(), lambda i: {"status": "done"})
    out = sut.dispatch(source()).hook("a.bad")
    assert out.failure_code == codes.RESULT_CONTRACT_REJECTED and out.rejection is not None


def test_input_is_immutable_and_private_per_provider(sut: ReferenceSUT) -> None:
    calls = Calls()

    def mutate(i: Mapping[str, Any]) -> Any:
        i["source"]["goal_id"] = "changed"  # type: ignore[index]
        return not_applicable()

    install(sut, "a.mutator", calls, mutate)
    install(sut, "b.reader", calls, lambda i: not_applicable())
    out = sut.dispatch(source())
    assert out.hook("a.mutator").failure_code == codes.PRODUCER_FAILED
    assert calls.inputs[1]["source"]["goal_id"] == "goal_0001"
    assert calls.inputs[0] is not calls.inputs[1]


def test_hooks_run_in_hook_id_order_not_install_order(sut: ReferenceSUT) -> None:
    calls = Calls()
    for hook in ("c.third", "a.first", "b.second"):
        install(sut, hook, calls)
    out = sut.dispatch(source())
    assert calls.order == ["a.first", "b.second", "c.third"]
    assert [h.hook_id for h in out.hooks] == ["a.first", "b.second", "c.third"]


def test_retries_reuse_identity_then_budget_is_exhausted(sut: ReferenceSUT) -> None:
    calls = Calls()

    def boom(i: Mapping[str, Any]) -> Any:
        raise ValueError

    install(sut, "a.flaky", calls, boom, budget={"max_invocations_per_dispatch": 8})
    sut.set_profile(ON.with_(max_attempts=2))
    outs = [sut.dispatch(source()).hook("a.flaky") for _ in range(4)]
    assert [o.failure_code for o in outs] == [codes.PRODUCER_FAILED] * 2 + [codes.DISPATCH_BUDGET_EXHAUSTED] * 2
    assert calls.count == 2 and len({o.dispatch_id for o in outs}) == 1
    assert [o.attempts for o in outs] == [1, 2, 2, 2]


def test_invocation_budget_bounds_one_attempt_not_the_retries(sut: ReferenceSUT) -> None:
    """SPEC section 0: max_invocations_per_dispatch bounds calls within one attempt (the RFC's own
    example registers 1 and still allows retries); the profile's max_attempts bounds retries."""
    calls = Calls()
    install(sut, "a.flaky", calls, lambda i: 1 / 0, budget={"max_invocations_per_dispatch": 1})
    sut.set_profile(ON.with_(max_attempts=3))
    outs = [sut.dispatch(source()).hook("a.flaky").failure_code for _ in range(4)]
    assert outs == [codes.PRODUCER_FAILED] * 3 + [codes.DISPATCH_BUDGET_EXHAUSTED] and calls.count == 3


def test_retry_after_failure_can_succeed_with_same_identity(sut: ReferenceSUT) -> None:
    calls = Calls()

    def flaky_once(i: Mapping[str, Any]) -> Any:
        if calls.count == 1:
            raise ValueError
        return proposed(intent_for(i))

    install(sut, "a.flaky", calls, flaky_once)
    first = sut.dispatch(source()).hook("a.flaky")
    second = sut.dispatch(source()).hook("a.flaky")
    assert first.status == "failed" and second.status == "proposed" and first.dispatch_id == second.dispatch_id
    assert len(sut.journal_records()) == 1


def test_a_failed_hook_does_not_use_up_another_hooks_slot(sut: ReferenceSUT) -> None:
    calls = Calls()
    sut.set_profile(ON.with_(max_intents_per_dispatch=1))
    install(sut, "a.flaky", calls, lambda i: 1 / 0)
    install(sut, "b.reporter", calls)
    install(sut, "c.reporter", calls)
    out = sut.dispatch(source())
    assert out.hook("b.reporter").status == "proposed"
    assert out.hook("c.reporter").failure_code == codes.DISPATCH_BUDGET_EXHAUSTED


def test_hook_ceiling_per_dispatch(sut: ReferenceSUT) -> None:
    calls = Calls()
    sut.set_profile(ON.with_(max_hooks_per_dispatch=1))
    install(sut, "a.one", calls)
    install(sut, "b.two", calls)
    out = sut.dispatch(source())
    assert out.hook("b.two").failure_code == codes.DISPATCH_BUDGET_EXHAUSTED and calls.order == ["a.one"]


def test_duplicate_and_invalid_registrations_are_rejected_before_any_call(sut: ReferenceSUT) -> None:
    calls = Calls()
    install(sut, "a.reporter", calls)
    dup = sut.install(registration("a.reporter"), producer(calls))
    bad = sut.install(registration("b.bad", budget={"timeout_ms": 10**6}), producer(calls))
    assert [r.path for r in dup] == ["$.hook_id"] and [r.path for r in bad] == ["$.budget.timeout_ms"]
    assert calls.count == 0
    sut.dispatch(source())
    assert calls.order == ["a.reporter"]


def test_private_value_in_source_is_a_boundary_rejection(sut: ReferenceSUT) -> None:
    calls = Calls()
    install(sut, "a.reporter", calls)
    out = sut.dispatch(source(todo_id="/home/alice/todo.md"))
    assert out.hook("a.reporter").failure_code == codes.INPUT_BOUNDARY_REJECTED and calls.count == 0
    assert "alice" not in repr(sut.journal_records())


def test_prose_in_source_identity_cannot_be_proven_public(sut: ReferenceSUT) -> None:
    calls = Calls()
    install(sut, "a.reporter", calls)
    out = sut.dispatch(source(goal_id="Fix the login bug for the customer"))
    assert out.hook("a.reporter").failure_code == codes.INPUT_BOUNDARY_REJECTED and calls.count == 0


def test_result_carrying_private_data_is_rejected(sut: ReferenceSUT) -> None:
    install(sut, "a.leaky", Calls(), lambda i: proposed(intent_for(i, {"note_ref": "n", "detail": "mail bob@corp.com"})))
    out = sut.dispatch(source()).hook("a.leaky")
    assert out.failure_code == codes.RESULT_CONTRACT_REJECTED and "bob" not in repr(sut.journal_records())


@pytest.mark.parametrize("point", _crash.SIDECAR_CRASH_POINTS)
def test_crash_then_restart_converges_to_one_record_per_hook(sut: ReferenceSUT, point: str) -> None:
    calls = Calls()
    install(sut, "a.reporter", calls)
    install(sut, "b.reporter", calls)
    sut.arm_crash(point)
    with pytest.raises(SimulatedCrash):
        sut.dispatch(source())
    before = calls.count
    assert before <= 2
    sut.restart()
    out = sut.dispatch(source())
    assert [h.status for h in out.hooks] == ["proposed", "proposed"]
    records = sut.journal_records()
    assert len(records) == 2 and {r["dispatch_id"] for r in records} == {h.dispatch_id for h in out.hooks}
    assert calls.count - before == CALLS_IN_RECOVERY[point]


# Provider calls made by the recovery: what was recorded is never called again, what was not is.
# (Before the crash, the worker may already have run both providers of the batch.)
CALLS_IN_RECOVERY = {
    _crash.DISPATCH_BEFORE_CHECKPOINT: 2,
    _crash.DISPATCH_AFTER_PROVIDER: 2,  # the first provider returned, then the process died
    _crash.JOURNAL_INSIDE_RECORD: 2,  # the transaction never committed
    _crash.JOURNAL_AFTER_RECORD: 0,  # both recorded: recovery replays them
}


def test_journal_write_failure_is_reported_not_raised(sut: ReferenceSUT) -> None:
    from pwh import JournalError

    install(sut, "a.reporter", Calls())

    def broken(receipts: Any) -> Any:
        raise JournalError(codes.JOURNAL_WRITE_FAILED, "disk full")

    sut.dispatcher.journal.commit = broken  # type: ignore[method-assign]
    out = sut.dispatch(source())
    assert out.journal_error == codes.JOURNAL_WRITE_FAILED and out.admitted
    assert [h.recorded for h in out.hooks] == [False]  # nothing reached the journal


def test_an_outcome_says_recorded_only_once_the_journal_holds_it(sut: ReferenceSUT) -> None:
    install(sut, "a.reporter", Calls())
    install(sut, "b.reporter", Calls(), behave=lambda hook_input: None)  # fails: its failure is recorded too
    first = sut.dispatch(source())
    assert [(h.status, h.recorded, h.replayed) for h in first.hooks] == [("proposed", True, False), ("failed", True, False)]
    again = sut.dispatch(source())
    assert [(h.recorded, h.replayed) for h in again.hooks][0] == (True, True)


def test_source_that_is_not_committed_dispatches_nothing(sut: ReferenceSUT) -> None:
    calls = Calls()
    install(sut, "a.reporter", calls)
    for change in ({"step_status": "prepared"}, {"durable_checkpoint": False}, {"plan_effect_id": "effect_x"}):
        out = sut.dispatch(source(**change))
        assert not out.admitted
    out = sut.dispatch({"not": "a receipt"})
    assert not out.admitted and out.code == codes.SOURCE_REJECTED
    assert calls.count == 0 and sut.journal_records() == []


def test_new_source_receipt_gives_new_identity(sut: ReferenceSUT) -> None:
    install(sut, "a.reporter", Calls())
    a = sut.dispatch(source(1)).hook("a.reporter").dispatch_id
    b = sut.dispatch(source(2)).hook("a.reporter").dispatch_id
    assert a != b and len(sut.journal_records()) == 2


def test_recorded_intents_keep_their_slots_when_a_hook_is_installed_later(sut: ReferenceSUT) -> None:
    # Found by the stateful model: ceiling 1; b records one intent; a is installed afterwards;
    # a recovery must not take the receipt to two intents.
    calls = Calls()
    sut.set_profile(ON.with_(max_intents_per_dispatch=1))
    install(sut, "b.bravo", calls)
    assert sut.dispatch(source()).hook("b.bravo").status == "proposed"
    install(sut, "a.alpha", calls)
    again = sut.dispatch(source())
    assert again.hook("a.alpha").failure_code == codes.DISPATCH_BUDGET_EXHAUSTED
    assert again.hook("b.bravo").replayed
    assert sum(len(r["intents"]) for r in sut.journal_records()) == 1


def test_a_valid_answer_in_python_shapes_is_judged_as_the_json_it_stands_for(sut: ReferenceSUT) -> None:
    # Tuples for arrays are not JSON, so the one-pass check leaves them to the full checks,
    # which copy them as arrays and accept; the journal holds plain JSON.
    def tuples(i: Mapping[str, Any]) -> Any:
        one = dict(intent_for(i))
        one["requested_write_scope"] = ()
        return {**proposed(), "intents": (one,)}

    install(sut, "a.reporter", Calls(), tuples)
    out = sut.dispatch(source()).hook("a.reporter")
    assert out.status == "proposed" and len(out.intents) == 1
    assert type(sut.journal_records()[0]["intents"]) is list


def test_a_batch_is_answered_in_full_before_any_answer_is_judged() -> None:
    # Judging between two answers kept the worker waiting for each hand-over (the bench's 8-hook
    # dispatch against its skeleton): every answer of a runner batch is collected first, then the
    # answers are judged, in hook order, so the first hook still takes the one intent slot.
    events: list[str] = []

    class Recording(ThreadRunner):
        def start(self, calls):  # type: ignore[no-untyped-def]
            batch = super().start(calls)
            collect = batch.next_verdict

            def next_verdict():  # type: ignore[no-untyped-def]
                events.append("answer")
                return collect()

            batch.next_verdict = next_verdict  # type: ignore[method-assign]
            return batch

    class Judging(Dispatcher):
        def _finish_hook(self, pending, verdict, tally):  # type: ignore[no-untyped-def]
            events.append("judge " + pending.hook.hook_id)
            return super()._finish_hook(pending, verdict, tally)

    class Judged(ReferenceSUT):
        dispatcher_class = Judging

    sut = Judged(journal="memory", runner=Recording())
    try:
        sut.register_intent_kind(GENERIC_INTENT_KIND, GENERIC_PAYLOAD_SCHEMA)
        sut.set_profile(ON.with_(max_intents_per_dispatch=1))
        for hook_id in ("c.three", "a.one", "b.two"):
            install(sut, hook_id, Calls())
        out = sut.dispatch(source())
    finally:
        sut.close()
    assert events == ["answer"] * 3 + ["judge a.one", "judge b.two", "judge c.three"]
    assert out.hook("a.one").status == "proposed"
    assert out.hook("b.two").failure_code == out.hook("c.three").failure_code == codes.DISPATCH_BUDGET_EXHAUSTED
