"""The in-memory sidecar journal: the same rules and checksums as SQLite, for fast models.

Its "durable" part is a :class:`MemoryStore` the caller keeps, so a simulated crash and restart
loses exactly what a real one would: whatever had not been committed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from pwh._core import codes
from pwh._core import crash as _crash
from pwh._core.canonical import dumps_plain
from pwh._core.crash import CrashPlan
from pwh._core.journal import (
    RECORDED,
    Journal,
    JournalError,
    RecordResult,
    _decode,
    checksum,
    tampered,
    to_count,
)


class MemoryStore:
    """The 'durable' part of the in-memory backend: survives a simulated crash and restart."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[int, bytes, str]] = {}
        self.attempts: dict[str, int] = {}  # counted before each call (reserve_attempts)
        self.seq = 0
        self.read_only = False
        # Not state: what each row's bytes decode to, kept for the row (the very tuple) it was read
        # from, so a row is decoded once, not on every read. A row written, corrupted or tampered
        # with is a new tuple, read afresh. Only ever derived from ``rows``: keeping it across a
        # simulated restart keeps nothing a crash would lose.
        self.decoded: dict[str, tuple[tuple[int, bytes, str], dict[str, Any]]] = {}  # records(): shared, read-only
        self.verified: dict[str, tuple[int, bytes, str]] = {}  # rows found valid sidecar receipts (get_many)


# One lock for every in-memory journal of the process: several may share one store (a restart
# opens a new journal on the old store), and a dispatch may come from any thread.
_LOCK = threading.RLock()


class MemoryJournal(Journal):
    """Fast backend for models: same rules, same checksums, state kept in a :class:`MemoryStore`."""

    def __init__(self, store: MemoryStore | None = None, crash: CrashPlan | None = None) -> None:
        self.store = store or MemoryStore()
        self.crash = crash or CrashPlan()

    def make_read_only(self) -> None:
        self.store.read_only = True

    def corrupt_last_record(self) -> None:
        if self.store.rows:
            did, (seq, blob, s) = max(self.store.rows.items(), key=lambda kv: kv[1][0])
            flipped = bytearray(blob)
            flipped[len(flipped) // 2] ^= 0x01
            self.store.rows[did] = (seq, bytes(flipped), s)

    def tamper_last_record(self) -> None:
        if self.store.rows:
            did, (seq, blob, s) = max(self.store.rows.items(), key=lambda kv: kv[1][0])
            changed = tampered(blob)
            if changed is not None:
                self.store.rows[did] = (seq, changed, s)

    def get_many(self, dispatch_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        with _LOCK:
            return self._get_many(dispatch_ids)

    def _get_many(self, dispatch_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Each stored record asked for, decoded afresh (the caller may keep and hand on what it
        gets); a row already found a valid sidecar receipt is not checked again (its bytes, the
        very same, would pass the same checks)."""
        out = {}
        verified = self.store.verified
        for did in dispatch_ids:
            row = self.store.rows.get(did)
            if row is not None:
                if verified.get(did) is row:
                    out[did] = json.loads(row[1])
                else:
                    out[did] = _decode(did, row[1], row[2])
                    verified[did] = row
        return out

    def reserve_attempts(self, floors: Mapping[str, int], cap: int) -> dict[str, int]:
        with _LOCK:
            prior = to_count(self.store.attempts, floors, cap)
            counted = {did: n + 1 for did, n in prior.items() if n < cap}
            if counted and self.store.read_only:
                raise JournalError(codes.JOURNAL_WRITE_FAILED, "the journal could not be written")
            self.store.attempts.update(counted)
            return prior

    def commit(self, receipts: list[dict[str, Any]]) -> list[RecordResult]:
        with _LOCK:
            return self._commit(receipts)

    def _commit(self, receipts: list[dict[str, Any]]) -> list[RecordResult]:
        existing = self._get_many(r["dispatch_id"] for r in receipts)
        staged: dict[str, tuple[int, bytes, str]] = {}
        results = []
        seq = self.store.seq
        for receipt in receipts:
            did = receipt["dispatch_id"]
            outcome, stored = self.merge(existing.get(did), receipt)
            if outcome == RECORDED:
                blob = dumps_plain(stored)
                old = self.store.rows.get(did)
                if old is None:
                    seq += 1
                staged[did] = (old[0] if old else seq, blob, checksum(blob))
                existing[did] = stored
            results.append(RecordResult(did, outcome, stored))
        self.crash.hit(_crash.JOURNAL_INSIDE_RECORD)  # nothing staged has landed yet
        if self.store.read_only and staged:
            raise JournalError(codes.JOURNAL_WRITE_FAILED, "the journal could not be written")
        self.store.rows.update(staged)
        self.store.seq = seq
        self.crash.hit(_crash.JOURNAL_AFTER_RECORD)
        return results

    def records(self) -> list[dict[str, Any]]:
        """Every record, in record order. A row is decoded the first time it is read and the same
        record given again until the row changes: the records are shared between reads and must
        not be changed by whoever reads them."""
        with _LOCK:
            rows = sorted(self.store.rows.items(), key=lambda kv: kv[1][0])
        decoded = self.store.decoded
        out = []
        for did, row in rows:
            kept = decoded.get(did)
            if kept is None or kept[0] is not row:
                kept = decoded[did] = (row, _decode(did, row[1], row[2], typed=False))
            out.append(kept[1])
        return out
