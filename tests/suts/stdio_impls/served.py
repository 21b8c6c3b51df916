"""Python adapters for ``python -m pwh._suts.stdio.serve tests.suts.stdio_impls.served:FACTORY``:
each pwh's reference dispatcher under a name of its own (so pwh's world never takes it for the
reference and never wires a writeback boundary of its own to it), differing only in the writeback
seam. ``renamed`` is still a :class:`ReferenceSUT`, so the served process wires pwh's fake
orchestrator to it as it does for the reference: its writeback scenarios can only pass through the
protocol's ``writeback_*`` requests. ``plain`` offers no writeback boundary (its handshake lists no
``writeback_open``); ``declining`` offers one and answers ``Unsupported`` when it is opened."""

from __future__ import annotations

from typing import Any

from pwh._suts.reference import ReferenceSUT
from pwh._suts.seam import Unsupported


class _Renamed(ReferenceSUT):
    name = "served-dispatcher"


class _Plain:
    """The reference dispatcher behind a wrapper that is not one (every seam call passes through)."""

    name = "plain-dispatcher"

    def __init__(self, **options: Any) -> None:
        self._inner = ReferenceSUT(**options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Declining(_Plain):
    name = "declining-dispatcher"

    def writeback_boundary(self) -> Any:
        raise Unsupported("this stand-in declines the writeback seam")


def renamed(**options: Any) -> ReferenceSUT:
    return _Renamed(**options)


def plain(**options: Any) -> _Plain:
    return _Plain(**options)


def declining(**options: Any) -> _Declining:
    return _Declining(**options)
