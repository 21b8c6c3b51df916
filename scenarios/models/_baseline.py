"""The no-hooks twin: the same action script on an orchestrator whose SUT has no hooks at all.

After every step the primary store of the hooked run must equal the twin's byte for byte (M07:
primary receipt and spend eligibility unchanged). Crashes keep the comparison meaningful by
crashing the twin at the *primary* moment the hooked run died: a primary point is the same
point; a sidecar point dies inside the dispatch, i.e. after the writeback committed and before
the spend, which for a twin whose dispatch does nothing is ``primary.after_dispatch``.
"""

from __future__ import annotations

from pathlib import Path

from fakes._baseline import NoHooksSUT
from fakes._orchestrator import (
    PRIMARY_AFTER_DISPATCH,
    PRIMARY_CRASH_POINTS,
    FakeOrchestrator,
)
from pwh import SimulatedCrash


def twin_point(point: str) -> str:
    """The primary crash point a no-hooks run dies at when the hooked run dies at ``point``."""
    return point if point in PRIMARY_CRASH_POINTS else PRIMARY_AFTER_DISPATCH


class NoHooksTwin:
    """Follows the model's steps on the primary side only."""

    def __init__(self, workdir: Path, *, seed: int, segment_size: int) -> None:
        self.orch = FakeOrchestrator(NoHooksSUT(), workdir, seed=seed, segment_size=segment_size)

    def turn(self, action: str) -> None:
        getattr(self.orch, action)()

    def replay(self, n: int) -> None:
        receipts = self.orch.receipts()
        if 1 <= n <= len(receipts):
            self.orch.replay(receipts[n - 1]["turn_instance_id"])

    def crash(self, point: str, action: str) -> bool:
        """Run ``action`` dying at the twin of ``point``; ``False`` if it did not die."""
        self.orch.arm_crash(twin_point(point))
        try:
            self.turn(action)
        except SimulatedCrash:
            return True
        return False

    def restart(self) -> None:
        self.orch.restart()

    def snapshot(self) -> bytes:
        return self.orch.primary_snapshot()

    def close(self) -> None:
        self.orch.close()
