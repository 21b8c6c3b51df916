"""Attempts counted durably before the call (SPEC §0 "Budgets, read precisely", §4): the profile's
retry cap holds across redeliveries, crashes, restarts and any number of processes.

Each attempt is stored, raised by one under the journal's write lock, before its provider is
called; so a call that never returns is still counted, a second delivery cannot start the count
over, and N dispatchers together never make more calls than the cap."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from fakes._packets import (
    GENERIC_INTENT_KIND,
    GENERIC_PAYLOAD_SCHEMA,
    not_applicable,
    registration,
    source,
)
from pwh import (
    CrashPlan,
    Dispatcher,
    IntentKindCatalog,
    Journal,
    JournalError,
    MemoryJournal,
    MemoryStore,
    Profile,
    Registry,
    SimulatedCrash,
    SQLiteJournal,
)
from pwh._core import codes
from pwh._core import crash as _crash
from pwh._core.journal import to_count
from pwh._core.runner import ThreadRunner

CAP = 3
PROFILE = Profile(phase_enabled=True, max_attempts=CAP)


class Host:
    """One dispatcher over a journal that outlives it (``restart`` opens a new one on the same
    storage), with a provider that always raises and counts its calls."""

    def __init__(self, kind: str, folder: Path) -> None:
        self.kind, self.folder, self.store = kind, folder, MemoryStore()
        self.calls = 0
        self.journal: Journal = self._open()
        self.dispatcher = self._dispatcher()

    def _open(self, crash: CrashPlan | None = None) -> Journal:
        if self.kind == "sqlite":
            return SQLiteJournal(self.folder / "sidecar.sqlite3", crash)
        return MemoryJournal(self.store, crash)

    def _dispatcher(self) -> Dispatcher:
        catalog = IntentKindCatalog()
        catalog.register(GENERIC_INTENT_KIND, GENERIC_PAYLOAD_SCHEMA)
        registry = Registry(catalog)

        def fails(hook_input: Mapping[str, Any]) -> Any:
            self.calls += 1
            raise RuntimeError("always fails")

        registry.install(registration("a.fails"), fails)
        return Dispatcher(registry, self.journal, PROFILE, runner=ThreadRunner())  # the calls are counted in this process

    def restart(self, crash: CrashPlan | None = None) -> None:
        self.close()
        self.journal = self._open(crash)
        self.dispatcher = self._dispatcher()

    def stored_attempts(self) -> int:
        [record] = self.journal.records()
        return int(record["attempts"])

    def close(self) -> None:
        self.dispatcher.close()
        self.journal.close()


@pytest.fixture(params=["sqlite", "memory"])
def host(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Host]:
    h = Host(request.param, tmp_path)
    yield h
    h.close()


def test_a_redelivery_never_starts_the_count_over(host: Host) -> None:
    """r07: a second dispatcher that read the journal before the first recorded
    (``consult_journal=False``) used to overwrite an exhausted record's attempts 3 with 1."""
    for _ in range(CAP + 1):
        host.dispatcher.dispatch(source(1))
    assert host.calls == CAP and host.stored_attempts() == CAP
    out = host.dispatcher.dispatch(source(1), consult_journal=False)
    assert out.hooks[0].failure_code == codes.DISPATCH_BUDGET_EXHAUSTED and out.hooks[0].attempts == CAP
    assert host.calls == CAP and host.stored_attempts() == CAP  # uncalled, and the count kept
    for _ in range(3):
        host.dispatcher.dispatch(source(1))
    assert host.calls == CAP and host.stored_attempts() == CAP


def test_second_deliveries_alone_stop_at_the_cap(host: Host) -> None:
    for n in range(1, CAP + 3):
        out = host.dispatcher.dispatch(source(1), consult_journal=False)
        assert host.calls == min(n, CAP)
        assert out.hooks[0].attempts == min(n, CAP)
    assert out.hooks[0].failure_code == codes.DISPATCH_BUDGET_EXHAUSTED and host.stored_attempts() == CAP


def test_a_crash_between_call_and_record_still_counts_the_call(host: Host) -> None:
    for _ in range(CAP):
        host.restart(CrashPlan())
        host.journal.crash.arm(_crash.DISPATCH_AFTER_PROVIDER)
        with pytest.raises(SimulatedCrash):
            host.dispatcher.dispatch(source(1))
    assert host.calls == CAP and host.journal.records() == []  # every call died before its record
    host.restart()
    out = host.dispatcher.dispatch(source(1))
    assert host.calls == CAP
    assert (out.hooks[0].failure_code, out.hooks[0].attempts, out.hooks[0].recorded) == (codes.DISPATCH_BUDGET_EXHAUSTED, CAP, True)


def test_a_journal_that_cannot_count_calls_nothing(host: Host) -> None:
    host.journal.make_read_only()
    out = host.dispatcher.dispatch(source(1))
    assert out.journal_error == codes.JOURNAL_WRITE_FAILED and out.admitted
    assert host.calls == 0 and [(h.attempts, h.recorded) for h in out.hooks] == [(0, False)]


def test_stored_counts_never_go_down(host: Host) -> None:
    did = "pwh_" + "1" * 64
    assert host.journal.reserve_attempts({did: 0}, CAP) == {did: 0}
    assert host.journal.reserve_attempts({did: 0}, CAP) == {did: 1}  # a lower floor changes nothing
    assert host.journal.reserve_attempts({did: 2}, CAP) == {did: 2}  # a higher one is taken
    assert host.journal.reserve_attempts({did: 0}, CAP) == {did: 3}  # at the cap: not raised
    assert host.journal.reserve_attempts({did: 0}, CAP) == {did: 3}


def test_a_hook_with_an_attempt_its_record_does_not_show_is_counted_last_in_its_batch() -> None:
    counts = to_count({"b": 1}, {"a": 0, "b": 0, "c": 0}, CAP)  # b's last call may have ended its process
    assert counts == {"a": 0, "b": 1}  # a and b are called now, b last; c is counted after them
    assert to_count({"b": CAP}, {"a": 0, "b": 0, "c": 0}, CAP) == {"a": 0, "b": CAP, "c": 0}  # b is refused, not called
    assert to_count({"b": 1}, {"a": 0, "b": 1, "c": 0}, CAP) == {"a": 0, "b": 1, "c": 0}  # its record shows it


def test_a_late_failure_never_lowers_the_recorded_count(host: Host) -> None:
    """Two dispatchers reserved attempts 1 and 2; the one holding attempt 1 records last."""
    first = {**_failed_record(2)}
    later = {**_failed_record(1)}
    host.journal.commit([first])
    [result] = host.journal.commit([later])
    assert result.stored["attempts"] == 2 and host.stored_attempts() == 2


def _failed_record(attempts: int) -> dict[str, Any]:
    return {
        "schema_version": "pwh_post_writeback_sidecar_receipt_v0",
        "dispatch_id": "pwh_" + "2" * 64,
        "hook_id": "a.fails",
        "capability_id": "a",
        "source_receipt_id": "receipt_0001",
        "event_kind": "todo_completed",
        "registration_schema_version": "loopx_post_writeback_capability_hook_registration_v0",
        "status": "failed",
        "failure_code": codes.PRODUCER_FAILED,
        "intents": [],
        "result_digest": None,
        "attempts": attempts,
    }


def test_the_count_is_one_write_at_normal_sync_and_the_record_stays_full(tmp_path: Path) -> None:
    """The reservation survives any process crash without an fsync of its own (WAL, NORMAL);
    the dispatch's record is the one FULL commit, which syncs the reservation with it."""
    host = Host("sqlite", tmp_path)
    seen: list[str] = []
    host.journal._db.set_trace_callback(seen.append)  # type: ignore[attr-defined]
    try:
        host.dispatcher.dispatch(source(1))
    finally:
        host.close()
    level, at_commit = "FULL", []
    for sql in (s.strip().upper() for s in seen):
        if sql.startswith("PRAGMA SYNCHRONOUS="):
            level = sql.removeprefix("PRAGMA SYNCHRONOUS=")
        elif sql == "COMMIT":
            at_commit.append(level)
    assert at_commit == ["NORMAL", "FULL"] and level == "FULL"


def test_a_journal_from_before_the_count_starts_from_its_records(tmp_path: Path) -> None:
    """An older journal has no attempts table: it is made from the counts its receipts carry."""
    host = Host("sqlite", tmp_path)
    for _ in range(CAP):
        host.dispatcher.dispatch(source(1))
    host.close()
    db = sqlite3.connect(tmp_path / "sidecar.sqlite3")
    db.execute("DROP TABLE sidecar_attempts")
    db.commit()
    db.close()
    host = Host("sqlite", tmp_path)
    try:
        out = host.dispatcher.dispatch(source(1), consult_journal=False)
        assert out.hooks[0].failure_code == codes.DISPATCH_BUDGET_EXHAUSTED and host.calls == 0
    finally:
        host.close()


# -- the hook after a provider that kills its process ------------------------------------------

_POISON_HOST = textwrap.dedent("""
    import os, sys
    from pwh import Dispatcher, IntentKindCatalog, Profile, Registry, SQLiteJournal
    from pwh._core.runner import ThreadRunner
    from pwh._harness.examples import example_receipt, example_registration
    journal_path, calls_path = sys.argv[1], sys.argv[2]
    def poison(hook_input):
        with open(calls_path, "a") as fh:
            fh.write(hook_input["hook_id"] + "\\n")
        os._exit(9)  # the process dies inside the call: no except, no finally, no record
    def witness(hook_input):
        with open(calls_path, "a") as fh:
            fh.write(hook_input["hook_id"] + "\\n")
        return {"schema_version": "loopx_post_writeback_hook_result_v0", "status": "not_applicable", "intents": []}
    catalog = IntentKindCatalog()
    catalog.register("x.note", {"type": "object"})
    registry = Registry(catalog)
    registry.install(example_registration("a.poison", intent_kinds=["x.note"]), poison)
    registry.install(example_registration("z.witness", intent_kinds=["x.note"]), witness)
    journal = SQLiteJournal(journal_path)
    # The thread runner: the provider's os._exit ends the host itself (the process runner would
    # keep the host alive); the cap must hold by the durable count alone.
    out = Dispatcher(registry, journal, Profile(phase_enabled=True, max_attempts=3), runner=ThreadRunner()).dispatch(example_receipt(1))
    print(";".join(f"{h.hook_id}={h.failure_code or h.status}" for h in out.hooks))
""")


def test_a_provider_that_kills_its_process_is_called_at_most_the_cap_and_the_next_hook_is_recorded(tmp_path: Path) -> None:
    """r02: the host re-dispatches its committed receipt on every start (JNL-4); the poison's
    attempt is counted before each call, so the 4th start refuses it and runs the witness. The
    witness is charged one attempt it never made, once: on the first start both were counted in
    one batch; from then on the poison, with an attempt its record does not show, is called last
    in its batch, alone before the witness, so its later deaths charge the witness nothing."""
    script, journal, calls = tmp_path / "host.py", tmp_path / "j.sqlite3", tmp_path / "calls.txt"
    script.write_text(_POISON_HOST)
    ends = []
    for _ in range(CAP + 2):
        done = subprocess.run(
            [sys.executable, str(script), str(journal), str(calls)], check=False, capture_output=True, text=True, timeout=60
        )
        ends.append((done.returncode, done.stdout.strip()))
    assert [code for code, _ in ends[:CAP]] == [9] * CAP
    assert ends[CAP] == (0, "a.poison=dispatch_budget_exhausted;z.witness=not_applicable")
    assert calls.read_text().split() == ["a.poison"] * CAP + ["z.witness"]  # the 5th start replays the witness
    j = SQLiteJournal(journal)
    try:
        assert {r["hook_id"]: (r["status"], r["attempts"]) for r in j.records()} == {
            "a.poison": ("failed", CAP),
            "z.witness": ("not_applicable", 2),
        }
    finally:
        j.close()


# -- eight real processes on one journal --------------------------------------------------------

PROCESSES = 8


def _racer(path: str, calls_path: str, barrier: Any, rounds: int) -> None:
    catalog = IntentKindCatalog()
    catalog.register(GENERIC_INTENT_KIND, GENERIC_PAYLOAD_SCHEMA)
    registry = Registry(catalog)

    def fails(hook_input: Mapping[str, Any]) -> Any:
        with open(calls_path, "a") as fh:  # O_APPEND: one whole line per call
            fh.write(f"{os.getpid()}\n")
        raise RuntimeError("always fails")

    registry.install(registration("a.fails"), fails)
    registry.install(registration("z.fine"), lambda i: not_applicable())
    journal = SQLiteJournal(path)
    dispatcher = Dispatcher(registry, journal, PROFILE, runner=ThreadRunner())
    try:
        for n in range(rounds):
            barrier.wait(60)
            dispatcher.dispatch(source(1), consult_journal=n % 2 == 1)  # reads and second deliveries mixed
    finally:
        dispatcher.close()
        journal.close()


def test_eight_processes_never_make_more_calls_than_the_cap(tmp_path: Path) -> None:
    """r08: each process read attempts=k, called, wrote k+1 (a lost update): 8 processes made 24
    calls where the cap allows 3. Counted under the write lock, they make exactly 3."""
    path, calls = tmp_path / "j.sqlite3", tmp_path / "calls.txt"
    calls.touch()
    SQLiteJournal(path).close()
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    procs = [ctx.Process(target=_racer, args=(str(path), str(calls), barrier, 3)) for _ in range(PROCESSES)]
    for p in procs:
        p.start()
    try:
        for p in procs:
            p.join(120)
            assert p.exitcode == 0
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()  # by PID: this test's own children only
                p.join(10)
    assert len(calls.read_text().split()) == CAP
    j = SQLiteJournal(path)
    try:
        by_hook = {r["hook_id"]: r for r in j.records()}
        assert (by_hook["a.fails"]["failure_code"], by_hook["a.fails"]["attempts"]) == (codes.DISPATCH_BUDGET_EXHAUSTED, CAP)
        assert by_hook["z.fine"]["status"] == "not_applicable"  # the failing hook took no slot of its sibling
    finally:
        j.close()


def test_reserve_reports_a_journal_error_not_a_raw_exception(tmp_path: Path) -> None:
    j = SQLiteJournal(tmp_path / "j.sqlite3")
    try:
        j._db.execute("PRAGMA query_only=1")  # type: ignore[attr-defined]
        with pytest.raises(JournalError) as info:
            j.reserve_attempts({"pwh_" + "3" * 64: 0}, CAP)
        assert info.value.code == codes.JOURNAL_WRITE_FAILED and "readonly" not in str(info.value)
    finally:
        j.close()
