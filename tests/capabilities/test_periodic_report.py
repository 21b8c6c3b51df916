"""The periodic-report capability: registration (RFC §6), producer (§7–§8, M10/M11), reducer."""

from __future__ import annotations

import ast
import copy
import json
import pathlib
import re
import types
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from pwh import canonical_bytes, intent_id
from pwh.capabilities import periodic_report as pr
from pwh.capabilities.periodic_report._registration import payload_problem

DISPATCH = "pwh_" + "d" * 64
PAYLOAD_VALIDATOR = Draft202012Validator(pr.PAYLOAD_SCHEMA)
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
TOKENS = st.builds(
    lambda head, tail: head + tail,
    st.sampled_from(_ALNUM),
    st.text(alphabet=_ALNUM + "_.:-", max_size=127),
)


def freeze(value: Any) -> Any:
    """The immutable view a dispatcher hands a provider: mappingproxy for dicts, tuple for lists."""
    if isinstance(value, dict):
        return types.MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    return value


def hook_input(
    event_kind: str = "todo_completed",
    transition: str | None = "segment_completed",
    *,
    dispatch: str = DISPATCH,
    segment_ref: str = "segment_opaque",
    fact_refs: list[str] | None = None,
) -> dict[str, Any]:
    packet: dict[str, Any] = {
        "schema_version": "loopx_post_writeback_hook_input_v0",
        "dispatch_id": dispatch,
        "hook_id": "periodic_report.runtime_trigger",
        "capability_id": "periodic_report",
        "source": {
            "receipt_id": "receipt_opaque",
            "effect_id": "effect_opaque",
            "step_kind": "durable_writeback",
            "goal_id": "goal_opaque",
            "agent_id": "agent_opaque",
            "todo_id": "todo_opaque",
            "turn_instance_id": "turn_opaque",
            "event_kind": event_kind,
            "state_revision": "revision_opaque",
            "committed_at": "2026-08-26T00:00:00Z",
        },
        "boundary": {
            "raw_task_text_recorded": False,
            "raw_logs_recorded": False,
            "raw_trajectory_recorded": False,
            "raw_session_transcript_recorded": False,
            "credential_values_recorded": False,
            "absolute_paths_recorded": False,
        },
    }
    if transition is not None:
        packet["projection"] = {
            "schema_version": "loopx_post_writeback_event_projection_v0",
            "transition": transition,
            "segment_ref": segment_ref,
            "fact_refs": ["fact_opaque"] if fact_refs is None else fact_refs,
        }
    return packet


def only_intent(result: Mapping[str, Any]) -> dict[str, Any]:
    assert result["status"] == "proposed"
    assert len(result["intents"]) == 1
    return result["intents"][0]


NOT_APPLICABLE = {
    "schema_version": "loopx_post_writeback_hook_result_v0",
    "status": "not_applicable",
    "intents": [],
}


# -- registration -------------------------------------------------------------------------------


def test_registration_is_exactly_rfc_section_6() -> None:
    assert pr.REGISTRATION == {
        "schema_version": "loopx_post_writeback_capability_hook_registration_v0",
        "hook_id": "periodic_report.runtime_trigger",
        "capability_id": "periodic_report",
        "phase": "post_writeback",
        "event_kinds": ["todo_completed", "replan_recorded"],
        "intent_kinds": ["periodic_report.trigger_evaluation"],
        "requested_read_scope": ["settlement_identity", "bounded_event_projection"],
        "budget": {
            "max_invocations_per_dispatch": 1,
            "max_intents_per_dispatch": 1,
            "max_result_bytes": 16384,
            "timeout_ms": 1000,
        },
        "failure_policy": "isolate",
    }
    assert pr.INTENT_KIND == "periodic_report.trigger_evaluation"


def test_payload_schema_is_closed_2020_12_with_bounded_opaque_tokens() -> None:
    Draft202012Validator.check_schema(pr.PAYLOAD_SCHEMA)
    assert pr.PAYLOAD_SCHEMA["additionalProperties"] is False
    token = pr.PAYLOAD_SCHEMA["$defs"]["opaque_token"]
    assert token["pattern"] == "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}(?!\\n)$"
    assert not Draft202012Validator({"type": "string", "pattern": token["pattern"]}).is_valid("segment_1\n")
    refs = pr.PAYLOAD_SCHEMA["properties"]["source_event_refs"]
    assert (refs["minItems"], refs["maxItems"], refs["uniqueItems"]) == (0, 16, True)
    good = {"transition": "replanned", "segment_ref": "s1", "source_event_refs": ["e1"]}
    assert PAYLOAD_VALIDATOR.is_valid(good)
    for bad in (
        {**good, "extra": 1},
        {**good, "segment_ref": "/abs/path"},
        {**good, "source_event_refs": ["e1", "e1"]},
        {**good, "source_event_refs": [f"e{i}" for i in range(17)]},
        {**good, "transition": "segment_progressed"},
    ):
        assert not PAYLOAD_VALIDATOR.is_valid(bad)
        assert payload_problem(bad) is not None


class RecordingRegistrar:
    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def register_intent_kind(self, intent_kind: str, payload_schema: dict[str, Any]) -> None:
        self.calls.append(("register_intent_kind", (intent_kind, payload_schema)))

    def install(self, registration: dict[str, Any], producer: Any) -> None:
        self.calls.append(("install", (registration, producer)))


def test_install_registers_the_intent_kind_before_the_hook_and_hands_over_copies() -> None:
    registrar = RecordingRegistrar()
    pr.install(registrar)
    assert [name for name, _ in registrar.calls] == ["register_intent_kind", "install"]
    kind, schema = registrar.calls[0][1]
    registration, producer = registrar.calls[1][1]
    assert (kind, schema, registration, producer) == (
        pr.INTENT_KIND,
        pr.PAYLOAD_SCHEMA,
        pr.REGISTRATION,
        pr.produce,
    )
    registration["budget"]["timeout_ms"] = 10**9  # a registrar scribbling on its copy...
    schema["additionalProperties"] = True
    assert pr.REGISTRATION["budget"]["timeout_ms"] == 1000  # ...cannot change the contract
    assert pr.PAYLOAD_SCHEMA["additionalProperties"] is False


# -- producer -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event_kind", "transition"),
    [("todo_completed", "segment_completed"), ("replan_recorded", "replanned")],
)
def test_eligible_projection_yields_exactly_one_typed_intent(event_kind: str, transition: str) -> None:
    result = pr.produce(freeze(hook_input(event_kind, transition, fact_refs=["f1", "f2"])))
    intent = only_intent(result)
    payload = {"transition": transition, "segment_ref": "segment_opaque", "source_event_refs": ["f1", "f2"]}
    assert result["schema_version"] == "loopx_post_writeback_hook_result_v0"
    assert intent == {
        "schema_version": "loopx_post_writeback_intent_v0",
        "intent_id": intent_id(DISPATCH, pr.INTENT_KIND, "weekly_v0", payload),
        "hook_id": "periodic_report.runtime_trigger",
        "capability_id": "periodic_report",
        "source_dispatch_id": DISPATCH,
        "intent_kind": "periodic_report.trigger_evaluation",
        "operation": "evaluate_runtime_trigger",
        "policy_version": "weekly_v0",
        "payload": payload,
        "budget": {"max_attempts": 1, "max_result_bytes": 16384},
        "requested_write_scope": [],
        "failure_policy": "isolate",
        "grants_new_action_authority": False,
        "external_write_performed": False,
    }
    assert PAYLOAD_VALIDATOR.is_valid(intent["payload"])
    json.dumps(result, allow_nan=False)  # plain JSON: lists, not the input's tuples


@pytest.mark.parametrize(
    "packet",
    [
        hook_input("todo_completed", "segment_progressed"),
        hook_input("todo_completed", "replanned"),
        hook_input("replan_recorded", "segment_completed"),
        hook_input("replan_recorded", "segment_progressed"),
        hook_input("todo_completed", None),  # no bounded_event_projection requested
        hook_input("progress_recorded", "segment_completed"),
        hook_input("todo_completed", "segment_completed", segment_ref="/home/someone/x"),
        hook_input("todo_completed", "segment_completed", fact_refs=["ok", "has space"]),
    ],
    ids=[
        "completion-without-segment",
        "completion-with-replan-transition",
        "replan-with-completion-transition",
        "replan-with-progress",
        "no-projection",
        "unknown-event-kind",
        "unsafe-segment-ref",
        "unsafe-fact-ref",
    ],
)
def test_ineligible_input_is_not_applicable(packet: dict[str, Any]) -> None:
    assert pr.produce(freeze(packet)) == NOT_APPLICABLE


def test_a_projection_as_section_7_shows_it_yields_the_intent_with_a_derived_segment_ref() -> None:
    """§7's example projection carries only transition and fact_refs: the capability works from what
    §7 guarantees (the source's opaque ids), not from a field only pwh's projection carries."""
    packet = hook_input()
    del packet["projection"]["segment_ref"]
    intent = only_intent(pr.produce(freeze(packet)))
    derived = intent["payload"]["segment_ref"]
    assert re.fullmatch(r"seg_[0-9a-f]{32}", derived) and derived != "segment_opaque" and PAYLOAD_VALIDATOR.is_valid(intent["payload"])
    assert only_intent(pr.produce(freeze(packet)))["payload"]["segment_ref"] == derived  # the same receipt, the same segment
    other = copy.deepcopy(packet)
    other["source"]["receipt_id"] = "receipt_other"
    assert only_intent(pr.produce(freeze(other)))["payload"]["segment_ref"] != derived  # another receipt, another segment
    unnamed = copy.deepcopy(packet)
    del unnamed["source"]["state_revision"]
    assert pr.produce(freeze(unnamed)) == NOT_APPLICABLE  # nothing opaque to name the segment by


def test_a_projection_of_another_schema_is_not_applicable() -> None:
    packet = hook_input()
    packet["projection"]["schema_version"] = "some_other_projection_v9"
    assert pr.produce(freeze(packet)) == NOT_APPLICABLE


@pytest.mark.parametrize(
    "garbage",
    [
        None,
        42,
        "todo_completed",
        (),
        {},
        types.MappingProxyType({"schema_version": "loopx_post_writeback_hook_input_v0"}),
        {**hook_input(), "dispatch_id": 7},
        {**hook_input(), "source": ["todo_completed"]},
        {**hook_input(), "projection": {**hook_input()["projection"], "fact_refs": "fact_opaque"}},
    ],
    ids=repr,
)
def test_producer_answers_not_applicable_rather_than_raising_on_garbage(garbage: Any) -> None:
    assert pr.produce(garbage) == NOT_APPLICABLE


def test_producer_survives_a_hostile_mapping() -> None:
    packet = hook_input()
    packet["projection"] = types.MappingProxyType(Hostile())
    assert pr.produce(freeze(packet)) == NOT_APPLICABLE


def test_producer_is_deterministic_and_identity_tracks_its_inputs() -> None:
    first = pr.produce(freeze(hook_input()))
    again = pr.produce(freeze(hook_input()))
    assert canonical_bytes(first) == canonical_bytes(again)
    other_dispatch = only_intent(pr.produce(freeze(hook_input(dispatch="pwh_" + "e" * 64))))
    other_segment = only_intent(pr.produce(freeze(hook_input(segment_ref="segment_2"))))
    ids = {only_intent(first)["intent_id"], other_dispatch["intent_id"], other_segment["intent_id"]}
    assert len(ids) == 3


def test_producer_does_not_mutate_its_input() -> None:
    packet = hook_input(fact_refs=["f1", "f2"])
    before = copy.deepcopy(packet)
    frozen = freeze(packet)
    only_intent(pr.produce(frozen))  # an attempted write to the frozen view would not be eligible
    result = pr.produce(packet)  # and a mutable dict is left exactly as it was
    assert packet == before
    result["intents"][0]["payload"]["source_event_refs"].append("zzz")
    assert packet == before


def test_fact_refs_are_deduplicated_in_order_and_bounded() -> None:
    intent = only_intent(pr.produce(freeze(hook_input(fact_refs=["b", "a", "b"]))))
    assert intent["payload"]["source_event_refs"] == ["b", "a"]
    many = [f"fact_{i}" for i in range(40)]
    intent = only_intent(pr.produce(freeze(hook_input(fact_refs=many))))
    assert intent["payload"]["source_event_refs"] == many[:16]
    assert PAYLOAD_VALIDATOR.is_valid(intent["payload"])


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    event_kind=st.sampled_from(["todo_completed", "replan_recorded"]),
    transition=st.sampled_from(["segment_completed", "segment_progressed", "replanned", None]),
    segment_ref=TOKENS,
    fact_refs=st.lists(TOKENS, max_size=24),
    dispatch=st.text(alphabet="0123456789abcdef", min_size=64, max_size=64).map("pwh_".__add__),
)
def test_producer_never_raises_on_well_formed_inputs(
    event_kind: str, transition: str | None, segment_ref: str, fact_refs: list[str], dispatch: str
) -> None:
    packet = hook_input(event_kind, transition, dispatch=dispatch, segment_ref=segment_ref, fact_refs=fact_refs)
    result = pr.produce(freeze(packet))
    eligible = (event_kind, transition) in {
        ("todo_completed", "segment_completed"),
        ("replan_recorded", "replanned"),
    }
    if not eligible:
        assert result == NOT_APPLICABLE
        return
    intent = only_intent(result)
    assert PAYLOAD_VALIDATOR.is_valid(intent["payload"])
    assert intent["payload"]["segment_ref"] == segment_ref
    assert set(intent["payload"]["source_event_refs"]) <= set(fact_refs)
    assert intent["intent_id"] == intent_id(dispatch, pr.INTENT_KIND, "weekly_v0", intent["payload"])


_ODD_TEXT = st.one_of(st.sampled_from(["", "a\n", "-x", "a b", "x" * 129, "ref/1", "é"]), st.text(max_size=12))
_PAYLOAD_TEXT = st.one_of(TOKENS, TOKENS, _ODD_TEXT)
_PAYLOADS = st.tuples(
    st.fixed_dictionaries(
        {
            "transition": st.sampled_from(["segment_completed", "replanned", "segment_progressed", 3]),
            "segment_ref": st.one_of(_PAYLOAD_TEXT, st.integers()),
            "source_event_refs": st.one_of(
                st.lists(st.sampled_from(["e1", "e2", "e3"]), max_size=4),
                st.lists(TOKENS, max_size=18),
                st.lists(_PAYLOAD_TEXT, max_size=4),
            ),
        },
        optional={"extra": st.none()},
    ),
    st.sets(st.sampled_from(["transition", "segment_ref", "source_event_refs"]), max_size=1),
).map(lambda pair: {k: v for k, v in pair[0].items() if k not in pair[1]})
_GOOD = {"transition": "replanned", "segment_ref": "s1", "source_event_refs": ["e1"]}


@settings(max_examples=300)
@given(payload=_PAYLOADS)
@example(payload={**_GOOD, "segment_ref": "a b"})
@example(payload={**_GOOD, "source_event_refs": ["e1", "e1"]})
@example(payload={**_GOOD, "source_event_refs": ["e1", "ok\n"]})
@example(payload={**_GOOD, "segment_ref": "x" * 129})
def test_hand_payload_check_agrees_with_the_published_schema(payload: dict[str, Any]) -> None:
    hand_ok = payload_problem(payload) is None
    schema_ok = PAYLOAD_VALIDATOR.is_valid(payload)
    if hand_ok:
        assert schema_ok  # never laxer than the schema
    texts = [payload.get("segment_ref"), *payload.get("source_event_refs", [])]
    if schema_ok and not any(isinstance(t, str) and t.endswith("\n") for t in texts):
        assert hand_ok  # and stricter only where Python's "$" admits a trailing newline


# -- reducer ------------------------------------------------------------------------------------


def trigger_intent(transition: str, segment_ref: str, dispatch: str = DISPATCH) -> dict[str, Any]:
    event_kind = "replan_recorded" if transition == "replanned" else "todo_completed"
    return only_intent(pr.produce(hook_input(event_kind, transition, dispatch=dispatch, segment_ref=segment_ref)))


def completed(n: int) -> dict[str, Any]:
    return trigger_intent("segment_completed", f"segment_{n}")


def replanned(n: int) -> dict[str, Any]:
    return trigger_intent("replanned", f"replan_{n}")


def summary(decision: pr.TriggerDecision) -> tuple[bool, str, int]:
    return decision.report_due, decision.reason, decision.completed_segments


def test_report_is_due_when_completions_reach_the_threshold_then_the_count_resets() -> None:
    reducer = pr.TriggerReducer(completion_threshold=2)
    got = [summary(reducer.reduce(completed(i))) for i in range(5)]
    assert got == [
        (False, "below_threshold", 1),
        (True, "completion_threshold_reached", 2),
        (False, "below_threshold", 1),
        (True, "completion_threshold_reached", 2),
        (False, "below_threshold", 1),
    ]
    three = pr.TriggerReducer(completion_threshold=3)
    assert [summary(three.reduce(completed(i)))[0] for i in range(6)] == [False, False, True] * 2


def test_replan_transition_makes_a_report_due_and_resets_the_count() -> None:
    reducer = pr.TriggerReducer(completion_threshold=2)
    assert summary(reducer.reduce(completed(1))) == (False, "below_threshold", 1)
    assert summary(reducer.reduce(replanned(1))) == (True, "replan_transition", 1)
    assert summary(reducer.reduce(completed(2))) == (False, "below_threshold", 1)
    assert summary(reducer.reduce(replanned(2))) == (True, "replan_transition", 1)
    assert summary(reducer.reduce(replanned(3))) == (True, "replan_transition", 0)


def test_same_intent_twice_returns_the_same_decision_and_counts_once() -> None:
    reducer = pr.TriggerReducer(completion_threshold=2)
    intent = completed(1)
    first = reducer.reduce(intent)
    assert reducer.reduce(freeze(copy.deepcopy(intent))) == first
    assert reducer.completed_segments == 1
    assert len(reducer.decisions()) == 1
    assert summary(reducer.reduce(completed(2))) == (True, "completion_threshold_reached", 2)
    assert reducer.reduce(intent) == first  # even after the count moved on


def test_decision_json_shape() -> None:
    decision = pr.TriggerReducer().reduce(replanned(7))
    assert decision.to_json() == {
        "schema_version": "periodic_report_trigger_decision_v0",
        "intent_id": replanned(7)["intent_id"],
        "policy_version": "weekly_v0",
        "report_due": True,
        "reason": "replan_transition",
        "completed_segments": 0,
    }
    with pytest.raises(AttributeError):
        decision.report_due = False  # type: ignore[misc]


def test_snapshot_restore_replays_deterministically() -> None:
    original = pr.TriggerReducer(completion_threshold=3)
    for intent in (completed(1), replanned(1), completed(2), completed(3)):
        original.reduce(intent)
    snapshot = json.loads(json.dumps(original.snapshot()))
    restored = pr.TriggerReducer.restore(snapshot)
    assert restored.snapshot() == original.snapshot()
    assert restored.reduce(completed(2)) == original.reduce(completed(2))  # remembered, not recounted
    later = [completed(4), replanned(2), completed(5), completed(6), completed(7)]
    assert [restored.reduce(i) for i in later] == [original.reduce(i) for i in later]
    assert canonical_bytes(restored.snapshot()) == canonical_bytes(original.snapshot())


@pytest.mark.parametrize(
    "tamper",
    [
        lambda s: {**s, "schema_version": "x"},
        lambda s: {**s, "completed_segments": s["completion_threshold"]},
        lambda s: {**s, "completion_threshold": 0},
        lambda s: {**s, "decisions": s["decisions"] * 2},
        lambda s: {**s, "decisions": [{**s["decisions"][0], "reason": "because"}]},
        lambda s: {**s, "decisions": [{**s["decisions"][0], "report_due": True}]},
        lambda s: {k: v for k, v in s.items() if k != "decisions"},
        lambda s: {**s, "policy_version": "daily_v0"},
        lambda s: {**s, "decisions": [float("nan")]},
    ],
)
def test_malformed_snapshot_is_rejected_with_a_stable_code(tamper: Any) -> None:
    reducer = pr.TriggerReducer()
    reducer.reduce(completed(1))
    with pytest.raises(pr.TriggerRejected) as caught:
        pr.TriggerReducer.restore(tamper(reducer.snapshot()))
    assert caught.value.code == "trigger_snapshot_rejected"


def _reidentified(intent: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """``intent`` with ``changes`` and an intent_id recomputed so only the change is at fault."""
    changed = {**intent, **changes}
    changed["intent_id"] = intent_id(changed["source_dispatch_id"], changed["intent_kind"], changed["policy_version"], changed["payload"])
    return changed


class Hostile(Mapping[str, Any]):
    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("boom")

    def __iter__(self) -> Any:
        raise RuntimeError("boom")

    def __len__(self) -> int:
        return 1


BAD_INTENTS: dict[str, tuple[Any, str]] = {
    "other-kind": (lambda i: _reidentified(i, intent_kind="daily_digest.trigger_evaluation"), "$.intent_kind"),
    "other-policy": (lambda i: _reidentified(i, policy_version="daily_v0"), "$.policy_version"),
    "other-operation": (lambda i: {**i, "operation": "send_report"}, "$.operation"),
    "other-capability": (lambda i: {**i, "capability_id": "someone_else"}, "$.capability_id"),
    "tampered-payload": (
        lambda i: {**i, "payload": {**i["payload"], "segment_ref": "segment_x"}},
        "$.intent_id",
    ),
    "ineligible-transition": (
        lambda i: _reidentified(i, payload={**i["payload"], "transition": "segment_progressed"}),
        "$.payload.transition",
    ),
    "extra-payload-field": (lambda i: _reidentified(i, payload={**i["payload"], "note": "x"}), "$.payload"),
    "claims-authority": (lambda i: {**i, "grants_new_action_authority": True}, "$.grants_new_action_authority"),
    "claims-external-write": (lambda i: {**i, "external_write_performed": True}, "$.external_write_performed"),
    "missing-intent-id": (lambda i: {k: v for k, v in i.items() if k != "intent_id"}, "$.intent_id"),
    "not-an-intent": (
        lambda i: {**i, "schema_version": "loopx_post_writeback_hook_result_v0"},
        "$.schema_version",
    ),
    "none": (lambda i: None, "$"),
    "list": (lambda i: [i], "$"),
    "string": (lambda i: "periodic_report.trigger_evaluation", "$"),
    "non-json-value": (lambda i: {**i, "payload": {"transition": object()}}, "$.payload.transition"),
    "nan": (lambda i: {**i, "payload": float("nan")}, "$.payload"),
    "hostile-mapping": (lambda i: types.MappingProxyType(Hostile()), "$"),
}


@pytest.mark.parametrize("name", sorted(BAD_INTENTS))
def test_bad_intent_is_rejected_with_a_stable_code_and_changes_nothing(name: str) -> None:
    reducer = pr.TriggerReducer(completion_threshold=2)
    reducer.reduce(completed(1))
    before = reducer.snapshot()
    tamper, path = BAD_INTENTS[name]
    with pytest.raises(pr.TriggerRejected) as caught:
        reducer.reduce(tamper(completed(2)))
    assert caught.value.code == "trigger_intent_rejected"
    assert caught.value.rejection.path == path
    assert reducer.snapshot() == before


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8,
)


@settings(max_examples=100)
@given(garbage=_JSONISH, overlay=st.dictionaries(st.sampled_from(sorted(completed(0))), _JSONISH, max_size=3))
def test_reducer_raises_only_its_stable_rejection(garbage: Any, overlay: dict[str, Any]) -> None:
    reducer = pr.TriggerReducer()
    for candidate in (garbage, {**completed(0), **overlay}):
        try:
            decision = reducer.reduce(candidate)
        except pr.TriggerRejected as exc:
            assert exc.code == "trigger_intent_rejected"
        else:
            assert isinstance(decision, pr.TriggerDecision)


# -- boundaries ---------------------------------------------------------------------------------


def test_capability_package_imports_no_fakes_scenarios_or_io() -> None:
    package = pathlib.Path(pr.__file__).parent
    forbidden = {"fakes", "scenarios", "socket", "os", "io", "subprocess", "urllib", "http", "smtplib"}
    for source in sorted(package.glob("*.py")):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in forbidden, f"{source.name} imports {name}"
