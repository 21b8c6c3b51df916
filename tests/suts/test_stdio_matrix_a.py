"""The whole matrix against the reference served over the stdio protocol (one implementation
process per harness, many instances on it): it must earn the verdict it earns in-process, every
row passed, no protocol error. Two files, so the test command's workers share it (``--dist
loadfile`` gives a file to one worker): this one runs M13, the largest row, and the seed-003 rows
(pwh's testbed; the served reference offers no turn seam); test_stdio_matrix_b.py every other row.
The writeback scenarios among them reach the served reference's writeback boundary through the
protocol's ``writeback_*`` requests (tests/suts/test_stdio_seam.py shows they can pass no other way
for an implementation not named ``reference``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pwh import RULE_IDS
from pwh._harness.rules import RULES_BY_ID

# `extended` (CI runs it after the test command): the served reference's whole matrix over the stdio protocol; tests/suts/test_stdio_seam.py runs the protocol on the writeback and seed-003 rows in the test command.
pytestmark = pytest.mark.extended

ROOT = Path(__file__).resolve().parents[2]
SERVED = "stdio:" + sys.executable + " -m pwh._suts.stdio.serve reference"
PART_A = [r for r in RULE_IDS if r == "M13" or RULES_BY_ID[r].group != "matrix"]
PART_B = [r for r in RULE_IDS if r not in PART_A]


def assert_served_reference_passes(rows: list[str], tmp_path: Path) -> dict[str, Any]:
    """``pwh gate --rows ROWS`` against the served reference: exit 0, and every row passed as the
    in-process reference passes it (tests/whole_gate/test_gate.py)."""
    out = tmp_path / "v.json"
    done = subprocess.run(
        [sys.executable, "-m", "pwh", "gate", "--sut", SERVED, "--quiet", "--rows", ",".join(rows), "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "stdio seam protocol" not in done.stderr  # no protocol error: those exit 2 with no verdict
    verdict = json.loads(out.read_text())
    assert verdict["sut"] == SERVED and verdict["selected_rows"] == rows and verdict["run"]["sut_version"]
    assert sorted(verdict["rows"]) == sorted(rows)
    for row, result in verdict["rows"].items():
        assert result["scenarios"] >= 2, row
        if RULES_BY_ID[row].group == "matrix":  # judged on the served SUT: both verdicts pass
            assert (result["rfc"], result["profile"], result["divergences"]) == ("pass", "pass", 0), row
            assert result["passed"] == result["scenarios"] and "dispatcher" in result["seams"], row
        else:  # seed-003: only pwh's fakes implement it, so its passes are self-checks
            assert result["rfc"] == "self-check" and result["self_checks"]["failed"] == 0, row
            assert result["seams"] == ["testbed"] and result["self_checks"]["passed"] == result["scenarios"], row
    s = verdict["summary"]
    assert (s["verdict"], s["profile"], s["divergences"], s["failed"], s["skipped"]) == ("pass", "pass", 0, 0, 0)
    assert all(x["rfc"] == "pass" and x["profile"] == "pass" for x in verdict["scenarios"])
    # The writeback seam crossed the protocol: every writeback scenario (features/wb_*) ran through
    # the served reference's own boundary (writeback_open and the writeback_* requests) and passed.
    writeback = [x for x in verdict["scenarios"] if x["feature"].startswith("features/wb_")]
    assert writeback and all(x["outcome"] == "passed" and x["seam"] == "writeback" for x in writeback)
    return verdict


def test_the_parts_are_the_whole_matrix() -> None:
    assert sorted(PART_A + PART_B) == sorted(RULE_IDS) and PART_A and PART_B


def test_the_served_reference_passes_m13_and_the_seed_003_rows(tmp_path: Path) -> None:
    assert_served_reference_passes(PART_A, tmp_path)
