"""Dispatch outcomes in RFC terms: what every SUT adapter reports and every scenario reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pwh._core.codes import Rejection


@dataclass(frozen=True)
class HookOutcome:
    """One admitted hook's result for one dispatch.

    ``status`` is ``proposed``, ``not_applicable`` or ``failed``; a failed hook carries one stable
    ``failure_code``. ``intents`` are the intents the journal holds for this dispatch identity
    (after a conflict: the original ones, which stay). ``replayed`` means the stored receipt was
    returned without calling the provider.
    """

    hook_id: str
    dispatch_id: str | None
    status: str
    failure_code: str | None = None
    intents: tuple[dict[str, Any], ...] = ()
    replayed: bool = False
    attempts: int = 0
    recorded: bool = False
    rejection: Rejection | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "hook_id": self.hook_id,
            "dispatch_id": self.dispatch_id,
            "status": self.status,
            "failure_code": self.failure_code,
            "intents": list(self.intents),
            "replayed": self.replayed,
            "attempts": self.attempts,
            "recorded": self.recorded,
            "rejection": self.rejection.to_json() if self.rejection else None,
        }


@dataclass(frozen=True)
class DispatchOutcome:
    """The whole dispatch for one committed receipt.

    ``admitted`` is false when the source was not admissible (then ``code`` says why and no hook
    ran). ``journal_error`` reports a sidecar that could not be written: never a primary failure.
    """

    receipt_id: str | None
    event_kind: str | None
    admitted: bool
    code: str | None = None
    rejection: Rejection | None = None
    hooks: tuple[HookOutcome, ...] = ()
    journal_error: str | None = None
    notes: tuple[str, ...] = field(default=())

    def hook(self, hook_id: str) -> HookOutcome:
        for outcome in self.hooks:
            if outcome.hook_id == hook_id:
                return outcome
        raise KeyError(hook_id)

    def has_hook(self, hook_id: str) -> bool:
        return any(h.hook_id == hook_id for h in self.hooks)

    @property
    def intents(self) -> tuple[dict[str, Any], ...]:
        return tuple(i for h in self.hooks for i in h.intents)

    def to_json(self) -> dict[str, Any]:
        return {
            "receipt_id": self.receipt_id,
            "event_kind": self.event_kind,
            "admitted": self.admitted,
            "code": self.code,
            "rejection": self.rejection.to_json() if self.rejection else None,
            "hooks": [h.to_json() for h in self.hooks],
            "journal_error": self.journal_error,
            "notes": list(self.notes),
        }
