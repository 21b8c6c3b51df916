"""``pwh bench``, the gate's part: how long a whole ``pwh gate`` takes, against its targets.

Issue 35 asks for the reference's whole matrix in at most 10 s and LoopX's in at most 30 s on a
quiet 2-core machine. Each is timed as a user runs it (``pwh gate --sut SUT --quiet`` in a child
process, from its start to its exit: the scenarios, their shards, the verdict), never by a test.
LoopX is timed only where its extra is installed; elsewhere its figure says why it is missing.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The targets in seconds of wall-clock time for one whole gate run (issue 35, item 2).
GATE_TARGETS_S: dict[str, float] = {"reference": 10.0, "loopx": 30.0}
# Exit statuses of `pwh gate` that mean the matrix ran (0 pass, 1 an RFC check failed, 3
# incomplete); any other (2: it could not run) leaves the SUT not measured.
RAN = frozenset({0, 1, 3})


@dataclass(frozen=True)
class GateTiming:
    """One whole run: its wall-clock seconds and the gate's exit status; and, to read the seconds
    by, the CPU seconds it used (user and system, the gate and every process under it) and the
    machine's one-minute load average when it started (a shared machine moves the wall clock)."""

    seconds: float
    exit_code: int
    cpu_s: float | None = None
    load: float | None = None


GateRunner = Callable[[str], GateTiming]


def time_gate(sut: str) -> GateTiming:
    """Run ``pwh gate --sut SUT --quiet`` in a child and time it from start to exit. Its verdict
    goes to a temporary file (so the run writes what a real one does) and is dropped; the child
    is stopped by its PID if the bench is interrupted."""
    from pwh._harness.gate import project_root, run_child

    with tempfile.TemporaryDirectory(prefix="pwh-bench-gate-") as tmp:
        cmd = [sys.executable, "-m", "pwh", "gate", "--sut", sut, "--quiet", "--json", str(Path(tmp) / "verdict.json")]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys([str(project_root()), *_user_path()]))}
        load = _load()
        before = _children_cpu()
        started = time.perf_counter()
        done = run_child(cmd, env=env, cwd=Path(tmp), quiet=True)
        seconds = time.perf_counter() - started
        return GateTiming(seconds, done.returncode, _children_cpu() - before, load)


def _children_cpu() -> float:
    """User and system CPU seconds of every child this process has waited for (the gate's run
    counts once it is reaped, with the shards and workers it reaped in turn)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _load() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def _user_path() -> list[str]:
    return [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]


def loopx_missing() -> str | None:
    """Why the LoopX gate cannot be timed here, or ``None`` when it can."""
    if importlib.util.find_spec("loopx") is None:
        return "the loopx extra is not installed (pip install -e '.[loopx]')"
    return None


def gate_figures(
    *,
    reps: int,
    runner: GateRunner | None = None,
    loopx_reason: Callable[[], str | None] | None = None,
    out: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Each SUT's whole gate ``reps`` times: every run's seconds, their median, the target and
    whether the median met it (``met`` is ``None`` when the SUT was not measured, with ``reason``).
    ``runner`` and ``loopx_reason`` default to :func:`time_gate` and :func:`loopx_missing`, looked
    up when called (a test stands a stub in for them)."""
    runner = runner or time_gate
    loopx_reason = loopx_reason or loopx_missing
    figures: dict[str, Any] = {}
    for sut, target in GATE_TARGETS_S.items():
        reason = loopx_reason() if sut == "loopx" else None
        runs: list[float] = []
        for rep in range(reps if reason is None else 0):
            timing = runner(sut)
            if timing.exit_code not in RAN:
                reason = f"the gate could not run (exit {timing.exit_code})"
                break
            runs.append(round(timing.seconds, 2))
            cpu = f", cpu {timing.cpu_s:.1f} s" if timing.cpu_s is not None else ""
            load = f", load {timing.load:.2f}" if timing.load is not None else ""
            out(f"  gate rep {rep + 1}/{reps}  {sut:<10} {timing.seconds:>7.2f} s (target {target:g} s{cpu}{load})")
        figures[sut] = judge_gate(sut, runs if reason is None else [], reason)
    return {"jobs": _default_jobs(), "cores": os.cpu_count(), "suts": figures}


def judge_gate(sut: str, runs: list[float], reason: str | None = None) -> dict[str, Any]:
    """One SUT's figure: the median of ``runs`` against its target; not measured without runs."""
    target = GATE_TARGETS_S[sut]
    if not runs:
        return {"target_s": target, "seconds": None, "runs": [], "met": None, "reason": reason or "not run"}
    median = round(statistics.median(runs), 2)
    return {"target_s": target, "seconds": median, "runs": list(runs), "met": median <= target}


def render_gate(gate: Mapping[str, Any]) -> list[str]:
    """The gate's lines of the bench's table: seconds beside the target, met or MISSED."""
    lines = [f"whole gate (pwh gate --quiet, {gate.get('jobs')} shard(s) by default, {gate.get('cores')} core(s)):"]
    for sut, fig in gate.get("suts", {}).items():
        target = f"target <= {fig['target_s']:g} s"
        if fig.get("seconds") is None:
            lines.append(f"  gate_{sut:<14} {'n/a (not measured: ' + str(fig.get('reason')) + ')'}   {target} not measured")
            continue
        runs = fig.get("runs") or []
        spread = f" (runs {min(runs):g}–{max(runs):g})" if len(runs) > 1 and min(runs) != max(runs) else ""
        verdict = "met" if fig["met"] else "MISSED"
        lines.append(f"  gate_{sut:<14} {fig['seconds']:g} s{spread}   {target} {verdict}")
    return lines


def _default_jobs() -> int:
    from pwh._harness.gate import default_jobs

    return default_jobs()
