"""Contracts (SPEC §2): schemas plus cross-field rules; every rejection has a stable code and a path."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from fakes._packets import (
    GENERIC_INTENT_KIND,
    GENERIC_PAYLOAD_SCHEMA,
    intent_for,
    not_applicable,
    proposed,
    registration,
    source,
)
from pwh import (
    CORE_CEILINGS,
    SCHEMA_NAMES,
    admissibility,
    build_hook_input,
    dispatch_id,
    load_schema,
    validate_registration,
    validate_result,
    validate_source,
)
from pwh._core import codes
from pwh._core.schemas import compile_schema

KINDS = frozenset({GENERIC_INTENT_KIND})
PAYLOADS = {GENERIC_INTENT_KIND: compile_schema(GENERIC_PAYLOAD_SCHEMA)}


def reg_errors(reg: Any, ceilings: dict[str, int] = CORE_CEILINGS) -> list[tuple[str, str]]:
    return [(r.code, r.path) for r in validate_registration(reg, known_intent_kinds=KINDS, ceilings=ceilings)]


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_every_schema_is_valid_2020_12(name: str) -> None:
    schema = load_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_the_rfc_example_registration_is_valid() -> None:
    reg = registration(
        "periodic_report.runtime_trigger",
        intent_kinds=[GENERIC_INTENT_KIND],
        budget={"max_invocations_per_dispatch": 1, "max_intents_per_dispatch": 1, "timeout_ms": 1000},
    )
    assert reg_errors(reg) == []


@pytest.mark.parametrize(
    "change, path",
    [
        ({"phase": "interaction_projection"}, "$.phase"),
        ({"failure_policy": "retry"}, "$.failure_policy"),
        ({"event_kinds": []}, "$.event_kinds"),
        ({"event_kinds": ["todo_completed", "todo_completed"]}, "$.event_kinds"),
        ({"event_kinds": ["progress_recorded"]}, "$.event_kinds[0]"),
        ({"intent_kinds": ["unknown.kind"]}, "$.intent_kinds[0]"),
        ({"requested_read_scope": ["full_writeback_payload"]}, "$.requested_read_scope[0]"),
        ({"command": "rm -rf x"}, "$.command"),
        ({"import_string": "pkg.mod:fn"}, "$.import_string"),
        ({"callback": "on_done"}, "$.callback"),
        ({"write_scope": ["repo"]}, "$.write_scope"),
        ({"budget": {"timeout_ms": 0}}, "$.budget.timeout_ms"),
        ({"budget": {"timeout_ms": 30001}}, "$.budget.timeout_ms"),
        ({"budget": {"max_result_bytes": 10**9}}, "$.budget.max_result_bytes"),
        ({"budget": {"max_intents_per_dispatch": 17}}, "$.budget.max_intents_per_dispatch"),
        ({"hook_id": "bad hook"}, "$.hook_id"),
    ],
)
def test_bad_registrations_name_the_field(change: dict[str, Any], path: str) -> None:
    reg = registration(**change)
    if "hook_id" in change:
        reg["capability_id"] = "a"
    errors = reg_errors(reg)
    assert errors and errors[0] == (codes.REGISTRATION_REJECTED, path)


def test_missing_field_is_named() -> None:
    reg = registration()
    del reg["failure_policy"]
    assert reg_errors(reg) == [(codes.REGISTRATION_REJECTED, "$.failure_policy")]


def test_profile_ceiling_lower_than_core() -> None:
    assert reg_errors(registration(), {**CORE_CEILINGS, "timeout_ms": 100}) == [(codes.REGISTRATION_REJECTED, "$.budget.timeout_ms")]


def test_rejection_reason_never_quotes_the_value() -> None:
    secret = "alice.private@corp.example.com"
    found = validate_registration(registration(hook_id=secret), known_intent_kinds=KINDS, ceilings=CORE_CEILINGS)
    assert found and secret not in json.dumps([r.to_json() for r in found])


def _input(reg: dict[str, Any]) -> dict[str, Any]:
    src = source()
    did = dispatch_id(src["receipt_id"], reg["hook_id"], reg["schema_version"], src["event_kind"])
    return build_hook_input(src, reg, did)


def check_result(result: Any, reg: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    reg = reg or registration()
    hook_input = _input(reg)
    _, _, found = validate_result(result, registration=reg, dispatch=hook_input["dispatch_id"], payload_validators=PAYLOADS)
    return [(r.code, r.path) for r in found]


def test_valid_results_pass() -> None:
    hook_input = _input(registration())
    assert check_result(not_applicable()) == []
    assert check_result(proposed(intent_for(hook_input))) == []


@pytest.mark.parametrize(
    "mutate, path",
    [
        (lambda i: i.update(hook_id="z.other"), "$.intents[0].hook_id"),
        (lambda i: i.update(capability_id="zz"), "$.intents[0].capability_id"),
        (lambda i: i.update(source_dispatch_id="pwh_" + "f" * 64), "$.intents[0].source_dispatch_id"),
        (lambda i: i.update(intent_id="pwi_" + "0" * 64), "$.intents[0].intent_id"),
        (lambda i: i.update(external_write_performed=True), "$.intents[0].external_write_performed"),
        (lambda i: i.update(grants_new_action_authority=True), "$.intents[0].grants_new_action_authority"),
        (lambda i: i["payload"].update(extra="x"), "$.intents[0].payload.extra"),
        (lambda i: i.update(intent_kind="other.kind"), "$.intents[0].intent_kind"),
        (lambda i: i.update(unexpected=1), "$.intents[0].unexpected"),
    ],
)
def test_intents_are_bound_to_registration_and_dispatch(mutate: Any, path: str) -> None:
    intent = intent_for(_input(registration()))
    mutate(intent)
    errors = check_result(proposed(intent))
    assert (codes.RESULT_CONTRACT_REJECTED, path) in errors


def test_result_status_and_intents_must_agree() -> None:
    hook_input = _input(registration())
    assert check_result({**not_applicable(), "intents": [intent_for(hook_input)]})
    assert check_result(proposed())


def test_result_over_byte_budget_is_rejected_at_root() -> None:
    hook_input = _input(registration())
    big = intent_for(hook_input, {"note_ref": "n", "filler": "x" * 20000})
    assert check_result(proposed(big)) == [(codes.RESULT_CONTRACT_REJECTED, "$")]


def test_more_intents_than_budget() -> None:
    hook_input = _input(registration())
    intents = [intent_for(hook_input, {"note_ref": f"n{i}"}) for i in range(3)]
    assert check_result(proposed(*intents)) == [(codes.RESULT_CONTRACT_REJECTED, "$.intents")]


def test_requested_write_scope_is_accepted_as_a_request() -> None:
    intent = intent_for(_input(registration()), requested_write_scope=["report.publish"])
    assert check_result(proposed(intent)) == []


def test_non_json_results_are_rejected_with_a_path() -> None:
    hook_input = _input(registration())
    intent = intent_for(hook_input)
    intent["payload"]["n"] = float("nan")
    assert check_result(proposed(intent)) == [(codes.RESULT_CONTRACT_REJECTED, "$.intents[0].payload.n")]
    assert check_result({1: 2}) == [(codes.RESULT_CONTRACT_REJECTED, "$")]
    assert check_result("proposed") == [(codes.RESULT_CONTRACT_REJECTED, "$")]


@pytest.mark.parametrize(
    "change, code, path",
    [
        ({"step_status": "prepared"}, codes.SOURCE_NOT_COMMITTED, "$.step_status"),
        ({"step_status": "inferred"}, codes.SOURCE_NOT_COMMITTED, "$.step_status"),
        ({"step_status": "prose_only"}, codes.SOURCE_NOT_COMMITTED, "$.step_status"),
        ({"durable_checkpoint": False}, codes.SOURCE_NOT_DURABLE, "$.durable_checkpoint"),
        ({"plan_effect_id": "effect_other"}, codes.EFFECT_MISMATCH, "$.effect_id"),
        ({"goal_id": ""}, codes.SOURCE_REJECTED, "$.goal_id"),
        ({"turn_instance_id": ""}, codes.SOURCE_REJECTED, "$.turn_instance_id"),
    ],
)
def test_admissibility(change: dict[str, Any], code: str, path: str) -> None:
    plain, errors = validate_source(source(**change))
    assert plain is not None and errors == []
    refusal = admissibility(plain, phase_enabled=True)
    assert refusal is not None and (refusal.code, refusal.path) == (code, path)


def test_admissible_source_and_phase_switch() -> None:
    plain, _ = validate_source(source())
    assert admissibility(plain, phase_enabled=True) is None
    refusal = admissibility(plain, phase_enabled=False)
    assert refusal is not None and refusal.code == codes.PHASE_DISABLED


def test_progress_writeback_is_not_a_hook_event() -> None:
    plain, _ = validate_source(source(event_kind="progress_recorded"))
    refusal = admissibility(plain, phase_enabled=True)
    assert refusal is not None and refusal.code == codes.NOT_A_HOOK_EVENT


def test_post_writeback_actions_are_ignored_hints() -> None:
    plain, errors = validate_source(source(post_writeback_actions=[{"command": "make report"}]))
    assert errors == [] and admissibility(plain, phase_enabled=True) is None
    hook_input = build_hook_input(plain, registration(), "pwh_" + "0" * 64)
    assert "post_writeback_actions" not in json.dumps(hook_input)


def test_projection_only_when_requested() -> None:
    assert "projection" in _input(registration())
    assert "projection" not in _input(registration(requested_read_scope=["settlement_identity"]))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10) | st.floats(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=25,
)


def _mutations(base: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Schema-violating variants of a valid packet: one field replaced by arbitrary JSON."""
    return st.builds(lambda key, value: {**base, key: value}, st.sampled_from(sorted(base)), json_values)


@given(json_values | _mutations(registration()))
def test_registration_validator_never_raises(value: Any) -> None:
    for rejection in validate_registration(value, known_intent_kinds=KINDS, ceilings=CORE_CEILINGS):
        assert rejection.code == codes.REGISTRATION_REJECTED and rejection.path.startswith("$")


@given(json_values | _mutations(source()))
def test_source_validator_never_raises(value: Any) -> None:
    plain, errors = validate_source(value)
    if plain is None:
        assert errors and all(e.code == codes.SOURCE_REJECTED and e.path.startswith("$") for e in errors)
    else:
        refusal = admissibility(plain, phase_enabled=True)
        assert refusal is None or refusal.code in codes.DISPATCH_CODES


@given(json_values | _mutations(proposed(intent_for(_input(registration())))))
def test_result_validator_never_raises(value: Any) -> None:
    for code, path in check_result(value):
        assert code == codes.RESULT_CONTRACT_REJECTED and path.startswith("$")


def test_a_trailing_newline_is_not_an_opaque_token() -> None:
    # Python's "$" matches before a final newline; the schemas end tokens with "(?!\n)$" so every
    # validator of the published schemas, Python or ECMA-262, refuses "token\n".
    plain, errors = validate_source(source(receipt_id="receipt_0001\n"))
    assert plain is None and errors[0].path == "$.receipt_id"


def test_payload_schemas_compile_once_per_content_and_the_cache_stays_bounded() -> None:
    """The registry compiles a payload schema once per content (every fresh catalog registers the
    same kinds again); past its bound it drops the oldest, and every validator still judges by its
    own schema."""
    from pwh._core import registry

    registry._COMPILED.clear()
    schemas = [{"type": "object", "properties": {"n": {"const": i}}, "required": ["n"]} for i in range(registry._COMPILED_MAX + 5)]
    validators = [registry._compiled(s) for s in schemas]
    assert len(registry._COMPILED) == registry._COMPILED_MAX
    assert registry._compiled(schemas[-1]) is validators[-1]  # the same content: the same validator
    assert registry._compiled(schemas[0]) is not validators[0]  # dropped, compiled afresh
    for i in (0, 7, len(schemas) - 1):
        assert validators[i].is_valid({"n": i}) and not validators[i].is_valid({"n": i + 1})
