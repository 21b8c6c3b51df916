"""Fake external sink (renderer / connector / mail) and the REC-1 recovery helpers.

The sink is the effect authority's target. Every call is recorded, refused ones included, so a
run can assert that nothing reached it before separate governed admission (M12). A crash switch
models a provider that dies after its external effect but before the caller sees the receipt;
:func:`recover_effect` shows the only safe answer (readback first, REC-1), and
:func:`blind_retry_recover` the naive one the tests contrast it with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pwh import CanonicalError, digest
from pwh._core.canonical import to_plain

from ._scheduler import AdmissionTicket, GovernedAdmission

DEFAULT_SINK_SCOPE: Final = "report_sink.write"

# Call outcomes.
WRITTEN: Final = "written"
REPLAYED: Final = "replayed"  # same effect_key again on an idempotent sink: first receipt back
REFUSED: Final = "refused"
INVALID_PAYLOAD: Final = "invalid_payload"  # admitted, but the payload is not plain JSON


class SinkViolation(RuntimeError):
    """The sink was called without a valid governed admission ticket: the run has failed (M12)."""

    code: Final = "sink_called_without_admission"

    def __init__(self) -> None:
        super().__init__(self.code)


class SimulatedProviderCrash(Exception):
    """The provider died after the external effect happened, before the receipt came back."""


@dataclass(frozen=True, slots=True)
class SinkReceipt:
    """The sink's own record of one effect; ``readback`` returns it."""

    effect_key: str
    sequence: int
    payload_digest: str
    intent_id: str

    def to_json(self) -> dict[str, Any]:
        return {
            "effect_key": self.effect_key,
            "sequence": self.sequence,
            "payload_digest": self.payload_digest,
            "intent_id": self.intent_id,
        }


@dataclass(frozen=True, slots=True)
class SinkCall:
    """One call as the sink saw it; the payload is kept only as a digest."""

    effect_key: str
    outcome: str
    payload_digest: str | None
    intent_id: str | None


class FakeSink:
    """An external target that only a governed ticket may write to.

    ``idempotent=True`` (the default) dedupes on ``effect_key``; ``False`` models a target such
    as mail that performs every send, which is what makes a blind retry duplicate an effect.
    ``crash_after_effect`` is one-shot: it fires on the next applied effect, then clears.
    """

    def __init__(
        self,
        *,
        required_scope: str = DEFAULT_SINK_SCOPE,
        trusted: GovernedAdmission | None = None,
        idempotent: bool = True,
    ) -> None:
        self.required_scope = required_scope
        self.trusted = trusted
        self.idempotent = idempotent
        self.crash_after_effect = False
        self.violated = False
        self.calls: list[SinkCall] = []
        self.effects: list[SinkReceipt] = []

    def write(self, effect_key: str, payload: Mapping[str, Any], *, admission: AdmissionTicket | None) -> SinkReceipt:
        """Apply one effect if ``admission`` is an honoured ticket covering this sink's scope."""
        intent = admission.intent_id if type(admission) is AdmissionTicket else None
        if not self._admitted(admission) or type(effect_key) is not str:
            key = effect_key[:128] if type(effect_key) is str else "<not a string>"
            self.calls.append(SinkCall(key, REFUSED, None, intent))
            self.violated = True
            raise SinkViolation()
        try:
            fingerprint = digest(to_plain(payload))
        except CanonicalError:
            self.calls.append(SinkCall(effect_key, INVALID_PAYLOAD, None, intent))
            raise
        existing = self.readback(effect_key)
        if existing is not None and self.idempotent:
            self.calls.append(SinkCall(effect_key, REPLAYED, fingerprint, intent))
            return existing
        assert admission is not None  # refused above when missing
        receipt = SinkReceipt(effect_key, len(self.effects), fingerprint, admission.intent_id)
        self.effects.append(receipt)
        self.calls.append(SinkCall(effect_key, WRITTEN, fingerprint, intent))
        if self.crash_after_effect:
            self.crash_after_effect = False
            raise SimulatedProviderCrash("provider crashed after the external effect")
        return receipt

    def readback(self, effect_key: str) -> SinkReceipt | None:
        """The first effect recorded under ``effect_key``, or ``None``: what recovery asks first."""
        for receipt in self.effects:
            if receipt.effect_key == effect_key:
                return receipt
        return None

    def effect_count(self, effect_key: str | None = None) -> int:
        """How many effects were applied (for one key, or in all)."""
        if effect_key is None:
            return len(self.effects)
        return sum(1 for r in self.effects if r.effect_key == effect_key)

    @property
    def touched(self) -> bool:
        """True once anything at all called :meth:`write`."""
        return bool(self.calls)

    def _admitted(self, ticket: Any) -> bool:
        if type(ticket) is not AdmissionTicket:
            return False
        if self.trusted is not None and ticket.issuer is not self.trusted:
            return False
        issuer = ticket.issuer
        return type(issuer) is GovernedAdmission and issuer.honours(ticket) and self.required_scope in ticket.scope


def recover_effect(effect_key: str, sink: FakeSink, retry: Callable[[], SinkReceipt]) -> SinkReceipt:
    """REC-1: after a crash, read back first; only an effect that never happened is retried."""
    existing = sink.readback(effect_key)
    if existing is not None:
        return existing
    return retry()


def blind_retry_recover(effect_key: str, sink: FakeSink, retry: Callable[[], SinkReceipt]) -> SinkReceipt:
    """Deliberately naive recovery (never use): retries without asking whether the effect happened."""
    del effect_key, sink  # ignored on purpose: that is the bug this helper exists to show
    return retry()
