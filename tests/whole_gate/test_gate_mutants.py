"""The gate against each mutant of the library (tests/broken_suts.py): every one fails on the row
that names the rule it breaks, and each failing scenario says what it expected and saw.

The gate runs in this process (``run_gate``: the same child pytest and judging as ``pwh gate``,
without a second interpreter per mutant); the command line's exit codes for a failing SUT are
held by tests/whole_gate/test_gate.py."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from pwh._harness.gate import run_gate
from pwh._suts.mutants import MUTANTS
from tests.broken_suts import BROKEN


def _broken(name: str) -> tuple[str, dict[str, Any]]:
    # exitfirst: that the row fails is the point, and the first failing scenario shows it (its
    # expected and seen are checked below); the rest of the row would only repeat it.
    run = run_gate(f"tests.broken_suts:{name}", rows=[BROKEN[name]], exitfirst=True, progress=False)
    return name, run.verdict()


@pytest.fixture(scope="module")
def broken_runs() -> dict[str, dict[str, Any]]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(_broken, sorted(BROKEN)))


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_every_broken_adapter_fails_on_its_row(broken_runs: dict[str, dict[str, Any]], name: str) -> None:
    verdict = broken_runs[name]
    row = BROKEN[name]
    assert verdict["summary"]["verdict"] == "fail", f"gate should fail for {name}: {verdict['summary']}"
    assert verdict["rows"][row]["status"] == "fail", f"{name} not caught on {row}"
    failing = [s for s in verdict["scenarios"] if s["outcome"] == "failed"]
    assert failing and all(s.get("expected") and s.get("seen") for s in failing)
    assert verdict["stopped_at_first_failure"] is True and len(failing) == 1


PROFILE_ONLY = {name: m.row for name, m in sorted(MUTANTS.items()) if m.caught_by == ("profile",)}


@pytest.mark.parametrize("name", sorted(PROFILE_ONLY))
def test_a_mutant_of_a_reading_of_pwhs_passes_the_rfc_and_shows_as_a_divergence(name: str) -> None:
    """A mutant that breaks only pwh's reading (the documents allow what it does) must never fail
    the RFC verdict, and must still be seen: a profile divergence on its row."""
    row = PROFILE_ONLY[name]
    verdict = run_gate(f"mutant:{name}", rows=[row], progress=False).verdict()
    assert verdict["rows"][row]["status"] == "pass", f"{name} failed the RFC verdict on {row}: {verdict['summary']}"
    assert verdict["rows"][row]["profile"] != "pass", f"{name} left no profile divergence on {row}"
