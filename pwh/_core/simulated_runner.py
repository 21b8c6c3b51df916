"""Run provider calls in virtual time: the runner of the models' simulation mode.

A real runner (:mod:`pwh._core.process_runner`, :mod:`pwh._core.runner`) waits out a hung
provider's wall-clock limit, so a search that meets many hung hooks spends most of its time
waiting, and what it sees depends on how loaded the machine is. This runner calls each producer
in this process, on this thread, when its verdict is asked for, against a :class:`VirtualClock`
that moves only when a provider says it waits (a simulated provider sleeps through the clock,
e.g. the testbed's release latch). A provider that would wait past its limit is stopped the
moment the clock reaches it (:class:`VirtualTimeout`) and the clock stands at the limit; one
whose answer lands after its limit is timed out and the answer dropped, as a real runner does.

Nothing here reads the wall clock or starts a thread, so a run that draws its choices from one
seed makes the same calls in the same order, and the same verdicts, every time, on any machine
under any load: the determinism the models' simulation mode promises. It is the
FoundationDB/TigerBeetle way of testing: search in simulation, confirm what it finds in real mode
(processes, real limits, SIGKILL).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pwh._core.runner import RAISED, RETURNED, TIMED_OUT, Call, CallVerdict

__all__ = ["IDLE_WAIT_CAP_MS", "SimulatedRunner", "VirtualClock", "VirtualTimeout"]

# How far the clock may move for a wait outside any provider call (a latch polled by code that is
# not a simulated provider): far enough to be a hang by any registration's limit, never forever.
IDLE_WAIT_CAP_MS = 60_000.0


class VirtualTimeout(BaseException):
    """Raised inside a simulated provider whose wait reached its limit: it is stopped there.

    A ``BaseException`` so that a provider's ``except Exception`` does not swallow it; one that
    swallows it anyway and answers is still timed out (its clock stands past the limit)."""


class VirtualClock:
    """Simulated milliseconds, moved only by :meth:`sleep` and :meth:`tick`.

    ``deadline`` is the running provider's limit on this clock (``None`` between calls)."""

    __slots__ = ("deadline", "now_ms")

    def __init__(self) -> None:
        self.now_ms = 0.0
        self.deadline: float | None = None

    def now(self) -> float:
        """The time in seconds, for code that measures elapsed time the way ``time.monotonic`` does."""
        return self.now_ms / 1000.0

    def sleep(self, ms: float) -> None:
        """Wait ``ms``: up to the running provider's limit, where it is stopped."""
        target = self.now_ms + max(0.0, ms)
        limit = self.deadline if self.deadline is not None else self.now_ms + IDLE_WAIT_CAP_MS
        if target >= limit:
            self.now_ms = limit
            raise VirtualTimeout
        self.now_ms = target

    def tick(self) -> None:
        """One millisecond of a busy loop (which would spin until stopped)."""
        self.sleep(1.0)


class _SimulatedBatch:
    """The calls of one dispatch, each run when its verdict is asked for, in the order given."""

    def __init__(self, clock: VirtualClock, calls: Sequence[Call]) -> None:
        self._clock = clock
        self._calls = list(calls)
        self._next = 0

    def next_verdict(self) -> CallVerdict:
        producer, argument, timeout_ms = self._calls[self._next][:3]
        self._next += 1
        clock = self._clock
        started = clock.now_ms
        clock.deadline = started + timeout_ms
        try:
            value = producer(argument)
        except VirtualTimeout:
            return CallVerdict(TIMED_OUT)
        except BaseException:  # a provider's failure of any kind is its own, never the host's
            if clock.now_ms >= clock.deadline:
                return CallVerdict(TIMED_OUT)
            return CallVerdict(RAISED)
        finally:
            clock.deadline = None
        if clock.now_ms - started >= timeout_ms:  # it answered, but after its limit: dropped
            return CallVerdict(TIMED_OUT)
        return CallVerdict(RETURNED, value)

    def close(self) -> None:
        """Nothing runs ahead of the verdicts asked for, so nothing is left to stop."""


class SimulatedRunner:
    """Calls producers in this process against a :class:`VirtualClock` (see the module's text)."""

    copies_input = False  # the dispatcher freezes each input, as for the thread runner

    def __init__(self, clock: VirtualClock | None = None) -> None:
        self.clock = clock if clock is not None else VirtualClock()
        self.abandoned = 0

    def wake(self) -> None:
        """Nothing to wake."""

    def start(self, calls: Sequence[Call]) -> Any:
        return _SimulatedBatch(self.clock, calls)

    def close(self) -> None:
        """Nothing to stop; the runner outlives a dispatcher's restart (one clock per run)."""
