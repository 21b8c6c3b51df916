"""Mutants for the stateful models' invariants: the reference with one rule broken each, so that
every invariant of ``pwh/_campaigns/models/invariants.py`` is shown to fail when its rule does
(``tests/campaigns/test_models.py`` runs each and names the invariant that must catch it).

Registered with ``caught_by=("models",)`` unless the Gherkin matrix's RFC verdict fails on the
mutant's row too (``pwh gate --sut mutant:NAME --rows ROW``): then ``("matrix", "models")``
and ``tests/whole_gate/test_gate.py`` holds the matrix to it as well. A mutant that breaks only a
profile invariant (pwh's reading, ``_invariants``) is ``caught_by=("profile",)``: the models
report it as a profile divergence, never a counterexample (``tests/campaigns/test_invariant_kinds.py``),
and the matrix must pass its RFC verdict and show a profile divergence on its row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pwh import (
    Dispatcher,
    DispatchOutcome,
    MemoryJournal,
    Profile,
    ReferenceSUT,
    SQLiteJournal,
)
from pwh._core import dispatcher as _dispatcher
from pwh._core.dispatcher import _Pending
from pwh._core.journal import FINAL_STATUSES, RECORDED, merge
from pwh._suts.mutants._in_process import InProcess
from pwh._suts.mutants._registry import mutant


def _adapter(name: str, **attrs: Any) -> type[ReferenceSUT]:
    return type(f"Mutant_{name}", (ReferenceSUT,), {"name": f"mutant:{name}", **attrs})


# -- the invariants the first models had, which no classic mutant breaks ------------------------


class _ForgetsLastHook(Dispatcher):
    def _admitted_hooks(self, event_kind):
        return super()._admitted_hooks(event_kind)[:-1]


class _ReplayNotMarked(Dispatcher):
    def _prepare_hook(self, hook, did, source, prior, tally):
        import dataclasses

        step = super()._prepare_hook(hook, did, source, prior, tally)
        if type(step) is tuple:
            return dataclasses.replace(step[0], replayed=False), step[1]
        return step


class _LeaksProviderText(Dispatcher):
    def _receipt(self, hook, did, source, status, code, intents, result_digest, attempts):  # type: ignore[override]  # the base's is a staticmethod
        receipt = Dispatcher._receipt(hook, did, source, status, code, intents, result_digest, attempts)
        if code:
            receipt["failure_code"] = f"{code} while reading /srv/private/state.db"
        return receipt


class _NewIdentityAfterRestart(Dispatcher):
    restarts = 0

    def _prepare_hook(self, hook, did, source, prior, tally):
        salted = did[:-1] + format((int(did[-1], 16) + self.restarts) % 16, "x")  # still a well-formed id
        return super()._prepare_hook(hook, salted, source, prior, tally)


class _SaltsOnRestart(ReferenceSUT):
    name = "mutant:new_identity_after_restart"
    dispatcher_class = _NewIdentityAfterRestart
    restarts = 0

    def restart(self) -> None:
        super().restart()
        self.restarts += 1
        self.dispatcher.restarts = self.restarts  # type: ignore[attr-defined]


class _ReportsARecordTwice(ReferenceSUT):
    name = "mutant:reports_a_record_twice"

    def journal_records(self):
        records = super().journal_records()
        return records + records[-1:]


@mutant("forgets_last_hook", "M04", "§12 M04: the last admitted hook (in hook_id order) is never dispatched", caught_by=("models",))
def forgets_last_hook(**kw: Any) -> ReferenceSUT:
    return _adapter("forgets_last_hook", dispatcher_class=_ForgetsLastHook)(**kw)


@mutant("replay_not_marked", "M05", "pwh's reading: a replay returns the stored receipt but does not say it is one", caught_by=("profile",))
def replay_not_marked(**kw: Any) -> ReferenceSUT:
    return _adapter("replay_not_marked", dispatcher_class=_ReplayNotMarked)(**kw)


@mutant(
    "leaks_provider_text",
    "M13",
    "§9 JNL-6: a failure record carries text about a private path, not one compact code",
    caught_by=("models",),
)
def leaks_provider_text(**kw: Any) -> ReferenceSUT:
    return _adapter("leaks_provider_text", dispatcher_class=_LeaksProviderText)(**kw)


@mutant("new_identity_after_restart", "M04", "§9 JNL-4: after a restart the same dispatch gets another identity", caught_by=("models",))
def new_identity_after_restart(**kw: Any) -> ReferenceSUT:
    return _SaltsOnRestart(**kw)


@mutant("reports_a_record_twice", "M04", "§9: the journal holds two records for one dispatch identity", caught_by=("models",))
def reports_a_record_twice(**kw: Any) -> ReferenceSUT:
    return _ReportsARecordTwice(**kw)


# -- bad receipts (M03) --------------------------------------------------------------------------


class _AdmitsUncommitted(Dispatcher):
    """A receipt whose writeback step is only prepared, rejected, inferred or prose is taken as committed."""

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> DispatchOutcome:
        if isinstance(source, Mapping) and source.get("step_status") != "committed":
            source = {**source, "step_status": "committed"}
        return super().dispatch(source, consult_journal=consult_journal)


@mutant(
    "admits_uncommitted", "M03", "§5.1/§12: a receipt whose writeback step is not committed is dispatched", caught_by=("matrix", "models")
)
def admits_uncommitted(**kw: Any) -> ReferenceSUT:
    return _adapter("admits_uncommitted", dispatcher_class=_AdmitsUncommitted)(**kw)


# -- bad registrations (M02) -----------------------------------------------------------------------


class _ReplacesDuplicates(ReferenceSUT):
    """A second registration of an installed hook_id replaces the first instead of being rejected."""

    name = "mutant:registry_replaces_duplicates"

    def install(self, registration: Mapping[str, Any], producer: Any) -> list[Any]:
        hook_id = registration.get("hook_id") if isinstance(registration, Mapping) else None
        hooks = self.registry._hooks
        old = hooks.pop(hook_id, None) if isinstance(hook_id, str) else None
        rejections = super().install(registration, producer)
        if rejections and old is not None:
            hooks[hook_id] = old  # type: ignore[index]
        return rejections


@mutant(
    "registry_replaces_duplicates",
    "M02",
    "§6 REG: a duplicate hook_id replaces the installed hook instead of being rejected",
    caught_by=("matrix", "models"),
)
def registry_replaces_duplicates(**kw: Any) -> ReferenceSUT:
    return _ReplacesDuplicates(**kw)


# -- profile changes mid-run (M01) -----------------------------------------------------------------


class _PhaseStaysOn(ReferenceSUT):
    """Once a profile enabled the phase, a later profile cannot switch it off."""

    name = "mutant:phase_stays_on"

    def set_profile(self, profile: Profile) -> None:
        if self.profile.phase_enabled and not profile.phase_enabled:
            profile = profile.with_(phase_enabled=True)
        super().set_profile(profile)


@mutant(
    "phase_stays_on", "M01", "§10/§12 M01: a profile that disables the phase mid-run is ignored; hooks still run", caught_by=("models",)
)
def phase_stays_on(**kw: Any) -> ReferenceSUT:
    return _PhaseStaysOn(**kw)


# -- hooks that change their input, hooks of one capability (M08) --------------------------------


class _SharesMutableInput(InProcess):
    """Every hook of a dispatch is handed one shared, writable source block: what an earlier hook
    writes into its input, a later hook sees."""

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> DispatchOutcome:
        self._shared: dict[str, Any] | None = None
        return super().dispatch(source, consult_journal=consult_journal)

    def _prepare_hook(self, hook, did, source, prior, tally):
        step = super()._prepare_hook(hook, did, source, prior, tally)
        if type(step) is _Pending:
            if getattr(self, "_shared", None) is None:
                self._shared = step.hook_input["source"]
            step.hook_input["source"] = self._shared
        return step

    def _call_spec(self, hook, hook_input):
        producer, _frozen, limit, *rest = super()._call_spec(hook, hook_input)
        return (producer, hook_input, limit, *rest)


@mutant(
    "shares_mutable_input",
    "M08",
    "§7 INP: the input is not immutable; a hook's write to it reaches the next hook",
    caught_by=("matrix", "models"),
)
def shares_mutable_input(**kw: Any) -> ReferenceSUT:
    return _adapter("shares_mutable_input", dispatcher_class=_SharesMutableInput)(**kw)


class _IdentityByCapability(Dispatcher):
    """The dispatch identity is taken from the capability, not the hook: two hooks of one
    capability share it (and so one record). The identity recipe is a module function, so the
    mutant swaps it for the length of its own dispatch call (models run one dispatch at a time)."""

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> DispatchOutcome:
        caps = {h.hook_id: h.registration["capability_id"] for h in self.registry.hooks()}
        real = _dispatcher.plain_dispatch_id

        def by_capability(receipt_id: str, hook_id: str, schema_version: str, event_kind: str) -> str:
            return real(receipt_id, caps.get(hook_id, hook_id), schema_version, event_kind)

        _dispatcher.plain_dispatch_id = by_capability  # type: ignore[assignment]
        try:
            return super().dispatch(source, consult_journal=consult_journal)
        finally:
            _dispatcher.plain_dispatch_id = real


@mutant("identity_by_capability", "M08", "§9/§10: hooks of one capability share a dispatch identity and one record", caught_by=("models",))
def identity_by_capability(**kw: Any) -> ReferenceSUT:
    return _adapter("identity_by_capability", dispatcher_class=_IdentityByCapability)(**kw)


# -- the retry bound (M08) -------------------------------------------------------------------------


class _AttemptsNotCounted(Dispatcher):
    """Every attempt is recorded as the first. The retry cap still holds (the journal reserves
    the attempts before each call), so what breaks is only the record's attempt count: pwh's
    reading (``attempts_counted``), which the RFC does not require (it keeps no attempt count)."""

    def _finish_hook(self, pending, verdict, tally):
        pending.attempts = 0
        return super()._finish_hook(pending, verdict, tally)


@mutant(
    "attempts_not_counted",
    "M07",
    "pwh's reading of the attempt count: a record counts one attempt however many calls were made (the RFC keeps no count)",
    caught_by=("profile",),
)
def attempts_not_counted(**kw: Any) -> ReferenceSUT:
    return _adapter("attempts_not_counted", dispatcher_class=_AttemptsNotCounted)(**kw)


# -- the stored record across replays and restarts (M05) -----------------------------------------


class _ReplayRecounts(Dispatcher):
    """A replay writes the stored receipt back with its attempt count raised."""

    def _prepare_hook(self, hook, did, source, prior, tally):
        step = super()._prepare_hook(hook, did, source, prior, tally)
        if type(step) is tuple and prior is not None and prior["status"] in FINAL_STATUSES and step[1] is None:
            return step[0], {**prior, "attempts": prior["attempts"] + 1}
        return step


def _rewrite_same(self: Any, existing: dict[str, Any] | None, new: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if existing is not None and existing["status"] in FINAL_STATUSES and new.get("result_digest") == existing["result_digest"]:
        return RECORDED, new
    return merge(existing, new)


class _RewritingSQLite(SQLiteJournal):
    merge = _rewrite_same


class _RewritingMemory(MemoryJournal):
    merge = _rewrite_same


@mutant(
    "replay_rewrites_record",
    "M05",
    "§9 JNL-1: a replay rewrites the stored record (its attempt count) instead of leaving it byte for byte",
    caught_by=("models",),
)
def replay_rewrites_record(**kw: Any) -> ReferenceSUT:
    return _adapter(
        "replay_rewrites_record",
        dispatcher_class=_ReplayRecounts,
        sqlite_journal_class=_RewritingSQLite,
        memory_journal_class=_RewritingMemory,
    )(**kw)


# -- invariants the first models checked with no mutant to show they can fail ---------------------


class _AdmitsProgress(Dispatcher):
    """A plain progress writeback is admitted as if it were a post-writeback event."""

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> DispatchOutcome:
        if isinstance(source, Mapping) and source.get("event_kind") == "progress_recorded":
            return DispatchOutcome(source.get("receipt_id"), "progress_recorded", True)
        return super().dispatch(source, consult_journal=consult_journal)


@mutant(
    "admits_progress",
    "M04",
    "pwh's reading of admission: a plain progress writeback is reported as admitted (it calls no provider; the RFC names no flag)",
    caught_by=("profile",),
)
def admits_progress(**kw: Any) -> ReferenceSUT:
    return _adapter("admits_progress", dispatcher_class=_AdmitsProgress)(**kw)


class _RaisedIsTimedOut(Dispatcher):
    """A provider that raised is recorded as having timed out: not its own stable code."""

    def _fail(self, pending, code, rejection=None):
        from pwh._core import codes

        return super()._fail(pending, codes.PRODUCER_TIMED_OUT if code == codes.PRODUCER_FAILED else code, rejection)


@mutant("raised_is_timed_out", "M07", "§10: a provider that raised ends producer_timed_out, not producer_failed", caught_by=("models",))
def raised_is_timed_out(**kw: Any) -> ReferenceSUT:
    return _adapter("raised_is_timed_out", dispatcher_class=_RaisedIsTimedOut)(**kw)


class _LetsProviderErrorsOut(Dispatcher):
    """A provider's exception escapes from the dispatch into the primary Turn."""

    def _finish_hook(self, pending, verdict, tally):
        from pwh._core.runner import RAISED

        if verdict.kind == RAISED:
            raise RuntimeError("a provider failed")
        return super()._finish_hook(pending, verdict, tally)


@mutant("lets_provider_errors_out", "M07", "§3.1/§10 isolate: a provider's exception escapes into the primary Turn", caught_by=("models",))
def lets_provider_errors_out(**kw: Any) -> ReferenceSUT:
    return _adapter("lets_provider_errors_out", dispatcher_class=_LetsProviderErrorsOut)(**kw)


class _OneHookOnly(ReferenceSUT):
    """The registry takes one hook and rejects every valid registration after it."""

    name = "mutant:one_hook_only"

    def install(self, registration: Mapping[str, Any], producer: Any) -> list[Any]:
        from pwh import Rejection
        from pwh._core import codes

        if self.registry.hooks():
            return [Rejection(codes.REGISTRATION_REJECTED, "$.hook_id", "the registry is full")]
        return super().install(registration, producer)


@mutant("one_hook_only", "M02", "§6 REG: a valid registration is rejected (the registry takes one hook)", caught_by=("models",))
def one_hook_only(**kw: Any) -> ReferenceSUT:
    return _OneHookOnly(**kw)


class _IgnoresCrashPoints(ReferenceSUT):
    """Arming a sidecar crash point does nothing: the recovery path is never exercised."""

    name = "mutant:ignores_crash_points"

    def arm_crash(self, point: str) -> None:
        return None


@mutant(
    "ignores_crash_points",
    "M05",
    "§9 JNL-4: the adapter names crash points it never reaches, so recovery goes unjudged",
    caught_by=("models",),
)
def ignores_crash_points(**kw: Any) -> ReferenceSUT:
    return _IgnoresCrashPoints(**kw)


# -- a profile change applied to what was recorded before it (M05) --------------------------------


class _ReplayUnderNewProfile(Dispatcher):
    """A replay judges the stored receipts again under the current intent ceiling: one recorded
    before the ceiling was lowered is answered dispatch_budget_exhausted instead of being returned."""

    def _prepare_hook(self, hook, did, source, prior, tally):
        from pwh import HookOutcome
        from pwh._core import codes

        if prior is not None and prior["status"] in FINAL_STATUSES:
            seen = getattr(tally, "replayed_intents", 0) + len(prior["intents"])
            tally.replayed_intents = seen
            if seen > self.profile.max_intents_per_dispatch:
                return HookOutcome(hook.hook_id, did, "failed", codes.DISPATCH_BUDGET_EXHAUSTED, (), False, prior["attempts"], False), None
        return super()._prepare_hook(hook, did, source, prior, tally)


@mutant(
    "replay_under_new_profile",
    "M05",
    "§9/§10: a replay re-judges a stored receipt under a profile changed since; history is not returned",
    caught_by=("models",),
)
def replay_under_new_profile(**kw: Any) -> ReferenceSUT:
    return _adapter("replay_under_new_profile", dispatcher_class=_ReplayUnderNewProfile)(**kw)
