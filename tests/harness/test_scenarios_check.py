"""`pwh scenarios check` names the file and line of every problem, and passes the real features."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pwh._cli import main
from pwh._harness.scenarios_check import check, load_step_modules, step_definitions

ROOT = Path(__file__).resolve().parents[2]
STEPS = step_definitions(load_step_modules("scenarios"))


def test_the_project_features_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenarios", "check"]) == 0
    assert "every step defined" in capsys.readouterr().out


def _features_with(tmp_path: Path, name: str, text: str) -> Path:
    target = tmp_path / "features"
    shutil.copytree(ROOT / "features", target)
    (target / name).write_text(text)
    return target


def test_untagged_scenario_is_named_with_its_line(tmp_path: Path) -> None:
    features = _features_with(
        tmp_path, "extra.feature", "Feature: x\n\n  Scenario: nobody tagged me\n    Given the post-writeback phase is enabled\n"
    )
    problems, _ = check(features, STEPS, tmp_path)
    assert [str(p) for p in problems] == [
        "features/extra.feature:3: scenario 'nobody tagged me' has no row or rule tag; it needs exactly one"
    ]


def test_two_row_tags_and_row_like_tags_are_problems_but_free_tags_are_not(tmp_path: Path) -> None:
    text = (
        "Feature: x\n\n  @M01 @M02 @wip\n  Scenario: greedy\n    Given the post-writeback phase is enabled\n\n"
        "  @M99 @m04 @slow\n  Scenario: lookalikes\n    Given the post-writeback phase is enabled\n\n"
        "  @M04 @wip @slow\n  Scenario: free tags beside the row tag\n    Given the post-writeback phase is enabled\n"
    )
    problems, _ = check(_features_with(tmp_path, "extra.feature", text), STEPS, tmp_path)
    messages = [p.message for p in problems]
    assert any("2 row tags" in m for m in messages)
    assert any("unknown tag @M99" in m for m in messages) and any("unknown tag @m04" in m and "@M04?" in m for m in messages)
    assert not any("@wip" in m or "@slow" in m for m in messages)
    assert not any(p.line == 11 for p in problems)  # the scenario with free tags beside its row tag is fine


def test_a_scenario_without_steps_and_an_outline_without_examples_are_problems(tmp_path: Path) -> None:
    text = (
        "Feature: x\n\n  @M01\n  Scenario: empty\n\n"
        '  @M01\n  Scenario Outline: no rows\n    Given hook "<hook>" is installed and proposes one intent\n'
    )
    problems, _ = check(_features_with(tmp_path, "extra.feature", text), STEPS, tmp_path)
    assert [str(p) for p in problems] == [
        "features/extra.feature:4: scenario 'empty' has no steps: it would pass having checked nothing",
        "features/extra.feature:7: scenario outline 'no rows' uses <parameters> but has no Examples rows",
    ]


def test_undefined_step_is_named_with_its_line(tmp_path: Path) -> None:
    text = "Feature: x\n\n  @M01\n  Scenario: s\n    Given the post-writeback phase is enabled\n    When the moon is full\n"
    problems, _ = check(_features_with(tmp_path, "extra.feature", text), STEPS, tmp_path)
    assert [str(p) for p in problems] == ["features/extra.feature:6: no step definition for when: 'the moon is full'"]


def test_an_undefined_step_gets_the_closest_steps_that_exist(tmp_path: Path) -> None:
    from pwh._harness.step_catalog import catalog, closest

    known = catalog(load_step_modules("scenarios"))
    text = 'Feature: x\n\n  @M01\n  Scenario: s\n    Given the post-writeback phase is enabld\n    Then hook "a.x" is not called\n'
    problems, _ = check(_features_with(tmp_path, "extra.feature", text), STEPS, tmp_path, suggest=lambda k, t: closest(k, t, known))
    by_line = {p.line: p.message for p in problems}
    assert "did you mean: 'the post-writeback phase is enabled'" in by_line[5]
    assert 'hook "<hook_id>" was never called' in by_line[6]


def test_undefined_step_in_an_examples_row(tmp_path: Path) -> None:
    text = (
        'Feature: x\n\n  @M07\n  Scenario Outline: s\n    Given hook "a.b" is installed and <does>\n\n'
        "    Examples:\n      | does |\n      | raises an error |\n      | sings a song |\n"
    )
    problems, counts = check(_features_with(tmp_path, "extra.feature", text), STEPS, tmp_path)
    assert len(problems) == 1 and "sings a song" in problems[0].message


def test_a_row_without_scenarios_is_a_problem(tmp_path: Path) -> None:
    target = tmp_path / "features"
    shutil.copytree(ROOT / "features", target)
    for row_file in target.glob("m06_*.feature"):  # every file of row M06 (its scenarios and the survivor ones)
        row_file.unlink()
    problems, counts = check(target, STEPS, tmp_path)
    assert counts["M06"] == 0 and "row M06 has no scenario" in [p.message for p in problems]


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    features = _features_with(
        tmp_path, "extra.feature", "Feature: x\n\n  Scenario: nobody tagged me\n    Given the post-writeback phase is enabled\n"
    )
    assert main(["scenarios", "check", "--features", str(features)]) == 1
    assert main(["scenarios", "check", "--features", str(tmp_path / "missing")]) == 2
    assert main(["scenarios", "check", "--steps", "no_such_step_library"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err


def test_vectors_check_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vectors", "--check"]) == 0
    assert main([]) == 2


def test_the_step_modules_listed_are_the_ones_the_matrix_imports() -> None:
    """``scenarios.STEP_MODULES`` (what ``pwh scenarios check`` and the models read) names exactly
    the step modules ``scenarios/conftest.py`` star-imports (what the matrix runs): a module added
    to one and not the other would be checked against steps the gate never has, or the reverse."""
    import ast

    import scenarios

    tree = ast.parse((ROOT / "scenarios" / "conftest.py").read_text("utf-8"))
    imported = {n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.level == 1 and any(a.name == "*" for a in n.names)}
    assert imported == set(scenarios.STEP_MODULES)
    assert len(scenarios.STEP_MODULES) == len(set(scenarios.STEP_MODULES))


def test_no_two_step_definitions_of_one_kind_share_their_text() -> None:
    """pytest-bdd picks one of two same-text steps without a word, so the other never runs."""
    from collections import Counter

    from pwh._harness.scenarios_check import load_step_modules, step_contexts

    texts = Counter((c.type, getattr(c.parser, "name", None) or repr(c.parser)) for c in step_contexts(load_step_modules("scenarios")))
    assert [key for key, n in texts.items() if n > 1] == []
