"""Semantic mutants: one rule kept on one path, event kind or position and broken on another.

A line-level mutation tool changes one operator; a plausible wrong implementation keeps the rule
where it was first written and forgets it elsewhere: for replans but not completions, for the
first intent but not the rest, at install but not after a profile change, for the hook listed but
also for its whole capability. Each mutant here is the reference with exactly one such gap, named
by the rule it breaks and where; the gate (or the soak) must catch every one.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any

from pwh import Dispatcher, ReferenceSUT, canonical_bytes
from pwh._core import dispatcher as _dispatcher_module
from pwh._core.canonical import to_plain
from pwh._core.contracts import judge_validated_result
from pwh._core.journal import RecordResult, SQLiteJournal
from pwh._core.registry import InstalledHook
from pwh._suts.mutants._registry import mutant


def _adapter(name: str, dispatcher: type[Dispatcher]) -> type[ReferenceSUT]:
    return type(f"Semantic_{name}", (ReferenceSUT,), {"name": f"semantic:{name}", "dispatcher_class": dispatcher})


def _with(source: Any, **fields: Any) -> Any:
    return {**source, **fields} if isinstance(source, Mapping) else source


# -- an admission rule kept for one event kind only ------------------------------------------------


class _DurableForCompletionsOnly(Dispatcher):
    """ADM: the durable-checkpoint check is made for completions; a replan passes without one."""

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> Any:
        if isinstance(source, Mapping) and source.get("event_kind") == "replan_recorded":
            source = _with(source, durable_checkpoint=True)
        return super().dispatch(source, consult_journal=consult_journal)


@mutant("durable_for_completions_only", "M03", "§5.1 durable: a replan receipt with no durable checkpoint dispatches")
def durable_for_completions_only(**kw: Any) -> ReferenceSUT:
    return _adapter("durable_for_completions_only", _DurableForCompletionsOnly)(**kw)


class _CommittedForCompletionsOnly(Dispatcher):
    """ADM: the committed-step check is made for completions; a replan's step status is not read."""

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> Any:
        if isinstance(source, Mapping) and source.get("event_kind") == "replan_recorded":
            source = _with(source, step_status="committed")
        return super().dispatch(source, consult_journal=consult_journal)


@mutant("committed_for_completions_only", "M03", "§5.1 committed: a replan receipt whose step is not committed dispatches")
def committed_for_completions_only(**kw: Any) -> ReferenceSUT:
    return _adapter("committed_for_completions_only", _CommittedForCompletionsOnly)(**kw)


# -- an admission rule kept on the first delivery only ---------------------------------------------


class _CommittedOnFirstDeliveryOnly(Dispatcher):
    """ADM: a receipt delivered again (a redelivery, a recovery) is taken as committed: the check
    was made the first time it came."""

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> Any:
        seen = self.__dict__.setdefault("_seen_receipts", set())
        key = source.get("receipt_id") if isinstance(source, Mapping) else None
        if isinstance(key, str) and key in seen:
            source = _with(source, step_status="committed", durable_checkpoint=True)
        if isinstance(key, str):
            seen.add(key)
        return super().dispatch(source, consult_journal=consult_journal)


@mutant("committed_on_first_delivery_only", "M03", "§5.1: a receipt offered again is dispatched without its committed/durable checks")
def committed_on_first_delivery_only(**kw: Any) -> ReferenceSUT:
    return _adapter("committed_on_first_delivery_only", _CommittedOnFirstDeliveryOnly)(**kw)


# -- the allowlist read too widely ------------------------------------------------------------------


def _capability(hook_id: str) -> str:
    return hook_id.partition(".")[0]


class _AllowlistByCapability(Dispatcher):
    """RFC §10: the profile admits hooks on its allowlist; here a listed hook admits its whole capability."""

    def _admitted_hooks(self, event_kind: str) -> list[InstalledHook]:
        allow = self.profile.allowlist
        if allow is None:
            return super()._admitted_hooks(event_kind)
        caps = {_capability(h) for h in allow}
        return [h for h in self.registry.hooks() if event_kind in h.registration["event_kinds"] and _capability(h.hook_id) in caps]


@mutant("allowlist_by_capability", "M01", "§10 allowlist: one listed hook admits every hook of its capability")
def allowlist_by_capability(**kw: Any) -> ReferenceSUT:
    return _adapter("allowlist_by_capability", _AllowlistByCapability)(**kw)


class _EmptyAllowlistIsNone(Dispatcher):
    """RFC §10: an empty allowlist admits no hook; here it is read as no allowlist at all."""

    def _admitted_hooks(self, event_kind: str) -> list[InstalledHook]:
        if self.profile.allowlist is not None and not self.profile.allowlist:
            return [h for h in self.registry.hooks() if event_kind in h.registration["event_kinds"]]
        return super()._admitted_hooks(event_kind)


@mutant("empty_allowlist_is_none", "M01", "§10 allowlist: an empty allowlist admits every installed hook")
def empty_allowlist_is_none(**kw: Any) -> ReferenceSUT:
    return _adapter("empty_allowlist_is_none", _EmptyAllowlistIsNone)(**kw)


# -- a result rule kept for the first intent only ---------------------------------------------------


class _FirstIntentScannedOnly(Dispatcher):
    """§9/§12 M13: a result's public-boundary scan reads its first intent; the rest are journaled unread."""

    def _accept_fast(self, value: Any, reg: Mapping[str, Any], did: str) -> Any:
        return None

    def _judge_in_full(self, value: Any, reg: Mapping[str, Any], did: str) -> Any:
        plain, raw, rejected = self._validate(value, reg, did)
        if plain is None:
            return judge_validated_result(plain, raw, rejected, self.scanner)
        first_only = {**plain, "intents": plain["intents"][:1]}
        verdict = judge_validated_result(first_only, canonical_bytes(first_only), rejected, self.scanner)
        return (plain, raw) if isinstance(verdict, tuple) else verdict


@mutant("first_intent_scanned_only", "M13", "§9/§12 M13: only the first intent of a result is scanned for private values")
def first_intent_scanned_only(**kw: Any) -> ReferenceSUT:
    return _adapter("first_intent_scanned_only", _FirstIntentScannedOnly)(**kw)


class _FirstIntentValidatedOnly(Dispatcher):
    """§8: each intent's payload is validated against its kind's schema; here only the first one's."""

    def _validate(self, value: Any, reg: Mapping[str, Any], did: str) -> Any:
        plain, raw, rejected = super()._validate(value, reg, did)
        kept = [r for r in rejected if not (r.path.startswith("$.intents[") and not r.path.startswith("$.intents[0]"))]
        if plain is None and rejected and not kept:  # only later intents were wrong: take the result as it came
            plain = to_plain(value)
            raw = canonical_bytes(plain)
        return plain, raw, kept


@mutant("first_intent_validated_only", "M07", "§8: only the first intent of a result is validated against its contract")
def first_intent_validated_only(**kw: Any) -> ReferenceSUT:
    return _adapter("first_intent_validated_only", _FirstIntentValidatedOnly)(**kw)


# -- a rule kept for the first hook of a dispatch only ----------------------------------------------


class _PerDispatchCount(Dispatcher):
    """Counts the calls of one rule's step within one dispatch (reset by each dispatch)."""

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> Any:
        self.__dict__["_step_calls"] = 0
        return super().dispatch(source, consult_journal=consult_journal)

    def _first_in_dispatch(self) -> bool:
        self.__dict__["_step_calls"] = self.__dict__.get("_step_calls", 0) + 1
        return bool(self.__dict__["_step_calls"] == 1)


class _InputScannedForFirstHookOnly(_PerDispatchCount):
    """INP (§7): the first admitted hook's input is scanned for private values; the later hooks of
    the same dispatch are handed theirs unread (the same projection, so "already checked")."""

    def _boundary_rejection(self, hook_input: dict[str, Any]) -> Any:
        return super()._boundary_rejection(hook_input) if self._first_in_dispatch() else None


@mutant("input_scanned_for_first_hook_only", "M13", "§7: only the first hook's input is scanned; later hooks get a private value")
def input_scanned_for_first_hook_only(**kw: Any) -> ReferenceSUT:
    return _adapter("input_scanned_for_first_hook_only", _InputScannedForFirstHookOnly)(**kw)


class _CeilingsForFirstHookOnly(_PerDispatchCount):
    """REG/BUD (§6, §10): the profile's current ceilings are re-checked for the first hook of a
    dispatch; a later hook over them is called as installed."""

    def _registration_over_ceilings(self, hook: InstalledHook) -> Any:
        return super()._registration_over_ceilings(hook) if self._first_in_dispatch() else []


@mutant("ceilings_for_first_hook_only", "M02", "§6/§10: a later hook over the profile's lowered ceilings is still called")
def ceilings_for_first_hook_only(**kw: Any) -> ReferenceSUT:
    return _adapter("ceilings_for_first_hook_only", _CeilingsForFirstHookOnly)(**kw)


class _DispatchBudgetCountsFirstHookOnly(Dispatcher):
    """BUD (§10): the per-dispatch intent and byte ceilings count the first accepted hook; the
    results of later hooks are admitted without being added to the tally."""

    def _finish_hook(self, pending: Any, verdict: Any, tally: Any) -> Any:
        before = (tally.hooks, tally.intents, tally.result_bytes)
        done = super()._finish_hook(pending, verdict, tally)
        if before[0] >= 1:  # not the first accepted: undo what it added
            tally.intents, tally.result_bytes = before[1], before[2]
        return done


@mutant("dispatch_budget_counts_first_hook_only", "M08", "§10: per-dispatch intent and byte ceilings count only the first hook's result")
def dispatch_budget_counts_first_hook_only(**kw: Any) -> ReferenceSUT:
    return _adapter("dispatch_budget_counts_first_hook_only", _DispatchBudgetCountsFirstHookOnly)(**kw)


# -- a rule kept on the first delivery only ----------------------------------------------------------


class _RecordedSlotsNotHeld(Dispatcher):
    """BUD (§10, recovery): on a later delivery the hooks already recorded do not hold their
    slots, so the hooks still to run get the receipt's whole ceiling again."""

    def _take_slots(self, tally: Any, receipt: Mapping[str, Any]) -> None:
        return None


@mutant(
    "recorded_slots_not_held",
    "M08",
    "§10: a redelivery gives the unrecorded hooks every slot again, past the dispatch ceiling",
    caught_by=("models",),
)
def recorded_slots_not_held(**kw: Any) -> ReferenceSUT:
    return _adapter("recorded_slots_not_held", _RecordedSlotsNotHeld)(**kw)


class _ReplayFromMemory(Dispatcher):
    """JNL-1/JNL-5 (§9): a receipt dispatched before by this dispatcher is answered from what it
    remembers, not from the journal's stored record."""

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> Any:
        seen = self.__dict__.setdefault("_answers", {})
        key = source.get("receipt_id") if isinstance(source, Mapping) else None
        if isinstance(key, str) and key in seen:
            return seen[key]
        outcome = super().dispatch(source, consult_journal=consult_journal)
        if isinstance(key, str) and outcome.admitted and outcome.journal_error is None:
            seen[key] = outcome
        return outcome


@mutant("replay_from_memory", "M05", "§9: a second delivery is answered from memory, not from the stored record")
def replay_from_memory(**kw: Any) -> ReferenceSUT:
    return _adapter("replay_from_memory", _ReplayFromMemory)(**kw)


# -- a rule kept for one event kind only ----------------------------------------------------------


class _PhaseOffForCompletionsOnly(Dispatcher):
    """ADM (§5.1, §10): a disabled phase stops completions; a replan is dispatched anyway."""

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> Any:
        if not (isinstance(source, Mapping) and source.get("event_kind") == "replan_recorded"):
            return super().dispatch(source, consult_journal=consult_journal)
        exact = _dispatcher_module.admissibility
        _dispatcher_module.admissibility = lambda source, phase_enabled: exact(source, True)
        try:
            return super().dispatch(source, consult_journal=consult_journal)
        finally:
            _dispatcher_module.admissibility = exact


@mutant("phase_off_for_completions_only", "M01", "§5.1/§10: a disabled phase still dispatches replans")
def phase_off_for_completions_only(**kw: Any) -> ReferenceSUT:
    return _adapter("phase_off_for_completions_only", _PhaseOffForCompletionsOnly)(**kw)


class _AllowlistForCompletionsOnly(Dispatcher):
    """§10 allowlist: applied to completions; a replan goes to every installed hook."""

    def _admitted_hooks(self, event_kind: str) -> list[InstalledHook]:
        if event_kind == "replan_recorded":
            return [h for h in self.registry.hooks() if event_kind in h.registration["event_kinds"]]
        return super()._admitted_hooks(event_kind)


@mutant("allowlist_for_completions_only", "M01", "§10 allowlist: a replan reaches hooks the allowlist leaves out")
def allowlist_for_completions_only(**kw: Any) -> ReferenceSUT:
    return _adapter("allowlist_for_completions_only", _AllowlistForCompletionsOnly)(**kw)


class _InputScannedForCompletionsOnly(Dispatcher):
    """INP (§7): a completion's hook input is scanned for private values; a replan's is not."""

    def _prepare_hook(self, hook: InstalledHook, did: str, source: Mapping[str, Any], prior: Any, tally: Any) -> Any:
        self.__dict__["_kind"] = source.get("event_kind")
        return super()._prepare_hook(hook, did, source, prior, tally)

    def _boundary_rejection(self, hook_input: dict[str, Any]) -> Any:
        return None if self.__dict__.get("_kind") == "replan_recorded" else super()._boundary_rejection(hook_input)


@mutant("input_scanned_for_completions_only", "M13", "§7: a replan's hook input is handed over unscanned")
def input_scanned_for_completions_only(**kw: Any) -> ReferenceSUT:
    return _adapter("input_scanned_for_completions_only", _InputScannedForCompletionsOnly)(**kw)


# -- an identity or comparison at less than full strength -------------------------------------------


class _ConflictJudgedOnFirstIntent(Dispatcher):
    """JNL-2 (§9): a result is compared with the stored one by its status and first intent only,
    so a different later intent under the same identity passes as a replay."""

    def _finish_hook(self, pending: Any, verdict: Any, tally: Any) -> Any:
        outcome, receipt = super()._finish_hook(pending, verdict, tally)
        if receipt is not None and receipt.get("result_digest"):
            part = {"status": receipt["status"], "intents": receipt["intents"][:1]}
            receipt = {**receipt, "result_digest": "sha256:" + hashlib.sha256(canonical_bytes(part)).hexdigest()}
        return outcome, receipt


@mutant("conflict_judged_on_first_intent", "M06", "§9: a changed later intent under the same identity is taken as a replay")
def conflict_judged_on_first_intent(**kw: Any) -> ReferenceSUT:
    return _adapter("conflict_judged_on_first_intent", _ConflictJudgedOnFirstIntent)(**kw)


class _IdentitySaltedPerProcess(Dispatcher):
    """§9 dispatch_id: a digest salted per dispatcher (as a per-process ``hash()`` would be), so a
    restarted dispatcher names a recorded dispatch anew and runs it again."""

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> Any:
        salt = self.__dict__.setdefault("_salt", os.urandom(4).hex())
        exact = _dispatcher_module.plain_dispatch_id
        _dispatcher_module.plain_dispatch_id = lambda receipt_id, *rest: exact(f"{receipt_id}\x00{salt}", *rest)
        try:
            return super().dispatch(source, consult_journal=consult_journal)
        finally:
            _dispatcher_module.plain_dispatch_id = exact


@mutant("identity_salted_per_process", "M05", "§9: a dispatch identity that changes when the dispatcher restarts")
def identity_salted_per_process(**kw: Any) -> ReferenceSUT:
    return _adapter("identity_salted_per_process", _IdentitySaltedPerProcess)(**kw)


class _ScopeKeptOnFirstIntentOnly(Dispatcher):
    """RES (§8, M09): the first intent's requested write scope is recorded; later intents' are dropped."""

    def _finish_hook(self, pending: Any, verdict: Any, tally: Any) -> Any:
        outcome, receipt = super()._finish_hook(pending, verdict, tally)
        if receipt is not None and len(receipt.get("intents") or ()) > 1:
            intents = [receipt["intents"][0], *({**i, "requested_write_scope": []} for i in receipt["intents"][1:])]
            receipt = {**receipt, "intents": intents}
            outcome = self._from_receipt(receipt, replayed=False, recorded=False)
        return outcome, receipt


@mutant("scope_kept_on_first_intent_only", "M09", "§8: a later intent's requested write scope is not recorded")
def scope_kept_on_first_intent_only(**kw: Any) -> ReferenceSUT:
    return _adapter("scope_kept_on_first_intent_only", _ScopeKeptOnFirstIntentOnly)(**kw)


# -- a durability or identity rule kept for one kind or one length only -----------------------------


class _ReplanRecordsInMemory(SQLiteJournal):
    """JNL-4/JNL-1 (§9): completions' sidecar records are committed durably; a replan's are kept
    in this process's memory only, so a restart forgets them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._volatile: dict[str, dict[str, Any]] = {}

    def commit(self, receipts: list[dict[str, Any]]) -> list[RecordResult]:
        replans = [r for r in receipts if r.get("event_kind") == "replan_recorded"]
        results = super().commit([r for r in receipts if r.get("event_kind") != "replan_recorded"]) if len(replans) < len(receipts) else []
        for receipt in replans:
            outcome, stored = self.merge(self._volatile.get(receipt["dispatch_id"]), receipt)
            self._volatile[receipt["dispatch_id"]] = stored
            results.append(RecordResult(receipt["dispatch_id"], outcome, stored))
        return results

    def get_many(self, dispatch_ids: Any) -> dict[str, dict[str, Any]]:
        wanted = list(dispatch_ids)
        found = super().get_many(wanted)
        found.update({d: self._volatile[d] for d in wanted if d in self._volatile})
        return found

    def records(self) -> list[dict[str, Any]]:
        return [*super().records(), *self._volatile.values()]


@mutant("replan_records_in_memory", "M05", "§9: a replan's sidecar record is not durable; after a restart its dispatch is answered anew")
def replan_records_in_memory(**kw: Any) -> ReferenceSUT:
    return type(
        "Semantic_replan_records_in_memory",
        (ReferenceSUT,),
        {"name": "semantic:replan_records_in_memory", "sqlite_journal_class": _ReplanRecordsInMemory},
    )(**kw)


class _IdentityOverReceiptPrefix(Dispatcher):
    """JNL-3 (§9 dispatch_id): the identity digests the first 16 characters of the receipt id, so
    two receipts whose ids share them (a common prefix, a timestamp to the second) share an identity."""

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> Any:
        exact = _dispatcher_module.plain_dispatch_id
        _dispatcher_module.plain_dispatch_id = lambda receipt_id, *rest: exact(receipt_id[:16], *rest)
        try:
            return super().dispatch(source, consult_journal=consult_journal)
        finally:
            _dispatcher_module.plain_dispatch_id = exact


@mutant("identity_over_receipt_prefix", "M04", "§9: two receipts whose ids share their first 16 characters get one dispatch identity")
def identity_over_receipt_prefix(**kw: Any) -> ReferenceSUT:
    return _adapter("identity_over_receipt_prefix", _IdentityOverReceiptPrefix)(**kw)


class _BlocksSpendOnReplans(ReferenceSUT):
    """ISO (§5.2, §10): a failed hook leaves a completion's spend alone but blocks a replan's."""

    name = "semantic:blocks_spend_on_replans"

    def dispatch(self, source: Mapping[str, Any], *, primary: Any = None) -> Any:
        outcome = super().dispatch(source, primary=primary)
        if primary is not None and outcome.event_kind == "replan_recorded" and any(h.status == "failed" for h in outcome.hooks):
            primary.block_spend()
        return outcome


@mutant("blocks_spend_on_replans", "M07", "§5.2/§10: a hook failure on a replan blocks the quota spend")
def blocks_spend_on_replans(**kw: Any) -> ReferenceSUT:
    return _BlocksSpendOnReplans(**kw)


# -- normalising instead of rejecting ----------------------------------------------------------------


def _known_only(registration: Any) -> Any:
    """The registration with every field the RFC's registration does not name left out, at the
    top level and in its budget."""
    from pwh._core.schemas import load_schema

    schema = load_schema("registration")
    if not isinstance(registration, Mapping):
        return registration
    kept = {k: v for k, v in registration.items() if k in schema["properties"]}
    budget = kept.get("budget")
    known_budget = schema["properties"].get("budget", {}).get("properties")
    if isinstance(budget, Mapping) and isinstance(known_budget, Mapping):
        kept["budget"] = {k: v for k, v in budget.items() if k in known_budget}
    return kept


class _DropsUnknownRegistrationFields(ReferenceSUT):
    """REG (§6 exact fields): a registration's unknown fields are silently dropped and the rest
    installed, instead of the registration being rejected."""

    name = "semantic:drops_unknown_registration_fields"

    def install(self, registration: Mapping[str, Any], producer: Any) -> list[Any]:
        return super().install(_known_only(registration), producer)


@mutant("drops_unknown_registration_fields", "M02", "§6: unknown registration fields are dropped instead of rejected")
def drops_unknown_registration_fields(**kw: Any) -> ReferenceSUT:
    return _DropsUnknownRegistrationFields(**kw)


# -- the library by rule ---------------------------------------------------------------------------

# Each semantic mutant under the RFC named rule it breaks (docs/rules.md); every such rule has at
# least one, each caught by the matrix or the models (tests/campaigns/test_semantic_library.py).
# JNL-7 has none: deduplicating again on intent_id is the executor's job, which the implementation
# under the dispatcher seam does not hold (pwh's fake scheduler plays it).
RULE_OF: dict[str, str] = {
    "durable_for_completions_only": "ADM",
    "committed_for_completions_only": "ADM",
    "committed_on_first_delivery_only": "ADM",
    "phase_off_for_completions_only": "ADM",
    "allowlist_by_capability": "ADM",
    "empty_allowlist_is_none": "ADM",
    "allowlist_for_completions_only": "ADM",
    "ceilings_for_first_hook_only": "REG",
    "drops_unknown_registration_fields": "REG",
    "input_scanned_for_first_hook_only": "INP",
    "input_scanned_for_completions_only": "INP",
    "first_intent_validated_only": "RES",
    "scope_kept_on_first_intent_only": "RES",
    "replan_records_in_memory": "JNL-1",
    "conflict_judged_on_first_intent": "JNL-2",
    "identity_over_receipt_prefix": "JNL-3",
    "identity_salted_per_process": "JNL-4",
    "replay_from_memory": "JNL-5",
    "first_intent_scanned_only": "JNL-6",
    "blocks_spend_on_replans": "ISO",
    "dispatch_budget_counts_first_hook_only": "BUD",
    "recorded_slots_not_held": "BUD",
}
NO_SEMANTIC_MUTANT = {"JNL-7": "deduplicating again on intent_id is the executor's, not the implementation's under the dispatcher seam"}
