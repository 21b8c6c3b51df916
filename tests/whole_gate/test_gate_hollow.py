"""`pwh gate` end to end, the runs besides the reference's own: a SUT the gate cannot load or a row it
does not know, the hollow adapters (only what touched the implementation counts for it) and a
profile-only difference. A file apart from tests/whole_gate/test_gate.py (the reference's whole run,
with coverage: the longest file of the test command), so the command's two workers share the work."""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pwh import RULE_IDS
from pwh._harness.rules import RULES_BY_ID
from tests.whole_gate.test_gate import gate


def test_unknown_sut_is_a_clear_error() -> None:
    proc = gate("--sut", "no_such_module_xyz:factory", "--rows", "M01")
    assert proc.returncode == 1 or proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr


def test_unknown_row_is_a_usage_error() -> None:
    proc = gate("--rows", "M99")
    assert proc.returncode == 2 and "unknown row" in proc.stderr and "Traceback" not in proc.stderr


# -- only what touched the implementation counts for it (issue 15) ------------------------------


def _run_json(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:  # type: ignore[type-arg]
    target = tmp_path / "v.json"
    proc = gate(*args, "--json", str(target), "--cucumber", str(tmp_path / "c.json"))
    return proc, json.loads(target.read_text()) if target.exists() else {}


@pytest.fixture(scope="module")
def hollow_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[subprocess.CompletedProcess[str], dict, Path]]:  # type: ignore[type-arg]
    """Each hollow adapter's whole run: (the command, its verdict, the folder with its cucumber file)."""

    def one(name: str) -> tuple[str, tuple[subprocess.CompletedProcess[str], dict, Path]]:  # type: ignore[type-arg]
        folder = tmp_path_factory.mktemp(name)
        return name, (*_run_json(folder, "--sut", f"tests.hollow_suts:{name}"), folder)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, ["raises", "unsupported"]))


@pytest.mark.parametrize("name", ["raises", "unsupported"])
def test_an_adapter_that_never_answers_passes_no_row(hollow_runs, name: str) -> None:  # type: ignore[no-untyped-def]
    proc, verdict, _ = hollow_runs[name]
    assert verdict, proc.stdout[-2000:] + proc.stderr[-2000:]
    passed = [row for row, r in verdict["rows"].items() if r["rfc"] == "pass" or r["passed"]]
    assert passed == [], f"{name} passed {passed} without the SUT answering"
    assert all(s["counts_for"] == "testbed" for s in verdict["scenarios"] if s["rfc"] == "pass")
    assert verdict["summary"]["verdict"] != "pass" and proc.returncode != 0
    assert verdict["summary"]["self_checks"]["failed"] == 0  # the fakes themselves are fine


def test_an_adapter_that_expresses_nothing_is_incomplete_with_exit_3(hollow_runs) -> None:  # type: ignore[no-untyped-def]
    proc, verdict, _ = hollow_runs["unsupported"]
    assert verdict["summary"]["verdict"] == "incomplete" and proc.returncode == 3
    assert "verdict: INCOMPLETE" in proc.stdout


def test_an_adapter_whose_every_call_raises_fails(hollow_runs) -> None:  # type: ignore[no-untyped-def]
    proc, verdict, _ = hollow_runs["raises"]
    assert verdict["summary"]["verdict"] == "fail" and proc.returncode == 1
    assert all(verdict["rows"][r]["rfc"] == "fail" for r in RULE_IDS if RULES_BY_ID[r].group == "matrix")


def test_cucumber_marks_skipped_scenarios_skipped_with_the_reason(hollow_runs) -> None:  # type: ignore[no-untyped-def]
    """The unsupported adapter's whole run (every M01 scenario skipped by the SUT; seed-003 rows
    are the fakes' own and run)."""
    proc, verdict, folder = hollow_runs["unsupported"]
    cucumber = json.loads((folder / "c.json").read_text())
    elements = [e for f in cucumber for e in f["elements"] if any(t["name"] == "@M01" for t in e["tags"])]
    assert elements and all(s["result"]["status"] == "skipped" for e in elements for s in e["steps"])
    assert all("skipped: unsupported by the SUT" in e["description"] for e in elements)
    assert any("error_message" in s["result"] for e in elements for s in e["steps"])


def test_a_profile_only_difference_passes_the_rfc_and_is_reported(tmp_path: Path) -> None:
    proc, verdict = _run_json(tmp_path, "--sut", "tests.hollow_suts:renamed_codes", "--rows", "M03,M04")
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert verdict["summary"]["verdict"] == "pass" and verdict["summary"]["profile"] == "divergence"
    assert verdict["rows"]["M03"]["profile"] == "divergence" and verdict["rows"]["M03"]["rfc"] == "pass"
    divergent = [s for s in verdict["scenarios"] if s["profile"] == "divergence"]
    assert divergent and all(s["rfc"] == "pass" and s["divergences"] for s in divergent)
    assert any("x_source_not_committed" in d["seen"] for s in divergent for d in s["divergences"])
    assert "RFC pass, profile divergence: expected the dispatch not admitted, with code source_not_committed" in proc.stdout
    assert "SUT: tests.hollow_suts:renamed_codes (rows M03, M04 only)" in proc.stdout  # a partial run says so
    assert "these rows only: " in proc.stdout and "M03 " in proc.stdout and "\nM05 " not in proc.stdout
    strict = gate("--sut", "tests.hollow_suts:renamed_codes", "--rows", "M03", "--fail-on-profile")
    assert strict.returncode == 1


@pytest.mark.parametrize(
    ("scenario", "counts_for"),
    [
        ({"tags": ["M01"], "outcome": "passed", "judgement": {"reached": True, "judged_sut": True}}, "sut"),
        ({"tags": ["M01"], "outcome": "passed", "judgement": {"reached": True, "judged_sut": False}}, "testbed"),
        ({"tags": ["M01"], "outcome": "passed"}, "testbed"),
        ({"tags": ["PRV-1"], "outcome": "passed", "judgement": {"reached": True, "judged_sut": True}}, "testbed"),
        ({"tags": ["HST-2"], "outcome": "failed", "failed_about": "sut", "judgement": {"reached": True}}, "sut"),
        ({"tags": ["M07"], "outcome": "failed", "failed_about": "testbed", "judgement": {"reached": True}}, "testbed"),
        ({"tags": ["M07"], "outcome": "failed", "judgement": {"reached": False}}, "testbed"),
        ({"tags": ["M07"], "outcome": "failed", "judgement": {"reached": True}}, "sut"),
        ({"tags": ["M07"], "outcome": "skipped"}, "sut"),
    ],
)
def test_whom_a_scenario_counts_for(scenario: dict, counts_for: str) -> None:  # type: ignore[type-arg]
    from pwh._harness.gate import judge_scenario

    assert judge_scenario({"id": "x", **scenario})["counts_for"] == counts_for


def test_the_world_judged_the_sut_only_when_it_answered_and_a_check_read_it(tmp_path: Path) -> None:
    from fakes._world import World
    from pwh import load_sut
    from pwh._harness.expect import expect

    silent = World(load_sut("reference"), tmp_path / "a")
    try:
        expect(True, "a check of the SUT", "-", rfc="§12.M04")
        assert not silent.judged_sut()  # a check, but the SUT answered nothing
    finally:
        silent.close()
    world = World(load_sut("reference"), tmp_path / "b")
    try:
        world.ensure_generic_kind()
        expect(True, "a check of the fakes", "-", rfc="seed003.lifecycle", about="testbed")
        assert not world.judged_sut()  # the SUT answered, but only the testbed was judged
        expect(True, "a check of the SUT", "-", rfc="§12.M04")
        assert world.judged_sut() and world.judgement()["reached"]
    finally:
        world.close()
