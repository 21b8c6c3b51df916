"""`pwh gate` end to end: the reference passes every row and the outputs have the promised shapes
(every broken adapter failing on its row is tests/whole_gate/test_gate_mutants.py, and the runs of
other SUTs tests/whole_gate/test_gate_hollow.py: files of their own, so the test command's workers
share the work)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
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
# The canonical copy without a byte budget (issue 35: most copies have none, and counting was most
# of their cost) repeats the counted copy's refusals, which the matrix reaches only through values a
# budget bounds; with the runner's wake no longer sent by the dispatcher: 90.0 % measured.
# The uncounted copy takes plain leaves (ASCII text, 64-bit integers, None, booleans) inline, in a
# dict and in a list alike: each kind of leaf in each kind of container is a branch, and the matrix's
# values do not hold every pairing (a boolean in a list); tests/core/test_identity.py holds the copy
# to the path-naming one over every kind: 89.0 % measured.
BRANCH_FLOOR = 88.5


@pytest.fixture(scope="module")
def covered_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole reference gate again, under coverage (one child, so about twice the CPU of the
    sharded run above): what the matrix alone reaches of the reference."""
    out = tmp_path_factory.mktemp("covered")
    proc = gate("--coverage", "--json", str(out / "v.json"), "--report", str(out / "r.md"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    return out


# The whole gate under coverage would be the test command's single longest run (about 30 CPU-seconds);
# the test command holds the reference to every row without it (test_reference_passes_every_row),
# and CI's extended tier holds the matrix to this floor on every commit.
@pytest.mark.extended
def test_matrix_alone_covers_the_branch_floor_and_names_the_rest(covered_run: Path) -> None:
    from pwh._harness.coverage_notes import OUTSIDE_RFC

    out = covered_run
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
