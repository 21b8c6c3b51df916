"""The gate's one error ("the gate could not run"), where the gate and its preflight both find it."""

from __future__ import annotations

__all__ = ["GateError"]


class GateError(Exception):
    """The gate could not run (not: the SUT failed). Exit code 2."""
