"""FileWatch: the cheap look at a journal's files still sees every change, on each of its paths.

The -wal is watched through its directory's time (trusted once old), the inode the directory
lists for it, and a descriptor's size; each test below ages the directory or keeps it young, so
both the fast path and the careful one meet the same damage."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes._packets import source
from pwh._core import codes
from pwh._core import journal_files as _journal_files
from pwh._core.journal_files import FileWatch
from tests.core.test_journal_hostile import Host


@pytest.fixture
def trust(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every directory time trusted, however young: the fast path, as a long-running host takes it."""
    monkeypatch.setattr(_journal_files, "_RACY_NS", -(10**18))


@pytest.fixture
def wal_db(tmp_path: Path) -> Iterator[tuple[sqlite3.Connection, str]]:
    path = str(tmp_path / "j.sqlite3")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE t (v)")
    db.execute("INSERT INTO t VALUES (1)")
    yield db, path
    db.close()


def _watch(path: str, *, aged: bool, monkeypatch: pytest.MonkeyPatch) -> FileWatch:
    if aged:
        monkeypatch.setattr(_journal_files, "_RACY_NS", -(10**18))
    watch = FileWatch(path)
    assert watch._dir_trusted is aged
    assert watch.changed() is None
    return watch


@pytest.mark.parametrize("aged", [True, False], ids=["trusted-directory", "young-directory"])
def test_growth_is_no_change(wal_db: tuple[sqlite3.Connection, str], aged: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    db, path = wal_db
    watch = _watch(path, aged=aged, monkeypatch=monkeypatch)
    statted: list[str] = []
    real = _journal_files.file_mark
    monkeypatch.setattr(_journal_files, "file_mark", lambda p: statted.append(p) or real(p))
    for n in range(20):
        db.execute("INSERT INTO t VALUES (?)", (n,))
        assert watch.changed() is None
    # The -wal itself is never statted while nothing changed: through a trusted directory time,
    # or through the inode its directory entry lists.
    assert statted == [path] * 20
    watch.close()


@pytest.mark.parametrize("aged", [True, False], ids=["trusted-directory", "young-directory"])
@pytest.mark.parametrize("damage", ["wal truncated", "wal replaced", "wal removed", "database replaced", "database removed"])
def test_each_change_is_seen(wal_db: tuple[sqlite3.Connection, str], aged: bool, damage: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _db, path = wal_db
    watch = _watch(path, aged=aged, monkeypatch=monkeypatch)
    wal = path + "-wal"
    if damage == "wal truncated":
        os.truncate(wal, 0)
    elif damage == "wal replaced":
        Path(path + ".other").write_bytes(b"\0" * (os.path.getsize(wal) + 4096))  # bigger: size alone would pass
        os.replace(path + ".other", wal)
    elif damage == "wal removed":
        os.unlink(wal)
    elif damage == "database replaced":
        sqlite3.connect(path + ".other").close()
        os.replace(path + ".other", path)
    else:
        os.unlink(path)
    assert watch.changed() == ("removed" if damage == "database removed" else "damaged")
    watch.close()


def test_a_young_directory_time_is_not_trusted_and_an_old_one_is(
    wal_db: tuple[sqlite3.Connection, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A time within the same clock tick as a later change would not change with it (git's racy
    timestamps): only a time well in the past when seen lets the -wal go unstatted."""
    _db, path = wal_db
    young = FileWatch(path)
    assert not young._dir_trusted  # its files were made a moment ago
    young.close()
    now = time.time_ns()
    monkeypatch.setattr(_journal_files.time, "time_ns", lambda: now + _journal_files._RACY_NS + 10**8)
    old = FileWatch(path)
    assert old._dir_trusted
    old.close()


def test_a_big_directory_is_statted_not_listed(wal_db: tuple[sqlite3.Connection, str], monkeypatch: pytest.MonkeyPatch) -> None:
    _db, path = wal_db
    monkeypatch.setattr(_journal_files, "_MAX_LISTED", 0)
    for n in range(3):
        Path(path).with_name(f"a{n}").write_text("")  # listed before the -wal, or after: either way
    watch = FileWatch(path)
    assert watch._listed_inode() is None
    Path(path + ".other").write_bytes(b"\0" * 65536)
    os.replace(path + ".other", path + "-wal")
    assert watch.changed() == "damaged"
    watch.close()


@pytest.mark.parametrize("damage", ["truncated", "removed", "replaced"])
def test_a_long_open_journal_reports_its_wal_damaged(tmp_path: Path, damage: str, trust: None) -> None:
    """The same, through a journal that trusts its directory's time (a host that has run a while)."""
    path = tmp_path / "sidecar.sqlite3"
    host = Host(path)
    try:
        assert host.dispatcher.dispatch(source(1)).hooks[0].recorded
        assert host.dispatcher.dispatch(source(2)).hooks[0].recorded
        assert host.journal._files._dir_trusted  # type: ignore[attr-defined]
        wal = str(path) + "-wal"
        if damage == "truncated":
            os.truncate(wal, 0)
        elif damage == "removed":
            os.unlink(wal)
        else:
            Path(wal + ".x").write_bytes(b"\0" * (os.path.getsize(wal) + 4096))
            os.replace(wal + ".x", wal)
        out = host.dispatcher.dispatch(source(3))
        assert out.journal_error == codes.JOURNAL_WRITE_FAILED and not out.hooks[0].recorded
    finally:
        host.close()
