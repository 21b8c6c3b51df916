"""The models' simulation mode: virtual time, seeded histories, byte-identical replays, and a
finding confirmed in real mode before it is reported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pwh._campaigns.models.catalog import HANG, SOAK_WEIGHTS
from pwh._campaigns.models.simulation import confirm_in_real_mode, example_seed, run_simulation
from pwh._campaigns.models.system import ModelSystem, Stats
from pwh._core.runner import RAISED, RETURNED, TIMED_OUT
from pwh._core.simulated_runner import SimulatedRunner, VirtualClock, VirtualTimeout
from pwh._suts.reference import ReferenceSUT

ROOT = Path(__file__).resolve().parents[2]
SETUP = {"op": "setup", "ceiling": None, "segment": 3}
HANGS = {"proposes one intent": 2, "raises an error": 1, HANG: 2}


def _transcript(
    sut: str, seed: int, *, examples: int = 6, steps: int = 15, weights: dict[str, int] | None = None, swarm: bool = False
) -> tuple[bytes, dict]:
    lines: list[bytes] = []
    run = run_simulation(sut, seed=seed, max_examples=examples, steps=steps, weights=weights or SOAK_WEIGHTS, swarm=swarm, transcript=lines)
    trace = json.dumps(run.trace, sort_keys=True) if run.trace is not None else ""
    return b"\n".join(lines), {"trace": trace, "steps": run.stats.steps, "timed_out": run.stats.hooks_timed_out}


# -- the virtual-time runner --------------------------------------------------------------------


def test_a_hung_provider_is_stopped_at_its_limit_with_no_real_wait() -> None:
    clock = VirtualClock()
    runner = SimulatedRunner(clock)

    def hangs(_: object) -> str:
        try:
            clock.sleep(60_000)
        except BaseException:  # a provider that swallows the stop is stopped again at its next wait
            clock.sleep(60_000)
        return "late"

    def swallows(_: object) -> str:
        try:
            clock.sleep(60_000)
        except VirtualTimeout:
            pass
        return "late anyway"

    def pauses(_: object) -> str:
        clock.sleep(100)
        return "on time"

    def raises(_: object) -> str:
        raise RuntimeError("boom")

    batch = runner.start([(hangs, None, 200), (swallows, None, 300), (pauses, None, 5000), (raises, None, 500)])
    assert batch.next_verdict().kind == TIMED_OUT
    assert clock.now_ms == 200  # stopped the moment the clock reached its limit
    assert batch.next_verdict().kind == TIMED_OUT  # its late answer is dropped
    assert clock.now_ms == 500
    answered = batch.next_verdict()
    assert (answered.kind, answered.value, clock.now_ms) == (RETURNED, "on time", 600)
    assert batch.next_verdict().kind == RAISED
    assert clock.deadline is None  # between calls, no limit stands


def test_simulation_mode_times_out_hung_hooks_on_the_virtual_clock() -> None:
    system = ModelSystem("reference-memory", simulated=True)
    try:
        assert system.simulated
        system.apply(SETUP)
        system.apply({"op": "install", "hook": "a.alpha", "behaviour": HANG})
        record = system.apply({"op": "turn", "action": "complete_todo"})
        (episode,) = record.episodes
        assert episode.outcome is not None and episode.outcome.hook("a.alpha").failure_code == "producer_timed_out"
        assert episode.elapsed_ms == 200.0  # exactly the registered limit, measured on the virtual clock
    finally:
        system.close()


def takes_no_runner() -> ReferenceSUT:
    """An adapter whose factory takes no options (no runner): it keeps its own runner."""
    return ReferenceSUT(journal="memory")


def test_a_sut_that_takes_no_runner_runs_in_real_time() -> None:
    system = ModelSystem("tests.campaigns.test_simulation:takes_no_runner", simulated=True)
    try:
        assert not system.simulated
    finally:
        system.close()


# -- one seed, one history ----------------------------------------------------------------------


def test_a_seed_replays_the_same_history_and_trace_byte_for_byte() -> None:
    first, facts = _transcript("reference-memory", 11, weights=HANGS)
    again, facts_again = _transcript("reference-memory", 11, weights=HANGS)
    assert first and first == again and facts == facts_again
    assert facts["timed_out"] > 0  # the histories met hung hooks, timed out in virtual time
    other, _ = _transcript("reference-memory", 12, weights=HANGS)
    assert other != first  # the transcript says what ran: another seed, another history

    found, trace = _transcript("mutant:replay_calls_provider", 2, examples=10, swarm=True)
    found_again, trace_again = _transcript("mutant:replay_calls_provider", 2, examples=10, swarm=True)
    assert trace["trace"] and trace == trace_again and found == found_again
    assert json.loads(trace["trace"])["simulated"] is True


def test_a_seed_replays_the_same_in_another_process() -> None:
    """Nothing a process keeps (ids, counters, hash seeds) reaches the history or the trace."""
    code = (
        "import sys, hashlib;"
        "from tests.campaigns.test_simulation import _transcript, HANGS;"
        "lines, facts = _transcript('reference-memory', 11, weights=HANGS);"
        "print(hashlib.sha256(lines + facts['trace'].encode()).hexdigest())"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, env={"PYTHONHASHSEED": str(n), "PATH": ""}
        ).stdout.strip()
        for n in (1, 2)
    }
    lines, facts = _transcript("reference-memory", 11, weights=HANGS)
    import hashlib

    assert digests == {hashlib.sha256(lines + facts["trace"].encode()).hexdigest()}


def test_each_example_has_its_own_seed() -> None:
    seeds = {example_seed(7, n) for n in range(100)} | {example_seed(8, n) for n in range(100)}
    assert len(seeds) == 200


# -- found in simulation, confirmed in real mode -------------------------------------------------


def test_a_simulated_finding_is_replayed_in_real_mode() -> None:
    run = run_simulation("mutant:replay_calls_provider", seed=2, max_examples=10, steps=15, weights=SOAK_WEIGHTS)
    assert run.trace is not None and run.trace["simulated"] is True
    confirmed = confirm_in_real_mode(run.trace)
    assert confirmed is not None and confirmed.invariant == run.trace["violation"]["invariant"]
    # the reference, given the same history, breaks nothing in real mode: a simulated "finding"
    # that real mode does not show again is not confirmed
    assert confirm_in_real_mode({**run.trace, "sut": "reference"}) is None


def test_a_soak_reports_only_what_real_mode_confirms(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pwh._campaigns import soak as soak_module

    monkeypatch.setenv("PWH_COUNTEREXAMPLES", str(tmp_path))
    quiet: list[str] = []
    summary = soak_module.soak(None, "mutant:replay_calls_provider", 4, examples=10, real_crashes=False, out=quiet.append)
    assert summary["simulation"] is True and summary["violations"] and not summary["simulation_only"]
    written = json.loads(Path(summary["counterexamples"][0]).read_text())
    assert written["simulated"] is True and written["confirmed_in_real_mode"] is True

    monkeypatch.setattr(soak_module, "confirm_in_real_mode", lambda trace: None)  # real mode never shows it again
    quiet.clear()
    summary = soak_module.soak(None, "mutant:replay_calls_provider", 4, examples=10, real_crashes=False, out=quiet.append)
    assert not summary["violations"] and not summary["counterexamples"]
    assert [(d["row"], d["invariant"]) for d in summary["simulation_only"]] == [("M05", "no_call_after_final")]
    assert any("found in simulation only" in line for line in quiet)


def test_the_simulation_engine_keeps_quiet_on_the_reference() -> None:
    stats = Stats()
    run = run_simulation("reference-memory", seed=5, max_examples=30, steps=20, weights=SOAK_WEIGHTS, swarm=True, stats=stats)
    assert run.violation is None, run.trace
    assert stats.steps >= 30 * 20 and stats.crashes_simulated > 0 and stats.restarts > 0


def test_real_mode_gets_more_than_one_replay_to_show_a_finding_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy machine can time out an ordinary provider in real mode and break another invariant
    first: the history is replayed again, and one replay showing the finding confirms it."""
    from pwh._campaigns.counterexamples import trace as trace_module
    from pwh._campaigns.models.invariants import Violation
    from pwh._campaigns.models.simulation import CONFIRM_ATTEMPTS

    answers = iter(
        [(3, Violation("isolated_failure", "M07", 2, "timed out")), (3, None), (3, Violation("no_call_after_final", "M05", 2, ""))]
    )
    monkeypatch.setattr(trace_module, "run_steps", lambda *a, **k: next(answers))
    found = {"sut": "reference", "steps": [SETUP], "violation": {"invariant": "no_call_after_final"}}
    assert CONFIRM_ATTEMPTS >= 3
    confirmed = confirm_in_real_mode(found)
    assert confirmed is not None and confirmed.invariant == "no_call_after_final"
    monkeypatch.setattr(trace_module, "run_steps", lambda *a, **k: (1, None))
    assert confirm_in_real_mode(found) is None


def test_a_stored_record_changed_underneath_is_still_caught_when_the_judge_keeps_bytes_by_record() -> None:
    """With pwh's in-memory journal the judge keeps each record's canonical bytes by the record
    object (ObservedSUT.records_shared): a row written again is a new object, so a final record
    rewritten in storage (here its attempt count, as a replay that rewrites would) is still seen
    changed at the next step, and the byte-identity invariant fails as it always did."""
    from pwh._campaigns.models.invariants import Judge
    from pwh._core.canonical import dumps_plain
    from pwh._core.journal import checksum

    system = ModelSystem("reference-memory", simulated=True)
    judge = Judge()
    try:
        steps = [SETUP, {"op": "install", "hook": "a.alpha", "behaviour": "proposes one intent"}, {"op": "turn", "action": "complete_todo"}]
        for step in steps:
            assert judge.check(system, system.apply(step)) is None, step
        assert system.sut.records_shared() and judge.record_bytes  # bytes kept by record
        store = system.sut.inner.dispatcher.journal.store
        ((did, (seq, blob, _sum)),) = store.rows.items()
        record = json.loads(blob)
        assert record["status"] == "proposed"
        rewritten = dumps_plain({**record, "attempts": record["attempts"] + 1})
        store.rows[did] = (seq, rewritten, checksum(rewritten))
        found = judge.check(system, system.apply({"op": "profile", "setting": "attempts", "value": 3}))
        assert found is not None and found.invariant == "record_byte_identical", found
    finally:
        system.close()


def test_an_intent_changed_underneath_reaches_the_scheduler_as_a_different_intent() -> None:
    """The scheduler takes an intent delivered again as the very same object from its first
    delivery (``consume(shared=True)``, with pwh's in-memory journal): a stored record whose
    intent is rewritten under the same intent_id is a new object, copied and fingerprinted again,
    so the scheduler still sees two different intents under one id."""
    from fakes._scheduler import DUPLICATE_CONTENT_DIFFERS
    from pwh._core.canonical import dumps_plain
    from pwh._core.journal import checksum

    system = ModelSystem("reference-memory", simulated=True)
    try:
        for step in [
            SETUP,
            {"op": "install", "hook": "a.alpha", "behaviour": "proposes one intent"},
            {"op": "turn", "action": "complete_todo"},
        ]:
            system.apply(step)
        system.apply({"op": "profile", "setting": "attempts", "value": 3})  # delivered again: the same object
        assert system.sut.records_shared() and system.scheduler.entries[-1].code is None
        store = system.sut.inner.dispatcher.journal.store
        ((did, (seq, blob, _sum)),) = store.rows.items()
        record = json.loads(blob)
        intent = record["intents"][0]
        rewritten = dumps_plain({**record, "intents": [{**intent, "payload": {**intent["payload"], "note": "rewritten"}}]})
        store.rows[did] = (seq, rewritten, checksum(rewritten))
        system.apply({"op": "profile", "setting": "attempts", "value": 2})
        last = system.scheduler.entries[-1]
        assert last.intent_id == intent["intent_id"] and last.code == DUPLICATE_CONTENT_DIFFERS, last
    finally:
        system.close()
