"""Mutants for the limit scenarios (features/*_limits.feature): for each, the one wrong
implementation that would pass the matrix without it, made by replacing one step of the reference.

Each is registered in :data:`pwh._suts.mutants.MUTANTS` with the row it breaks; the scenario
that catches it is named in its docstring line (features/*_limits.feature).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from pwh import (
    CORE_CEILINGS,
    CrashPlan,
    Dispatcher,
    DispatchOutcome,
    ReferenceSUT,
    RegistrationRejected,
    Rejection,
    SQLiteJournal,
)
from pwh._core import codes
from pwh._core.canonical import dumps_plain, to_plain
from pwh._core.contracts import SIDECAR_SCHEMA_VERSION
from pwh._core.dispatcher import _Pending
from pwh._core.freeze import freeze
from pwh._core.journal import checksum
from pwh._core.runner import RETURNED
from pwh._suts.mutants._in_process import InProcess
from pwh._suts.mutants._registry import mutant

_RESULT_KEYS = ("schema_version", "status", "intents")
_INTENT_KEYS = tuple(
    """
    schema_version intent_id hook_id capability_id source_dispatch_id intent_kind operation
    policy_version payload budget requested_write_scope failure_policy grants_new_action_authority
    external_write_performed
    """.split()
)


def _adapter(name: str, **attrs: Any) -> type[ReferenceSUT]:
    return type(f"Teeth_{name}", (ReferenceSUT,), {"name": f"broken:{name}", **attrs})


def _reject(reason: str) -> Rejection:
    return Rejection(codes.RESULT_CONTRACT_REJECTED, "$", reason)


class _SlowPath(Dispatcher):
    """The reference with its fast accept path off, so ``_validate`` alone judges every result."""

    def _accept_fast(self, value, reg, did):
        return None


def _copy(value: Any) -> Any:
    """A deep copy where one can be made (a read-only view or a hostile object stays as it is)."""
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


def _intents(value: Any) -> list[dict[str, Any]]:
    found = value.get("intents") if isinstance(value, dict) else None
    return [i for i in found if isinstance(i, dict)] if isinstance(found, list) else []


# -- M02: registration bounds ---------------------------------------------------------------------


class _InstallWith(ReferenceSUT):
    def _install_with(self, registration: Mapping[str, Any], producer: Any, ceilings: Mapping[str, int]) -> list[Rejection]:
        try:
            self.registry.install(registration, producer, ceilings=ceilings)
        except RegistrationRejected as exc:
            return exc.rejections
        return []


class _CeilingsExclusive(_InstallWith):
    """A budget equal to its ceiling counts as over it."""

    name = "broken:ceilings_exclusive"

    def install(self, registration, producer):
        return self._install_with(registration, producer, {k: v - 1 for k, v in self.profile.budget_ceilings.items()})


class _NoProfileRecheck(Dispatcher):
    def _registration_over_ceilings(self, hook):
        return []


class _IgnoresProfileCeilings(_InstallWith):
    """Only the core ceilings are ever checked, never the profile's lower ones."""

    name = "broken:profile_ceilings_ignored"
    dispatcher_class = _NoProfileRecheck

    def install(self, registration, producer):
        return self._install_with(registration, producer, CORE_CEILINGS)


class _BudgetClamped(ReferenceSUT):
    """An out-of-range intent budget is clamped into range instead of rejected."""

    name = "broken:budget_clamped"

    def install(self, registration, producer):
        reg = copy.deepcopy(dict(registration)) if isinstance(registration, Mapping) else registration
        budget = reg.get("budget") if isinstance(reg, dict) else None
        if isinstance(budget, dict):
            for key, value in list(budget.items()):
                ceiling = self.profile.budget_ceilings.get(key)
                if key == "max_intents_per_dispatch" and type(value) is int and ceiling is not None:
                    budget[key] = max(1, min(value, ceiling))
        return super().install(reg, producer)


class _TokenBoundsExclusive(ReferenceSUT):
    """Token bounds off by one: 8 intent kinds, or a 64-character hook-id segment, are refused."""

    name = "broken:token_bounds_exclusive"

    def install(self, registration, producer):
        if isinstance(registration, Mapping):
            if len(registration.get("intent_kinds") or []) >= 8:
                return [Rejection(codes.REGISTRATION_REJECTED, "$.intent_kinds", "too many intent kinds")]
            if any(len(seg) >= 64 for seg in str(registration.get("hook_id", "")).split(".")):
                return [Rejection(codes.REGISTRATION_REJECTED, "$.hook_id", "hook id segment too long")]
        return super().install(registration, producer)


class _LenientTokenBounds(ReferenceSUT):
    """Over-long token arrays and hook-id segments are cut to size instead of rejected."""

    name = "broken:lenient_token_bounds"

    def install(self, registration, producer):
        reg = copy.deepcopy(dict(registration)) if isinstance(registration, Mapping) else registration
        if isinstance(reg, dict):
            if isinstance(reg.get("intent_kinds"), list):
                reg["intent_kinds"] = reg["intent_kinds"][:8]
            if isinstance(reg.get("hook_id"), str):
                reg["hook_id"] = ".".join(seg[:64] for seg in reg["hook_id"].split("."))
        return super().install(reg, producer)


# Profile mutants: they break pwh's own numbers (the core ceilings, 8 intent kinds, 64-character
# id segments), which no RFC clause fixes, so only a profile divergence can catch them. They are not
# in MUTANTS (its instruments judge RFC verdicts); run one with
#   pwh gate --sut pwh._suts.mutants._limits:NAME --rows M02 --fail-on-profile   (exit 1)
PROFILE_MUTANTS: dict[str, str] = {
    "budget_clamped": "M02",  # a max_intents_per_dispatch over the ceiling, or zero, clamped instead of rejected
    "token_bounds_exclusive": "M02",  # 8 intent kinds, or a 64-character hook-id segment, refused
    "lenient_token_bounds": "M02",  # over-long intent-kind arrays and hook-id segments cut to size
    "ids_never_scanned": "M02",  # a hook id that names a host installed and spelled out in its records
}


@mutant("ceilings_exclusive", "M02", "§6 REG: a budget exactly at its ceiling is rejected (the bound is read as exclusive)")
def ceilings_exclusive(**kw: Any) -> ReferenceSUT:
    return _CeilingsExclusive(**kw)


@mutant("profile_ceilings_ignored", "M02", "§6 REG/§10: only the core ceilings are checked, never the profile's lower ones")
def profile_ceilings_ignored(**kw: Any) -> ReferenceSUT:
    return _IgnoresProfileCeilings(**kw)


def budget_clamped(**kw: Any) -> ReferenceSUT:
    return _BudgetClamped(**kw)


def token_bounds_exclusive(**kw: Any) -> ReferenceSUT:
    return _TokenBoundsExclusive(**kw)


def lenient_token_bounds(**kw: Any) -> ReferenceSUT:
    return _LenientTokenBounds(**kw)


# -- M03: admissibility ---------------------------------------------------------------------------


class _SourceRewrite(ReferenceSUT):
    def _rewrite(self, source: dict[str, Any]) -> None:
        raise NotImplementedError

    def dispatch(self, source, *, primary=None):
        if isinstance(source, Mapping):
            source = dict(source)
            self._rewrite(source)
        return super().dispatch(source, primary=primary)


class _UnknownStatusCommitted(_SourceRewrite):
    """Only the four named non-committed statuses are refused; any other counts as committed."""

    name = "broken:unknown_status_is_committed"

    def _rewrite(self, source: dict[str, Any]) -> None:
        if source.get("step_status") not in ("prepared", "rejected", "inferred", "prose_only"):
            source["step_status"] = "committed"


class _DurableTruthy(_SourceRewrite):
    """The durable checkpoint is read by truthiness, not as a proven true."""

    name = "broken:durable_truthy"

    def _rewrite(self, source: dict[str, Any]) -> None:
        source["durable_checkpoint"] = bool(source.get("durable_checkpoint"))


class _EmptyEffectAccepted(_SourceRewrite):
    """An empty effect identity passes when the plan's is empty too (only equality is checked)."""

    name = "broken:empty_effect_accepted"

    def _rewrite(self, source: dict[str, Any]) -> None:
        if source.get("effect_id") == "" and source.get("plan_effect_id") == "":
            source["effect_id"] = source["plan_effect_id"] = "effect_unset"


@mutant("unknown_status_is_committed", "M03", "§5.1: a step status other than the four named non-committed ones dispatches as committed")
def unknown_status_is_committed(**kw: Any) -> ReferenceSUT:
    return _UnknownStatusCommitted(**kw)


@mutant("durable_truthy", "M03", "§5.1: a durable checkpoint of 'true' or 1 counts as proven")
def durable_truthy(**kw: Any) -> ReferenceSUT:
    return _DurableTruthy(**kw)


@mutant("empty_effect_accepted", "M03", "§5.1: an empty effect identity dispatches when the plan's is empty too")
def empty_effect_accepted(**kw: Any) -> ReferenceSUT:
    return _EmptyEffectAccepted(**kw)


# -- M04: identity history and the whole input -----------------------------------------------------


class _HistoryOverwritingSQLite(SQLiteJournal):
    """One record per hook: a new dispatch's record replaces the hook's earlier ones."""

    def commit(self, receipts):
        newest = {r["hook_id"]: r["dispatch_id"] for r in receipts}
        for did, blob in self._db.execute("SELECT dispatch_id, receipt FROM sidecar_receipts").fetchall():
            hook = json.loads(blob).get("hook_id")
            if hook in newest and newest[hook] != did:
                self._db.execute("DELETE FROM sidecar_receipts WHERE dispatch_id = ?", (did,))
        return super().commit(receipts)


class _BoundaryFlagDropped(Dispatcher):
    """The input's boundary block loses one of its six flags."""

    def _prepare_hook(self, hook, did, source, prior, tally):
        step = super()._prepare_hook(hook, did, source, prior, tally)
        if type(step) is _Pending:
            step.hook_input["boundary"].pop("absolute_paths_recorded", None)
        return step


@mutant("history_overwritten", "M04", "§9 JNL-3: a hook's new dispatch record overwrites its earlier history")
def history_overwritten(**kw: Any) -> ReferenceSUT:
    return _adapter("history_overwritten", sqlite_journal_class=_HistoryOverwritingSQLite)(**kw)


@mutant("boundary_flag_dropped", "M04", "§7: the hook input's boundary block lacks absolute_paths_recorded")
def boundary_flag_dropped(**kw: Any) -> ReferenceSUT:
    return _adapter("boundary_flag_dropped", dispatcher_class=_BoundaryFlagDropped)(**kw)


# -- M05: the journal between a crash and recovery ----------------------------------------------------


class _NonAtomicSQLite(SQLiteJournal):
    """Each record of a dispatch is committed on its own, not all in one transaction."""

    def commit(self, receipts):
        results = []
        armed, quiet = self.crash, CrashPlan(self.crash.known)
        for index, receipt in enumerate(receipts):
            self.crash = armed if index == len(receipts) - 1 else quiet
            try:
                results.extend(super().commit([receipt]))
            finally:
                self.crash = armed
        return results


class _RecoveryRestamps(ReferenceSUT):
    """Recovery re-stamps every record it finds (its attempt count goes up)."""

    name = "broken:recovery_rewrites_records"

    def restart(self) -> None:
        super().restart()
        journal = self.dispatcher.journal
        db = getattr(journal, "_db", None)
        if db is None:
            return
        for seq, blob in db.execute("SELECT seq, receipt FROM sidecar_receipts").fetchall():
            record = json.loads(blob)
            record["attempts"] = int(record.get("attempts", 0)) + 1
            new = dumps_plain(record)
            db.execute("UPDATE sidecar_receipts SET receipt = ?, checksum = ? WHERE seq = ?", (new, checksum(new), seq))


@mutant(
    "non_atomic_commit",
    "M05",
    "pwh's reading of §14: a receipt's sidecar records are committed one per dispatch identity, not all at once (the RFC allows either)",
    caught_by=("profile",),
)
def non_atomic_commit(**kw: Any) -> ReferenceSUT:
    return _adapter("non_atomic_commit", sqlite_journal_class=_NonAtomicSQLite)(**kw)


@mutant("recovery_rewrites_records", "M05", "§9 JNL-3: recovery rewrites the records a crash left complete")
def recovery_rewrites_records(**kw: Any) -> ReferenceSUT:
    return _RecoveryRestamps(**kw)


# -- M02: a profile lowered after installation ------------------------------------------------------


class _RecheckExclusive(Dispatcher):
    """The dispatch-time re-check reads the profile's lowered ceilings as exclusive bounds."""

    def _registration_over_ceilings(self, hook):
        from pwh import validate_registration

        ceilings = {k: v - 1 for k, v in self.profile.budget_ceilings.items()}
        return validate_registration(hook.registration, known_intent_kinds=self.registry.catalog.kinds, ceilings=ceilings)


@mutant("recheck_exclusive", "M02", "§6 REG/§10: a hook whose budget equals a lowered profile ceiling is refused at dispatch")
def recheck_exclusive(**kw: Any) -> ReferenceSUT:
    return _adapter("recheck_exclusive", dispatcher_class=_RecheckExclusive)(**kw)


# -- M06: the same canonical result ----------------------------------------------------------------


class _DigestNotCanonical(Dispatcher):
    """The result digest is taken over the answer's own key order, not its canonical bytes."""

    def _accept_fast(self, value, reg, did):
        return None

    def _judge_in_full(self, value, reg, did):
        judged = super()._judge_in_full(value, reg, did)
        if type(judged) is Rejection:
            return judged
        plain, _raw = judged  # type: ignore[misc]  # a Rejection returned above
        return plain, json.dumps(to_plain(value), separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@mutant("digest_not_canonical", "M06", "§9 JNL-1: the same result in another key order is judged a different result (a conflict)")
def digest_not_canonical(**kw: Any) -> ReferenceSUT:
    return _adapter("digest_not_canonical", dispatcher_class=_DigestNotCanonical)(**kw)


# -- M07: result bounds, exact shape, bindings, late answers, self-described receipts ------------------


class _ResultBytesExclusive(_SlowPath):
    def _validate(self, value, reg, did):
        plain, raw, rejected = super()._validate(value, reg, did)
        if plain is not None and len(raw) >= reg["budget"]["max_result_bytes"]:
            return None, raw, [_reject("at or over the byte budget")]
        return plain, raw, rejected


class _ResultBytesAsCharacters(_SlowPath):
    def _validate(self, value, reg, did):
        roomy = {**reg, "budget": {**reg["budget"], "max_result_bytes": CORE_CEILINGS["max_result_bytes"]}}
        plain, raw, rejected = super()._validate(value, roomy, did)
        limit = reg["budget"]["max_result_bytes"]
        if plain is not None and len(raw.decode("utf-8")) > limit:
            return None, raw, [_reject("over the budget in characters")]
        if plain is not None and any(i["budget"]["max_result_bytes"] > limit for i in plain["intents"]):
            return None, raw, [_reject("an intent's budget is over the hook's")]
        return plain, raw, rejected


class _IntentsExclusive(_SlowPath):
    def _validate(self, value, reg, did):
        plain, raw, rejected = super()._validate(value, reg, did)
        if plain is not None and len(plain["intents"]) >= reg["budget"]["max_intents_per_dispatch"]:
            return None, raw, [_reject("at the intent budget")]
        return plain, raw, rejected


class _IgnoresUnknownFields(_SlowPath):
    def _validate(self, value, reg, did):
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if k in _RESULT_KEYS or type(k) is not str}
            if isinstance(value.get("intents"), list):
                kept = []
                for intent in value["intents"]:
                    if isinstance(intent, dict):
                        intent = {k: v for k, v in intent.items() if k in _INTENT_KEYS}
                        if isinstance(intent.get("budget"), dict):
                            intent["budget"] = {k: v for k, v in intent["budget"].items() if k in ("max_attempts", "max_result_bytes")}
                    kept.append(intent)
                value["intents"] = kept
        return super()._validate(value, reg, did)


class _FillsMissingFields(_SlowPath):
    DEFAULTS = {
        "requested_write_scope": [],
        "failure_policy": "isolate",
        "grants_new_action_authority": False,
        "external_write_performed": False,
        "operation": "follow_up",
    }

    def _validate(self, value, reg, did):
        value = _copy(value) if isinstance(value, dict) else value
        for intent in _intents(value):
            for key, default in self.DEFAULTS.items():
                intent.setdefault(key, copy.deepcopy(default))
        return super()._validate(value, reg, did)


class _CapabilityUnchecked(_SlowPath):
    def _validate(self, value, reg, did):
        value = _copy(value) if isinstance(value, dict) else value
        for intent in _intents(value):
            intent["capability_id"] = reg["capability_id"]
        return super()._validate(value, reg, did)


class _KindAgainstCatalog(_SlowPath):
    def _validate(self, value, reg, did):
        return super()._validate(value, {**reg, "intent_kinds": sorted(self.registry.catalog.kinds)}, did)


class _DigestIgnoresPolicy(_SlowPath):
    """The identity is checked under a fixed default policy version, not the intent's own."""

    def _validate(self, value, reg, did):
        checked = _copy(value) if isinstance(value, dict) else value
        for intent in _intents(checked):
            intent["policy_version"] = "v0"
        plain, raw, rejected = super()._validate(checked, reg, did)
        if plain is None:
            return plain, raw, rejected
        original = to_plain(value)
        return original, dumps_plain(original), []


class _TrustsSelfDescribed(Dispatcher):
    """A result that presents itself as a completed sidecar receipt is recorded as that receipt."""

    def _finish_hook(self, pending, verdict, tally):
        value = verdict.value
        if verdict.kind == RETURNED and isinstance(value, dict) and value.get("schema_version") == SIDECAR_SCHEMA_VERSION:
            receipt = to_plain(value)
            return self._from_receipt(receipt, replayed=False, recorded=False), receipt
        return super()._finish_hook(pending, verdict, tally)


class _LateRecorder(InProcess):
    """A provider's answer that comes after its timeout is kept, to be recorded when it lands."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.late: list[tuple[Any, str, dict[str, Any], Any]] = []

    def _call_spec(self, hook, hook_input):
        import time

        producer, frozen, limit, *rest = super()._call_spec(hook, hook_input)
        late, did, source = self.late, hook_input["dispatch_id"], dict(hook_input["source"])

        def timed(argument: Any) -> Any:
            started = time.monotonic()
            value = producer(argument)
            if time.monotonic() - started > limit / 1000:
                late.append((hook, did, source, value))
            return value

        return (timed, frozen, limit, *rest)


class _LateRecordingSUT(ReferenceSUT):
    name = "broken:late_answer_recorded"
    dispatcher_class = _LateRecorder

    def journal_records(self) -> list[dict[str, Any]]:
        dispatcher = self.dispatcher
        while getattr(dispatcher, "late", None):
            hook, did, source, value = dispatcher.late.pop(0)  # type: ignore[attr-defined]  # this mutant's own queue
            plain, raw, _ = dispatcher._validate(value, hook.registration, did)
            if plain is not None:
                digest = "sha256:" + hashlib.sha256(raw).hexdigest()
                dispatcher.journal.commit([dispatcher._receipt(hook, did, source, plain["status"], None, plain["intents"], digest, 1)])
        return super().journal_records()


@mutant("result_bytes_exclusive", "M07", "§8: a result of exactly max_result_bytes is rejected (the budget read as exclusive)")
def result_bytes_exclusive(**kw: Any) -> ReferenceSUT:
    return _adapter("result_bytes_exclusive", dispatcher_class=_ResultBytesExclusive)(**kw)


@mutant("result_bytes_as_characters", "M07", "§8: the result budget counts characters, not UTF-8 bytes of the serialised result")
def result_bytes_as_characters(**kw: Any) -> ReferenceSUT:
    return _adapter("result_bytes_as_characters", dispatcher_class=_ResultBytesAsCharacters)(**kw)


@mutant(
    "intents_limit_exclusive",
    "M07",
    "§10: a result with exactly max_intents_per_dispatch intents is rejected (the budget read as exclusive)",
)
def intents_limit_exclusive(**kw: Any) -> ReferenceSUT:
    return _adapter("intents_limit_exclusive", dispatcher_class=_IntentsExclusive)(**kw)


@mutant("ignores_unknown_fields", "M07", "§8: fields an intent or result should not have are dropped instead of rejected")
def ignores_unknown_fields(**kw: Any) -> ReferenceSUT:
    return _adapter("ignores_unknown_fields", dispatcher_class=_IgnoresUnknownFields)(**kw)


@mutant("fills_missing_fields", "M07", "§8: an intent's missing fields are filled with defaults instead of rejected")
def fills_missing_fields(**kw: Any) -> ReferenceSUT:
    return _adapter("fills_missing_fields", dispatcher_class=_FillsMissingFields)(**kw)


@mutant("capability_unchecked", "M07", "§8: an intent's capability_id is not checked against the admitted registration")
def capability_unchecked(**kw: Any) -> ReferenceSUT:
    return _adapter("capability_unchecked", dispatcher_class=_CapabilityUnchecked)(**kw)


@mutant("kind_checked_against_catalog", "M07", "§8: an intent kind is checked against the catalog, not the hook's registration")
def kind_checked_against_catalog(**kw: Any) -> ReferenceSUT:
    return _adapter("kind_checked_against_catalog", dispatcher_class=_KindAgainstCatalog)(**kw)


@mutant("digest_ignores_policy_version", "M07", "§9: intent_id is checked without the intent's own policy version")
def digest_ignores_policy_version(**kw: Any) -> ReferenceSUT:
    return _adapter("digest_ignores_policy_version", dispatcher_class=_DigestIgnoresPolicy)(**kw)


@mutant("trusts_self_described_receipt", "M07", "§9 JNL-5: a provider's answer shaped as a sidecar receipt is recorded as one")
def trusts_self_described_receipt(**kw: Any) -> ReferenceSUT:
    return _adapter("trusts_self_described_receipt", dispatcher_class=_TrustsSelfDescribed)(**kw)


@mutant("late_answer_recorded", "M07", "§10 wall time: an answer that arrives after the timeout is recorded once it lands")
def late_answer_recorded(**kw: Any) -> ReferenceSUT:
    return _LateRecordingSUT(**kw)


# -- M08: per-dispatch ceilings and hooks that must not reach each other --------------------------------


class _HooksCeilingExclusive(Dispatcher):
    def _free_slots(self, tally):
        return super()._free_slots(tally) - 1


class _DispatchBytesExclusive(Dispatcher):
    def _finish_hook(self, pending, verdict, tally):
        tally.result_bytes += 1
        try:
            return super()._finish_hook(pending, verdict, tally)
        finally:
            tally.result_bytes -= 1


class _DispatchBytesIgnored(Dispatcher):
    def _finish_hook(self, pending, verdict, tally):
        tally.result_bytes = 0
        return super()._finish_hook(pending, verdict, tally)


class _Chained(InProcess):
    """Each hook's projection also carries the intent ids earlier hooks of the dispatch proposed."""

    def dispatch(self, source: Any, *, consult_journal: bool = True) -> DispatchOutcome:
        self._chain: list[str] = []
        return super().dispatch(source, consult_journal=consult_journal)

    def _call_spec(self, hook, hook_input):
        producer, frozen, limit, *rest = super()._call_spec(hook, hook_input)
        chain = self._chain

        def chained(argument: Any) -> Any:
            given = argument
            if chain and "projection" in hook_input:
                seen = copy.deepcopy(hook_input)
                seen["projection"]["fact_refs"] = list(seen["projection"]["fact_refs"]) + chain[:4]
                given = freeze(seen)
            value = producer(given)
            chain.extend(i["intent_id"] for i in _intents(value) if isinstance(i.get("intent_id"), str))
            return value

        return (chained, frozen, limit, *rest)


class _FailureStampedOnAll(Dispatcher):
    def _record(self, receipt_id, event_kind, outcomes, writes):
        first = next((o.failure_code for o in outcomes if o.status == "failed"), None)
        if first is not None:
            writes = [{**w, "failure_code": w["failure_code"] or first} for w in writes]
        return super()._record(receipt_id, event_kind, outcomes, writes)


class _RecordsProviderObject(InProcess):
    """The accepted result's intents are the provider's own objects, not a validated copy."""

    def _accept_fast(self, value, reg, did):
        return None

    def _judge_in_full(self, value, reg, did):
        judged = super()._judge_in_full(value, reg, did)
        if type(judged) is Rejection:
            return judged
        plain, raw = judged  # type: ignore[misc]  # a Rejection returned above
        return {**plain, "intents": list(value["intents"])}, raw


@mutant("hooks_ceiling_exclusive", "M08", "§10: a dispatch exactly at the profile's hook ceiling stops its last hook")
def hooks_ceiling_exclusive(**kw: Any) -> ReferenceSUT:
    return _adapter("hooks_ceiling_exclusive", dispatcher_class=_HooksCeilingExclusive)(**kw)


@mutant("dispatch_bytes_exclusive", "M08", "§10: results filling the per-dispatch byte ceiling exactly are refused")
def dispatch_bytes_exclusive(**kw: Any) -> ReferenceSUT:
    return _adapter("dispatch_bytes_exclusive", dispatcher_class=_DispatchBytesExclusive)(**kw)


@mutant("dispatch_bytes_ignored", "M08", "§10: the per-dispatch byte ceiling is never applied (each result is measured alone)")
def dispatch_bytes_ignored(**kw: Any) -> ReferenceSUT:
    return _adapter("dispatch_bytes_ignored", dispatcher_class=_DispatchBytesIgnored)(**kw)


@mutant("chained_results", "M08", "§6: a later hook's input carries the intent ids an earlier hook proposed")
def chained_results(**kw: Any) -> ReferenceSUT:
    return _adapter("chained_results", dispatcher_class=_Chained)(**kw)


@mutant("failure_stamped_on_all", "M08", "§10: one hook's failure code is written onto every record of the dispatch")
def failure_stamped_on_all(**kw: Any) -> ReferenceSUT:
    return _adapter("failure_stamped_on_all", dispatcher_class=_FailureStampedOnAll)(**kw)


@mutant("records_provider_object", "M08", "§9 JNL-5: the record holds the provider's live answer, which another hook can still change")
def records_provider_object(**kw: Any) -> ReferenceSUT:
    return _adapter("records_provider_object", dispatcher_class=_RecordsProviderObject)(**kw)


# -- M13: compact failure codes ---------------------------------------------------------------------


class _RecordsExceptionType(InProcess):
    """A raising provider's exception class name is kept beside the failure code."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._errors: dict[str, str] = {}

    def _call_spec(self, hook, hook_input):
        producer, frozen, limit, *rest = super()._call_spec(hook, hook_input)
        errors, did = self._errors, hook_input["dispatch_id"]

        def noting(argument: Any) -> Any:
            try:
                return producer(argument)
            except BaseException as exc:
                errors[did] = type(exc).__name__
                raise

        return (noting, frozen, limit, *rest)

    def _fail(self, pending, code, rejection=None):
        outcome, receipt = super()._fail(pending, code, rejection)
        if code == codes.PRODUCER_FAILED and pending.dispatch_id in self._errors:
            receipt["failure_detail"] = self._errors[pending.dispatch_id]
        return outcome, receipt


@mutant("records_exception_type", "M13", "§9 JNL-6: a failure record keeps the provider's exception class name")
def records_exception_type(**kw: Any) -> ReferenceSUT:
    return _adapter("records_exception_type", dispatcher_class=_RecordsExceptionType)(**kw)


# -- slots a failed hook must not take, ids that must not reach the journal -----------------------


class _FailedHookTakesSlot(Dispatcher):
    """Every hook that ends failed still takes one of the profile's hook slots."""

    def _prepare_hook(self, hook, did, source, prior, tally):
        return self._charge(super()._prepare_hook(hook, did, source, prior, tally), tally)

    def _finish_hook(self, pending, verdict, tally):
        return self._charge(super()._finish_hook(pending, verdict, tally), tally)

    @staticmethod
    def _charge(step, tally):
        if type(step) is tuple and step[0].status == "failed":
            tally.hooks += 1
        return step


@mutant("failed_hook_takes_slot", "M08", "pwh's reading of §10: a hook that fails uses up a slot of the profile's hook ceiling")
def failed_hook_takes_slot(**kw: Any) -> ReferenceSUT:
    return _adapter("failed_hook_takes_slot", dispatcher_class=_FailedHookTakesSlot)(**kw)


class _IdsNeverScanned(Dispatcher):
    def _hook_id_refusal(self, hook):
        return None


class _InstallsAnyId(ReferenceSUT):
    """Neither the registry nor the dispatcher scans the ids every sidecar record carries."""

    name = "broken:ids_never_scanned"
    dispatcher_class = _IdsNeverScanned

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.registry.scanner = None


def ids_never_scanned(**kw: Any) -> ReferenceSUT:
    return _InstallsAnyId(**kw)
