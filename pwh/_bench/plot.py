"""``pwh bench --plot``: the figure of one bench result, drawn with matplotlib (the ``plot`` extra).

One job: turn a result of :func:`pwh._bench.measure.run_bench` (or the same dict loaded from
``--json``) into SVG or PNG bytes. Three panels: the time per dispatch against the hook count and
against the journal size (log-scaled x at the measured values, a log y shared by both, in ms; the
reference durable and in memory, its check-free skeleton, LoopX when measured, the SQLite commit
floor), and each guard's ratio against its target, with its range over the repetitions
and met / MISSED. The targets and their verdicts are read from the result (``targets``, else
:func:`pwh._bench.report.judge_targets`), never redefined here.

Drawn with the object API (:class:`matplotlib.figure.Figure` and the Agg or SVG canvas), no pyplot
and no GUI backend. The output is a function of its arguments alone: a fixed ``svg.hashsalt``, no
date in the file's metadata (the footer carries the date it is given), matplotlib's own fonts
drawn as paths; two renders of one result are byte-identical. Every series has a stable id
(:meth:`~matplotlib.artist.Artist.set_gid`, ``id="..."`` in the SVG) that a test can look for.
"""

from __future__ import annotations

import datetime as _dt
import io
import math
import os
import platform
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

from pwh._bench.report import TARGETS, judge_targets

# (hook count, workload) per series, and (records, workload) for the journal panel.
HOOK_SERIES: tuple[tuple[str, str, tuple[tuple[int, str], ...]], ...] = (
    (
        "reference-durable",
        "pwh reference, durable (SQLite)",
        ((1, "dispatch_1_hook_durable"), (8, "dispatch_8_hooks_durable"), (32, "dispatch_32_hooks_durable")),
    ),
    (
        "reference-memory",
        "pwh reference, in memory",
        ((1, "dispatch_1_hook_memory"), (8, "dispatch_8_hooks_memory"), (32, "dispatch_32_hooks_memory")),
    ),
    ("skeleton", "skeleton (no RFC checks), durable", ((1, "skeleton_1_hook_durable"), (8, "skeleton_8_hooks_durable"))),
    ("loopx", "LoopX (the loopx adapter), durable", ((1, "loopx_1_hook_durable"), (8, "loopx_8_hooks_durable"))),
)
JOURNAL_SERIES = ((10**3, "prefilled_1e3_durable"), (10**5, "prefilled_1e5_durable"), (10**6, "prefilled_1e6_durable"))
FLOOR = "floor_sqlite_commit"

# The ratio rows, with what each one divides; those with a target are drawn.
RATIO_LABELS: dict[str, str] = {
    "vs_skeleton_1_hook": "pwh ÷ check-free skeleton\n(dispatches/s, 1 hook)",
    "vs_skeleton_8_hooks": "pwh ÷ check-free skeleton\n(dispatches/s, 8 hooks)",
    "vs_floor": "pwh ÷ SQLite commit floor\n(dispatches/s, 1 hook)",
    "vs_loopx_1_hook": "pwh ÷ LoopX\n(dispatches/s, 1 hook)",
    "vs_loopx_8_hooks": "pwh ÷ LoopX\n(dispatches/s, 8 hooks)",
    "growth_1e3_to_1e6": "time at 10⁶ records ÷ at 10³\n(1 hook, durable)",
}

COLOURS = {
    "reference-durable": "#0072B2",
    "reference-memory": "#56B4E9",
    "skeleton": "#E69F00",
    "loopx": "#CC79A7",
    "floor": "#444444",
    "met": "#1A7F37",
    "missed": "#CF222E",
    "unmeasured": "#777777",
}
MARKERS = {"reference-durable": "o", "reference-memory": "s", "skeleton": "D", "loopx": "^"}
VERDICT = {True: "met", False: "MISSED", None: "not measured"}


def machine_description() -> str:
    """What the footer says of the machine: the core count and the platform, nothing that names
    a host, a user or a path."""
    cores = os.cpu_count()
    return f"{cores if cores else '?'} cores, {platform.system() or 'unknown OS'} {platform.machine() or ''}".rstrip()


def today_utc() -> str:
    """The date the footer gives a run, in UTC; ``SOURCE_DATE_EPOCH`` pins it, as for verdicts."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    moment = _dt.datetime.fromtimestamp(int(epoch), _dt.UTC) if epoch.isdigit() else _dt.datetime.now(_dt.UTC)
    return moment.strftime("%Y-%m-%d")


def render_plot(result: Mapping[str, Any], fmt: str, *, measured: str, machine: str, run: str | None = None) -> bytes:
    """The figure of ``result`` as ``fmt`` (``"svg"`` or ``"png"``) bytes; ``measured`` (a date),
    ``machine`` (:func:`machine_description`) and ``run`` (e.g. "quick run, 2 repetitions") go in the
    footer."""
    if fmt not in ("svg", "png"):
        raise ValueError(f"cannot plot as {fmt!r}: svg or png")
    with matplotlib.rc_context(
        {
            "svg.hashsalt": "pwh-bench",  # the ids of clip paths and glyphs: the same in every render
            "svg.fonttype": "path",  # matplotlib's own DejaVu glyphs: the same picture in every viewer
            "font.family": "DejaVu Sans",
            "font.size": 10,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "legend.fontsize": 9,
            "xtick.labelsize": 9,
            "ytick.labelsize": 9,
        }
    ):
        fig = _figure(result, measured=measured, machine=machine, run=run)
        out = io.BytesIO()
        if fmt == "svg":
            FigureCanvasSVG(fig)
            fig.savefig(out, format="svg", metadata={"Date": None, "Creator": "pwh bench (matplotlib)"})
        else:
            FigureCanvasAgg(fig)
            fig.savefig(out, format="png", dpi=150, metadata={"Software": None})
    return out.getvalue()


# -- the figure ------------------------------------------------------------------------------------


def _figure(result: Mapping[str, Any], *, measured: str, machine: str, run: str | None) -> Figure:
    w: Mapping[str, Mapping[str, Any]] = result["workloads"]
    targets: Mapping[str, Mapping[str, Any]] = result.get("targets") or judge_targets(result["ratios"])
    fig = Figure(figsize=(12.5, 9.0), layout=ConstrainedLayoutEngine(rect=(0, 0.025, 1, 0.975)))  # the footer's strip below
    grid = fig.add_gridspec(2, 2, height_ratios=(1.45, 1.0))
    hooks_ax = fig.add_subplot(grid[0, 0])
    journal_ax = fig.add_subplot(grid[0, 1], sharey=hooks_ax)
    ratio_ax = fig.add_subplot(grid[1, :])
    for axes, gid in ((hooks_ax, "panel-hooks"), (journal_ax, "panel-journal"), (ratio_ax, "panel-ratios")):
        axes.set_gid(gid)
    fig.suptitle("pwh bench: time per post-writeback dispatch, and the guards", fontsize=13, fontweight="bold")

    _hooks_panel(hooks_ax, w)
    _journal_panel(journal_ax, w, targets.get("growth_1e3_to_1e6"))
    _time_axis(hooks_ax, w)
    journal_ax.tick_params(labelleft=True)
    _ratio_panel(ratio_ax, result, targets)

    footer = f"measured {measured} (UTC) · {machine}" + (f" · {run}" if run else "")
    fig.text(0.01, 0.005, footer, ha="left", va="bottom", fontsize=8.5, color="#333333", gid="footer")
    fig.text(
        0.99,
        0.005,
        "points: median of all calls; bars: median to p90 of the calls (time), lowest to highest repetition (ratios)",
        ha="right",
        va="bottom",
        fontsize=8.5,
        color="#333333",
    )
    return fig


def _point(w: Mapping[str, Mapping[str, Any]], name: str) -> tuple[float, float] | None:
    entry = w.get(name)
    if not entry or not entry.get("median_ms"):
        return None
    median = float(entry["median_ms"])
    return median, max(float(entry.get("p90_ms", median)), median)


def _series(ax: Axes, gid: str, label: str, points: Sequence[tuple[float, float, float]], values: int = 0, **style: Any) -> None:
    """One measured series: a line through the medians (id ``gid``) and bars up to each p90
    (id ``gid-p90``); ``values`` > 0 writes each median above its point, < 0 below."""
    xs = [x for x, _, _ in points]
    medians = [m for _, m, _ in points]
    line = ax.plot(xs, medians, label=label, linewidth=1.8, markersize=6, zorder=3, **style)[0]
    line.set_gid(gid)
    bars = ax.vlines(xs, medians, [p for _, _, p in points], colors=style.get("color"), linewidth=1.2, zorder=2)
    bars.set_gid(f"{gid}-p90")
    for x, median, p90 in points if values else ():
        ax.annotate(
            f"{median:.3g}",
            xy=(x, p90 if values > 0 else median),
            xytext=(0, 5 if values > 0 else -7),
            textcoords="offset points",
            ha="center",
            va="bottom" if values > 0 else "top",
            fontsize=8,
            color=style.get("color"),
        )


def _floor_line(ax: Axes, w: Mapping[str, Mapping[str, Any]], gid: str) -> None:
    floor = _point(w, FLOOR)
    if floor is not None:
        line = ax.axhline(
            floor[0], color=COLOURS["floor"], linestyle=":", linewidth=1.6, label=f"SQLite commit floor ({floor[0]:.3g} ms)", zorder=1
        )
        line.set_gid(gid)


def _hooks_panel(ax: Axes, w: Mapping[str, Mapping[str, Any]]) -> None:
    for gid, label, names in HOOK_SERIES:
        points = [(x, *p) for x, name in names if (p := _point(w, name)) is not None]
        if points:
            dashed = {"linestyle": "--"} if gid == "reference-memory" else {}
            shown = 1 if gid in ("reference-durable", "loopx") else 0
            _series(ax, gid, label, points, shown, color=COLOURS[gid], marker=MARKERS[gid], **dashed)
    _floor_line(ax, w, "floor-hooks")
    if not any(name in w for _, name in HOOK_SERIES[-1][2]):
        ax.text(
            0.98,
            0.03,
            "LoopX not measured (run with --compare loopx)",
            transform=ax.transAxes,
            ha="right",
            fontsize=8.5,
            color="#555555",
            gid="loopx-not-measured",
        )
    ax.set_xscale("log", base=2)
    ax.set_xlim(0.75, 45)
    ax.xaxis.set_major_locator(FixedLocator([1, 2, 4, 8, 16, 32]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("hooks installed (log scale)")
    ax.set_title("against the hook count (empty journal)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncols=2, frameon=False)


def _journal_panel(ax: Axes, w: Mapping[str, Mapping[str, Any]], growth: Mapping[str, Any] | None) -> None:
    points = [(x, *p) for x, name in JOURNAL_SERIES if (p := _point(w, name)) is not None]
    if points:
        _series(ax, "reference-journal", "pwh reference, 1 hook, durable", points, -1, color=COLOURS["reference-durable"], marker="o")
    _floor_line(ax, w, "floor-journal")
    start = _point(w, JOURNAL_SERIES[0][1])
    if growth is not None and start is not None:
        op, bound = _target_bound(growth["target"])
        colour = _verdict_colour(growth["met"])
        value = growth["value"]
        shown = f" ({value:g}×)" if value is not None else ""
        limit = ax.hlines(
            start[0] * bound,
            JOURNAL_SERIES[0][0],
            JOURNAL_SERIES[-1][0],
            colors=colour,
            linestyles="--",
            linewidth=1.4,
            label=f"growth limit {_op(op)} {bound:g}× the 10³ time: {VERDICT[growth['met']]}{shown}",
            zorder=2,
        )
        limit.set_gid("limit-growth_1e3_to_1e6")
    ax.set_xscale("log")
    ax.set_xlim(5 * 10**2, 2 * 10**6)
    ax.xaxis.set_major_locator(LogLocator(base=10, numticks=10))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("records already in the sidecar journal (log scale)")
    ax.set_title("against the journal size (1 hook, durable)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncols=1, frameon=False)


def _time_axis(ax: Axes, w: Mapping[str, Mapping[str, Any]]) -> None:
    """The y axis both time panels share: log, in ms, from below the fastest plotted workload to
    above the slowest."""
    plotted = [FLOOR, *(name for _, name in JOURNAL_SERIES), *(name for _, _, names in HOOK_SERIES for _, name in names)]
    values = [v for name in plotted for v in (_point(w, name) or ())]
    low, high = (min(values), max(values)) if values else (0.1, 10.0)
    ax.set_yscale("log")
    ax.set_ylim(_nice(low / 1.3, down=True), _nice(high * 1.3, down=False))
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=20))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("time per dispatch (ms, log scale)")
    for axes in ax.get_shared_y_axes().get_siblings(ax):
        axes.grid(True, which="major", color="#DDDDDD", linewidth=0.7)
        axes.set_axisbelow(True)


def _ratio_panel(ax: Axes, result: Mapping[str, Any], targets: Mapping[str, Mapping[str, Any]]) -> None:
    """Each ratio as a row: the pooled value, its range over the repetitions, the skeleton's, and the
    target as a dashed line across the row, the side that meets it shaded; the verdict on the right."""
    spread: Mapping[str, Sequence[float] | None] = result.get("ratio_spread") or {}
    skeleton: Mapping[str, float | None] = (result.get("checks") or {}).get("skeleton_ratios") or {}
    # The targets' order, also from --json; a figure in seconds (a LoopX command) is in the table, not on this ratio axis.
    keys = [key for key in (*TARGETS, *sorted(set(targets) - set(TARGETS))) if key in targets and key in RATIO_LABELS]
    bounds = {key: _target_bound(targets[key]["target"]) for key in keys}
    seen = [float(v) for key in keys for v in (targets[key]["value"], skeleton.get(key), *(spread.get(key) or ())) if v]
    seen += [bound for _, bound in bounds.values()]
    low, high = _nice(min(seen) / 1.6, down=True), _nice(max(seen) * 1.6, down=False)
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    verdicts = []
    for row, key in enumerate(keys):
        op, bound = bounds[key]
        judged = targets[key]
        colour = _verdict_colour(judged["met"])
        passing = (bound, high) if op == ">=" else (low, bound)
        band = ax.fill_betweenx([row - 0.38, row + 0.38], *passing, color=COLOURS["met"], alpha=0.07, linewidth=0)
        band.set_gid(f"target-band-{key}")
        target = ax.vlines(bound, row - 0.38, row + 0.38, colors="#222222", linestyles="--", linewidth=1.4)
        target.set_gid(f"target-{key}")
        value, reps = judged["value"], spread.get(key)
        if value is not None:
            dot = ax.plot([value], [row], marker="o", markersize=8, color=colour, linestyle="none", zorder=4)[0]
            dot.set_gid(f"ratio-{key}")
        if value is not None and reps:
            bar = ax.hlines(row, reps[0], reps[1], colors=colour, linewidth=2.2, zorder=3)
            bar.set_gid(f"ratio-spread-{key}")
            ends = ax.plot(list(reps), [row, row], marker="|", markersize=11, markeredgewidth=2, color=colour, linestyle="none", zorder=3)
            ends[0].set_gid(f"ratio-spread-ends-{key}")
        if (bare := skeleton.get(key)) is not None:
            mark = ax.plot([bare], [row], linestyle="none", zorder=4, **_SKELETON_MARK)[0]
            mark.set_gid(f"skeleton-ratio-{key}")
        verdict = f"{_op(op)} {bound:g}: {VERDICT[judged['met']]}"
        if value is not None:
            verdict += f"\n{value:g}" + (f" (reps {reps[0]:g}–{reps[1]:g})" if reps and reps[0] != reps[1] else "")
        verdicts.append(verdict)
    ax.set_ylim(len(keys) - 0.5, -0.5)
    ax.set_yticks(range(len(keys)), [RATIO_LABELS.get(key, key) for key in keys])
    # The verdicts as the tick labels of a right-hand axis, so the layout makes room for them.
    right = ax.secondary_yaxis("right")
    right.set_yticks(range(len(keys)), verdicts)
    right.tick_params(length=0)
    for key, label in zip(keys, right.get_yticklabels(), strict=True):
        label.set_color(_verdict_colour(targets[key]["met"]))
        label.set_fontweight("bold" if targets[key]["met"] is False else "normal")
        label.set_gid(f"verdict-{key}")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, axis="x", which="major", color="#DDDDDD", linewidth=0.7)
    ax.set_axisbelow(True)
    ax.set_xlabel("ratio (log scale); the shaded side of each dashed target meets it")
    ax.set_title("the guards' ratios against their targets")
    key_to_marks = [
        Line2D([], [], color="#222222", linestyle="--", linewidth=1.4, label="target"),
        Line2D([], [], color="#555555", marker="o", markersize=8, linestyle="none", label="pwh, pooled (green met, red MISSED)"),
        Line2D(
            [], [], color="#555555", marker="|", markersize=11, markeredgewidth=2, linewidth=2.2, label="pwh, lowest to highest repetition"
        ),
        Line2D([], [], linestyle="none", label="skeleton (no RFC checks)", **_SKELETON_MARK),
    ]
    ax.legend(handles=key_to_marks, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=4, frameon=False, fontsize=8.5)


_SKELETON_MARK: dict[str, Any] = {
    "marker": "D",
    "markersize": 7,
    "markerfacecolor": "none",
    "markeredgewidth": 1.5,
    "color": COLOURS["skeleton"],
}


def _nice(value: float, *, down: bool) -> float:
    """The nearest 1, 2 or 5 times a power of ten at or below (``down``) or at or above ``value``."""
    power = 10.0 ** math.floor(math.log10(value))
    steps = [m * power for m in (1, 2, 5, 10)]
    return max(s for s in steps if s <= value * (1 + 1e-9)) if down else min(s for s in steps if s >= value * (1 - 1e-9))


def _target_bound(target: str) -> tuple[str, float]:
    """``">= 0.75"`` (a target as :func:`pwh._bench.report.judge_targets` writes it) as ``(">=", 0.75)``."""
    op, bound = target.split()
    return op, float(bound)


def _op(op: str) -> str:
    return {">=": "≥", "<=": "≤"}.get(op, op)


def _verdict_colour(met: bool | None) -> str:
    return COLOURS["met"] if met else COLOURS["missed"] if met is False else COLOURS["unmeasured"]
