"""pytest plugin for ``pwh mutate`` only: a scenario that ends with a profile divergence fails.

In a gate run a failed profile check is recorded and the scenario goes on (SPEC.md section 0), so
pytest passes it. The reference passes both verdicts, so against a mutated reference a profile
divergence is the matrix noticing the mutant: the campaign counts it as a kill."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pwh._harness.expect import current_ledger


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    outcome = yield
    if outcome.excinfo is not None:
        return
    ledger = current_ledger()
    if ledger is not None and ledger.divergences:
        first = ledger.divergences[0]
        outcome.force_exception(AssertionError(f"profile divergence: expected {first.get('expected')}; seen {first.get('seen')}"))
