"""The rule x path table (``pwh rules --coverage``, ``docs/rule-paths.md``) says only what is true:
every RFC named rule has its row, every scenario a cell names is in its feature file under that exact
title, every invariant it names is a declared RFC invariant, and every cell that is not covered says
why. A new RFC rule without a row, a renamed scenario or a removed invariant fails here."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from pwh._harness.rule_paths import (
    COVERED,
    ENTRY_PATHS,
    EVENT_KINDS,
    NOT_APPLICABLE,
    NOT_YET_COVERED,
    POSITIONS,
    RULE_PATHS,
    RULE_PATHS_SCHEMA_VERSION,
    paths_document,
    paths_markdown,
    paths_summary,
)
from pwh._harness.rulebook import NAMED_RULES, PROFILE_READINGS

ROOT = Path(__file__).resolve().parents[2]
SAYS = {n.id: n.says for n in NAMED_RULES}


def _titles(feature: Path) -> set[str]:
    """The scenario titles of one feature file, exactly as written after ``Scenario:`` or
    ``Scenario Outline:``."""
    found: set[str] = set()
    for line in feature.read_text("utf-8").splitlines():
        head, sep, title = line.strip().partition(":")
        if sep and head in ("Scenario", "Scenario Outline"):
            found.add(title.strip())
    return found


def test_every_rfc_named_rule_has_one_row_and_no_row_is_unknown() -> None:
    rfc = [n.id for n in NAMED_RULES if n.kind == "rfc"]
    rows = Counter(r.rule for r in RULE_PATHS)
    assert sorted(set(rfc) - set(rows)) == [], "an RFC named rule without a row in pwh/_harness/rule_paths.py"
    assert sorted(set(rows) - set(rfc)) == [], "a row for a rule that is not an RFC named rule"
    assert [r for r, n in rows.items() if n > 1] == []
    assert not {r.rule for r in RULE_PATHS} & {p.id for p in PROFILE_READINGS}


def test_every_row_has_every_path_kind_and_position_once() -> None:
    for row in RULE_PATHS:
        keys = [(c.dimension, c.value) for c in row.cells]
        assert len(keys) == len(set(keys)), row.rule
        wanted = [("entry path", v) for v in ENTRY_PATHS] + [("event kind", v) for v in EVENT_KINDS] + [("position", v) for v in POSITIONS]
        assert [k for k in keys if k[0] != "limit"] == wanted, row.rule
        sides = [v.rpartition(": ")[2] for d, v in keys if d == "limit"]
        assert sides == ["below", "at", "above"] * (len(sides) // 3), f"{row.rule}: each limit has its three sides, in order"


def test_every_named_scenario_is_in_its_feature_file_under_that_title() -> None:
    missing = []
    for row in RULE_PATHS:
        for cell in row.cells:
            for ref in cell.scenarios:
                path = ROOT / ref.feature
                if not (path.is_file() and ref.title in _titles(path)):
                    missing.append(f"{row.rule} {cell.value}: {ref.feature}: {ref.title}")
    assert missing == []


def test_every_named_invariant_is_a_declared_rfc_invariant() -> None:
    from pwh._campaigns.models.invariants import INVARIANTS, RFC  # only here: pwh never imports scenarios

    unknown, not_rfc = [], []
    for row in RULE_PATHS:
        for cell in row.cells:
            for name in cell.invariants:
                declared = INVARIANTS.get(name)
                if declared is None:
                    unknown.append(f"{row.rule} {cell.value}: {name}")
                elif declared.kind != RFC:
                    not_rfc.append(f"{row.rule} {cell.value}: {name} is {declared.kind}")
    assert unknown == [], "invariants no check of pwh/_campaigns/models/invariants.py declares"
    assert not_rfc == [], "a profile invariant named as judging an RFC rule"


def test_a_cell_not_covered_says_why() -> None:
    for row in RULE_PATHS:
        for cell in row.cells:
            assert cell.status in (COVERED, NOT_APPLICABLE, NOT_YET_COVERED)
            if cell.status != COVERED:
                assert cell.reason.strip(), f"{row.rule} {cell.dimension} {cell.value}: {cell.status} with no reason"
                assert "\n" not in cell.reason, f"{row.rule} {cell.value}: a reason is one line"


def test_no_cell_is_left_open() -> None:
    """Every cell is filled or named not applicable with its reason: a rule on a path nothing
    judges is a gap to close, not a state to keep."""
    open_cells = [f"{row.rule} {cell.dimension} {cell.value}" for row in RULE_PATHS for cell in row.cells if cell.status == NOT_YET_COVERED]
    assert open_cells == []


def test_docs_rule_paths_md_is_the_generated_table() -> None:
    assert (ROOT / "docs" / "rule-paths.md").read_text("utf-8") == paths_markdown(SAYS), (
        "run: pwh rules --coverage --md > docs/rule-paths.md"
    )


def test_pwh_rules_coverage_prints_the_table_and_its_data() -> None:
    def run(*args: str) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "pwh", "rules", "--coverage", *args], capture_output=True, text=True, timeout=120, cwd=ROOT
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    text = run()
    summary = paths_summary()
    assert f"{summary['covered']} covered" in text.splitlines()[-1]
    for row in RULE_PATHS:
        assert any(line.startswith(row.rule + " ") for line in text.splitlines()), row.rule
    data = json.loads(run("--json"))
    assert data["schema_version"] == RULE_PATHS_SCHEMA_VERSION
    assert data == json.loads(json.dumps(paths_document(SAYS)))
    assert data["summary"]["cells"] == sum(len(r.cells) for r in RULE_PATHS)
    assert run("--md") == paths_markdown(SAYS)
