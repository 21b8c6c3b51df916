"""Every RFC check cites clauses that pwh's clause table holds, and nothing else: not a pwh rule id
(JNL-5, REG), not a design choice, not a clause nobody wrote down. Read from the source of the step
library (so a check that never runs is held too) and enforced again by ``expect`` at run time."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pwh._harness.clauses import CLAUSES, CLAUSES_BY_ID, UnknownClause, citation_ids, cite
from pwh._harness.expect import expect, expect_code

ROOT = Path(__file__).resolve().parents[2]
CITING = sorted(p for d in ("scenarios", "fakes", "pwh/_suts", "pwh/_campaigns", "pwh/_harness") for p in (ROOT / d).rglob("*.py"))


def _strings(node: ast.AST) -> list[str] | None:
    """The clause ids a citation's value names, or None when it is not a literal (a variable)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


def citations(path: Path) -> list[tuple[int, str]]:
    """(line, id) for every literal citation in ``path``: ``rfc=``/``clause=`` arguments, names
    ending in ``clause`` assigned a literal, and the third item of the bad-registration table."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        values: list[ast.AST] = []
        if isinstance(node, ast.Call):
            values += [k.value for k in node.keywords if k.arg in ("rfc", "clause")]
            if getattr(node.func, "id", "") == "_failure_judged" and len(node.args) == 3:
                values.append(node.args[2])
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id if isinstance(t, ast.Name) else getattr(t, "attr", "") for t in targets]
            if any(n.endswith("clause") for n in names) and node.value is not None:
                values.append(node.value)
        for value in values:
            for text in _strings(value) or []:
                found.append((getattr(value, "lineno", 0), text))
    return found


def test_the_table_is_whole() -> None:
    assert len(CLAUSES) == len(CLAUSES_BY_ID), "a clause id is used twice"
    for clause in CLAUSES:
        assert clause.quote and clause.gloss and clause.section, clause.id
        assert clause.id.startswith(("§", "seed003.")), clause.id


def test_every_literal_citation_is_in_the_table() -> None:
    bad = [f"{p.relative_to(ROOT)}:{line}: {text!r}" for p in CITING for line, text in citations(p) if text not in CLAUSES_BY_ID]
    assert bad == [], "RFC checks citing what the clause table does not hold:\n" + "\n".join(bad)


def test_the_citation_reader_finds_a_planted_bad_citation(tmp_path: Path) -> None:
    planted = tmp_path / "steps_planted.py"
    planted.write_text(
        'expect(True, "x", "y", rfc="§9 JNL-5")\n'
        'expect(True, "x", "y", rfc=("§9.replay-noop", "REG"))\n'
        'world.expected_rejection_clause = "a design choice"\n'
    )
    found = sorted(text for _, text in citations(planted))
    assert found == sorted(["§9 JNL-5", "§9.replay-noop", "REG", "a design choice"])
    assert [t for t in found if t not in CLAUSES_BY_ID] == sorted(["§9 JNL-5", "REG", "a design choice"])


def test_the_bad_registration_table_cites_only_clauses() -> None:
    from fakes._packets import BAD_REGISTRATIONS

    for flaw, (_, _, clause) in BAD_REGISTRATIONS.items():
        if clause is not None:
            citation_ids(clause)  # raises for a citation outside the table
        assert flaw


@pytest.mark.parametrize("bad", ["§9 JNL-5", "JNL-5", "§6 REG", "pwh's design", ("§9.replay-noop", "SPEC §4"), ()])
def test_expect_refuses_a_citation_outside_the_table_even_when_the_check_passes(bad: object) -> None:
    with pytest.raises(UnknownClause):
        expect(True, "anything", "anything", rfc=bad)  # type: ignore[arg-type]
    with pytest.raises(UnknownClause):
        expect_code("producer_failed", "producer_failed", "code", clause=bad, rfc_codes=set())  # type: ignore[arg-type]


def test_a_failed_rfc_check_reports_its_clause_in_words() -> None:
    from pwh._harness.expect import ExpectationFailed

    with pytest.raises(ExpectationFailed) as caught:
        expect(False, "one receipt", "two", rfc=("§9.replay-noop", "§12.M05"))
    assert caught.value.clause == cite(("§9.replay-noop", "§12.M05"))
    assert "§9" in caught.value.clause and "no-op" in caught.value.clause
