"""The thread runner: one hand-off per dispatch, yet every call keeps its own real limit (the
process runner, the default, is held by tests/core/test_isolation.py)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from pwh._core.runner import RAISED, RETURNED, TIMED_OUT
from pwh._core.runner import ThreadRunner as ProducerRunner


@pytest.fixture
def runner() -> Any:
    r = ProducerRunner()
    yield r
    r.close()


def _sleeper(seconds: float, log: list[str], name: str) -> Any:
    def producer(_: Any) -> str:
        log.append(name)
        time.sleep(seconds)
        return name

    return producer


def test_calls_run_in_order_and_answer_in_order(runner: ProducerRunner) -> None:
    log: list[str] = []
    batch = runner.start([(_sleeper(0, log, n), None, 1000) for n in "abcd"])
    verdicts = [batch.next_verdict() for _ in range(4)]
    batch.close()
    assert log == list("abcd")
    assert [(v.kind, v.value) for v in verdicts] == [(RETURNED, n) for n in "abcd"]


def test_each_limit_counts_from_that_producers_own_start(runner: ProducerRunner) -> None:
    # Counted from the batch's start, the second call (which returns at once) would overrun its
    # 1.5 s behind the first call's 2 s; counted from its own start it has 1.5 s to return a value,
    # which a loaded machine still manages. The first call's limit (30 s) is a hang guard.
    log: list[str] = []
    batch = runner.start([(_sleeper(2.0, log, "a"), None, 30000), (_sleeper(0, log, "b"), None, 1500)])
    assert batch.next_verdict().kind == RETURNED
    assert batch.next_verdict().kind == RETURNED
    batch.close()


def test_a_hung_call_times_out_and_the_rest_run_on_a_fresh_worker(runner: ProducerRunner) -> None:
    release = threading.Event()
    log: list[str] = []

    def hangs(_: Any) -> str:
        log.append("hung")
        release.wait(60)
        return "late"

    try:
        batch = runner.start([(_sleeper(0, log, "a"), None, 1000), (hangs, None, 100), (_sleeper(0, log, "c"), None, 1000)])
        first = batch.next_verdict()
        started = time.monotonic()
        second = batch.next_verdict()
        waited = time.monotonic() - started
        third = batch.next_verdict()
        batch.close()
        assert (first.kind, second.kind, third.kind) == (RETURNED, TIMED_OUT, RETURNED)
        assert third.value == "c" and log == ["a", "hung", "c"]
        assert waited < 20  # bounded by the limit (generous: a loaded machine), never by the hung producer (60 s)
        assert runner.abandoned == 1
    finally:
        release.set()


def test_a_late_answer_is_never_taken(runner: ProducerRunner) -> None:
    release = threading.Event()

    def late(_: Any) -> str:
        release.wait(5)
        return "late"

    try:
        batch = runner.start([(late, None, 50)])
        assert batch.next_verdict().kind == TIMED_OUT
        release.set()
        time.sleep(0.05)
        assert batch._slots[0].verdict is None
    finally:
        release.set()


def test_closing_mid_batch_starts_nothing_more(runner: ProducerRunner) -> None:
    gate = threading.Event()
    log: list[str] = []

    def first(_: Any) -> str:
        log.append("a")
        return "a"

    def second(_: Any) -> str:
        log.append("b")
        gate.wait(5)
        return "b"

    batch = runner.start([(first, None, 1000), (second, None, 1000), (_sleeper(0, log, "c"), None, 1000)])
    assert batch.next_verdict().kind == RETURNED
    threading.Timer(0.05, gate.set).start()
    batch.close()  # 'b' may already run: it is waited for; 'c' must never start
    time.sleep(0.1)
    assert "c" not in log


def test_raising_producers_stay_on_the_worker(runner: ProducerRunner) -> None:
    def boom(_: Any) -> None:
        raise SystemExit(3)

    batch = runner.start([(boom, None, 1000), (lambda _: 1, None, 1000)])
    assert [batch.next_verdict().kind, batch.next_verdict().kind] == [RAISED, RETURNED]
    batch.close()


def test_an_empty_batch_starts_no_worker(runner: ProducerRunner) -> None:
    runner.start([]).close()
    assert runner._worker is None
