"""The bench's workloads: what each one times, and everything it needs to run.

A workload runs in a child process of its own (``python -m pwh._bench WORKLOAD N DIR``, see
:mod:`pwh._bench.__main__`), so this module is what the child imports and nothing of the parent
(planning, ratios, the table) comes with it. Everything a workload dispatches is synthetic and built
here from :mod:`pwh._harness.examples`, because the library may not use the fakes. The durable
workloads use SQLite in WAL mode with ``synchronous=FULL`` on the disk the parent chose, the same
disk and settings as the commit floor they are compared with.

:data:`BY_NAME` is the one registry of workloads by name, and :data:`COUNTERPARTS` the one table
of which dispatch workload is compared with which skeleton and which LoopX workload.
"""

from __future__ import annotations

import resource
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from pwh._core.canonical import canonical_bytes, dumps_plain
from pwh._core.contracts import SIDECAR_SCHEMA_VERSION
from pwh._core.identity import dispatch_id, plain_dispatch_id
from pwh._core.journal import SQLiteJournal, checksum
from pwh._core.process_runner import ProcessRunner
from pwh._core.profile import Profile
from pwh._core.runner import ThreadRunner
from pwh._harness.examples import example_intent, example_receipt, example_registration, example_result
from pwh._suts.reference import ReferenceSUT

KIND = "bench.follow_up"
PAYLOAD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ref": {"type": "string", "pattern": "^[a-z0-9_]{1,64}(?!\\n)$"}},
    "required": ["ref"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Workload:
    name: str
    kind: str  # dispatch | skeleton | replay | prefilled | floor | handoff | loopx | loopx_command
    hooks: int = 1
    journal: str = "sqlite"
    prefill: int = 0
    runner: str = "process"  # the default (a forked worker process) or "thread"


# -- the registry ---------------------------------------------------------------------------------

# What every ``pwh bench`` runs, in this order.
WORKLOADS: tuple[Workload, ...] = (
    Workload("floor_sqlite_commit", "floor"),
    Workload("handoff_after_idle", "handoff"),
    Workload("thread_handoff_after_idle", "handoff", runner="thread"),
    Workload("dispatch_1_hook_durable", "dispatch", 1),
    Workload("skeleton_1_hook_durable", "skeleton", 1),
    Workload("thread_dispatch_1_hook_durable", "dispatch", 1, runner="thread"),
    Workload("dispatch_8_hooks_durable", "dispatch", 8),
    Workload("skeleton_8_hooks_durable", "skeleton", 8),
    Workload("dispatch_32_hooks_durable", "dispatch", 32),
    Workload("dispatch_1_hook_memory", "dispatch", 1, "memory"),
    Workload("dispatch_8_hooks_memory", "dispatch", 8, "memory"),
    Workload("dispatch_32_hooks_memory", "dispatch", 32, "memory"),
    Workload("replay_8_hooks_durable", "replay", 8),
    Workload("prefilled_1e3_durable", "prefilled", 1, prefill=10**3),
    Workload("prefilled_1e5_durable", "prefilled", 1, prefill=10**5),
    Workload("prefilled_1e6_durable", "prefilled", 1, prefill=10**6),
)
# Only with ``--compare loopx`` (they need the loopx extra).
LOOPX_WORKLOADS: tuple[Workload, ...] = (
    Workload("loopx_1_hook_durable", "loopx", 1),
    Workload("loopx_8_hooks_durable", "loopx", 8),
)
# Only with ``--compare loopx``: one LoopX primary command (``todo complete``, Turn-bound, with one
# test hook installed) through the writeback boundary's warm interpreter, per call.
LOOPX_COMMAND = Workload("loopx_warm_command", "loopx_command", 1)
BY_NAME: dict[str, Workload] = {w.name: w for w in (*WORKLOADS, *LOOPX_WORKLOADS, LOOPX_COMMAND)}


class Counterparts(NamedTuple):
    """A dispatch workload and what it is compared with: the dispatch minus its check-free
    skeleton is what the RFC's checks cost, and with ``--compare loopx`` LoopX's same workload
    runs right after the skeleton, so that the three run back to back (the machine drifts)."""

    dispatch: str
    skeleton: str
    loopx: str


COUNTERPARTS: tuple[Counterparts, ...] = (
    Counterparts("dispatch_1_hook_durable", "skeleton_1_hook_durable", "loopx_1_hook_durable"),
    Counterparts("dispatch_8_hooks_durable", "skeleton_8_hooks_durable", "loopx_8_hooks_durable"),
)


# -- synthetic packets (core pwh may not use the fakes) ----------------------------------------


def registration(hook_id: str) -> dict[str, Any]:
    return example_registration(
        hook_id, intent_kinds=[KIND], budget={"max_invocations_per_dispatch": 1, "max_intents_per_dispatch": 1, "timeout_ms": 1000}
    )


def producer(hook_input: Mapping[str, Any]) -> dict[str, Any]:
    payload = {"ref": "r_" + hook_input["source"]["receipt_id"][-12:]}
    return example_result(
        "proposed",
        example_intent(hook_input["dispatch_id"], hook_input["hook_id"], payload, kind=KIND, capability_id=hook_input["capability_id"]),
    )


def receipt(n: int) -> dict[str, Any]:
    return example_receipt(n, width=12)


def make_sut(hooks: int, journal: str, workdir: Path, runner: str = "process") -> ReferenceSUT:
    sut = ReferenceSUT(journal=journal, workdir=workdir, synchronous="FULL")
    if runner == "thread":
        sut.dispatcher.runner.close()
        sut.dispatcher.runner = ThreadRunner()
    elif not isinstance(sut.dispatcher.runner, ProcessRunner):
        raise RuntimeError("the default runner is not the process runner here (PWH_RUNNER or no fork)")
    sut.register_intent_kind(KIND, PAYLOAD_SCHEMA)
    sut.set_profile(Profile(phase_enabled=True, max_hooks_per_dispatch=64, max_intents_per_dispatch=64))
    for h in range(hooks):
        assert sut.install(registration(f"bench{h:02d}.hook"), producer) == []
    return sut


# -- the workloads (run in a child) ---------------------------------------------------------------


def _timed(calls: int, step: Callable[[int], Any]) -> list[float]:
    out = []
    for i in range(calls):
        started = time.perf_counter()
        step(i)
        out.append(time.perf_counter() - started)
    return out


def run_workload(w: Workload, n: int, workdir: Path) -> dict[str, Any]:
    """``n`` timed calls of ``w`` in this process, and this process's peak memory: what the child
    prints for the parent to pool."""
    workdir.mkdir(parents=True, exist_ok=True)
    if w.kind == "floor":
        times = _floor(n, workdir)
    elif w.kind == "dispatch":
        sut = make_sut(w.hooks, w.journal, workdir, w.runner)
        sut.dispatch(receipt(10**9))  # warm: compile checks, start the worker
        times = _timed(n, lambda i: sut.dispatch(receipt(i)))
        sut.close()
    elif w.kind == "replay":
        sut = make_sut(w.hooks, w.journal, workdir)
        for i in range(n):
            sut.dispatch(receipt(i))
        times = _timed(n, lambda i: sut.dispatch(receipt(i)))
        sut.close()
    elif w.kind == "skeleton":
        times = _skeleton(w.hooks, n, workdir)
    elif w.kind == "handoff":
        times = _handoff(n, ThreadRunner() if w.runner == "thread" else ProcessRunner())
    elif w.kind == "loopx":
        times = _loopx_times(w, n, workdir)
    elif w.kind == "loopx_command":
        times = _loopx_command_times(n)
    elif w.kind == "prefilled":
        prefill(workdir / "sidecar.sqlite3", w.prefill)
        sut = make_sut(1, "sqlite", workdir)
        sut.dispatch(receipt(10**9))
        times = _timed(n, lambda i: sut.dispatch(receipt(10**8 + i)))
        sut.close()
    else:
        raise ValueError(w.kind)
    return {"times": times, "peak_rss_kib": peak_rss_kib()}


def peak_rss_kib() -> int:
    """This process's own peak resident set. Linux's ``VmHWM`` belongs to the current program
    image; ``ru_maxrss`` would also count the parent's size at fork (the kernel carries it
    across exec), which made every workload report the same figure."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _floor(n: int, workdir: Path) -> list[float]:
    """Raw SQLite: one durable single-row commit per call, WAL + synchronous=FULL, same disk."""
    db = sqlite3.connect(workdir / "floor.sqlite3", isolation_level=None)
    db.execute("PRAGMA synchronous=FULL")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB)")
    blob = b"x" * 600

    def commit(i: int) -> None:
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO t VALUES (?, ?)", (f"k{i}", blob))
        db.execute("COMMIT")

    times = _timed(n, commit)
    db.close()
    return times


def _handoff(n: int, runner: ThreadRunner | ProcessRunner) -> list[float]:
    """One no-op provider call through a real-timeout runner, after 1 ms idle (about as long as
    the worker sleeps between two durable dispatches): what isolating providers costs each
    dispatch here, alone: for the process runner, the call written to the sleeping worker
    process, its answer read back and decoded; for the thread runner, a sleeping thread woken and
    the dispatcher woken back."""
    out = []
    try:
        for i in range(n):
            time.sleep(0.001)
            started = time.perf_counter()
            batch = runner.start([(_same, i, 1000, 65536)])
            batch.next_verdict()
            out.append(time.perf_counter() - started)
            batch.close()
    finally:
        runner.close()
    return out


def _same(value: Any) -> Any:
    return value


def skeleton_dispatcher(hooks: int, workdir: Path) -> tuple[Callable[[Mapping[str, Any]], None], Callable[[], None]]:
    """This design with none of the RFC's checks, as ``(dispatch, close)``: the same providers in
    the same kind of worker process, the canonical bytes and digest of each answer, and the same sidecar
    records in the same durable journal, one commit per dispatch; no source or result validation,
    no boundary scan, no intent id re-derived, no immutable copy of the input, no replay read.
    Beside the real dispatch it says what the checks cost, and how near a target any dispatcher
    of this shape (process-isolated providers, one durable commit) could come without them."""
    journal = SQLiteJournal(workdir / "sidecar.sqlite3", synchronous="FULL")
    runner = ProcessRunner()
    regs = [registration(f"bench{h:02d}.hook") for h in range(hooks)]

    def dispatch(source: Mapping[str, Any]) -> None:
        rid, event = source["receipt_id"], source["event_kind"]
        inputs = [
            {
                "dispatch_id": plain_dispatch_id(rid, reg["hook_id"], reg["schema_version"], event),
                "hook_id": reg["hook_id"],
                "capability_id": reg["capability_id"],
                "source": source,
            }
            for reg in regs
        ]
        batch = runner.start(
            [
                (producer, given, reg["budget"]["timeout_ms"], reg["budget"]["max_result_bytes"])
                for given, reg in zip(inputs, regs, strict=True)
            ]
        )
        records = []
        try:
            for given, reg in zip(inputs, regs, strict=True):
                answer = batch.next_verdict().value
                records.append(
                    {
                        "schema_version": SIDECAR_SCHEMA_VERSION,
                        "dispatch_id": given["dispatch_id"],
                        "hook_id": reg["hook_id"],
                        "capability_id": reg["capability_id"],
                        "source_receipt_id": rid,
                        "event_kind": event,
                        "registration_schema_version": reg["schema_version"],
                        "status": answer["status"],
                        "failure_code": None,
                        "intents": answer["intents"],
                        "result_digest": checksum(dumps_plain(answer)),
                        "attempts": 1,
                    }
                )
        finally:
            batch.close()
        journal.commit(records)

    def close() -> None:
        runner.close()
        journal.close()

    return dispatch, close


def _skeleton(hooks: int, n: int, workdir: Path) -> list[float]:
    dispatch, close = skeleton_dispatcher(hooks, workdir)
    try:
        dispatch(receipt(10**9))  # warm, as the dispatch workloads are
        return _timed(n, lambda i: dispatch(receipt(i)))
    finally:
        close()


def prefill(path: Path, count: int) -> None:
    """``count`` valid sidecar records, written straight into the journal's table."""
    SQLiteJournal(path).close()  # create the schema
    template: dict[str, Any] = {
        "schema_version": SIDECAR_SCHEMA_VERSION,
        "dispatch_id": "@@",
        "hook_id": "prefill.hook",
        "capability_id": "prefill",
        "source_receipt_id": "receipt_prefill",
        "event_kind": "todo_completed",
        "registration_schema_version": "loopx_post_writeback_capability_hook_registration_v0",
        "status": "not_applicable",
        "failure_code": None,
        "intents": [],
        "result_digest": "sha256:" + "0" * 64,
        "attempts": 1,
    }
    head, tail = canonical_bytes(template).split(b"@@")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous=OFF")
    db.execute("BEGIN")

    def rows() -> Iterator[tuple[str, str, bytes, str]]:
        for i in range(count):
            did = dispatch_id(f"receipt_prefill_{i}", "prefill.hook", "v0", "todo_completed")
            blob = head + did.encode() + tail
            yield (did, "not_applicable", blob, checksum(blob))

    db.executemany("INSERT INTO sidecar_receipts (dispatch_id, status, receipt, checksum) VALUES (?, ?, ?, ?)", rows())
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def _loopx_times(w: Workload, n: int, workdir: Path) -> list[float]:
    """The same hooks and receipts through the ``loopx`` adapter, persisting its sidecar
    receipts (equal durability), with LoopX's request scope pinned around the batch. The
    adapter is imported here, in the child, so that a run without the loopx extra never loads it."""
    from pwh._suts.seam import load_sut

    sut = load_sut("loopx")
    try:
        sut.register_intent_kind(KIND, PAYLOAD_SCHEMA)
        sut.set_profile(Profile(phase_enabled=True))  # LoopX has no per-dispatch ceilings to widen
        for h in range(w.hooks):
            assert sut.install(registration(f"bench{h:02d}.hook"), producer) == []
        from pwh._suts.loopx.runtime import RUNTIME

        with RUNTIME.request_scope():  # LoopX's fastest supported mode: one request scope pinned
            sut.dispatch(receipt(10**9))
            return _timed(n, lambda i: sut.dispatch(receipt(i)))
    finally:
        sut.close()


def _loopx_command_times(n: int) -> list[float]:
    """``n`` Todo completions through LoopX's own ``todo complete`` (each after the
    ``quota should-run`` that opens its Turn), timed per ``todo complete`` command as the writeback
    boundary's warm interpreter serves it (a forked child of an interpreter that has imported
    LoopX once). A first completion, not timed, pays the server's start."""
    from pwh._suts.loopx.writeback.boundary import LoopxWritebackBoundary

    boundary = LoopxWritebackBoundary()
    try:
        boundary.prepare(todos=n + 1, phase_enabled=True, report_capability=False)
        boundary.register_intent_kind(KIND, PAYLOAD_SCHEMA)
        assert boundary.install(registration("bench00.hook"), producer) == []
        boundary.commit_completion(1)
        boundary.command_seconds.clear()
        for todo in range(2, n + 2):
            boundary.commit_completion(todo)
        return [seconds for label, seconds in boundary.command_seconds if label == "todo complete"]
    finally:
        boundary.close()


# -- the process boundary, A/B in one process ----------------------------------------------------


def isolation_ab(journal: str = "memory", blocks: int = 12, per_block: int = 50) -> dict[str, float]:
    """What the process boundary costs a 1-hook dispatch, measured in one process: the same
    dispatch with the process runner and the thread runner, alternating blocks, medians in ms
    (``python -m pwh._bench ab [memory|sqlite]``). Alternating in one process keeps the machine's
    drift out of the difference, which separate child processes cannot."""
    suts = {r: make_sut(1, journal, Path(tempfile.mkdtemp(prefix="pwh-ab-")), r) for r in ("process", "thread")}
    times: dict[str, list[float]] = {r: [] for r in suts}
    try:
        for sut in suts.values():
            sut.dispatch(receipt(10**9))
        n = 0
        for _ in range(blocks):
            for runner, sut in suts.items():
                for _ in range(per_block):
                    n += 1
                    started = time.perf_counter()
                    sut.dispatch(receipt(n))
                    times[runner].append(time.perf_counter() - started)
    finally:
        for sut in suts.values():
            sut.close()
            shutil.rmtree(sut.workdir, ignore_errors=True)
    out = {f"{r}_median_ms": round(statistics.median(ts) * 1000, 4) for r, ts in times.items()}
    out["boundary_cost_ms"] = round(out["process_median_ms"] - out["thread_median_ms"], 4)
    return out
