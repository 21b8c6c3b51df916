"""A SUT with no hooks at all: the baseline a primary Turn must match byte for byte."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pwh import DispatchOutcome, Rejection
from pwh._core.codes import PHASE_DISABLED


class NoHooksSUT:
    """Dispatches nothing and records nothing; the primary Turn alone."""

    name = "no-hooks"
    crash_points: tuple[str, ...] = ()

    def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> list[Rejection]:
        return []

    def install(self, registration: Mapping[str, Any], producer: Any) -> list[Rejection]:
        return []

    def set_profile(self, profile: Any) -> None:
        return None

    def dispatch(self, source: Mapping[str, Any], *, primary: Any = None) -> DispatchOutcome:
        return DispatchOutcome(source.get("receipt_id"), source.get("event_kind"), False, PHASE_DISABLED)

    def redeliver(self, source: Mapping[str, Any]) -> DispatchOutcome:
        return self.dispatch(source)

    def arm_crash(self, point: str) -> None:
        raise KeyError(point)

    def restart(self) -> None:
        return None

    def journal_records(self) -> list[dict[str, Any]]:
        return []

    def close(self) -> None:
        return None
