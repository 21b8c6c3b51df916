"""Named crash points: places where a test can make the process 'die' and then recover.

A simulated crash is a ``BaseException`` so no ``except Exception`` on the way out can swallow
it, the way nothing survives a real SIGKILL. The stateful models use the same names to kill a
child process for real.
"""

from __future__ import annotations

DISPATCH_BEFORE_CHECKPOINT = "sidecar.before_checkpoint"
DISPATCH_AFTER_PROVIDER = "sidecar.after_provider_returned"
JOURNAL_INSIDE_RECORD = "sidecar.inside_record_transaction"
JOURNAL_AFTER_RECORD = "sidecar.after_record"

SIDECAR_CRASH_POINTS: tuple[str, ...] = (
    DISPATCH_BEFORE_CHECKPOINT,
    DISPATCH_AFTER_PROVIDER,
    JOURNAL_INSIDE_RECORD,
    JOURNAL_AFTER_RECORD,
)


class SimulatedCrash(BaseException):
    """The process died at ``point``; only durable storage survives."""

    def __init__(self, point: str) -> None:
        super().__init__(point)
        self.point = point


class CrashPlan:
    """Which crash points are armed. Each armed point fires once, then disarms."""

    def __init__(self, known: tuple[str, ...] = SIDECAR_CRASH_POINTS) -> None:
        self.known = known
        self._armed: set[str] = set()
        self.fired: list[str] = []
        self._hook = None

    def arm(self, point: str) -> None:
        if point not in self.known:
            raise KeyError(f"unknown crash point {point!r}")
        self._armed.add(point)

    def on_hit(self, hook) -> None:
        """Replace the default raise with ``hook(point)`` (a real-crash child calls os.kill)."""
        self._hook = hook

    def hit(self, point: str) -> None:
        if point in self._armed:
            self._armed.discard(point)
            self.fired.append(point)
            if self._hook is not None:
                self._hook(point)
            raise SimulatedCrash(point)

    @property
    def armed(self) -> frozenset[str]:
        return frozenset(self._armed)
