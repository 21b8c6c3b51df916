"""The turn seam: seed-003 rows judge the SUT's own primary-Turn code when it offers it (that they
stay testbed self-checks when it does not is held by tests/whole_gate/test_gate.py's reference run);
a conforming seam passes them and a lenient one fails them."""

from __future__ import annotations

from typing import Any

import pytest

from pwh import RULES, turn_contracts_of
from pwh._harness.gate import run_gate

SEED003 = [r.id for r in RULES if r.group != "matrix"]
# Recovery by readback and provider resolution for a Turn: no turn-seam operation reaches them.
UNREACHABLE = {"REC-1", "FT-7", "FT-1", "FT-2"}
# Rows whose every scenario reads a turn-seam answer that a lenient seam gets wrong.
LENIENT_FAILS = {"PRV-1", "HST-2", "HST-3", "HST-4", "HST-5", "HST-6", "FT-3", "FT-4", "FT-5", "FT-6"}


@pytest.fixture(scope="module")
def verdicts() -> dict[str, Any]:
    out = {}
    for name, spec in (
        ("testbed", "tests.suts.turn_adapters:testbed_turn"),
        ("lenient", "tests.suts.turn_adapters:lenient_turn"),
    ):
        out[name] = run_gate(spec, progress=False, rows=SEED003).verdict()
    return out


def test_a_conforming_turn_seam_passes_every_row_it_reaches(verdicts: dict[str, Any]) -> None:
    rows = verdicts["testbed"]["rows"]
    reached = [r for r in SEED003 if r not in UNREACHABLE]
    assert {r: rows[r]["rfc"] for r in reached} == dict.fromkeys(reached, "pass")
    assert all(rows[r]["seams"] == ["turn"] for r in reached)
    assert {r: rows[r]["rfc"] for r in UNREACHABLE} == dict.fromkeys(UNREACHABLE, "self-check")
    assert verdicts["testbed"]["summary"]["verdict"] == "pass"


def test_a_lenient_turn_seam_fails_the_rows_that_judge_it(verdicts: dict[str, Any]) -> None:
    rows = verdicts["lenient"]["rows"]
    assert {r for r in SEED003 if rows[r]["rfc"] == "fail"} >= LENIENT_FAILS
    failed = [s for s in verdicts["lenient"]["scenarios"] if s["rfc"] == "fail"]
    assert failed and all(s["counts_for"] == "sut" and s["seam"] == "turn" for s in failed)
    assert verdicts["lenient"]["summary"]["verdict"] == "fail"


def test_a_seam_offering_an_unknown_operation_is_refused() -> None:
    class Odd:
        def turn_contracts(self) -> Any:
            class Contracts:
                name = "odd"
                operations = frozenset({"register_provider", "repair_everything"})

            return Contracts()

    with pytest.raises(TypeError, match="repair_everything"):
        turn_contracts_of(Odd())
    assert turn_contracts_of(object()) is None
