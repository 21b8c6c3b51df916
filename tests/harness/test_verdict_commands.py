"""`pwh report`, `pwh compare` and `pwh scenarios steps`, run as a user runs them: a subprocess
over real files, judged by its output and exit code; and what every verdict says it covers."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pwh._harness.gate import features_digest

ROOT = Path(__file__).resolve().parents[2]


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


@pytest.fixture(scope="module")
def partial(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("verdicts") / "m06.json"
    done = pwh("gate", "--sut", "reference-memory", "--rows", "M06,M11", "--quiet", "--json", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PARTIAL verdict (a row filter)" in done.stdout and "covers: rows M06, M11" in done.stdout
    return out, json.loads(out.read_text("utf-8"))


def test_a_verdict_states_what_it_covers(partial: tuple[Path, dict[str, Any]]) -> None:
    _, verdict = partial
    run = verdict["run"]
    assert run["rows"] == ["M06", "M11"] and run["partial"] is True
    assert run["features_digest"] == features_digest(ROOT / "features")
    assert run["sut_version"] == verdict["pwh_version"]  # the reference adapter's version is pwh's
    assert run["generated_at"].endswith("Z")
    assert run["pwh_commit"] is None or len(run["pwh_commit"]) == 40


def test_report_renders_a_saved_verdict_again(partial: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    path, _ = partial
    table = pwh("report", str(path))
    assert table.returncode == 0 and "pwh gate — SUT: reference-memory" in table.stdout and "PARTIAL verdict" in table.stdout
    done = pwh("report", str(path), "--md", str(tmp_path / "r.md"), "--html", str(tmp_path / "r.html"))
    assert done.returncode == 0 and done.stdout == "wrote r.md\nwrote r.html\n"  # each file written, said
    md = (tmp_path / "r.md").read_text("utf-8")
    assert "**PARTIAL verdict (a row filter)" in md and "covers: rows M06, M11" in md
    assert (tmp_path / "r.html").read_text("utf-8").startswith("<!doctype html>")


@pytest.mark.parametrize(
    ("content", "says"),
    [(None, "cannot read"), ("{not json", "is not JSON (line 1)"), ('{"x": 1}', "is not a pwh gate verdict: invalid at $")],
)
def test_report_and_compare_refuse_a_file_that_is_no_verdict(tmp_path: Path, content: str | None, says: str) -> None:
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content, "utf-8")
    for args in (("report", str(bad)), ("compare", str(bad), str(bad))):
        done = pwh(*args)
        assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_compare_shows_row_and_scenario_differences(partial: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    path, verdict = partial
    same = pwh("compare", str(path), str(path))
    assert same.returncode == 0 and "no difference" in same.stdout
    changed = copy.deepcopy(verdict)
    target = next(s for s in changed["scenarios"] if "M06" in s["tags"])
    target["rfc"] = target["profile"] = "fail"
    changed["rows"]["M06"].update(rfc="fail", profile="fail", status="fail")
    other = tmp_path / "b.json"
    other.write_text(json.dumps(changed), "utf-8")
    done = pwh("compare", str(path), str(other), "--json", str(tmp_path / "cmp.json"))
    assert done.returncode == 1
    assert "M06    pass → fail" in done.stdout and target["scenario"] in done.stdout
    assert f"M06 {target['feature']}:{target['line']} {target['scenario']}" in done.stdout  # FILE:LINE, as the gate selects
    assert done.stdout.rstrip().splitlines()[-2:] == [
        "1 row(s) and 1 scenario(s) differ: 1 pass → fail",
        "wrote cmp.json",
    ]  # a count per change
    result = json.loads((tmp_path / "cmp.json").read_text("utf-8"))
    assert result["same"] is False and [r["row"] for r in result["rows"]] == ["M06"]
    assert len(result["scenarios"]) == 1 and result["scenarios"][0]["b"] == {"rfc": "fail", "profile": "fail"}
    assert result["scenarios"][0]["where"] == f"{target['feature']}:{target['line']}"
    only_json = pwh("compare", str(path), str(other), "--json", "-")
    assert json.loads(only_json.stdout)["rows"] == result["rows"]


def test_scenarios_steps_lists_every_step_readably() -> None:
    done = pwh("scenarios", "steps")
    assert done.returncode == 0
    assert 'Given hook "<hook_id>" is installed and <behaviour>' in done.stdout
    assert "            - proposes one intent" in done.stdout  # a behaviour phrase, listed whole
    assert "Then  no provider was called" in done.stdout
    steps = json.loads(pwh("scenarios", "steps", "--json").stdout)
    assert {s["kind"] for s in steps} == {"given", "when", "then"}
    install = next(s for s in steps if s["text"] == 'hook "<hook_id>" is installed and <behaviour>')
    assert "raises an error" in install["parameters"]["behaviour"]


# `extended`: a gate narrowed by -k; selections are held in the test command by tests/harness/test_gate_selection.py.
@pytest.mark.extended
def test_a_gate_run_narrowed_the_pytest_way_says_which_scenarios_it_ran(partial: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    out = tmp_path / "sel.json"
    done = pwh("gate", "--sut", "reference-memory", "features/m06_conflict.feature:13", "--quiet", "--json", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    verdict = json.loads(out.read_text("utf-8"))
    assert [(s["feature"], s["line"]) for s in verdict["scenarios"]] == [("features/m06_conflict.feature", 13)]
    assert verdict["run"]["selection"] == {"keyword": None, "tags": None, "scenarios": ["features/m06_conflict.feature:13"]}
    assert verdict["run"]["partial"] and list(verdict["rows"]) == ["M06"]
    assert "PARTIAL verdict (a scenario selection: features/m06_conflict.feature:13)" in done.stdout
    # -k and a tag expression, as pytest takes them
    done = pwh("gate", "--sut", "reference-memory", "-k", "replayed", "-m", "M11", "--quiet", "--json", str(out))
    verdict = json.loads(out.read_text("utf-8"))
    assert done.returncode == 0 and [s["line"] for s in verdict["scenarios"]] == [15]
    assert verdict["run"]["selection"]["keyword"] == "replayed" and verdict["run"]["selection"]["tags"] == "M11"
    # --failed-in: the failures of a saved verdict are run again
    _, saved = partial
    failed = copy.deepcopy(saved)
    target = next(s for s in failed["scenarios"] if s["feature"] == "features/m11_replan.feature" and s["line"] == 25)
    target["rfc"] = target["profile"] = "fail"
    (tmp_path / "failed.json").write_text(json.dumps(failed), "utf-8")
    done = pwh("gate", "--sut", "reference-memory", "--failed-in", str(tmp_path / "failed.json"), "--quiet", "--json", str(out))
    verdict = json.loads(out.read_text("utf-8"))
    assert done.returncode == 0 and [(s["feature"], s["line"]) for s in verdict["scenarios"]] == [("features/m11_replan.feature", 25)]
    none_failed = pwh("gate", "--failed-in", str(partial[0]))
    assert none_failed.returncode == 2 and "no scenario failed there" in none_failed.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("gate", "--report", "r.txt"), "name a .md (Markdown) or .html (HTML) file"),
        (("gate", "--json", "-"), "--json -: the terminal gets the verdict table"),
        (("gate", "--coverage", "--sut", "loopx"), "--coverage measures the reference dispatcher"),
        (("gate", "--coverage", "--rows", "M01"), "it does not apply with --rows"),
        (("gate", "no_such.feature"), "not a .feature file of the features directory"),
        (("gate", "m06_conflcit.feature:4"), "not a .feature file of the features directory; did you mean "),
        (("soak", "--minutes", "0.05", "--quick"), "--quick applies to --campaign reliability or --benchmark only"),
        (("soak", "--campaign", "reliability", "--no-swarm"), "--no-swarm applies to the models"),
        (("soak", "--benchmark", "--sut", "loopx"), "--benchmark measures fixed modes"),
        (("soak", "--campaign", "reliability", "--sut", "loopx"), "runs against pwh's reference only"),
        (("soak", "--campaign", "reliability", "--profile", "deep"), "--profile applies to the models"),
        (("soak", "--campaign", "reliability", "--examples", "5"), "drop --examples"),
        (("soak", "--benchmark", "--examples", "5"), "drop --examples"),
        (("soak", "--sut", "reference-memory"), "pwh soak needs a budget: --minutes N, --examples N or both"),
        (("soak", "--examples", "0"), "--examples must be at least 1"),
    ],
)
def test_an_option_that_would_be_ignored_is_an_error_before_any_work(
    args: tuple[str, ...], says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pwh._cli import main

    monkeypatch.chdir(tmp_path)
    assert main(list(args)) == 2
    out, err = capsys.readouterr()
    assert says in err and len(err.strip().splitlines()) == 1 and "running the matrix" not in out
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_an_ignored_option_is_refused_by_the_command_a_user_types(tmp_path: Path) -> None:
    done = pwh("gate", "--report", "r.txt", cwd=tmp_path)
    assert done.returncode == 2 and "name a .md (Markdown) or .html (HTML) file" in done.stderr and "Traceback" not in done.stderr


def test_a_plain_install_finds_the_wheels_matrix_and_names_it_features(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`pip install .` (not editable) ships features/ as the data package pwh_features: the gate
    finds it there, and reports name its files features/... as a checkout's do."""
    from pwh._harness import gate
    from pwh._harness.paths import feature_label

    (tmp_path / "pwh_features").mkdir()
    (tmp_path / "pwh_features" / "a.feature").write_text("Feature: a\n", "utf-8")
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "test_matrix.py").write_text("", "utf-8")
    monkeypatch.setattr(gate, "project_root", lambda: tmp_path)
    feature_dir, _ = gate.locate(None)
    assert feature_dir == tmp_path / "pwh_features"
    assert feature_label(feature_dir / "a.feature", feature_dir) == "features/a.feature"
    assert feature_label(ROOT / "features" / "m06_conflict.feature", ROOT / "features") == "features/m06_conflict.feature"


def test_a_sub_command_shows_its_own_usage_and_lists_its_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    from pwh._cli import main

    done = pwh("gate", "--bogus")
    assert done.returncode == 2 and done.stderr.startswith("usage: pwh gate") and "unrecognized arguments: --bogus" in done.stderr
    commands = [["gate"], ["soak"], ["replay"], ["vectors"], ["bench"], ["scenarios", "check"], ["scenarios", "steps"]]
    commands += [["divergences"], ["corpus"], ["mutate"], ["report"], ["compare"], ["packet", "build"], ["packet", "verify"]]
    commands += [["smoke"]]
    for command in commands:
        with pytest.raises(SystemExit) as ended:
            main([*command, "--help"])
        assert ended.value.code == 0
        assert "exit codes: 0" in capsys.readouterr().out, command


def test_a_command_group_without_its_sub_command_shows_its_own_help(capsys: pytest.CaptureFixture[str]) -> None:
    from pwh._cli import main

    for group in ("packet", "scenarios"):
        assert main([group]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"usage: pwh {group} "), err


def test_compare_says_self_check_for_a_scenario_as_its_row_does(partial: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    from pwh._harness.verdicts import compare

    _, verdict = partial
    judged = copy.deepcopy(verdict)
    mine = next(s for s in judged["scenarios"] if s["counts_for"] == "sut" and s["rfc"] == "pass")
    theirs = copy.deepcopy(judged)
    next(s for s in theirs["scenarios"] if s["id"] == mine["id"])["counts_for"] = "testbed"
    found = compare(judged, theirs)["scenarios"]
    assert [(s["a"]["rfc"], s["b"]["rfc"]) for s in found] == [("pass", "self-check")]
