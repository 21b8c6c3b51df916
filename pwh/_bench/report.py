"""``pwh bench``, the reading half: what a run's pooled figures say.

Pure functions of the figures :func:`pwh._bench.measure.run_bench` pooled (workload name ->
median, p90, rate, peak memory), kept apart from the running so they can be tested on made-up
figures: the guards' ratios and their spread over the repetitions, each judged against its
target; where a 1-hook durable dispatch goes; what the RFC's checks cost (the dispatch minus its
check-free skeleton); and the text table that shows it all, the whole gate's times
(:mod:`pwh._bench.gate`) last (the figure is :mod:`pwh._bench.plot`'s,
which needs the ``plot`` extra).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pwh._bench.gate import render_gate
from pwh._bench.workloads import COUNTERPARTS

# The guards, read from this output (never asserted as timings in tests). What the RFC's checks
# cost is judged against the check-free skeleton measured in the same run (at least 0.75 of its
# dispatches per second, at 1 and at 8 hooks), and the journal's growth from 10^3 to 10^6 records:
# both properties of pwh on this machine. LoopX's own dispatch time moved from 18 ms to 8-10 ms
# between two measurements of one release, so a ratio to it is shown without a target, as is the
# ratio to the raw commit floor. A LoopX primary command through the writeback boundary's warm
# interpreter must cost under a second (``--compare loopx``).
TARGETS: dict[str, tuple[str, float]] = {
    "vs_skeleton_1_hook": (">=", 0.75),
    "vs_skeleton_8_hooks": (">=", 0.75),
    "growth_1e3_to_1e6": ("<=", 1.2),
    "loopx_warm_command_s": ("<=", 1.0),
}
# Every figure measured, in the order shown; those in TARGETS are judged.
RATIO_KEYS: tuple[str, ...] = (
    "vs_skeleton_1_hook",
    "vs_skeleton_8_hooks",
    "growth_1e3_to_1e6",
    "vs_floor",
    "vs_loopx_1_hook",
    "vs_loopx_8_hooks",
    "loopx_warm_command_s",
)


def ratios(w: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    """The guards' figures. A side's dispatches per second is taken as one over its median time
    per call: calls over their total time (the table's "per s") lets one stall of the machine
    decide a ratio (a 0.2 s pause inside a floor run once made pwh "1.3x the floor")."""

    def rate(name: str) -> float | None:
        return 1000.0 / w[name]["median_ms"] if name in w and w[name]["median_ms"] else None

    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 3) if a and b else None

    growth = None
    if "prefilled_1e3_durable" in w and "prefilled_1e6_durable" in w:
        growth = round(w["prefilled_1e6_durable"]["median_ms"] / w["prefilled_1e3_durable"]["median_ms"], 3)
    command = w.get("loopx_warm_command")
    return {
        "vs_skeleton_1_hook": ratio(rate("dispatch_1_hook_durable"), rate("skeleton_1_hook_durable")),
        "vs_skeleton_8_hooks": ratio(rate("dispatch_8_hooks_durable"), rate("skeleton_8_hooks_durable")),
        "growth_1e3_to_1e6": growth,
        "vs_floor": ratio(rate("dispatch_1_hook_durable"), rate("floor_sqlite_commit")),
        "vs_loopx_1_hook": ratio(rate("dispatch_1_hook_durable"), rate("loopx_1_hook_durable")),
        "vs_loopx_8_hooks": ratio(rate("dispatch_8_hooks_durable"), rate("loopx_8_hooks_durable")),
        "loopx_warm_command_s": round(command["median_ms"] / 1000.0, 3) if command else None,
    }


def ratio_spread(per_rep: list[dict[str, dict[str, Any]]]) -> dict[str, list[float] | None]:
    """Each ratio computed within each repetition alone, as ``[lowest, highest]``: the machine's
    speed drifts between repetitions, and pwh and the other side of a ratio always ran
    back to back, so this range says how far the pooled ratio can be trusted."""
    found = [ratios(rep) for rep in per_rep]
    spread: dict[str, list[float] | None] = {}
    for key in RATIO_KEYS:
        values = [float(v) for r in found if (v := r.get(key)) is not None]
        spread[key] = [min(values), max(values)] if values else None
    return spread


def judge_targets(found: Mapping[str, float | None]) -> dict[str, dict[str, Any]]:
    """Each ratio against its target: ``met`` is true, false, or ``None`` when not measured."""
    out = {}
    for key, (op, bound) in TARGETS.items():
        value = found.get(key)
        met = None if value is None else (value >= bound if op == ">=" else value <= bound)
        out[key] = {"target": f"{op} {bound:g}", "value": value, "met": met}
    return out


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
        out.update(
            {
                "thread_dispatch_ms": thread,
                "thread_handoff_ms": w["thread_handoff_after_idle"]["median_ms"],
                "isolation_cost_ms": round(durable - thread, 4),
            }
        )
    return out


def checks_cost(w: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """What the RFC's checks cost in this run (the dispatch minus the check-free skeleton, by
    median, at 1 and 8 hooks), and the ratios the skeleton alone reaches: the most a dispatcher
    of this shape could reach on this machine, however cheap its checks."""
    if not all(name in w for c in COUNTERPARTS for name in (c.dispatch, c.skeleton)):
        return None
    (d1, s1), (d8, s8) = ((w[c.dispatch]["median_ms"], w[c.skeleton]["median_ms"]) for c in COUNTERPARTS)
    dispatches = {c.dispatch for c in COUNTERPARTS}
    as_if = {name: entry for name, entry in w.items() if name not in dispatches}
    as_if.update({c.dispatch: w[c.skeleton] for c in COUNTERPARTS})
    reached = ratios(as_if)  # type: ignore[arg-type]
    return {
        "checks_1_hook_ms": round(d1 - s1, 4),
        "checks_8_hooks_ms": round(d8 - s8, 4),
        "skeleton_ratios": {key: reached[key] for key in ("vs_floor", "vs_loopx_1_hook", "vs_loopx_8_hooks")},
    }


def render_table(result: dict[str, Any]) -> str:
    """The run as text: one row per workload, each figure beside its spread and its verdict, then
    the breakdown and the checks' cost when measured. Reads the targets from ``result`` when
    present, so a result loaded from ``--json`` renders as it did."""
    gate = result.get("gate")
    if not result["workloads"] and gate:  # `pwh bench --gate only`: the gate's figures alone
        return "\n".join(render_gate(gate)) + "\n"
    lines = [f"{'workload':<30} {'calls':>6} {'median ms':>10} {'p90 ms':>9} {'per s':>9} {'peak MiB':>9}"]
    for name, r in result["workloads"].items():
        lines.append(
            f"{name:<30} {r['n']:>6} {r['median_ms']:>10.3f} {r['p90_ms']:>9.3f} {r['per_second']:>9.1f} {r['peak_rss_mib']:>9.1f}"
        )
    lines.append("")
    targets = result.get("targets") or judge_targets(result["ratios"])
    spread = result.get("ratio_spread") or {}
    for key, value in result["ratios"].items():
        shown = f"{value}" if value is not None else "n/a (not measured)"
        if spread.get(key) and spread[key][0] != spread[key][1]:
            shown += f" (reps {spread[key][0]:g}–{spread[key][1]:g})"
        judged = targets.get(key)
        verdict = (
            ""
            if judged is None
            else f"   target {judged['target']:<7} " + {True: "met", False: "MISSED", None: "not measured"}[judged["met"]]
        )
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
    if gate:
        lines += ["", *render_gate(gate)]
    return "\n".join(lines) + "\n"
