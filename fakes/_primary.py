"""The primary Turn's own durable store: writebacks, quota spends, Todo state.

It is deliberately separate from the sidecar journal (another SQLite file): nothing the
dispatcher does can reach it except through :class:`PrimaryHandle`, which exists so the harness
can *catch* a badly wired implementation using it.
"""

from __future__ import annotations

import itertools
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from pwh import canonical_bytes
from pwh._core.canonical import dumps_plain
from pwh._suts.reference import sqlite_synchronous

from ._errors import FakeRejected

_TABLES = """
CREATE TABLE IF NOT EXISTS writebacks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    turn_key TEXT NOT NULL UNIQUE,
    receipt_id TEXT NOT NULL UNIQUE,
    receipt TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS spends (
    receipt_id TEXT PRIMARY KEY,
    spend TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS todos (
    todo_id TEXT PRIMARY KEY,
    state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

WRITEBACK_FAILED = "primary_writeback_failed"

_GENERATIONS = itertools.count(1)  # one per store opened in this process: no two stores' states share a key


class WritebackFailed(FakeRejected):
    """The primary writeback did not commit: nothing was written."""


class PrimaryStore:
    """SQLite, WAL, as durable as the sidecar journal (the same ``synchronous`` setting)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.in_memory = str(path) == ":memory:"
        kept = _memory_pool().pop() if self.in_memory and _memory_pool() else None
        self.db = kept if kept is not None else sqlite3.connect(path, isolation_level=None)
        self.db.execute(f"PRAGMA synchronous={sqlite_synchronous()}")
        if kept is None:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.executescript(_TABLES)
        self._generation = next(_GENERATIONS)
        self._rollbacks = 0
        self._snapshot: tuple[tuple[int, int, int, int], bytes] | None = None
        self._canonical: dict[str, str] = {}  # a row's text -> the canonical text of its JSON (snapshot)

    def close(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
        self._rollbacks += 1
        if not (self.in_memory and _keep_for_reuse(self.db)):
            self.db.close()

    # -- writes -----------------------------------------------------------------------------

    def begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        if self.db.in_transaction:
            self._rollbacks += 1
            self.db.execute("ROLLBACK")

    def insert_writeback(self, turn_key: str, receipt: dict[str, Any], todo_state: str) -> None:
        self.db.execute(
            "INSERT INTO writebacks (turn_key, receipt_id, receipt) VALUES (?, ?, ?)",
            (turn_key, receipt["receipt_id"], canonical_bytes(receipt).decode("utf-8")),
        )
        self.db.execute(
            "INSERT INTO todos (todo_id, state) VALUES (?, ?) ON CONFLICT(todo_id) DO UPDATE SET state=excluded.state",
            (receipt["todo_id"], todo_state),
        )

    def set_counter(self, name: str, value: Any) -> None:
        self.db.execute(
            "INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value=excluded.value",
            (name, json.dumps(value)),
        )

    def counter(self, name: str, default: Any) -> Any:
        row = self.db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()
        return json.loads(row[0]) if row else default

    def record_spend(self, spend: dict[str, Any]) -> bool:
        """Insert a spend once per receipt; ``False`` when it was already there (a replay)."""
        cur = self.db.execute(
            "INSERT INTO spends (receipt_id, spend) VALUES (?, ?) ON CONFLICT(receipt_id) DO NOTHING",
            (spend["receipt_id"], canonical_bytes(spend).decode("utf-8")),
        )
        return cur.rowcount == 1

    # -- reads ------------------------------------------------------------------------------

    def writeback_by_turn(self, turn_key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT receipt FROM writebacks WHERE turn_key = ?", (turn_key,)).fetchone()
        return json.loads(row[0]) if row else None

    def receipt(self, receipt_id: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT receipt FROM writebacks WHERE receipt_id = ?", (receipt_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def receipts(self) -> list[dict[str, Any]]:
        return [json.loads(r[0]) for r in self.db.execute("SELECT receipt FROM writebacks ORDER BY seq")]

    def receipt_ids_read_apart(self) -> list[str]:
        """The committed receipt ids, read through a connection of the caller's own (any thread or
        forked process may call this, where the store's own connection may not be used).

        A store in memory has no file another connection could open: only this connection sees
        it, so its callers are in this thread (the models' simulation, whose providers run here)
        and call between its transactions, where this connection reads what is committed."""
        if self.in_memory:
            if self.db.in_transaction:
                raise RuntimeError("an in-memory primary store cannot be read apart inside its own transaction")
            return [r[0] for r in self.db.execute("SELECT receipt_id FROM writebacks ORDER BY seq")]
        db = sqlite3.connect(f"{Path(self.path).resolve().as_uri()}?mode=ro", uri=True)
        try:
            return [r[0] for r in db.execute("SELECT receipt_id FROM writebacks ORDER BY seq")]
        finally:
            db.close()

    def spend(self, receipt_id: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT spend FROM spends WHERE receipt_id = ?", (receipt_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def spends(self) -> list[dict[str, Any]]:
        return [json.loads(r[0]) for r in self.db.execute("SELECT spend FROM spends ORDER BY receipt_id")]

    def todos(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT todo_id, state FROM todos ORDER BY todo_id").fetchall())

    def state_key(self) -> tuple[int, int, int, int]:
        """Equal keys mean the store has not changed in between: which store this is (one per open),
        the rows this connection changed (SQLite's ``total_changes``), its rollbacks, and the
        commits of other connections (``PRAGMA data_version``: a real-crash child writes this file)."""
        # An in-memory database has no other connection that could commit to it: its version stays.
        version = 0 if self.in_memory else self.db.execute("PRAGMA data_version").fetchone()[0]
        return (self._generation, self.db.total_changes, self._rollbacks, version)

    def snapshot(self) -> bytes:
        """Every primary fact, canonically: equal bytes mean an equal primary state.

        Taken again only when the store may have changed since the last one (:meth:`state_key`).
        The bytes are those of ``dumps_plain({"writebacks": receipts, "spends": spends, "todos":
        todos})``, put together from the rows' own text: each row's text is read as JSON and
        encoded canonically once (:meth:`_canonical_text`, the text itself when this store wrote
        it, which it does canonically), not on every snapshot.
        """
        key = self.state_key()
        if self._snapshot is None or self._snapshot[0] != key:
            canonical = self._canonical_text
            writebacks = ",".join(canonical(r[0]) for r in self.db.execute("SELECT receipt FROM writebacks ORDER BY seq"))
            spends = ",".join(canonical(r[0]) for r in self.db.execute("SELECT spend FROM spends ORDER BY receipt_id"))
            todos = dumps_plain(self.todos()).decode("utf-8")
            # the keys sorted, as dumps_plain sorts them: spends, todos, writebacks
            text = f'{{"spends":[{spends}],"todos":{todos},"writebacks":[{writebacks}]}}'
            self._snapshot = (key, text.encode("utf-8"))
        return self._snapshot[1]

    def _canonical_text(self, row: str) -> str:
        """The canonical text of the JSON a row holds (``dumps_plain(json.loads(row))``), kept per text."""
        known = self._canonical.get(row)
        if known is None:
            known = self._canonical[row] = dumps_plain(json.loads(row)).decode("utf-8")
        return known

    # -- what a badly wired dispatcher could reach -------------------------------------------

    def delete_writeback(self, receipt_id: str) -> None:
        self.db.execute("DELETE FROM writebacks WHERE receipt_id = ?", (receipt_id,))

    def replace_receipt(self, receipt: dict[str, Any]) -> None:
        self.db.execute(
            "UPDATE writebacks SET receipt = ? WHERE receipt_id = ?",
            (canonical_bytes(receipt).decode("utf-8"), receipt["receipt_id"]),
        )


# In-memory databases emptied at close and handed to the next in-memory store of the same thread
# and process (the models make two per example): creating the tables is most of what opening one
# costs. An emptied database is a new one for every read and write a store makes: the same tables,
# no rows, the AUTOINCREMENT counter back at zero (sqlite_sequence emptied). One that is not
# exactly so (another table, a trigger, a row factory) is closed, not kept.
_POOL_MAX = 4
_RESET = "DELETE FROM writebacks; DELETE FROM spends; DELETE FROM todos; DELETE FROM counters; DELETE FROM sqlite_sequence;"
_pools = threading.local()


def _memory_pool() -> list[sqlite3.Connection]:
    """This thread's kept databases (none after a fork: a connection is not carried into a child)."""
    pool = getattr(_pools, "kept", None)
    if pool is None or pool[0] != os.getpid():
        pool = _pools.kept = (os.getpid(), [])
    return pool[1]


def _fresh_schema() -> tuple[Any, ...]:
    global _FRESH_SCHEMA
    if _FRESH_SCHEMA is None:
        db = sqlite3.connect(":memory:", isolation_level=None)
        try:
            db.executescript(_TABLES)
            _FRESH_SCHEMA = _schema_of(db)
        finally:
            db.close()
    return _FRESH_SCHEMA


_FRESH_SCHEMA: tuple[Any, ...] | None = None


def _schema_of(db: sqlite3.Connection) -> tuple[Any, ...]:
    return tuple(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"))


def _keep_for_reuse(db: sqlite3.Connection) -> bool:
    """Empty ``db`` (an in-memory store's, out of any transaction) and keep it for the next one;
    False (the caller closes it) when the pool is full or ``db`` is not exactly a store's."""
    pool = _memory_pool()
    if len(pool) >= _POOL_MAX or db.row_factory is not None or db.text_factory is not str or db.isolation_level is not None:
        return False
    try:
        db.executescript(_RESET)
        if db.in_transaction or _schema_of(db) != _fresh_schema():
            return False
        if any(db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() for table in ("writebacks", "spends", "todos", "counters")):
            return False
    except sqlite3.Error:
        return False
    pool.append(db)
    return True


class PrimaryHandle:
    """The primary Turn within reach of the dispatcher (the SUT seam's ``PrimaryAccess``).

    Every use is counted in ``uses``: a conforming implementation leaves it empty.
    """

    def __init__(self, store: PrimaryStore, receipt_id: str) -> None:
        self._store = store
        self._receipt_id = receipt_id
        self.uses: list[str] = []
        self.spend_blocked = False

    def rollback_writeback(self) -> None:
        self.uses.append("rollback_writeback")
        self._store.delete_writeback(self._receipt_id)

    def amend_receipt(self, field: str, value: Any) -> None:
        self.uses.append("amend_receipt")
        receipt = self._store.receipt(self._receipt_id)
        if receipt is not None:
            receipt[field] = value
            self._store.replace_receipt(receipt)

    def block_spend(self) -> None:
        self.uses.append("block_spend")
        self.spend_blocked = True
