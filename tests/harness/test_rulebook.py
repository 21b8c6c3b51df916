"""The rulebook ships: ``pwh rules`` lists every rule id with its clauses and their words,
``docs/rules.md`` is the same rulebook, and no rule or row cites a clause the table lacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pwh._harness.clauses import CLAUSES_BY_ID
from pwh._harness.rulebook import NAMED_RULES, PROFILE_READINGS, rules_document, rules_markdown
from pwh._harness.rules import RULES

ROOT = Path(__file__).resolve().parents[2]


def _pwh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pwh", *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_docs_rules_md_is_the_generated_rulebook() -> None:
    assert (ROOT / "docs" / "rules.md").read_text("utf-8") == rules_markdown(), "run: pwh rules --md > docs/rules.md"


def test_every_row_rests_on_clauses_and_every_named_rule_says_its_kind() -> None:
    for row in RULES:
        assert row.clauses and all(c in CLAUSES_BY_ID for c in row.clauses), row.id
    for rule in NAMED_RULES:
        assert rule.kind == "rfc" and all(c in CLAUSES_BY_ID for c in rule.clauses), rule.id
    for reading in PROFILE_READINGS:
        assert reading.kind == "profile" and reading.id.startswith("P-"), reading.id


def test_pwh_rules_lists_every_id_with_its_quotes() -> None:
    proc = _pwh("rules")
    assert proc.returncode == 0, proc.stderr
    for rule in (*RULES, *NAMED_RULES, *PROFILE_READINGS):
        assert any(line.startswith(rule.id + " ") for line in proc.stdout.splitlines()), rule.id
    assert CLAUSES_BY_ID["§9.replay-noop"].quote in proc.stdout
    data = json.loads(_pwh("rules", "--json").stdout)
    assert data == json.loads(json.dumps(rules_document()))
    assert {c["id"] for c in data["clauses"]} == set(CLAUSES_BY_ID)


def test_no_user_facing_text_points_outside_the_repository() -> None:
    """The rules a failure cites are the project's own: nothing tells a user to read a file that
    a clone or an install does not hold."""
    texts = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "features").glob("*.feature"), *(ROOT / "pwh").rglob("*.tmpl")]
    bad = [str(p.relative_to(ROOT)) for p in texts if "../shared" in p.read_text("utf-8") or "SPEC.md" in p.read_text("utf-8")]
    assert bad == []
