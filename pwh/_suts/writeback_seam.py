"""The writeback seam: the dispatcher joined to the implementation's own committed-writeback boundary.

Slice 2 of the RFC is the wiring, not the dispatcher function: "在一个 orchestrator-owned
durable-writeback receipt boundary 接入 dispatcher；持久化 sidecar dispatch receipt，并能在 replay
时恢复；证明 quota-spend eligibility 与主 receipt 不变" (§11), and the end-to-end test "必须从真实
committed completion/replan writeback boundary 开始 … 结束于 validated intent receipt" (§12). The
dispatcher seam (:mod:`pwh._suts.seam`) hands an implementation a receipt pwh built; this seam asks
the implementation to commit its *own* primary writeback through its *own* primary path, and reads
back what that path did: the primary receipt's bytes, the quota-spend eligibility, every sidecar
record and intent receipt, and what each hook was handed.

Everything crosses in neutral RFC terms (Goal, Todo, Turn, completion, replan, receipt, hook); an
adapter renders them into its own commands. Each operation is optional: one an implementation
cannot offer raises :class:`~pwh._suts.seam.Unsupported` with the reason, and the scenarios that
need it are then *not applicable* to that implementation, never passed and never failed.

An adapter offers this seam by answering ``writeback_boundary()`` with an object of this protocol
(a fresh one per scenario; :meth:`WritebackBoundary.close` ends it and stops every process it
started). The reference's boundary is pwh's fake orchestrator (a real primary Turn in its own
SQLite store) wired to the reference dispatcher.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pwh._core.registry import Producer

__all__ = [
    "WRITEBACK_CRASH_POINTS",
    "WRITEBACK_OPERATIONS",
    "Commit",
    "HookSeen",
    "PrimaryFailure",
    "WritebackBoundary",
    "writeback_boundary_of",
]

# The operations a writeback boundary may offer; an adapter lists the ones it implements.
WRITEBACK_OPERATIONS: tuple[str, ...] = (
    "prepare",
    "register_intent_kind",
    "install",
    "commit_completion",
    "commit_replan",
    "replay",
    "crash_and_recover",
    "primary_receipt",
    "spend_eligibility",
    "sidecar_records",
    "intent_receipts",
    "hooks_seen",
    "plant",
)

# Where a real crash (SIGKILL of the implementation's process) may be placed, by what is durable
# when it fires. An implementation places each where its own layout has that moment, or answers
# Unsupported for a moment it does not have.
WRITEBACK_CRASH_POINTS: dict[str, str] = {
    "after_primary_commit": "the primary writeback is durable; no hook has been called for it",
    "inside_provider": "a hook's provider is running for the committed receipt; nothing of its result is durable",
    "before_sidecar_checkpoint": "every provider has answered; no sidecar record of this dispatch is durable",
}

PrimaryFailure = Literal["validation", "writeback"]


@dataclass(frozen=True)
class Commit:
    """What one primary command did, as the implementation reports it.

    ``committed`` is the primary path's own answer (the writeback is durable); ``receipt_id`` the
    committed receipt's identity (None when nothing committed); ``event_kind`` the RFC event kind
    of the writeback (``todo_completed`` or ``replan_recorded``); ``dispatch`` the post-writeback
    outcome the command reported, in RFC terms, or None when it reported none; ``raised`` a compact
    class of what escaped the command into its host (never raw text), None when nothing did."""

    committed: bool
    receipt_id: str | None
    event_kind: str | None
    dispatch: Mapping[str, Any] | None = None
    raised: str | None = None
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class HookSeen:
    """One call of one hook: the input it was handed (plain JSON) and the receipt it was for."""

    hook_id: str
    receipt_id: str | None
    hook_input: Mapping[str, Any]


@runtime_checkable
class WritebackBoundary(Protocol):
    """One implementation's primary path with its post-writeback wiring, driven from outside."""

    operations: tuple[str, ...]  # the WRITEBACK_OPERATIONS this boundary offers

    def prepare(self, *, todos: int, phase_enabled: bool, report_capability: bool) -> None:
        """A Goal with ``todos`` open Todos, a Turn able to complete each, the post-writeback phase
        on or off as the implementation switches it, and the implementation's own periodic-report
        capability installed at its composition root when ``report_capability`` is true (the keyword
        does not name the capability's id: nothing under pwh/ outside pwh/capabilities does)."""

    def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> list[Any]:
        """Add a test intent kind and its payload schema to the implementation's catalog, as the
        dispatcher seam's method of the same name does (docs/seam.md, "Intent kinds"); pwh calls it
        before installing a hook proposing that kind. ``[]`` when registered, else the rejections."""

    def install(self, registration: Mapping[str, Any], producer: Producer) -> list[Any]:
        """Install a test hook at the implementation's composition root (as its host would at
        boot), in RFC terms; ``[]`` when installed, else the rejections (compact codes)."""

    def commit_completion(self, todo: int, *, fail: PrimaryFailure | None = None, crash: str | None = None) -> Commit:
        """Complete Todo number ``todo`` through the implementation's own primary path. ``fail``
        makes the primary validation or the writeback fail; ``crash`` (a key of
        :data:`WRITEBACK_CRASH_POINTS`) kills the implementation's process there (a real SIGKILL),
        then :meth:`recover` is the caller's to run. A crashed command returns
        ``Commit(committed=False, receipt_id=None, event_kind=None, raised="killed")``: the
        process that would have answered is gone, and only durable storage says what committed."""

    def commit_replan(self, *, fail: PrimaryFailure | None = None, crash: str | None = None) -> Commit:
        """Record a replan through the implementation's own primary path (as for a completion)."""

    def replay(self, commit_number: int) -> Commit:
        """Replay the ``commit_number``-th committed writeback (1-based) the implementation's own
        way (the same command again, a resume key, a recovery queue)."""

    def recover(self) -> None:
        """After a crash: start again the implementation's own way, from durable storage alone."""

    def primary_receipt(self, commit_number: int) -> bytes:
        """The committed primary receipt's bytes, as the implementation stores them; ``LookupError``
        (``IndexError``, say) for a number past the last committed writeback."""

    def spend_eligibility(self, commit_number: int) -> Mapping[str, Any]:
        """The quota-spend eligibility the implementation derives for that receipt, in its terms."""

    def sidecar_records(self) -> list[dict[str, Any]]:
        """Every sidecar record, in RFC terms (``dispatch_id``, ``hook_id``, ``source_receipt_id``,
        ``status``, ``failure_code``, ``intents``), in record order."""

    def intent_receipts(self) -> list[dict[str, Any]]:
        """Every validated intent the sidecar holds, in RFC terms (the RFC's intent shape)."""

    def hooks_seen(self) -> list[HookSeen]:
        """Every hook call so far, with the input as handed."""

    def plant(self, values: Mapping[str, str]) -> None:
        """Put private values where a real user does (Todo text, evidence, summaries, paths,
        credentials) for the next commits; keys name the place, values are what to plant."""

    def close(self) -> None:
        """End the boundary; stop every process it started, by PID."""


def writeback_boundary_of(sut: Any) -> WritebackBoundary | None:
    """The adapter's writeback boundary for one scenario, or None when it offers none."""
    offer = getattr(sut, "writeback_boundary", None)
    if offer is None or not callable(offer):
        return None
    boundary: WritebackBoundary | None = offer()
    return boundary
