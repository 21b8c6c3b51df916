"""When: the orchestrator runs primary Turns, replays them, crashes and restarts; the scheduler
consumes what was recorded."""

from __future__ import annotations

from pytest_bdd import parsers, when

from fakes._host import make_host_result
from fakes._orchestrator import completion_output
from fakes._world import World
from pwh._harness.expect import require


@when("the orchestrator commits a todo_completed writeback")
def commit_completion(world: World) -> None:
    world.act("complete_todo")


@when("the orchestrator commits todo_completed writebacks until the segment closes")
def commit_until_segment_closes(world: World) -> None:
    for _ in range(world.segment_size):
        world.act("complete_todo")
        receipt = world.last.receipt or {}
        if receipt.get("event", {}).get("transition") == "segment_completed":
            return
    require(False, f"a completion to close the segment within {world.segment_size} Turns", "no segment closed")


@when(parsers.parse("the orchestrator commits {n:d} todo_completed writebacks"))
def commit_completions(world: World, n: int) -> None:
    for _ in range(n):
        world.act("complete_todo")


@when("the orchestrator commits a replan_recorded writeback")
def commit_replan(world: World) -> None:
    world.act("replan")


@when("the orchestrator commits a plain progress writeback")
def commit_progress(world: World) -> None:
    world.act("progress")


@when("the orchestrator replays that writeback")
def replay_once(world: World) -> None:
    _replay(world, 1)


@when(parsers.parse("the orchestrator replays that writeback {n:d} times"))
def replay_n(world: World, n: int) -> None:
    _replay(world, n)


def _replay(world: World, n: int) -> None:
    index = max(i for i, r in enumerate(world.script_results) if r.committed)
    for _ in range(n):
        world.act("replay", turn=index)


@when("a second dispatcher delivers the same dispatch again")
def redeliver(world: World) -> None:
    receipt = world.last_committed().receipt
    world.dispatch_direct(dict(receipt or {}), redeliver=True)


@when("the host returns a completion without a lifecycle adapter")
def completion_without_lifecycle(world: World) -> None:
    world.act("run_turn", output=lambda req: make_host_result(req, "validated_completion", evidence=["test_result_ok"]))


@when("the primary writeback of a completion fails")
def writeback_fails(world: World) -> None:
    world.act("run_turn", output=completion_output(), fail_writeback=True)


@when("the orchestrator commits a completion for an effect other than the active plan's")
def effect_mismatch(world: World) -> None:
    world.act("run_turn", output=completion_output(), plan_effect_id="effect_of_another_plan")


@when(parsers.re(r"a receipt whose writeback step is only (?P<status>prepared|rejected|inferred|prose_only) is offered for dispatch"))
def uncommitted_receipt(world: World, status: str) -> None:
    _ = world.orch  # made now: the orchestrator's seed fixes the identities
    from fakes._packets import source

    world.dispatch_direct(source(1, step_status=status))


@when("a receipt that was never durably checkpointed is offered for dispatch")
def undurable_receipt(world: World) -> None:
    from fakes._packets import source

    world.dispatch_direct(source(1, durable_checkpoint=False))


@when("a committed receipt carrying operator post_writeback_actions is dispatched")
def receipt_with_actions(world: World) -> None:
    from fakes._packets import source

    receipt = source(1, post_writeback_actions=[{"command": "make publish-report"}, {"command": "curl -X POST hook"}])
    world.dispatch_direct(receipt)


@when(parsers.re(r'the process crashes at "(?P<point>[a-z_.]+)" during a (?P<what>completion|replan) and restarts'))
def crash_and_restart(world: World, point: str, what: str) -> None:
    world.act_crashing("complete_todo" if what == "completion" else "replan", point)


@when(parsers.parse("two committed receipts whose ids differ only in their last character are dispatched"))
def receipts_sharing_a_prefix(world: World) -> None:
    from fakes._packets import source

    stem = "receipt_2026-12-03T10:00:00.00000"  # longer than any prefix an identity could stop at
    for n in (1, 2):
        world.dispatch_direct(source(n, receipt_id=f"{stem}{n}"))


@when("the diagnostic rollout-event log fails on every append")
def rollout_fails(world: World) -> None:
    world.orch.rollout.fail_appends = True


@when("the fake scheduler consumes the intent receipts")
def scheduler_consumes(world: World) -> None:
    world.scheduler_for_periodic_report().consume(world.orch.intent_receipts())


@when("the fake scheduler consumes the intent receipts twice")
def scheduler_consumes_twice(world: World) -> None:
    scheduler = world.scheduler_for_periodic_report()
    scheduler.consume(world.orch.intent_receipts())
    scheduler.consume(world.orch.intent_receipts())


@when("the governed admission allows write scope report.publish")
def admission_allows(world: World) -> None:
    world.admission.allowed_write_scopes = frozenset({"report.publish"})


_IDENTITY_VALUES = {
    "an absolute path": lambda w: w.private_values["path"],
    "a private e-mail address": lambda w: w.private_values["email"],
    "task prose": lambda w: "Fix the login bug reported by " + w.private_values["name"],
}


@when(
    parsers.re(
        r"a committed (?:(?P<kind>todo_completed|replan_recorded) )?receipt whose Todo identity is "
        r"(?P<value>an absolute path|a private e-mail address|task prose) is dispatched"
    )
)
def private_identity(world: World, value: str, kind: str | None) -> None:
    from fakes._packets import source

    world.dispatch_direct(source(1, todo_id=_IDENTITY_VALUES[value](world), **({"event_kind": kind} if kind else {})))


@when("a committed receipt whose own receipt id is a credential is dispatched")
def private_receipt_id(world: World) -> None:
    from fakes._packets import source

    # §7 asks that source identities be public-safe, not that such a receipt be refused: an
    # implementation may hash it away. That nothing private reaches a hook or the journal is the
    # RFC check; the refusal itself is pwh's reading.
    world.notes.inadmissible_clause = None
    world.dispatch_direct(source(1, receipt_id=world.private_values["credential"]))


@when("the newest sidecar record is corrupted in storage")
def corrupt_record(world: World) -> None:
    world.sut.inject_fault("journal_record_corrupted")


@when("the newest sidecar record's payload is altered in storage, still well-formed")
def tamper_record(world: World) -> None:
    world.sut.inject_fault("journal_record_tampered")


@when(parsers.parse("the profile then caps hook timeouts at {n:d} ms"))
def lower_ceiling(world: World, n: int) -> None:
    world.set_profile(budget_ceilings={**world.profile.budget_ceilings, "timeout_ms": n})


@when("something that is not a receipt at all is offered for dispatch")
def not_a_receipt(world: World) -> None:
    world.dispatch_direct({"receipt": "done", "status": "ok"})


@when(parsers.re(r"a committed receipt with an empty (?P<field>goal_id|agent_id|todo_id|turn_instance_id) is offered for dispatch"))
def empty_identity(world: World, field: str) -> None:
    from fakes._packets import source

    world.dispatch_direct(source(1, **{field: ""}))


def _receipt_shapes() -> dict[str, object]:
    from fakes._packets import source

    return {
        "a list": [source(1)],
        "carrying a value that is not JSON": source(1, state_revision=float("inf")),
        "a completion carrying a replan transition": source(1, transition="replanned"),
    }


@when(
    parsers.re(
        r"a receipt that is (?P<shape>a list|carrying a value that is not JSON|a completion carrying a replan transition) is offered for dispatch"
    )
)
def malformed_receipt(world: World, shape: str) -> None:
    if shape == "a completion carrying a replan transition":
        # §7 has core choose the projection per event kind; that a mismatched one must be refused
        # is pwh's reading of M10/M11, not a clause.
        world.notes.inadmissible_clause = None
    world.dispatch_direct(_receipt_shapes()[shape])
