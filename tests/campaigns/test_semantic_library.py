"""The semantic mutant library by rule (pwh/_suts/mutants/_semantic.py): every RFC named rule of
the rulebook has at least one faulty implementation that keeps it on one path, event kind or
position and breaks it on another, and each is one the gate or the models must catch
(tests/whole_gate/test_gate_mutants.py and tests/campaigns/test_models.py run them)."""

from __future__ import annotations

import ast
from pathlib import Path

from pwh._harness.rulebook import NAMED_RULES
from pwh._suts.mutants import MUTANTS
from pwh._suts.mutants._semantic import NO_SEMANTIC_MUTANT, RULE_OF

SEMANTIC = Path(__file__).resolve().parents[2] / "pwh" / "_suts" / "mutants" / "_semantic.py"
RFC_RULES = {r.id for r in NAMED_RULES if r.kind == "rfc"}


def _registered_here() -> set[str]:
    """The names the module registers with ``@mutant(...)``, read from its source."""
    names = set()
    for node in ast.walk(ast.parse(SEMANTIC.read_text("utf-8"))):
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and getattr(deco.func, "id", None) == "mutant":
                    names.add(deco.args[0].value)  # type: ignore[attr-defined]
    return names


def test_every_semantic_mutant_names_its_rule() -> None:
    assert set(RULE_OF) == _registered_here()
    assert set(RULE_OF.values()) <= RFC_RULES


def test_every_rfc_rule_has_a_semantic_mutant_or_says_why_not() -> None:
    covered = set(RULE_OF.values())
    assert covered | set(NO_SEMANTIC_MUTANT) == RFC_RULES, sorted(RFC_RULES - covered - set(NO_SEMANTIC_MUTANT))
    assert not covered & set(NO_SEMANTIC_MUTANT) and all(NO_SEMANTIC_MUTANT.values())


def test_every_semantic_mutant_must_be_caught_by_the_gate_or_the_models() -> None:
    """Not a reading of pwh's (those pass the RFC by design): the gate-mutant and model tests then
    hold that each is caught on its row, so the library's score is 100 % or the suite fails."""
    for name in RULE_OF:
        assert MUTANTS[name].caught_by != ("profile",), name
        assert set(MUTANTS[name].caught_by) <= {"matrix", "models"}, name
