"""The committed mutation results agree with each other (without running the campaign): every
surviving mutant is listed and classified, the score recomputes from the counts, a 'killed by'
names a scenario that exists; and `pwh mutate` without its extra fails in one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pwh import _cli
from pwh._harness import mutation as _mutation
from pwh._harness.mutation import parse_survivors

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "mutation"


@pytest.fixture(scope="module")
def score() -> dict:
    return json.loads((RESULTS / "score.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def entries() -> dict[str, dict[str, str]]:
    text = (RESULTS / "survivors.md").read_text("utf-8")
    listed = [line for line in text.splitlines() if line.startswith("- `")]
    found = parse_survivors(text)
    assert len(found) == len(listed), "a survivors.md line that does not parse"
    return found


def test_score_json_names_the_tool_modules_and_command(score: dict) -> None:
    assert score["tool"] == "mutmut" and score["version"].startswith("3.")
    assert score["command"].startswith("pwh mutate")
    assert "pwh/_core/dispatcher.py" in score["modules"] and len(score["modules"]) >= 10
    assert score["test_command"] == ["scenarios/test_matrix.py", "tests/campaigns/test_models.py::test_the_reference_keeps_every_invariant"]


def test_counts_add_up_and_the_score_recomputes(score: dict, entries: dict) -> None:
    c = score["counts"]
    assert c["killed"] + c["survived"] + c["no_tests"] + c["timeout"] + c["other"] == c["total"]
    assert c["total"] <= score["population"]
    assert score["partial"] == (c["total"] < score["population"])
    not_killed = [e for e in entries.values() if e["status"] != "killed now"]
    assert len(not_killed) == c["total"] - c["killed"], "every mutant not killed is listed in survivors.md"
    equivalent = sum(1 for e in not_killed if e["verdict"].startswith("equivalent:"))
    assert equivalent == c["equivalent"]
    assert sum(1 for e in entries.values() if e["verdict"].startswith("open:")) == c["open"]
    recomputed = c["killed"] / (c["total"] - c["equivalent"])
    assert recomputed >= score["score"] - 1e-4


def test_every_survivor_is_classified(entries: dict) -> None:
    for name, e in entries.items():
        if e["status"] in ("killed now", "timeout"):  # a timeout is a detection, named like a kill
            assert e["verdict"].startswith("killed by"), name
        else:
            assert e["verdict"].startswith(("equivalent: ", "open: ")), name
            if e["verdict"].startswith("equivalent: "):
                assert len(e["verdict"]) > len("equivalent: ") + 10, f"{name}: say why it is equivalent"


def test_a_named_killer_scenario_exists(entries: dict) -> None:
    for name, e in entries.items():
        m = re.match(r"killed by (features/[a-z0-9_]+\.feature):(\d+) \((.+)\)$", e["verdict"])
        if not m:
            continue
        lines = (ROOT / m.group(1)).read_text("utf-8").splitlines()
        line = int(m.group(2))
        assert 1 <= line <= len(lines), name
        assert lines[line - 1].strip().startswith(("Scenario", "|")), f"{name}: {m.group(1)}:{line} is not a scenario"
        example = re.search(r"\[([^\]]+)\]$", m.group(3))
        if example and lines[line - 1].strip().startswith("|"):  # an example row: the one the verdict names
            assert example.group(1).split(",")[0].strip() in lines[line - 1], f"{name}: {m.group(1)}:{line} is another example"


def test_every_listed_file_and_line_is_in_a_mutated_module(score: dict, entries: dict) -> None:
    for name, e in entries.items():
        path, _, line = e["where"].rpartition(":")
        assert path in score["modules"], name
        assert int(line) >= 1


def test_mutate_without_the_extra_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(_mutation.importlib.util, "find_spec", lambda name: None)
    assert _cli.main(["mutate", "--report-only"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "mutmut is not installed" in err and "[mutation]" in err


def test_the_campaign_is_not_part_of_the_test_command() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    test_extra = re.search(r"^test = \[(.*?)\]", pyproject, re.S | re.M)
    assert test_extra and "mutmut" not in test_extra.group(1)


def test_carry_over_keeps_what_was_not_re_run() -> None:
    from pwh._harness.mutation import Mutant, carry_over

    mutants = [
        Mutant("a", "pwh/_x.py", "not checked"),
        Mutant("b", "pwh/_x.py", "not checked"),
        Mutant("c", "pwh/_x.py", "not checked"),
        Mutant("d", "pwh/_x.py", "killed"),
        Mutant("e", "pwh/_x.py", "not checked"),
    ]
    previous = {"a": {"status": "survived"}, "b": {"status": "killed now"}, "d": {"status": "survived"}}
    got = {m.name: m.status for m in carry_over(mutants, {"a", "b", "c", "d"}, previous)}
    # a survivor not re-run stays one; a listed kill and an unlisted mutant of the sample were killed;
    # what this run checked stands; a mutant outside the sample stays unchecked
    assert got == {"a": "survived", "b": "killed", "c": "killed", "d": "killed", "e": "not checked"}


def test_a_verdict_follows_its_mutation_not_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mutmut numbers mutants within a function, so after an edit a name can denote another change:
    an 'equivalent' argued for the old mutation must not be carried to the new one, and a 'killed
    by' that no longer kills is not kept either."""
    from pwh._harness.mutation import Mutant, survivor_entries

    (tmp_path / "pwh").mkdir()
    (tmp_path / "pwh" / "_x.py").write_text("def f():\n    return 1\n")
    monkeypatch.setattr(_mutation, "_function_lines", lambda path: {})
    monkeypatch.setattr(_mutation, "_describe", lambda root, m, lines: (2, {"a": "x → y", "b": "p → q", "c": "k → l"}[m.name]))
    previous = {
        "a": {"mutation": "x → y", "verdict": "equivalent: same output"},
        "b": {"mutation": "OLD → CHANGE", "verdict": "equivalent: argued for another change"},
        "c": {"mutation": "k → l", "verdict": "killed by features/m01.feature:3 (a scenario)"},
    }
    mutants = [Mutant("a", "pwh/_x.py", "survived"), Mutant("b", "pwh/_x.py", "survived"), Mutant("c", "pwh/_x.py", "survived")]
    got = {e["name"]: e["verdict"] for e in survivor_entries(tmp_path, mutants, previous)}
    assert got["a"] == "equivalent: same output"
    assert got["b"].startswith("open:") and "another mutation" in got["b"]
    assert got["c"].startswith("open:") and "survives again" in got["c"]
