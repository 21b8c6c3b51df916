"""The reference post-writeback dispatcher (docs/rules.md): the behaviour the harness judges against.

It runs after the primary writeback has committed and touches nothing of it: its inputs are a
committed receipt, the registry, the profile and the journal; its only writes go to the sidecar
journal, in one atomic commit per dispatch. Each hook is isolated: whatever one provider does,
the others still run, in ``hook_id`` order, with their own budgets.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pwh._core import codes
from pwh._core import crash as _crash
from pwh._core.boundary import BoundaryScanner
from pwh._core.codes import Rejection
from pwh._core.contracts import (
    SIDECAR_SCHEMA_VERSION,
    accept_clean_result,
    admissibility,
    build_hook_input,
    judge_validated_result,
    validate_hook_input,
    validate_registration,
    validate_result,
    validate_source,
)
from pwh._core.freeze import freeze
from pwh._core.identity import plain_dispatch_id
from pwh._core.journal import CONFLICT, FINAL_STATUSES, REPLAYED, Journal, JournalError
from pwh._core.outcome import DispatchOutcome, HookOutcome
from pwh._core.process_runner import default_runner
from pwh._core.profile import Profile
from pwh._core.registry import InstalledHook, Registry, private_id_rejections
from pwh._core.runner import RAISED, TIMED_OUT, Call, CallVerdict


@dataclass
class _Tally:
    """Dispatch-wide ceilings; only results that are accepted take a slot (RFC §10, rule ISO: a
    failed hook does not use up another hook's slot)."""

    hooks: int = 0
    intents: int = 0
    result_bytes: int = 0


@dataclass(eq=False)
class _Pending:
    """A hook that passed every check made before its call; ``attempts`` counts prior tries (after
    :meth:`Dispatcher._reserve_attempts`: as the journal counts them). ``ended`` is set when the
    reservation ends the hook uncalled (the retry cap, or a journal that cannot count)."""

    hook: InstalledHook
    dispatch_id: str
    source: Mapping[str, Any]
    attempts: int
    hook_input: dict[str, Any] = field(default_factory=dict)
    ended: tuple[HookOutcome, dict[str, Any] | None] | None = None


# The private methods a deliberately broken dispatcher (the mutant library, pwh/_suts/mutants) may
# override: each holds one decision the RFC constrains, so a mutant breaks one rule by replacing one
# of them. They are a seam like the public ones: renaming one, or changing what it takes, changes
# what the mutants can express (tests/core/test_mutation_seam.py holds the mutants to this list).
MUTATION_SEAM: tuple[str, ...] = (
    "_accept_fast",
    "_admitted_hooks",
    "_boundary_rejection",
    "_call_spec",
    "_fail",
    "_finish_hook",
    "_free_slots",
    "_hook_id_refusal",
    "_judge_in_full",
    "_prepare_hook",
    "_receipt",
    "_receipt_id_refusal",
    "_record",
    "_registration_over_ceilings",
    "_take_slots",
    "_validate",
)


class Dispatcher:
    """Dispatch one committed receipt to every admitted hook."""

    def __init__(
        self,
        registry: Registry,
        journal: Journal,
        profile: Profile | None = None,
        *,
        scanner: BoundaryScanner | None = None,
        runner: Any = None,
    ) -> None:
        self.registry = registry
        self.journal = journal
        self.profile = profile or Profile()
        self.scanner = scanner or BoundaryScanner()
        self.runner = runner if runner is not None else default_runner()  # a process worker by default
        self._reg_checks: dict[tuple[Any, ...], list[Rejection]] = {}
        self._id_checks: dict[tuple[str, int], Rejection | None] = {}

    # -- public ---------------------------------------------------------------------------

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> DispatchOutcome:
        """Dispatch ``source``; replaying a recorded dispatch returns the stored receipt.

        ``consult_journal=False`` models a second dispatcher that read the journal before the
        first one recorded (a host dispatching at checkpoint racing a recovery queue, RFC §14):
        its providers run, and the journal's own rules decide what is kept.
        """
        self.journal.crash.hit(_crash.DISPATCH_BEFORE_CHECKPOINT)
        plain, rejected = validate_source(source)
        if plain is None:
            first = self._public(rejected[0])
            return DispatchOutcome(None, None, False, first.code, first)
        receipt_id, event_kind = plain["receipt_id"], plain["event_kind"]
        private_id = self._receipt_id_refusal(receipt_id)
        if private_id is not None:  # the outcome must not repeat it either
            return DispatchOutcome(None, event_kind, False, private_id.code, private_id)
        if self.profile.problems:  # an unusable profile does not enable the phase (ADM)
            bad = self.profile.problems[0]
            wrong = Rejection(codes.PROFILE_REJECTED, "$.profile." + bad.field, bad.reason)
            return DispatchOutcome(receipt_id, event_kind, False, wrong.code, wrong)
        refusal = admissibility(plain, self.profile.phase_enabled)
        if refusal is not None:
            return DispatchOutcome(receipt_id, event_kind, False, refusal.code, refusal)
        hooks = self._admitted_hooks(event_kind)
        ids = {h.hook_id: plain_dispatch_id(receipt_id, h.hook_id, h.registration["schema_version"], event_kind) for h in hooks}
        try:
            prior = self.journal.get_many(ids.values()) if consult_journal else {}
        except JournalError as exc:
            return DispatchOutcome(receipt_id, event_kind, True, journal_error=exc.code)
        tally = _Tally()
        # What is already recorded for this receipt holds its slots first, whatever the hook
        # order: a hook installed after the first dispatch gets only what is left (recovery must
        # never push a receipt past the profile's ceilings).
        for record in prior.values():
            if record["status"] in FINAL_STATUSES:
                self._take_slots(tally, record)
        # Every hook's fate before its call is known up front (none depends on another's
        # answer); only the slots do: a hook that fails frees its slot for a later one, so calls
        # go to the runner in batches no larger than the slots still free, in hook order, each
        # batch's attempts counted just before it starts (``_run_batch``).
        steps: list[_Pending | tuple[HookOutcome, dict[str, Any] | None]] = [
            self._prepare_hook(hook, ids[hook.hook_id], plain, prior.get(ids[hook.hook_id]), tally) for hook in hooks
        ]
        waiting = [i for i, step in enumerate(steps) if type(step) is _Pending]
        uncounted: str | None = None
        while waiting:
            free = self._free_slots(tally)
            if free <= 0 or uncounted is not None:  # no slot left, or a journal that cannot count
                for i in waiting:
                    steps[i] = self._uncalled(steps[i], uncounted) if uncounted else self._fail(steps[i], codes.DISPATCH_BUDGET_EXHAUSTED)  # type: ignore[arg-type]
                break
            chunk, waiting = waiting[:free], waiting[free:]
            uncounted = self._run_batch(steps, chunk, tally)
        outcomes: list[HookOutcome] = []
        writes: list[dict[str, Any]] = []
        for outcome, receipt in steps:  # type: ignore[misc]
            outcomes.append(outcome)
            if receipt is not None:
                writes.append(receipt)
        if uncounted is not None:  # nothing more was called, and a journal that cannot count cannot record
            return DispatchOutcome(receipt_id, event_kind, True, hooks=tuple(outcomes), journal_error=uncounted)
        return self._record(receipt_id, event_kind, outcomes, writes)

    def close(self) -> None:
        self.runner.close()

    def _free_slots(self, tally: _Tally) -> int:
        """Hooks that may still be called: the profile's ceiling less the results accepted so far."""
        return self.profile.max_hooks_per_dispatch - tally.hooks

    def _run_batch(self, steps: list[Any], chunk: list[int], tally: _Tally) -> str | None:
        """Call the providers of ``chunk`` (indexes into ``steps``) in hook order and replace each
        pending step by its judged outcome. Each runner batch is counted just before it starts
        (:meth:`_reserve_attempts`), and one that may end the process runs last in its batch.
        Returns the journal's code if the count could not be stored: then nothing more is called.

        The batch's answers are all collected before any is judged, so the host hands each next
        call over at once: judging between answers made the worker wait (spinning, on a shared
        core) for every hand-over. What is judged, and in which order, is unchanged: no call
        depends on another's verdict (the batch was sized to the free slots before it started),
        and the crash point after each provider is still hit as its answer comes in.

        The worker is not woken ahead of the count (the runner's ``wake``): woken early it spins
        waiting for its call, and on a shared core that starves the host writing the count; the
        call itself wakes it, as it does the skeleton's."""
        while chunk:
            taken, uncounted = self._reserve_attempts([steps[i] for i in chunk])
            now, chunk = chunk[:taken], chunk[taken:]
            called = [i for i in now if steps[i].ended is None]  # the rest: at the retry cap, or not counted
            batch = self.runner.start([self._call_spec(steps[i].hook, steps[i].hook_input) for i in called])
            verdicts: dict[int, CallVerdict] = {}
            try:
                for i in called:
                    verdicts[i] = batch.next_verdict()
                    self.journal.crash.hit(_crash.DISPATCH_AFTER_PROVIDER)
            finally:
                batch.close()
            for i in now:
                step = steps[i]
                steps[i] = step.ended if step.ended is not None else self._finish_hook(step, verdicts[i], tally)
            if uncounted is not None:
                return uncounted
        return None

    # -- steps (small methods, so a broken test adapter can replace exactly one rule) ------

    def _admitted_hooks(self, event_kind: str) -> list[InstalledHook]:
        return [h for h in self.registry.hooks() if event_kind in h.registration["event_kinds"] and self.profile.admits(h.hook_id)]

    def _prepare_hook(
        self,
        hook: InstalledHook,
        did: str,
        source: Mapping[str, Any],
        prior: dict[str, Any] | None,
        tally: _Tally,
    ) -> _Pending | tuple[HookOutcome, dict[str, Any] | None]:
        """Everything decided before the provider is called, from this hook's own registration
        and input alone: replay of a final record, the ids it would write, the attempt budget,
        the registration ceilings and the input boundary. Returns the hook's outcome when it
        ends here, else the call to make. ``tally`` is not charged here: only an accepted
        result takes a slot, so a hook's slot is decided when its call is due (``_free_slots``)."""
        reg = hook.registration
        if prior is not None and prior["status"] in FINAL_STATUSES:
            return self._from_receipt(prior, replayed=True, recorded=True), None
        attempts = prior["attempts"] if prior is not None else 0
        pending = _Pending(hook, did, source, attempts)
        private_id = self._hook_id_refusal(hook)
        if private_id is not None:  # refused, and never journaled: its record would carry the id
            return self._fail(pending, codes.REGISTRATION_REJECTED, private_id)[0], None
        # Retries across attempts of one identity are bounded by the profile's retry policy (§10
        # "有界 policy"); max_invocations_per_dispatch bounds calls within one attempt, and V0
        # calls a hook once per attempt (docs/rules.md, BUD and P-retry-cap).
        if attempts >= self.profile.max_attempts:
            return self._fail(pending, codes.DISPATCH_BUDGET_EXHAUSTED)
        over = self._registration_over_ceilings(hook)
        if over:
            return self._fail(pending, codes.REGISTRATION_REJECTED, over[0])
        hook_input = build_hook_input(source, reg, did)
        boundary = self._boundary_rejection(hook_input)  # this hook's own input: ids differ per hook
        if boundary is not None:
            return self._fail(pending, codes.INPUT_BOUNDARY_REJECTED, boundary)
        pending.hook_input = hook_input
        return pending

    def _reserve_attempts(self, pending: list[_Pending]) -> tuple[int, str | None]:
        """Count the attempts about to be made, durably, right before the calls (rule BUD): in one
        journal write under its write lock, each hook's stored count is read and, under the
        profile's retry cap, raised by one. A hook at the cap ends ``dispatch_budget_exhausted``
        uncalled; so a crash during the call still counts it, a redelivery cannot start the count
        over, and any number of processes together make at most the cap of calls.

        The journal counts the batch in hook order up to and including the first hook that has
        an attempt its record does not show (its call may have ended the process that made it):
        that one is called last in its batch, so if it ends this process too, no hook after it
        is charged for a call it never got. Returns how many of ``pending`` were counted (the
        caller starts those, and counts the rest next), and None, or the journal's code when the
        count could not be stored: then every hook given ends uncalled with it (``ended``),
        since a call must never go uncounted. Call it only for hooks that are to be called."""
        cap = self.profile.max_attempts
        try:
            before = self.journal.reserve_attempts({p.dispatch_id: p.attempts for p in pending}, cap)
        except JournalError as exc:
            for p in pending:
                p.ended = self._uncalled(p, exc.code)
            return len(pending), exc.code
        taken = 0
        for p in pending:
            if p.dispatch_id not in before:
                break
            taken += 1
            p.attempts = max(p.attempts, before[p.dispatch_id])
            if p.attempts >= cap:
                p.ended = self._fail(p, codes.DISPATCH_BUDGET_EXHAUSTED)
        if not taken:  # a journal that counted none of them: nothing may be called uncounted
            for p in pending:
                p.ended = self._uncalled(p, codes.JOURNAL_WRITE_FAILED)
            return len(pending), codes.JOURNAL_WRITE_FAILED
        return taken, None

    @staticmethod
    def _uncalled(pending: _Pending, code: str) -> tuple[HookOutcome, None]:
        """A hook not called because the journal could not count the call: nothing to record."""
        hook, did = pending.hook, pending.dispatch_id
        return HookOutcome(hook.hook_id, did, "failed", code, (), False, pending.attempts, False), None

    def _finish_hook(self, pending: _Pending, verdict: CallVerdict, tally: _Tally) -> tuple[HookOutcome, dict[str, Any] | None]:
        """Judge the provider's answer: its contract, the public boundary, the dispatch ceilings.
        The attempt it counts is the one :meth:`_reserve_attempts` stored before the call."""
        hook, did, reg = pending.hook, pending.dispatch_id, pending.hook.registration
        attempts = pending.attempts = pending.attempts + 1
        if verdict.kind == RAISED:
            return self._fail(pending, codes.PRODUCER_FAILED)
        if verdict.kind == TIMED_OUT:
            return self._fail(pending, codes.PRODUCER_TIMED_OUT)
        # The one result check (contracts.check_result) through its two seams: certainly valid and
        # clean, in one pass; only if not, the general path decides and says why.
        accepted = self._accept_fast(verdict.value, reg, did) or self._judge_in_full(verdict.value, reg, did)
        if type(accepted) is Rejection:
            return self._fail(pending, codes.RESULT_CONTRACT_REJECTED, accepted)
        plain, raw = accepted  # type: ignore[misc]
        if (
            tally.intents + len(plain["intents"]) > self.profile.max_intents_per_dispatch
            or tally.result_bytes + len(raw) > self.profile.max_result_bytes_per_dispatch
        ):
            return self._fail(pending, codes.DISPATCH_BUDGET_EXHAUSTED)
        tally.hooks += 1
        tally.intents += len(plain["intents"])
        tally.result_bytes += len(raw)
        receipt = self._receipt(
            hook, did, pending.source, plain["status"], None, plain["intents"], "sha256:" + hashlib.sha256(raw).hexdigest(), attempts
        )
        return self._from_receipt(receipt, replayed=False, recorded=False), receipt

    def _fail(self, pending: _Pending, code: str, rejection: Rejection | None = None) -> tuple[HookOutcome, dict[str, Any]]:
        rejection = self._public(rejection) if rejection is not None else None
        hook, did, tried = pending.hook, pending.dispatch_id, pending.attempts
        receipt = self._receipt(hook, did, pending.source, "failed", code, [], None, tried)
        return HookOutcome(hook.hook_id, did, "failed", code, (), False, tried, False, rejection), receipt

    def _call_spec(self, hook: InstalledHook, hook_input: dict[str, Any]) -> Call:
        """The provider, its own immutable copy of the input, its wall-time limit and the byte
        budget its answer is judged by. A process runner sends the plain input to the worker,
        which freezes its own copy there: no copy is made here for it."""
        budget = hook.registration["budget"]
        given = hook_input if getattr(self.runner, "copies_input", False) else freeze(hook_input)
        return hook.producer, given, budget["timeout_ms"], budget["max_result_bytes"]

    def _registration_over_ceilings(self, hook: InstalledHook) -> list[Rejection]:
        """Re-check an installed registration against the *current* profile ceilings (a profile
        may lower them after install). Cached: registrations are immutable once installed."""
        key = (hook.hook_id, id(hook), tuple(sorted(self.profile.budget_ceilings.items())))
        cached = self._reg_checks.get(key)
        if cached is None:
            cached = validate_registration(
                hook.registration, known_intent_kinds=self.registry.catalog.kinds, ceilings=self.profile.budget_ceilings
            )
            self._reg_checks[key] = cached
        return cached

    def _accept_fast(self, value: Any, reg: Mapping[str, Any], did: str) -> tuple[dict[str, Any], bytes] | None:
        """The result check's early exit: a result that is certainly valid and clean, in one pass, or None."""
        return accept_clean_result(value, reg, did, self.registry.catalog.validators, self.scanner)

    def _judge_in_full(self, value: Any, reg: Mapping[str, Any], did: str) -> tuple[dict[str, Any], bytes] | Rejection:
        """The result check's general path: the contract (with every rejection's path and reason),
        then the public-boundary scan of the copy."""
        plain, raw, rejected = self._validate(value, reg, did)
        return judge_validated_result(plain, raw, rejected, self.scanner)

    def _validate(self, value: Any, reg: Mapping[str, Any], did: str) -> tuple[dict[str, Any] | None, bytes, list[Rejection]]:
        return validate_result(value, registration=reg, dispatch=did, payload_validators=self.registry.catalog.validators)

    def _boundary_rejection(self, hook_input: dict[str, Any]) -> Rejection | None:
        found = self.scanner.scan_value(hook_input)
        if found:
            reason = f"input would carry a {found[0].category.replace('_', ' ')}"
            return Rejection(codes.INPUT_BOUNDARY_REJECTED, found[0].path, reason)
        bad = validate_hook_input(hook_input)
        return bad[0] if bad else None

    def _hook_id_refusal(self, hook: InstalledHook) -> Rejection | None:
        """The hook and capability ids are written into every sidecar receipt of the hook
        (JNL-6): ids this dispatcher's scanner flags (a host name, a declared private name) are
        refused before the call, and nothing is journaled for the hook. Cached per installed
        hook: registrations are immutable and the scanner is this dispatcher's."""
        key = (hook.hook_id, id(hook))
        if key not in self._id_checks:
            found = private_id_rejections(self.scanner, hook.registration)
            self._id_checks[key] = found[0] if found else None
        return self._id_checks[key]

    def _receipt_id_refusal(self, receipt_id: str) -> Rejection | None:
        """The receipt id is written into every sidecar receipt of the dispatch (JNL-6): one that
        is not an opaque id (an address, a host, a token, a declared name) is refused before any
        hook runs or anything is journaled."""
        found = self.scanner.scan_value(receipt_id, "$.receipt_id")
        if found:
            reason = f"the receipt id would carry a {found[0].category.replace('_', ' ')} into the journal"
            return Rejection(codes.SOURCE_REJECTED, "$.receipt_id", reason)
        return None

    def _public(self, rejection: Rejection) -> Rejection:
        """The rejection with every key this dispatcher's scanner flags (declared names included)
        withheld from its path, so an outcome never spells out a private key."""
        path = self.scanner.public_path(rejection.path)
        return rejection if path == rejection.path else Rejection(rejection.code, path, rejection.reason)

    def _take_slots(self, tally: _Tally, receipt: Mapping[str, Any]) -> None:
        tally.hooks += 1
        tally.intents += len(receipt["intents"])

    def _record(self, receipt_id: str, event_kind: str, outcomes: list[HookOutcome], writes: list[dict[str, Any]]) -> DispatchOutcome:
        if not writes:
            return DispatchOutcome(receipt_id, event_kind, True, hooks=tuple(outcomes))
        try:
            results = {r.dispatch_id: r for r in self.journal.commit(writes)}
        except JournalError as exc:
            return DispatchOutcome(receipt_id, event_kind, True, hooks=tuple(outcomes), journal_error=exc.code)
        final: list[HookOutcome] = []
        for outcome in outcomes:
            result = results.get(outcome.dispatch_id or "")
            if result is None:
                final.append(outcome)
            elif result.outcome == CONFLICT:
                kept = self._from_receipt(result.stored, replayed=False, recorded=True)
                final.append(
                    HookOutcome(
                        outcome.hook_id,
                        outcome.dispatch_id,
                        "failed",
                        codes.INTENT_CONFLICT,
                        kept.intents,
                        False,
                        kept.attempts,
                        True,
                        Rejection(codes.INTENT_CONFLICT, "$", "a different result is already recorded"),
                    )
                )
            elif result.outcome == REPLAYED:
                final.append(self._from_receipt(result.stored, replayed=True, recorded=True))
            else:  # recorded, with the larger count if a racing dispatcher counted more
                same = result.stored["attempts"] == outcome.attempts
                final.append(_recorded(outcome) if same else self._from_receipt(result.stored, replayed=False, recorded=True))
        return DispatchOutcome(receipt_id, event_kind, True, hooks=tuple(final))

    @staticmethod
    def _receipt(
        hook: InstalledHook,
        did: str,
        source: Mapping[str, Any],
        status: str,
        code: str | None,
        intents: list[dict[str, Any]],
        result_digest: str | None,
        attempts: int,
    ) -> dict[str, Any]:
        return {
            "schema_version": SIDECAR_SCHEMA_VERSION,
            "dispatch_id": did,
            "hook_id": hook.hook_id,
            "capability_id": hook.registration["capability_id"],
            "source_receipt_id": source["receipt_id"],
            "event_kind": source["event_kind"],
            "registration_schema_version": hook.registration["schema_version"],
            "status": status,
            "failure_code": code,
            "intents": list(intents),
            "result_digest": result_digest,
            "attempts": attempts,
        }

    @staticmethod
    def _from_receipt(receipt: Mapping[str, Any], *, replayed: bool, recorded: bool) -> HookOutcome:
        return HookOutcome(
            receipt["hook_id"],
            receipt["dispatch_id"],
            receipt["status"],
            receipt["failure_code"],
            tuple(receipt["intents"]),
            replayed,
            receipt["attempts"],
            recorded,
        )


def _recorded(outcome: HookOutcome) -> HookOutcome:
    """The same outcome, now recorded: its fields copied with one changed, whatever fields the
    class has (``dataclasses.replace`` would run the generated ``__init__`` again, a few
    microseconds per hook)."""
    copy = object.__new__(HookOutcome)
    copy.__dict__.update(outcome.__dict__, recorded=True)
    return copy
