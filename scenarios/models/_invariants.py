"""The invariants every model step must keep, each tagged with the matrix row its rule belongs to.

:class:`Judge` remembers what earlier steps showed (final records, identities, deliveries) and
checks one step at a time; the first broken invariant is the finding. The checks are ordered so
that the most direct statement of a broken rule wins (a rolled-back writeback is reported as a
disturbed primary, not as the orphan sidecar record it leaves behind).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fakes import snapshot_difference
from fakes._scheduler import DUPLICATE_CONTENT_DIFFERS
from pwh import BoundaryScanner, CanonicalError, canonical_bytes, digest
from pwh._core import codes

from ._catalog import ALSO, expected
from ._observe import Episode
from ._system import ModelSystem, StepRecord

# How long past its registered timeout a dispatch may take to give up on a hung hook: the same
# slack as the Gherkin step "the Turn gave up on hook ... within its timeout".
TIMEOUT_GRACE_MS = 700
# A sidecar record is a hook's result (at most its max_result_bytes) plus a fixed envelope.
RECORD_ENVELOPE_BYTES = 4096


@dataclass(frozen=True)
class Violation:
    """A broken invariant: which, the row whose rule it is, at which step, and what was seen."""

    invariant: str
    row: str
    step: int
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"invariant": self.invariant, "row": self.row, "step": self.step, "message": self.message}


class ModelViolation(AssertionError):
    """Raised by a model run when a step breaks an invariant."""

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
        self.identified: set[bytes] = set()  # records whose identities are bound (by their canonical bytes)
        self.turns_seen = 0
        self.scanner = BoundaryScanner()

    def check(self, system: ModelSystem, record: StepRecord) -> Violation | None:
        for finding in self._findings(system, record):
            if finding is not None:
                invariant, row, message = finding
                return Violation(invariant, row, record.index, message)
        return None

    def _findings(self, system: ModelSystem, record: StepRecord) -> Iterator[Finding | None]:
        yield self._step_ran(record)
        if record.escaped or record.crash_missed:
            return
        journal = system.journal()
        blobs = RecordBytes(journal)
        yield self._bad_registration(system, record, blobs)
        yield self._primary(system)
        yield self._sink(system)
        yield self._authority(journal)
        yield self._one_record_per_dispatch(journal)
        yield self._history(blobs)
        yield self._bad_receipt(system, record, blobs)
        yield self._siblings(record, journal)
        for episode in record.episodes:
            yield self._profile_governs(system, episode, journal)
            yield self._input_unchanged(system, episode, journal)
            yield self._no_call_after_final(episode)
            yield self._replay_identical(episode)
            yield self._order(episode)
            if not _inadmissible(system, record, episode):  # judged by _bad_receipt alone
                yield from self._outcomes(system, episode)
            yield self._timeout(system, episode)
            yield self._progress(episode)
            yield self._rollout(episode)
        yield self._retry_bounded(system, record, journal)
        yield self._identities(system, record, blobs)
        yield self._coverage(system, record, journal)
        yield self._intents_once(system, journal)
        yield self._public_and_bounded(system, blobs)

    # -- the step itself --------------------------------------------------------------------

    @staticmethod
    def _step_ran(record: StepRecord) -> Finding | None:
        if record.escaped:
            return "no_escape", "M07", f"{record.escaped} escaped from the post-writeback dispatch into the primary Turn"
        if record.crash_missed:
            return "crash_point_reached", "M05", f"the process was armed to die at {record.crash_missed} but the Turn completed"
        if record.rejected_install:
            return "valid_registration_installs", "M02", f"a valid registration was rejected ({record.rejected_install})"
        return None

    # -- primary Turn (M07), effects (M12) ----------------------------------------------------

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
    def _sink(system: ModelSystem) -> Finding | None:
        sink = system.world.sink
        if sink.touched:
            return "no_sink_call", "M12", f"the sink was called {len(sink.calls)} time(s) before any governed admission"
        return None

    @staticmethod
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
    def _one_record_per_dispatch(journal: list[dict[str, Any]]) -> Finding | None:
        ids = [r.get("dispatch_id") for r in journal]
        if len(ids) != len(set(ids)):
            return "one_record_per_dispatch", "M04", f"{len(ids)} sidecar records for {len(set(ids))} dispatch identities"
        return None

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
                if any(rec.get(k) != was.get(k) for k in ("status", "intents", "result_digest")):
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
    def _replay_identical(episode: Episode) -> Finding | None:
        if episode.outcome is None:
            return None
        row = "M06" if episode.kind == "redeliver" else "M05"
        for hook in episode.outcome.hooks:
            rec = episode.finals_at_start.get(hook.dispatch_id or "")
            if rec is None:
                continue
            if list(hook.intents) != rec["intents"]:
                return "replay_identical", row, f"hook {hook.hook_id}: a repeated dispatch reported other intents than the recorded receipt"
            conflict = hook.status == "failed" and hook.failure_code == codes.INTENT_CONFLICT
            if episode.kind == "redeliver":
                if not (hook.status == rec["status"] or conflict):
                    return (
                        "replay_identical",
                        row,
                        f"hook {hook.hook_id}: a second delivery ended {hook.status}, not the recorded {rec['status']} or intent_conflict",
                    )
            elif hook.status != rec["status"] or hook.failure_code != rec.get("failure_code") or not hook.replayed:
                return (
                    "replay_identical",
                    row,
                    f"hook {hook.hook_id}: a replay ended {hook.status}/{hook.failure_code} (replayed={hook.replayed}), not the recorded receipt",
                )
        return None

    @staticmethod
    def _order(episode: Episode) -> Finding | None:
        called = [c.hook_id for c in episode.calls]
        if any(a >= b for a, b in itertools.pairwise(called)):
            return "hook_order", "M08", f"providers were called in the order {', '.join(called)}, not by hook_id"
        if episode.outcome is not None:
            reported = [h.hook_id for h in episode.outcome.hooks]
            if reported != sorted(reported):
                return "hook_order", "M08", f"hooks were reported in the order {', '.join(reported)}, not by hook_id"
        return None

    def _outcomes(self, system: ModelSystem, episode: Episode) -> Iterator[Finding | None]:
        """Each hook ends as its own behaviour says (M07), and only real ceilings exhaust it (M08)."""
        outcome = episode.outcome
        if outcome is None or not outcome.admitted or outcome.journal_error:
            return
        admitted = system.admitted(outcome.event_kind, episode.installed, episode.profile)
        reported = {h.hook_id for h in outcome.hooks}
        if reported != admitted:
            yield "one_outcome_per_hook", "M04", f"the dispatch reported hooks {sorted(reported)} for admitted hooks {sorted(admitted)}"
            return
        # Intent slots of this dispatch taken so far; None once unknowable. Receipts already
        # recorded hold their slots first, whatever the hook order (a hook installed after the
        # first dispatch gets only what is left). A second delivery ran the providers again, and
        # whether those fresh results took slots cannot be seen from outside: no counting there.
        taken: int | None = 0
        for hook in outcome.hooks:
            if episode.finals_at_start.get(hook.dispatch_id or "") is not None:
                if episode.kind == "redeliver":
                    taken = None
                elif taken is not None and hook.status == "proposed":
                    taken += len(hook.intents)
        for hook in outcome.hooks:
            spec = system.hooks[hook.hook_id]
            calls = [c for c in episode.calls if c.hook_id == hook.hook_id]
            if episode.finals_at_start.get(hook.dispatch_id or "") is not None:
                continue
            want = expected(spec.behaviour, calls[-1].call_number, calls[-1].hook_input) if calls else None
            if hook.status == "failed" and hook.failure_code == codes.DISPATCH_BUDGET_EXHAUSTED:
                # The slots already taken in this dispatch (accepted results and recorded receipts
                # met so far, in hook_id order) plus this hook's own would pass the ceiling.
                if want is not None and want.status != "failed" and (taken is None or taken + want.intents > system.ceiling):
                    continue
                tried = sum(1 for c in system.calls if c.dispatch_id == hook.dispatch_id)
                cap = episode.profile.max_attempts if episode.profile is not None else system.max_attempts
                # The retry cap (SPEC §0: not max_invocations), on the attempts counted before each
                # call: a dispatch that died may have counted one it never made.
                if want is None and tried + _died(system) >= cap:
                    continue
                yield (
                    "independent_budgets",
                    "M08",
                    (
                        f"hook {hook.hook_id} got dispatch_budget_exhausted with {taken} of {system.ceiling} intent slots "
                        f"taken by accepted results and {tried} attempt(s) made"
                    ),
                )
                return
            if want is None and hook.failure_code == codes.REGISTRATION_REJECTED and _over_ceilings(spec, episode):
                continue  # the profile lowered a ceiling under this registration: rejected before any call
            if want is None:
                yield "isolated_failure", "M07", f"hook {hook.hook_id} ended {hook.status} without its provider being called"
                return
            seen = (hook.status, hook.failure_code, len(hook.intents) if hook.status == "proposed" else 0)
            also = ALSO.get(spec.behaviour)
            if also is not None and seen == (also.status, also.code, also.intents):
                want = also
            if seen != (want.status, want.code, want.intents):
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
            taken += len(hook.intents)

    @staticmethod
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
    def _progress(episode: Episode) -> Finding | None:
        if episode.event_kind == "progress_recorded" and (episode.calls or (episode.outcome and episode.outcome.admitted)):
            return "progress_dispatches_nothing", "M04", "a plain progress writeback was dispatched to hooks"
        return None

    @staticmethod
    def _rollout(episode: Episode) -> Finding | None:
        inside = [c.hook_id for c in episode.calls if c.in_rollout_append]
        if inside:
            return "not_in_rollout_append", "M04", f"hook {inside[0]} ran inside the rollout-event append"
        return None

    # -- bad registrations (M02), bad receipts (M03), profile changes (M01) ---------------------

    @staticmethod
    def _bad_registration(system: ModelSystem, record: StepRecord, blobs: RecordBytes) -> Finding | None:
        """A bad registration is rejected before any provider call and changes nothing else (REG)."""
        if record.bad_install is not None:
            flaw = record.step.get("flaw") or "a timeout over the profile's current ceiling"
            if not record.bad_install:
                return "bad_registration_rejected", "M02", f"hook {record.step['hook']} {flaw} was installed"
            if record.journal_before is not None and blobs.all() != record.journal_before:
                return "bad_registration_rejected", "M02", "offering a bad registration changed the sidecar journal"
        if system.bad_calls:
            return "bad_registration_rejected", "M02", f"the provider of a rejected registration of hook {system.bad_calls[0]} was called"
        return None

    @staticmethod
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
    def _input_unchanged(system: ModelSystem, episode: Episode, journal: list[dict[str, Any]]) -> Finding | None:
        """Every hook of a dispatch is handed the source exactly as committed, whatever an earlier
        hook did to its own input, and core records the committed source (INP: the input is immutable)."""
        if not episode.calls:
            return None
        receipt = next((r for r in system.committed() if r.get("receipt_id") == episode.receipt_id), None)
        if receipt is None:
            return None
        for call in episode.calls:
            try:
                seen = json.loads(call.source_seen)
            except ValueError:
                seen = None
            if not isinstance(seen, dict) or any(seen[k] != receipt[k] for k in seen if k in receipt):
                return "input_unchanged", "M08", f"hook {call.hook_id} was handed a source that differs from the committed receipt"
        for rec in journal:
            if rec.get("source_receipt_id") == episode.receipt_id and rec.get("event_kind") != receipt.get("event_kind"):
                return "input_unchanged", "M08", f"the sidecar record of hook {rec.get('hook_id')} stores another event kind than committed"
        return None

    @staticmethod
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

    # -- the retry bound (SPEC §0 "Budgets, read precisely", §4) ----------------------------------

    @staticmethod
    def _retry_bounded(system: ModelSystem, record: StepRecord, journal: list[dict[str, Any]]) -> Finding | None:
        """Provider calls per dispatch identity stay under the profile's retry cap, counted over the
        whole history, whatever reached the hook (dispatches, second deliveries, replays, crashes
        and restarts; SPEC §0, §4): within one attempt at most ``max_invocations_per_dispatch``; no
        call once the calls made for that identity reached the cap in force; and the record a
        dispatch leaves counts every call made for its identity (counted before each call, so a
        crash cannot lose one), with at most one more per dispatch that died before recording."""
        now = {r["dispatch_id"]: r for r in journal}
        made: dict[str, int] = {}
        for call in system.calls:
            made[call.dispatch_id or ""] = made.get(call.dispatch_id or "", 0) + 1
        for episode in record.episodes:  # back to the count before this step
            for call in episode.calls:
                made[call.dispatch_id or ""] -= 1
        for episode in record.episodes:
            cap = episode.profile.max_attempts if episode.profile is not None else system.max_attempts
            within: dict[str, int] = {}
            for call in episode.calls:
                did = call.dispatch_id or ""
                within[did] = within.get(did, 0) + 1
                spec = system.hooks.get(call.hook_id)
                if spec is not None and within[did] > spec.max_invocations:
                    return (
                        "retry_bounded",
                        "M08",
                        (
                            f"hook {call.hook_id} was called {within[did]} times in one attempt "
                            f"(max_invocations_per_dispatch {spec.max_invocations})"
                        ),
                    )
                if made.get(did, 0) >= cap:
                    return (
                        "retry_bounded",
                        "M08",
                        (f"hook {call.hook_id} was called again after {made[did]} call(s) for its dispatch (retry cap {cap})"),
                    )
                made[did] = made.get(did, 0) + 1
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
                        "retry_bounded",
                        "M08",
                        (f"hook {rec.get('hook_id')}: {made[did]} call(s) made for its dispatch, but the record counts {counted!r}"),
                    )
        return None

    # -- after the step: recovery, scheduler, identity, boundary --------------------------------

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

    def _public_and_bounded(self, system: ModelSystem, blobs: RecordBytes) -> Finding | None:
        """Records are public-safe, compact and bounded (M13, JNL-6)."""
        for index, rec in enumerate(blobs.journal):
            blob = blobs[index]
            if blob in self.scanned:
                continue
            spec = system.hooks.get(rec.get("hook_id", ""))
            bound = (spec.max_result_bytes if spec else 16384) + RECORD_ENVELOPE_BYTES
            if len(blob) > bound:
                return "journal_bounded", "M13", f"a sidecar record of hook {rec.get('hook_id')} is {len(blob)} bytes (bound {bound})"
            found = self.scanner.scan_value(rec)
            if found:
                return "journal_public_safe", "M13", f"a sidecar record carries a {found[0].category} at {found[0].path}"
            if rec.get("status") == "failed" and (rec.get("failure_code") not in codes.RFC_FAILURE_CODES or rec.get("intents")):
                return "journal_public_safe", "M13", f"a failure record of hook {rec.get('hook_id')} is not one compact stable code"
            if b"Traceback" in blob or b"Error(" in blob:
                return "journal_public_safe", "M13", "a sidecar record carries exception text"
            self.scanned.add(blob)
        return None


class RecordBytes:
    """The canonical bytes of each record of one step's journal, each computed once, when a check
    first asks (so a record that is not JSON fails where it always did: at the first check that
    encodes it)."""

    def __init__(self, journal: list[dict[str, Any]]) -> None:
        self.journal = journal
        self._bytes: dict[int, bytes] = {}

    def __getitem__(self, index: int) -> bytes:
        found = self._bytes.get(index)
        if found is None:
            found = self._bytes[index] = canonical_bytes(self.journal[index])
        return found

    def get(self, index: int) -> bytes | None:
        """The record's bytes, or None when it is not JSON (the check that asks goes on without)."""
        try:
            return self[index]
        except CanonicalError:
            return None

    def all(self) -> list[bytes]:
        return [self[i] for i in range(len(self.journal))]


def _died(system: ModelSystem) -> int:
    """Dispatches that died before they ended (a crash step): each may have counted an attempt
    for a hook it never got to call."""
    return sum(1 for episode in system.episodes if episode.outcome is None)


def _inadmissible(system: ModelSystem, record: StepRecord, episode: Episode) -> bool:
    """The episode dispatches a receipt that must dispatch nothing: one a bad_receipt step offered,
    or a committed receipt of another plan's effect (on any later replay or recovery too)."""
    if record.step["op"] == "bad_receipt":
        return True
    if not system.mismatched:
        return False
    return episode.receipt_id in system.mismatched


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
