"""Wrong wirings of the writeback boundary: the reference dispatcher, correct in itself, joined to
the primary path at the wrong moment. Each adapter offers its own ``writeback_boundary()`` (the
fake orchestrator with the dispatch moved), so only the writeback scenarios reach the wrong
wiring; each must fail the row that names the rule it breaks."""

from __future__ import annotations

from typing import Any

from fakes._orchestrator import FakeOrchestrator
from fakes._primary import WritebackFailed
from fakes._writeback import ReferenceWriteback
from pwh import ReferenceSUT
from pwh._suts.mutants._registry import mutant


def _watch_inserts(orch: FakeOrchestrator, then: Any) -> Any:
    """Make the primary store call ``then(receipt)`` right after each writeback row is inserted,
    inside the primary transaction (before it commits); returns the undo."""
    store = orch.store
    insert = store.insert_writeback

    def insert_and_then(turn_key: str, receipt: dict[str, Any], todo_state: str) -> None:
        insert(turn_key, receipt, todo_state)
        then(receipt)

    setattr(store, "insert_writeback", insert_and_then)  # noqa: B010  (an instance attribute: undone below)
    return lambda: store.__dict__.pop("insert_writeback", None)


class _DispatchesBeforeCommit(FakeOrchestrator):
    """Hands the receipt to the dispatcher inside the primary transaction, before it commits: a
    writeback that then fails has already been dispatched."""

    def _write_back(self, *args: Any, **kw: Any) -> dict[str, Any]:
        undo = _watch_inserts(self, lambda receipt: self.sut.dispatch(dict(receipt)))
        try:
            return super()._write_back(*args, **kw)
        finally:
            undo()


class _DispatchesAfterFailedWriteback(FakeOrchestrator):
    """Dispatches the receipt it meant to commit even when the primary writeback failed."""

    def _write_back(self, *args: Any, **kw: Any) -> dict[str, Any]:
        meant: list[dict[str, Any]] = []
        undo = _watch_inserts(self, meant.append)
        try:
            return super()._write_back(*args, **kw)
        except WritebackFailed:
            for receipt in meant:
                self.sut.dispatch(dict(receipt))
            raise
        finally:
            undo()


class _OwnDispatcherBoundary(ReferenceWriteback):
    """A boundary with a dispatcher of its own (a fresh one per boundary), closed with it."""

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.sut.close()


def _miswired(name: str, orchestrator: type[FakeOrchestrator]) -> type[ReferenceSUT]:
    def writeback_boundary(self: ReferenceSUT) -> ReferenceWriteback:
        return _OwnDispatcherBoundary(ReferenceSUT(), orchestrator_class=orchestrator)

    return type(f"Broken_{name}", (ReferenceSUT,), {"name": f"broken:{name}", "writeback_boundary": writeback_boundary})


@mutant(
    "dispatches_before_primary_commit",
    "M04",
    "§5.1/§12 M04: the receipt is dispatched inside the primary transaction, before it commits; a writeback that then fails was already handed to every hook",
    caught_by=("matrix",),
)
def dispatches_before_primary_commit(**kw: Any) -> ReferenceSUT:
    return _miswired("dispatches_before_primary_commit", _DispatchesBeforeCommit)(**kw)


@mutant(
    "dispatches_after_failed_writeback",
    "M03",
    "§12 M03: the receipt of a primary writeback that failed is dispatched all the same",
    caught_by=("matrix",),
)
def dispatches_after_failed_writeback(**kw: Any) -> ReferenceSUT:
    return _miswired("dispatches_after_failed_writeback", _DispatchesAfterFailedWriteback)(**kw)
