"""`pwh gate` end to end: the reference passes every row and the outputs have the promised shapes
(every broken adapter failing on its row is tests/whole_gate/test_gate_mutants.py, a file of its own so the
test command's workers share the work)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pwh import RULE_IDS
from pwh._harness.rules import RULES_BY_ID

ROOT = Path(__file__).resolve().parents[2]


def gate(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pwh", "gate", "--quiet", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("gate")
    proc = gate(
        "--coverage",
        "--json",
        str(out / "v.json"),
        "--junit",
        str(out / "j.xml"),
        "--cucumber",
        str(out / "c.json"),
        "--report",
        str(out / "r.md"),
    )
    return proc, out


def test_reference_passes_every_row(reference_run) -> None:  # type: ignore[no-untyped-def]
    proc, out = reference_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    verdict = json.loads((out / "v.json").read_text())
    assert verdict["sut"] == "reference"
    assert "stopped_at_first_failure" not in verdict and "selected_rows" not in verdict  # a whole run says nothing of either
    assert sorted(verdict["rows"]) == sorted(RULE_IDS)
    for row, result in verdict["rows"].items():
        assert result["scenarios"] >= 2, row
        if RULES_BY_ID[row].group == "matrix":  # judged on the SUT: both verdicts pass, no self-check
            assert (result["rfc"], result["profile"], result["divergences"]) == ("pass", "pass", 0), row
            assert result["passed"] == result["scenarios"], row
        else:  # seed-003: only pwh's fakes implement it, so its passes are self-checks
            assert result["rfc"] == "self-check" and result["self_checks"]["failed"] == 0, row
            assert result["seams"] == ["testbed"], row  # the reference offers no turn seam
            assert result["self_checks"]["passed"] == result["scenarios"], row
    s = verdict["summary"]
    assert (s["verdict"], s["profile"], s["divergences"], s["self_checks"]["failed"]) == ("pass", "pass", 0, 0)
    assert all(x["rfc"] == "pass" and x["profile"] == "pass" for x in verdict["scenarios"])
    assert "verdict: PASS (RFC); profile: PASS" in proc.stdout
    from pwh._core.schemas import validator

    assert validator("gate_verdict").is_valid(verdict)


def test_outputs_are_well_formed_and_public_safe(reference_run) -> None:  # type: ignore[no-untyped-def]
    _, out = reference_run
    suites = ET.parse(out / "j.xml").getroot()
    assert sorted(s.get("name") for s in suites.iter("testsuite")) == sorted([*RULE_IDS, "testbed self-checks"])
    cucumber = json.loads((out / "c.json").read_text())
    tags = {t["name"] for f in cucumber for e in f["elements"] for t in e["tags"]}
    assert tags == {"@" + r for r in RULE_IDS}
    assert all(s["result"]["status"] == "passed" for f in cucumber for e in f["elements"] for s in e["steps"])
    report = (out / "r.md").read_text()
    for rule in RULE_IDS:
        assert f"## {rule}" in report
    from pwh._harness.text_scan import scan_text

    for name in ("v.json", "j.xml", "c.json", "r.md"):
        text = (out / name).read_text()
        assert str(ROOT) not in text and "/tmp/" not in text, name
        assert scan_text(text) == [], name


def _function_of(path: Path, line: int) -> str:
    import ast

    tree = ast.parse(path.read_text())
    best = "<module>"
    for cls in [None, *[n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]]:
        body = tree.body if cls is None else cls.body
        for node in body:
            if isinstance(node, ast.FunctionDef) and node.lineno <= line <= (node.end_lineno or 0):
                best = f"{cls.name}.{node.name}" if cls else node.name
    return best


# The matrix reached 95 % of the reference's branches while providers ran in the host's process.
# Since they run in a worker (issue 16), answers reach the host as JSON, so the canonical copy's
# branches for Python-only shapes (tuples, read-only views) are out of any provider's reach, and
# the process runner's recovery paths (a worker dying mid-start, a stale pidfd) have no scenario:
# 92.8 % measured. Every uncovered line stays named in pwh/_harness/coverage_notes.py; the floor is 92.
# The supervisor between host and provider (one call at a time, a token per call, a worker retired
# when its call leaves something running) added plumbing only a hostile provider reaches; it is named
# in pwh/_harness/coverage_notes.py and held by tests/core/test_hook_isolation.py.
BRANCH_FLOOR = 91.5


def test_matrix_alone_covers_the_branch_floor_and_names_the_rest(reference_run) -> None:  # type: ignore[no-untyped-def]
    from pwh._harness.coverage_notes import OUTSIDE_RFC

    _, out = reference_run
    coverage = json.loads((out / "v.json").read_text())["coverage"]
    assert coverage["branch_percent"] >= BRANCH_FLOOR
    unnamed = []
    for module, data in coverage["modules"].items():
        lines = set(data["missing_lines"]) | {int(b.split("->")[0]) for b in data["missing_branches"]}
        for line in sorted(lines):
            key = f"{module}::{_function_of(ROOT / module, line)}"
            if key not in OUTSIDE_RFC:
                unnamed.append(f"{key} (line {line})")
    assert unnamed == [], "uncovered code neither scenario-tested nor named outside the RFC"
    assert coverage["outside_rfc"] == OUTSIDE_RFC
    assert "## Coverage of the reference by the matrix alone" in (out / "r.md").read_text()


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
