"""Then: what a maintainer would check by hand, in RFC terms."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pytest_bdd import parsers, then

from fakes import snapshot_difference
from fakes._world import World
from pwh import RFC_FAILURE_CODES, BoundaryScanner
from pwh._core.journal import TAMPERED_VALUE
from pwh._harness.expect import expect, expect_code, expect_equal, require

# Parameterised steps use parsers.parse; parsers.re is kept only where a parameter is a closed
# list of phrases (which `pwh scenarios steps` lists) or a part is optional ("times?").
HOOK = r'"(?P<hook_id>[a-z0-9_.]+)"'


# -- provider calls -----------------------------------------------------------------------------


@then("no provider was called")
def no_provider_called(world: World) -> None:
    calls = {h: p.calls for h, p in world.hooks.items() if p.calls}
    expect(
        not calls,
        "zero provider calls",
        f"calls per hook: {calls}",
        rfc=("§5.1.enabled", "§6.validated-before-call", "§12.M01", "§12.M02", "§12.M03"),
    )


@then(parsers.parse('hook "{hook_id}" was never called'))
def hook_never_called(world: World, hook_id: str) -> None:
    calls = _calls(world, hook_id)
    expect(
        calls == 0,
        f"hook {hook_id} never called",
        f"{calls} calls",
        rfc=("§5.1.enabled", "§6.validated-before-call", "§10.profile-gates", "§12.M01", "§12.M02", "§12.M03"),
    )


@then(parsers.parse('hook "{hook_id}" was never handed the unprovable input'))
def hook_never_handed_input(world: World, hook_id: str) -> None:
    calls = _calls(world, hook_id)
    expect(
        calls == 0,
        f"hook {hook_id} never called with an input whose boundary cannot be proven",
        f"{calls} calls",
        rfc=("§7.unproven-boundary", "§7.input-excludes", "§12.M13"),
    )


def never_called_once_rejected(world: World, hook_id: str) -> None:
    """Whether a registration had to be rejected may be pwh's reading (a bound's number); once an
    implementation has rejected it, that no provider of it runs is the RFC's (§6)."""
    calls = sum(probe.own_calls for probe in world.rejected_probes.get(hook_id, ()))
    expect(
        calls == 0,
        f"no call of hook {hook_id}, whose registration was rejected",
        f"{calls} calls",
        rfc=("§6.validated-before-call", "§12.M02"),
    )


def _calls(world: World, hook_id: str) -> int:
    probe = world.hooks.get(hook_id)
    return probe.calls if probe else 0


@then(parsers.re(rf"hook {HOOK} was called (?P<n>\d+) times?"))
def hook_called_n(world: World, hook_id: str, n: str) -> None:
    calls = _calls(world, hook_id)
    expect(
        calls == int(n),
        f"hook {hook_id} called {n} time(s)",
        f"{calls} call(s)",
        rfc=("§9.replay-noop", "§12.M05"),
    )


@then(parsers.re(rf"hook {HOOK} was called (?P<n>\d+) times?, as pwh reads that delivery"))
def hook_called_n_profile(world: World, hook_id: str, n: str) -> None:
    """A call count the RFC leaves open: a second delivery of a dispatch already answered, or a new
    identity dispatched while the journal cannot be read. The RFC asks only that neither records
    a second result (the scenario's other steps); how often the provider runs is pwh's reading."""
    calls = _calls(world, hook_id)
    expect(
        calls == int(n),
        f"hook {hook_id} called {n} time(s)",
        f"{calls} call(s)",
        profile="how often a provider runs on a delivery the RFC leaves open",
    )


@then(parsers.parse('hook "{hook_id}" was called at most once per delivery'))
def hook_called_once_per_delivery(world: World, hook_id: str) -> None:
    calls = _calls(world, hook_id)
    deliveries = len(world.hook_outcomes(hook_id))
    expect(
        calls <= deliveries,
        f"at most one call of {hook_id} per delivery ({deliveries} deliveries)",
        f"{calls} call(s)",
        rfc="§10.limits",
    )


@then(parsers.parse('hook "{hook_id}" was retried, called {n:d} times in all'))
def hook_retried_n(world: World, hook_id: str, n: int) -> None:
    calls = _calls(world, hook_id)
    expect(
        calls == n,
        f"hook {hook_id} retried up to {n} call(s) in all",
        f"{calls} call(s)",
        profile="failures are retried on replay up to the profile's retry bound (§10 only says they may be)",
    )


@then(parsers.parse('the hooks were called in the order "{order}"'))
def call_order(world: World, order: str) -> None:
    wanted = [h.strip() for h in order.split(",")]
    expect_equal(world.call_order, wanted, "provider call order", rfc="§6.stable-order")


@then(parsers.parse('the hooks are reported in the order "{order}"'))
def report_order(world: World, order: str) -> None:
    wanted = [h.strip() for h in order.split(",")]
    reported = [h.hook_id for h in world.outcomes[-1].hooks] if world.outcomes else []
    expect_equal(reported, wanted, "hook order in the dispatch outcome", profile="the dispatch outcome lists hooks in dispatch order")


@then("no hook ran inside the rollout-event append")
def not_in_rollout(world: World) -> None:
    inside = [h for h, p in world.hooks.items() if p.called_during_rollout_append]
    expect(
        not inside,
        "no hook called from the rollout-event append helper",
        inside,
        rfc=("§3.2.not-in-append-helper", "§5.1.rollout-not-authority"),
    )


@then(parsers.parse('every input hook "{hook_id}" received was identical'))
def same_inputs(world: World, hook_id: str) -> None:
    inputs = [json.dumps(plain(i), sort_keys=True) for i in world.hooks[hook_id].inputs]
    expect(
        len(set(inputs)) <= 1,
        "the same input on every call",
        f"{len(set(inputs))} different inputs",
        rfc=("§9.crash-retry", "§10.observable-retry", "§5.2.crash-replay"),
    )


@then(parsers.parse('hook "{hook_id}" saw the source exactly as committed'))
def saw_committed_source(world: World, hook_id: str) -> None:
    receipt = world.last_committed().receipt or {}
    probe = world.hooks.get(hook_id)
    expect(bool(probe and probe.inputs), f"{hook_id} to have been called", "never called", rfc="§12.M04")
    seen = plain(probe.inputs[-1]).get("source", {}) if probe and probe.inputs else {}
    identity = {k: receipt.get(k) for k in SOURCE_IDENTITY}
    expect_equal(
        {k: seen.get(k) for k in SOURCE_IDENTITY},
        identity,
        f"the source identity {hook_id} saw",
        rfc=("§7.immutable-input", "§6.no-hook-dependency"),
    )
    rest = {k: receipt.get(k) for k in SOURCE_OPAQUE}
    expect_equal(
        {k: seen.get(k) for k in SOURCE_OPAQUE},
        rest,
        f"the opaque source fields {hook_id} saw",
        profile="the reference passes the receipt id, revision and commit time through unchanged (§7 only asks for opaque ids)",
    )


@then(parsers.parse('hook "{hook_id}" was given no event projection'))
def no_projection(world: World, hook_id: str) -> None:
    seen = world.hooks[hook_id].inputs[-1]
    expect(
        "projection" not in seen,
        f"{hook_id} to get no projection",
        sorted(seen),
        profile="a hook whose read scope omits bounded_event_projection gets no projection",
    )


# -- dispatch outcomes --------------------------------------------------------------------------


def _hook(world: World, hook_id: str):
    found = world.hook_outcomes(hook_id)
    expect(
        bool(found),
        f"an outcome for hook {hook_id}",
        "the hook is absent from every dispatch outcome",
        rfc="§12.M04",
    )
    return found[-1]


@then(parsers.parse('hook "{hook_id}" ends with failure code "{code}"'))
def ends_with_code(world: World, hook_id: str, code: str) -> None:
    outcome = _hook(world, hook_id)
    judged = _failure_judged(world, hook_id, ("§10.failure-codes", "§12.M07"))
    expect(outcome.status == "failed", f"hook {hook_id} to end as an isolated failure ({code})", f"status {outcome.status}", **judged)
    expect_code(
        outcome.failure_code, code, f"failure code of {hook_id}", clause="§10.failure-codes", rfc_codes=frozenset(RFC_FAILURE_CODES)
    )


@then(parsers.parse('hook "{hook_id}" ends, past the profile\'s retry bound, with failure code "{code}"'))
def ends_past_retry_bound(world: World, hook_id: str, code: str) -> None:
    outcome = _hook(world, hook_id)
    expect(
        outcome.status == "failed",
        f"hook {hook_id} to stay failed",
        f"status {outcome.status}",
        rfc="§10.observable-retry",
    )
    expect(
        outcome.failure_code == code,
        f"failure code {code} once the profile's retry bound is spent",
        f"failure code {outcome.failure_code}",
        profile="the retry bound's number and the code it ends with",
    )


@then(parsers.parse('the attempt of hook "{hook_id}" to change its input fails it with "{code}"'))
def mutation_fails_producer(world: World, hook_id: str, code: str) -> None:
    found = world.hook_outcomes(hook_id)
    outcome = found[-1] if found else None
    expect(
        outcome is not None and outcome.status == "failed" and outcome.failure_code == code,
        f"hook {hook_id} failed with {code}",
        f"{outcome.status if outcome else 'no outcome'} ({outcome.failure_code if outcome else ''})",
        profile="a write to the immutable input fails the producer (§7 only says it cannot reach core or another hook)",
    )


@then(parsers.re(rf'hook {HOOK} ends with status "(?P<status>proposed|not_applicable)"'))
def ends_with_status(world: World, hook_id: str, status: str) -> None:
    outcome = _hook(world, hook_id)
    expect(
        outcome.status == status,
        f"hook {hook_id} ended {status}",
        f"{outcome.status} ({outcome.failure_code})",
        rfc="§8.result-shape",
    )


@then(parsers.re(rf"hook {HOOK} has exactly (?P<n>one|two|no) recorded intents?"))
def recorded_intents(world: World, hook_id: str, n: str) -> None:
    wanted = {"no": 0, "one": 1, "two": 2}[n]
    records = world.records_for(hook_id)
    intents = [i for r in records if r.get("status") == "proposed" for i in r.get("intents", [])]
    judged = _failure_judged(world, hook_id, ("§1.journaled", "§9.replay-noop", "§12.M07"))
    expect(len(intents) == wanted, f"{wanted} recorded intent(s) for {hook_id}", f"{len(intents)} in {len(records)} record(s)", **judged)


@then(parsers.parse('hook "{hook_id}" has its one intent on record if it was retried, else its failure kept'))
def retried_or_failure_kept(world: World, hook_id: str) -> None:
    """After a failed first call §10 allows both: a retry under the same identity ("也可在有界 policy
    下用相同 dispatch identity 重试") or a kept failure. Under both, the journal never holds two
    intents for the one dispatch, and a hook called again and answering holds its one intent."""
    records = world.records_for(hook_id)
    intents = [i for r in records if r.get("status") == "proposed" for i in r.get("intents", [])]
    clause = ("§9.replay-noop", "§10.observable-retry", "§12.M05")
    expect(len(intents) <= 1, f"at most one recorded intent for {hook_id}", f"{len(intents)} in {len(records)} record(s)", rfc=clause)
    if _calls(world, hook_id) >= 2:
        expect(len(intents) == 1, f"{hook_id}, retried and answering, to hold its one intent", f"{len(intents)} intents", rfc=clause)
    else:
        last = world.hook_outcomes(hook_id)
        expect(
            bool(last) and last[-1].status == "failed",
            f"{hook_id}, not retried, to keep its failure",
            f"status {last[-1].status if last else 'none'}",
            rfc=("§10.observable-retry", "§10.failure-codes"),
        )


@then(parsers.parse('hook "{hook_id}" has exactly one dispatch identity'))
def one_identity(world: World, hook_id: str) -> None:
    ids = {o.dispatch_id for o in world.hook_outcomes(hook_id)} | {r["dispatch_id"] for r in world.records_for(hook_id)}
    expect(
        len(ids) == 1,
        f"one dispatch identity for {hook_id}",
        f"{len(ids)} identities",
        rfc=("§9.dispatch-id", "§12.M04"),
    )


@then("each admitted hook has exactly one dispatch identity and one sidecar record")
def one_identity_each(world: World) -> None:
    receipt_ids = {t.receipt["receipt_id"] for t in world.turns if t.committed and t.receipt}
    by_hook: dict[str, set[str]] = {}
    for record in world.journal():
        if record["source_receipt_id"] in receipt_ids:
            by_hook.setdefault(record["hook_id"], set()).add(record["dispatch_id"])
    admitted = sorted(h.hook_id for h in world.outcomes[-1].hooks) if world.outcomes else []
    clause = ("§9.dispatch-id", "§12.M04")
    expect_equal(sorted(by_hook), admitted, "hooks with a sidecar record", rfc=clause)
    counts = {h: len(ids) for h, ids in by_hook.items()}
    expect(all(c == len(receipt_ids) for c in counts.values()), f"{len(receipt_ids)} identity per hook per receipt", counts, rfc=clause)
    records = [r["dispatch_id"] for r in world.journal()]
    expect(
        len(records) == len(set(records)),
        "one sidecar record per dispatch identity",
        f"{len(records)} records, {len(set(records))} ids",
        rfc=("§9.replay-noop", "§14.atomic-dedupe"),
    )


@then(parsers.parse('the replay returned the original receipt for hook "{hook_id}" without calling it'))
def replay_returned_original(world: World, hook_id: str) -> None:
    outcomes = world.hook_outcomes(hook_id)
    clause = ("§9.replay-noop", "§12.M05")
    expect(len(outcomes) >= 2, "an original dispatch and a replay", f"{len(outcomes)} outcome(s)", rfc=clause)
    if len(outcomes) < 2:
        return
    first, last = outcomes[0], outcomes[-1]
    expect(
        last.replayed,
        "the replay to say it returned the stored receipt",
        "a fresh result",
        profile="a replay is marked as one (the RFC asks for the original receipt, not a flag)",
    )
    expect_equal(_receipt_of(last), _receipt_of(first), "the hook's dispatch receipt", rfc=clause)


@then(parsers.parse('the journal still holds the original intent for hook "{hook_id}"'))
def original_kept(world: World, hook_id: str) -> None:
    clause = ("§9.conflict", "§12.M06")
    records = world.records_for(hook_id)
    expect(len(records) == 1, f"one record for {hook_id}", f"{len(records)} records", rfc=clause)
    original = _first_record(world, hook_id)
    expect(original is not None, f"a record of {hook_id} right after its first dispatch", "none", rfc=clause)
    if records and original is not None:
        expect_equal(records[0], original, f"the record of {hook_id} (whole)", rfc=clause)


@then(parsers.parse('the record of hook "{hook_id}" is still the one its first dispatch left'))
def record_survives(world: World, hook_id: str) -> None:
    """A restart recovers from what was committed: the record, and so the intent, its first
    dispatch left is what the journal still holds, whatever the provider answers again."""
    clause = ("§9.replay-noop", "§14.atomic-dedupe", "§12.M05")
    records = world.records_for(hook_id)
    original = _first_record(world, hook_id)
    expect(len(records) == 1 and original is not None, f"one record for {hook_id}, as first left", f"{len(records)} records", rfc=clause)
    if len(records) == 1 and original is not None:
        expect_equal(records[0].get("intents"), original.get("intents"), f"the intents on record for {hook_id}", rfc=clause)


# How long past the registered timeout a dispatch may take to give up on a hung hook. The RFC
# says "shortly after its limit"; the reference stops within a few milliseconds, and this slack
# absorbs a loaded CI machine (two test runs beside this one) without letting an implementation that
# ignores the limit pass: the library's mutant that waits 1.5 s on a 200 ms hook still fails it.
TIMEOUT_GRACE_MS = 1200


@then(parsers.parse('the Turn gave up on hook "{hook_id}" within its timeout'))
def gave_up_in_time(world: World, hook_id: str) -> None:
    limit = 200 + TIMEOUT_GRACE_MS  # the hanging behaviours register timeout_ms = 200
    # "seen" names a bucket, not the measured time, so a report of the same run is the same bytes.
    expect(
        world.last_elapsed_ms <= limit,
        f"the Turn to finish within {limit} ms with {hook_id} hung",
        f"it took more than {limit} ms",
        rfc="§10.limits",
    )


@then(parsers.parse('the dispatch is not admitted, with code "{code}"'))
def not_admitted(world: World, code: str) -> None:
    outcome = _nothing_dispatched(world)
    expect(
        outcome is not None and not outcome.admitted and outcome.code == code,
        f"the dispatch not admitted, with code {code}",
        f"admitted={outcome.admitted}, code={outcome.code}" if outcome else "no outcome",
        profile="a dispatch-level code for an inadmissible source (the RFC names none)",
    )


@then("the sidecar journal holds no intent")
def journal_no_intent(world: World) -> None:
    intents = [i for r in world.journal() for i in r.get("intents", [])]
    expect(not intents, "no intent in the sidecar journal", f"{len(intents)} intent(s)", rfc=("§12.M01", "§12.M02", "§12.M03"))


@then(parsers.parse("the sidecar journal holds {n:d} records"))
def journal_n_records(world: World, n: int) -> None:
    """One record per dispatch identity, history kept (§9). The RFC also names a failure receipt
    for a conflict (§10 intent_conflict) without saying whether it is journaled beside the original,
    so what is RFC here is the identities and that none holds two results; the record count is pwh's."""
    journal = world.journal()
    clause = ("§9.replay-noop", "§9.new-identity", "§9.conflict")
    ids = {r.get("dispatch_id") for r in journal}
    expect_equal(len(ids), n, "dispatch identities with a sidecar record", rfc=clause)
    answered = [r.get("dispatch_id") for r in journal if r.get("status") in ("proposed", "not_applicable")]
    expect(len(answered) == len(set(answered)), "no dispatch identity holding two results", answered, rfc=clause)
    expect_equal(
        len(journal), n, "sidecar records", profile="one record per dispatch identity, a conflict not journaled as a record of its own"
    )


@then("every failure in the journal is a compact stable code")
def compact_failures(world: World) -> None:
    clause = ("§9.journal-contents", "§10.failure-codes")
    for record in world.journal():
        if record.get("status") == "failed":
            code = record.get("failure_code")
            expect(
                isinstance(code, str) and re.fullmatch(r"[a-z][a-z0-9_]{0,63}", code) is not None,
                "a compact failure code",
                code,
                rfc=clause,
            )
            expect(
                code in RFC_FAILURE_CODES,
                "one of the RFC's §10 failure codes",
                code,
                profile="failure records use the RFC's example code names",
            )
            expect(not record.get("intents"), "no intents on a failure record", record.get("intents"), rfc=clause)
    text = json.dumps(world.journal())
    expect("Traceback" not in text and "exploded" not in text, "no exception text in the journal", "exception text found", rfc=clause)


@then(parsers.parse('the registration of hook "{hook_id}" is rejected at the field it breaks'))
def registration_rejected(world: World, hook_id: str) -> None:
    rejections = world.install_rejections.get(hook_id, [])
    wanted = world.notes.expected_rejection_path
    clause = world.notes.expected_rejection_clause
    judged: dict[str, Any] = {"rfc": clause} if clause else {"profile": "pwh's registration rules beyond the clauses of §6/§7"}
    expect(bool(rejections), "the registration rejected before any provider call", "the registration was accepted", **judged)
    if not rejections:
        return
    never_called_once_rejected(world, hook_id)
    expect_code(
        rejections[0].code,
        "registration_rejected",
        "rejection code",
        clause="§10.failure-codes",
        rfc_codes=frozenset(RFC_FAILURE_CODES),
    )
    expect(
        any(r.path == wanted for r in rejections),
        f"a rejection naming {wanted}",
        [r.path for r in rejections],
        profile="a rejection names the JSON path of the field it breaks",
    )


@then(parsers.parse('hook "{hook_id}" is installed'))
def hook_is_installed(world: World, hook_id: str) -> None:
    expect(
        world.install_rejections.get(hook_id) == [],
        f"{hook_id} installed",
        world.install_rejections.get(hook_id),
        rfc=("§4.composition-root", "§6.validated-before-call"),
    )


@then(parsers.parse('the intent recorded for hook "{hook_id}" requests write scope "{scope}" and claims nothing'))
def intent_requests_scope(world: World, hook_id: str, scope: str) -> None:
    judge_requested_scope([i for r in world.records_for(hook_id) for i in r.get("intents", [])], scope)


def judge_requested_scope(intents: list[dict[str, Any]], scope: str) -> None:
    """One recorded intent, holding the requested scope as a request only, claiming no authority
    and no effect (M09), at whichever seam its records were read."""
    clause = ("§6.scope-is-request", "§8.scope-declared", "§12.M09")
    expect(len(intents) == 1, "one recorded intent", f"{len(intents)}", rfc=clause)
    if len(intents) != 1:
        return
    intent = intents[0]
    expect_equal(intent.get("requested_write_scope"), [scope], "requested_write_scope", rfc=clause)
    expect_equal(intent.get("grants_new_action_authority"), False, "grants_new_action_authority", rfc=clause)
    expect_equal(intent.get("external_write_performed"), False, "external_write_performed", rfc=clause)


# -- primary Turn -------------------------------------------------------------------------------


@then("the primary receipt and the quota-spend eligibility are unchanged")
def primary_unchanged(world: World) -> None:
    base = world.baseline()
    try:
        ours, theirs = world.orch.primary_snapshot(), base.primary_snapshot()
        expect(
            ours == theirs,
            "primary store byte-identical to a run with no hooks",
            snapshot_difference(theirs, ours),
            rfc=("§5.2.receipt-kept", "§5.2.spend", "§10.failure-never", "§12.M07"),
        )
    finally:
        base.close()
    uses = [u for t in world.turns for u in t.primary_uses]
    expect(not uses, "the dispatcher never touched the primary Turn", uses, rfc=("§5.2.receipt-kept", "§10.failure-never"))


@then("the quota was spent exactly once for each committed receipt")
def spent_once(world: World) -> None:
    receipts = [r["receipt_id"] for r in world.orch.receipts()]
    spends = [s["receipt_id"] for s in world.orch.spends()]
    expect_equal(sorted(spends), sorted(receipts), "spent receipts", rfc=("§5.2.spend", "§10.failure-never"))


@then(parsers.re(r"the Turn stops at (?P<stage>validation|the writeback|provider resolution) with code \"(?P<code>[a-z_]+)\""))
def turn_stopped(world: World, stage: str, code: str) -> None:
    wanted = {"validation": "validation_rejected", "the writeback": "writeback_failed", "provider resolution": "provider_unavailable"}[
        stage
    ]
    expect(
        world.last.stage == wanted and world.last.code == code,
        f"{wanted} with {code}",
        f"{world.last.stage} with {world.last.code}",
        rfc="§12.M03",
        about=world.last.judged_by,
    )


@then("no primary writeback was made")
def no_writeback(world: World) -> None:
    about = world.last.judged_by if world.turns else "testbed"
    expect_equal(len(world.orch.receipts()), 0, "primary writebacks", rfc="§12.M03", about=about)


@then(parsers.parse("{n:d} primary writebacks are committed"))
def n_writebacks(world: World, n: int) -> None:
    expect_equal(len(world.orch.receipts()), n, "primary writebacks", rfc=("§5.2.receipt-kept", "§10.failure-never"))


# -- scheduler, sink, network -------------------------------------------------------------------


@then(parsers.parse('the fake scheduler received exactly one "{kind}" intent'))
def scheduler_one(world: World, kind: str) -> None:
    scheduler = world.scheduler_for_periodic_report()
    executed = {k: v for k, v in scheduler.executions.items() if v}
    kinds = [e.intent_kind for e in scheduler.entries if e.status == "executed"]
    expect(kinds == [kind], f"one executed {kind} intent", kinds, rfc=("§12.M10", "§12.M11"))
    expect(all(v == 1 for v in executed.values()), "each intent executed once", executed, rfc="§9.executor-dedupe")


@then("the fake scheduler received no intent")
def scheduler_none(world: World) -> None:
    scheduler = world.scheduler_for_periodic_report()
    expect(not scheduler.entries, "no intent delivered to the scheduler", f"{len(scheduler.entries)} entries", rfc="§12.M01")


@then(parsers.re(r'the trigger decision says a report is (?P<due>due|not due) because "(?P<reason>[a-z_]+)"'))
def trigger_decision(world: World, due: str, reason: str) -> None:
    decisions = world.reducer.decisions() if world.reducer else []
    clause = "§8.reducer-decides"
    # How many decisions there are follows from what the SUT recorded: a check of the SUT.
    expect(len(decisions) == 1, "exactly one trigger decision", f"{len(decisions)}", rfc=("§12.M10", "§12.M11"))
    as_proposed = _recorded_as_proposed(
        world, None, ("§1.journaled", "§12.M10", "§12.M11"), "each recorded intent exactly as the capability proposed it"
    )
    if len(decisions) != 1 or not as_proposed:
        return
    d = decisions[0]
    expect(
        d.report_due == (due == "due") and d.reason == reason,
        f"report {due} ({reason})",
        f"due={d.report_due} ({d.reason})",
        rfc=clause,
        about="testbed",
    )


# What the governed admission decides on: the fields of a recorded intent it reads.
_ADMISSION_FIELDS = ("intent_kind", "requested_write_scope", "grants_new_action_authority", "external_write_performed")


def _recorded_as_proposed(world: World, fields: tuple[str, ...] | None, clause: tuple[str, ...], what: str) -> bool:
    """pwh's fake scheduler, admission and reducer decide on what the SUT recorded: when a recorded
    intent differs (in ``fields``, or whole when None) from what its hook proposed, the SUT is at
    fault (RFC ``clause``), and a fake's decision on that input says nothing about the fake (False:
    judge no more). A hook whose answers were not kept is not compared."""
    changed = []
    for hook_id in world.hooks:
        answers = [plain(a) for a in world.answers(hook_id)]
        proposed = [i for a in answers if isinstance(a, dict) for i in a.get("intents") or [] if isinstance(i, dict)]
        recorded = [
            i for r in world.journal() if r.get("hook_id") == hook_id and r.get("status") == "proposed" for i in r.get("intents", [])
        ]
        view = (lambda i: {k: plain(i).get(k) for k in fields}) if fields else plain
        by_id = {plain(i).get("intent_id"): view(i) for i in proposed}
        changed += [f"{hook_id}: {view(i)}" for i in recorded if by_id.get(plain(i).get("intent_id"), view(i)) != view(i)]
    expect(not changed, what, changed[:3], rfc=clause)
    return not changed


def _admission_input_as_proposed(world: World) -> bool:
    return _recorded_as_proposed(
        world,
        _ADMISSION_FIELDS,
        ("§1.journaled", "§6.scope-is-request", "§8.scope-declared", "§12.M09"),
        "each recorded intent's kind, requested write scope and claims as its hook proposed them",
    )


@then(parsers.re(r'the governed admission (?P<verdict>denied|admitted) the intent(?: with code "(?P<code>[a-z_]+)")?'))
def admission_verdict(world: World, verdict: str, code: str | None) -> None:
    decisions = world.admission.decisions
    clause = "§1.no-effect"
    # Whether an intent reached the admission at all follows from what the SUT recorded.
    expect(
        len(decisions) == 1,
        "one admission decision on the recorded intent",
        f"{len(decisions)}",
        rfc=("§6.scope-is-request", "§8.scope-declared", "§12.M09"),
    )
    if len(decisions) != 1 or not _admission_input_as_proposed(world):
        return
    d = decisions[0]
    expect(d.admitted == (verdict == "admitted"), f"the intent {verdict}", f"admitted={d.admitted} ({d.code})", rfc=clause, about="testbed")
    if code:
        expect_equal(d.code, code, "admission code", profile="the fake admission's code names", about="testbed")


@then(
    parsers.re(
        r'the governed admission decided on (?P<n>\d+) intents and denied only the one requesting a scope, with code "(?P<code>[a-z_]+)"'
    )
)
def admission_verdicts(world: World, n: str, code: str) -> None:
    """Several recorded intents, one of them requesting a scope: each reaches the admission as
    its hook proposed it (the SUT's part), and only the scoped one is denied (the fake's part)."""
    decisions = world.admission.decisions
    expect(
        len(decisions) == int(n),
        f"{n} admission decisions, one per recorded intent",
        f"{len(decisions)}",
        rfc=("§1.journaled", "§6.scope-is-request", "§8.scope-declared", "§12.M09"),
    )
    if len(decisions) != int(n) or not _admission_input_as_proposed(world):
        return
    denied = [d for d in decisions if not d.admitted]
    expect(len(denied) == 1, "exactly one intent denied", f"{len(denied)} denied", rfc="§1.no-effect", about="testbed")
    if len(denied) == 1:
        expect_equal(denied[0].code, code, "admission code", profile="the fake admission's code names", about="testbed")


@then(parsers.parse('the granted scope is exactly "{scope}"'))
def granted_scope(world: World, scope: str) -> None:
    if not _admission_input_as_proposed(world):
        return
    granted = list(world.admission.decisions[-1].granted_scope) if world.admission.decisions else None
    expect_equal(granted, [scope], "granted scope", rfc=("§1.no-effect", "§6.scope-is-request"), about="testbed")


@then("the sink was never called")
def sink_untouched(world: World) -> None:
    expect(
        not world.sink.touched,
        "zero sink calls",
        f"{len(world.sink.calls)} call(s)",
        rfc=("§1.no-effect", "§10.failure-never", "§12.M12"),
    )


@then("no outbound network connection was attempted")
def no_network(world: World) -> None:
    attempts = world.guard.refused  # type: ignore[attr-defined]
    expect(not attempts, "no outbound connection", f"{len(attempts)} refused attempt(s)", rfc="§12.M12")


# -- public boundary ----------------------------------------------------------------------------


@then("nothing the dispatcher recorded, reported or handed a hook carries a private value")
def nothing_private(world: World) -> None:
    """The M13 public-boundary check over every hook input, the journal and the dispatch outcomes.
    A credential of a certain format (pwh._core.boundary.credential_values: no reading decides what
    it is) and a value the scenario planted as private are RFC; whatever else pwh's scanner flags
    (names, hosts, addresses, paths, prose, keys that name a secret, random-looking runs) is its
    reading of what is private, so profile."""
    from pwh._core.boundary import credential_values

    recorded = world.journal()
    reported = [o.to_json() for o in world.outcomes]
    handed = [i for p in world.hooks.values() for i in p.inputs]
    clause = ("§7.input-excludes", "§9.journal-contents", "§12.M13")
    leaked = credential_values({"hook_inputs": handed, "journal": recorded, "outcomes": reported})
    expect(
        not leaked,
        "no credential in any hook input, the journal or the dispatch outcomes",
        "; ".join(f"{c.kind} at {c.path}" for c in leaked[:3]),
        rfc=clause,
    )
    text = json.dumps({"journal": recorded, "outcomes": reported})
    planted = [k for k, v in world.private_values.items() if v and v in text]
    expect(not planted, "none of the planted private values", f"planted {planted} found", rfc=clause)
    scanner = BoundaryScanner(private_names=[world.private_values["name"]] if "name" in world.private_values else [])
    findings = scanner.scan_value({"hook_inputs": handed, "journal": recorded, "outcomes": reported})
    expect(
        not findings,
        "nothing else pwh's public-boundary scan flags in the hook inputs, the journal or the outcomes",
        [f.to_json() for f in findings[:3]],
        profile="which names, hosts, addresses, paths, prose and secret-like patterns are private is pwh's scanner's reading of §7, §9 and §12 M13",
    )


# Behaviours whose failure only pwh's reading requires: the RFC names no such limit.
PROFILE_ONLY_FAILURES = {
    "returns an integer beyond 64 bits": "pwh bounds integers to 64 bits (the RFC names no integer range)",
    # Read-only views are Python's shapes, not JSON: the RFC decides nothing about such an answer,
    # and pwh's reference reads it as the JSON it shows.
    "proposes one intent behind read-only views": "pwh reads a result made of read-only views as the JSON it shows (not JSON: the RFC is silent)",
    # §8 bounds the serialised result by the hook's budget; no clause ties the executor budget an
    # intent asks for (intent.budget) to the hook's own result budget.
    "proposes an intent with a larger budget than its own": "pwh refuses an intent asking its executor for more result bytes than the hook's own budget (no clause ties the two)",
}


def _failure_judged(world: World, hook_id: str, clause: str | tuple[str, ...]) -> dict[str, Any]:
    """``rfc=clause``, unless the hook's behaviour fails only by pwh's reading."""
    probe = world.hooks.get(hook_id)
    reading = PROFILE_ONLY_FAILURES.get(probe.behaviour if probe else "")
    return {"profile": reading} if reading else {"rfc": clause}


# RFC §7's source identities, which core passes through as committed, and its opaque fields.
SOURCE_IDENTITY = ("effect_id", "step_kind", "goal_id", "agent_id", "todo_id", "turn_instance_id", "event_kind")
SOURCE_OPAQUE = ("receipt_id", "state_revision", "committed_at")


def _receipt_of(outcome):
    """What a hook's dispatch receipt says in RFC terms (its identity, status, code and intents),
    not how this delivery came by it (replayed, attempts, recorded)."""
    data = outcome.to_json()
    return {k: data[k] for k in ("hook_id", "dispatch_id", "status", "failure_code", "intents")}


def _first_record(world: World, hook_id: str) -> dict | None:
    """The hook's record as the journal held it right after the action that first recorded it."""
    for snapshot in world.journal_history:
        for record in snapshot or []:
            if record.get("hook_id") == hook_id:
                return record
    return None


def _nothing_dispatched(world: World):
    """The last dispatch, after checking what the RFC requires of an inadmissible source: it
    called no provider and recorded no intent (§5.1, §12 M01-M03)."""
    outcome = world.outcomes[-1] if world.outcomes else None
    calls = world.calls_per_outcome[-1] if world.calls_per_outcome else world.total_calls()
    # The When step that offered the source says which clause makes it inadmissible; None: only
    # pwh's reading does (then refusing it is a profile check).
    clause = world.notes.inadmissible_clause
    judged: dict[str, Any] = {"rfc": clause} if clause else {"profile": "pwh refuses this source; the RFC does not say it must"}
    expect(calls == 0, "zero provider calls for an inadmissible source", f"{calls} call(s)", **judged)
    intents = [i for h in (outcome.hooks if outcome else ()) for i in h.intents]
    expect(not intents, "no intent for an inadmissible source", f"{len(intents)} intent(s)", **judged)
    return outcome


@then("no hook was handed a planted private value")
def no_private_input(world: World) -> None:
    handed = json.dumps([plain(i) for p in world.hooks.values() for i in p.inputs], default=str)
    planted = sorted(k for k, v in world.private_values.items() if v and v in handed)
    expect(
        not planted,
        "no planted private value in any hook's input",
        f"planted {planted} handed to a hook",
        rfc=("§7.opaque-source", "§7.input-excludes"),
    )


def plain(value: Any) -> Any:
    """A read-only input view (mapping proxies, tuples) as plain JSON values."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


@then(parsers.parse('the dispatch reports the journal error "{code}"'))
def journal_error(world: World, code: str) -> None:
    outcome = world.outcomes[-1] if world.outcomes else None
    expect(
        outcome is not None and outcome.journal_error == code,
        f"journal error {code} in the outcome",
        outcome.journal_error if outcome else "no outcome",
        profile="a journal fault is reported in the dispatch outcome under pwh's code",
    )


@then("the replay does not return the altered intent as recorded")
def tampered_not_replayed(world: World) -> None:
    # §9 asks that a replay return the stored receipt; that a record changed in storage is caught
    # (the reference keeps a checksum of each) is pwh's reading: the RFC names no integrity check.
    outcome = world.outcomes[-1] if world.outcomes else None
    require(outcome is not None, "a replay outcome", "no outcome")
    altered = [h.hook_id for h in outcome.hooks for i in h.intents if TAMPERED_VALUE in json.dumps(i.get("payload"))]  # type: ignore[union-attr]
    expect(
        not altered,
        "no hook's replayed intent carries the altered payload",
        f"replayed as recorded for {altered}",
        profile="a record altered in storage is never replayed as authentic",
    )


@then(parsers.parse('the dispatch is not admitted, at "{path}"'))
def not_admitted_at(world: World, path: str) -> None:
    outcome = _nothing_dispatched(world)
    expect(
        outcome is not None and not outcome.admitted,
        "the source rejected as a whole",
        "admitted" if outcome else "no outcome",
        profile="an inadmissible source is rejected per dispatch, not per hook",
    )
    rejected = outcome.rejection.path if outcome is not None and outcome.rejection else None
    expect_equal(rejected, path, "rejected path", profile="a rejection names the JSON path of the field it breaks")


@then("the intent kind registration is rejected")
def kind_rejected(world: World) -> None:
    rejections = world.notes.kind_rejections
    expect(bool(rejections), "the intent kind refused", "accepted", rfc=("§6.validated-before-call", "§8.known-schema"))
    if rejections:
        expect_code(
            rejections[0].code,
            "registration_rejected",
            "rejection code",
            clause="§10.failure-codes",
            rfc_codes=frozenset(RFC_FAILURE_CODES),
        )


@then(parsers.parse('the intent kind registration is rejected at "{path}"'))
def kind_rejected_at(world: World, path: str) -> None:
    rejections = world.notes.kind_rejections
    seen = rejections[0].path if rejections else None
    expect_equal(seen, path, "rejected path", profile="a rejection names the JSON path of the field it breaks")


@then(parsers.parse('the offered registration is rejected at "{path}"'))
def offered_rejected(world: World, path: str) -> None:
    rejections = world.notes.offered_rejections
    expect(bool(rejections), "the registration rejected before any provider call", "accepted", rfc="§6.validated-before-call")
    if rejections:
        expect_code(
            rejections[0].code,
            "registration_rejected",
            "rejection code",
            clause="§10.failure-codes",
            rfc_codes=frozenset(RFC_FAILURE_CODES),
        )
        expect_equal(
            rejections[0].path.split(".")[0].split("[")[0],
            path,
            "rejected path",
            profile="a rejection names the JSON path of the field it breaks",
        )
