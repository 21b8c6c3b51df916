"""The SQLite journal notices its files changed under it, and works from any thread.

Deleted while open, its commits used to be acknowledged and then lost (r09); a truncated -wal
destroyed the whole database at close (r10); opened in one thread, it failed every dispatch from
another with journal_read_failed (a host dispatching from a recovery-queue thread, RFC §14,
recorded nothing)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from fakes._packets import (
    GENERIC_INTENT_KIND,
    GENERIC_PAYLOAD_SCHEMA,
    intent_for,
    proposed,
    registration,
    source,
)
from pwh import (
    Dispatcher,
    IntentKindCatalog,
    JournalError,
    Profile,
    Registry,
    SQLiteJournal,
)
from pwh._core import codes
from pwh._core.runner import ThreadRunner


class Host:
    """A dispatcher with one deterministic proposing hook over a SQLite journal at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.calls: list[str] = []
        self.journal = SQLiteJournal(path)
        catalog = IntentKindCatalog()
        catalog.register(GENERIC_INTENT_KIND, GENERIC_PAYLOAD_SCHEMA)
        registry = Registry(catalog)

        def propose(hook_input: Mapping[str, Any]) -> Any:
            self.calls.append(hook_input["source"]["receipt_id"])
            return proposed(intent_for(hook_input))

        registry.install(registration("a.det"), propose)
        self.dispatcher = Dispatcher(registry, self.journal, Profile(phase_enabled=True), runner=ThreadRunner())  # calls counted here

    def close(self) -> None:
        self.dispatcher.close()
        self.journal.close()


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "sidecar.sqlite3"


@pytest.fixture
def host(path: Path) -> Iterator[Host]:
    h = Host(path)
    yield h
    h.close()


def _remove(path: Path, *suffixes: str) -> None:
    for suffix in suffixes:
        Path(str(path) + suffix).unlink(missing_ok=True)


def _restart_replays(path: Path, receipts: range) -> list[str]:
    """Open the journal again and deliver ``receipts``: the providers called (none, if every
    acknowledged record survived)."""
    again = Host(path)
    try:
        for n in receipts:
            assert again.dispatcher.dispatch(source(n)).hooks[0].replayed
        return again.calls
    finally:
        again.close()


def test_a_journal_deleted_while_open_is_put_back_before_anything_is_acknowledged(host: Host, path: Path) -> None:
    """r09: every dispatch acknowledged as recorded, before and after the delete, survives a restart."""
    assert host.dispatcher.dispatch(source(1)).hooks[0].recorded
    _remove(path, "", "-wal", "-shm")
    out = host.dispatcher.dispatch(source(2))
    assert out.journal_error is None and out.hooks[0].recorded
    assert path.exists()
    assert host.dispatcher.dispatch(source(3)).hooks[0].recorded  # and it goes on working
    host.close()
    assert _restart_replays(path, range(1, 4)) == []


def test_a_journal_file_alone_deleted_is_put_back_too(host: Host, path: Path) -> None:
    host.dispatcher.dispatch(source(1))
    _remove(path, "")  # the -wal and -shm stay: they are never taken for the restored file's
    assert host.dispatcher.dispatch(source(2)).hooks[0].recorded
    host.close()
    assert _restart_replays(path, range(1, 3)) == []


def test_a_journal_replaced_while_open_reports_journal_write_failed_and_leaves_the_new_file_alone(host: Host, path: Path) -> None:
    host.dispatcher.dispatch(source(1))
    other = path.with_name("other.sqlite3")
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE unrelated (x)")
    db.commit()
    db.close()
    os.replace(other, path)
    out = host.dispatcher.dispatch(source(2))
    assert out.journal_error == codes.JOURNAL_WRITE_FAILED and not any(h.recorded for h in out.hooks)
    assert host.calls == ["receipt_0001"]  # a call that cannot be counted is not made
    again = host.dispatcher.dispatch(source(3))  # it stays failed: the open file is not the journal
    assert again.journal_error in (codes.JOURNAL_READ_FAILED, codes.JOURNAL_WRITE_FAILED)
    with pytest.raises(JournalError) as info:
        host.journal.records()
    assert info.value.code == codes.JOURNAL_READ_FAILED and "/" not in str(info.value)
    host.close()
    db = sqlite3.connect(path)
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        db.close()
    assert tables == {"unrelated"}


def test_a_truncated_wal_is_reported_and_never_destroys_the_database(host: Host, path: Path) -> None:
    """r10: the next commit was acknowledged, and the close then overwrote the database from the
    zero-filled -wal ('file is not a database')."""
    for n in range(5):
        host.dispatcher.dispatch(source(n))
    os.truncate(str(path) + "-wal", 0)
    out = host.dispatcher.dispatch(source(100))
    assert out.journal_error == codes.JOURNAL_WRITE_FAILED and not out.hooks[0].recorded
    host.close()
    reopened = SQLiteJournal(path)  # the database is intact: it opens and reads
    try:
        kept = reopened.records()
        assert all(r["source_receipt_id"] != "receipt_0100" for r in kept)
    finally:
        reopened.close()


def test_a_wal_deleted_while_open_is_reported(host: Host, path: Path) -> None:
    host.dispatcher.dispatch(source(1))
    _remove(path, "-wal")
    out = host.dispatcher.dispatch(source(2))
    assert out.journal_error == codes.JOURNAL_WRITE_FAILED and not out.hooks[0].recorded


def test_a_truncated_database_file_is_reported(host: Host, path: Path) -> None:
    for n in range(3):
        host.dispatcher.dispatch(source(n))
    host.journal._db.execute("PRAGMA wal_checkpoint(FULL)")  # type: ignore[attr-defined]  # records in the main file
    os.truncate(path, 0)
    out = host.dispatcher.dispatch(source(10))
    assert out.journal_error == codes.JOURNAL_WRITE_FAILED and not out.hooks[0].recorded


def test_damage_between_commit_and_acknowledgement_is_not_acknowledged(host: Host, path: Path) -> None:
    """The check runs after the commit too: a commit into a file that went away meanwhile (here:
    replaced the moment it was written) is never reported recorded."""
    host.dispatcher.dispatch(source(1))
    db = host.journal._db  # type: ignore[attr-defined]
    spare = path.with_name("copy.sqlite3")
    shutil.copy(path, spare)

    commits: list[str] = []

    def replace_on_commit(sql: str) -> None:  # the second commit is the record's (the first counts the call)
        if sql.strip().upper() == "COMMIT":
            commits.append(sql)
            if len(commits) == 2:
                os.replace(spare, path)

    db.set_trace_callback(replace_on_commit)
    out = host.dispatcher.dispatch(source(2))
    assert len(commits) == 2 and host.calls == ["receipt_0001", "receipt_0002"]
    assert out.journal_error == codes.JOURNAL_WRITE_FAILED and not any(h.recorded for h in out.hooks)


def test_a_journal_opened_in_one_thread_records_dispatches_from_another(host: Host) -> None:
    """A host dispatching from a recovery-queue thread (RFC §14)."""
    outcomes: list[Any] = []
    worker = threading.Thread(target=lambda: outcomes.append(host.dispatcher.dispatch(source(1))))
    worker.start()
    worker.join(30)
    [out] = outcomes
    assert out.journal_error is None and out.hooks[0].recorded
    assert [r["source_receipt_id"] for r in host.journal.records()] == ["receipt_0001"]


def test_several_threads_on_one_journal_record_each_dispatch_once(host: Host) -> None:
    errors: list[str | None] = []

    def deliver(k: int) -> None:
        for n in range(8):
            out = host.dispatcher.dispatch(source(n), consult_journal=k % 2 == 0)
            errors.append(out.journal_error)

    threads = [threading.Thread(target=deliver, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [None] * 32
    records = host.journal.records()
    assert sorted(r["source_receipt_id"] for r in records) == [f"receipt_{n:04d}" for n in range(8)]
    assert all(r["status"] == "proposed" for r in records)
