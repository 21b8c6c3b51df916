"""The reference with one method replaced, each breaking exactly one rule of the RFC (registered in :data:`pwh._suts.mutants.MUTANTS`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pwh import BoundaryScanner, Dispatcher, DispatchOutcome, MemoryJournal, ReferenceSUT, SQLiteJournal, canonical_bytes
from pwh._core.contracts import judge_validated_result
from pwh._core.journal import RECORDED
from pwh._suts.mutants._registry import mutant


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
        from fakes._world import active_sinks

        for intent in outcome.intents:
            for sink in active_sinks():
                try:
                    sink.write(intent["intent_id"], intent["payload"], admission=None)
                except Exception:
                    pass
        return outcome


@mutant(
    "no_timeout", "M07", "§10 wall time: a hung producer is waited on for 1.5 s whatever timeout_ms says", caught_by=("matrix", "models")
)
def no_timeout(**kw: Any) -> ReferenceSUT:
    return _adapter("no_timeout", dispatcher_class=_NoTimeout)(**kw)


@mutant(
    "replay_calls_provider",
    "M05",
    "§9 replay: the provider is called again instead of the stored receipt being returned",
    caught_by=("matrix", "models"),
)
def replay_calls_provider(**kw: Any) -> ReferenceSUT:
    return _adapter("replay_calls_provider", dispatcher_class=_ReplayCallsProvider)(**kw)


@mutant(
    "conflict_overwrites",
    "M06",
    "§9 conflict: a different result for a recorded dispatch overwrites the original",
    caught_by=("matrix", "models"),
)
def conflict_overwrites(**kw: Any) -> ReferenceSUT:
    return _adapter("conflict_overwrites", sqlite_journal_class=_OverwritingSQLite, memory_journal_class=_OverwritingMemory)(**kw)


@mutant("rolls_back_primary", "M07", "§3.1/§10: a hook failure rolls the primary writeback back", caught_by=("matrix", "models"))
def rolls_back_primary(**kw: Any) -> ReferenceSUT:
    return _RollsBackPrimary(**kw)


@mutant(
    "boundary_lets_paths_through",
    "M13",
    "§7: the input-boundary check is skipped, private values reach the provider",
    caught_by=("matrix",),
)
def boundary_lets_paths_through(**kw: Any) -> ReferenceSUT:
    return _adapter("boundary_lets_paths_through", dispatcher_class=_NoBoundary)(**kw)


@mutant("accepts_external_write", "M12", "§8: an intent claiming an external write is accepted", caught_by=("matrix", "models"))
def accepts_external_write(**kw: Any) -> ReferenceSUT:
    return _adapter("accepts_external_write", dispatcher_class=_AcceptsExternalWrite)(**kw)


@mutant("calls_sink", "M12", "§8/§12 M12: recorded intents are executed straight away against the sink", caught_by=("matrix", "models"))
def calls_sink(**kw: Any) -> ReferenceSUT:
    return _CallsSink(**kw)


@mutant("out_of_order", "M08", "§10: hooks run in reverse hook_id order", caught_by=("matrix", "models"))
def out_of_order(**kw: Any) -> ReferenceSUT:
    return _adapter("out_of_order", dispatcher_class=_OutOfOrder)(**kw)


@mutant("shared_budget", "M08", "§10: a failed hook uses up another hook's intent slot", caught_by=("matrix", "models"))
def shared_budget(**kw: Any) -> ReferenceSUT:
    return _adapter("shared_budget", dispatcher_class=_SharedBudget)(**kw)


@mutant("blocks_spend", "M07", "§3.1: a hook failure blocks the quota spend", caught_by=("matrix", "models"))
def blocks_spend(**kw: Any) -> ReferenceSUT:
    return _BlocksSpend(**kw)


class _PrivateReceiptIdPassedOn(Dispatcher):
    def _receipt_id_refusal(self, receipt_id):
        return None


@mutant(
    "private_receipt_id_passed_on",
    "M13",
    "§7: a receipt id that is a credential is handed to the hooks as it is, not refused or made opaque",
)
def private_receipt_id_passed_on(**kw: Any) -> ReferenceSUT:
    return _adapter("private_receipt_id_passed_on", dispatcher_class=_PrivateReceiptIdPassedOn)(**kw)


class _FindsNothing(BoundaryScanner):
    """A public-boundary scan that finds nothing in what it is given."""

    def scan_value(self, value: Any, path: str = "$") -> list[Any]:
        return []


class _JournalsOpenPayloads(Dispatcher):
    """11. A result is judged by its contract alone: whatever an intent kind's payload schema takes
    is journaled, credentials included (the input boundary is still checked)."""

    _results_scanner = _FindsNothing()

    def _accept_fast(self, value, reg, did):
        return None  # the one-pass check scans with the dispatcher's own scanner

    def _judge_in_full(self, value, reg, did):
        plain, raw, rejected = self._validate(value, reg, did)
        return judge_validated_result(plain, raw, rejected, self._results_scanner)


@mutant("journals_open_payloads", "M13", "§9/§12 M13: a result is never scanned, so a credential in an open payload is journaled")
def journals_open_payloads(**kw: Any) -> ReferenceSUT:
    return _adapter("journals_open_payloads", dispatcher_class=_JournalsOpenPayloads)(**kw)


# Readings of pwh's (caught_by=("profile",)): the documents allow what these do, so each must pass
# the RFC verdict on its row and show there as a profile divergence.


def _nesting(value: Any) -> int:
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, Mapping):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend((v, depth + 1) for v in node)
    return deepest


class _LowerNestingBound(Dispatcher):
    """12. A result nested deeper than 40 levels is refused with a compact code: §10 bounds what
    core takes without a number; pwh's bound (64, the 60-deep payload at its edge) is a reading."""

    BOUND = 40

    def _accept_fast(self, value, reg, did):
        return None if _nesting(value) > self.BOUND else super()._accept_fast(value, reg, did)

    def _judge_in_full(self, value, reg, did):
        if _nesting(value) > self.BOUND:
            from pwh import Rejection
            from pwh._core import codes

            return Rejection(codes.RESULT_CONTRACT_REJECTED, "$", "nested deeper than this implementation takes")
        return super()._judge_in_full(value, reg, did)


@mutant("lower_nesting_bound", "M07", "§10 names no number: results nested deeper than 40 levels are refused", caught_by=("profile",))
def lower_nesting_bound(**kw: Any) -> ReferenceSUT:
    return _adapter("lower_nesting_bound", dispatcher_class=_LowerNestingBound)(**kw)


# What carries none of what §7, §9 and §12 M13 name: an auth scheme with no credential after it,
# the loopback name, environment variables' names (not their values).
_LOOK_ALIKES = (
    "an authorization header",
    "an upper-case authorization header",
    "a bare loopback host name",
    "an environment expansion",
    "a braced environment expansion",
    "a windows environment expansion",
)


class _KeepsLookAlikes(Dispatcher):
    """13. Reads the look-alikes as public: they pass its input and result scans."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from fakes._private_samples import PRIVATE_SAMPLES

        self.scanner = BoundaryScanner(allow=[PRIVATE_SAMPLES[name][0] for name in _LOOK_ALIKES])


@mutant(
    "keeps_look_alikes",
    "M13",
    "§7/§12 M13 name credential and environment values: an auth scheme alone, the loopback name and $VAR are kept",
    caught_by=("profile",),
)
def keeps_look_alikes(**kw: Any) -> ReferenceSUT:
    return _adapter("keeps_look_alikes", dispatcher_class=_KeepsLookAlikes)(**kw)


class _RefusesPerHook(Dispatcher):
    """14. An inadmissible source is refused hook by hook, as LoopX does: every admitted hook gets a
    failed outcome before any call, nothing is proposed and nothing is journaled. §5.1 makes such a
    dispatch illegal and §12 M03 asks for zero calls; neither says the refusal is one outcome."""

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> DispatchOutcome:
        outcome = super().dispatch(source, consult_journal=consult_journal)
        kind = outcome.event_kind or (source.get("event_kind") if isinstance(source, Mapping) else None)
        if outcome.admitted or not isinstance(kind, str) or outcome.rejection is None:
            return outcome
        from pwh._core.outcome import HookOutcome

        refused = tuple(
            HookOutcome(h.hook_id, None, "failed", outcome.code, rejection=outcome.rejection) for h in self._admitted_hooks(kind)
        )
        return DispatchOutcome(outcome.receipt_id, kind, True, hooks=refused)


@mutant(
    "refuses_per_hook",
    "M03",
    "§5.1/§12 M03 ask for no dispatch (zero calls, no intent): an inadmissible source refused hook by hook, nothing recorded",
    caught_by=("profile",),
)
def refuses_per_hook(**kw: Any) -> ReferenceSUT:
    return _adapter("refuses_per_hook", dispatcher_class=_RefusesPerHook)(**kw)


class _StripsWriteScope(Dispatcher):
    """15. A requested write scope is dropped from the recorded intent (nothing to admit later):
    §6 makes the scope a request that is recorded, and §12 M09 asks that it be recorded as one."""

    def _accept_fast(self, value, reg, did):
        return None  # every result through the general path, where the scope is dropped

    def _judge_in_full(self, value, reg, did):
        judged = super()._judge_in_full(value, reg, did)
        if isinstance(judged, tuple):
            plain, _raw = judged
            for intent in plain.get("intents", []):
                intent["requested_write_scope"] = []
            return plain, canonical_bytes(plain)
        return judged


@mutant(
    "strips_write_scope", "M09", "§6/§12 M09: a requested write scope is dropped from the recorded intent instead of recorded as a request"
)
def strips_write_scope(**kw: Any) -> ReferenceSUT:
    return _adapter("strips_write_scope", dispatcher_class=_StripsWriteScope)(**kw)
