"""``pwh bench``: what a dispatch costs, next to the floor it cannot beat and (optionally) LoopX.

Each workload runs in its own child process (``python -m pwh._bench.bench WORKLOAD ...``), so its peak
memory is its own and no workload warms another's caches. Times are wall-clock per dispatch; the
durable workloads use SQLite in WAL mode with ``synchronous=FULL`` on the disk under ``--dir``,
the same disk and settings as the commit floor measured in the same run.
"""

from __future__ import annotations

import json
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pwh._core.canonical import canonical_bytes, dumps_plain
from pwh._core.contracts import SIDECAR_SCHEMA_VERSION
from pwh._harness.examples import example_intent, example_receipt, example_registration, example_result
from pwh._core.identity import dispatch_id, plain_dispatch_id
from pwh._core.journal import SQLiteJournal, checksum
from pwh._core.process_runner import ProcessRunner
from pwh._core.profile import Profile
from pwh._suts.reference import ReferenceSUT
from pwh._core.runner import ThreadRunner

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
    kind: str  # dispatch | skeleton | replay | prefilled | floor | handoff | loopx
    hooks: int = 1
    journal: str = "sqlite"
    prefill: int = 0
    runner: str = "process"  # the default (a forked worker process) or "thread"


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
BY_NAME = {w.name: w for w in WORKLOADS}


# -- synthetic packets (core pwh may not use the fakes) ----------------------------------------


def registration(hook_id: str) -> dict[str, Any]:
    return example_registration(hook_id, intent_kinds=[KIND], budget={"max_invocations_per_dispatch": 1, "max_intents_per_dispatch": 1, "timeout_ms": 1000})


def producer(hook_input: Mapping[str, Any]) -> dict[str, Any]:
    payload = {"ref": "r_" + hook_input["source"]["receipt_id"][-12:]}
    return example_result("proposed", example_intent(
        hook_input["dispatch_id"], hook_input["hook_id"], payload, kind=KIND, capability_id=hook_input["capability_id"]))


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


# -- workloads (run in a child) -----------------------------------------------------------------


def _timed(calls: int, step: Callable[[int], Any]) -> list[float]:
    out = []
    for i in range(calls):
        started = time.perf_counter()
        step(i)
        out.append(time.perf_counter() - started)
    return out


def run_workload(w: Workload, n: int, workdir: Path) -> dict[str, Any]:
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


def _handoff(n: int, runner: Any) -> list[float]:
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


def skeleton_dispatcher(hooks: int, workdir: Path) -> tuple[Callable[[Mapping[str, Any]], None], Callable[[], None]]:
    """This design with none of the RFC's checks, as ``(dispatch, close)``: the same providers on
    the same worker thread, the canonical bytes and digest of each answer, and the same sidecar
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
                "hook_id": reg["hook_id"], "capability_id": reg["capability_id"], "source": source,
            }
            for reg in regs
        ]
        batch = runner.start([(producer, given, reg["budget"]["timeout_ms"], reg["budget"]["max_result_bytes"]) for given, reg in zip(inputs, regs)])
        records = []
        try:
            for given, reg in zip(inputs, regs):
                answer = batch.next_verdict().value
                records.append({
                    "schema_version": SIDECAR_SCHEMA_VERSION, "dispatch_id": given["dispatch_id"],
                    "hook_id": reg["hook_id"], "capability_id": reg["capability_id"], "source_receipt_id": rid,
                    "event_kind": event, "registration_schema_version": reg["schema_version"],
                    "status": answer["status"], "failure_code": None, "intents": answer["intents"],
                    "result_digest": checksum(dumps_plain(answer)), "attempts": 1,
                })
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


def _same(value: Any) -> Any:
    return value


def prefill(path: Path, count: int) -> None:
    """``count`` valid sidecar records, written straight into the journal's table."""
    SQLiteJournal(path).close()  # create the schema
    template: dict[str, Any] = {
        "schema_version": SIDECAR_SCHEMA_VERSION, "dispatch_id": "@@", "hook_id": "prefill.hook",
        "capability_id": "prefill", "source_receipt_id": "receipt_prefill", "event_kind": "todo_completed",
        "registration_schema_version": "loopx_post_writeback_capability_hook_registration_v0",
        "status": "not_applicable", "failure_code": None, "intents": [], "result_digest": "sha256:" + "0" * 64, "attempts": 1,
    }
    head, tail = canonical_bytes(template).split(b"@@")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous=OFF")
    db.execute("BEGIN")

    def rows() -> Any:
        for i in range(count):
            did = dispatch_id(f"receipt_prefill_{i}", "prefill.hook", "v0", "todo_completed")
            blob = head + did.encode() + tail
            yield (did, "not_applicable", blob, checksum(blob))

    db.executemany("INSERT INTO sidecar_receipts (dispatch_id, status, receipt, checksum) VALUES (?, ?, ?, ?)", rows())
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


# -- the parent: run, summarise, compare ----------------------------------------------------------


def summarise(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return {
        "n": len(times),
        "median_ms": round(statistics.median(times) * 1000, 4),
        "p90_ms": round(p90 * 1000, 4),
        "per_second": round(len(times) / sum(times), 1) if sum(times) else 0.0,
    }


def run_child(name: str, n: int, base: Path) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix=f"pwh-bench-{name}-", dir=base))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pwh._bench.bench", name, str(n), str(workdir)],
            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=3600,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"workload {name} failed (exit {proc.returncode})")
        return json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


LOOPX_WORKLOADS: tuple[Workload, ...] = (
    Workload("loopx_1_hook_durable", "loopx", 1),
    Workload("loopx_8_hooks_durable", "loopx", 8),
)
BY_NAME.update({w.name: w for w in LOOPX_WORKLOADS})


def _loopx_times(w: Workload, n: int, workdir: Path) -> list[float]:
    """The same hooks and receipts through the ``loopx`` adapter, persisting its sidecar
    receipts (equal durability), with LoopX's request scope pinned around the batch."""
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


@dataclass
class BenchPlan:
    quick: bool
    compare_loopx: bool

    def reps(self) -> int:
        return 2 if self.quick else 5

    def calls(self, w: Workload) -> int:
        base = {"floor": 400, "handoff": 400, "dispatch": 200, "skeleton": 200, "replay": 200, "prefilled": 200, "loopx": 40}[w.kind]
        if w.hooks >= 8 and w.kind in ("dispatch", "skeleton", "loopx"):
            base //= 2
        if w.hooks >= 32:
            base //= 2
        return max(20, base // (3 if self.quick else 1))


def run_bench(
    plan: BenchPlan, base: Path, out: Callable[[str], None] = print
) -> dict[str, Any]:
    """Every workload, ``reps`` times, pwh and LoopX interleaved; medians over all calls."""
    workloads = list(WORKLOADS) + (list(LOOPX_WORKLOADS) if plan.compare_loopx else [])
    # LoopX runs right after the skeleton, so that pwh's dispatch and its skeleton run back to back.
    pairs = {"loopx_1_hook_durable": "skeleton_1_hook_durable", "loopx_8_hooks_durable": "skeleton_8_hooks_durable"}
    order: list[Workload] = []
    for w in workloads:
        if w.kind == "loopx":
            continue
        order.append(w)
        for lx, ours in pairs.items():
            if ours == w.name and plan.compare_loopx:
                order.append(BY_NAME[lx])
    times: dict[str, list[float]] = {w.name: [] for w in order}
    peaks: dict[str, int] = {w.name: 0 for w in order}
    per_rep: list[dict[str, dict[str, Any]]] = []
    for rep in range(plan.reps()):
        this_rep: dict[str, dict[str, Any]] = {}
        for w in order:
            if w.kind == "prefilled" and w.prefill >= 10**6 and rep > 0 and plan.quick:
                continue  # one pass of the million-record journal is enough for --quick
            result = run_child(w.name, plan.calls(w), base)
            times[w.name] += result["times"]
            peaks[w.name] = max(peaks[w.name], result["peak_rss_kib"])
            stats = this_rep[w.name] = summarise(result["times"])
            out(f"  rep {rep + 1}/{plan.reps()}  {w.name:<28} median {stats['median_ms']:>8.3f} ms  p90 {stats['p90_ms']:>8.3f} ms")
        per_rep.append(this_rep)
    workloads_out = {
        name: {**summarise(ts), "peak_rss_mib": round(peaks[name] / 1024, 1)} for name, ts in times.items() if ts
    }
    found = ratios(workloads_out)
    return {
        "workloads": workloads_out, "ratios": found, "ratio_spread": ratio_spread(per_rep),
        "targets": judge_targets(found), "breakdown": breakdown(workloads_out), "checks": checks_cost(workloads_out),
    }


def ratio_spread(per_rep: list[dict[str, dict[str, Any]]]) -> dict[str, list[float] | None]:
    """Each ratio computed within each repetition alone, as ``[lowest, highest]``: the machine's
    speed drifts between repetitions, and pwh and the other side of a ratio always ran
    back to back, so this range says how far the pooled ratio can be trusted."""
    found = [ratios(rep) for rep in per_rep]
    spread: dict[str, list[float] | None] = {}
    for key in TARGETS:
        values = [float(v) for r in found if (v := r.get(key)) is not None]
        spread[key] = [min(values), max(values)] if values else None
    return spread


# The issue's targets, read from this output (never asserted as timings in tests).
TARGETS: dict[str, tuple[str, float]] = {
    "vs_floor": (">=", 0.5),
    "vs_loopx_1_hook": (">=", 20.0),
    "vs_loopx_8_hooks": (">=", 100.0),
    "growth_1e3_to_1e6": ("<=", 1.2),
}


def judge_targets(found: Mapping[str, float | None]) -> dict[str, dict[str, Any]]:
    """Each ratio against its target: ``met`` is true, false, or ``None`` when not measured."""
    out = {}
    for key, (op, bound) in TARGETS.items():
        value = found.get(key)
        met = None if value is None else (value >= bound if op == ">=" else value <= bound)
        out[key] = {"target": f"{op} {bound:g}", "value": value, "met": met}
    return out


def ratios(w: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    """The issue's ratios. A side's dispatches per second is taken as one over its median time per
    call: calls over their total time (the table's "per s") lets one stall of the machine decide a
    ratio (a 0.2 s pause inside a floor run once made pwh "1.3x the floor")."""

    def rate(name: str) -> float | None:
        return 1000.0 / w[name]["median_ms"] if name in w and w[name]["median_ms"] else None

    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 3) if a and b else None

    growth = None
    if "prefilled_1e3_durable" in w and "prefilled_1e6_durable" in w:
        growth = round(w["prefilled_1e6_durable"]["median_ms"] / w["prefilled_1e3_durable"]["median_ms"], 3)
    return {
        "vs_floor": ratio(rate("dispatch_1_hook_durable"), rate("floor_sqlite_commit")),
        "vs_loopx_1_hook": ratio(rate("dispatch_1_hook_durable"), rate("loopx_1_hook_durable")),
        "vs_loopx_8_hooks": ratio(rate("dispatch_8_hooks_durable"), rate("loopx_8_hooks_durable")),
        "growth_1e3_to_1e6": growth,
    }


def breakdown(w: Mapping[str, Mapping[str, Any]]) -> dict[str, float] | None:
    """Where a 1-hook durable dispatch goes, from medians of this run: the in-memory dispatch
    (its provider isolated in a worker process; the hand-off alone is measured beside it) and
    the durable commit it adds (next to the raw commit floor); and what the process boundary
    costs: the same dispatch with the thread runner, and the thread hand-off alone. Medians do
    not add exactly; this is for reading the ratios, not a second measurement."""
    names = ("dispatch_1_hook_durable", "dispatch_1_hook_memory", "floor_sqlite_commit", "handoff_after_idle")
    if not all(name in w for name in names):
        return None
    durable, memory, floor, handoff = (w[name]["median_ms"] for name in names)
    out = {
        "durable_dispatch_ms": durable,
        "in_memory_dispatch_ms": memory,
        "process_handoff_ms": handoff,
        "commit_added_ms": round(durable - memory, 4),
        "commit_floor_ms": floor,
    }
    if "thread_dispatch_1_hook_durable" in w and "thread_handoff_after_idle" in w:
        thread = w["thread_dispatch_1_hook_durable"]["median_ms"]
        out.update({
            "thread_dispatch_ms": thread,
            "thread_handoff_ms": w["thread_handoff_after_idle"]["median_ms"],
            "isolation_cost_ms": round(durable - thread, 4),
        })
    return out


_SKELETONS = {"dispatch_1_hook_durable": "skeleton_1_hook_durable", "dispatch_8_hooks_durable": "skeleton_8_hooks_durable"}


def checks_cost(w: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """What the RFC's checks cost in this run (the dispatch minus the check-free skeleton, by
    median, at 1 and 8 hooks), and the ratios the skeleton alone reaches: the most a dispatcher
    of this shape could reach on this machine, however cheap its checks."""
    if not all(name in w for pair in _SKELETONS.items() for name in pair):
        return None
    (d1, s1), (d8, s8) = ((w[ours]["median_ms"], w[bare]["median_ms"]) for ours, bare in _SKELETONS.items())
    as_if = {name: entry for name, entry in w.items() if name not in _SKELETONS}
    as_if.update({ours: w[bare] for ours, bare in _SKELETONS.items()})
    reached = ratios(as_if)  # type: ignore[arg-type]
    return {
        "checks_1_hook_ms": round(d1 - s1, 4),
        "checks_8_hooks_ms": round(d8 - s8, 4),
        "skeleton_ratios": {key: reached[key] for key in ("vs_floor", "vs_loopx_1_hook", "vs_loopx_8_hooks")},
    }


def render_table(result: dict[str, Any]) -> str:
    lines = [f"{'workload':<30} {'calls':>6} {'median ms':>10} {'p90 ms':>9} {'per s':>9} {'peak MiB':>9}"]
    for name, r in result["workloads"].items():
        lines.append(f"{name:<30} {r['n']:>6} {r['median_ms']:>10.3f} {r['p90_ms']:>9.3f} {r['per_second']:>9.1f} {r['peak_rss_mib']:>9.1f}")
    lines.append("")
    targets = result.get("targets") or judge_targets(result["ratios"])
    spread = result.get("ratio_spread") or {}
    for key, value in result["ratios"].items():
        shown = f"{value}" if value is not None else "n/a (not measured)"
        if spread.get(key) and spread[key][0] != spread[key][1]:
            shown += f" (reps {spread[key][0]:g}–{spread[key][1]:g})"
        judged = targets.get(key)
        verdict = "" if judged is None else f"   target {judged['target']:<7} " + {True: "met", False: "MISSED", None: "not measured"}[judged["met"]]
        lines.append(f"{key:<20} {shown:<34}{verdict}".rstrip())
    parts = result.get("breakdown")
    if parts:
        lines.append("")
        lines.append(
            f"1 hook durable {parts['durable_dispatch_ms']:.3f} ms = in memory {parts['in_memory_dispatch_ms']:.3f} "
            f"(of which the process hand-off alone {parts['process_handoff_ms']:.3f}) "
            f"+ the durable commit {parts['commit_added_ms']:.3f} (raw floor {parts['commit_floor_ms']:.3f})"
        )
        if "isolation_cost_ms" in parts:
            lines.append(
                f"the process boundary costs {parts['isolation_cost_ms']:+.3f} ms per 1-hook durable dispatch: "
                f"{parts['durable_dispatch_ms']:.3f} against {parts['thread_dispatch_ms']:.3f} with the thread runner "
                f"(hand-off alone: process {parts['process_handoff_ms']:.3f}, thread {parts['thread_handoff_ms']:.3f})"
            )
    checks = result.get("checks")
    if checks:
        reached = ", ".join(f"{key} {value:g}" for key, value in checks["skeleton_ratios"].items() if value is not None)
        lines.append(
            f"the RFC's checks cost {checks['checks_1_hook_ms']:.3f} ms of a 1-hook dispatch and "
            f"{checks['checks_8_hooks_ms']:.3f} ms of an 8-hook one; without any (the skeleton): {reached}"
        )
    return "\n".join(lines) + "\n"


def render_svg(result: dict[str, Any]) -> str:
    """Two panels, drawn by hand (no plotting dependency): per-dispatch cost against journal
    size (log scale) and against hook count, durable and in memory."""
    w = result["workloads"]
    panels = [
        ("cost vs journal size (1 hook, durable)", [("1e3", "prefilled_1e3_durable"), ("1e5", "prefilled_1e5_durable"), ("1e6", "prefilled_1e6_durable")]),
        ("cost vs hook count", [("1", "dispatch_1_hook_durable"), ("8", "dispatch_8_hooks_durable"), ("32", "dispatch_32_hooks_durable")]),
        ("cost vs hook count (memory)", [("1", "dispatch_1_hook_memory"), ("8", "dispatch_8_hooks_memory"), ("32", "dispatch_32_hooks_memory")]),
    ]
    width, height, pad = 300, 220, 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width * len(panels)}" height="{height}" font-family="sans-serif" font-size="11">']
    for index, (title, series) in enumerate(panels):
        x0 = index * width
        points = [(label, w[name]["median_ms"]) for label, name in series if name in w]
        top = max((v for _, v in points), default=1.0) * 1.15 or 1.0
        parts.append(f'<text x="{x0 + pad}" y="16">{title}</text>')
        parts.append(f'<line x1="{x0 + pad}" y1="{height - pad}" x2="{x0 + width - 10}" y2="{height - pad}" stroke="black"/>')
        parts.append(f'<line x1="{x0 + pad}" y1="30" x2="{x0 + pad}" y2="{height - pad}" stroke="black"/>')
        parts.append(f'<text x="{x0 + 2}" y="34">{top:.2f} ms</text>')
        coords = []
        for k, (label, value) in enumerate(points):
            x = x0 + pad + (k + 0.5) * (width - pad - 10) / max(1, len(points))
            y = height - pad - (value / top) * (height - pad - 30)
            coords.append(f"{x:.1f},{y:.1f}")
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3"/>')
            parts.append(f'<text x="{x - 8:.1f}" y="{height - pad + 14}">{label}</text>')
            parts.append(f'<text x="{x + 4:.1f}" y="{y - 4:.1f}">{value:.2f}</text>')
        if coords:
            parts.append(f'<polyline fill="none" stroke="steelblue" points="{" ".join(coords)}"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def isolation_ab(journal: str = "memory", blocks: int = 12, per_block: int = 50) -> dict[str, float]:
    """What the process boundary costs a 1-hook dispatch, measured in one process: the same
    dispatch with the process runner and the thread runner, alternating blocks, medians in ms
    (``python -m pwh._bench.bench ab [memory|sqlite]``). Alternating in one process keeps the machine's
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


def _main(argv: list[str]) -> int:
    if argv and argv[0] == "ab":
        print(json.dumps(isolation_ab(argv[1] if len(argv) > 1 else "memory")))
        return 0
    name, n, workdir = argv[0], int(argv[1]), Path(argv[2])
    result = run_workload(BY_NAME[name], n, workdir)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":  # pragma: no cover - the child entry point
    sys.exit(_main(sys.argv[1:]))
