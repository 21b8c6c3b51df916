"""Adapters that never let the implementation answer: one raises on every seam call, one says
``Unsupported`` to every call. No row may pass for either (issue 15: only what touched the
implementation counts for it)."""

from __future__ import annotations

from typing import Any

from pwh._sut import Unsupported

SEAM_METHODS = ("register_intent_kind", "install", "set_profile", "dispatch", "redeliver", "arm_crash", "restart",
                "journal_records", "inject_fault", "close")


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
