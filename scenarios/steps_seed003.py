"""Steps for seed 003's Capability / Provider / Host rules (PRV-1, HST-1..6, REC-1) and its
failure-and-recovery table. Provider registration, the host request and the host output's
validation go through the SUT's turn seam where it offers that operation (the check then judges
the SUT); everything else, and every operation a SUT does not offer, runs on pwh's testbed and
its checks are testbed self-checks."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from typing import Any

from pytest_bdd import given, parsers, then, when

from fakes._errors import FakeRejected
from fakes._host import (
    HOST_RESULT_MAX_BYTES,
    REQUEST_FORBIDDEN_KEYS,
    FakeHost,
    build_host_request,
    make_host_result,
)
from fakes._orchestrator import TURN_CAPABILITY, TURN_PROVIDER, completion_output
from fakes._providers import ProviderRegistry, ProviderState
from fakes._sink import (
    FakeSink,
    SimulatedProviderCrash,
    blind_retry_recover,
    recover_effect,
)
from fakes._turn import TestbedTurn
from fakes._world import World
from pwh._harness.expect import expect, expect_equal
from pwh._suts.turn_seam import PLAN_BOUNDS

FLAGS = ("declared", "installed", "enabled", "ready")


# -- PRV-1: provider lifecycle ------------------------------------------------------------------


@when(parsers.parse("a provider is registered with {flags} set and {unset} unset"))
def register_provider(world: World, flags: str, unset: str) -> None:
    on = {f.strip() for f in flags.replace(" and ", ",").split(",") if f.strip()}
    turn, about = world.turn("register_provider")
    world.notes.provider_answer = turn.register_provider("report_renderer", {f: f in on for f in FLAGS})
    world.notes.provider_about = about


@then(parsers.parse('the registry rejects the provider at "{path}"'))
def provider_rejected(world: World, path: str) -> None:
    answer, about = world.notes.provider_answer, world.notes.provider_about
    expect(
        not answer.registered,
        f"registration refused ({path} out of order)",
        f"registered at {answer.stage}",
        rfc=("seed003.lifecycle", "seed003.experiment-a"),
        about=about,
    )
    expect_equal(answer.path, path, "the lifecycle flag the rejection names", profile="the JSON path a rejection names", about=about)


@then(parsers.parse('the provider is registered at stage "{stage}"'))
def provider_stage(world: World, stage: str) -> None:
    answer, about = world.notes.provider_answer, world.notes.provider_about
    expect(
        answer.registered,
        "the provider registered",
        f"refused at {answer.path}",
        rfc=("seed003.lifecycle", "seed003.experiment-a"),
        about=about,
    )
    expect_equal(answer.stage, stage, "stage", rfc=("seed003.lifecycle", "seed003.experiment-a"), about=about)


@when(parsers.re(r"the provider is moved straight from declared to (?P<target>enabled|ready)"))
def skip_stage(world: World, target: str) -> None:
    registry = ProviderRegistry()
    registry.register("report_renderer", "periodic_report", ProviderState(True, False, False, False))
    world.notes.provider_registry = registry
    try:
        (registry.enable if target == "enabled" else registry.mark_ready)("report_renderer")
        world.notes.provider_error = None
    except FakeRejected as exc:
        world.notes.provider_error = exc


@then(parsers.parse('the move is refused with code "{code}" and the provider stays "{stage}"'))
def move_refused(world: World, code: str, stage: str) -> None:
    err = world.notes.provider_error
    expect(
        err is not None and err.code == code,
        f"refused with {code}",
        err.code if err else "accepted",
        rfc=("seed003.lifecycle", "seed003.experiment-a"),
        about="testbed",
    )
    expect_equal(
        world.notes.provider_registry.stage("report_renderer"),
        stage,
        "stage",
        rfc=("seed003.lifecycle", "seed003.experiment-a"),
        about="testbed",
    )


# -- the Turn's provider (failure table rows 1-2) -----------------------------------------------


@given(parsers.re(r"the Turn's provider is (?P<stage>declared but not installed|installed and enabled but not ready)"))
def turn_provider_stage(world: World, stage: str) -> None:
    registry = world.orch.providers
    if stage.startswith("declared"):
        registry.disable(TURN_PROVIDER)
        registry.uninstall(TURN_PROVIDER)
    else:
        registry.mark_unready(TURN_PROVIDER)


@when("the provider is installed, enabled and made ready, and re-probed")
def repair_provider(world: World) -> None:
    registry = world.orch.providers
    stage = registry.stage(TURN_PROVIDER)
    if stage == "declared":
        registry.install(TURN_PROVIDER)
    if registry.stage(TURN_PROVIDER) == "installed":
        registry.enable(TURN_PROVIDER)
    registry.mark_ready(TURN_PROVIDER)
    # Provider resolution is the testbed's (no turn seam offers it), so the Turn that shows the
    # repair worked runs wholly on the testbed: this scenario judges resolution, not validation.
    orch = world.orch
    offered = orch.turn, orch.turn_judged_by
    orch.turn, orch.turn_judged_by = TestbedTurn(), "testbed"
    try:
        world.act("complete_todo")
    finally:
        orch.turn, orch.turn_judged_by = offered


@then(parsers.parse('the recovery hint is "{hint}"'))
def recovery_hint(world: World, hint: str) -> None:
    resolution = world.orch.catalog.resolve(TURN_CAPABILITY, world.orch.providers)
    expect_equal(resolution.recovery, hint, "recovery hint", profile="the fake's code names and paths", about="testbed")


# -- host request and result (HST-1..HST-6) ------------------------------------------------------


@when("the orchestrator builds the host request for a Turn")
def build_request(world: World) -> None:
    turn, about = world.turn("build_host_request")
    world.notes.host_request = turn.build_host_request(asdict(world.orch.plan()))
    world.notes.host_request_about = about


@then(parsers.parse('the request allows only the phases "{phases}"'))
def request_phases(world: World, phases: str) -> None:
    wanted = tuple(p.strip() for p in phases.split(","))
    view = world.notes.host_request
    expect_equal(
        view.allowed_phases,
        wanted,
        "allowed phases",
        rfc=("seed003.host-request", "seed003.request-contract"),
        about=world.notes.host_request_about,
    )


@then("the request carries route, Todo, gate, scope, output schema, evidence requirements and stop and resume conditions")
def request_fields(world: World) -> None:
    view = world.notes.host_request
    missing = [bound for bound in PLAN_BOUNDS if bound not in view.carries]
    expect(
        not missing,
        "the request to carry every bound of the Turn",
        f"missing: {missing}",
        rfc=("seed003.host-request", "seed003.request-contract"),
        about=world.notes.host_request_about,
    )


@then("the request has no state-write entry anywhere")
def request_no_write(world: World) -> None:
    view = world.notes.host_request
    bad = [p for p in view.key_paths if any(w in p.lower() for w in REQUEST_FORBIDDEN_KEYS)]
    expect(
        not bad,
        "no state-write, commit, journal, spend or callback entry",
        bad,
        rfc=("seed003.host-request", "seed003.request-contract"),
        about=world.notes.host_request_about,
    )


@when("the fake host is handed a request that carries a journal write entry")
def host_handed_write_entry(world: World) -> None:
    request = build_host_request(world.orch.plan())
    request["journal_write_path"] = "state_entry"
    try:
        FakeHost([{}]).execute(request)
        world.notes.host_error = None
    except FakeRejected as exc:
        world.notes.host_error = exc


@then(parsers.parse('the host refuses the request with code "{code}"'))
def host_refused(world: World, code: str) -> None:
    err = world.notes.host_error
    expect(
        err is not None and err.code == code,
        f"refused with {code}",
        err.code if err else "accepted",
        rfc=("seed003.host-request", "seed003.request-contract"),
        about="testbed",
    )


_CANDIDATES: dict[str, Any] = {
    "claims phases host_execute, typed_result and writeback": lambda r: make_host_result(
        r,
        "validated_completion",
        evidence=["test_result_ok"],
        completed_phases=["host_execute", "typed_result", "writeback"],
        lifecycle={"adapter": "todo_lifecycle_v0", "followup": {"kind": "no_followup", "ref": None}},
    ),
    "claims phases host_execute, typed_result and spend": lambda r: make_host_result(
        r,
        "progress",
        evidence=["partial_result"],
        progress_observation="step_done",
        completed_phases=["host_execute", "typed_result", "spend"],
    ),
    "claims only phases host_execute and typed_result": completion_output(),
    "returns a completion with a lifecycle adapter but no follow-up": lambda r: make_host_result(
        r, "validated_completion", evidence=["test_result_ok"], lifecycle={"adapter": "todo_lifecycle_v0"}
    ),
    "returns a completion with a successor follow-up": lambda r: make_host_result(
        r,
        "validated_completion",
        evidence=["test_result_ok"],
        lifecycle={"adapter": "todo_lifecycle_v0", "followup": {"kind": "successor", "ref": "todo_next"}},
    ),
    "returns a waiting result that carries evidence": lambda r: make_host_result(r, "waiting", evidence=["test_result_ok"]),
    "returns a waiting result that carries a path delta": lambda r: make_host_result(r, "waiting", path_delta=["module_a"]),
    "returns a failed result that carries a progress observation": lambda r: make_host_result(
        r, "failed", progress_observation="half_done"
    ),
    "returns a clean waiting result": lambda r: make_host_result(r, "waiting"),
    "returns a result bound to another Turn": lambda r: make_host_result(
        {**r, "turn_key": "turn_of_someone_else"},
        "validated_completion",
        evidence=["test_result_ok"],
        lifecycle={"adapter": "todo_lifecycle_v0", "followup": {"kind": "no_followup", "ref": None}},
    ),
    "returns a result bound to another effect": lambda r: make_host_result(
        {**r, "effect_ref": "effect_of_someone_else"},
        "validated_completion",
        evidence=["test_result_ok"],
        lifecycle={"adapter": "todo_lifecycle_v0", "followup": {"kind": "no_followup", "ref": None}},
    ),
    "returns 12,001 bytes of output": lambda r: _sized(r, HOST_RESULT_MAX_BYTES + 1),
    "returns exactly 12,000 bytes of output": lambda r: _sized(r, HOST_RESULT_MAX_BYTES),
    "returns output that is not JSON": lambda r: b'{"schema_version": "pwh_host_result_v0", "turn_key": ',
}
_CANDIDATE_RE = "|".join(re.escape(k) for k in sorted(_CANDIDATES, key=len, reverse=True))


def _sized(request: dict[str, Any], size: int) -> bytes:
    """A valid completion padded with trailing JSON whitespace to exactly ``size`` bytes: valid
    JSON either way, so only the size decides whether it may be read."""
    result = make_host_result(
        request,
        "validated_completion",
        evidence=["test_result_ok"],
        lifecycle={"adapter": "todo_lifecycle_v0", "followup": {"kind": "no_followup", "ref": None}},
    )
    raw = json.dumps(result, separators=(",", ":")).encode()
    return raw + b" " * (size - len(raw))


@when(parsers.re(rf"the host (?P<candidate>{_CANDIDATE_RE})"))
def host_answers(world: World, candidate: str) -> None:
    world.act("run_turn", output=_CANDIDATES[candidate])


@then(parsers.re(r"the Turn commits a (?P<kind>todo_completed|progress_recorded|replan_recorded) writeback"))
def turn_commits(world: World, kind: str) -> None:
    about = world.last.judged_by
    expect(
        world.last.committed,
        "the Turn to commit",
        f"{world.last.stage} ({world.last.code})",
        rfc=("seed003.completion-lifecycle", "seed003.experiment-c"),
        about=about,
    )
    expect_equal(
        (world.last.receipt or {}).get("event_kind"),
        kind,
        "event kind",
        rfc=("seed003.completion-lifecycle", "seed003.experiment-c"),
        about=about,
    )


@then("the Turn writes nothing back")
def writes_nothing(world: World) -> None:
    about = world.last.judged_by
    expect(
        world.last.stage == "not_material",
        "a non-material Turn with no writeback",
        world.last.stage,
        rfc=("seed003.non-material", "seed003.FT-5"),
        about=about,
    )
    expect_equal(len(world.orch.receipts()), 0, "primary writebacks", rfc=("seed003.non-material", "seed003.FT-5"), about=about)


@then(parsers.parse('the rejection names "{path}"'))
def rejection_names(world: World, path: str) -> None:
    expect_equal(world.last.path, path, "rejected JSON path", profile="the JSON path a rejection names", about=world.last.judged_by)


# -- REC-1 and failure-table row 7 ----------------------------------------------------------------


@given("an effect provider wrote to the sink under a governed ticket and crashed before returning its receipt")
def crashed_after_effect(world: World) -> None:
    sink = FakeSink(trusted=world.admission, idempotent=False)
    world.admission.allowed_write_scopes = frozenset({sink.required_scope})
    intent: dict[str, Any] = {
        "schema_version": "loopx_post_writeback_intent_v0",
        "intent_id": "pwi_" + "a" * 64,
        "intent_kind": "periodic_report.render",
        "requested_write_scope": [sink.required_scope],
        "grants_new_action_authority": False,
        "external_write_performed": False,
    }
    decision = world.admission.admit(intent)
    ticket = world.admission.issue_ticket(intent["intent_id"], decision.granted_scope)
    sink.crash_after_effect = True
    world.notes.rec_sink, world.notes.rec_ticket = sink, ticket
    try:
        sink.write("report_week_1", {"report_ref": "report_week_1"}, admission=ticket)
    except SimulatedProviderCrash:
        world.notes.rec_crashed = True


@when(parsers.re(r"the effect is recovered by (?P<how>readback first|retrying blindly)"))
def recover(world: World, how: str) -> None:
    sink, ticket = world.notes.rec_sink, world.notes.rec_ticket
    world.notes.rec_retried = 0

    def retry() -> Any:
        world.notes.rec_retried += 1
        return sink.write("report_week_1", {"report_ref": "report_week_1"}, admission=ticket)

    (recover_effect if how == "readback first" else blind_retry_recover)("report_week_1", sink, retry)


@then(parsers.re(r"the sink holds the effect exactly (?P<n>once|twice)"))
def effect_count(world: World, n: str) -> None:
    expect(
        world.notes.rec_crashed,
        "the provider to have crashed after its effect",
        "no crash",
        rfc=("seed003.readback-first", "seed003.FT-7"),
        about="testbed",
    )
    count = world.notes.rec_sink.effect_count("report_week_1")
    expect_equal(count, {"once": 1, "twice": 2}[n], "effects applied", rfc=("seed003.readback-first", "seed003.FT-7"), about="testbed")


@then(parsers.re(r"the effect was (?P<neg>not )?retried"))
def retried(world: World, neg: str | None) -> None:
    expect_equal(world.notes.rec_retried > 0, not neg, "a retry happened", rfc=("seed003.readback-first", "seed003.FT-7"), about="testbed")
