"""The first hand-written mutants: the reference with one method replaced, each breaking exactly
one rule of the RFC (registered in :data:`scenarios.mutants.MUTANTS`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pwh import Dispatcher, DispatchOutcome, MemoryJournal, ReferenceSUT, SQLiteJournal
from pwh._core.journal import RECORDED

from ._registry import mutant


# 1. No real timeout: a hung producer is waited on for 1.5 s whatever the registration says.
class _NoTimeout(Dispatcher):
    def _call_spec(self, hook, hook_input):
        producer, frozen, _limit, *rest = super()._call_spec(hook, hook_input)
        return (producer, frozen, 1500, *rest)


# 2. Replay calls the provider again instead of returning the stored receipt.
class _ReplayCallsProvider(Dispatcher):
    def dispatch(self, source: Any, *, consult_journal: bool = True) -> DispatchOutcome:
        return super().dispatch(source, consult_journal=False)


# 3. A different result for a recorded dispatch overwrites the original.
def _overwrite(self: Any, existing: dict[str, Any] | None, new: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if existing is not None and existing["status"] != "failed" and new["status"] != "failed":
        if new["result_digest"] != existing["result_digest"]:
            return RECORDED, new
    from pwh._core.journal import merge

    return merge(existing, new)


class _OverwritingSQLite(SQLiteJournal):
    merge = _overwrite


class _OverwritingMemory(MemoryJournal):
    merge = _overwrite


# 5. The boundary check is skipped: private paths and prose reach the provider.
class _NoBoundary(Dispatcher):
    def _boundary_rejection(self, hook_input):
        return None


# 6. An intent that claims an external write is accepted (the claim is ignored when validating).
class _AcceptsExternalWrite(Dispatcher):
    def _validate(self, value, reg, did):
        import copy

        claimed = copy.deepcopy(value) if isinstance(value, dict) else value
        if isinstance(claimed, dict):
            for intent in claimed.get("intents", []) or []:
                if isinstance(intent, dict):
                    intent["external_write_performed"] = False
        plain, raw, rejected = super()._validate(claimed, reg, did)
        if plain is not None:
            plain = copy.deepcopy(value)  # record what the hook really said
        return plain, raw, rejected


# 8. Hooks run in reverse hook_id order.
class _OutOfOrder(Dispatcher):
    def _admitted_hooks(self, event_kind):
        return list(reversed(super()._admitted_hooks(event_kind)))


# 9. A failed hook uses up an intent slot of the dispatch.
class _SharedBudget(Dispatcher):
    def _prepare_hook(self, hook, did, source, prior, tally):
        return self._charge(super()._prepare_hook(hook, did, source, prior, tally), hook, tally)

    def _finish_hook(self, pending, verdict, tally):
        return self._charge(super()._finish_hook(pending, verdict, tally), pending.hook, tally)

    @staticmethod
    def _charge(step, hook, tally):
        if type(step) is tuple and step[0].status == "failed":
            tally.intents += hook.registration["budget"]["max_intents_per_dispatch"]
        return step


def _adapter(name: str, **attrs: Any) -> type[ReferenceSUT]:
    return type(f"Broken_{name}", (ReferenceSUT,), {"name": f"broken:{name}", **attrs})


class _RollsBackPrimary(ReferenceSUT):
    """4. A hook failure rolls the primary writeback back (as if dispatched inside its transaction)."""

    name = "broken:rolls_back_primary"

    def dispatch(self, source: Mapping[str, Any], *, primary: Any = None) -> DispatchOutcome:
        outcome = super().dispatch(source, primary=primary)
        if primary is not None and any(h.status == "failed" for h in outcome.hooks):
            primary.rollback_writeback()
        return outcome


class _BlocksSpend(ReferenceSUT):
    """10. A hook failure blocks the quota spend."""

    name = "broken:blocks_spend"

    def dispatch(self, source: Mapping[str, Any], *, primary: Any = None) -> DispatchOutcome:
        outcome = super().dispatch(source, primary=primary)
        if primary is not None and any(h.status == "failed" for h in outcome.hooks):
            primary.block_spend()
        return outcome


class _CallsSink(ReferenceSUT):
    """7. Recorded intents are executed straight away against the effect target."""

    name = "broken:calls_sink"

    def dispatch(self, source: Mapping[str, Any], *, primary: Any = None) -> DispatchOutcome:
        outcome = super().dispatch(source, primary=primary)
        from .._world import active_sinks

        for intent in outcome.intents:
            for sink in active_sinks():
                try:
                    sink.write(intent["intent_id"], intent["payload"], admission=None)
                except Exception:
                    pass
        return outcome


@mutant('no_timeout', 'M07', '§10 wall time: a hung producer is waited on for 1.5 s whatever timeout_ms says', caught_by=('matrix', 'models'))
def no_timeout(**kw: Any) -> ReferenceSUT:
    return _adapter("no_timeout", dispatcher_class=_NoTimeout)(**kw)


@mutant('replay_calls_provider', 'M05', '§9 replay: the provider is called again instead of the stored receipt being returned', caught_by=('matrix', 'models'))
def replay_calls_provider(**kw: Any) -> ReferenceSUT:
    return _adapter("replay_calls_provider", dispatcher_class=_ReplayCallsProvider)(**kw)


@mutant('conflict_overwrites', 'M06', '§9 conflict: a different result for a recorded dispatch overwrites the original', caught_by=('matrix', 'models'))
def conflict_overwrites(**kw: Any) -> ReferenceSUT:
    return _adapter("conflict_overwrites", sqlite_journal_class=_OverwritingSQLite, memory_journal_class=_OverwritingMemory)(**kw)


@mutant('rolls_back_primary', 'M07', '§3.1/§10: a hook failure rolls the primary writeback back', caught_by=('matrix', 'models'))
def rolls_back_primary(**kw: Any) -> ReferenceSUT:
    return _RollsBackPrimary(**kw)


@mutant('boundary_lets_paths_through', 'M13', '§7: the input-boundary check is skipped, private values reach the provider', caught_by=('matrix',))
def boundary_lets_paths_through(**kw: Any) -> ReferenceSUT:
    return _adapter("boundary_lets_paths_through", dispatcher_class=_NoBoundary)(**kw)


@mutant('accepts_external_write', 'M12', '§8: an intent claiming an external write is accepted', caught_by=('matrix', 'models'))
def accepts_external_write(**kw: Any) -> ReferenceSUT:
    return _adapter("accepts_external_write", dispatcher_class=_AcceptsExternalWrite)(**kw)


@mutant('calls_sink', 'M12', '§8/§12 M12: recorded intents are executed straight away against the sink', caught_by=('matrix', 'models'))
def calls_sink(**kw: Any) -> ReferenceSUT:
    return _CallsSink(**kw)


@mutant('out_of_order', 'M08', '§10: hooks run in reverse hook_id order', caught_by=('matrix', 'models'))
def out_of_order(**kw: Any) -> ReferenceSUT:
    return _adapter("out_of_order", dispatcher_class=_OutOfOrder)(**kw)


@mutant('shared_budget', 'M08', "§10: a failed hook uses up another hook's intent slot", caught_by=('matrix', 'models'))
def shared_budget(**kw: Any) -> ReferenceSUT:
    return _adapter("shared_budget", dispatcher_class=_SharedBudget)(**kw)


@mutant('blocks_spend', 'M07', '§3.1: a hook failure blocks the quota spend', caught_by=('matrix', 'models'))
def blocks_spend(**kw: Any) -> ReferenceSUT:
    return _BlocksSpend(**kw)


class _PrivateReceiptIdPassedOn(Dispatcher):
    def _receipt_id_refusal(self, receipt_id):
        return None


@mutant("private_receipt_id_passed_on", "M13",
        "§7: a receipt id that is a credential is handed to the hooks as it is, not refused or made opaque")
def private_receipt_id_passed_on(**kw: Any) -> ReferenceSUT:
    return _adapter("private_receipt_id_passed_on", dispatcher_class=_PrivateReceiptIdPassedOn)(**kw)
