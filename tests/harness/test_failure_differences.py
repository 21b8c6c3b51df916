"""Failures shown where they differ, in every format: a journal that rounds a big integer fails
M04 and every output names the path and both numbers; a long expected/seen pair is never cut
before its first difference (pwh/_harness/difference.py, the gate plugin and each renderer)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pwh._harness.report import cucumber_json, html_report, junit_xml, markdown_report, verdict_table

ROOT = Path(__file__).resolve().parents[2]
BIG, ROUNDED = "9007199254740993", "9007199254740992.0"

# A journal read back through a binary64 decoder: every integer a double cannot hold comes back
# rounded (what a JavaScript or a float-only JSON reader does to a record).
ROUNDING_SUT = textwrap.dedent(
    """
    from pwh import ReferenceSUT

    def _rounded(value):
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and abs(value) > 2**53:
            return float(value)
        if isinstance(value, dict):
            return {k: _rounded(v) for k, v in value.items()}
        if isinstance(value, list):
            return [_rounded(v) for v in value]
        return value

    class Rounding(ReferenceSUT):
        def journal_records(self):
            return [_rounded(r) for r in super().journal_records()]

    def factory(**kw):
        return Rounding(**kw)
    """
)


def pwh(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pwh", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL
    )


@pytest.fixture(scope="module")
def rounded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("rounding")
    (tmp / "rounding_sut.py").write_text(ROUNDING_SUT, "utf-8")
    out = {name: tmp / name for name in ("v.json", "j.xml", "c.json", "r.md")}
    proc = pwh(
        *("gate", "--sut", "rounding_sut:factory", "-k", "binary64", "--json", str(out["v.json"]), "--junit", str(out["j.xml"])),
        *("--cucumber", str(out["c.json"]), "--report", str(out["r.md"])),
        cwd=tmp,
    )
    verdict = json.loads(out["v.json"].read_text("utf-8"))
    return {"proc": proc, "verdict": verdict, "files": {k: p.read_text("utf-8") for k, p in out.items() if p.exists()}}


def test_a_rounded_big_integer_fails_m04_and_the_verdict_names_where(rounded: dict[str, Any]) -> None:
    assert rounded["proc"].returncode == 1, rounded["proc"].stdout[-2000:] + rounded["proc"].stderr[-2000:]
    failed = [s for s in rounded["verdict"]["scenarios"] if s["outcome"] == "failed" and BIG in s["params"]]
    assert failed, [s["params"] for s in rounded["verdict"]["scenarios"]]
    d = failed[0]["difference"]
    assert d["path"].endswith(".payload.score") and (d["expected"], d["seen"]) == (BIG, ROUNDED), d
    x = failed[0]
    assert len(x["expected"]) > 400 or BIG in x["expected"]  # the records are long: cut, but around the difference
    assert f'"score": {BIG}' in x["expected"] and f'"score": {ROUNDED}' in x["seen"], (x["expected"], x["seen"])


@pytest.mark.parametrize("name", ["terminal", "j.xml", "c.json", "r.md"])
def test_every_format_of_the_run_shows_both_numbers_at_their_path(rounded: dict[str, Any], name: str) -> None:
    text = rounded["proc"].stdout if name == "terminal" else rounded["files"][name]
    assert f"payload.score: expected {BIG}, seen {ROUNDED}" in text.replace("\\n", " "), text[-3000:]


def _long_failure(verdict: dict[str, Any]) -> dict[str, Any]:
    """The run's verdict with its first failure's texts 3,000 characters long before they differ,
    as a gate run cuts them (each around its first difference)."""
    from pwh._harness.difference import cut_pair

    out = copy.deepcopy(verdict)
    x = next(s for s in out["scenarios"] if s["outcome"] == "failed")
    head = "[{'intent_kind': 'a.report', 'payload': {'note': '" + "n" * 3000 + "', 'score': "
    x["expected"], x["seen"] = cut_pair(head + BIG + "}}]", head + ROUNDED + "}}]")
    for s in out["scenarios"]:
        s["divergences"] = [{"expected": x["expected"], "seen": x["seen"], "reading": "pwh's reading", "difference": x["difference"]}]
    return out


def test_no_format_cuts_a_long_pair_before_its_first_difference(rounded: dict[str, Any]) -> None:
    verdict = _long_failure(rounded["verdict"])
    x = next(s for s in verdict["scenarios"] if s["outcome"] == "failed")
    assert BIG in x["expected"] and ROUNDED in x["seen"] and x["expected"].startswith("…")
    junit = junit_xml(verdict)
    ET.fromstring(junit)
    html = html_report(verdict)
    for name, text in {
        "terminal": verdict_table(verdict),
        "markdown": markdown_report(verdict),
        "junit": junit,
        "cucumber": json.dumps(json.loads(cucumber_json(verdict)), ensure_ascii=False),
        "html": html,
    }.items():
        assert BIG in text and ROUNDED in text, name
        assert "payload.score" in text, name


def _many_failures(verdict: dict[str, Any]) -> dict[str, Any]:
    """The run's verdict with each failure copied forty times (one row failing everywhere) and a
    skip reason shared by twenty scenarios."""
    out = copy.deepcopy(verdict)
    failed = next(s for s in out["scenarios"] if s["outcome"] == "failed")
    extra = [{**copy.deepcopy(failed), "id": f"{failed['id']}~{k}", "params": f"n{k}"} for k in range(40)]
    skipped = [
        {**copy.deepcopy(failed), "id": f"skip~{k}", "outcome": "skipped", "rfc": "skip", "profile": "skip", "reason": "the SUT lacks it"}
        for k in range(20)
    ]
    for s in skipped:
        for key in ("expected", "seen", "difference", "clause", "failed_step"):
            s.pop(key, None)
    out["scenarios"] += extra + skipped
    return out


def test_the_terminal_caps_failures_per_row_and_ends_with_the_verdict(rounded: dict[str, Any]) -> None:
    verdict = _many_failures(rounded["verdict"])
    lines = verdict_table(verdict).splitlines()
    assert "verdict: FAIL (RFC)" in lines[-1]  # the last line on screen is the verdict
    shown = [line for line in lines if line.startswith("  RFC FAIL")]
    assert len(shown) == 3 and any(line == "  … 40 more in M04" for line in lines), lines
    assert [line for line in lines if "skip" in line and "20 scenarios in M04: the SUT lacks it" in line]
    full = verdict_table(rounded["verdict"]).splitlines()  # the run itself: every failure is shown
    assert len([line for line in full if line.startswith("  RFC FAIL")]) == 3 and "verdict: FAIL (RFC)" in full[-1]
    said = rounded["proc"].stdout.rstrip().splitlines()
    wrote = [line for line in said if line.startswith("wrote ")]
    assert sorted(wrote) == sorted(f"wrote {name}" for name in ("v.json", "j.xml", "c.json", "r.md"))  # each file, once, named
    assert said[-len(wrote) :] == wrote and "verdict: FAIL (RFC)" in said[-len(wrote) - 1]  # the verdict, then what was written


@pytest.mark.parametrize("option", ["--json", "--junit", "--report"])
def test_an_output_that_cannot_be_written_is_refused_before_any_scenario_runs(option: str, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("", "utf-8")
    target = "a-file/out.md" if option == "--report" else "a-file/out.json"
    done = pwh("gate", "--quiet", option, target, cwd=tmp_path)
    assert done.returncode == 2 and "running the matrix" not in done.stdout, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [f"pwh: error: {option} {target} cannot be written: a-file is not a folder"], done.stderr
