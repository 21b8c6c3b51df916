"""The gate's shards (``pwh gate --jobs N``): their records merge back into the serial run's order,
and a sharded run judges exactly as one process does. Nothing here is timed: the gate's times are
`pwh bench`'s (pwh/_bench/gate.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pwh._harness.gate import _merged_payload, _merged_returncode, default_jobs, run_gate
from pwh._harness.gate_plugin import shard_of


def _record(sid: str) -> dict[str, Any]:
    return {"id": sid, "outcome": "passed"}


def test_shard_records_merge_back_in_the_order_every_shard_collected() -> None:
    collected = ["a", "b", "c", "d", "e"]
    first = {"scenarios": [_record("a"), _record("c"), _record("e")], "collected": collected, "collection_errors": ["x"]}
    second = {
        "scenarios": [_record("b"), _record("d")],
        "collected": collected,
        "collection_errors": ["x"],
        "protocol_errors": ["late", "early"],
        "protocol_error_ids": ["d", "b"],
    }
    merged = _merged_payload([first, second])
    assert [s["id"] for s in merged["scenarios"]] == collected
    assert merged["collection_errors"] == ["x"]  # every shard collects the same: said once
    assert merged["protocol_errors"] == ["early", "late"]  # in the order of their scenarios


def test_the_exit_status_is_the_worst_shards_and_an_empty_shard_is_not_a_failure() -> None:
    assert _merged_returncode([0, 5]) == 0
    assert _merged_returncode([5, 1]) == 1
    assert _merged_returncode([5, 5]) == 5
    assert _merged_returncode([0, 2]) == 2


def test_a_shard_is_i_of_n() -> None:
    assert shard_of(None) is None and shard_of("1/2") == (1, 2)
    with pytest.raises(ValueError):
        shard_of("2/2")
    assert default_jobs() >= 1


def _comparable(verdict: dict[str, Any]) -> dict[str, Any]:
    run = {k: v for k, v in verdict["run"].items() if k != "generated_at"}
    return {**verdict, "run": run}


def test_two_shards_judge_as_one_process_does_record_for_record(capsys: pytest.CaptureFixture[str]) -> None:
    rows = ["M06", "M08"]
    serial = run_gate("reference", rows=rows, progress=False, jobs=1).verdict()
    sharded = run_gate("reference", rows=rows, progress=True, jobs=2).verdict()
    assert len(serial["scenarios"]) > 2
    assert _comparable(sharded) == _comparable(serial)  # every field of every record, in the same order
    numbered = re.findall(r"^\[ *(\d+)/(\d+) +\d+ s\] ", capsys.readouterr().out, re.M)  # each line with the time so far
    total = len(serial["scenarios"])
    assert [int(n) for n, _ in numbered] == list(range(1, total + 1)) and {int(t) for _, t in numbered} == {total}


@pytest.mark.parametrize("option", ["-x", "--coverage"])
def test_jobs_beside_an_option_that_runs_in_one_process_is_refused_before_any_work(option: str, capsys: pytest.CaptureFixture[str]) -> None:
    from pwh._cli import main

    assert main(["gate", "--jobs", "2", option]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"pwh: error: --jobs 2: {option} runs the scenarios in one process (in order); drop --jobs"]


def test_the_shards_take_each_scenario_once_from_the_queue_once_the_checker_opens_it(tmp_path: Any) -> None:
    import os
    import subprocess
    import sys

    from pwh._harness.gate import Claims

    claims = Claims.create(tmp_path / "claims", 0)
    claims.checker(os.getpid())
    other = Claims(claims.path)  # another shard's view of the same file
    claims.open(refused=False)
    taken = [claims.take(), other.take(), other.take(), claims.take()]
    assert taken == [0, 1, 2, 3]  # one sequence over every shard: no index twice, none skipped

    shut = Claims.create(tmp_path / "shut", os.getpid())
    shut.open(refused=True)  # a matrix refused: no shard takes anything
    assert shut.take() is None and Claims(shut.path).take() is None

    # The checker ended without opening the queue (it crashed): the others take nothing, never wait on.
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    orphaned = Claims.create(tmp_path / "orphaned", int(gone.stdout))
    assert orphaned.take() is None


def test_the_benchs_gate_lines_say_the_cpu_seconds_and_the_load_each_run_was_timed_at() -> None:
    from pwh._bench.gate import GateTiming, gate_figures

    lines: list[str] = []
    gate = gate_figures(
        reps=1,
        runner=lambda sut: GateTiming(9.5, 0, cpu_s=17.25, load=2.5),
        loopx_reason=lambda: "not here",
        out=lines.append,
    )
    assert lines == ["  gate rep 1/1  reference     9.50 s (target 10 s, cpu 17.2 s, load 2.50)"]
    assert gate["suts"]["reference"]["runs"] == [9.5]  # the figure itself is the wall clock's, as before
    assert GateTiming(1.0, 0).cpu_s is None  # a timing without them still reads


def test_progress_says_self_for_pwh_s_own_fakes_as_the_table_does(capsys: pytest.CaptureFixture[str]) -> None:
    run_gate("reference", rows=["HST-1", "M06"], progress=True, jobs=2)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")]
    assert lines and all(re.match(r"^\[ *\d+/\d+ +\d+ s\] ", line) for line in lines), lines
    assert {line.split("] ", 1)[1].split()[1] for line in lines if " HST-1 " in line} == {"self"}, (
        lines
    )  # testbed self-checks, never "pass"
    assert {line.split("] ", 1)[1].split()[1] for line in lines if " M06 " in line} == {"pass"}, lines
