"""The gate against each mutant of the library (tests/broken_suts.py): every one fails on the row
that names the rule it breaks, and each failing scenario says what it expected and saw.

The gate runs in this process (``run_gate``: the same child pytest and judging as ``pwh gate``,
without a second interpreter per mutant); the command line's exit codes for a failing SUT are
held by tests/whole_gate/test_gate.py.

The test command runs one mutant of each row (the first by name), so every row is shown to catch
a broken library; the rest, one whole gate run each, are marked ``slow`` (run them with
``python -m pytest -m slow``, see the README). Of the mutants that break only pwh's reading, the
test command gates two rows' and CI's ``extended`` tier one of each other row."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from pwh._harness.gate import run_gate
from pwh._suts.mutants import MUTANTS
from tests.broken_suts import BROKEN


def one_per_row(rows: Mapping[str, str]) -> set[str]:
    """The first name (in sorted order) of each row ``rows`` maps names to."""
    first: dict[str, str] = {}
    for name in sorted(rows):
        first.setdefault(rows[name], name)
    return set(first.values())


def sampled(rows: Mapping[str, str]) -> list[object]:
    """Every name as a parameter: one per row in the test command, the others marked slow."""
    keep = one_per_row(rows)
    return [name if name in keep else pytest.param(name, marks=pytest.mark.slow) for name in sorted(rows)]


def test_the_sample_covers_every_row_a_mutant_names() -> None:
    for rows in (BROKEN, PROFILE_ONLY):
        keep = one_per_row(rows)
        assert {rows[n] for n in keep} == set(rows.values()) and len(keep) == len(set(rows.values()))


@pytest.mark.parametrize("name", sampled(BROKEN))
def test_every_broken_adapter_fails_on_its_row(name: str) -> None:
    row = BROKEN[name]
    # exitfirst: that the row fails is the point, and the first failing scenario shows it (its
    # expected and seen are checked below); the rest of the row would only repeat it.
    verdict = run_gate(f"tests.broken_suts:{name}", rows=[row], exitfirst=True, progress=False).verdict()
    assert verdict["summary"]["verdict"] == "fail", f"gate should fail for {name}: {verdict['summary']}"
    assert verdict["rows"][row]["status"] == "fail", f"{name} not caught on {row}"
    failing = [s for s in verdict["scenarios"] if s["outcome"] == "failed"]
    assert failing and all(s.get("expected") and s.get("seen") for s in failing)
    assert verdict["stopped_at_first_failure"] is True and len(failing) == 1


PROFILE_ONLY = {name: m.row for name, m in sorted(MUTANTS.items()) if m.caught_by == ("profile",)}


# The test command gates two of these rows' mutants (a look-alike of a credential kept, M13; a
# commit that is not atomic, M05); CI's extended tier one of each other row, -m slow the rest.
QUICK_PROFILE_ONLY = ("keeps_look_alikes", "non_atomic_commit")


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(p, marks=pytest.mark.extended) if isinstance(p, str) and p not in QUICK_PROFILE_ONLY else p
        for p in sampled(PROFILE_ONLY)
    ],
)
def test_a_mutant_of_a_reading_of_pwhs_passes_the_rfc_and_shows_as_a_divergence(name: str) -> None:
    """A mutant that breaks only pwh's reading (the documents allow what it does) must never fail
    the RFC verdict, and must still be seen: a profile divergence on its row."""
    row = PROFILE_ONLY[name]
    verdict = run_gate(f"mutant:{name}", rows=[row], progress=False).verdict()
    assert verdict["rows"][row]["status"] == "pass", f"{name} failed the RFC verdict on {row}: {verdict['summary']}"
    assert verdict["rows"][row]["profile"] != "pass", f"{name} left no profile divergence on {row}"
