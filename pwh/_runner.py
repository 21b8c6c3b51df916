"""Run one provider call under a real wall-clock limit.

A producer runs on a worker thread; the dispatcher waits at most ``timeout_ms``. A producer that
has not returned by then is abandoned: its slot is sealed so a late return is dropped, the worker
is retired (it may be stuck forever), and an asynchronous exception is sent to stop a pure-Python
busy loop. Exceptions of any kind, ``SystemExit`` and ``KeyboardInterrupt`` included, stay on the
worker and come back as a plain 'raised' verdict: they are the producer's failure, not the host's.
"""

from __future__ import annotations

import ctypes
import queue
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

RETURNED = "returned"
RAISED = "raised"
TIMED_OUT = "timed_out"


class ProducerAbandoned(BaseException):
    """Sent into a worker whose producer overran its limit."""


@dataclass(frozen=True)
class CallVerdict:
    kind: str
    value: Any = None


class _Slot:
    """One call's answer box. ``done`` is a raw lock held until the answer lands: waiting on it
    with a timeout is the cheapest hand-off between two threads CPython offers."""

    __slots__ = ("done", "lock", "verdict", "sealed")

    def __init__(self) -> None:
        self.done = threading.Lock()
        self.done.acquire()
        self.lock = threading.Lock()
        self.verdict: CallVerdict | None = None
        self.sealed = False

    def wait(self, seconds: float) -> None:
        if self.done.acquire(timeout=seconds):
            self.done.release()

    def settle(self, verdict: CallVerdict) -> None:
        with self.lock:
            if self.sealed:
                return  # the dispatcher gave up on this call: a late answer is never recorded
            self.verdict = verdict
            self.done.release()

    def seal(self) -> CallVerdict | None:
        with self.lock:
            self.sealed = True
            return self.verdict


class _Worker:
    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[tuple[Callable[[Any], Any], Any, _Slot] | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="pwh-producer", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            try:
                job = self.jobs.get()
                if job is None:
                    return
                producer, argument, slot = job
                try:
                    value = producer(argument)
                except ProducerAbandoned:
                    return
                except BaseException:  # noqa: BLE001 - isolating the producer is the point
                    slot.settle(CallVerdict(RAISED))
                    continue
                slot.settle(CallVerdict(RETURNED, value))
            except ProducerAbandoned:
                return


class ProducerRunner:
    """Calls producers one at a time on a reusable worker, replacing it when one hangs."""

    def __init__(self) -> None:
        self._worker: _Worker | None = None
        self.abandoned = 0

    def call(self, producer: Callable[[Any], Any], argument: Any, timeout_ms: int) -> CallVerdict:
        if self._worker is None or not self._worker.thread.is_alive():
            self._worker = _Worker()
        slot = _Slot()
        worker = self._worker
        worker.jobs.put((producer, argument, slot))
        slot.wait(timeout_ms / 1000.0)
        verdict = slot.seal()  # an answer that landed between the wait and the seal still counts
        if verdict is not None:
            return verdict
        self._retire(worker)
        return CallVerdict(TIMED_OUT)

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
