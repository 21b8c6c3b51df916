"""The sidecar journal (SPEC §3): uniqueness, atomic commits, replay/conflict, crash points, checksums."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pwh import (
    CrashPlan,
    JournalError,
    MemoryJournal,
    MemoryStore,
    SimulatedCrash,
    SQLiteJournal,
)
from pwh._core import crash as _crash
from pwh._core.journal import CONFLICT, RECORDED, REPLAYED


def receipt(n: int, status: str = "proposed", digest: str = "a", attempts: int = 1) -> dict[str, Any]:
    return {
        "schema_version": "pwh_post_writeback_sidecar_receipt_v0",
        "dispatch_id": f"pwh_{n:064x}",
        "hook_id": "a.reporter",
        "capability_id": "a",
        "source_receipt_id": "receipt_0001",
        "event_kind": "todo_completed",
        "registration_schema_version": "loopx_post_writeback_capability_hook_registration_v0",
        "status": status,
        "failure_code": "producer_failed" if status == "failed" else None,
        "intents": [],
        "result_digest": None if status == "failed" else "sha256:" + digest * 64,
        "attempts": attempts,
    }


def one(journal: Any, n: int) -> dict[str, Any] | None:
    did = receipt(n)["dispatch_id"]
    return journal.get_many([did]).get(did)


@pytest.fixture(params=["sqlite", "memory"])
def make(request: pytest.FixtureRequest, tmp_path: Path):  # type: ignore[no-untyped-def]
    store = MemoryStore()
    opened: list[Any] = []

    def open_(crash: CrashPlan | None = None):  # type: ignore[no-untyped-def]
        j = SQLiteJournal(tmp_path / "j.sqlite3", crash) if request.param == "sqlite" else MemoryJournal(store, crash)
        opened.append(j)
        return j

    yield open_
    for j in opened:
        j.close()


def test_record_then_replay_same_result_returns_original(make) -> None:  # type: ignore[no-untyped-def]
    j = make()
    [first] = j.commit([receipt(1)])
    assert first.outcome == RECORDED
    [again] = j.commit([receipt(1, attempts=9)])
    assert again.outcome == REPLAYED and again.stored["attempts"] == 1
    assert len(j.records()) == 1


def test_different_result_is_a_conflict_and_original_stays(make) -> None:  # type: ignore[no-untyped-def]
    j = make()
    j.commit([receipt(1, digest="a")])
    [res] = j.commit([receipt(1, digest="b")])
    assert res.outcome == CONFLICT and res.stored["result_digest"] == "sha256:" + "a" * 64
    assert one(j, 1)["result_digest"] == "sha256:" + "a" * 64


def test_failure_is_replaced_by_a_later_success(make) -> None:  # type: ignore[no-untyped-def]
    j = make()
    j.commit([receipt(1, status="failed")])
    [res] = j.commit([receipt(1, attempts=2)])
    assert res.outcome == RECORDED
    assert one(j, 1)["status"] == "proposed"
    assert len(j.records()) == 1


def test_a_success_is_never_replaced_by_a_failure(make) -> None:  # type: ignore[no-untyped-def]
    j = make()
    j.commit([receipt(1)])
    [res] = j.commit([receipt(1, status="failed")])
    assert res.outcome == REPLAYED and one(j, 1)["status"] == "proposed"


def test_crash_inside_the_record_transaction_leaves_nothing(make) -> None:  # type: ignore[no-untyped-def]
    crash = CrashPlan()
    j = make(crash)
    crash.arm(_crash.JOURNAL_INSIDE_RECORD)
    with pytest.raises(SimulatedCrash):
        j.commit([receipt(1), receipt(2)])
    j.close()
    again = make(crash)
    assert again.records() == []
    assert [r.outcome for r in again.commit([receipt(1), receipt(2)])] == [RECORDED, RECORDED]


def test_crash_after_record_keeps_the_whole_dispatch(make) -> None:  # type: ignore[no-untyped-def]
    crash = CrashPlan()
    j = make(crash)
    crash.arm(_crash.JOURNAL_AFTER_RECORD)
    with pytest.raises(SimulatedCrash):
        j.commit([receipt(1), receipt(2)])
    j.close()
    assert len(make(crash).records()) == 2


def test_a_batch_with_one_recorded_dispatch_merges_each_and_records_the_rest(make) -> None:  # type: ignore[no-untyped-def]
    j = make()
    j.commit([receipt(2, digest="a")])
    results = j.commit([receipt(1), receipt(2, digest="b"), receipt(3, status="failed")])
    assert [(r.dispatch_id[-1], r.outcome) for r in results] == [("1", RECORDED), ("2", CONFLICT), ("3", RECORDED)]
    assert [r["dispatch_id"][-1] for r in j.records()] == ["2", "1", "3"]
    assert one(j, 2)["result_digest"] == "sha256:" + "a" * 64


def test_records_keep_first_record_order(make) -> None:  # type: ignore[no-untyped-def]
    j = make()
    j.commit([receipt(3, status="failed")])
    j.commit([receipt(1)])
    j.commit([receipt(3)])
    assert [r["dispatch_id"][-1] for r in j.records()] == ["3", "1"]


def test_sqlite_enforces_dispatch_uniqueness_itself(tmp_path: Path) -> None:
    j = SQLiteJournal(tmp_path / "j.sqlite3")
    j.commit([receipt(1)])
    j.close()
    db = sqlite3.connect(tmp_path / "j.sqlite3")
    with pytest.raises(sqlite3.IntegrityError):
        db.execute(
            "INSERT INTO sidecar_receipts (dispatch_id, status, receipt, checksum) VALUES (?, 'x', x'00', 'x')",
            (receipt(1)["dispatch_id"],),
        )
    db.close()


def test_a_journal_made_with_the_older_autoincrement_key_still_records_in_order(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "j.sqlite3")
    db.execute(
        "CREATE TABLE sidecar_receipts (seq INTEGER PRIMARY KEY AUTOINCREMENT, dispatch_id TEXT NOT NULL UNIQUE, "
        "status TEXT NOT NULL, receipt BLOB NOT NULL, checksum TEXT NOT NULL)"
    )
    db.close()
    j = SQLiteJournal(tmp_path / "j.sqlite3")
    j.commit([receipt(2)])
    j.commit([receipt(1), receipt(2, digest="b")])
    assert [r["dispatch_id"][-1] for r in j.records()] == ["2", "1"]
    j.close()


def test_sqlite_is_wal_and_durable(tmp_path: Path) -> None:
    j = SQLiteJournal(tmp_path / "j.sqlite3")
    assert j._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert j._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    j.close()


def test_one_durable_commit_per_dispatch(tmp_path: Path) -> None:
    j = SQLiteJournal(tmp_path / "j.sqlite3")
    commits: list[str] = []
    j._db.set_trace_callback(lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None)
    j.commit([receipt(n) for n in range(8)])
    assert commits == ["COMMIT"]
    j.close()


def test_corrupted_record_is_reported_not_rebuilt(tmp_path: Path) -> None:
    j = SQLiteJournal(tmp_path / "j.sqlite3")
    j.commit([receipt(1)])
    j._db.execute("UPDATE sidecar_receipts SET receipt = replace(receipt, 'proposed', 'failedxx')")
    with pytest.raises(JournalError) as info:
        j.records()
    assert info.value.code == "journal_record_corrupt"
    with pytest.raises(JournalError):
        one(j, 1)
    j.close()


def test_unwritable_journal_is_a_journal_error(tmp_path: Path) -> None:
    j = SQLiteJournal(tmp_path / "j.sqlite3")
    j._db.execute("PRAGMA query_only=1")
    with pytest.raises(JournalError) as info:
        j.commit([receipt(1)])
    assert info.value.code == "journal_write_failed"
    j.close()


def _race(path: str, digest: str, barrier: Any, out: Any) -> None:
    j = SQLiteJournal(path)
    barrier.wait()
    [res] = j.commit([receipt(1, digest=digest)])
    out.put(res.outcome)
    j.close()


def test_two_processes_record_one_dispatch_exactly_once(tmp_path: Path) -> None:
    path = str(tmp_path / "j.sqlite3")
    SQLiteJournal(path).close()
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(path, d, barrier, out)) for d in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)  # a hang guard: a spawned interpreter starts slowly on a loaded machine
        assert p.exitcode == 0
    outcomes = sorted([out.get(timeout=60), out.get(timeout=60)])
    assert outcomes == [CONFLICT, RECORDED]
    j = SQLiteJournal(path)
    assert len(j.records()) == 1
    j.close()


def test_a_record_tampered_in_storage_still_parses_and_is_reported_corrupt(make) -> None:  # type: ignore[no-untyped-def]
    j = make()
    j.commit([{**receipt(1), "intents": [{"payload": {"note_ref": "note_1"}}]}])
    j.tamper_last_record()
    with pytest.raises(JournalError) as info:
        one(j, 1)
    assert info.value.code == "journal_record_corrupt"


def test_tampering_changes_one_payload_string_and_keeps_the_json_well_formed() -> None:
    import json

    from pwh._core.journal import TAMPERED_VALUE, tampered

    blob = json.dumps({"intents": [{"payload": {"n": 1, "note_ref": "note_1"}}]}).encode()
    changed = tampered(blob)
    assert changed is not None and json.loads(changed)["intents"][0]["payload"] == {"n": 1, "note_ref": TAMPERED_VALUE}
    for nothing in (b"not json", json.dumps({"intents": []}).encode(), json.dumps({"intents": [{"payload": {"n": 1}}]}).encode()):
        assert tampered(nothing) is None
