"""What the model sees of a run: every dispatch episode and every provider call, in order.

:class:`ObservedSUT` wraps the adapter under test without changing anything it does: it marks
where each ``dispatch``/``redeliver`` begins and ends, notes which sidecar records were already
final at that moment, and times it. Provider calls are attributed to the episode running when
they happen, so the invariants can ask "was this provider called for a dispatch it had already
recorded?" (M05) or "did these calls follow hook_id order?" (M08).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pwh import DispatchOutcome
from pwh._core.journal import FINAL_STATUSES


@dataclass
class Call:
    """One provider call as the model saw it."""

    hook_id: str
    dispatch_id: str | None
    receipt_id: str | None
    call_number: int
    hook_input: Mapping[str, Any]
    in_rollout_append: bool = False
    source_seen: bytes = b""  # canonical bytes of the input's source block as handed over (before the body ran)


@dataclass
class Episode:
    """One ``dispatch`` or ``redeliver`` of a committed receipt."""

    kind: str  # dispatch | redeliver
    step: int
    receipt_id: str | None
    event_kind: str | None
    installed: frozenset[str]  # hook ids installed when it began
    finals_at_start: dict[str, dict[str, Any]]  # dispatch_id -> final record already there
    calls: list[Call] = field(default_factory=list)
    outcome: DispatchOutcome | None = None  # None: the process died inside it
    elapsed_ms: float = 0.0
    in_child: bool = False  # ran in a child process that was killed
    profile: Any = None  # the execution profile in force when it began (pwh._core.profile.Profile)
    attempts_at_start: dict[str, int] = field(default_factory=dict)  # dispatch_id -> recorded attempts, any status
    ids_at_start: frozenset[str] = frozenset()  # the dispatch ids the journal held when it began


def final_records(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["dispatch_id"]: r for r in records if r.get("status") in FINAL_STATUSES}


class ObservedSUT:
    """The adapter under test, unchanged, with its dispatch episodes recorded.

    Its journal is read again only when it may have changed: every call into the adapter other
    than ``journal_records`` (a dispatch, a restart, an install, a profile: anything) counts as a
    change, before it starts and after it ends, and nothing read during a call is kept. So the
    several reads one step makes after its last call (the world's snapshot, the scheduler's poll,
    the invariants) are one read, and every read after a call is the adapter's own answer.
    """

    def __init__(
        self,
        inner: Any,
        begin: Callable[[str, Mapping[str, Any]], Episode],
        drain: Callable[[], None] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self._clock = clock  # seconds: the wall clock, or the simulated one in simulation mode
        self._begin = begin
        self._drain = drain  # reads the provider calls made meanwhile (they may run in a worker process)
        self.current: Episode | None = None
        self._calls = 0  # calls into the adapter begun or ended: the journal's version as seen from here
        self._running = 0  # calls under way (a read then is never kept)
        self._journal: tuple[int, list[dict[str, Any]]] | None = None

    def dispatch(self, source: Mapping[str, Any], *, primary: Any = None) -> DispatchOutcome:
        return self._observe("dispatch", source, lambda: self.inner.dispatch(source, primary=primary))

    def redeliver(self, source: Mapping[str, Any]) -> DispatchOutcome:
        return self._observe("redeliver", source, lambda: self.inner.redeliver(source))

    def journal_records(self) -> list[dict[str, Any]]:
        """The adapter's journal (a new list each time; its records are shared between the reads
        of one version and must not be changed by whoever reads them)."""
        kept = self._journal
        if kept is not None and kept[0] == self._calls and not self._running:
            return list(kept[1])
        version = self._calls
        records = self.inner.journal_records()
        if not self._running and version == self._calls and type(records) is list:
            self._journal = (version, records)
            return list(records)
        return records

    def records_shared(self) -> bool:
        """Whether the journal's records come straight from pwh's in-memory journal
        (:meth:`pwh._core.memory_journal.MemoryJournal.records`, through the reference's own
        ``journal_records``): the same record object for a stored row until the row changes, and
        never changed by the journal or the dispatcher (which decodes its own copies). Then a
        record seen before, the very object, still has the content it had: what was computed from
        it may be kept by the object. Any other journal (SQLite's, a subclass, an adapter's own)
        answers False, whatever it does with its records."""
        memory_journal, journal_records = _shared_kinds()
        journal = getattr(getattr(self.inner, "dispatcher", None), "journal", None)
        return type(journal) is memory_journal and getattr(type(self.inner), "journal_records", None) is journal_records

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name.startswith("_") or not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self._enter()
            try:
                return attr(*args, **kwargs)
            finally:
                self._leave()

        return call

    def _enter(self) -> None:
        self._calls += 1
        self._running += 1

    def _leave(self) -> None:
        self._running -= 1
        self._calls += 1

    def _observe(self, kind: str, source: Mapping[str, Any], run: Callable[[], DispatchOutcome]) -> DispatchOutcome:
        episode = self._begin(kind, source)
        self.current = episode
        started = self._clock()
        self._enter()
        try:
            outcome = run()
        finally:
            self._leave()
            episode.elapsed_ms = (self._clock() - started) * 1000
            if self._drain is not None:
                self._drain()
            self.current = None
        episode.outcome = outcome
        return outcome


_SHARED_KINDS: tuple[type, Any] | None = None


def _shared_kinds() -> tuple[type, Any]:
    """pwh's in-memory journal class and the reference's ``journal_records`` (imported on first
    use, then kept: :meth:`ObservedSUT.records_shared` is asked several times a step)."""
    global _SHARED_KINDS
    if _SHARED_KINDS is None:
        from pwh._core.memory_journal import MemoryJournal
        from pwh._suts.reference import ReferenceSUT

        _SHARED_KINDS = (MemoryJournal, ReferenceSUT.journal_records)
    return _SHARED_KINDS
