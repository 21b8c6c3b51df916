"""The sidecar journal: the interface, its rules, and the SQLite backend (the embedded default).

The in-memory backend for fast models lives in :mod:`pwh._memory_journal`.

Rules it carries by itself, whatever the dispatcher does (SPEC §3):

- one record per ``dispatch_id``, enforced by the storage (a UNIQUE key in SQLite);
- a dispatch's records land in one atomic, durable commit;
- a completed record is never overwritten: the same canonical result again is a no-op that
  returns the original (JNL-1), a different one is a conflict and the original stays (JNL-2);
- a failed record may be replaced by a later attempt under the same identity (JNL-4);
- every record carries a checksum; one that does not verify, or (when the dispatcher is about
  to act on it) is not a valid sidecar receipt, is reported as corrupt and is never rebuilt
  from text (JNL-5).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _crash
from ._canonical import dumps_plain
from ._crash import CrashPlan
from ._schemas import schema_rejections, validator

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
    return RECORDED, new  # nothing there yet, or a failure a later attempt replaces (JNL-4)


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
        raise JournalError("journal_record_corrupt", "a record does not match its checksum")
    try:
        value = json.loads(blob)
    except (ValueError, RecursionError):
        raise JournalError("journal_record_corrupt", "a record is not valid JSON") from None
    if not isinstance(value, dict) or value.get("dispatch_id") != dispatch_id:
        raise JournalError("journal_record_corrupt", "a record does not belong to its key")
    # A matching checksum proves only that the bytes are the ones some writer stored (another
    # process, an older pwh): a record is trusted only as the bounded typed packet it must be.
    if typed and schema_rejections(validator("sidecar_receipt"), value, "journal_record_corrupt"):
        raise JournalError("journal_record_corrupt", "a record is not a valid sidecar receipt")
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
    def records(self) -> list[dict[str, Any]]:
        """Every record, in the order first recorded."""

    def close(self) -> None:
        """Release the storage; a crashed journal is closed without committing."""

    @abstractmethod
    def make_read_only(self) -> None:
        """Fault injection: every later write fails as on a read-only or full file system."""

    @abstractmethod
    def corrupt_last_record(self) -> None:
        """Fault injection: flip one byte of the newest record in storage (JNL-5)."""


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


class SQLiteJournal(Journal):
    """The embedded default: WAL, ``synchronous=FULL``, one transaction per dispatch."""

    def __init__(
        self, path: str | os.PathLike[str], crash: CrashPlan | None = None, *, synchronous: str = "FULL"
    ) -> None:
        self.path = Path(os.path.abspath(path))  # resolved now: a later chdir (anyone's) cannot move it
        self.crash = crash or CrashPlan()
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, timeout=10.0)
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.Error:
            raise JournalError("journal_open_failed", "the journal database could not be opened") from None
        self._closed = False

    def get_many(self, dispatch_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
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
            raise JournalError("journal_read_failed", "the journal could not be read") from None
        return {did: _decode(did, _blob(blob), s) for did, blob, s in rows}

    def commit(self, receipts: list[dict[str, Any]]) -> list[RecordResult]:
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error:
            raise JournalError("journal_write_failed", "the journal could not start a transaction") from None
        try:
            results = self._insert_all_new(receipts)
            if results is None:
                results = self._merge_each(receipts)
            self.crash.hit(_crash.JOURNAL_INSIDE_RECORD)
            db.execute("COMMIT")
        except BaseException as exc:
            self._abandon()
            if isinstance(exc, sqlite3.Error):
                raise JournalError("journal_write_failed", "the journal could not be written") from None
            raise
        self.crash.hit(_crash.JOURNAL_AFTER_RECORD)
        return results

    def _merge_each(self, receipts: list[dict[str, Any]]) -> list[RecordResult]:
        """Some record exists: apply the merge rule to each receipt against what is stored."""
        # Read inside the write lock: another process may have recorded since we looked.
        existing = self.get_many(r["dispatch_id"] for r in receipts)
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
            "INSERT INTO sidecar_receipts (dispatch_id, status, receipt, checksum) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(dispatch_id) DO NOTHING",
            rows,
        )
        if db.total_changes - before == len(rows):
            return [RecordResult(receipt["dispatch_id"], RECORDED, receipt) for receipt in receipts]
        db.execute("ROLLBACK")
        db.execute("BEGIN IMMEDIATE")
        return None

    def make_read_only(self) -> None:
        self._db.execute("PRAGMA query_only=ON")

    def corrupt_last_record(self) -> None:
        row = self._db.execute("SELECT seq, receipt FROM sidecar_receipts ORDER BY seq DESC LIMIT 1").fetchone()
        if row is not None:
            blob = bytearray(row[1])
            blob[len(blob) // 2] ^= 0x01
            self._db.execute("UPDATE sidecar_receipts SET receipt = ? WHERE seq = ?", (bytes(blob), row[0]))

    def _abandon(self) -> None:
        try:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def records(self) -> list[dict[str, Any]]:
        try:
            rows = self._db.execute(
                "SELECT dispatch_id, receipt, checksum FROM sidecar_receipts ORDER BY seq"
            ).fetchall()
        except sqlite3.Error:
            raise JournalError("journal_read_failed", "the journal could not be read") from None
        return [_decode(did, _blob(blob), s, typed=False) for did, blob, s in rows]

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._abandon()
            self._db.close()
