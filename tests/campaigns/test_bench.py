"""`pwh bench` machinery at toy scale: workloads run in children and ratios follow their definitions
(the figures themselves are read from `pwh bench`, never asserted here)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pwh._bench.gate import GateTiming, gate_figures, render_gate
from pwh._bench.measure import run_child, summarise
from pwh._bench.report import breakdown, checks_cost, judge_targets, ratio_spread, ratios, render_table
from pwh._bench.workloads import BY_NAME, COUNTERPARTS, make_sut, prefill, receipt, skeleton_dispatcher
from pwh._core.journal import SQLiteJournal


def test_summary_statistics() -> None:
    s = summarise([0.001] * 9 + [0.010])
    assert s["median_ms"] == 1.0 and s["p90_ms"] == 1.0 and s["n"] == 10
    assert s["per_second"] == round(10 / 0.019, 1)


def test_ratios_follow_their_definitions() -> None:
    w = {
        "dispatch_1_hook_durable": {"median_ms": 1.0},
        "floor_sqlite_commit": {"median_ms": 0.5},
        "loopx_1_hook_durable": {"median_ms": 20.0},
        "dispatch_8_hooks_durable": {"median_ms": 3.0},
        "skeleton_1_hook_durable": {"median_ms": 0.8},
        "prefilled_1e3_durable": {"median_ms": 1.0},
        "prefilled_1e6_durable": {"median_ms": 1.1},
        "loopx_warm_command": {"median_ms": 612.0},
    }
    r = ratios(w)  # type: ignore[arg-type]
    assert r == {
        "vs_skeleton_1_hook": 0.8,
        "vs_skeleton_8_hooks": None,
        "growth_1e3_to_1e6": 1.1,
        "vs_floor": 0.5,
        "vs_loopx_1_hook": 20.0,
        "vs_loopx_8_hooks": None,
        "loopx_warm_command_s": 0.612,
    }


def test_one_stall_of_the_machine_does_not_decide_a_ratio() -> None:
    floor = summarise([0.0005] * 99 + [0.3])  # one 0.3 s pause among a hundred 0.5 ms commits
    ours = summarise([0.001] * 100)
    assert floor["per_second"] < ours["per_second"]  # calls over total time: "faster than the floor"
    assert ratios({"dispatch_1_hook_durable": ours, "floor_sqlite_commit": floor})["vs_floor"] == 0.5


def test_targets_are_judged_from_the_ratios() -> None:
    found = {"vs_skeleton_1_hook": 0.74, "vs_skeleton_8_hooks": 0.75, "growth_1e3_to_1e6": 1.21, "vs_floor": 0.5, "vs_loopx_1_hook": 19.9}
    judged = judge_targets({**found, "vs_loopx_8_hooks": None, "loopx_warm_command_s": None})
    assert {k: v["met"] for k, v in judged.items()} == {  # vs_floor and the LoopX ratios: measured, no target
        "vs_skeleton_1_hook": False,
        "vs_skeleton_8_hooks": True,
        "growth_1e3_to_1e6": False,
        "loopx_warm_command_s": None,
    }
    assert judge_targets({"loopx_warm_command_s": 1.0})["loopx_warm_command_s"] == {"target": "<= 1", "value": 1.0, "met": True}
    assert judge_targets({"loopx_warm_command_s": 1.01})["loopx_warm_command_s"]["met"] is False
    table = render_table({"workloads": {}, "ratios": {**found, "loopx_warm_command_s": None}})
    assert "vs_skeleton_1_hook   0.74" in table and "target >= 0.75 MISSED" in table and "not measured" in table
    assert "vs_loopx_1_hook      19.9" in table and "target >= 20" not in table


def test_a_workload_runs_in_a_child_and_reports_memory(tmp_path: Path) -> None:
    result = run_child("dispatch_8_hooks_memory", 5, tmp_path)
    assert len(result["times"]) == 5 and result["peak_rss_kib"] > 0
    assert list(tmp_path.iterdir()) == []  # the child's work dir is removed


def test_a_childs_peak_memory_is_its_own_not_its_parents(tmp_path: Path) -> None:
    ballast = bytearray(300 * 1024 * 1024)  # the parent is now far bigger than any workload
    ballast[::4096] = b"x" * len(ballast[::4096])  # touch every page so it is resident
    result = run_child("floor_sqlite_commit", 5, tmp_path)
    del ballast
    assert 0 < result["peak_rss_kib"] < 200 * 1024


def test_prefill_writes_valid_records(tmp_path: Path) -> None:
    path = tmp_path / "sidecar.sqlite3"
    prefill(path, 50)
    journal = SQLiteJournal(path)
    records = journal.records()  # checksums verify, keys match
    journal.close()
    assert len(records) == 50 and len({r["dispatch_id"] for r in records}) == 50


def test_the_table_renders() -> None:  # the figure (the plot extra) is tested in test_bench_plot.py
    w = {"dispatch_1_hook_durable": {"n": 3, "median_ms": 1.0, "p90_ms": 2.0, "per_second": 900.0, "peak_rss_mib": 30.0}}
    result = {"workloads": w, "ratios": ratios(w)}  # type: ignore[arg-type]
    assert "dispatch_1_hook_durable" in render_table(result)


def test_the_breakdown_splits_a_durable_dispatch_into_its_measured_parts() -> None:
    w = {
        "dispatch_1_hook_durable": {"median_ms": 1.0},
        "dispatch_1_hook_memory": {"median_ms": 0.4},
        "floor_sqlite_commit": {"median_ms": 0.45},
        "handoff_after_idle": {"median_ms": 0.15},
    }
    parts = breakdown(w)
    assert parts == {
        "durable_dispatch_ms": 1.0,
        "in_memory_dispatch_ms": 0.4,
        "process_handoff_ms": 0.15,
        "commit_added_ms": 0.6,
        "commit_floor_ms": 0.45,
    }
    assert breakdown({k: v for k, v in w.items() if k != "handoff_after_idle"}) is None
    table = render_table({"workloads": {}, "ratios": {}, "breakdown": parts})
    assert (
        "1 hook durable 1.000 ms = in memory 0.400 (of which the process hand-off alone 0.150) + the durable commit 0.600 (raw floor 0.450)"
        in table
    )


def test_the_hand_off_workload_times_real_thread_round_trips(tmp_path: Path) -> None:
    result = run_child("handoff_after_idle", 5, tmp_path)
    assert len(result["times"]) == 5 and all(0 < t < 1.0 for t in result["times"])


def test_each_ratio_is_also_taken_within_each_repetition() -> None:
    def rep(ours: float, floor: float, growth_at_1e6: float | None) -> dict[str, dict[str, float]]:
        out = {
            "dispatch_1_hook_durable": {"median_ms": 1000 / ours},
            "floor_sqlite_commit": {"median_ms": 1000 / floor},
            "prefilled_1e3_durable": {"median_ms": 1.0},
        }
        if growth_at_1e6 is not None:
            out["prefilled_1e6_durable"] = {"median_ms": growth_at_1e6}
        return out

    spread = ratio_spread([rep(900.0, 1800.0, 1.1), rep(1000.0, 1600.0, None), rep(800.0, 2000.0, None)])
    assert spread == {
        "vs_skeleton_1_hook": None,
        "vs_skeleton_8_hooks": None,
        "growth_1e3_to_1e6": [1.1, 1.1],
        "vs_floor": [0.4, 0.625],
        "vs_loopx_1_hook": None,
        "vs_loopx_8_hooks": None,
        "loopx_warm_command_s": None,
    }
    table = render_table({"workloads": {}, "ratios": {"vs_floor": 0.5, "growth_1e3_to_1e6": 1.1}, "ratio_spread": spread})
    assert "vs_floor             0.5 (reps 0.4–0.625)" in table
    assert "growth_1e3_to_1e6    1.1 " in table and "(reps 1.1" not in table  # one value: no range shown


def test_the_skeleton_commits_exactly_what_the_reference_commits(tmp_path: Path) -> None:
    """The skeleton drops the checks, nothing else: the same records reach the same journal, so
    the difference between the two workloads is what the checks cost."""
    (tmp_path / "ref").mkdir()
    (tmp_path / "bare").mkdir()
    sut = make_sut(8, "sqlite", tmp_path / "ref")
    dispatch, close = skeleton_dispatcher(8, tmp_path / "bare")
    for n in range(3):
        assert sut.dispatch(receipt(n)).hooks[0].status == "proposed"
        dispatch(receipt(n))
    sut.close()
    close()
    stored = [SQLiteJournal(path / "sidecar.sqlite3") for path in (tmp_path / "ref", tmp_path / "bare")]
    ours, bare = (journal.records() for journal in stored)
    for journal in stored:
        journal.close()
    assert len(ours) == 24 and bare == ours


def test_the_skeleton_workload_runs_in_a_child(tmp_path: Path) -> None:
    result = run_child("skeleton_8_hooks_durable", 5, tmp_path)
    assert len(result["times"]) == 5 and all(0 < t < 1.0 for t in result["times"])


def test_each_dispatch_is_paired_with_its_own_skeleton_and_loopx_workload() -> None:
    assert COUNTERPARTS
    for row in COUNTERPARTS:
        dispatch, skeleton, loopx = (BY_NAME[name] for name in row)
        assert (dispatch.kind, skeleton.kind, loopx.kind) == ("dispatch", "skeleton", "loopx")
        assert dispatch.hooks == skeleton.hooks == loopx.hooks and dispatch.journal == "sqlite"


def test_the_checks_cost_is_the_dispatch_minus_the_skeleton() -> None:
    w = {
        "dispatch_1_hook_durable": {"median_ms": 1.0},
        "skeleton_1_hook_durable": {"median_ms": 0.6},
        "dispatch_8_hooks_durable": {"median_ms": 2.5},
        "skeleton_8_hooks_durable": {"median_ms": 1.0},
        "floor_sqlite_commit": {"median_ms": 0.48},
        "loopx_8_hooks_durable": {"median_ms": 80.0},
    }
    cost = checks_cost(w)
    assert cost == {
        "checks_1_hook_ms": 0.4,
        "checks_8_hooks_ms": 1.5,
        "skeleton_ratios": {"vs_floor": 0.8, "vs_loopx_1_hook": None, "vs_loopx_8_hooks": 80.0},
    }
    assert ratios(w)["vs_floor"] == 0.48  # the real ratios still come from the dispatch itself
    assert checks_cost({k: v for k, v in w.items() if k != "skeleton_8_hooks_durable"}) is None
    table = render_table({"workloads": {}, "ratios": {}, "checks": cost})
    assert (
        "the RFC's checks cost 0.400 ms of a 1-hook dispatch and 1.500 ms of an 8-hook one; without any (the skeleton): vs_floor 0.8, vs_loopx_8_hooks 80"
        in table
    )


def test_each_dispatch_runs_back_to_back_with_its_skeleton_then_loopx(monkeypatch, tmp_path: Path) -> None:
    import pwh._bench.measure as measure

    ran: list[str] = []

    def fake_child(name: str, n: int, base: Path) -> dict[str, object]:
        ran.append(name)
        return {"times": [0.001 * (2 if name.startswith("dispatch") else 1)] * 3, "peak_rss_kib": 1024}

    monkeypatch.setattr(measure, "run_child", fake_child)  # where run_bench looks it up
    result = measure.run_bench(measure.BenchPlan(quick=True, compare_loopx=True), tmp_path, out=lambda line: None)
    first = ran[: ran.index("floor_sqlite_commit", 1)]  # one repetition
    for hooks in ("1_hook", "8_hooks"):
        at = first.index(f"dispatch_{hooks}_durable")
        assert first[at : at + 3] == [f"dispatch_{hooks}_durable", f"skeleton_{hooks}_durable", f"loopx_{hooks}_durable"]
    assert first[-1] == "loopx_warm_command"  # LoopX's own primary command, through the warm interpreter
    assert result["checks"]["checks_1_hook_ms"] == 1.0 and result["ratios"]["vs_loopx_1_hook"] == 0.5
    assert result["ratios"]["vs_skeleton_1_hook"] == 0.5 and result["ratios"]["loopx_warm_command_s"] == 0.001


def test_the_breakdown_says_what_the_process_boundary_costs() -> None:
    w = {
        "dispatch_1_hook_durable": {"median_ms": 1.0},
        "dispatch_1_hook_memory": {"median_ms": 0.4},
        "floor_sqlite_commit": {"median_ms": 0.45},
        "handoff_after_idle": {"median_ms": 0.12},
        "thread_dispatch_1_hook_durable": {"median_ms": 0.9},
        "thread_handoff_after_idle": {"median_ms": 0.04},
    }
    parts = breakdown(w)
    assert parts is not None and parts["isolation_cost_ms"] == 0.1 and parts["thread_handoff_ms"] == 0.04
    table = render_table({"workloads": {}, "ratios": {}, "breakdown": parts})
    assert "the process boundary costs +0.100 ms per 1-hook durable dispatch: 1.000 against 0.900 with the thread runner" in table


def test_the_isolation_a_b_runs_both_runners_in_one_process() -> None:
    from pwh._bench.workloads import isolation_ab

    found = isolation_ab("memory", blocks=1, per_block=3)
    assert set(found) == {"process_median_ms", "thread_median_ms", "boundary_cost_ms"}
    assert found["process_median_ms"] > 0 and found["thread_median_ms"] > 0


def test_the_runner_ab_is_a_bench_option(capsys: pytest.CaptureFixture[str]) -> None:
    from pwh._cli import main

    assert main(["bench", "--ab", "memory"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert set(shown) == {"process_median_ms", "thread_median_ms", "boundary_cost_ms"}
    assert shown["process_median_ms"] > 0 and shown["thread_median_ms"] > 0


# -- the whole gate's figures (pwh/_bench/gate.py), with a stub for the gate: no gate runs here -------


def _stub_gate(seconds: dict[str, list[float]], exit_code: int = 0) -> Callable[[str], GateTiming]:
    left = {sut: list(times) for sut, times in seconds.items()}

    def run(sut: str) -> GateTiming:
        return GateTiming(left[sut].pop(0), exit_code)

    return run


def test_the_gate_figures_are_medians_judged_against_10_and_30_seconds() -> None:
    lines: list[str] = []
    gate = gate_figures(
        reps=3,
        runner=_stub_gate({"reference": [9.0, 12.5, 7.25], "loopx": [31.0, 29.0, 40.0]}),
        loopx_reason=lambda: None,
        out=lines.append,
    )
    assert set(gate) == {"jobs", "cores", "suts"} and gate["jobs"] >= 1
    assert gate["suts"] == {
        "reference": {"target_s": 10.0, "seconds": 9.0, "runs": [9.0, 12.5, 7.25], "met": True},
        "loopx": {"target_s": 30.0, "seconds": 31.0, "runs": [31.0, 29.0, 40.0], "met": False},
    }
    assert len(lines) == 6  # one progress line a run
    table = render_table({"workloads": {}, "ratios": {}, "gate": gate})
    assert "gate_reference" in table and "target <= 10 s met" in table
    assert "gate_loopx" in table and "target <= 30 s MISSED" in table


def test_loopx_not_installed_is_reported_as_not_measured_with_the_reason() -> None:
    gate = gate_figures(reps=2, runner=_stub_gate({"reference": [3.0, 4.0]}), loopx_reason=lambda: "no loopx here", out=lambda _: None)
    assert gate["suts"]["loopx"] == {"target_s": 30.0, "seconds": None, "runs": [], "met": None, "reason": "no loopx here"}
    assert gate["suts"]["reference"]["seconds"] == 3.5
    assert "n/a (not measured: no loopx here)" in "\n".join(render_gate(gate))


def test_a_gate_that_could_not_run_is_not_measured() -> None:
    gate = gate_figures(
        reps=2,
        runner=_stub_gate({"reference": [1.0, 1.0], "loopx": [1.0, 1.0]}, exit_code=2),
        loopx_reason=lambda: None,
        out=lambda _: None,
    )
    assert all(fig["met"] is None and fig["reason"] == "the gate could not run (exit 2)" for fig in gate["suts"].values())


def test_bench_gate_only_writes_the_gate_figures_beside_empty_dispatcher_ones(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pwh._bench import gate as bench_gate
    from pwh._cli import main

    monkeypatch.setattr(bench_gate, "time_gate", _stub_gate({"reference": [8.0], "loopx": [20.0]}))
    monkeypatch.setattr(bench_gate, "loopx_missing", lambda: None)
    out = tmp_path / "bench.json"
    assert main(["bench", "--quick", "--gate", "only", "--json", str(out)]) == 0
    result = json.loads(out.read_text("utf-8"))
    assert result["workloads"] == {} and result["ratios"] == {}
    assert {sut: (fig["seconds"], fig["met"]) for sut, fig in result["gate"]["suts"].items()} == {
        "reference": (8.0, True),
        "loopx": (20.0, True),
    }
    assert "target <= 30 s met" in capsys.readouterr().out
