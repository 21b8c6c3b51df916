"""`pwh bench --plot`: the figure (pwh/_bench/plot.py, the `plot` extra) from a bench result.

The result is made up here, from figures like docs/performance.md's, and passed through the report's own
functions (ratios, spread, targets, checks), so the figure is read as `pwh bench` would hand it
over; a real bench takes minutes. The plotting tests skip without matplotlib (the README's test
command installs only `.[test,loopx]`); the refusal without it runs everywhere.
"""

from __future__ import annotations

import json
import math
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pwh._bench.report import TARGETS, breakdown, checks_cost, judge_targets, ratio_spread, ratios

SVG = "{http://www.w3.org/2000/svg}"
FOOTER = {"measured": "2025-06-01", "machine": "2 cores, Linux x86_64", "run": "full run, 5 repetitions"}

# workload -> (median ms, p90 ms)
FIGURES: dict[str, tuple[float, float]] = {
    "floor_sqlite_commit": (0.337, 0.408),
    "handoff_after_idle": (0.070, 0.094),
    "dispatch_1_hook_durable": (0.903, 1.018),
    "skeleton_1_hook_durable": (0.700, 0.810),
    "loopx_1_hook_durable": (18.2, 21.9),
    "dispatch_8_hooks_durable": (2.60, 3.00),
    "skeleton_8_hooks_durable": (1.39, 1.64),
    "loopx_8_hooks_durable": (95.1, 109.0),
    "dispatch_32_hooks_durable": (7.14, 8.38),
    "dispatch_1_hook_memory": (0.387, 0.528),
    "dispatch_8_hooks_memory": (1.55, 1.96),
    "dispatch_32_hooks_memory": (4.11, 6.10),
    "prefilled_1e3_durable": (0.95, 1.08),
    "prefilled_1e5_durable": (0.99, 1.12),
    "prefilled_1e6_durable": (1.03, 1.20),
    "loopx_warm_command": (560.0, 690.0),
}
DRAWN = ("vs_skeleton_1_hook", "vs_skeleton_8_hooks", "growth_1e3_to_1e6")  # the guards that are ratios


def bench_result(loopx: bool = True) -> dict[str, Any]:
    """A result shaped as `run_bench` returns it: three repetitions, pwh's dispatches drifting
    5 % slower and 8 % faster than the pooled figures."""
    w = {
        name: {"n": 200, "median_ms": median, "p90_ms": p90, "per_second": round(1000 / median, 1), "peak_rss_mib": 28.5}
        for name, (median, p90) in FIGURES.items()
        if loopx or not name.startswith("loopx")
    }

    def rep(drift: float) -> dict[str, dict[str, Any]]:
        return {name: {"median_ms": e["median_ms"] * (drift if name.startswith("dispatch") else 1.0)} for name, e in w.items()}

    found = ratios(w)
    return {
        "workloads": w,
        "ratios": found,
        "ratio_spread": ratio_spread([rep(1.05), rep(1.0), rep(0.92)]),
        "targets": judge_targets(found),
        "breakdown": breakdown(w),
        "checks": checks_cost(w),
    }


@pytest.fixture
def plot() -> Any:
    pytest.importorskip("matplotlib", reason="the figure needs the plot extra: pip install -e '.[plot]'")
    from pwh._bench import plot

    return plot


def parse(svg: bytes) -> ET.Element:
    """The SVG with its comments kept: matplotlib draws text as paths and writes each string as a
    comment beside it."""
    return ET.fromstring(svg, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))


def by_id(root: ET.Element, gid: str) -> ET.Element:
    found = root.find(f".//*[@id='{gid}']")
    assert found is not None, f"no element with id {gid!r} in the figure"
    return found


def texts(element: ET.Element) -> list[str]:
    return [(node.text or "").strip() for node in element.iter() if node.tag is ET.Comment]


def marker_positions(line: ET.Element) -> list[tuple[float, float]]:
    """The (x, y) of each marker of a plotted line, in SVG units (y grows downwards)."""
    return [(float(use.get("x", "nan")), float(use.get("y", "nan"))) for use in line.iter(f"{SVG}use")]


def path_ys(element: ET.Element) -> set[float]:
    return {round(float(y), 3) for path in element.iter(f"{SVG}path") for y in re.findall(r"[ML] [-\d.]+ ([-\d.]+)", path.get("d", ""))}


def test_the_svg_holds_every_series_and_target(plot: Any) -> None:
    root = parse(plot.render_plot(bench_result(), "svg", **FOOTER))
    for gid in ("reference-durable", "reference-memory", "skeleton", "loopx", "floor-hooks", "reference-journal", "floor-journal"):
        by_id(root, gid)
    for gid in ("reference-durable-p90", "reference-journal-p90"):  # the spread of the calls
        by_id(root, gid)
    assert len(marker_positions(by_id(root, "reference-durable"))) == 3 and len(marker_positions(by_id(root, "loopx"))) == 2
    assert list(TARGETS) == ["vs_skeleton_1_hook", "vs_skeleton_8_hooks", "growth_1e3_to_1e6", "loopx_warm_command_s"]
    for key in DRAWN:
        by_id(root, f"target-{key}")
        by_id(root, f"ratio-{key}")
        by_id(root, f"ratio-spread-{key}")  # the range over the repetitions
    for key in ("vs_floor", "vs_loopx_1_hook", "vs_loopx_8_hooks", "loopx_warm_command_s"):  # no target, or not a ratio
        assert root.find(f".//*[@id='target-{key}']") is None
    growth_limit = by_id(root, "limit-growth_1e3_to_1e6")
    assert any("growth limit ≤ 1.2× the 10³ time: met (1.084×)" in t for t in texts(by_id(root, "panel-journal")))
    assert path_ys(growth_limit)


def test_each_target_is_labelled_met_or_missed_from_the_results_own_verdict(plot: Any) -> None:
    result = bench_result()
    assert {k: v["met"] for k, v in result["targets"].items()} == {
        "vs_skeleton_1_hook": True,
        "vs_skeleton_8_hooks": False,
        "growth_1e3_to_1e6": True,
        "loopx_warm_command_s": True,
    }
    root = parse(plot.render_plot(result, "svg", **FOOTER))
    shown = {key: " ".join(texts(by_id(root, f"verdict-{key}"))) for key in DRAWN}
    assert shown["vs_skeleton_1_hook"].startswith("≥ 0.75: met") and "reps " in shown["vs_skeleton_1_hook"]
    assert shown["vs_skeleton_8_hooks"].startswith("≥ 0.75: MISSED")
    assert shown["growth_1e3_to_1e6"].startswith("≤ 1.2: met")
    result["targets"]["vs_skeleton_1_hook"] = {**result["targets"]["vs_skeleton_1_hook"], "met": False}  # the result's own verdict decides
    missed = parse(plot.render_plot(result, "svg", **FOOTER))
    assert " ".join(texts(by_id(missed, "verdict-vs_skeleton_1_hook"))).startswith("≥ 0.75: MISSED")


def test_without_loopx_its_series_reads_not_measured(plot: Any) -> None:
    root = parse(plot.render_plot(bench_result(loopx=False), "svg", **FOOTER))
    assert root.find(".//*[@id='loopx']") is None
    # (an SVG comment may not hold "--", so matplotlib writes "- -")
    assert texts(by_id(root, "loopx-not-measured")) == ["LoopX not measured (run with - -compare loopx)"]
    assert parse(plot.render_plot(bench_result(), "svg", **FOOTER)).find(".//*[@id='loopx-not-measured']") is None


def test_the_x_axes_are_log_scaled_at_the_measured_values(plot: Any) -> None:
    root = parse(plot.render_plot(bench_result(), "svg", **FOOTER))
    hooks = [x for x, _ in marker_positions(by_id(root, "reference-durable"))]  # 1, 8, 32 hooks
    records = [x for x, _ in marker_positions(by_id(root, "reference-journal"))]  # 10^3, 10^5, 10^6
    # Evenly spaced categories would make both 1; a linear axis 7/24 and 99/900.
    assert (hooks[1] - hooks[0]) / (hooks[2] - hooks[1]) == pytest.approx(math.log(8) / math.log(32 / 8), rel=1e-3)
    assert (records[1] - records[0]) / (records[2] - records[1]) == pytest.approx(2.0, rel=1e-3)
    journal_labels = texts(by_id(root, "panel-journal"))
    for power in (3, 4, 5, 6):
        assert f"$\\mathdefault{{10^{{{power}}}}}$" in journal_labels
    assert {"1", "8", "32", "hooks installed (log scale)"} <= set(texts(by_id(root, "panel-hooks")))


def test_the_time_panels_share_one_log_y_axis_in_ms(plot: Any) -> None:
    root = parse(plot.render_plot(bench_result(), "svg", **FOOTER))
    ys = [y for _, y in marker_positions(by_id(root, "reference-durable"))]
    medians = [FIGURES[f"dispatch_{n}_durable"][0] for n in ("1_hook", "8_hooks", "32_hooks")]
    assert (ys[0] - ys[1]) / (ys[1] - ys[2]) == pytest.approx(
        math.log(medians[1] / medians[0]) / math.log(medians[2] / medians[1]), rel=1e-3
    )
    assert path_ys(by_id(root, "floor-hooks")) == path_ys(by_id(root, "floor-journal"))  # one floor, at one height in both
    for panel in ("panel-hooks", "panel-journal"):
        labels = texts(by_id(root, panel))
        assert {"0.5", "1", "2", "5", "10"} <= set(labels) and "time per dispatch (ms, log scale)" in texts(by_id(root, "panel-hooks"))


def test_the_footer_gives_date_and_machine_and_nothing_private(plot: Any) -> None:
    import getpass
    import socket

    description = plot.machine_description()
    assert re.fullmatch(r"(\d+|\?) cores, \S+ ?\S*", description), description
    root = parse(plot.render_plot(bench_result(), "svg", measured="2025-06-01", machine=description))
    footer = " ".join(texts(by_id(root, "footer")))
    assert footer == f"measured 2025-06-01 (UTC) · {description}"
    for private in (socket.gethostname(), getpass.getuser(), str(Path.home())):
        assert private not in footer


def test_two_renders_of_one_result_are_byte_identical(plot: Any) -> None:
    for fmt in ("svg", "png"):
        assert plot.render_plot(bench_result(), fmt, **FOOTER) == plot.render_plot(bench_result(), fmt, **FOOTER)


def test_a_result_loaded_from_its_json_renders_as_the_one_measured(plot: Any) -> None:
    loaded = json.loads(json.dumps(bench_result(), indent=2, sort_keys=True))  # as `pwh bench --json` writes it
    assert plot.render_plot(loaded, "svg", **FOOTER) == plot.render_plot(bench_result(), "svg", **FOOTER)


def test_the_png_is_a_png_of_the_figures_size(plot: Any) -> None:
    png = plot.render_plot(bench_result(), "png", **FOOTER)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (1875, 1350)  # 12.5 x 9 inches at 150 dpi
    from PIL import Image  # matplotlib's own dependency

    with Image.open(__import__("io").BytesIO(png)) as image:
        image.verify()


def test_the_cli_writes_the_figure_it_is_asked_for(plot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pwh._bench.measure as measure
    from pwh._cli import main

    monkeypatch.setattr(measure, "run_bench", lambda plan, base, out: bench_result())  # where _bench looks it up
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1748736000")  # 2025-06-01
    # --gate no: the figure is drawn from the dispatcher figures (run_bench, stubbed above); the whole
    # gate runs `pwh bench` also times by default (minutes) would add nothing to it.
    assert main(["bench", "--quick", "--gate", "no", "--plot", str(tmp_path / "out" / "bench.svg"), "--dir", str(tmp_path)]) == 0
    root = parse((tmp_path / "out" / "bench.svg").read_bytes())
    assert " ".join(texts(by_id(root, "footer"))).startswith("measured 2025-06-01 (UTC) · ")
    assert "quick run, 2 repetitions" in " ".join(texts(by_id(root, "footer")))
    assert main(["bench", "--quick", "--gate", "no", "--plot", str(tmp_path / "bench.PNG"), "--dir", str(tmp_path)]) == 0
    assert (tmp_path / "bench.PNG").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- refusals before any measuring (these need no matplotlib) ------------------------------------


def run_cli(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)


def test_without_matplotlib_plot_is_refused_up_front_naming_the_extra(tmp_path: Path) -> None:
    target = tmp_path / "bench.svg"
    code = (
        "import sys\n"
        "sys.modules['matplotlib'] = None  # as if the plot extra were not installed\n"
        "from pwh._cli import main\n"
        f"sys.exit(main(['bench', '--quick', '--plot', {json.dumps(str(target))}]))\n"
    )
    done = run_cli(code, tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr == "pwh: error: --plot needs matplotlib, the plot extra: pip install -e '.[plot]'\n"
    assert "pwh bench:" not in done.stdout and "rep 1/" not in done.stdout  # nothing was measured
    assert not target.exists()


@pytest.mark.parametrize("name", ["bench.pdf", "bench", "bench.svg.txt"])
def test_a_plot_path_that_is_neither_svg_nor_png_is_refused(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pwh._cli import main

    assert main(["bench", "--quick", "--plot", str(tmp_path / name)]) == 2
    assert capsys.readouterr().err == "pwh: error: --plot writes SVG or PNG: give a path ending in .svg or .png\n"


def test_a_plot_path_that_is_a_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pwh._cli import main

    (tmp_path / "figure.svg").mkdir()
    assert main(["bench", "--quick", "--plot", str(tmp_path / "figure.svg")]) == 2
    assert "is a directory; name a file" in capsys.readouterr().err
