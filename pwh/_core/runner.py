"""Run provider calls under real wall-clock limits: the thread runner, and the choice of runner.

The reference's default is the process runner (:mod:`pwh._core.process_runner`): only a process
boundary holds against a provider that holds the interpreter lock, exits, forks, signals or
changes directory. This thread runner stays for hosts without ``fork`` and for embedding a
provider that must share the host's live objects (``PWH_RUNNER=thread`` or
``Dispatcher(runner=ThreadRunner())``); it holds a pure-Python provider to its limit and no more.

Producers run on a worker thread; the dispatcher waits for each at most its own ``timeout_ms``,
counted from the moment that producer started. A dispatch hands the worker all its calls at once
(a :class:`Batch`): the worker runs them one after another, in order, while the dispatcher checks
each answer as it lands. One thread hand-off per dispatch instead of one per hook is most of what
a cheap hook costs.

A producer that has not returned in time is abandoned: its answer slot is sealed so a late return
is dropped, the worker stops before starting anything else of the batch and is retired (it may be
stuck forever), an asynchronous exception is sent to stop a pure-Python busy loop, and the rest of
the batch moves to a fresh worker. Exceptions of any kind, ``SystemExit`` and
``KeyboardInterrupt`` included, stay on the worker and come back as a plain 'raised' verdict:
they are the producer's failure, not the host's. A copy of the host that a provider forks exits
as it returns from the provider (it would otherwise wait on the worker's queue forever); what else
a provider starts, changes or signals reaches the host, which is what the process runner is for.
"""

from __future__ import annotations

import ctypes
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

RETURNED = "returned"
RAISED = "raised"
TIMED_OUT = "timed_out"

# (producer, argument, timeout_ms[, max_result_bytes]): the byte budget the answer will be judged
# by, which the process runner needs to send a value past it as data of bounded size.
Call = tuple[Any, ...]


class ProducerAbandoned(BaseException):
    """Sent into a worker whose producer overran its limit."""


@dataclass(frozen=True)
class CallVerdict:
    kind: str
    value: Any = None


class _Slot:
    """One call's answer box. ``done`` is a raw lock held until the answer lands: waiting on it
    with a timeout is the cheapest hand-off between two threads CPython offers. ``started`` is
    the worker's clock reading when the producer began; the limit counts from there."""

    __slots__ = ("argument", "done", "producer", "sealed", "started", "timeout", "verdict")

    def __init__(self, producer: Callable[[Any], Any], argument: Any, timeout_ms: int) -> None:
        self.producer = producer
        self.argument = argument
        self.timeout = timeout_ms / 1000.0
        self.done = threading.Lock()
        self.done.acquire()
        self.verdict: CallVerdict | None = None
        self.sealed = False
        self.started: float | None = None


class _Run:
    """The part of a batch one worker is given. ``lock`` orders the worker's claims and answers
    against the dispatcher's seal and stop: once ``stop_at`` is set, no later slot starts here."""

    __slots__ = ("lock", "slots", "stop_at")

    def __init__(self, slots: list[_Slot]) -> None:
        self.slots = slots
        self.lock = threading.Lock()
        self.stop_at = len(slots)


class _Worker:
    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[_Run | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="pwh-producer", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        host = os.getpid()
        while True:
            try:
                run = self.jobs.get()
                if run is None:
                    return
                index = 0
                while True:
                    slot = run.slots[index]
                    try:
                        verdict = CallVerdict(RETURNED, slot.producer(slot.argument))
                    except ProducerAbandoned:
                        return
                    except BaseException:
                        verdict = CallVerdict(RAISED)
                    if os.getpid() != host:
                        # A copy of the host the provider forked, returning from it: its only
                        # thread is this one, which would wait for work forever. It never answers.
                        os._exit(0)
                    with run.lock:
                        if not slot.sealed:  # sealed: the dispatcher gave up; a late answer is never recorded
                            slot.verdict = verdict
                        index += 1
                        more = index < run.stop_at
                        if more:
                            # The next call starts now: its clock is set before this answer is
                            # released, so the dispatcher always finds it set when it gets there.
                            run.slots[index].started = time.monotonic()
                        slot.done.release()
                    if not more:
                        break
            except ProducerAbandoned:
                return


class Batch:
    """The calls of one dispatch, answered in order by :meth:`next_verdict`."""

    def __init__(self, runner: ThreadRunner, calls: Sequence[Call]) -> None:
        self._runner = runner
        self._slots = [_Slot(c[0], c[1], c[2]) for c in calls]
        self._runs: list[tuple[_Run, int, _Worker]] = []  # (run, first slot index, its worker)
        self._next = 0
        if self._slots:
            self._hand_over(0)

    def next_verdict(self) -> CallVerdict:
        """The verdict of the next call, in the order the calls were given."""
        index = self._next
        self._next += 1
        slot = self._slots[index]
        run, first, worker = self._runs[-1]
        if _wait(slot):
            return slot.verdict  # type: ignore[return-value]
        with run.lock:
            if slot.verdict is not None:  # landed between the wait and the seal: it counts
                return slot.verdict
            slot.sealed = True
            run.stop_at = index - first + 1  # nothing after it starts on this worker
        self._runner._retire(worker)
        if index + 1 < len(self._slots):
            self._hand_over(index + 1)
        return CallVerdict(TIMED_OUT)

    def close(self) -> None:
        """Start nothing more of this batch (a crash or error mid-dispatch); every producer the
        worker already started is waited for up to its own limit, so none outlives the dispatch
        that called it. The worker may be several calls ahead of the answers collected (fast
        producers): each call it claimed has its ``started`` set, under the lock this takes."""
        if not self._runs:
            return
        run, first, _worker = self._runs[-1]
        with run.lock:
            uncollected = self._next - first
            run.stop_at = min(run.stop_at, uncollected + 1)
            claimed = [slot for slot in run.slots[uncollected:] if slot.started is not None]
        for slot in claimed:
            _wait(slot)

    def _hand_over(self, index: int) -> None:
        worker = self._runner._live_worker()
        run = _Run(self._slots[index:])
        self._runs.append((run, index, worker))
        self._slots[index].started = time.monotonic()
        worker.jobs.put(run)


def _wait(slot: _Slot) -> bool:
    """Wait for the slot's answer until its own deadline; True when it landed in time."""
    remaining = slot.started + slot.timeout - time.monotonic()  # type: ignore[operator]
    if remaining > 0 and slot.done.acquire(timeout=remaining):
        slot.done.release()
        return True
    return False


class ThreadRunner:
    """Calls producers on a reusable worker thread, replacing it when one hangs."""

    def __init__(self) -> None:
        self._worker: _Worker | None = None
        self.abandoned = 0

    def wake(self) -> None:
        """Nothing to do: a thread worker wakes as fast as it is handed a call."""

    def start(self, calls: Sequence[Call]) -> Batch:
        """Hand every call to the worker now; collect the verdicts with :meth:`Batch.next_verdict`."""
        return Batch(self, calls)

    def _live_worker(self) -> _Worker:
        if self._worker is None or not self._worker.thread.is_alive():
            self._worker = _Worker()
        return self._worker

    def _retire(self, worker: _Worker) -> None:
        self._worker = None
        self.abandoned += 1
        worker.jobs.put(None)  # a producer that survives the stop signal and returns late: the worker then ends
        ident = worker.thread.ident
        # Under a tracer or profiler (coverage, a debugger), CPython 3.11 stalls the *calling*
        # thread while an async exception is pending for a thread blocked in C, until that thread
        # wakes: the timeout would silently stretch. There, the worker is only abandoned.
        if ident is not None and sys.gettrace() is None and sys.getprofile() is None:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(ProducerAbandoned))

    def close(self) -> None:
        if self._worker is not None:
            self._worker.jobs.put(None)
            self._worker = None


ProducerRunner = ThreadRunner  # the name this runner had when it was the only one
