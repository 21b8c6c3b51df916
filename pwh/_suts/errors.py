"""The two ways an adapter says it cannot be judged as asked, apart from the seam that raises them
so that every transport (in-process, stdio) can raise them without importing the seam."""

from __future__ import annotations

__all__ = ["SUTLoadError", "Unsupported"]


class Unsupported(Exception):
    """The implementation under test cannot express this case; ``reason`` says what is missing.

    Raised from any seam method (a fault or crash point it cannot place, an intent kind its
    catalog cannot hold, a profile it has no switch for), it ends that scenario as *skipped*, "not
    applicable to this SUT", with the reason in every report: never a pass, never a failure. A
    row with a skipped scenario is not passed, so the verdict is then ``incomplete``, not ``pass``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SUTLoadError(Exception):
    """``--sut`` named something that is not an adapter."""
