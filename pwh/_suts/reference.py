"""The ``reference`` SUT adapter: pwh's own dispatcher behind the seam."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pwh._core.boundary import BoundaryScanner
from pwh._core.codes import Rejection
from pwh._core.crash import SIDECAR_CRASH_POINTS, CrashPlan
from pwh._core.dispatcher import Dispatcher
from pwh._core.journal import Journal, SQLiteJournal
from pwh._core.memory_journal import MemoryJournal, MemoryStore
from pwh._core.outcome import DispatchOutcome
from pwh._core.profile import Profile
from pwh._core.registry import RegistrationRejected, Registry
from pwh._suts.seam import PrimaryAccess, Producer, Unsupported
from pwh._version import __version__

SYNCHRONOUS_ENV = "PWH_SQLITE_SYNCHRONOUS"


def sqlite_synchronous() -> str:
    """``FULL`` (durable against power loss) unless the run says otherwise.

    The gate's scenarios judge semantics and simulate crashes in-process or by SIGKILL, which a
    WAL database survives at ``NORMAL`` too; benchmarks always measure ``FULL``.
    """
    value = os.environ.get(SYNCHRONOUS_ENV, "FULL").upper()
    return value if value in ("FULL", "NORMAL", "EXTRA") else "FULL"


class ReferenceSUT:
    """The reference dispatcher with a SQLite (default) or in-memory journal.

    The journal lives in ``workdir`` (a private temp dir when none is given, removed on close).
    ``restart()`` drops everything but durable storage, as a process restart would.
    """

    name = "reference"
    version = __version__
    dispatcher_class: type[Dispatcher] = Dispatcher
    sqlite_journal_class: type[SQLiteJournal] = SQLiteJournal
    memory_journal_class: type[MemoryJournal] = MemoryJournal

    def __init__(
        self, *, journal: str = "sqlite", workdir: str | Path | None = None, synchronous: str | None = None, runner: Any = None
    ) -> None:
        if journal not in ("sqlite", "memory"):
            raise ValueError("journal must be 'sqlite' or 'memory'")
        self._kind = journal
        self._own_dir = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="pwh-ref-")) if workdir is None else Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._synchronous = synchronous or sqlite_synchronous()
        # The runner every dispatcher of this SUT calls providers on, across restarts (the models'
        # simulation mode gives its virtual-time runner); None: each dispatcher makes its default.
        self._runner = runner
        self._store = MemoryStore()
        self.crash = CrashPlan(SIDECAR_CRASH_POINTS)
        self.registry = Registry(scanner=BoundaryScanner())  # the dispatcher's scanner is the default one too
        self.profile = Profile()
        self.dispatcher = self._make_dispatcher()

    # -- seam -----------------------------------------------------------------------------

    def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> list[Rejection]:
        try:
            self.registry.catalog.register(kind, payload_schema)
        except RegistrationRejected as exc:
            return exc.rejections
        return []

    def install(self, registration: Mapping[str, Any], producer: Producer) -> list[Rejection]:
        try:
            self.registry.install(registration, producer, ceilings=self.profile.budget_ceilings)
        except RegistrationRejected as exc:
            return exc.rejections
        return []

    def set_profile(self, profile: Profile) -> None:
        self.profile = profile
        self.dispatcher.profile = profile

    def dispatch(self, source: Mapping[str, Any], *, primary: PrimaryAccess | None = None) -> DispatchOutcome:
        return self.dispatcher.dispatch(source)

    def redeliver(self, source: Mapping[str, Any]) -> DispatchOutcome:
        return self.dispatcher.dispatch(source, consult_journal=False)

    @property
    def crash_points(self) -> tuple[str, ...]:
        return SIDECAR_CRASH_POINTS

    def arm_crash(self, point: str) -> None:
        if point not in self.crash_points:
            raise Unsupported(f"the reference dispatcher has no crash point {point!r}")
        self.crash.arm(point)

    def restart(self) -> None:
        self.dispatcher.journal.close()
        self.dispatcher.close()
        self.dispatcher = self._make_dispatcher()

    def journal_records(self) -> list[dict[str, Any]]:
        return self.dispatcher.journal.records()

    def inject_fault(self, fault: str) -> None:
        journal = self.dispatcher.journal
        if fault == "journal_unwritable":
            journal.make_read_only()
        elif fault == "journal_record_corrupted":
            journal.corrupt_last_record()
        elif fault == "journal_record_tampered":
            journal.tamper_last_record()
        elif fault.startswith("journal_file_") and isinstance(journal, SQLiteJournal):  # files only SQLite has
            journal.damage(fault.removeprefix("journal_file_"))
        else:
            raise Unsupported(f"unknown fault {fault!r}")

    def close(self) -> None:
        self.dispatcher.journal.close()
        self.dispatcher.close()
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # -- internals --------------------------------------------------------------------------

    def _open_journal(self) -> Journal:
        if self._kind == "memory":
            return self.memory_journal_class(self._store, self.crash)
        return self.sqlite_journal_class(self.workdir / "sidecar.sqlite3", self.crash, synchronous=self._synchronous)

    def _make_dispatcher(self) -> Dispatcher:
        if self._runner is None:  # a dispatcher class that picks its own runner keeps that choice
            return self.dispatcher_class(self.registry, self._open_journal(), self.profile)
        return self.dispatcher_class(self.registry, self._open_journal(), self.profile, runner=self._runner)


def memory_sut(*, runner: Any = None) -> ReferenceSUT:
    """The reference dispatcher with the in-memory journal (fast; for models).

    It takes no ``workdir``: nothing it journals lives in a directory, so a real crash (a SIGKILL
    of the process holding it) loses the journal, as it should, and the models must not mistake it
    for a SUT that keeps one on disk (a factory that refuses ``workdir`` is how they tell). It
    takes a ``runner`` (the models' simulation mode gives its virtual-time one)."""
    sut = ReferenceSUT(journal="memory", runner=runner)
    sut.name = "reference-memory"
    return sut
