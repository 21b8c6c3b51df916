"""Journal faults: a full disk, a read-only journal, corrupted or truncated records, a held write
lock, and two processes recording the same receipt at once.

The rule under test: whatever the storage does, ``dispatch`` returns; a journal that cannot be
written or read is *reported* in the outcome (``journal_error``), never raised and never turned
into a primary failure; a record that does not verify is reported ``journal_record_corrupt`` and
is neither trusted nor rebuilt (JNL-5); and one dispatch identity is recorded exactly once across
processes, a deterministic hook replaying and a drifting one ending in ``intent_conflict``.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import queue
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from pwh._core import codes
from pwh._core.journal import JournalError, SQLiteJournal, checksum
from pwh._core.memory_journal import MemoryJournal
from pwh._harness.interrupt import children_ignore_sigint
from pwh._reliability.packets import HOOK, dispatch_of, intent, proposed, source
from pwh._reliability.rig import Rig, Tally, snapshot, stable

BUSY_MS = 100  # the lowered busy timeout of the lock-contention cases


def _producer(i: Any) -> Any:
    """Four intents of about 1.3 KB: every record needs pages of its own (a full disk shows at once)."""
    return proposed(*(intent(i["dispatch_id"], {"note_ref": f"n{k}", "detail": "d" * 500}) for k in range(4)))


_BUDGET = {"max_result_bytes": 8192, "max_intents_per_dispatch": 4}


def _sqlite_rig(folder: Path, name: str = "journal.sqlite3") -> Rig:
    rig = Rig(SQLiteJournal(folder / name, synchronous="NORMAL"))
    rig.install(HOOK, _producer, budget=_BUDGET)
    return rig


def _memory_rig() -> Rig:
    rig = Rig(MemoryJournal())
    rig.install(HOOK, _producer, budget=_BUDGET)
    return rig


class _Counter:
    """Counts one category: ``attempt(check)`` runs ``check`` (returns a problem or None)."""

    def __init__(self, tally: Tally, name: str) -> None:
        self.tally, self.name = tally, name

    def attempt(self, label: str, check: Callable[[], str | None]) -> None:
        self.tally.tried += 1
        try:
            problem = check()
        except Exception as exc:
            self.tally.uncaught += 1
            self.tally.note(f"{label}: {type(exc).__name__} escaped")
            return
        if problem is None:
            self.tally.isolated += 1
        else:
            self.tally.note(f"{label}: {problem}")


def _reported(rig: Rig, n: int, code: str, *, calls_expected: int | None = None) -> str | None:
    """Dispatch receipt ``n`` and expect ``code`` reported in the outcome, the source unchanged."""
    src = source(n)
    before = snapshot(src)
    calls = sum(rig.calls.values())
    outcome = rig.dispatch(src)
    if snapshot(src) != before:
        return "the primary receipt changed"
    if not outcome.admitted or outcome.journal_error != code or not stable(outcome.journal_error):
        return f"reported {outcome.journal_error!r}, expected {code}"
    if calls_expected is not None and sum(rig.calls.values()) - calls != calls_expected:
        return "the provider was called for a record that could not be trusted"
    return None


def _recorded(rig: Rig, n: int) -> str | None:
    outcome = rig.dispatch(source(n))
    if outcome.journal_error is not None or not all(h.recorded and h.status == "proposed" for h in outcome.hooks):
        return f"not recorded once the fault was gone ({outcome.journal_error})"
    return None


# --------------------------------------------------------------------------------------------
# Disk full, read-only, held lock
# --------------------------------------------------------------------------------------------


def disk_full(folder: Path, tally: Tally, rounds: int) -> None:
    count = _Counter(tally, "journal_disk_full")
    rig = _sqlite_rig(folder)
    try:
        db = rig.journal._db  # type: ignore[attr-defined]
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count={pages}")
        for n in range(rounds):
            count.attempt("disk_full", partial(_reported, rig, n, codes.JOURNAL_WRITE_FAILED))
        db.execute("PRAGMA max_page_count=1073741823")
        count.attempt("disk_full_recovered", lambda: _recorded(rig, 0))
    finally:
        rig.close()


def read_only(folder: Path, tally: Tally, rounds: int) -> None:
    count = _Counter(tally, "journal_read_only")
    for variant in ("query_only", "uri_mode_ro", "memory"):
        rig = _memory_rig() if variant == "memory" else _sqlite_rig(folder, f"ro-{variant}.sqlite3")
        try:
            rig.dispatch(source(10_000))  # one good record to read back later
            kept = rig.journal.records()
            if variant == "uri_mode_ro":
                journal: Any = rig.journal  # the SQLite journal's own connection, swapped for a read-only one
                journal._db.close()
                journal._db = sqlite3.connect(f"file:{journal.path}?mode=ro", uri=True, isolation_level=None)
            else:
                rig.journal.make_read_only()
            for n in range(rounds):
                count.attempt(variant, partial(_reported, rig, n, codes.JOURNAL_WRITE_FAILED))
            count.attempt(variant + "_still_readable", partial(_unchanged, rig, kept))
        finally:
            rig.close()


def lock_contention(folder: Path, tally: Tally, rounds: int) -> None:
    count = _Counter(tally, "journal_lock")
    rig = _sqlite_rig(folder, "locked.sqlite3")
    holder = sqlite3.connect(folder / "locked.sqlite3", isolation_level=None, timeout=0.1, check_same_thread=False)
    try:
        rig.journal._db.execute(f"PRAGMA busy_timeout={BUSY_MS}")  # type: ignore[attr-defined]
        for n in range(rounds):
            holder.execute("BEGIN IMMEDIATE")
            try:
                count.attempt("held", partial(_held, rig, n))
            finally:
                holder.execute("ROLLBACK")
            count.attempt("released", partial(_recorded, rig, n))
        rig.journal._db.execute("PRAGMA busy_timeout=5000")  # type: ignore[attr-defined]
        holder.execute("BEGIN IMMEDIATE")
        releaser = threading.Timer(0.15, lambda: holder.execute("ROLLBACK"))
        releaser.start()
        try:
            count.attempt("released_while_waiting", lambda: _recorded(rig, rounds + 1))
        finally:
            releaser.join()
    finally:
        holder.close()
        rig.close()


def _held(rig: Rig, n: int) -> str | None:
    started = time.monotonic()
    problem = _reported(rig, n, codes.JOURNAL_WRITE_FAILED)
    if problem is None and time.monotonic() - started > BUSY_MS / 1000 + 2:
        return "waited far past the busy timeout"
    return problem


# --------------------------------------------------------------------------------------------
# Corruption
# --------------------------------------------------------------------------------------------


def _rewrite(blob: bytes, change: Callable[[dict[str, Any]], Any]) -> bytes:
    record = json.loads(blob)
    return json.dumps(change(record)).encode("utf-8")


def _deep_json(n: int) -> bytes:
    return b"[" * n + b"]" * n


# (name, how the stored blob is replaced, whether the checksum is recomputed to match)
_TAMPERS: list[tuple[str, Callable[[bytes], bytes], bool]] = [
    ("flipped_byte", lambda b: b[: len(b) // 2] + bytes([b[len(b) // 2] ^ 1]) + b[len(b) // 2 + 1 :], False),
    ("truncated", lambda b: b[: len(b) // 2], False),
    ("emptied", lambda b: b"", False),
    ("checksum_only", lambda b: b, False),  # the blob stays; the checksum column is changed below
    ("not_json_matching_sum", lambda b: b"\xff\xfe not json", True),
    ("deep_json_matching_sum", lambda b: _deep_json(100_000), True),
    ("array_matching_sum", lambda b: b"[]", True),
    ("foreign_key_matching_sum", lambda b: _rewrite(b, lambda r: {**r, "dispatch_id": "pwh_" + "0" * 64}), True),
    ("missing_status_matching_sum", lambda b: _rewrite(b, lambda r: {k: v for k, v in r.items() if k != "status"}), True),
    ("wrong_types_matching_sum", lambda b: _rewrite(b, lambda r: {**r, "attempts": "many", "intents": "none"}), True),
    ("unknown_status_matching_sum", lambda b: _rewrite(b, lambda r: {**r, "status": "granted"}), True),
    ("smuggled_text_matching_sum", lambda b: _rewrite(b, lambda r: {**r, "failure_code": "RuntimeError: /home/x/secret"}), True),
]


def _unchanged(rig: Any, kept: Any) -> str | None:
    return None if rig.journal.records() == kept else "records changed"


def corruption(folder: Path, tally: Tally, rounds: int) -> None:
    count = _Counter(tally, "journal_corrupt")
    for round_ in range(rounds):
        for name, tamper, matching in _TAMPERS:
            rig = _sqlite_rig(folder, f"corrupt-{round_}-{name}.sqlite3")
            try:
                count.attempt(name, partial(_tampered, rig, round_, name, tamper, matching))
            finally:
                rig.close()
        mem = _memory_rig()
        try:
            count.attempt("memory_flipped_byte", partial(_memory_tampered, mem, round_))
        finally:
            mem.close()
    for name in ("file_truncated", "file_garbage_header"):
        count.attempt(name, partial(_broken_file, folder, name))


def _tampered(rig: Rig, n: int, name: str, tamper: Callable[[bytes], bytes], matching: bool) -> str | None:
    first = rig.dispatch(source(n))
    if first.journal_error is not None:
        return "the first record failed"
    db = rig.journal._db  # type: ignore[attr-defined]
    seq, blob, stored_sum = db.execute("SELECT seq, receipt, checksum FROM sidecar_receipts ORDER BY seq DESC LIMIT 1").fetchone()
    new_blob = tamper(bytes(blob))
    new_sum = checksum(new_blob) if matching else ("sha256:" + "0" * 64 if name == "checksum_only" else stored_sum)
    db.execute("UPDATE sidecar_receipts SET receipt = ?, checksum = ? WHERE seq = ?", (new_blob, new_sum, seq))
    problem = _reported(rig, n, codes.JOURNAL_RECORD_CORRUPT, calls_expected=0)
    if problem is not None:
        return problem
    after = db.execute("SELECT receipt, checksum FROM sidecar_receipts WHERE seq = ?", (seq,)).fetchone()
    if (bytes(after[0]), after[1]) != (new_blob, new_sum):
        return "the corrupt record was rewritten (rebuilt) instead of reported"
    try:  # a listing shows any record whose bytes verify (an observer judges it), or reports it corrupt
        rig.journal.records()
    except JournalError as exc:
        return None if exc.code == codes.JOURNAL_RECORD_CORRUPT else f"records() reported {exc.code}"
    return None if matching else "records() returned a record that does not verify"


def _memory_tampered(rig: Rig, n: int) -> str | None:
    rig.dispatch(source(n))
    rig.journal.corrupt_last_record()
    return _reported(rig, n, codes.JOURNAL_RECORD_CORRUPT, calls_expected=0)


def _broken_file(folder: Path, name: str) -> str | None:
    path = folder / f"{name}.sqlite3"
    rig = _sqlite_rig(folder, path.name)
    for n in range(20):
        rig.dispatch(source(n))
    rig.close()
    data = path.read_bytes()
    path.write_bytes(data[:1000] if name == "file_truncated" else b"\x00garbage!" * 12 + data[108:])
    try:
        rig = _sqlite_rig(folder, path.name)
    except JournalError as exc:
        return None if stable(exc.code) else f"open reported {exc.code}"
    try:
        outcome = rig.dispatch(source(1))
        if outcome.journal_error is None or not stable(outcome.journal_error):
            return "a broken journal file was not reported"
        return None
    finally:
        rig.close()


# --------------------------------------------------------------------------------------------
# Two processes, one receipt
# --------------------------------------------------------------------------------------------


def _race_child(path: str, plan: list[tuple[int, bool]], start: Any, meet: Any, out: Any) -> None:
    """One of two dispatchers on one journal: for each (receipt, drifting) both read the journal,
    meet inside their producers (so neither has recorded yet), then both commit."""
    rig = Rig(SQLiteJournal(path, synchronous="NORMAL"))
    drifting: dict[str, bool] = {}

    def produce(i: Any) -> Any:
        meet.wait(20)
        note = f"pid{os.getpid()}" if drifting[i["dispatch_id"]] else "stable"
        return proposed(intent(i["dispatch_id"], {"note_ref": note}))

    rig.install(HOOK, produce, budget={"timeout_ms": 25000})
    try:
        for n, drift in plan:
            drifting[dispatch_of(source(n))] = drift
            start.wait(30)
            try:
                outcome = rig.dispatch(source(n))
                out.put(json.dumps({"n": n, "hook": outcome.hook(HOOK).to_json(), "journal_error": outcome.journal_error}))
            except Exception as exc:
                out.put(json.dumps({"n": n, "uncaught": type(exc).__name__}))
    finally:
        rig.close()


def two_processes(folder: Path, tally: Tally, rounds: int) -> None:
    count = _Counter(tally, "journal_two_processes")
    path = folder / "shared.sqlite3"
    SQLiteJournal(path, synchronous="NORMAL").close()
    plan = [(n, n % 2 == 1) for n in range(2 * rounds)]
    ctx = multiprocessing.get_context("spawn")
    start, meet, out = ctx.Barrier(2), ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_race_child, args=(str(path), plan, start, meet, out), daemon=True) for _ in range(2)]
    with children_ignore_sigint():  # a Ctrl-C is pwh's to handle: it stops them by PID
        for p in procs:
            p.start()
    answers: dict[int, list[dict[str, Any]]] = {}
    deadline = time.monotonic() + 60 + 5 * len(plan)
    try:
        got = 0
        while got < 2 * len(plan) and time.monotonic() < deadline:
            try:
                answer = json.loads(out.get(timeout=0.5))
            except queue.Empty:
                if not all(p.is_alive() for p in procs):
                    break  # a child died: its answers will never come
                continue
            answers.setdefault(answer["n"], []).append(answer)
            got += 1
    finally:
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.kill()
                p.join(5)
        out.close()
        out.join_thread()
    journal = SQLiteJournal(path, synchronous="NORMAL")
    try:
        records = journal.records()
    finally:
        journal.close()
    for n, drift in plan:
        count.attempt(("drifting" if drift else "deterministic") + "_race", partial(_judge_race, n, drift, answers.get(n, []), records))


def _judge_race(n: int, drifting: bool, answers: list[dict[str, Any]], records: list[dict[str, Any]]) -> str | None:
    if len(answers) != 2:
        return f"{len(answers)} of 2 processes answered"
    if any("uncaught" in a for a in answers):
        raise RuntimeError("a child process saw an exception escape")
    did = dispatch_of(source(n))
    mine = [r for r in records if r["dispatch_id"] == did]
    if len(mine) != 1:
        return f"{len(mine)} records for one dispatch identity"
    hooks = sorted((a["hook"] for a in answers), key=lambda h: (h["failure_code"] or "", h["replayed"]))
    if any(a["journal_error"] for a in answers):
        return "a journal error"
    if drifting:
        winner, loser = hooks[0], hooks[1]
        ok = winner["status"] == "proposed" and loser["failure_code"] == codes.INTENT_CONFLICT and loser["intents"] == winner["intents"]
    else:
        ok = all(h["status"] == "proposed" for h in hooks) and sorted(h["replayed"] for h in hooks) == [False, True]
        winner = hooks[0]
    if not ok:
        return "the two outcomes do not show one record and one replay or conflict"
    return None if mine[0]["intents"] == winner["intents"] else "the record is not the winner's"


def run_journal_faults(tallies: dict[str, Tally], *, rounds: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="pwh-campaign-journal-"))
    try:
        disk_full(folder, tallies.setdefault("journal_disk_full", Tally()), rounds)
        read_only(folder, tallies.setdefault("journal_read_only", Tally()), rounds)
        corruption(folder, tallies.setdefault("journal_corrupt", Tally()), max(1, rounds // 4))
        lock_contention(folder, tallies.setdefault("journal_lock", Tally()), rounds)
        two_processes(folder, tallies.setdefault("journal_two_processes", Tally()), rounds)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
