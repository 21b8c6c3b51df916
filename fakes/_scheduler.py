"""Fake scheduler and governed executor admission: the separate effect authority (RFC §1, §8, §9).

A validated intent receipt is only a *proposal*. This scheduler deduplicates again on
``intent_id`` (JNL-7: recording and executing are separate transactions), lets its own
:class:`GovernedAdmission` judge the requested write scope by its own policy (M09), and hands
admitted intents to the capability reducer for their kind. In v0 it stops there: it never
issues a ticket to a sink, so no effect can follow from a hook's proposal alone (M12).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pwh import CanonicalError
from pwh._core.canonical import dumps_plain, to_plain

INTENT_SCHEMA_VERSION: Final = "loopx_post_writeback_intent_v0"

# Scheduler / admission codes (fakes only; compact strings, never exception text).
INTENT_RECEIPT_REJECTED: Final = "intent_receipt_rejected"  # not an intent packet
AUTHORITY_CLAIM_REJECTED: Final = "authority_claim_rejected"  # claims authority or a done write
INTENT_KIND_NOT_ADMITTED: Final = "intent_kind_not_admitted"
WRITE_SCOPE_NOT_ADMITTED: Final = "write_scope_not_admitted"
NO_REDUCER: Final = "no_reducer_for_intent_kind"
REDUCER_FAILED: Final = "reducer_failed"  # the reducer raised without a stable code of its own
DUPLICATE_CONTENT_DIFFERS: Final = "duplicate_intent_id_content_differs"
TICKET_NOT_ADMITTED: Final = "ticket_not_admitted"

# Entry statuses.
EXECUTED: Final = "executed"
DUPLICATE: Final = "duplicate"
DENIED: Final = "denied"
REJECTED: Final = "rejected"
REDUCER_REJECTED: Final = "reducer_rejected"
UNROUTED: Final = "unrouted"  # admitted, but no reducer is installed for its kind


class AdmissionRefused(PermissionError):
    """A ticket was asked for outside what this admission granted."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True, slots=True)
class AdmissionDecision:
    """The admission's verdict on one intent; ``granted_scope`` ⊆ what the intent requested."""

    intent_id: str | None
    admitted: bool
    code: str | None = None
    granted_scope: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "intent_id": self.intent_id,
            "admitted": self.admitted,
            "code": self.code,
            "granted_scope": list(self.granted_scope),
        }


@dataclass(frozen=True, slots=True)
class AdmissionTicket:
    """Proof that a governed admission authorised ``scope`` for ``intent_id``.

    Only :meth:`GovernedAdmission.issue_ticket` makes honoured tickets: one built by hand has a
    nonce its issuer never recorded and is refused by :meth:`GovernedAdmission.honours`.
    """

    intent_id: str
    scope: tuple[str, ...]
    nonce: str = field(repr=False)
    issuer: GovernedAdmission = field(repr=False, compare=False)


class GovernedAdmission:
    """Judges requested write scopes by its own policy; grants at most what was requested.

    ``allowed_intent_kinds=None`` places no restriction on kinds (a scheduler still needs a
    reducer for the kind); write scope is always default-deny.
    """

    def __init__(
        self,
        allowed_write_scopes: frozenset[str] = frozenset(),
        allowed_intent_kinds: frozenset[str] | None = None,
    ) -> None:
        self.allowed_write_scopes = frozenset(allowed_write_scopes)
        self.allowed_intent_kinds = None if allowed_intent_kinds is None else frozenset(allowed_intent_kinds)
        self.decisions: list[AdmissionDecision] = []
        self._granted: dict[str, tuple[str, ...]] = {}
        self._issued: dict[str, AdmissionTicket] = {}

    def admit(self, intent: Mapping[str, Any]) -> AdmissionDecision:
        """Admit or deny one intent; the decision is recorded and returned, never raised."""
        decision = self._judge(intent)
        if decision.admitted and decision.intent_id is not None:
            self._granted[decision.intent_id] = decision.granted_scope
        self.decisions.append(decision)
        return decision

    def issue_ticket(self, intent_id: str, scope: Iterable[str]) -> AdmissionTicket:
        """A ticket for ``scope`` on an admitted intent, only within what was granted to it."""
        wanted = tuple(dict.fromkeys(scope))
        granted = self._granted.get(intent_id) if type(intent_id) is str else None
        if granted is None or not set(wanted) <= set(granted):
            raise AdmissionRefused(TICKET_NOT_ADMITTED)
        ticket = AdmissionTicket(intent_id, wanted, secrets.token_hex(16), self)
        self._issued[ticket.nonce] = ticket
        return ticket

    def honours(self, ticket: Any) -> bool:
        """True only for a ticket this admission issued, unaltered."""
        if type(ticket) is not AdmissionTicket or ticket.issuer is not self:
            return False
        issued = self._issued.get(ticket.nonce)
        return issued is not None and issued == ticket

    @property
    def tickets_issued(self) -> int:
        return len(self._issued)

    def _judge(self, intent: Mapping[str, Any]) -> AdmissionDecision:
        try:
            plain = to_plain(intent)
        except Exception:
            return AdmissionDecision(None, False, INTENT_RECEIPT_REJECTED)
        if type(plain) is not dict or type(plain.get("intent_id")) is not str:
            return AdmissionDecision(None, False, INTENT_RECEIPT_REJECTED)
        key = plain["intent_id"]
        if plain.get("grants_new_action_authority") is not False or plain.get("external_write_performed") is not False:
            return AdmissionDecision(key, False, AUTHORITY_CLAIM_REJECTED)
        kind = plain.get("intent_kind")
        if type(kind) is not str or (self.allowed_intent_kinds is not None and kind not in self.allowed_intent_kinds):
            return AdmissionDecision(key, False, INTENT_KIND_NOT_ADMITTED)
        requested = plain.get("requested_write_scope")
        if type(requested) is not list or any(type(s) is not str for s in requested):
            return AdmissionDecision(key, False, WRITE_SCOPE_NOT_ADMITTED)
        if not set(requested) <= self.allowed_write_scopes:
            return AdmissionDecision(key, False, WRITE_SCOPE_NOT_ADMITTED)
        # Granted is exactly what was requested (deduplicated), never the wider allowance.
        return AdmissionDecision(key, True, None, tuple(dict.fromkeys(requested)))


@dataclass(frozen=True, slots=True)
class SchedulerEntry:
    """What the scheduler did with one delivered intent receipt."""

    sequence: int
    intent_id: str | None
    intent_kind: str | None
    status: str
    code: str | None = None
    granted_scope: tuple[str, ...] = ()
    decision: Any = None

    def to_json(self) -> dict[str, Any]:
        return {
            "sequence": self.sequence,
            "intent_id": self.intent_id,
            "intent_kind": self.intent_kind,
            "status": self.status,
            "code": self.code,
            "granted_scope": list(self.granted_scope),
            "decision": self.decision,
        }


class FakeScheduler:
    """Consumes validated intent receipts: dedupe on ``intent_id``, admit, reduce, stop."""

    def __init__(
        self,
        admission: GovernedAdmission,
        reducers: Mapping[str, Callable[[Mapping[str, Any]], Any]],
    ) -> None:
        self.admission = admission
        self._reducers = dict(reducers)
        self.entries: list[SchedulerEntry] = []
        self.executions: dict[str, int] = {}
        self.decisions: list[Any] = []
        self._seen: dict[str, str] = {}  # intent_id -> digest of the first delivery
        # consume(shared=True): receipt object's id -> (the object, its intent_id, kind, digest)
        self._delivered: dict[int, tuple[Mapping[str, Any], str, str | None, str]] = {}
        self._fingerprint = ""  # the digest _consume_one computed last

    def consume(self, intent_receipts: Iterable[Mapping[str, Any]], *, shared: bool = False) -> list[SchedulerEntry]:
        """Handle each delivery in order; returns this call's entries (also kept in ``entries``).

        ``shared``: the caller vouches that a receipt delivered again as the very same object has
        the content it had (the models' in-memory journal hands its records out so): its id and
        fingerprint are then taken from its first delivery instead of being copied again."""
        if not shared:
            return [self._consume_one(receipt) for receipt in intent_receipts]
        return [self._consume_again(receipt) for receipt in intent_receipts]

    def _consume_again(self, receipt: Mapping[str, Any]) -> SchedulerEntry:
        """A delivery of a receipt object delivered before, unchanged: a duplicate, as
        :meth:`_consume_one` would find it, from what that found; anything else goes there."""
        seen = self._delivered.get(id(receipt))
        if seen is None or seen[0] is not receipt or seen[1] not in self._seen:
            entry = self._consume_one(receipt)
            if entry.status != REJECTED and entry.intent_id is not None:
                self._delivered[id(receipt)] = (receipt, entry.intent_id, entry.intent_kind, self._fingerprint)
            return entry
        _, key, kind, fingerprint = seen
        return self._record(key, kind, DUPLICATE, DUPLICATE_CONTENT_DIFFERS if self._seen[key] != fingerprint else None)

    def _consume_one(self, receipt: Mapping[str, Any]) -> SchedulerEntry:
        try:
            plain = to_plain(receipt)
        except Exception:
            plain = None
        if type(plain) is not dict or plain.get("schema_version") != INTENT_SCHEMA_VERSION or type(plain.get("intent_id")) is not str:
            return self._record(None, None, REJECTED, INTENT_RECEIPT_REJECTED)
        key = plain["intent_id"]
        kind = plain.get("intent_kind") if type(plain.get("intent_kind")) is str else None
        fingerprint = self._fingerprint = hashlib.sha256(dumps_plain(plain)).hexdigest()  # digest(plain): plain is a copy already
        if key in self._seen:
            differs = self._seen[key] != fingerprint
            return self._record(key, kind, DUPLICATE, DUPLICATE_CONTENT_DIFFERS if differs else None)
        self._seen[key] = fingerprint
        verdict = self.admission.admit(plain)
        if not verdict.admitted:
            return self._record(key, kind, DENIED, verdict.code)
        reducer = self._reducers.get(kind) if kind is not None else None
        if reducer is None:
            return self._record(key, kind, UNROUTED, NO_REDUCER, verdict.granted_scope)
        return self._execute(key, kind, plain, reducer, verdict.granted_scope)

    def _execute(
        self,
        key: str,
        kind: str | None,
        plain: dict[str, Any],
        reducer: Callable[[Mapping[str, Any]], Any],
        granted: tuple[str, ...],
    ) -> SchedulerEntry:
        self.executions[key] = self.executions.get(key, 0) + 1
        try:
            outcome = reducer(plain)
            decision = outcome.to_json() if hasattr(outcome, "to_json") else to_plain(outcome)
        except CanonicalError:
            return self._record(key, kind, REDUCER_REJECTED, REDUCER_FAILED, granted)
        except Exception as exc:
            code = getattr(exc, "code", None)
            stable = code if type(code) is str and code.isidentifier() else REDUCER_FAILED
            return self._record(key, kind, REDUCER_REJECTED, stable, granted)
        self.decisions.append(decision)
        return self._record(key, kind, EXECUTED, None, granted, decision)

    def _record(
        self,
        key: str | None,
        kind: str | None,
        status: str,
        code: str | None,
        granted: tuple[str, ...] = (),
        decision: Any = None,
    ) -> SchedulerEntry:
        entry = SchedulerEntry(len(self.entries), key, kind, status, code, granted, decision)
        self.entries.append(entry)
        return entry
