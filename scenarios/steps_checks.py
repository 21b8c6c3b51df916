"""Then: what a maintainer would check by hand, in RFC terms."""

from __future__ import annotations

import json


from pytest_bdd import parsers, then

from pwh._boundary import BoundaryScanner
from pwh._codes import RFC_FAILURE_CODES

from ._expect import expect, expect_equal
from ._world import World

HOOK = r'"(?P<hook_id>[a-z0-9_.]+)"'


# -- provider calls -----------------------------------------------------------------------------


@then("no provider was called")
def no_provider_called(world: World) -> None:
    calls = {h: p.calls for h, p in world.hooks.items() if p.calls}
    expect(not calls, "zero provider calls", f"calls per hook: {calls}")


@then(parsers.re(rf"hook {HOOK} was never called"))
def hook_never_called(world: World, hook_id: str) -> None:
    probe = world.hooks.get(hook_id)
    expect(probe is None or probe.calls == 0, f"hook {hook_id} never called", f"{probe.calls if probe else 0} calls")


@then(parsers.re(rf"hook {HOOK} was called (?P<n>\d+) times?"))
def hook_called_n(world: World, hook_id: str, n: str) -> None:
    probe = world.hooks[hook_id]
    expect(probe.calls == int(n), f"hook {hook_id} called {n} time(s)", f"{probe.calls} call(s)")


@then(parsers.re(r'the hooks were called in the order "(?P<order>[a-z0-9_., ]+)"'))
def call_order(world: World, order: str) -> None:
    wanted = [h.strip() for h in order.split(",")]
    expect_equal(world.call_order, wanted, "provider call order")


@then(parsers.re(r'the hooks are reported in the order "(?P<order>[a-z0-9_., ]+)"'))
def report_order(world: World, order: str) -> None:
    wanted = [h.strip() for h in order.split(",")]
    expect_equal([h.hook_id for h in world.outcomes[-1].hooks], wanted, "hook order in the dispatch outcome")


@then("no hook ran inside the rollout-event append")
def not_in_rollout(world: World) -> None:
    inside = [h for h, p in world.hooks.items() if p.called_during_rollout_append]
    expect(not inside, "no hook called from the rollout-event append helper", inside)


@then(parsers.re(rf"every input hook {HOOK} received was identical"))
def same_inputs(world: World, hook_id: str) -> None:
    inputs = [json.dumps(_plain(i), sort_keys=True) for i in world.hooks[hook_id].inputs]
    expect(len(set(inputs)) <= 1, "the same input on every call", f"{len(set(inputs))} different inputs")


@then(parsers.re(rf"hook {HOOK} saw the source exactly as committed"))
def saw_committed_source(world: World, hook_id: str) -> None:
    receipt = world.last_committed().receipt
    seen = world.hooks[hook_id].inputs[-1]["source"]
    expect_equal(seen["todo_id"], receipt["todo_id"], f"todo_id seen by {hook_id}")


@then(parsers.re(rf"hook {HOOK} was given no event projection"))
def no_projection(world: World, hook_id: str) -> None:
    seen = world.hooks[hook_id].inputs[-1]
    expect("projection" not in seen, f"{hook_id} to get no projection", sorted(seen))


# -- dispatch outcomes --------------------------------------------------------------------------


def _hook(world: World, hook_id: str):  # type: ignore[no-untyped-def]
    found = world.hook_outcomes(hook_id)
    expect(bool(found), f"an outcome for hook {hook_id}", "the hook is absent from every dispatch outcome")
    return found[-1]


@then(parsers.re(rf'hook {HOOK} ends with failure code "(?P<code>[a-z_]+)"'))
def ends_with_code(world: World, hook_id: str, code: str) -> None:
    outcome = _hook(world, hook_id)
    expect(
        outcome.status == "failed" and outcome.failure_code == code,
        f"hook {hook_id} failed with {code}",
        f"status {outcome.status}, failure code {outcome.failure_code}",
    )


@then(parsers.re(rf'hook {HOOK} ends with status "(?P<status>proposed|not_applicable)"'))
def ends_with_status(world: World, hook_id: str, status: str) -> None:
    outcome = _hook(world, hook_id)
    expect(outcome.status == status, f"hook {hook_id} ended {status}", f"{outcome.status} ({outcome.failure_code})")


@then(parsers.re(rf"hook {HOOK} has exactly (?P<n>one|two|no) recorded intents?"))
def recorded_intents(world: World, hook_id: str, n: str) -> None:
    wanted = {"no": 0, "one": 1, "two": 2}[n]
    records = world.records_for(hook_id)
    intents = [i for r in records if r.get("status") == "proposed" for i in r.get("intents", [])]
    expect(len(intents) == wanted, f"{wanted} recorded intent(s) for {hook_id}", f"{len(intents)} in {len(records)} record(s)")


@then(parsers.re(rf"hook {HOOK} has exactly one dispatch identity"))
def one_identity(world: World, hook_id: str) -> None:
    ids = {o.dispatch_id for o in world.hook_outcomes(hook_id)} | {r["dispatch_id"] for r in world.records_for(hook_id)}
    expect(len(ids) == 1, f"one dispatch identity for {hook_id}", f"{len(ids)} identities")


@then("each admitted hook has exactly one dispatch identity and one sidecar record")
def one_identity_each(world: World) -> None:
    receipt_ids = {t.receipt["receipt_id"] for t in world.turns if t.committed and t.receipt}
    by_hook: dict[str, set[str]] = {}
    for record in world.journal():
        if record["source_receipt_id"] in receipt_ids:
            by_hook.setdefault(record["hook_id"], set()).add(record["dispatch_id"])
    admitted = sorted(h.hook_id for h in world.outcomes[-1].hooks)
    expect_equal(sorted(by_hook), admitted, "hooks with a sidecar record")
    counts = {h: len(ids) for h, ids in by_hook.items()}
    expect(all(c == len(receipt_ids) for c in counts.values()), f"{len(receipt_ids)} identity per hook per receipt", counts)
    records = [r["dispatch_id"] for r in world.journal()]
    expect(len(records) == len(set(records)), "one sidecar record per dispatch identity", f"{len(records)} records, {len(set(records))} ids")


@then(parsers.re(rf"the replay returned the original receipt for hook {HOOK} without calling it"))
def replay_returned_original(world: World, hook_id: str) -> None:
    outcomes = world.hook_outcomes(hook_id)
    expect(len(outcomes) >= 2, "an original dispatch and a replay", f"{len(outcomes)} outcome(s)")
    first, last = outcomes[0], outcomes[-1]
    expect(last.replayed, "the replay to return the stored receipt", "a fresh result")
    expect_equal(last.dispatch_id, first.dispatch_id, "dispatch identity")
    expect_equal(last.intents, first.intents, "intents")


@then(parsers.re(rf"the journal still holds the original intent for hook {HOOK}"))
def original_kept(world: World, hook_id: str) -> None:
    first = world.hook_outcomes(hook_id)[0]
    records = world.records_for(hook_id)
    expect(len(records) == 1, "one record", f"{len(records)} records")
    expect_equal(records[0]["intents"], list(first.intents), "recorded intents")


# How long past the registered timeout a dispatch may take to give up on a hung hook. The RFC
# says "shortly after its limit"; the reference stops within a few milliseconds, and this slack
# absorbs a loaded CI machine without letting an implementation that ignores the limit pass.
TIMEOUT_GRACE_MS = 700


@then(parsers.re(rf"the Turn gave up on hook {HOOK} within its timeout"))
def gave_up_in_time(world: World, hook_id: str) -> None:
    limit = 200 + TIMEOUT_GRACE_MS  # the hanging behaviours register timeout_ms = 200
    # "seen" names a bucket, not the measured time, so a report of the same run is the same bytes.
    expect(world.last_elapsed_ms <= limit, f"the Turn to finish within {limit} ms with {hook_id} hung",
           f"it took more than {limit} ms")


@then(parsers.re(r'the dispatch is not admitted, with code "(?P<code>[a-z_]+)"'))
def not_admitted(world: World, code: str) -> None:
    outcome = world.outcomes[-1] if world.outcomes else None
    expect(outcome is not None, "a dispatch outcome", "none")
    expect(not outcome.admitted and outcome.code == code, f"not admitted ({code})", f"admitted={outcome.admitted}, code={outcome.code}")


@then("no dispatch happened")
def no_dispatch(world: World) -> None:
    admitted = [o for o in world.outcomes if o.admitted and o.hooks]
    expect(not admitted, "no admitted dispatch", f"{len(admitted)} dispatch(es) ran hooks")


@then("the sidecar journal holds no intent")
def journal_no_intent(world: World) -> None:
    intents = [i for r in world.journal() for i in r.get("intents", [])]
    expect(not intents, "no intent in the sidecar journal", f"{len(intents)} intent(s)")


@then(parsers.parse("the sidecar journal holds {n:d} records"))
def journal_n_records(world: World, n: int) -> None:
    expect_equal(len(world.journal()), n, "sidecar records")


@then("every failure in the journal is a compact stable code")
def compact_failures(world: World) -> None:
    for record in world.journal():
        if record.get("status") == "failed":
            expect(record.get("failure_code") in RFC_FAILURE_CODES, "an RFC failure code", record.get("failure_code"))
            expect(record.get("intents") == [], "no intents on a failure record", record.get("intents"))
    text = json.dumps(world.journal())
    expect("Traceback" not in text and "exploded" not in text, "no exception text in the journal", "exception text found")


@then(parsers.re(rf'the registration of hook {HOOK} is rejected at the field it breaks'))
def registration_rejected(world: World, hook_id: str) -> None:
    rejections = world.install_rejections.get(hook_id, [])
    wanted = world.expected_rejection_path  # type: ignore[attr-defined]
    expect(bool(rejections), f"registration rejected at {wanted}", "the registration was accepted")
    expect(rejections[0].code == "registration_rejected", "code registration_rejected", rejections[0].code)
    expect(any(r.path == wanted for r in rejections), f"a rejection naming {wanted}", [r.path for r in rejections])


@then(parsers.re(rf"hook {HOOK} is installed"))
def hook_is_installed(world: World, hook_id: str) -> None:
    expect(world.install_rejections.get(hook_id) == [], f"{hook_id} installed", world.install_rejections.get(hook_id))


@then(parsers.re(r'the intent recorded for hook (?P<hook_id>"[a-z0-9_.]+") requests write scope "(?P<scope>[a-z_.]+)" and claims nothing'))
def intent_requests_scope(world: World, hook_id: str, scope: str) -> None:
    hook_id = hook_id.strip('"')
    records = world.records_for(hook_id)
    intents = [i for r in records for i in r.get("intents", [])]
    expect(len(intents) == 1, "one recorded intent", f"{len(intents)}")
    intent = intents[0]
    expect_equal(intent["requested_write_scope"], [scope], "requested_write_scope")
    expect_equal(intent["grants_new_action_authority"], False, "grants_new_action_authority")
    expect_equal(intent["external_write_performed"], False, "external_write_performed")


# -- primary Turn -------------------------------------------------------------------------------


@then("the primary receipt and the quota-spend eligibility are unchanged")
def primary_unchanged(world: World) -> None:
    base = world.baseline()
    try:
        ours, theirs = world.orch.primary_snapshot(), base.primary_snapshot()
        expect(ours == theirs, "primary store byte-identical to a run with no hooks",
               _first_difference(theirs, ours))
    finally:
        base.close()
    uses = [u for t in world.turns for u in t.primary_uses]
    expect(not uses, "the dispatcher never touched the primary Turn", uses)


def _first_difference(base: bytes, ours: bytes) -> str:
    b, o = json.loads(base), json.loads(ours)
    for table in ("writebacks", "spends", "todos"):
        if b[table] != o[table]:
            return f"{table} differ: {len(b[table])} without hooks, {len(o[table])} with hooks"
    return "bytes differ"


@then("the quota was spent exactly once for each committed receipt")
def spent_once(world: World) -> None:
    receipts = [r["receipt_id"] for r in world.orch.receipts()]
    spends = [s["receipt_id"] for s in world.orch.spends()]
    expect_equal(sorted(spends), sorted(receipts), "spent receipts")


@then(parsers.re(r"the Turn stops at (?P<stage>validation|the writeback|provider resolution) with code \"(?P<code>[a-z_]+)\""))
def turn_stopped(world: World, stage: str, code: str) -> None:
    wanted = {"validation": "validation_rejected", "the writeback": "writeback_failed",
              "provider resolution": "provider_unavailable"}[stage]
    expect(world.last.stage == wanted and world.last.code == code, f"{wanted} with {code}",
           f"{world.last.stage} with {world.last.code}")


@then("no primary writeback was made")
def no_writeback(world: World) -> None:
    expect_equal(len(world.orch.receipts()), 0, "primary writebacks")


@then(parsers.parse("{n:d} primary writebacks are committed"))
def n_writebacks(world: World, n: int) -> None:
    expect_equal(len(world.orch.receipts()), n, "primary writebacks")


# -- scheduler, sink, network -------------------------------------------------------------------


@then(parsers.re(r'the fake scheduler received exactly one "(?P<kind>[a-z_.]+)" intent'))
def scheduler_one(world: World, kind: str) -> None:
    scheduler = world.scheduler_for_periodic_report()
    executed = {k: v for k, v in scheduler.executions.items() if v}
    kinds = [e.intent_kind for e in scheduler.entries if e.status == "executed"]
    expect(kinds == [kind], f"one executed {kind} intent", kinds)
    expect(all(v == 1 for v in executed.values()), "each intent executed once", executed)


@then("the fake scheduler received no intent")
def scheduler_none(world: World) -> None:
    scheduler = world.scheduler_for_periodic_report()
    expect(not scheduler.entries, "no intent delivered to the scheduler", f"{len(scheduler.entries)} entries")


@then(parsers.re(r'the trigger decision says a report is (?P<due>due|not due) because "(?P<reason>[a-z_]+)"'))
def trigger_decision(world: World, due: str, reason: str) -> None:
    decisions = world.reducer.decisions() if world.reducer else []
    expect(len(decisions) == 1, "exactly one trigger decision", f"{len(decisions)}")
    d = decisions[0]
    expect(d.report_due == (due == "due") and d.reason == reason, f"report {due} ({reason})", f"due={d.report_due} ({d.reason})")


@then(parsers.re(r'the governed admission (?P<verdict>denied|admitted) the intent(?: with code "(?P<code>[a-z_]+)")?'))
def admission_verdict(world: World, verdict: str, code: str | None) -> None:
    decisions = world.admission.decisions
    expect(len(decisions) == 1, "one admission decision", f"{len(decisions)}")
    d = decisions[0]
    expect(d.admitted == (verdict == "admitted"), f"the intent {verdict}", f"admitted={d.admitted} ({d.code})")
    if code:
        expect_equal(d.code, code, "admission code")


@then(parsers.re(r'the granted scope is exactly "(?P<scope>[a-z_.]+)"'))
def granted_scope(world: World, scope: str) -> None:
    expect_equal(list(world.admission.decisions[-1].granted_scope), [scope], "granted scope")


@then("the sink was never called")
def sink_untouched(world: World) -> None:
    expect(not world.sink.touched, "zero sink calls", f"{len(world.sink.calls)} call(s)")


@then("no outbound network connection was attempted")
def no_network(world: World) -> None:
    attempts = world.guard.refused  # type: ignore[attr-defined]
    expect(not attempts, "no outbound connection", f"{len(attempts)} refused attempt(s)")


# -- public boundary ----------------------------------------------------------------------------


@then("nothing the dispatcher recorded or reported carries a private value")
def nothing_private(world: World) -> None:
    scanner = BoundaryScanner(private_names=[world.private_values["name"]] if "name" in world.private_values else [])
    recorded = world.journal()
    reported = [o.to_json() for o in world.outcomes]
    findings = scanner.scan_value({"journal": recorded, "outcomes": reported})
    expect(not findings, "no private value in the journal or the outcomes", [f.to_json() for f in findings[:3]])
    text = json.dumps({"journal": recorded, "outcomes": reported})
    planted = [k for k, v in world.private_values.items() if v and v in text]
    expect(not planted, "none of the planted private values", f"planted {planted} found")


def _plain(value):  # type: ignore[no-untyped-def]
    if isinstance(value, (dict,)) or type(value).__name__ == "mappingproxy":
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value





@then(parsers.re(r'the dispatch reports the journal error "(?P<code>[a-z_]+)"'))
def journal_error(world: World, code: str) -> None:
    outcome = world.outcomes[-1] if world.outcomes else None
    expect(outcome is not None and outcome.journal_error == code, f"journal error {code} in the outcome",
           outcome.journal_error if outcome else "no outcome")


@then(parsers.re(r'the dispatch is not admitted, at "(?P<path>[^"]+)"'))
def not_admitted_at(world: World, path: str) -> None:
    outcome = world.outcomes[-1]
    expect(not outcome.admitted, "the source rejected", "admitted")
    expect_equal(outcome.rejection.path if outcome.rejection else None, path, "rejected path")


@then("the intent kind registration is rejected")
def kind_rejected(world: World) -> None:
    rejections = world.kind_rejections  # type: ignore[attr-defined]
    expect(bool(rejections) and rejections[0].code == "registration_rejected", "registration_rejected", rejections)


@then(parsers.re(r'the offered registration is rejected at "(?P<path>[^"]+)"'))
def offered_rejected(world: World, path: str) -> None:
    rejections = world.offered_rejections  # type: ignore[attr-defined]
    expect(bool(rejections), f"rejected at {path}", "accepted")
    expect_equal((rejections[0].code, rejections[0].path.split(".")[0].split("[")[0]), ("registration_rejected", path), "rejection")
