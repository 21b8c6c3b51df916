"""Adapters that never let the implementation answer: one raises on every seam call, one says
``Unsupported`` to every call. No row may pass for either (issue 15: only what touched the
implementation counts for it)."""

from __future__ import annotations

from typing import Any

from pwh import Unsupported
from pwh._suts.operations import SEAM_OPERATIONS

SEAM_METHODS = SEAM_OPERATIONS


class _Hollow:
    name = "hollow"

    def _refuse(self, method: str) -> Any:
        raise NotImplementedError

    @property
    def crash_points(self) -> tuple[str, ...]:
        return self._refuse("crash_points")  # type: ignore[no-any-return]

    def __getattr__(self, method: str) -> Any:
        if method not in SEAM_METHODS:
            raise AttributeError(method)
        return lambda *a, **k: self._refuse(method)


class RaisingSUT(_Hollow):
    """Every seam method raises a plain error."""

    name = "hollow:raises"

    def _refuse(self, method: str) -> Any:
        if method == "close":
            return None
        raise RuntimeError(f"{method} is not implemented")


class UnsupportedSUT(_Hollow):
    """Every seam method says the implementation cannot express the case."""

    name = "hollow:unsupported"

    def _refuse(self, method: str) -> Any:
        if method == "close":
            return None
        raise Unsupported(f"{method} is not offered by this adapter")


def raises(**_: Any) -> RaisingSUT:
    return RaisingSUT()


def unsupported(**_: Any) -> UnsupportedSUT:
    return UnsupportedSUT()


def renamed_codes(**kw: Any) -> Any:
    """The reference with its own dispatch-level codes renamed: everything the RFC requires still
    holds, only pwh's reading of the code names differs (a profile divergence, never an RFC fail)."""
    from dataclasses import replace

    from pwh import ReferenceSUT

    class _Renamed(ReferenceSUT):
        name = "renamed_codes"

        def dispatch(self, source: Any, *, primary: Any = None) -> Any:
            outcome = super().dispatch(source, primary=primary)
            return replace(outcome, code=f"x_{outcome.code}") if outcome.code else outcome

    return _Renamed(**kw)
