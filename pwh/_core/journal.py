"""The sidecar journal: the interface, its rules, and the SQLite backend (the embedded default).

The in-memory backend for fast models lives in :mod:`pwh._core.memory_journal`.

Rules it carries by itself, whatever the dispatcher does (rule JNL, P-identity-bytes):

- one record per ``dispatch_id``, enforced by the storage (a UNIQUE key in SQLite);
- a dispatch's records land in one atomic, durable commit;
- a completed record is never overwritten: the same canonical result again is a no-op that
  returns the original (JNL-1), a different one is a conflict and the original stays (JNL-2);
- a failed record may be replaced by a later attempt under the same identity (JNL-4), and the
  attempts it counts never go down;
- attempts are counted before a provider is called (:meth:`Journal.reserve_attempts`), in one write
  transaction under the storage's write lock, so no redelivery, restart or other process can
  call a hook past the retry cap (rule BUD);
- every record carries a checksum; one that does not verify, or (when the dispatcher is about
  to act on it) is not a valid sidecar receipt, is reported as corrupt and is never rebuilt
  from text (JNL-5).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pwh._core import codes
from pwh._core import crash as _crash
from pwh._core.canonical import dumps_plain
from pwh._core.crash import CrashPlan
from pwh._core.journal_files import FileWatch
from pwh._core.schemas import schema_rejections, validator

RECORDED = "recorded"  # a new record, or a retry replacing a failure
REPLAYED = "replayed"  # the same completed result again: the original is returned
CONFLICT = "conflict"  # a different result for a completed dispatch: rejected, original kept

FINAL_STATUSES = frozenset({"proposed", "not_applicable"})


class JournalError(Exception):
    """The journal could not be read or written. ``code`` is a stable failure code."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason


@dataclass(frozen=True)
class RecordResult:
    dispatch_id: str
    outcome: str
    stored: dict[str, Any]


def checksum(blob: bytes) -> str:
    return "sha256:" + hashlib.sha256(blob).hexdigest()


def merge(existing: dict[str, Any] | None, new: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Decide what one write does to the record already there (the replay and conflict rules)."""
    if existing is not None and existing["status"] in FINAL_STATUSES:
        if new["status"] in FINAL_STATUSES and new["result_digest"] != existing["result_digest"]:
            return CONFLICT, existing
        return REPLAYED, existing
    # Nothing there yet, or a failure a later attempt replaces (JNL-4). Its count never goes down:
    # a dispatcher that reserved an earlier attempt may finish after one that reserved a later one.
    before = existing.get("attempts", 0) if existing is not None else 0
    return RECORDED, {**new, "attempts": max(new.get("attempts", 0), before)}


def to_count(stored: Mapping[str, int], floors: Mapping[str, int], cap: int) -> dict[str, int]:
    """Which of ``floors`` (dispatch id -> attempts its record shows, in call order) one write
    counts, each with the attempts made before: all, up to and including the first that will be
    called although the store counts more attempts than its record shows. That one's last call
    may have ended the process that made it: it is called last in its batch, so that if it ends
    this process too, no hook after it is charged a call it never got."""
    prior: dict[str, int] = {}
    for did, floor in floors.items():
        n = stored.get(did, 0)
        prior[did] = max(n, floor)
        if floor < n < cap:
            break
    return prior


TAMPERED_VALUE = "tampered"


def tampered(blob: bytes) -> bytes | None:
    """``blob`` (a stored record's JSON) with the first string value of its first intent's payload
    replaced by :data:`TAMPERED_VALUE`, still well-formed; ``None`` when it holds no such value."""
    try:
        record = json.loads(blob)
        payload = record["intents"][0]["payload"]
        key = next(k for k, v in payload.items() if isinstance(v, str) and v != TAMPERED_VALUE)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, StopIteration):
        return None
    payload[key] = TAMPERED_VALUE
    return dumps_plain(record)


def _blob(value: Any) -> bytes:
    """Stored bytes as bytes; a column whose type was changed underneath decodes to something
    its checksum will not match."""
    return value if type(value) is bytes else str(value).encode("utf-8", "surrogatepass")


def _decode(dispatch_id: str, blob: bytes, stored_sum: str, *, typed: bool = True) -> dict[str, Any]:
    """The stored record, or :class:`JournalError` ``journal_record_corrupt``. ``typed``: the
    record is about to be acted on (replayed, merged), so it must also be a valid sidecar receipt;
    a plain listing (``records()``) shows any record whose bytes verify, so an observer can judge it."""
    import json

    if checksum(blob) != stored_sum:
        raise JournalError(codes.JOURNAL_RECORD_CORRUPT, "a record does not match its checksum")
    try:
        value = json.loads(blob)
    except (ValueError, RecursionError):
        raise JournalError(codes.JOURNAL_RECORD_CORRUPT, "a record is not valid JSON") from None
    if not isinstance(value, dict) or value.get("dispatch_id") != dispatch_id:
        raise JournalError(codes.JOURNAL_RECORD_CORRUPT, "a record does not belong to its key")
    # A matching checksum proves only that the bytes are the ones some writer stored (another
    # process, an older pwh): a record is trusted only as the bounded typed packet it must be.
    if typed and schema_rejections(validator("sidecar_receipt"), value, codes.JOURNAL_RECORD_CORRUPT):
        raise JournalError(codes.JOURNAL_RECORD_CORRUPT, "a record is not a valid sidecar receipt")
    return value


class Journal(ABC):
    """What the dispatcher needs from durable storage."""

    crash: CrashPlan

    def merge(self, existing: dict[str, Any] | None, new: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return merge(existing, new)

    @abstractmethod
    def get_many(self, dispatch_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The records present for these ids (missing ids are absent from the answer)."""

    @abstractmethod
    def commit(self, receipts: list[dict[str, Any]]) -> list[RecordResult]:
        """Apply the merge rule to every receipt in one atomic, durable commit."""

    @abstractmethod
    def reserve_attempts(self, floors: Mapping[str, int], cap: int) -> dict[str, int]:
        """Count attempts before the providers are called, in one write under the write lock.

        For the ids of :func:`to_count` (in order, up to the first that runs alone): the attempts
        made before, the larger of the stored count and ``floors[id]`` (what the caller read from
        its record); where that is under ``cap`` the stored count becomes one more, and the caller
        may make the call. Stored counts never go down. :class:`JournalError`
        ``journal_write_failed`` when the count cannot be stored: then no call may be made."""

    @abstractmethod
    def records(self) -> list[dict[str, Any]]:
        """Every record, in the order first recorded."""

    def close(self) -> None:  # noqa: B027 - a journal with nothing to release need not override it
        """Release the storage; a crashed journal is closed without committing."""

    @abstractmethod
    def make_read_only(self) -> None:
        """Fault injection: every later write fails as on a read-only or full file system."""

    @abstractmethod
    def corrupt_last_record(self) -> None:
        """Fault injection: flip one byte of the newest record in storage (JNL-5)."""

    @abstractmethod
    def tamper_last_record(self) -> None:
        """Fault injection: change one payload value of the newest record in storage, leaving it
        well-formed JSON (see :func:`tampered`); its checksum is left as it was."""


# ``seq`` orders records as first recorded: a plain rowid key gives max + 1, and the journal never
# deletes a row, so no AUTOINCREMENT (its counter table is one more page in every commit, about
# 8 % of a durable commit here). Journals made with AUTOINCREMENT by older versions work as they are.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sidecar_receipts (
    seq INTEGER PRIMARY KEY,
    dispatch_id TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL,
    receipt BLOB NOT NULL,
    checksum TEXT NOT NULL
);
"""

# Attempts made per dispatch identity, counted before each call (``reserve_attempts``); a table of
# its own, so a sidecar receipt stays what a dispatch concluded. Made beside an older journal, it
# starts from the counts that journal's receipts carry.
_ATTEMPTS_SCHEMA = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS sidecar_attempts (dispatch_id TEXT PRIMARY KEY, attempts INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO sidecar_attempts (dispatch_id, attempts)
    SELECT dispatch_id, json_extract(CAST(receipt AS TEXT), '$.attempts') FROM sidecar_receipts
    WHERE json_valid(CAST(receipt AS TEXT))
      AND json_type(CAST(receipt AS TEXT), '$.attempts') = 'integer';
COMMIT;
"""

_DAMAGED = "the journal's file was replaced, truncated or removed while it was open"


class SQLiteJournal(Journal):
    """The embedded default: WAL, ``synchronous=FULL``, one durable transaction per dispatch.

    Usable from any thread: one connection (``check_same_thread=False``) behind one lock, held for
    a whole transaction. A dispatch is a few short transactions and SQLite's write lock admits one
    writer at a time anyway, so a connection per thread would add descriptors, not throughput.

    It notices its files changed under it. Before and after every commit it compares the database
    file and its ``-wal`` with what it opened (same device and inode; neither smaller than it last
    saw: pwh never vacuums or truncates them). A database file removed from its path is put back
    from this connection, which still reads it, before anything is acknowledged; any other change
    (a file replaced, or truncated) makes every later write ``journal_write_failed`` and every
    read ``journal_read_failed``, and no commit into it is acknowledged.
    """

    def __init__(self, path: str | os.PathLike[str], crash: CrashPlan | None = None, *, synchronous: str = "FULL") -> None:
        self.path = Path(os.path.abspath(path))  # resolved now: a later chdir (anyone's) cannot move it
        self.crash = crash or CrashPlan()
        self._synchronous = str(synchronous).upper()
        # The reservation survives any process crash without an fsync of its own (WAL with
        # synchronous=NORMAL); the dispatch's FULL commit syncs it with the rest.
        self._reserve_sync = "NORMAL" if self._synchronous in ("FULL", "EXTRA", "2", "3") else self._synchronous
        self._lock = threading.RLock()
        self._db = self._connect()
        self._files = FileWatch(str(self.path))

    # -- opening and watching the files ---------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.path, isolation_level=None, timeout=10.0, check_same_thread=False)
        except sqlite3.Error:
            raise JournalError(codes.JOURNAL_OPEN_FAILED, "the journal database could not be opened") from None
        try:
            db.execute(f"PRAGMA synchronous={self._synchronous}")
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
            made = self._add_attempts_table(db)
            if made:  # a new journal: its tables in the main file, not only in the -wal
                db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            db.close()
            raise JournalError(codes.JOURNAL_OPEN_FAILED, "the journal database could not be opened") from None
        return db

    @staticmethod
    def _add_attempts_table(db: sqlite3.Connection) -> bool:
        """Make the attempts table if this journal has none (new, or from before it), filled from
        the receipts' counts; True if it was made here. Safe against a second process doing the
        same: ``IF NOT EXISTS`` and ``OR IGNORE`` inside one write transaction."""
        exists = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sidecar_attempts'"
        made = db.execute(exists).fetchone() is None
        if made:
            db.executescript(_ATTEMPTS_SCHEMA)
        return made

    def _restore(self) -> bool:
        """The database file was removed from its path while open: write what this connection
        still reads to a new file, link it into place only if the path is still free (never over
        a file someone put there), and continue on it. False: it could not be done."""
        spare = self.path.with_name(f"{self.path.name}.restore-{os.getpid()}-{threading.get_ident()}")
        try:
            copy = sqlite3.connect(spare, isolation_level=None)
            try:
                self._db.backup(copy)
            finally:
                copy.close()
            # Close first: SQLite removes "<path>-wal" when its last connection closes, and the
            # old -wal must not be taken for the restored file's.
            self._db.close()
            try:
                os.link(spare, self.path)
            finally:
                os.unlink(spare)
            self._db = self._connect()
        except (OSError, sqlite3.Error, JournalError):
            with contextlib.suppress(OSError):
                os.unlink(spare)
            return False
        self._files.reset()
        return True

    def _broken(self) -> JournalError:
        """Take the journal out of use: close the connection now (SQLite finds a truncated -wal
        short and checkpoints nothing, so the database file keeps what it held; nothing more is
        written into the damaged files) and answer every later statement with an error, so every
        later read and write reports its journal error through the ordinary paths."""
        with contextlib.suppress(sqlite3.Error):
            self._db.close()
        self._files.close()
        self._db = _OUT_OF_USE  # type: ignore[assignment]
        return JournalError(codes.JOURNAL_WRITE_FAILED, _DAMAGED)

    # -- writes -------------------------------------------------------------------------------

    def _write(self, body: Callable[[], Any], *, synchronous: str, crash_points: bool = False) -> Any:
        """Run ``body`` in one write transaction at ``synchronous`` and acknowledge it only if the
        files are still this journal's: checked before the commit (nothing is written into a
        damaged -wal) and after it (a commit into a file that is gone is not reported done)."""
        with self._lock:
            db = self._db
            try:
                db.execute(f"PRAGMA synchronous={synchronous}")
                db.execute("BEGIN IMMEDIATE")
                result = body()
                if crash_points:
                    self.crash.hit(_crash.JOURNAL_INSIDE_RECORD)
                if not self._files_ok():  # put back from this connection, without this write: again
                    return self._write(body, synchronous=synchronous, crash_points=crash_points)
                db.execute("COMMIT" if db.in_transaction else "SELECT 1")
            except BaseException as exc:
                self._abandon()
                if isinstance(exc, sqlite3.Error):
                    raise JournalError(codes.JOURNAL_WRITE_FAILED, "the journal could not be written") from None
                raise
            finally:
                with contextlib.suppress(sqlite3.Error):  # a broken connection reports itself next time
                    self._db.execute(f"PRAGMA synchronous={self._synchronous}")
            self._files_ok()  # put back after the commit: the copy holds it
            if crash_points:
                self.crash.hit(_crash.JOURNAL_AFTER_RECORD)
            return result

    def _files_ok(self) -> bool:
        """True if the files are as this connection left them; False if the database file had
        been removed and is now put back from this connection (what an open transaction held is
        not in the copy). Any other change: :class:`JournalError` ``journal_write_failed``, and
        the journal is out of use (:meth:`_broken`)."""
        changed = self._files.changed()
        if changed is None:
            return True
        self._abandon()
        if changed == "removed" and self._restore():
            return False
        raise self._broken()

    def commit(self, receipts: list[dict[str, Any]]) -> list[RecordResult]:
        def body() -> list[RecordResult]:
            results = self._insert_all_new(receipts)
            return results if results is not None else self._merge_each(receipts)

        return self._write(body, synchronous=self._synchronous, crash_points=True)

    def reserve_attempts(self, floors: Mapping[str, int], cap: int) -> dict[str, int]:
        ids = list(floors)

        def body() -> dict[str, int]:
            marks = ",".join("?" * len(ids))
            stored = dict(
                self._db.execute(f"SELECT dispatch_id, attempts FROM sidecar_attempts WHERE dispatch_id IN ({marks})", ids).fetchall()
            )
            prior = to_count({did: _count(n) for did, n in stored.items()}, floors, cap)
            counted = [(did, n + 1) for did, n in prior.items() if n < cap]
            if counted:
                self._db.executemany(
                    "INSERT INTO sidecar_attempts (dispatch_id, attempts) VALUES (?, ?) "
                    "ON CONFLICT(dispatch_id) DO UPDATE SET attempts = max(attempts, excluded.attempts)",
                    counted,
                )
            else:
                self._db.execute("ROLLBACK")  # nothing to count: nothing to commit
            return prior

        return self._write(body, synchronous=self._reserve_sync)

    def _merge_each(self, receipts: list[dict[str, Any]]) -> list[RecordResult]:
        """Some record exists: apply the merge rule to each receipt against what is stored."""
        # Read inside the write lock: another process may have recorded since we looked.
        existing = self._get_many(r["dispatch_id"] for r in receipts)
        results = []
        for receipt in receipts:
            did = receipt["dispatch_id"]
            outcome, stored = self.merge(existing.get(did), receipt)
            if outcome == RECORDED:
                blob = dumps_plain(stored)
                self._db.execute(
                    "INSERT INTO sidecar_receipts (dispatch_id, status, receipt, checksum) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT(dispatch_id) DO UPDATE SET "
                    "status=excluded.status, receipt=excluded.receipt, checksum=excluded.checksum",
                    (did, stored["status"], blob, checksum(blob)),
                )
                existing[did] = stored
            results.append(RecordResult(did, outcome, stored))
        return results

    def _insert_all_new(self, receipts: list[dict[str, Any]]) -> list[RecordResult] | None:
        """The usual case in one statement: no record exists yet for any of these dispatches, so
        the merge rule records each as it is. If any one exists, the transaction (which holds
        nothing else) is rolled back and a new one opened, and ``None`` sends the caller through
        the read-and-merge path, which reads again inside the new write lock. No savepoint: two
        statements fewer on every dispatch, for a path that only replays and conflicts take."""
        db = self._db
        rows = []
        for receipt in receipts:
            blob = dumps_plain(receipt)
            rows.append((receipt["dispatch_id"], receipt["status"], blob, checksum(blob)))
        before = db.total_changes
        db.executemany(
            "INSERT INTO sidecar_receipts (dispatch_id, status, receipt, checksum) VALUES (?, ?, ?, ?) ON CONFLICT(dispatch_id) DO NOTHING",
            rows,
        )
        if db.total_changes - before == len(rows):
            return [RecordResult(receipt["dispatch_id"], RECORDED, receipt) for receipt in receipts]
        db.execute("ROLLBACK")
        db.execute("BEGIN IMMEDIATE")
        return None

    def make_read_only(self) -> None:
        with self._lock:
            self._db.execute("PRAGMA query_only=ON")

    def corrupt_last_record(self) -> None:
        with self._lock:
            row = self._db.execute("SELECT seq, receipt FROM sidecar_receipts ORDER BY seq DESC LIMIT 1").fetchone()
            if row is not None:
                blob = bytearray(row[1])
                blob[len(blob) // 2] ^= 0x01
                self._db.execute("UPDATE sidecar_receipts SET receipt = ? WHERE seq = ?", (bytes(blob), row[0]))

    def tamper_last_record(self) -> None:
        with self._lock:
            row = self._db.execute("SELECT seq, receipt FROM sidecar_receipts ORDER BY seq DESC LIMIT 1").fetchone()
            changed = tampered(_blob(row[1])) if row is not None else None
            if changed is not None:
                self._db.execute("UPDATE sidecar_receipts SET receipt = ? WHERE seq = ?", (changed, row[0]))

    def damage(self, how: str) -> None:
        """Fault injection: change the files under the open connection as an operator or a
        cleanup job would. ``removed``: the database, its -wal and -shm unlinked; ``replaced``:
        another database moved onto its path; ``wal_truncated``: its -wal cut to zero bytes;
        ``wal_removed``: the -wal alone unlinked; ``wal_replaced``: a copy of the -wal moved onto
        it; ``wal_shortened``: its last byte cut."""
        base = str(self.path)

        def removed() -> None:
            for suffix in ("", "-wal", "-shm"):
                Path(base + suffix).unlink(missing_ok=True)

        def replaced() -> None:
            sqlite3.connect(base + ".other").close()  # an empty database file
            os.replace(base + ".other", base)

        def wal_replaced() -> None:  # a copy of the same bytes under another inode (a restore, a sync tool)
            shutil.copyfile(base + "-wal", base + "-wal.copy")
            os.replace(base + "-wal.copy", base + "-wal")

        def wal_shortened() -> None:  # its last byte cut (a torn copy)
            os.truncate(base + "-wal", max(0, os.path.getsize(base + "-wal") - 1))

        {
            "removed": removed,
            "replaced": replaced,
            "wal_truncated": lambda: os.truncate(base + "-wal", 0),
            "wal_removed": lambda: os.unlink(base + "-wal"),
            "wal_replaced": wal_replaced,
            "wal_shortened": wal_shortened,
        }[how]()

    def _abandon(self) -> None:
        try:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    # -- reads --------------------------------------------------------------------------------

    def get_many(self, dispatch_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        with self._lock:
            return self._get_many(dispatch_ids)

    def _get_many(self, dispatch_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        ids = list(dispatch_ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        try:
            rows = self._db.execute(
                f"SELECT dispatch_id, receipt, checksum FROM sidecar_receipts WHERE dispatch_id IN ({marks})",
                ids,
            ).fetchall()
        except sqlite3.Error:
            raise JournalError(codes.JOURNAL_READ_FAILED, "the journal could not be read") from None
        return {did: _decode(did, _blob(blob), s) for did, blob, s in rows}

    def records(self) -> list[dict[str, Any]]:
        with self._lock:
            try:
                rows = self._db.execute("SELECT dispatch_id, receipt, checksum FROM sidecar_receipts ORDER BY seq").fetchall()
            except sqlite3.Error:
                raise JournalError(codes.JOURNAL_READ_FAILED, "the journal could not be read") from None
        return [_decode(did, _blob(blob), s, typed=False) for did, blob, s in rows]

    def close(self) -> None:
        """Close the connection (again: nothing happens)."""
        with self._lock:
            self._abandon()
            self._db.close()
            self._files.close()


class _OutOfUse:
    """Stands in for the connection of a journal whose files changed under it."""

    in_transaction = False

    def execute(self, *args: Any) -> Any:
        raise sqlite3.OperationalError("the journal is out of use")

    executemany = executescript = execute

    def close(self) -> None:
        pass


_OUT_OF_USE = _OutOfUse()


def _count(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0
