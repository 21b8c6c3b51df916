"""Semantic mutants: one rule kept on one path, event kind or position and broken on another.

A line-level mutation tool changes one operator; a plausible wrong implementation keeps the rule
where it was first written and forgets it elsewhere: for replans but not completions, for the
first intent but not the rest, at install but not after a profile change, for the hook listed but
also for its whole capability. Each mutant here is the reference with exactly one such gap, named
by the rule it breaks and where; the gate (or the soak) must catch every one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pwh import Dispatcher, ReferenceSUT, canonical_bytes
from pwh._core.canonical import to_plain
from pwh._core.contracts import judge_validated_result
from pwh._core.registry import InstalledHook

from ._registry import mutant


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
