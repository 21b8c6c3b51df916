"""LoopX 2.1.1 through its real command paths (``todo complete``, ``refresh-state``, ``turn run-once``), as a writeback boundary."""

from pwh._suts.loopx.writeback.boundary import LoopxWritebackBoundary

__all__ = ["LoopxWritebackBoundary"]
