"""``pwh bench``, the measuring half: plan the run, start one child per workload, pool their times.

Each workload runs in its own child process (``python -m pwh._bench WORKLOAD ...``; the workloads
are in :mod:`pwh._bench.workloads`), so its peak memory is its own and no workload warms another's
caches. Times are wall-clock per dispatch. What the pooled figures say (ratios, targets, the
breakdown and the table) is :mod:`pwh._bench.report`'s, the figure :mod:`pwh._bench.plot`'s; :func:`run_bench` only asks them.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pwh._bench.report import breakdown, checks_cost, judge_targets, ratio_spread, ratios
from pwh._bench.workloads import BY_NAME, COUNTERPARTS, LOOPX_COMMAND, WORKLOADS, Workload


def summarise(times: list[float]) -> dict[str, float]:
    """Median, p90 (nearest rank) and calls over their total time, in ms and per second."""
    ordered = sorted(times)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return {
        "n": len(times),
        "median_ms": round(statistics.median(times) * 1000, 4),
        "p90_ms": round(p90 * 1000, 4),
        "per_second": round(len(times) / sum(times), 1) if sum(times) else 0.0,
    }


def run_child(name: str, n: int, base: Path) -> dict[str, Any]:
    """Run ``n`` calls of workload ``name`` in a fresh interpreter (:mod:`pwh._bench.__main__`)
    with its stores in a directory of its own under ``base``, removed afterwards; its last line
    of output is its times and peak memory."""
    workdir = Path(tempfile.mkdtemp(prefix=f"pwh-bench-{name}-", dir=base))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pwh._bench", name, str(n), str(workdir)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=3600,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"workload {name} failed (exit {proc.returncode})")
        return json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@dataclass
class BenchPlan:
    """How much to run: ``--quick`` takes 2 repetitions instead of 5 and a third of the calls."""

    quick: bool
    compare_loopx: bool

    def reps(self) -> int:
        return 2 if self.quick else 5

    def calls(self, w: Workload) -> int:
        if w.kind == "loopx_command":  # about half a second each: a handful per repetition
            return 3 if self.quick else 6
        base = {"floor": 400, "handoff": 400, "dispatch": 200, "skeleton": 200, "replay": 200, "prefilled": 200, "loopx": 40}[w.kind]
        if w.hooks >= 8 and w.kind in ("dispatch", "skeleton", "loopx"):
            base //= 2
        if w.hooks >= 32:
            base //= 2
        return max(20, base // (3 if self.quick else 1))


def machine_busy() -> str | None:
    """Why the machine is too busy to measure on (its load average against its cores), or None."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return None
    cores = os.cpu_count() or 1
    return f"load average {load:.1f} on {cores} core(s)" if load > 0.5 * cores else None


def run_bench(plan: BenchPlan, base: Path, out: Callable[[str], None] = print) -> dict[str, Any]:
    """Every workload, ``reps`` times, pwh and LoopX interleaved; medians over all calls."""
    # LoopX runs right after the skeleton, so that pwh's dispatch, its skeleton and LoopX run back to back.
    loopx_after = {c.skeleton: BY_NAME[c.loopx] for c in COUNTERPARTS} if plan.compare_loopx else {}
    order: list[Workload] = []
    for w in WORKLOADS:
        order.append(w)
        if w.name in loopx_after:
            order.append(loopx_after[w.name])
    if plan.compare_loopx:
        order.append(LOOPX_COMMAND)
    times: dict[str, list[float]] = {w.name: [] for w in order}
    peaks: dict[str, int] = {w.name: 0 for w in order}
    per_rep: list[dict[str, dict[str, Any]]] = []
    busy = machine_busy()
    if busy:
        out(f"  warning: {busy}: the figures will read slower than on a quiet machine")
    started = time.monotonic()
    for rep in range(plan.reps()):
        this_rep: dict[str, dict[str, Any]] = {}
        for k, w in enumerate(order, 1):
            if w.kind == "prefilled" and w.prefill >= 10**6 and rep > 0 and plan.quick:
                continue  # one pass of the million-record journal is enough for --quick
            if w.kind == "prefilled" and w.prefill >= 10**5:  # the one long silence: say what it is
                out(f"  rep {rep + 1}/{plan.reps()}  [{k}/{len(order)}] {w.name}: filling a journal of {w.prefill:,} records first")
            result = run_child(w.name, plan.calls(w), base)
            times[w.name] += result["times"]
            peaks[w.name] = max(peaks[w.name], result["peak_rss_kib"])
            stats = this_rep[w.name] = summarise(result["times"])
            out(
                f"  rep {rep + 1}/{plan.reps()}  [{k}/{len(order)}] {w.name:<28} median {stats['median_ms']:>8.3f} ms  "
                f"p90 {stats['p90_ms']:>8.3f} ms  ({time.monotonic() - started:.0f} s)"
            )
        per_rep.append(this_rep)
    workloads_out = {name: {**summarise(ts), "peak_rss_mib": round(peaks[name] / 1024, 1)} for name, ts in times.items() if ts}
    found = ratios(workloads_out)
    return {
        "workloads": workloads_out,
        "ratios": found,
        "ratio_spread": ratio_spread(per_rep),
        "targets": judge_targets(found),
        "breakdown": breakdown(workloads_out),
        "checks": checks_cost(workloads_out),
    }
