"""The invariants every model step must keep, each tagged with the matrix row its rule belongs to
and declared, next to the check that states it, as RFC or profile.

:class:`Judge` remembers what earlier steps showed (final records, identities, deliveries) and
checks one step at a time. Every check method carries a :func:`checks` declaration: the
invariants it can report, each declared once (:func:`rfc` with the ids of the clauses of
``pwh/_harness/clauses.py`` that require it, or :func:`profile` with pwh's reading where the
documents are silent); a method that reports an invariant declared on another method names it.
:data:`INVARIANTS` is read from those declarations (never from the source), and a finding of an
undeclared invariant is refused at once (:class:`UndeclaredInvariant`: a harness bug).

The first broken **RFC** invariant of a step is the finding (:meth:`Judge.check`): a failure of the
implementation, shrunk and written as a counterexample. A broken **profile** invariant is a
*profile divergence* (:attr:`Judge.divergences`): reported and counted apart, never a failure,
never a counterexample, never the soak's exit code; judging goes on. So a check that can report a
profile invariant never returns before the RFC checks of the same step (profile readings have
methods of their own, or are yielded without stopping).

The RFC checks are ordered so that the most direct statement of a broken rule wins (a rolled-back
writeback is reported as a disturbed primary, not as the orphan sidecar record it leaves behind).
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from fakes import snapshot_difference
from fakes._scheduler import DUPLICATE_CONTENT_DIFFERS
from pwh import BoundaryScanner, CanonicalError, canonical_bytes, digest
from pwh._campaigns.models.catalog import ALSO, expected
from pwh._campaigns.models.language import DUPLICATE
from pwh._campaigns.models.observe import Episode
from pwh._campaigns.models.system import ModelSystem, StepRecord
from pwh._core import codes
from pwh._harness.clauses import citation_ids

# How long past its registered timeout a dispatch may take to give up on a hung hook: the same
# slack as the Gherkin step "the Turn gave up on hook ... within its timeout".
TIMEOUT_GRACE_MS = 1200
# A sidecar record is a hook's result (at most its max_result_bytes) plus a fixed envelope (pwh's
# reading: the number is pwh's, ``record_envelope``).
RECORD_ENVELOPE_BYTES = 4096
# A compact failure code, as the matrix's RFC check "every failure in the journal is a compact
# stable code" reads it.
COMPACT_CODE = re.compile(r"[a-z][a-z0-9_]{0,63}")
# The source fields a hook must see as committed (RFC), as the matrix's "saw the source exactly as
# committed" reads them; the rest (receipt id, revision, commit time) are opaque: their passing
# through unchanged is pwh's reading (``source_passed_through``).
SOURCE_IDENTITY = ("effect_id", "step_kind", "goal_id", "agent_id", "todo_id", "turn_instance_id", "event_kind")
# The flaw of a registration offered while the profile's timeout ceiling is below its timeout.
OVER_PROFILE_CEILING = "a timeout over the profile's current ceiling"

Kind = Literal["rfc", "profile"]
RFC: Kind = "rfc"
PROFILE: Kind = "profile"


# -- the declarations --------------------------------------------------------------------------


class InvariantTableError(TypeError):
    """The declarations are wrong: an invariant declared twice, or named but never declared."""


class UndeclaredInvariant(InvariantTableError):
    """A check reported an invariant no declaration names: a harness bug, refused at once."""


@dataclass(frozen=True)
class Invariant:
    """One invariant and its kind: RFC (``clauses``, ids of pwh's clause table, require it) or
    profile (``reading``: pwh's reading where the documents are silent)."""

    name: str
    kind: Kind
    rule: str  # what it checks, in one line (for a profile invariant: the reading itself)
    clauses: tuple[str, ...] = ()

    @property
    def reading(self) -> str:
        return self.rule if self.kind == PROFILE else ""

    def to_json(self) -> dict[str, Any]:
        if self.kind == RFC:
            return {"kind": RFC, "clauses": list(self.clauses), "rule": self.rule}
        return {"kind": PROFILE, "reading": self.rule}

    def shown(self) -> str:
        """How the coverage report names it: with its clauses, or its reading."""
        return f"{self.name} [{', '.join(self.clauses)}]" if self.kind == RFC else f"{self.name}: {self.rule}"


def rfc(name: str, clauses: str | tuple[str, ...], rule: str) -> Invariant:
    """An RFC invariant: ``clauses`` must be ids of pwh's clause table (refused at once otherwise)."""
    return Invariant(name, RFC, rule, citation_ids(clauses))


def profile(name: str, reading: str) -> Invariant:
    """A profile invariant: pwh's ``reading`` (one line) where the documents are silent."""
    if not reading.strip():
        raise InvariantTableError(f"profile invariant {name}: a reading is required")
    return Invariant(name, PROFILE, reading)


F = TypeVar("F", bound=Callable[..., Any])


def checks(*invariants: Invariant | str) -> Callable[[F], F]:
    """Mark a check method with the invariants it can report: an :class:`Invariant` declares one
    (here, once in the whole judge), a name refers to one declared on another method."""

    def mark(method: F) -> F:
        method.__invariants__ = tuple(i if isinstance(i, str) else i.name for i in invariants)  # type: ignore[attr-defined]
        method.__declares__ = tuple(i for i in invariants if isinstance(i, Invariant))  # type: ignore[attr-defined]
        return method

    return mark


def index_declarations(declared: Iterable[Invariant], referenced: Iterable[str] = ()) -> dict[str, Invariant]:
    """The declarations by name; :class:`InvariantTableError` if one is declared twice or a name
    is referenced and never declared."""
    found: dict[str, Invariant] = {}
    for invariant in declared:
        if invariant.name in found:
            raise InvariantTableError(f"invariant {invariant.name!r} is declared twice")
        found[invariant.name] = invariant
    missing = sorted(set(referenced) - set(found))
    if missing:
        raise InvariantTableError(f"invariant {missing[0]!r} is reported by a check but declared nowhere")
    return found


@dataclass(frozen=True)
class Violation:
    """A broken invariant: which, the row whose rule it is, at which step, what was seen, and its
    kind (an RFC violation, or a profile divergence)."""

    invariant: str
    row: str
    step: int
    message: str
    kind: Kind = RFC

    def to_json(self) -> dict[str, Any]:
        found = {"invariant": self.invariant, "row": self.row, "step": self.step, "message": self.message, "kind": self.kind}
        declared = INVARIANTS.get(self.invariant)
        if declared is not None:
            found.update({k: v for k, v in declared.to_json().items() if k in ("clauses", "reading")})
        return found

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Violation:
        kind = value.get("kind", RFC)
        return cls(
            str(value["invariant"]), str(value["row"]), int(value["step"]), str(value["message"]), PROFILE if kind == PROFILE else RFC
        )


class ModelViolation(AssertionError):
    """Raised by a model run when a step breaks an RFC invariant."""

    def __init__(self, violation: Violation) -> None:
        super().__init__(f"{violation.row} {violation.invariant} at step {violation.step}: {violation.message}")
        self.violation = violation


Finding = tuple[str, str, str]  # invariant, row, message


class Judge:
    """Checks each step of one run; keeps the run's memory between steps."""

    def __init__(self) -> None:
        self.history: dict[str, bytes] = {}  # dispatch_id -> its final record, as first seen
        self.dispatch_keys: dict[str, tuple[Any, ...]] = {}
        self.dispatch_by_key: dict[tuple[Any, ...], str] = {}
        self.intent_keys: dict[str, str] = {}
        self.intent_by_key: dict[str, str] = {}
        self.delivered: dict[str, set[str]] = {}  # dispatch_id -> intent ids the scheduler got
        self.covered: dict[str, frozenset[str]] = {}  # receipt -> hooks admitted at its last dispatch
        self.scanned: set[bytes] = set()
        self.read: set[bytes] = set()  # records the profile's record readings have judged
        self.identified: set[bytes] = set()  # records whose identities are bound (by their canonical bytes)
        self.turns_seen = 0
        self.scanner = BoundaryScanner()
        self._own_scanner = self.scanner  # the default configuration: its verdicts are _SCANNED_CLEAN's
        self.divergences: list[Violation] = []  # every profile divergence found so far, in order
        # The canonical bytes of records whose object stands for its content across reads
        # (ObservedSUT.records_shared): by id, with the record itself (so its id is not reused).
        self.record_bytes: dict[int, tuple[Any, bytes]] = {}
        self.calls_made = CallCounts()  # provider calls per dispatch identity, counted as the history grows

    def check(self, system: ModelSystem, record: StepRecord) -> Violation | None:
        """The step's first broken RFC invariant, or None; the profile divergences found on the
        way are appended to :attr:`divergences` and judging goes on past them."""
        for finding in self._findings(system, record):
            if finding is None:
                continue
            invariant, row, message = finding
            found = Violation(invariant, row, record.index, message, kind_of(invariant))
            if found.kind == PROFILE:
                self.divergences.append(found)
                continue
            return found
        return None

    def take_divergences(self) -> list[Violation]:
        """The profile divergences found since the last call (and forget them)."""
        taken, self.divergences = self.divergences, []
        return taken

    def _findings(self, system: ModelSystem, record: StepRecord) -> Iterator[Finding | None]:
        yield self._step_ran(record)
        if record.escaped or record.crash_missed:
            return
        journal = system.journal()
        blobs = RecordBytes(journal, self.record_bytes if system.sut.records_shared() else None)
        yield self._bad_registration(system, record, blobs)
        yield self._registration_rules(record)
        yield self._primary(system)
        yield self._sink(system)
        yield self._authority(journal)
        yield self._one_record_per_dispatch(journal)
        yield self._history(blobs)
        yield self._bad_receipt(system, record, blobs)
        yield self._siblings(record, journal)
        for episode in record.episodes:
            yield self._progress(episode)
            yield self._profile_governs(system, episode, journal)
            yield self._input_unchanged(system, episode, journal)
            yield self._source_passed_through(system, episode)
            yield self._no_call_after_final(episode)
            yield self._replay_identical(episode)
            yield self._replay_order(episode)
            yield self._replay_marked(episode)
            yield self._order(episode)
            yield self._report_order(episode)
            if not _inadmissible(system, record, episode):  # judged by _bad_receipt alone
                yield from self._outcomes(system, episode)
            yield self._timeout(system, episode)
            yield self._progress_admitted(episode)
            yield self._rollout(episode)
        yield self._retry_bounded(system, record)
        yield self._retry_cap(system, record)
        yield self._attempts_counted(system, record, journal)
        yield self._identities(system, record, blobs)
        yield self._coverage(system, record, journal)
        yield self._intents_once(system, journal)
        yield self._public_and_bounded(system, blobs)
        yield self._record_readings(system, blobs)

    # -- the step itself --------------------------------------------------------------------

    @staticmethod
    @checks(
        rfc(
            "no_escape",
            ("§1.failure-contained", "§10.failure-never", "§12.M07", "§13.not-a-settlement-step"),
            "nothing a hook does escapes the post-writeback dispatch into the primary Turn",
        ),
        rfc(
            "crash_point_reached",
            ("§5.2.crash-replay", "§9.crash-retry"),
            "a crash point the SUT names is reached when armed: the soak shows crash recovery there, "
            "and one never reached would leave it unjudged",
        ),
        rfc(
            "valid_registration_installs",
            ("§4.composition-root", "§6.validated-before-call"),
            "a registration within every rule of §6 and the profile's ceilings installs",
        ),
    )
    def _step_ran(record: StepRecord) -> Finding | None:
        if record.escaped:
            return "no_escape", "M07", f"{record.escaped} escaped from the post-writeback dispatch into the primary Turn"
        if record.crash_missed:
            return "crash_point_reached", "M05", f"the process was armed to die at {record.crash_missed} but the Turn completed"
        if record.rejected_install:
            return "valid_registration_installs", "M02", f"a valid registration was rejected ({record.rejected_install})"
        return None

    # -- primary Turn (M07), effects (M12) ----------------------------------------------------

    @checks(
        rfc(
            "primary_untouched",
            ("§1.failure-contained", "§5.2.receipt-kept", "§5.2.spend", "§10.failure-never", "§12.M07"),
            "the primary store equals a run with no hooks; the dispatcher never uses the primary Turn",
        )
    )
    def _primary(self, system: ModelSystem) -> Finding | None:
        turns = system.world.turns
        for turn in turns[self.turns_seen :]:
            if turn.primary_uses:
                return "primary_untouched", "M07", f"the dispatcher used the primary Turn ({', '.join(turn.primary_uses)})"
        self.turns_seen = len(turns)
        if system.twin is None:
            return None
        ours, theirs = system.world.orch.primary_snapshot(), system.twin.snapshot()
        if ours != theirs:
            return "primary_untouched", "M07", "primary store differs from the no-hooks run: " + snapshot_difference(theirs, ours)
        return None

    @staticmethod
    @checks(rfc("no_sink_call", ("§1.no-effect", "§10.failure-never", "§12.M12", "§13.no-direct-sink"), "nothing reaches the sink"))
    def _sink(system: ModelSystem) -> Finding | None:
        sink = system.world.sink
        if sink.touched:
            return "no_sink_call", "M12", f"the sink was called {len(sink.calls)} time(s) before any governed admission"
        return None

    @staticmethod
    @checks(
        rfc(
            "no_authority_claim",
            ("§8.no-claimed-effect", "§12.M09", "§12.M12"),
            "no recorded intent claims an external write performed or new authority gained",
        )
    )
    def _authority(journal: list[dict[str, Any]]) -> Finding | None:
        for rec in journal:
            for intent in rec.get("intents") or []:
                if intent.get("external_write_performed") is not False or intent.get("grants_new_action_authority") is not False:
                    return (
                        "no_authority_claim",
                        "M12",
                        f"hook {rec.get('hook_id')} has a recorded intent claiming an external write or new authority",
                    )
        return None

    # -- journal rules (M04, M06) ---------------------------------------------------------------

    @staticmethod
    @checks(
        rfc(
            "one_record_per_dispatch",
            ("§9.replay-noop", "§14.atomic-dedupe"),
            "the journal holds one record per dispatch identity",
        )
    )
    def _one_record_per_dispatch(journal: list[dict[str, Any]]) -> Finding | None:
        ids = [r.get("dispatch_id") for r in journal]
        if len(ids) != len(set(ids)):
            return "one_record_per_dispatch", "M04", f"{len(ids)} sidecar records for {len(set(ids))} dispatch identities"
        return None

    @checks(
        rfc(
            "history_kept",
            ("§9.conflict", "§9.new-identity", "§12.M06"),
            "a final record is never lost nor overwritten with another result",
        ),
        rfc(
            "record_byte_identical",
            ("§9.replay-noop", "§9.no-rebuild", "§12.M05"),
            "a final record stays byte for byte (canonical bytes) across replays and restarts",
        ),
    )
    def _history(self, blobs: RecordBytes) -> Finding | None:
        journal = blobs.journal
        now = {r["dispatch_id"]: i for i, r in enumerate(journal)}
        for did, before in self.history.items():
            index = now.get(did)
            if index is None:
                return "history_kept", "M06", f"the final sidecar record {did[:16]}… disappeared"
            rec = journal[index]
            if blobs[index] != before:
                was = json.loads(before)
                if any(rec.get(k) != was.get(k) for k in ("status", "result_digest")) or not _same_intents(
                    rec.get("intents"), was.get("intents")
                ):
                    return "history_kept", "M06", f"the final sidecar record of hook {rec.get('hook_id')} was overwritten"
                changed = sorted(k for k in set(rec) | set(was) if rec.get(k) != was.get(k))
                return (
                    "record_byte_identical",
                    "M05",
                    (
                        f"the final sidecar record of hook {rec.get('hook_id')} changed its {', '.join(changed)} "
                        "after it was recorded (replays and restarts must leave it byte for byte)"
                    ),
                )
        for did, index in now.items():
            if journal[index].get("status") in ("proposed", "not_applicable") and did not in self.history:
                self.history[did] = blobs[index]
        return None

    # -- each dispatch episode (M05, M07, M08) ------------------------------------------------------

    @staticmethod
    @checks(
        rfc(
            "no_call_after_final",
            ("§9.replay-noop", "§12.M05"),
            "no provider is called again for a dispatch whose receipt is already recorded",
        )
    )
    def _no_call_after_final(episode: Episode) -> Finding | None:
        if episode.kind != "dispatch":
            return None
        for call in episode.calls:
            if call.dispatch_id in episode.finals_at_start:
                return (
                    "no_call_after_final",
                    "M05",
                    f"hook {call.hook_id} was called again for a dispatch whose receipt was already recorded",
                )
        return None

    @staticmethod
    @checks(
        rfc(
            "replay_identical",
            ("§9.replay-noop", "§9.conflict", "§12.M05", "§12.M06"),
            "a repeated dispatch returns the recorded receipt (its status, failure class and intents); "
            "a second delivery ends as recorded or as intent_conflict",
        )
    )
    def _replay_identical(episode: Episode) -> Finding | None:
        if episode.outcome is None:
            return None
        row = "M06" if episode.kind == "redeliver" else "M05"
        for hook in episode.outcome.hooks:
            rec = episode.finals_at_start.get(hook.dispatch_id or "")
            if rec is None:
                continue
            if not _same_intents(hook.intents, rec["intents"]):
                return "replay_identical", row, f"hook {hook.hook_id}: a repeated dispatch reported other intents than the recorded receipt"
            conflict = hook.status == "failed" and hook.failure_code == codes.INTENT_CONFLICT
            if episode.kind == "redeliver":
                if not (hook.status == rec["status"] or conflict):
                    return (
                        "replay_identical",
                        row,
                        f"hook {hook.hook_id}: a second delivery ended {hook.status}, not the recorded {rec['status']} or intent_conflict",
                    )
            elif hook.status != rec["status"] or hook.failure_code != rec.get("failure_code"):
                return (
                    "replay_identical",
                    row,
                    f"hook {hook.hook_id}: a replay ended {hook.status}/{hook.failure_code}, not the recorded receipt",
                )
        return None

    @staticmethod
    @checks(profile("replay_marked", "a repeated dispatch says it is a replay (the RFC asks for the original receipt, not a flag)"))
    def _replay_marked(episode: Episode) -> Finding | None:
        if episode.outcome is None or episode.kind == "redeliver":
            return None
        for hook in episode.outcome.hooks:
            if hook.dispatch_id in episode.finals_at_start and not hook.replayed:
                return "replay_marked", "M05", f"hook {hook.hook_id}: a replay returned the recorded receipt without saying it is one"
        return None

    @staticmethod
    @checks(
        profile(
            "intent_order",
            "a repeated dispatch reports the recorded intents in their recorded order (the RFC sets no order among intents)",
        )
    )
    def _replay_order(episode: Episode) -> Finding | None:
        if episode.outcome is None:
            return None
        for hook in episode.outcome.hooks:
            rec = episode.finals_at_start.get(hook.dispatch_id or "")
            if rec is not None and list(hook.intents) != list(rec["intents"]) and _same_intents(hook.intents, rec["intents"]):
                return "intent_order", "M05", f"hook {hook.hook_id}: a repeated dispatch reported the recorded intents in another order"
        return None

    @staticmethod
    @checks(rfc("hook_order", ("§6.stable-order", "§10.independent", "§12.M08"), "providers are called in stable hook_id order"))
    def _order(episode: Episode) -> Finding | None:
        called = [c.hook_id for c in episode.calls]  # a hook called again at once (within its invocation budget) keeps the order
        if any(a > b for a, b in itertools.pairwise(called)):
            return "hook_order", "M08", f"providers were called in the order {', '.join(called)}, not by hook_id"
        return None

    @staticmethod
    @checks(profile("report_order", "the dispatch outcome lists its hooks in dispatch (hook_id) order"))
    def _report_order(episode: Episode) -> Finding | None:
        if episode.outcome is not None:
            reported = [h.hook_id for h in episode.outcome.hooks]
            if reported != sorted(reported):
                return "report_order", "M08", f"hooks were reported in the order {', '.join(reported)}, not by hook_id"
        return None

    @checks(
        "one_outcome_per_hook",
        rfc(
            "isolated_failure",
            ("§1.failure-contained", "§8.result-shape", "§10.failure-codes", "§12.M07"),
            "each hook ends as its own provider's answer says (status, intents, and its §10 failure class); "
            "no hook ends with a result its provider never gave",
        ),
        rfc(
            "independent_budgets",
            ("§10.independent", "§10.limits", "§12.M08"),
            "only real ceilings exhaust a hook: another hook's failure takes none of its slots, and no "
            "accepted result passes the dispatch's intent ceiling",
        ),
        profile(
            "failure_retried",
            "a failed dispatch is retried on each later delivery until its calls reach the profile's max_attempts, "
            "then ends dispatch_budget_exhausted (§10: a failure may be retried under a bounded policy; when, how "
            "often and the code it then ends with are pwh's)",
        ),
        "failure_code_name",
    )
    def _outcomes(self, system: ModelSystem, episode: Episode) -> Iterator[Finding | None]:
        """Each hook ends as its own behaviour says (M07), and only real ceilings exhaust it (M08).
        A failure recorded before and not retried now is kept, as §10 allows: pwh's retry policy
        is a profile reading. A hook installed against pwh's rules only (``system.foreign``) is
        not predicted."""
        outcome = episode.outcome
        if outcome is None or not outcome.admitted or outcome.journal_error:
            return
        admitted = system.admitted(outcome.event_kind, episode.installed, episode.profile)
        reported = {h.hook_id for h in outcome.hooks} - system.foreign
        if reported != admitted:
            yield "one_outcome_per_hook", "M04", f"the dispatch reported hooks {sorted(reported)} for admitted hooks {sorted(admitted)}"
            return
        # In dispatch order (hook_id: RFC), however the outcome lists them (``report_order``).
        hooks = sorted((h for h in outcome.hooks if h.hook_id in system.hooks), key=lambda h: h.hook_id)
        # Intent slots of this dispatch taken so far; None once unknowable. Receipts already
        # recorded hold their slots first, whatever the hook order (a hook installed after the
        # first dispatch gets only what is left). A second delivery ran the providers again, and
        # whether those fresh results took slots cannot be seen from outside: no counting there.
        taken: int | None = 0
        for hook in hooks:
            if episode.finals_at_start.get(hook.dispatch_id or "") is not None:
                if episode.kind == "redeliver":
                    taken = None
                elif taken is not None and hook.status == "proposed":
                    taken += len(hook.intents)
        died = _died(system)
        for hook in hooks:
            spec = system.hooks[hook.hook_id]
            calls = [c for c in episode.calls if c.hook_id == hook.hook_id]
            if episode.finals_at_start.get(hook.dispatch_id or "") is not None:
                continue
            want = expected(spec.behaviour, calls[-1].call_number, calls[-1].hook_input) if calls else None
            cap = episode.profile.max_attempts if episode.profile is not None else system.max_attempts
            before = sum(1 for c in system.calls if c.dispatch_id == hook.dispatch_id) - len(calls)
            if want is None and hook.failure_code == codes.REGISTRATION_REJECTED and _over_ceilings(spec, episode):
                continue  # the profile lowered a ceiling under this registration: rejected before any call
            tried_before = (
                before > 0 or hook.dispatch_id in episode.ids_at_start or _died_dispatching(system, episode.receipt_id, hook.hook_id)
            )
            if want is None and tried_before:
                # Tried before (a failure on record, calls made, or a dispatch of this receipt that
                # died, which may have counted an attempt it never made): not retried now. §10
                # allows both a retry and a kept failure; under both the hook holds no result it
                # never got.
                if hook.status != "failed":
                    yield (
                        "isolated_failure",
                        "M07",
                        f"hook {hook.hook_id} ended {hook.status} on a later delivery without its provider being called again",
                    )
                    return
                no_slot = hook.failure_code == codes.DISPATCH_BUDGET_EXHAUSTED and taken is not None and taken >= system.ceiling
                if not no_slot and (before + died < cap or hook.failure_code != codes.DISPATCH_BUDGET_EXHAUSTED):
                    yield (
                        "failure_retried",
                        "M07",
                        (
                            f"hook {hook.hook_id} was not called again on a later delivery ({before} call(s) made, retry cap "
                            f"{cap}) and ended {hook.failure_code}"
                        ),
                    )
                continue
            if hook.status == "failed" and hook.failure_code == codes.DISPATCH_BUDGET_EXHAUSTED:
                # The slots already taken in this dispatch (accepted results and recorded receipts
                # met so far, in hook_id order) plus this hook's own would pass the ceiling.
                if want is not None and want.status != "failed" and (taken is None or taken + want.intents > system.ceiling):
                    continue
                if want is None and taken is not None and taken >= system.ceiling:
                    continue  # no slot was left for it: not calling it spends nothing of another hook's
                yield (
                    "independent_budgets",
                    "M08",
                    (
                        f"hook {hook.hook_id} got dispatch_budget_exhausted with {taken} of {system.ceiling} intent slots "
                        f"taken by accepted results and {before + len(calls)} attempt(s) made"
                    ),
                )
                return
            if want is None and _slow_machine(system, spec, hook, episode):
                continue  # its runner gave up before it could start it: the machine's doing, as below
            if want is None:
                yield "isolated_failure", "M07", f"hook {hook.hook_id} ended {hook.status} without its provider being called"
                return
            seen = (hook.status, hook.failure_code, len(hook.intents) if hook.status == "proposed" else 0)
            also = ALSO.get(spec.behaviour)
            if also is not None and seen == (also.status, also.code, also.intents):
                want = also
            if seen != (want.status, want.code, want.intents) and _slow_machine(system, spec, hook, episode):
                continue
            if seen != (want.status, want.code, want.intents):
                named = hook.status == "failed" and want.status == "failed" and seen[2] == want.intents
                if named and hook.failure_code not in codes.RFC_FAILURE_CODES:
                    # The SUT's own code name (or its adapter's): the §10 class is not judged.
                    yield (
                        "failure_code_name",
                        "M07",
                        f"hook {hook.hook_id} ({spec.behaviour}) failed with code {hook.failure_code!r}, not {want.code}",
                    )
                else:
                    yield (
                        "isolated_failure",
                        "M07",
                        (
                            f"hook {hook.hook_id} ({spec.behaviour}) ended {hook.status}/{hook.failure_code} "
                            f"with {len(hook.intents)} intent(s); expected {want.status}/{want.code}"
                        ),
                    )
                    return
            if taken is None:
                continue
            if hook.status != "failed" and taken + len(hook.intents) > system.ceiling:
                yield (
                    "independent_budgets",
                    "M08",
                    (
                        f"hook {hook.hook_id} was accepted with {len(hook.intents)} intent(s) while {taken} of "
                        f"{system.ceiling} intent slots of the dispatch were taken"
                    ),
                )
                return
            taken += len(hook.intents) if hook.status != "failed" else 0

    @staticmethod
    @checks(
        rfc(
            "timeout_enforced",
            ("§10.limits", "§12.M07"),
            "a dispatch gives up on a hung provider within its registered timeout (plus pwh's grace for a loaded machine)",
        )
    )
    def _timeout(system: ModelSystem, episode: Episode) -> Finding | None:
        hung = [c for c in episode.calls if c.hook_id in system.hooks and system.hooks[c.hook_id].hangs]
        if not hung or episode.outcome is None:
            return None
        limit = sum(system.hooks[c.hook_id].timeout_ms for c in hung) + TIMEOUT_GRACE_MS
        if episode.elapsed_ms > limit:
            return (
                "timeout_enforced",
                "M07",
                f"a dispatch with {len(hung)} hung provider(s) took {episode.elapsed_ms:.0f} ms (limit {limit} ms)",
            )
        return None

    @staticmethod
    @checks(
        rfc(
            "progress_dispatches_nothing",
            ("§6.validated-before-call", "§12.M04"),
            "a plain progress writeback, an event kind no hook registered, calls no provider and yields no intent",
        )
    )
    def _progress(episode: Episode) -> Finding | None:
        if episode.event_kind != "progress_recorded":
            return None
        intents = [i for h in (episode.outcome.hooks if episode.outcome else ()) for i in h.intents]
        if episode.calls or intents:
            return "progress_dispatches_nothing", "M04", "a plain progress writeback was dispatched to hooks"
        return None

    @staticmethod
    @checks(profile("progress_not_admitted", "a plain progress writeback is reported as not admitted (the RFC names no admission flag)"))
    def _progress_admitted(episode: Episode) -> Finding | None:
        if episode.event_kind == "progress_recorded" and episode.outcome is not None and episode.outcome.admitted:
            return "progress_not_admitted", "M04", "a plain progress writeback was reported as admitted for dispatch"
        return None

    @staticmethod
    @checks(
        rfc(
            "not_in_rollout_append",
            ("§3.2.not-in-append-helper", "§5.1.rollout-not-authority"),
            "no hook runs inside the rollout-event append",
        )
    )
    def _rollout(episode: Episode) -> Finding | None:
        inside = [c.hook_id for c in episode.calls if c.in_rollout_append]
        if inside:
            return "not_in_rollout_append", "M04", f"hook {inside[0]} ran inside the rollout-event append"
        return None

    # -- bad registrations (M02), bad receipts (M03), profile changes (M01) ---------------------

    @staticmethod
    @checks(
        rfc(
            "bad_registration_rejected",
            ("§3.2.no-shell-hooks", "§6.no-command-no-scope", "§6.validated-before-call", "§7.bounded-projection", "§12.M02"),
            "a registration breaking a clause of §6/§7 (or repeating an installed hook_id) is rejected, changes nothing, "
            "and no rejected registration's provider is ever called",
        )
    )
    def _bad_registration(system: ModelSystem, record: StepRecord, blobs: RecordBytes) -> Finding | None:
        """A bad registration is rejected before any provider call and changes nothing else (REG).
        One that breaks only pwh's rules is judged by ``_registration_rules``."""
        if record.bad_install is not None:
            flaw = record.step.get("flaw") or OVER_PROFILE_CEILING
            if not record.bad_install and registration_clauses(flaw):
                return "bad_registration_rejected", "M02", f"hook {record.step['hook']} {flaw} was installed"
            if record.journal_before is not None and blobs.all() != record.journal_before:
                return "bad_registration_rejected", "M02", "offering a bad registration changed the sidecar journal"
        called = [h for h in system.bad_calls if h not in system.foreign]
        if called:
            return "bad_registration_rejected", "M02", f"the provider of a rejected registration of hook {called[0]} was called"
        return None

    @staticmethod
    @checks(
        profile(
            "registration_rules",
            "pwh's registration rules beyond the clauses of §6/§7 reject at installation: a timeout or result budget over the "
            "core or profile ceiling, a zero invocation budget, duplicate or no event kinds",
        )
    )
    def _registration_rules(record: StepRecord) -> Finding | None:
        if record.bad_install is not None and not record.bad_install:
            flaw = record.step.get("flaw") or OVER_PROFILE_CEILING
            if not registration_clauses(flaw):
                return "registration_rules", "M02", f"hook {record.step.get('hook', '?')} with {flaw} was installed"
        return None

    @staticmethod
    @checks(
        rfc(
            "bad_receipt_dispatches_nothing",
            ("§5.1.identity", "§5.1.same-effect", "§5.1.committed", "§5.1.durable", "§12.M03"),
            "a receipt that is not committed, not durable, without identities or of another plan's effect calls no "
            "provider and records nothing",
        )
    )
    def _bad_receipt(system: ModelSystem, record: StepRecord, blobs: RecordBytes) -> Finding | None:
        """A receipt that is not committed, not durable, without identities or of another plan's
        effect (offered now, or a committed one of another plan's effect replayed later) calls no
        provider and records nothing (ADM, RFC §5.1, §12 M03). Whether the SUT reports such a
        dispatch as "admitted", and with which code, is not judged: the RFC names neither."""
        flaw = record.step.get("flaw") if record.step["op"] == "bad_receipt" else "effect_mismatch"
        journal = blobs.journal
        for episode in record.episodes:
            if not _inadmissible(system, record, episode):
                continue
            if episode.calls:
                return "bad_receipt_dispatches_nothing", "M03", f"a receipt with flaw {flaw} reached hook {episode.calls[0].hook_id}"
            new = [r for r in journal if r.get("source_receipt_id") == episode.receipt_id and r["dispatch_id"] not in episode.ids_at_start]
            if new:
                return (
                    "bad_receipt_dispatches_nothing",
                    "M03",
                    f"a receipt with flaw {flaw} got a sidecar record for hook {new[0].get('hook_id')}",
                )
        if record.journal_before is not None and blobs.all() != record.journal_before:
            return "bad_receipt_dispatches_nothing", "M03", f"a receipt with flaw {flaw} changed the sidecar journal"
        return None

    @staticmethod
    @checks(
        rfc(
            "profile_governs_dispatch",
            ("§5.1.enabled", "§10.profile-gates", "§12.M01", "§12.M02"),
            "the profile in force when a dispatch begins decides it: a disabled phase calls and records nothing, an "
            "allowlist lets only its hooks be called or recorded, a registration over a lowered ceiling is not called",
        )
    )
    def _profile_governs(system: ModelSystem, episode: Episode, journal: list[dict[str, Any]]) -> Finding | None:
        """The profile in force when a dispatch begins decides it: a disabled phase calls no provider
        and records nothing, an allowlist lets only its hooks be called or recorded, a lowered
        ceiling keeps a registration over it from being called (RFC §10, §12 M01). What was
        recorded before stays (``_history``). Whether the dispatch reports itself "admitted" is
        not judged: the RFC names no such flag."""
        profile = episode.profile
        if profile is None:
            return None
        new = [
            r.get("hook_id")
            for r in journal
            if r.get("source_receipt_id") == episode.receipt_id and r["dispatch_id"] not in episode.ids_at_start
        ]
        if not profile.phase_enabled:
            if episode.calls:
                return "profile_governs_dispatch", "M01", f"the profile disables the phase, yet hook {episode.calls[0].hook_id} was called"
            if new:
                return "profile_governs_dispatch", "M01", f"the profile disables the phase, yet hook {new[0]} got a sidecar record"
            return None
        outside = [h for h in [c.hook_id for c in episode.calls] + new if not profile.admits(str(h))]
        if outside:
            return "profile_governs_dispatch", "M01", f"hook {outside[0]} is not on the profile allowlist, yet it was dispatched"
        for call in episode.calls:
            spec = system.hooks.get(call.hook_id)
            if spec is not None and _over_ceilings(spec, episode):
                return (
                    "profile_governs_dispatch",
                    "M01",
                    f"hook {call.hook_id} was called though its registration is over the profile's current ceilings",
                )
        return None

    # -- hooks that change their input, hooks of one capability (M08) ---------------------------

    @staticmethod
    @checks(
        rfc(
            "input_unchanged",
            ("§7.immutable-input", "§6.no-hook-dependency", "§12.M08"),
            "every hook is handed the committed source's identities (goal, agent, Todo, Turn, effect, step and event "
            "kind) as committed, whatever another hook wrote into its input; core records the committed event kind",
        )
    )
    def _input_unchanged(system: ModelSystem, episode: Episode, journal: list[dict[str, Any]]) -> Finding | None:
        """Every hook of a dispatch is handed the source's identities exactly as committed, whatever
        an earlier hook did to its own input, and core records the committed source (INP: the input
        is immutable). Its opaque fields are ``_source_passed_through``'s."""
        receipt = _committed_receipt(system, episode)
        if receipt is None:
            return None
        for call in episode.calls:
            seen = _source_seen(call)
            if seen is None or any(k in seen and k in receipt and seen[k] != receipt[k] for k in SOURCE_IDENTITY):
                return "input_unchanged", "M08", f"hook {call.hook_id} was handed a source that differs from the committed receipt"
        for rec in journal:
            if rec.get("source_receipt_id") == episode.receipt_id and rec.get("event_kind") != receipt.get("event_kind"):
                return "input_unchanged", "M08", f"the sidecar record of hook {rec.get('hook_id')} stores another event kind than committed"
        return None

    @staticmethod
    @checks(
        profile(
            "source_passed_through",
            "the source's opaque fields (receipt id, revision, commit time) reach the hook unchanged (§7 only asks for opaque ids)",
        )
    )
    def _source_passed_through(system: ModelSystem, episode: Episode) -> Finding | None:
        receipt = _committed_receipt(system, episode)
        if receipt is None:
            return None
        for call in episode.calls:
            seen = _source_seen(call) or {}
            changed = sorted(k for k in seen if k in receipt and k not in SOURCE_IDENTITY and seen[k] != receipt[k])
            if changed:
                return "source_passed_through", "M08", f"hook {call.hook_id} was handed the source's {', '.join(changed)} changed"
        return None

    @staticmethod
    @checks(
        rfc(
            "hooks_independent",
            ("§9.dispatch-id", "§10.independent", "§12.M08"),
            "hooks, of one capability or not, keep their own dispatch identities, intents and records",
        )
    )
    def _siblings(record: StepRecord, journal: list[dict[str, Any]]) -> Finding | None:
        """Hooks, of one capability or not, keep their own dispatch identities, intents and records."""
        owner = {r["dispatch_id"]: r.get("hook_id") for r in journal}
        for episode in record.episodes:
            if episode.outcome is None:
                continue
            by_id: dict[str, str] = {}
            for hook in episode.outcome.hooks:
                if hook.dispatch_id is None:
                    continue
                other = by_id.setdefault(hook.dispatch_id, hook.hook_id)
                if other != hook.hook_id:
                    return "hooks_independent", "M08", f"hooks {other} and {hook.hook_id} share one dispatch identity"
                if any(i.get("hook_id") != hook.hook_id for i in hook.intents):
                    return "hooks_independent", "M08", f"hook {hook.hook_id} was reported with another hook's intents"
                if owner.get(hook.dispatch_id, hook.hook_id) != hook.hook_id:
                    return (
                        "hooks_independent",
                        "M08",
                        f"the sidecar record of hook {hook.hook_id} belongs to hook {owner[hook.dispatch_id]}",
                    )
        return None

    # -- the retry bound (RFC §10: bounded; its number and bookkeeping are pwh's) ------------------

    @staticmethod
    @checks(
        rfc(
            "retry_bounded",
            ("§10.limits", "§10.observable-retry"),
            "within one delivery a hook is called at most its registration's max_invocations_per_dispatch times "
            "(the bound every reading of the budget keeps)",
        )
    )
    def _retry_bounded(system: ModelSystem, record: StepRecord) -> Finding | None:
        """Within one attempt (one delivery of a dispatch) at most ``max_invocations_per_dispatch``
        calls of a hook, its registration's own number: a SUT reading it per dispatch identity over
        every delivery keeps this too. How many deliveries may retry is ``_retry_cap``'s (pwh's number)."""
        for episode in record.episodes:
            within: Counter[str] = Counter()
            for call in episode.calls:
                within[call.dispatch_id or ""] += 1
                spec = system.hooks.get(call.hook_id)
                if spec is not None and within[call.dispatch_id or ""] > spec.max_invocations:
                    return (
                        "retry_bounded",
                        "M08",
                        (
                            f"hook {call.hook_id} was called {within[call.dispatch_id or '']} times in one attempt "
                            f"(max_invocations_per_dispatch {spec.max_invocations})"
                        ),
                    )
        return None

    @checks(
        profile(
            "retry_cap",
            "a dispatch identity's provider calls, over every delivery, replay, crash and restart, stop at the profile's "
            "max_attempts (§10 asks for a bounded retry policy; the number is pwh's)",
        )
    )
    def _retry_cap(self, system: ModelSystem, record: StepRecord) -> Finding | None:
        """No call once the calls made for its identity reached the retry cap in force (SPEC §0
        "Budgets, read precisely", §4), counted over the whole history."""
        made = self.calls_made.before(system, record)
        for episode in record.episodes:
            cap = episode.profile.max_attempts if episode.profile is not None else system.max_attempts
            for call in episode.calls:
                did = call.dispatch_id or ""
                if made[did] >= cap:
                    return (
                        "retry_cap",
                        "M08",
                        f"hook {call.hook_id} was called again after {made[did]} call(s) for its dispatch (retry cap {cap})",
                    )
                made[did] += 1
        return None

    @checks(
        profile(
            "attempts_counted",
            "the record a dispatch leaves counts every provider call made for its identity, counted before each call "
            "(the RFC keeps no attempt count)",
        )
    )
    def _attempts_counted(self, system: ModelSystem, record: StepRecord, journal: list[dict[str, Any]]) -> Finding | None:
        """The record counts every call made for its identity, with at most one more per dispatch
        that died before recording (it counted one it never made)."""
        now = {r["dispatch_id"]: r for r in journal}
        made = self.calls_made.before(system, record)
        for episode in record.episodes:
            for call in episode.calls:
                made[call.dispatch_id or ""] += 1
        died = _died(system)
        for episode in record.episodes:
            if episode.outcome is None or episode.outcome.journal_error:
                continue
            for did in dict.fromkeys(c.dispatch_id or "" for c in episode.calls):
                rec = now.get(did)
                if rec is None or episode.finals_at_start.get(did) is not None:
                    continue  # a final record stays as it was recorded
                counted = rec.get("attempts")
                if type(counted) is not int or not made[did] <= counted <= made[did] + died:
                    return (
                        "attempts_counted",
                        "M08",
                        (f"hook {rec.get('hook_id')}: {made[did]} call(s) made for its dispatch, but the record counts {counted!r}"),
                    )
        return None

    # -- after the step: recovery, scheduler, identity, boundary --------------------------------

    @checks(
        rfc(
            "one_outcome_per_hook",
            ("§5.2.sidecar-identity", "§12.M04", "§14.atomic-dedupe"),
            "each committed receipt x admitted hook has exactly one outcome and, after every step (crash steps end "
            "recovered), one record; no record belongs to an uncommitted receipt",
        )
    )
    def _coverage(self, system: ModelSystem, record: StepRecord, journal: list[dict[str, Any]]) -> Finding | None:
        """After every step (crash steps end recovered), each committed receipt x admitted hook has
        exactly one recorded outcome (M04, JNL-4)."""
        for episode in record.episodes:
            out = episode.outcome
            if (
                out is not None
                and out.admitted
                and not out.journal_error
                and episode.receipt_id
                and not _inadmissible(system, record, episode)
            ):
                self.covered[episode.receipt_id] = frozenset(system.admitted(episode.event_kind, episode.installed, episode.profile))
        committed = {r["receipt_id"] for r in system.committed()}
        count: dict[tuple[Any, Any], int] = {}
        for rec in journal:
            key = (rec.get("source_receipt_id"), rec.get("hook_id"))
            count[key] = count.get(key, 0) + 1
            if key[0] not in committed:
                return "one_outcome_per_hook", "M04", f"a sidecar record of hook {key[1]} belongs to no committed receipt"
        for (_receipt, hook), n in count.items():
            if n != 1:
                return "one_outcome_per_hook", "M04", f"hook {hook} has {n} records for one committed receipt"
        for receipt, hooks in self.covered.items():
            missing = sorted(h for h in hooks if (receipt, h) not in count)
            if missing:
                return "one_outcome_per_hook", "M04", f"after the step, hook {missing[0]} has no recorded outcome for a committed receipt"
        return None

    @checks(
        rfc(
            "intent_once",
            ("§9.intent-id", "§9.executor-dedupe", "§9.new-identity", "§12.M05"),
            "each intent is recorded once, stays recorded once delivered, and is executed once downstream",
        )
    )
    def _intents_once(self, system: ModelSystem, journal: list[dict[str, Any]]) -> Finding | None:
        """Each intent is recorded once and executed once downstream (M05, JNL-7)."""
        seen: set[str] = set()
        for rec in journal:
            ids = [i.get("intent_id") for i in rec.get("intents") or []]
            for iid in ids:
                if iid in seen:
                    return "intent_once", "M05", "one intent_id is recorded twice in the journal"
                seen.add(iid)
            if rec.get("status") == "proposed":
                self.delivered.setdefault(rec["dispatch_id"], set()).update(ids)
            gone = self.delivered.get(rec["dispatch_id"], set()) - set(ids)
            if gone:
                return "intent_once", "M06", f"hook {rec.get('hook_id')}: an intent the scheduler already received is no longer recorded"
        scheduler = system.scheduler
        twice = [k for k, n in scheduler.executions.items() if n > 1]
        if twice:
            return "intent_once", "M05", f"{len(twice)} intent(s) executed more than once downstream"
        if any(e.code == DUPLICATE_CONTENT_DIFFERS for e in scheduler.entries):
            return "intent_once", "M04", "the scheduler received two different intents under one intent_id"
        return None

    @checks(
        rfc(
            "stable_identity",
            ("§5.1.durable", "§9.dispatch-id", "§9.intent-id", "§9.new-identity"),
            "same inputs, same dispatch and intent identity; any component changed, a new one; never reused",
        )
    )
    def _identities(self, system: ModelSystem, record: StepRecord, blobs: RecordBytes) -> Finding | None:
        """Same inputs, same identity; any component changed, a new one; never reused (M04, JNL-3/4).

        The identities bound so far are kept, so binding again what was bound before cannot fail:
        a record byte-identical to one already bound, and the intents of an earlier step's
        dispatches, are not bound again (what they would bind is already there).
        """
        fresh = [rec for index, rec in enumerate(blobs.journal) if blobs.get(index) not in self.identified]
        for rec in fresh:
            key = (rec.get("source_receipt_id"), rec.get("hook_id"), rec.get("registration_schema_version"), rec.get("event_kind"))
            problem = _bind(self.dispatch_keys, self.dispatch_by_key, rec["dispatch_id"], key)
            if problem:
                return "stable_identity", "M04", f"dispatch identity of hook {rec.get('hook_id')}: {problem}"
        intents = [i for rec in fresh for i in rec.get("intents") or []]
        intents += [i for e in record.episodes if e.outcome is not None for h in e.outcome.hooks for i in h.intents]
        for intent in intents:
            intent_key = digest({k: intent.get(k) for k in ("source_dispatch_id", "intent_kind", "policy_version", "payload")})
            problem = _bind(self.intent_keys, self.intent_by_key, intent.get("intent_id"), intent_key)
            if problem:
                return "stable_identity", "M04", f"intent identity of hook {intent.get('hook_id')}: {problem}"
        self.identified.update(b for b in (blobs.get(i) for i in range(len(blobs.journal))) if b is not None)
        return None

    @checks(
        rfc(
            "journal_bounded",
            ("§8.within-budget", "§9.journal-contents"),
            "the intents a record holds fit the hook's own max_result_bytes",
        ),
        rfc(
            "journal_public_safe",
            ("§7.input-excludes", "§9.journal-contents", "§10.failure-codes", "§12.M13"),
            "records carry no private value and no exception text; a failure record holds one compact code and no intent",
        ),
    )
    def _public_and_bounded(self, system: ModelSystem, blobs: RecordBytes) -> Finding | None:
        """Records are public-safe, compact and bounded (M13, JNL-6). Whether a failure code is
        one of the §10 example names, and the envelope's size, are ``_record_readings``'."""
        for index, rec in enumerate(blobs.journal):
            blob = blobs[index]
            if blob in self.scanned:
                continue
            spec = system.hooks.get(rec.get("hook_id", ""))
            budget = spec.max_result_bytes if spec else 16384
            held = len(canonical_bytes(rec.get("intents") or []))
            if held > budget:
                return (
                    "journal_bounded",
                    "M13",
                    f"the intents recorded for hook {rec.get('hook_id')} are {held} bytes (max_result_bytes {budget})",
                )
            default = self.scanner is self._own_scanner
            found = [] if default and blob in _SCANNED_CLEAN else self.scanner.scan_value(rec)
            if found:
                return "journal_public_safe", "M13", f"a sidecar record carries a {found[0].category} at {found[0].path}"
            if default:
                _remember_clean(blob)
            code = rec.get("failure_code")
            if rec.get("status") == "failed" and (not (isinstance(code, str) and COMPACT_CODE.fullmatch(code)) or rec.get("intents")):
                return "journal_public_safe", "M13", f"a failure record of hook {rec.get('hook_id')} is not one compact stable code"
            if b"Traceback" in blob or b"Error(" in blob:
                return "journal_public_safe", "M13", "a sidecar record carries exception text"
            self.scanned.add(blob)
        return None

    @checks(
        profile(
            "record_envelope",
            f"a sidecar record is its result (at most max_result_bytes) plus at most {RECORD_ENVELOPE_BYTES} bytes of envelope",
        ),
        profile(
            "failure_code_name",
            "failure codes are the RFC's §10 example names (§10 lists them with 例如, for example)",
        ),
    )
    def _record_readings(self, system: ModelSystem, blobs: RecordBytes) -> Finding | None:
        """pwh's readings of a record: its envelope's size, its failure code's name. Each record is
        read once (a divergence is reported for the record that shows it, not again every step)."""
        for index, rec in enumerate(blobs.journal):
            blob = blobs.get(index)
            if blob is None or blob in self.read:
                continue
            self.read.add(blob)
            spec = system.hooks.get(rec.get("hook_id", ""))
            bound = (spec.max_result_bytes if spec else 16384) + RECORD_ENVELOPE_BYTES
            if len(blob) > bound:
                return "record_envelope", "M13", f"a sidecar record of hook {rec.get('hook_id')} is {len(blob)} bytes (bound {bound})"
            code = rec.get("failure_code")
            if rec.get("status") == "failed" and code not in codes.RFC_FAILURE_CODES:
                return "failure_code_name", "M13", f"a failure record of hook {rec.get('hook_id')} uses code {code!r}"
        return None


def _declarations(cls: type) -> tuple[dict[str, tuple[str, ...]], tuple[Invariant, ...]]:
    """Each check method of ``cls`` -> the invariants it can report; every declaration, in order."""
    found: dict[str, tuple[str, ...]] = {}
    declared: list[Invariant] = []
    for name, member in vars(cls).items():
        method = member.__func__ if isinstance(member, staticmethod) else member
        names = getattr(method, "__invariants__", None)
        if names is not None:
            found[name] = names
            declared += getattr(method, "__declares__", ())
    return found, tuple(declared)


# Each check method of the judge -> the invariants it can report (the coverage report counts them).
CHECKS, DECLARED = _declarations(Judge)
# Every invariant, by name: its kind and its clauses or reading.
INVARIANTS: dict[str, Invariant] = index_declarations(DECLARED, (n for names in CHECKS.values() for n in names))


def kind_of(invariant: str) -> Kind:
    """The kind of ``invariant``; :class:`UndeclaredInvariant` for a name no check declares."""
    declared = INVARIANTS.get(invariant)
    if declared is None:
        raise UndeclaredInvariant(f"a check reported invariant {invariant!r}, which no declaration names (a harness bug)")
    return declared.kind


@functools.cache
def registration_clauses(flaw: str) -> tuple[str, ...]:
    """The clauses a registration with ``flaw`` breaks, as the step library's table of flaws
    declares them; empty when only pwh's rules reject it (the matrix judges those as profile)."""
    if flaw == DUPLICATE:
        return ("§6.validated-before-call",)
    from fakes._packets import BAD_REGISTRATIONS

    entry = BAD_REGISTRATIONS.get(flaw)
    clause = entry[2] if entry is not None else None
    return citation_ids(clause) if clause else ()


def _same_intents(a: Any, b: Any) -> bool:
    """The same intents, in any order (their order is ``intent_order``'s, a profile reading)."""

    def key(intent: Any) -> str:
        return json.dumps(intent, sort_keys=True, default=str)

    return sorted(map(key, a or [])) == sorted(map(key, b or []))


def _committed_receipt(system: ModelSystem, episode: Episode) -> dict[str, Any] | None:
    """The committed receipt an episode with provider calls dispatched (None: no call, or none)."""
    if not episode.calls:
        return None
    return next((r for r in system.committed() if r.get("receipt_id") == episode.receipt_id), None)


def _source_seen(call: Any) -> dict[str, Any] | None:
    """The source block a provider was handed, as it was before its body ran (None: not an object).
    Read only: a parse is kept by the bytes it was read from (two invariants read every call)."""
    text = call.source_seen
    if type(text) is bytes and text in _SOURCES_SEEN:
        return _SOURCES_SEEN[text]
    try:
        seen = json.loads(text)
    except ValueError:
        return None
    found = seen if isinstance(seen, dict) else None
    if type(text) is bytes:
        if len(_SOURCES_SEEN) >= _SOURCES_SEEN_MAX:
            _SOURCES_SEEN.pop(next(iter(_SOURCES_SEEN)))
        _SOURCES_SEEN[text] = found
    return found


_SOURCES_SEEN: dict[bytes, dict[str, Any] | None] = {}
_SOURCES_SEEN_MAX = 1024


class RecordBytes:
    """The canonical bytes of each record of one step's journal, each computed once, when a check
    first asks (so a record that is not JSON fails where it always did: at the first check that
    encodes it)."""

    def __init__(self, journal: list[dict[str, Any]], kept: dict[int, tuple[Any, bytes]] | None = None) -> None:
        self.journal = journal
        self._bytes: dict[int, bytes] = {}
        # The judge's bytes of records seen at earlier steps, by the record object's id, when the
        # journal's records are objects that keep their content (ObservedSUT.records_shared).
        self._kept = kept

    def __getitem__(self, index: int) -> bytes:
        found = self._bytes.get(index)
        if found is None:
            record = self.journal[index]
            kept = self._kept
            if kept is None:
                found = canonical_bytes(record)
            else:
                seen = kept.get(id(record))
                if seen is not None and seen[0] is record:
                    found = seen[1]
                else:
                    found = canonical_bytes(record)
                    kept[id(record)] = (record, found)
            self._bytes[index] = found
        return found

    def get(self, index: int) -> bytes | None:
        """The record's bytes, or None when it is not JSON (the check that asks goes on without)."""
        try:
            return self[index]
        except CanonicalError:
            return None

    def all(self) -> list[bytes]:
        return [self[i] for i in range(len(self.journal))]


# Records (their canonical bytes) the default boundary scanner found clean, in any run of this
# process: the scan is a function of the record alone (the judge's scanner has no declared names),
# and the same ids recur in every example (the orchestrator's ids are seeded). Bounded, emptied
# when full; it holds only clean records.
_SCANNED_CLEAN: set[bytes] = set()
_SCANNED_CLEAN_MAX = 4096


def _remember_clean(blob: bytes) -> None:
    if len(_SCANNED_CLEAN) >= _SCANNED_CLEAN_MAX:
        _SCANNED_CLEAN.clear()
    _SCANNED_CLEAN.add(blob)


class CallCounts:
    """Provider calls per dispatch identity over a run's ``system.calls`` (a list that only grows),
    each call counted once, as the list grows; a list that did not just grow is counted again."""

    def __init__(self) -> None:
        self._kept: tuple[Any, int, Counter[str]] | None = None  # (the list, calls counted, the counts)

    def before(self, system: ModelSystem, record: StepRecord) -> Counter[str]:
        """Provider calls per dispatch identity over the whole history, before this step (a new
        counter: the caller counts on in it)."""
        calls = system.calls
        kept = self._kept
        if kept is None or kept[0] is not calls or kept[1] > len(calls):
            kept = (calls, 0, Counter())
        counts = kept[2]
        counts.update(c.dispatch_id or "" for c in calls[kept[1] :])
        self._kept = (calls, len(calls), counts)
        made = Counter(counts)
        for episode in record.episodes:
            made.subtract(c.dispatch_id or "" for c in episode.calls)
        return made


def _died(system: ModelSystem) -> int:
    """Dispatches that died before they ended (a crash step): each may have counted an attempt
    for a hook it never got to call."""
    return sum(1 for episode in system.episodes if episode.outcome is None)


def _died_dispatching(system: ModelSystem, receipt_id: str | None, hook_id: str) -> bool:
    """Whether a dispatch of ``receipt_id`` died before it ended (a crash step) with ``hook_id``
    installed: it may have counted an attempt for the hook that it never made."""
    return any(e.outcome is None and e.receipt_id == receipt_id and hook_id in e.installed for e in system.episodes)


def _inadmissible(system: ModelSystem, record: StepRecord, episode: Episode) -> bool:
    """The episode dispatches a receipt that must dispatch nothing: one a bad_receipt step offered,
    or a committed receipt of another plan's effect (on any later replay or recovery too)."""
    if record.step["op"] == "bad_receipt":
        return True
    if not system.mismatched:
        return False
    return episode.receipt_id in system.mismatched


def _slow_machine(system: ModelSystem, spec: Any, hook: Any, episode: Episode) -> bool:
    """A provider that should have answered was timed out, in real time, by a dispatch that did
    wait at least its limit: on a machine too busy to run it in time, that is the machine's doing,
    not the SUT's (a real runner holds each provider to its wall-clock limit, as it must). Never in
    simulation, where an ordinary provider answers at once on the virtual clock, so a timeout of
    one there is always the SUT's; nor when the dispatch gave up sooner than the limit."""
    return not system.simulated and hook.failure_code == codes.PRODUCER_TIMED_OUT and episode.elapsed_ms >= spec.timeout_ms


def _over_ceilings(spec: Any, episode: Episode) -> bool:
    """The hook's registration is over the ceilings of the profile in force for ``episode``."""
    profile = episode.profile
    return profile is not None and spec.timeout_ms > profile.budget_ceilings.get("timeout_ms", spec.timeout_ms)


def _bind(forward: dict[Any, Any], backward: dict[Any, Any], ident: Any, key: Any) -> str | None:
    """Record ``ident <-> key``; a mismatch either way is a broken identity rule."""
    if forward.get(ident, key) != key:
        return "one identity now stands for different inputs"
    if backward.get(key, ident) != ident:
        return "the same inputs got a different identity"
    forward[ident] = key
    backward[key] = ident
    return None
