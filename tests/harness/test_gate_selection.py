"""Selection that cannot mislead: ``pwh gate`` with --failed-in, -k, -m, FEATURE:LINE and --sut,
run as a user runs it (a subprocess, judged by its output, files and exit code). A selection
that cannot be honoured is one line and exit 2 with no verdict written, never an empty or
misdirected verdict; and a seam an adapter does not offer is never named as the one judged."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tiers import beyond

ROOT = Path(__file__).resolve().parents[2]
M06 = "features/m06_conflict.feature"
M02 = "features/m02_limits.feature"  # two outlines: 8 (Examples rows 16-19) and 22
TURN_LABEL = "judged through the SUT's own turn seam"


def pwh(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pwh", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def assert_one_line_refusal(done: subprocess.CompletedProcess[str], *says: str, unwritten: Path | None = None) -> None:
    """Exit 2, one ``pwh: ...`` line on stderr saying each of ``says``, no traceback, no absolute
    path, no verdict run or written."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (done.returncode, done.stdout[-1500:], done.stderr[-1500:])
    assert len(lines) == 1 and lines[0].startswith("pwh: "), done.stderr
    assert all(s in lines[0] for s in says), (says, lines[0])
    assert "Traceback" not in done.stderr and str(ROOT) not in done.stderr and "/tmp/" not in done.stderr
    if unwritten is not None:
        assert not unwritten.exists()


def ran(out: Path) -> list[tuple[str, int, str]]:
    verdict = json.loads(out.read_text("utf-8"))
    return [(s["feature"], s["line"], s.get("params", "")) for s in verdict["scenarios"]]


# -- 1. --failed-in reruns the verdict's own SUT; a file never chooses code to run ----------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A one-scenario verdict (M06's conflict scenario, reference-memory), to be doctored."""
    out = tmp_path_factory.mktemp("saved") / "v.json"
    done = pwh("gate", "--sut", "reference-memory", f"{M06}:4", "--quiet", "--json", str(out))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    verdict: dict[str, Any] = json.loads(out.read_text("utf-8"))
    return verdict


def failed_verdict(saved: dict[str, Any], sut: str, path: Path) -> Path:
    """``saved`` as if SUT ``sut`` had failed every scenario of it."""
    verdict = copy.deepcopy(saved)
    verdict["sut"] = sut
    for s in verdict["scenarios"]:
        s["rfc"] = s["profile"] = "fail"
    path.write_text(json.dumps(verdict), "utf-8")
    return path


def test_failed_in_reruns_against_the_sut_the_verdict_names(saved: dict[str, Any], tmp_path: Path) -> None:
    failed = failed_verdict(saved, "reference-memory", tmp_path / "failed.json")
    out = tmp_path / "again.json"
    done = pwh("gate", "--failed-in", str(failed), "--quiet", "--json", str(out))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert json.loads(out.read_text("utf-8"))["sut"] == "reference-memory"  # not the default, reference
    assert ran(out) == [(M06, 4, "")]
    # the same SUT named again is the user's own choice, and agrees
    assert pwh("gate", "--failed-in", str(failed), "--sut", "reference-memory", "--quiet").returncode == 0
    # another SUT would judge someone else's failures: refused
    other = tmp_path / "other.json"
    done = pwh("gate", "--failed-in", str(failed), "--sut", "reference", "--quiet", "--json", str(other))
    assert_one_line_refusal(done, "--failed-in", "--sut", "'reference-memory'", unwritten=other)


def test_failed_in_never_runs_code_a_verdict_names(saved: dict[str, Any], tmp_path: Path) -> None:
    """A verdict naming ``module:factory`` is refused unless the user names that SUT too; the
    module, found in the working directory, is never imported."""
    (tmp_path / "planted_adapter.py").write_text("from pathlib import Path\nPath('IMPORTED').write_text('x')\n", "utf-8")
    failed = failed_verdict(saved, "planted_adapter:factory", tmp_path / "failed.json")
    out = tmp_path / "again.json"
    done = pwh("gate", "--failed-in", "failed.json", "--quiet", "--json", str(out), cwd=tmp_path)
    assert_one_line_refusal(done, "--failed-in", "'planted_adapter:factory'", "--sut planted_adapter:factory", unwritten=out)
    assert not (tmp_path / "IMPORTED").exists()
    # a broken adapter's failures, rerun against it because the user said so, fail again (exit 1);
    # before, they were rerun against the reference and passed (exit 0)
    broken = "tests.broken_suts:conflict_overwrites"
    failed = failed_verdict(saved, broken, failed)
    assert_one_line_refusal(pwh("gate", "--failed-in", str(failed), "--quiet"), "--sut " + broken)
    done = pwh("gate", "--failed-in", str(failed), "--sut", broken, "--quiet", "--json", str(out))
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert json.loads(out.read_text("utf-8"))["sut"] == broken


# -- 2. -k and -m are checked before any work; @TAG is a tag --------------------------------------


@pytest.mark.parametrize(
    ("option", "expr"),
    [("-k", "replayed and"), ("-k", "("), ("-m", "M04 and"), ("-m", "M04 or or M05"), ("-m", "M04 @"), ("-m", "M04\nand"), ("-k", " ")],
)
def test_a_bad_expression_is_one_line_and_no_verdict(option: str, expr: str, tmp_path: Path) -> None:
    out = tmp_path / "v.json"
    done = pwh("gate", option, expr, "--strict", "--json", str(out), "--quiet")
    assert_one_line_refusal(done, f"{option} ", unwritten=out)
    assert "running the matrix" not in done.stdout  # refused before any work


def test_a_behave_style_tag_selects_as_its_marker_does(tmp_path: Path) -> None:
    out = tmp_path / "v.json"
    done = pwh("gate", "--sut", "reference-memory", "-m", "@M11 and not @wip", "-k", "replayed", "--quiet", "--json", str(out))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert ran(out) == [("features/m11_replan.feature", 15, "")]
    assert "@M06" in pwh("gate", "--help").stdout


# -- 3. FEATURE:LINE anywhere in a scenario; a selection of nothing is refused -------------------


def test_a_line_inside_a_scenario_selects_it(tmp_path: Path) -> None:
    out = tmp_path / "v.json"
    # a step line of the scenario at 13, and an Examples row of the outline at 8: that example only
    done = pwh("gate", "--sut", "reference-memory", f"{M06}:16", f"{M02}:17", "--quiet", "--json", str(out))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert sorted(ran(out)) == [(M02, 8, "max_intents_per_dispatch, 16"), (M06, 13, "")]
    assert json.loads(out.read_text("utf-8"))["run"]["selection"]["scenarios"] == [f"{M06}:16", f"{M02}:17"]
    # a tag line of the scenario; a step line and the Examples header of the outline: all its examples
    done = pwh("gate", "--sut", "reference-memory", f"{M06}:12", f"{M02}:10", f"{M02}:15", "--quiet", "--json", str(out))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert sorted((f, line) for f, line, _ in ran(out)) == [(M02, 8)] * 4 + [(M06, 13)]


# The test command refuses a line that names no scenario, one past the file and a -k matching
# nothing; CI's extended tier the other selections.
@pytest.mark.parametrize(
    ("selection", "says"),
    beyond(
        [
            ((f"{M06}:1",), f"{M06}:1"),  # the Feature line: no scenario
            ((f"{M06}:33",), f"{M06}:33"),  # a comment between two scenarios
            ((f"{M06}:9999",), f"{M06}:9999"),
            ((f"{M06}:13", f"{M06}:1"), f"{M06}:1"),  # each FEATURE:LINE must name a scenario
            (("-k", "no_scenario_is_named_this"), "-k 'no_scenario_is_named_this'"),
            (("-m", "M06 and M11"), "-m 'M06 and M11'"),
            ((M06, "-m", "M11"), "-m 'M11'"),
        ],
        lambda case: case[0] in ((f"{M06}:1",), (f"{M06}:9999",), ("-k", "no_scenario_is_named_this")),
        unpack=True,
    ),
)
def test_a_selection_of_nothing_is_one_line_and_no_verdict(selection: tuple[str, ...], says: str, tmp_path: Path) -> None:
    out = tmp_path / "v.json"
    done = pwh("gate", "--sut", "reference-memory", *selection, "--quiet", "--json", str(out))
    assert_one_line_refusal(done, says, "no scenario", unwritten=out)


# -- 4. one SUT a run ------------------------------------------------------------------------------


def test_two_suts_are_refused_not_half_gated(tmp_path: Path) -> None:
    out = tmp_path / "v.json"
    done = pwh("gate", "--sut", "reference", "--sut", "reference-memory", f"{M06}:13", "--quiet", "--json", str(out))
    assert_one_line_refusal(done, "--sut", "'reference'", "'reference-memory'", unwritten=out)
    assert "once" in pwh("gate", "--help").stdout


# -- 5. a seam the adapter does not offer is never labelled as judged ----------------------------


# `extended`: a whole gate run of the template; tests/harness/test_smoke.py holds the template as not wired in the test command.
@pytest.mark.extended
def test_the_template_adapter_is_never_labelled_judged_through_a_turn_seam(tmp_path: Path) -> None:
    """The template offers no turn seam: its FT-1 skips come from the dispatcher seam."""
    out = tmp_path / "v.json"
    done = pwh("gate", "--sut", "pwh._suts.adapter_template:factory", "--rows", "FT-1,FT-3", "--quiet", "--json", str(out))
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    assert TURN_LABEL not in done.stdout
    verdict = json.loads(out.read_text("utf-8"))
    assert all(s["seam"] != "turn" for s in verdict["scenarios"])
    assert all("turn" not in r["seams"] for r in verdict["rows"].values())
    # an adapter that does offer one is still named, for the rows it judged
    done = pwh("gate", "--sut", "tests.suts.turn_adapters:testbed_turn", "--rows", "FT-1,FT-3", "--quiet")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"{TURN_LABEL} (seed 003's primary-Turn code): FT-3\n" in done.stdout


def test_a_row_only_skipped_at_the_turn_seam_is_not_labelled_judged_through_it() -> None:
    from pwh._harness.judging import rows_of, summarize
    from pwh._harness.report import summary_lines

    def verdict(outcome: str) -> dict[str, Any]:
        rfc = {"passed": "pass", "failed": "fail", "skipped": "skip"}[outcome]
        s = {"id": "x", "tags": ["FT-3"], "outcome": outcome, "rfc": rfc, "profile": rfc, "counts_for": "sut", "seam": "turn"}
        rows = rows_of([s], ["FT-3"])
        return {"rows": rows, "summary": summarize(rows, [s], False), "scenarios": [s]}

    assert not any(TURN_LABEL in line for line in summary_lines(verdict("skipped")))
    assert f"{TURN_LABEL} (seed 003's primary-Turn code): FT-3" in summary_lines(verdict("passed"))
    assert f"{TURN_LABEL} (seed 003's primary-Turn code): FT-3" in summary_lines(verdict("failed"))


def test_failed_in_never_starts_a_command_a_verdict_names(saved: dict[str, Any], tmp_path: Path) -> None:
    """A verdict naming ``stdio:COMMAND`` (a program to start) is refused like ``module:factory``:
    only the user's own --sut starts a command."""
    marker = tmp_path / "STARTED"
    failed = failed_verdict(saved, f"stdio:touch {marker}", tmp_path / "failed.json")
    out = tmp_path / "again.json"
    done = pwh("gate", "--failed-in", str(failed), "--quiet", "--json", str(out), cwd=tmp_path)
    assert_one_line_refusal(done, "--failed-in", "not built in", unwritten=out)
    assert not marker.exists()
