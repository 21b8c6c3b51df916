"""HST-1..HST-6: seed 003 experiments B, C, D and the §7 host rows."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fakes._errors import FakeRejected
from fakes._host import (
    HOST_RESULT_MAX_BYTES,
    REQUEST_FORBIDDEN_KEYS,
    FakeHost,
    FakeHostExhausted,
    HostRequestRejected,
    HostResultRejected,
    Lifecycle,
    TurnPlan,
    ValidatedResult,
    build_host_request,
    forbidden_key_paths,
    make_host_result,
    read_host_output,
    validate_host_result,
)

SECRET = "sk_live_DO_NOT_ECHO"
COMPLETION_LIFECYCLE = {"adapter": "todo_lifecycle", "followup": {"kind": "successor", "ref": "todo-2"}}


def _plan(**changes: Any) -> TurnPlan:
    fields = {
        "turn_key": "turn-0001",
        "effect_ref": "effect-0001",
        "goal_id": "goal-1",
        "agent_id": "agent-1",
        "todo_id": "todo-1",
        "route": "primary",
        "gate": "capability_gate",
        "scope": ("docs", "tests"),
        "output_schema": "pwh_host_result_v0",
        "evidence_requirements": ("test_run_ref",),
        "stop_conditions": ("todo_completed", "budget_exhausted"),
        "resume_conditions": ("operator_ack",),
    }
    fields.update(changes)
    return TurnPlan(**fields)


@pytest.fixture
def request_() -> dict[str, Any]:
    return build_host_request(_plan())


def _result(request: dict[str, Any], kind: str = "progress", **fields: Any) -> dict[str, Any]:
    if kind == "validated_completion":
        fields.setdefault("lifecycle", COMPLETION_LIFECYCLE)
        fields.setdefault("evidence", ["test_run_ref:42"])
    return make_host_result(request, kind, **fields)


def _rejected(code: str, path: str, result: Any, request: dict[str, Any]) -> HostResultRejected:
    with pytest.raises(HostResultRejected) as info:
        validate_host_result(result, request)
    assert (info.value.code, info.value.path) == (code, path), info.value
    return info.value


def _all_keys(value: Any) -> list[str]:
    """Every mapping key at any depth (independent of the module's own walker)."""
    if isinstance(value, dict):
        return [k for k, v in value.items() for k in [k, *_all_keys(v)]]
    if isinstance(value, list):
        return [k for item in value for k in _all_keys(item)]
    return []


def _sized(request: dict[str, Any], size: int) -> bytes:
    """A valid, bound progress result serialised compactly to exactly ``size`` bytes."""
    result = _result(request, "progress", progress_observation="")
    base = len(json.dumps(result, separators=(",", ":")).encode())
    result["progress_observation"] = "x" * (size - base)
    raw = json.dumps(result, separators=(",", ":")).encode()
    assert len(raw) == size
    return raw


# --- experiment B: the host request boundary (HST-1) -----------------------------------------


def test_experiment_b_request_allows_only_first_two_phases_and_carries_bounds(request_: dict[str, Any]) -> None:
    plan = _plan()
    assert request_["allowed_phases"] == ["host_execute", "typed_result"]
    assert request_["schema_version"] == "pwh_host_request_v0"
    carried = {
        "turn_key": plan.turn_key,
        "effect_ref": plan.effect_ref,
        "route": plan.route,
        "todo_id": plan.todo_id,
        "gate": plan.gate,
        "scope": list(plan.scope),
        "output_schema": plan.output_schema,
        "evidence_requirements": list(plan.evidence_requirements),
        "stop_conditions": list(plan.stop_conditions),
        "resume_conditions": list(plan.resume_conditions),
    }
    assert {k: request_[k] for k in carried} == carried
    assert set(request_) == set(carried) | {"schema_version", "allowed_phases"}
    json.dumps(request_, allow_nan=False)  # plain JSON, nothing callable


def test_experiment_b_request_has_no_state_write_entry_at_any_depth(request_: dict[str, Any]) -> None:
    assert {"write", "commit", "journal", "spend", "state_path", "callback"} <= REQUEST_FORBIDDEN_KEYS
    for key in _all_keys(request_):
        assert not any(fragment in key.lower() for fragment in REQUEST_FORBIDDEN_KEYS), key
    assert forbidden_key_paths(request_) == []


def test_forbidden_key_walker_finds_nested_entries() -> None:
    smuggled = {"route": "x", "extra": [{"ok": 1}, {"Journal_Path": "/tmp/j"}], "on_commit": None}
    assert forbidden_key_paths(smuggled) == ["$.extra[1].Journal_Path", "$.on_commit"]


def test_fake_host_refuses_a_request_carrying_a_write_entry(request_: dict[str, Any]) -> None:
    host = FakeHost([_result(request_)])
    with pytest.raises(HostRequestRejected) as info:
        host.execute({**request_, "scope": [{"writeback_callback": "core.commit"}]})
    assert (info.value.code, info.value.path) == ("host_request_forbidden_key", "$.scope[0].writeback_callback")
    assert host.remaining == 1


def test_request_is_a_fresh_copy_the_host_cannot_use_to_change_the_plan(request_: dict[str, Any]) -> None:
    plan = _plan()
    request_["scope"].append("everything")
    assert build_host_request(plan)["scope"] == ["docs", "tests"]


@pytest.mark.parametrize(
    "changes,path",
    [
        ({"route": "../primary"}, "$.route"),
        ({"todo_id": ""}, "$.todo_id"),
        ({"scope": ()}, "$.scope"),
        ({"scope": ("docs", "/home/alice")}, "$.scope[1]"),
        ({"stop_conditions": ()}, "$.stop_conditions"),
        ({"resume_conditions": ("a", "a")}, "$.resume_conditions[1]"),
        ({"evidence_requirements": "test_run_ref"}, "$.evidence_requirements"),
    ],
)
def test_turn_plan_is_validated_on_construction(changes: dict, path: str) -> None:
    with pytest.raises(HostRequestRejected) as info:
        _plan(**changes)
    assert (info.value.code, info.value.path) == ("turn_plan_rejected", path)


def test_turn_plan_freezes_lists_into_tuples() -> None:
    assert _plan(scope=["docs"]).scope == ("docs",)


# --- the scriptable fake host ----------------------------------------------------------------


def test_fake_host_returns_scripted_outputs_in_order_and_records_requests(request_: dict[str, Any]) -> None:
    scripted = _result(request_, "progress", progress_observation="schrittweise ✓")
    host = FakeHost([scripted, b"\xff raw", "not json", lambda req: _result(req, "waiting")])
    first = host.execute(request_)
    assert first == json.dumps(scripted, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    assert "✓".encode() in first
    assert host.execute(request_) == b"\xff raw"
    assert host.execute(request_) == b"not json"
    assert json.loads(host.execute(request_))["result_kind"] == "waiting"
    assert host.requests == [request_] * 4
    with pytest.raises(FakeHostExhausted) as info:
        host.execute(request_)
    assert info.value.code == "fake_host_script_exhausted"
    assert len(host.requests) == 5  # the refused request was still received


def test_fake_host_script_and_records_cannot_be_changed_behind_its_back(request_: dict[str, Any]) -> None:
    scripted = _result(request_)
    host = FakeHost([scripted])
    scripted["result_kind"] = "validated_completion"
    out = host.execute(request_)
    assert json.loads(out)["result_kind"] == "progress"
    request_["route"] = "elsewhere"
    host.requests[0]["route"] = "tampered"
    assert host.requests[0]["route"] == "primary"


def test_fake_host_has_no_way_to_write() -> None:
    host = FakeHost([])
    public = [name for name in dir(host) if not name.startswith("__")]
    assert not [n for n in public if any(f in n.lower() for f in REQUEST_FORBIDDEN_KEYS | {"save", "open", "path"})]
    with pytest.raises(AttributeError):
        host.journal = object()  # type: ignore[attr-defined]


# --- experiment D: the 12,000-byte read cap (HST-5) ------------------------------------------


def test_experiment_d_oversize_output_rejected_before_any_parse(request_: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    assert HOST_RESULT_MAX_BYTES == 12_000
    exact = _sized(request_, 12_000)
    # Both a "parse the whole thing" and a "truncate at the cap, then parse" reader would accept these.
    for oversize in (exact + b" ", exact + b"}"):
        assert len(oversize) == 12_001
        assert json.loads(oversize[:12_000]) == json.loads(exact)

        def no_parse(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("oversize host output must not reach the JSON parser")

        with monkeypatch.context() as patch:
            patch.setattr(json, "loads", no_parse)
            patch.setattr(json.JSONDecoder, "decode", no_parse)
            with pytest.raises(HostResultRejected) as info:
                read_host_output(oversize)
        assert (info.value.code, info.value.path) == ("host_output_oversize", "$")
        assert "12001" in info.value.reason and "12000" in info.value.reason


def test_experiment_d_exactly_the_cap_is_accepted(request_: dict[str, Any]) -> None:
    raw = _sized(request_, HOST_RESULT_MAX_BYTES)
    validated = validate_host_result(read_host_output(raw), request_)
    assert validated.result_kind == "progress" and validated.event_kind == "progress_recorded"


def test_failure_table_oversize_output(request_: dict[str, Any]) -> None:
    raw = FakeHost([_result(request_, progress_observation=SECRET * 1000)]).execute(request_)
    with pytest.raises(HostResultRejected) as info:
        read_host_output(raw)
    assert info.value.code == "host_output_oversize"
    assert SECRET not in str(info.value)


def test_cap_is_a_parameter_and_applies_to_bytes_not_characters(request_: dict[str, Any]) -> None:
    raw = json.dumps({"k": "é" * 10}, ensure_ascii=False).encode()  # 20 bytes of é, 10 characters
    with pytest.raises(HostResultRejected) as info:
        read_host_output(raw, max_bytes=len(raw) - 1)
    assert info.value.code == "host_output_oversize"
    assert read_host_output(raw, max_bytes=len(raw)) == {"k": "é" * 10}


@pytest.mark.parametrize(
    "raw",
    [
        b"\xff\xfe{}",
        b'{"a": "' + SECRET.encode() + b'"',  # truncated
        b"[1, 2]",
        b'"' + SECRET.encode() + b'"',
        b"",
        b'{"a": NaN}',
        b'{"a": Infinity}',
        b'{"a": 1, "a": 2}',
        b"[" * 5000 + b"]" * 5000,
        b'{"a": 1} {"b": 2}',
        b"1" * 5000,
    ],
)
def test_output_that_is_not_one_json_object_is_rejected_without_echo(raw: bytes) -> None:
    with pytest.raises(HostResultRejected) as info:
        read_host_output(raw)
    assert (info.value.code, info.value.path) == ("host_output_not_json", "$")
    assert SECRET not in str(info.value) and SECRET not in json.dumps(info.value.to_json())


def test_output_must_be_bytes() -> None:
    with pytest.raises(HostResultRejected) as info:
        read_host_output('{"a": 1}')  # type: ignore[arg-type]
    assert info.value.code == "host_output_not_json"


# --- experiment C: a completion needs its lifecycle (HST-3) ----------------------------------


@pytest.mark.parametrize(
    "lifecycle,path",
    [
        (None, "$.lifecycle"),
        ({"followup": {"kind": "successor", "ref": "todo-2"}}, "$.lifecycle.adapter"),
        ({"adapter": None, "followup": {"kind": "no_followup", "ref": None}}, "$.lifecycle.adapter"),
        ({"adapter": "", "followup": {"kind": "no_followup", "ref": None}}, "$.lifecycle.adapter"),
        ({"adapter": "todo_lifecycle"}, "$.lifecycle.followup"),
        ({"adapter": "todo_lifecycle", "followup": None}, "$.lifecycle.followup"),
        ({"adapter": "todo_lifecycle", "followup": {"ref": "todo-2"}}, "$.lifecycle.followup.kind"),
        ({"adapter": "todo_lifecycle", "followup": {"kind": "successor"}}, "$.lifecycle.followup.ref"),
        ({"adapter": "todo_lifecycle", "followup": {"kind": "active_goal", "ref": None}}, "$.lifecycle.followup.ref"),
    ],
)
def test_experiment_c_completion_without_lifecycle_or_followup_is_rejected(request_: dict[str, Any], lifecycle: Any, path: str) -> None:
    result = _result(request_, "validated_completion", lifecycle=lifecycle)
    result["lifecycle"] = lifecycle  # make_host_result copies; keep the exact shape under test
    _rejected("completion_lifecycle_missing", path, result, request_)


def test_failure_table_completion_without_lifecycle(request_: dict[str, Any]) -> None:
    # Never downgraded: the same payload is not accepted as progress or as a silent success.
    result = _result(request_, "validated_completion", lifecycle=None)
    result["lifecycle"] = None
    _rejected("completion_lifecycle_missing", "$.lifecycle", result, request_)


@pytest.mark.parametrize(
    "followup,expected",
    [
        ({"kind": "successor", "ref": "todo-2"}, ("successor", "todo-2")),
        ({"kind": "active_goal", "ref": "goal-1"}, ("active_goal", "goal-1")),
        ({"kind": "no_followup", "ref": None}, ("no_followup", None)),
        ({"kind": "no_followup"}, ("no_followup", None)),
    ],
)
def test_completion_with_full_lifecycle_is_validated(request_: dict[str, Any], followup: dict, expected: tuple) -> None:
    result = _result(request_, "validated_completion", lifecycle={"adapter": "todo_lifecycle", "followup": followup})
    validated = validate_host_result(result, request_)
    assert validated.result_kind == "validated_completion"
    assert validated.event_kind == "todo_completed"
    assert validated.lifecycle == Lifecycle("todo_lifecycle", *expected)
    assert validated.evidence == ("test_run_ref:42",)


@pytest.mark.parametrize(
    "lifecycle,path",
    [
        ("yes", "$.lifecycle"),
        ({"adapter": "a/b", "followup": {"kind": "no_followup"}}, "$.lifecycle.adapter"),
        ({"adapter": "a", "followup": "successor"}, "$.lifecycle.followup"),
        ({"adapter": "a", "followup": {"kind": "guess", "ref": "x"}}, "$.lifecycle.followup.kind"),
        ({"adapter": "a", "followup": {"kind": "no_followup", "ref": "todo-2"}}, "$.lifecycle.followup.ref"),
        ({"adapter": "a", "followup": {"kind": "successor", "ref": "/tmp/x"}}, "$.lifecycle.followup.ref"),
        ({"adapter": "a", "followup": {"kind": "successor", "ref": "t", "commit": True}}, "$.lifecycle.followup.commit"),
        ({"adapter": "a", "followup": {"kind": "no_followup"}, "spend": 1}, "$.lifecycle.spend"),
    ],
)
def test_malformed_lifecycle_is_a_shape_rejection(request_: dict[str, Any], lifecycle: Any, path: str) -> None:
    result = _result(request_, "validated_completion")
    result["lifecycle"] = lifecycle
    _rejected("host_result_shape_rejected", path, result, request_)


@pytest.mark.parametrize("kind", ["progress", "replan", "waiting", "failed"])
def test_only_a_completion_carries_a_lifecycle(request_: dict[str, Any], kind: str) -> None:
    _rejected("host_result_shape_rejected", "$.lifecycle", _result(request_, kind, lifecycle=COMPLETION_LIFECYCLE), request_)


def test_validated_result_cannot_be_built_inconsistent() -> None:
    with pytest.raises(ValueError):
        ValidatedResult("t", "e", "validated_completion")
    with pytest.raises(ValueError):
        ValidatedResult("t", "e", "waiting", evidence=("x",))
    with pytest.raises(ValueError):
        ValidatedResult("t", "e", "progress", completed_phases=("writeback",))
    with pytest.raises(TypeError):
        ValidatedResult("t", "e", "progress", event_kind="todo_completed")  # type: ignore[call-arg]


# --- HST-2: a host cannot claim validation, writeback or spend -------------------------------


@pytest.mark.parametrize("phase", ["validation", "writeback", "spend", "schedule", "HOST_EXECUTE", "host_execute "])
@pytest.mark.parametrize("kind", ["progress", "waiting", "validated_completion"])
def test_failure_table_host_overclaims_phases(request_: dict[str, Any], phase: str, kind: str) -> None:
    result = _result(request_, kind, completed_phases=["host_execute", phase])
    _rejected("host_phase_overclaim", "$.completed_phases[1]", result, request_)


@pytest.mark.parametrize("phases", [[], ["host_execute"], ["typed_result", "host_execute"]])
def test_the_first_two_phases_are_claimable(request_: dict[str, Any], phases: list[str]) -> None:
    assert validate_host_result(_result(request_, completed_phases=phases), request_).completed_phases == tuple(phases)


# --- HST-4: a non-material result carries nothing material -----------------------------------


@pytest.mark.parametrize("kind", ["waiting", "failed"])
@pytest.mark.parametrize(
    "field,value",
    [("evidence", ["test_run_ref:1"]), ("path_delta", ["todo-1:done"]), ("progress_observation", "quietly advanced")],
)
def test_failure_table_non_material_with_evidence(request_: dict[str, Any], kind: str, field: str, value: Any) -> None:
    _rejected("non_material_with_evidence", f"$.{field}", _result(request_, kind, **{field: value}), request_)


def test_non_material_empty_observation_still_counts_as_carried(request_: dict[str, Any]) -> None:
    _rejected("non_material_with_evidence", "$.progress_observation", _result(request_, "waiting", progress_observation=""), request_)


@pytest.mark.parametrize("kind", ["waiting", "failed"])
def test_clean_non_material_result_writes_nothing_back(request_: dict[str, Any], kind: str) -> None:
    validated = validate_host_result(_result(request_, kind), request_)
    assert (validated.result_kind, validated.event_kind, validated.material) == (kind, None, False)


@pytest.mark.parametrize("kind,event", [("progress", "progress_recorded"), ("replan", "replan_recorded")])
def test_material_kinds_name_their_writeback_event(request_: dict[str, Any], kind: str, event: str) -> None:
    validated = validate_host_result(
        _result(request_, kind, evidence=["e1"], path_delta=["todo-1:started"], progress_observation="ok"), request_
    )
    assert (validated.event_kind, validated.material, validated.path_delta) == (event, True, ("todo-1:started",))
    assert validated.to_json()["evidence"] == ["e1"]


# --- HST-6: bound to this Turn ---------------------------------------------------------------


@pytest.mark.parametrize("field", ["turn_key", "effect_ref"])
@pytest.mark.parametrize("value", ["turn-0002", "", None, 1])
def test_result_from_another_turn_is_rejected(request_: dict[str, Any], field: str, value: Any) -> None:
    _rejected("host_result_binding_mismatch", f"$.{field}", _result(request_, **{field: value}), request_)


def test_malformed_request_is_not_blamed_on_the_host(request_: dict[str, Any]) -> None:
    with pytest.raises(HostRequestRejected) as info:
        validate_host_result(_result(request_), {"effect_ref": "effect-0001"})
    assert (info.value.code, info.value.path) == ("host_request_rejected", "$.turn_key")


# --- evidence is opaque tokens (seed §4) -----------------------------------------------------


@pytest.mark.parametrize(
    "items,index",
    [
        (["/home/alice/.ssh/id_rsa"], 0),
        (["ok", SECRET + " leaked"], 1),
        ([""], 0),
        (["a" * 129], 0),
        (["tok\n"], 0),
        (["https://example.com/x"], 0),
        ([{"kind": "file"}], 0),
        (["same", "same"], 1),
    ],
)
def test_evidence_items_must_be_opaque_tokens(request_: dict[str, Any], items: list, index: int) -> None:
    for kind in ("progress", "validated_completion"):
        error = _rejected("host_evidence_rejected", f"$.evidence[{index}]", _result(request_, kind, evidence=items), request_)
        assert SECRET not in str(error) and "alice" not in str(error)


def test_path_delta_items_must_be_opaque_tokens(request_: dict[str, Any]) -> None:
    _rejected("host_result_shape_rejected", "$.path_delta[0]", _result(request_, path_delta=["../../etc"]), request_)


# --- shape -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mutate,path",
    [
        (lambda r: r.update(writeback_done=True), "$.writeback_done"),
        (lambda r: r.update({"/secret/key": 1}), "$[?]"),
        (lambda r: r.pop("path_delta"), "$.path_delta"),
        (lambda r: r.update(schema_version="pwh_host_result_v1"), "$.schema_version"),
        (lambda r: r.update(result_kind="done"), "$.result_kind"),
        (lambda r: r.update(result_kind=None), "$.result_kind"),
        (lambda r: r.update(evidence="e1"), "$.evidence"),
        (lambda r: r.update(completed_phases=None), "$.completed_phases"),
        (lambda r: r.update(completed_phases=[1]), "$.completed_phases[0]"),
        (lambda r: r.update(completed_phases=["host_execute", "host_execute"]), "$.completed_phases[1]"),
        (lambda r: r.update(progress_observation=3), "$.progress_observation"),
    ],
)
def test_result_shape_is_exact(request_: dict[str, Any], mutate: Any, path: str) -> None:
    result = _result(request_)
    mutate(result)
    _rejected("host_result_shape_rejected", path, result, request_)


@pytest.mark.parametrize("result", [None, [], "progress", 1])
def test_result_must_be_an_object(request_: dict[str, Any], result: Any) -> None:
    _rejected("host_result_shape_rejected", "$", result, request_)


# --- the whole pre-writeback chain -----------------------------------------------------------


def test_plan_to_validated_result_through_the_fake_host() -> None:
    request = build_host_request(_plan())
    host = FakeHost(
        [lambda req: make_host_result(req, "validated_completion", evidence=["test_run_ref:7"], lifecycle=COMPLETION_LIFECYCLE)]
    )
    validated = validate_host_result(read_host_output(host.execute(request)), request)
    assert (validated.turn_key, validated.effect_ref, validated.event_kind) == ("turn-0001", "effect-0001", "todo_completed")
    assert host.requests == [request]


# --- hostile input raises only HostResultRejected (or succeeds) ------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
tokens = st.sampled_from(["host_execute", "typed_result", "validation", "e1", "todo-2", "turn-0001", "effect-0001", "", "/p"])
lifecycles = (
    st.none()
    | json_values
    | st.fixed_dictionaries(
        {"adapter": st.none() | tokens},
        optional={
            "followup": st.none()
            | st.fixed_dictionaries(
                {}, optional={"kind": st.sampled_from(["successor", "active_goal", "no_followup", "x"]), "ref": st.none() | tokens}
            )
        },
    )
)
VALID_REQUEST = build_host_request(_plan())
RESULT_KEYS = (
    "schema_version",
    "turn_key",
    "effect_ref",
    "result_kind",
    "completed_phases",
    "evidence",
    "path_delta",
    "progress_observation",
    "lifecycle",
    "extra",
)
field_values = (
    json_values
    | tokens
    | st.lists(tokens, max_size=3)
    | lifecycles
    | st.sampled_from(["validated_completion", "progress", "replan", "waiting", "failed", "pwh_host_result_v0"])
)


def _mutated(kind: str, mutations: list[tuple[str, Any]]) -> dict[str, Any]:
    result = _result(VALID_REQUEST, kind)
    for key, value in mutations:
        result[key] = value
    return result


# A valid result of each kind with zero to two fields replaced: reaches every check, and success.
near_valid = st.builds(
    _mutated,
    st.sampled_from(["validated_completion", "progress", "replan", "waiting", "failed"]),
    st.lists(st.tuples(st.sampled_from(RESULT_KEYS), field_values), max_size=2),
)
HYPO = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _check(result: Any, request: dict[str, Any]) -> None:
    try:
        validated = validate_host_result(result, request)
    except HostResultRejected as error:
        assert error.path.startswith("$") and isinstance(error.reason, str)
        return
    assert validated.result_kind == result["result_kind"]  # never downgraded or upgraded
    assert (validated.turn_key, validated.effect_ref) == (request["turn_key"], request["effect_ref"])
    assert set(validated.completed_phases) <= {"host_execute", "typed_result"}
    if validated.result_kind == "validated_completion":
        assert validated.lifecycle is not None and validated.event_kind == "todo_completed"
    if not validated.material:
        assert validated.evidence == () and validated.path_delta == () and validated.progress_observation is None


@HYPO
@given(result=json_values)
def test_arbitrary_json_is_rejected_or_validated_never_crashes(request_: dict[str, Any], result: Any) -> None:
    _check(result, request_)


@HYPO
@given(result=near_valid)
def test_near_valid_results_are_rejected_or_validated_never_crashes(request_: dict[str, Any], result: dict) -> None:
    _check(result, request_)


@HYPO
@given(
    raw=st.binary(max_size=64)
    | st.tuples(st.binary(min_size=1, max_size=8), st.integers(HOST_RESULT_MAX_BYTES - 2, HOST_RESULT_MAX_BYTES + 2)).map(
        lambda t: (t[0] * HOST_RESULT_MAX_BYTES)[: t[1]]
    )
)
def test_arbitrary_bytes_are_read_or_rejected_never_crash(raw: bytes) -> None:
    try:
        value = read_host_output(raw)
    except HostResultRejected as error:
        if len(raw) > HOST_RESULT_MAX_BYTES:
            assert error.code == "host_output_oversize"
        else:
            assert error.code == "host_output_not_json"
        return
    assert type(value) is dict and len(raw) <= HOST_RESULT_MAX_BYTES


@HYPO
@given(value=json_values)
def test_serialised_json_reads_back_iff_it_is_an_object(value: Any) -> None:
    raw = json.dumps(value).encode()
    try:
        read = read_host_output(raw)
    except FakeRejected as error:
        assert isinstance(error, HostResultRejected) and not isinstance(value, dict)
        return
    assert isinstance(value, dict) and read == value
