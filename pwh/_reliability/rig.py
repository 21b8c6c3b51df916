"""Shared machinery of the reliability campaign: the tally, a dispatcher rig, and the checks every
category applies (stable codes, ``$`` paths, an unchanged primary, nothing planted in the journal).

The rig builds the reference :class:`~pwh._core.dispatcher.Dispatcher` directly (registry, journal,
profile, scanner) so a category can choose its journal (memory or SQLite) and declare private
names to the scanner, as a host does with ``PWH_PRIVATE_NAMES``.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pwh._core import codes
from pwh._core.boundary import BoundaryScanner
from pwh._core.dispatcher import Dispatcher
from pwh._core.journal import Journal
from pwh._core.memory_journal import MemoryJournal
from pwh._core.outcome import DispatchOutcome, HookOutcome
from pwh._core.profile import Profile
from pwh._core.registry import RegistrationRejected, Registry
from pwh._core.runner import ThreadRunner
from pwh._reliability.packets import OPEN_KIND, OPEN_PAYLOAD_SCHEMA, STRICT_KIND, STRICT_PAYLOAD_SCHEMA, registration

STABLE_CODES = frozenset(codes.RFC_FAILURE_CODES) | frozenset(codes.DISPATCH_CODES)  # the journal's codes are dispatch codes
KEYS = ("tried", "isolated", "uncaught", "leaked", "primary_changed", "false_positives")
MAX_NOTES = 8


@dataclass
class Tally:
    """Counts for one category, plus up to :data:`MAX_NOTES` short notes on what went wrong
    (generator labels and codes only: a note never holds a planted value)."""

    tried: int = 0
    isolated: int = 0
    uncaught: int = 0
    leaked: int = 0
    primary_changed: int = 0
    false_positives: int = 0
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if len(self.notes) < MAX_NOTES and text not in self.notes:
            self.notes.append(text[:200])

    def counts(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in KEYS}


# --------------------------------------------------------------------------------------------
# Snapshots: "unchanged" without deep-copying (a copy would run the objects' own code)
# --------------------------------------------------------------------------------------------


def snapshot(value: Any, depth: int = 0) -> Any:
    """A comparable picture of ``value``: containers by content (exact types, read with the base
    class's own methods so a subclass's overrides never run), anything else by identity; NaN equal
    to itself. Two snapshots are equal exactly when nothing reachable was changed."""
    kind = type(value)
    if depth > 120:
        return ("deep", id(value))
    if kind is str or kind is int or kind is bool or value is None:
        return (kind.__name__, value)
    if kind is float:
        return ("float", "nan" if math.isnan(value) else value)
    if issubclass(kind, dict):
        return ("dict", id(kind), tuple((snapshot(k, depth + 1), snapshot(v, depth + 1)) for k, v in dict.items(value)))
    if issubclass(kind, list):
        return ("list", id(kind), tuple(snapshot(v, depth + 1) for v in list.__iter__(value)))
    if issubclass(kind, tuple):
        return ("tuple", id(kind), tuple(snapshot(v, depth + 1) for v in tuple.__iter__(value)))
    if issubclass(kind, str):
        return ("str", id(kind), str.__str__(value))
    return ("obj", id(kind), id(value))


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------


def stable(code: Any) -> bool:
    return type(code) is str and code in STABLE_CODES


def rejection_ok(rejection: Any) -> bool:
    """A stable code and a JSON path starting ``$``."""
    return rejection is not None and stable(rejection.code) and type(rejection.path) is str and rejection.path.startswith("$")


def rejections_ok(found: Iterable[Any]) -> bool:
    found = list(found)
    return bool(found) and all(rejection_ok(r) for r in found)


def failure_texts(outcome: DispatchOutcome) -> list[str]:
    """What a gate scenario could show about this dispatch: codes, paths and pwh-written reasons."""
    out = []
    if outcome.code or outcome.rejection:
        out.append(f"dispatch {outcome.code}: {outcome.rejection}")
    if outcome.journal_error:
        out.append(f"journal {outcome.journal_error}")
    for hook in outcome.hooks:
        out.append(f"hook {hook.hook_id} {hook.status} {hook.failure_code or ''} {hook.rejection or ''}".strip())
    return out


def carries(text: str, planted: Iterable[str]) -> list[str]:
    """The planted values that occur in ``text`` (exact, and case-folded for ones of 4+ chars)."""
    low = text.lower()
    return [p for p in planted if p and (p in text or (len(p) >= 4 and p.lower() in low))]


def journal_leaks(journal: Journal, scanner: BoundaryScanner, planted: Iterable[str]) -> int:
    """How many planted values (or scanner findings) the journal's records carry; 0 is clean."""
    records = journal.records()
    text = json.dumps(records, ensure_ascii=False)
    return len(carries(text, planted)) + len(scanner.scan_value(records))


# --------------------------------------------------------------------------------------------
# The rig
# --------------------------------------------------------------------------------------------


class Rig:
    """A reference dispatcher with the campaign's two intent kinds, its own journal and scanner."""

    def __init__(
        self,
        journal: Journal | None = None,
        *,
        scanner: BoundaryScanner | None = None,
        profile: Profile | None = None,
    ) -> None:
        self.registry = Registry()
        self.registry.catalog.register(STRICT_KIND, STRICT_PAYLOAD_SCHEMA)
        self.registry.catalog.register(OPEN_KIND, OPEN_PAYLOAD_SCHEMA)
        self.journal = journal if journal is not None else MemoryJournal()
        self.profile = profile or Profile(phase_enabled=True)
        self.scanner = scanner or BoundaryScanner()
        # The campaign watches its producers from this process (calls by thread, the witness's
        # input, the network guard's refusals), so it runs them on the thread runner; what the
        # default process runner adds is held by tests/core/test_isolation.py.
        self.dispatcher = Dispatcher(self.registry, self.journal, self.profile, scanner=self.scanner, runner=ThreadRunner())
        self.calls: dict[str, int] = {}
        self.dispatcher_thread = threading.get_ident()

    def install(self, hook_id: str, producer: Callable[[Mapping[str, Any]], Any], **overrides: Any) -> None:
        """Install a known-good registration (raises if the rig itself is misconfigured)."""
        self.registry.install(registration(hook_id, **overrides), self.counted(hook_id, producer), ceilings=self.profile.budget_ceilings)

    def try_install(self, reg: Any, producer: Callable[[Mapping[str, Any]], Any]) -> list[Any]:
        """Install ``reg``; the rejections (empty when it was accepted)."""
        try:
            self.registry.install(reg, self.counted("?", producer), ceilings=self.profile.budget_ceilings)
        except RegistrationRejected as exc:
            return list(exc.rejections)
        return []

    def counted(self, hook_id: str, producer: Callable[[Mapping[str, Any]], Any]) -> Callable[[Mapping[str, Any]], Any]:
        def call(hook_input: Mapping[str, Any]) -> Any:
            self.calls[hook_id] = self.calls.get(hook_id, 0) + 1
            return producer(hook_input)

        return call

    def dispatch(self, source: Any, **kwargs: Any) -> DispatchOutcome:
        return self.dispatcher.dispatch(source, **kwargs)

    def close(self) -> None:
        self.dispatcher.close()
        self.journal.close()


def hook_failed_with(outcome: DispatchOutcome, hook_id: str, code: str) -> HookOutcome | None:
    """The hook's outcome when it failed with ``code`` (and, if it carries a rejection, a good one)."""
    if not outcome.has_hook(hook_id):
        return None
    hook = outcome.hook(hook_id)
    if hook.status != "failed" or hook.failure_code != code:
        return None
    if hook.rejection is not None and not rejection_ok(hook.rejection):
        return None
    return hook
