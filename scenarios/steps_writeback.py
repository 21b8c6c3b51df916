"""Steps at the writeback seam (pwh/_suts/writeback_seam.py): the implementation commits its own
primary writeback through its own primary path, and the checks read what that path did.

Each check is written against a wrong wiring that would otherwise pass: a path that never
commits (every "committed" check), hooks called but their calls not reported (provider calls are
counted by pwh's own producers, in whatever process they run, *and* read from the boundary's
account), a dispatch before the commit or after a failed one (every receipt a hook was handed
must be a committed one), a replay that records again (the sidecar before and after compared
whole).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_bdd import given, parsers, then, when

from fakes._behaviours import BEHAVIOURS, Body, CallContext
from fakes._packets import GENERIC_INTENT_KIND, TEST_INTENT_KINDS, registration
from fakes._world import HookProbe, World, json_view
from pwh import RFC_FAILURE_CODES
from pwh._harness.expect import expect, expect_equal, require

from .steps_checks import judge_requested_scope

# -- set-up -------------------------------------------------------------------------------------


def _prepare(world: World, todos: int, *, phase: bool, periodic_report: bool = False) -> None:
    kw = {"todos": todos, "phase_enabled": phase, "report_capability": periodic_report}
    world.writeback.prepare(**kw)
    world.writeback_script.append(("prepare", kw))


@given(parsers.re(r"a Goal with (?P<todos>\d+) open Todos? at the writeback seam, the post-writeback phase (?P<state>enabled|disabled)"))
def wb_goal(world: World, todos: str, state: str) -> None:
    _prepare(world, int(todos), phase=state == "enabled")


@given(parsers.re(r"a Goal with (?P<todos>\d+) open Todos? at the writeback seam, with the periodic-report capability installed"))
def wb_goal_periodic(world: World, todos: str) -> None:
    _prepare(world, int(todos), phase=True, periodic_report=True)


class _EscapesTheHost(BaseException):
    """What a hook may raise that no ``except Exception`` catches."""


def _base_exception(i: Mapping[str, Any], c: CallContext) -> Any:
    raise _EscapesTheHost("hook escaped")


def _garbage(i: Mapping[str, Any], c: CallContext) -> Any:
    return {"what": "garbage", "intents": "not a list", "status": 12}


_OWN_BEHAVIOURS: dict[str, Body] = {"raises a BaseException": _base_exception, "returns garbage": _garbage}


def _kind(world: World, kind: str) -> None:
    kinds: set[str] = world.__dict__.setdefault("writeback_kinds", set())
    if kind not in kinds:
        rejections = world.writeback.register_intent_kind(kind, json.loads(json.dumps(TEST_INTENT_KINDS[kind])))
        require(not rejections, f"the test intent kind {kind} registered", rejections)
        kinds.add(kind)


@given(parsers.parse('hook "{hook_id}" is installed at the writeback seam and {behaviour}'))
def wb_install(world: World, hook_id: str, behaviour: str) -> None:
    _kind(world, GENERIC_INTENT_KIND)
    reg_changes: dict[str, Any] = {}
    if behaviour in _OWN_BEHAVIOURS:
        body = _OWN_BEHAVIOURS[behaviour]
    else:
        spec = BEHAVIOURS[behaviour]
        body = spec.body
        for kind in spec.intent_kinds:
            _kind(world, kind)
        if spec.intent_kinds:
            reg_changes["intent_kinds"] = list(spec.intent_kinds)
        reg_changes["budget"] = dict(spec.budget)
    probe = HookProbe(hook_id, behaviour, world.log)
    rejections = world.writeback.install(registration(hook_id, **reg_changes), world._producer(probe, body))
    require(not rejections, f"hook {hook_id} installed at the writeback seam", rejections)
    world.hooks[hook_id] = probe


@given("the planted private values are put where a user puts them at the writeback seam")
def wb_plant(world: World) -> None:
    require(bool(world.private_values), "private values planted first", world.private_values)
    world.writeback.plant(dict(world.private_values))


# -- commands -----------------------------------------------------------------------------------


def _command(world: World, operation: str, **kw: Any) -> Any:
    commit = getattr(world.writeback, operation)(**kw)
    if kw.get("crash") is None:
        world.writeback_script.append((operation, kw))
    commits: list[Any] = world.__dict__.setdefault("writeback_commits", [])
    commits.append(commit)
    return commit


@when(parsers.re(r"Todo (?P<todo>\d+) is completed through the primary path(?:, its (?P<fail>validation|writeback) failing)?$"))
def wb_complete(world: World, todo: str, fail: str | None) -> None:
    _command(world, "commit_completion", todo=int(todo), fail=fail)


@when(parsers.re(r"Todos (?P<first>\d+) to (?P<last>\d+) are completed through the primary path"))
def wb_complete_many(world: World, first: str, last: str) -> None:
    for todo in range(int(first), int(last) + 1):
        _command(world, "commit_completion", todo=todo, fail=None)


@when(parsers.re(r"a replan is recorded through the primary path(?:, its (?P<fail>validation|writeback) failing)?$"))
def wb_replan(world: World, fail: str | None) -> None:
    _command(world, "commit_replan", fail=fail)


@when(parsers.parse("committed writeback {number:d} is replayed through the primary path"))
def wb_replay(world: World, number: int) -> None:
    world.__dict__["sidecar_before_replay"] = world.writeback.sidecar_records()
    world.__dict__["calls_before_replay"] = world.total_calls()
    _command(world, "replay", commit_number=number)


@when(parsers.re(r"Todo (?P<todo>\d+) is completed through the primary path and the process is killed (?P<moment>[a-z_]+)"))
def wb_crash(world: World, todo: str, moment: str) -> None:
    crashed = _command(world, "commit_completion", todo=int(todo), crash=moment)
    world.writeback_script.append(("commit_completion", {"todo": int(todo), "fail": None}))  # the no-hooks run: no crash
    require(crashed.raised == "killed", f"the process killed at {moment}", crashed)
    world.__dict__["records_before_recovery"] = world.writeback.sidecar_records()
    world.writeback.recover()


@when("the fake scheduler consumes the writeback seam's intent receipts")
def wb_scheduler(world: World) -> None:
    world.scheduler_for_periodic_report().consume(world.writeback.intent_receipts())


# -- reads --------------------------------------------------------------------------------------


def _commits(world: World) -> list[Any]:
    return list(world.__dict__.get("writeback_commits", []))


def _committed_ids(world: World) -> list[str]:
    """The receipt ids the primary path answered committed, in order, each once (a replay answers
    the same id again)."""
    ids: list[str] = []
    for commit in _commits(world):
        if commit.committed and commit.receipt_id and commit.receipt_id not in ids:
            ids.append(commit.receipt_id)
    return ids


def _durable_count(world: World) -> int:
    """How many committed writebacks the primary path's durable storage holds (its receipts are
    numbered from 1; past the last, ``LookupError``)."""
    number = 0
    while number < 10_000:
        try:
            world.writeback.primary_receipt(number + 1)
        except LookupError:
            return number
        number += 1
    return number


def _seen(world: World) -> list[Any]:
    return list(world.writeback.hooks_seen())


def _calls(world: World) -> int:
    """Provider calls: pwh's own producers' count and the boundary's account, the larger."""
    return max(world.total_calls(), sum(1 for s in _seen(world) if s.hook_id in world.hooks))


# -- checks -------------------------------------------------------------------------------------


@then(parsers.re(r"the primary path committed (?P<count>\d+) writebacks?"))
def wb_committed(world: World, count: str) -> None:
    n = int(count)
    durable = _durable_count(world)
    answered = _committed_ids(world)
    expect_equal(durable, n, "durable primary writebacks", rfc=("§5.2.receipt-kept", "§10.failure-never"))
    expect(
        len(answered) <= durable,
        "every writeback the primary path answered committed is durable",
        f"answered {len(answered)}, durable {durable}",
        rfc="§5.1.committed",
    )


@then("no provider was called at the writeback seam")
def wb_no_calls(world: World) -> None:
    calls = _calls(world)
    expect(calls == 0, "zero provider calls", f"{calls} call(s)", rfc=("§12.M01", "§12.M03", "§5.1.committed"))


@then("the writeback seam holds no sidecar record and no intent")
def wb_nothing_recorded(world: World) -> None:
    records, intents = world.writeback.sidecar_records(), world.writeback.intent_receipts()
    expect(not records, "no sidecar record", f"{len(records)} record(s)", rfc=("§12.M01", "§12.M03"))
    expect(not intents, "no sidecar intent", f"{len(intents)} intent(s)", rfc=("§12.M01", "§12.M03"))


@then("every hook at the writeback seam was handed only committed receipts, each once")
def wb_one_identity(world: World) -> None:
    """§12 M04: one dispatch identity per admitted hook per committed receipt, from that receipt.
    A dispatch before the commit, or after a failed one, hands a hook a receipt never committed."""
    committed = set(_committed_ids(world))
    seen = _seen(world)
    clause = ("§12.M04", "§5.1.committed", "§5.1.durable")
    stray = [s.hook_id for s in seen if s.receipt_id not in committed]
    expect(not stray, "every receipt handed to a hook is a committed one", f"uncommitted receipts handed to {stray}", rfc=clause)
    records = world.writeback.sidecar_records()
    strays = [r.get("hook_id") for r in records if r.get("source_receipt_id") not in committed]
    expect(not strays, "every sidecar record is for a committed receipt", f"records for uncommitted receipts: {strays}", rfc=clause)
    for hook_id in sorted(world.hooks):
        calls = world.hooks[hook_id].calls
        mine = [r for r in records if r.get("hook_id") == hook_id]
        identities = {r.get("dispatch_id") for r in mine}
        for receipt_id in sorted(committed):
            per_receipt = [r for r in mine if r.get("source_receipt_id") == receipt_id]
            expect(
                len(per_receipt) == 1,
                f"hook {hook_id}: exactly one sidecar record for each committed receipt",
                f"{len(per_receipt)} record(s) for one receipt",
                rfc=("§12.M04", "§5.2.sidecar-identity"),
            )
        expect(
            len(identities) == len(committed),
            f"hook {hook_id}: one dispatch identity per committed receipt",
            f"{len(identities)} identities for {len(committed)} receipt(s)",
            rfc=("§12.M04", "§9.dispatch-id"),
        )
        expect(
            calls == len(committed),
            f"hook {hook_id}: called once per committed receipt",
            f"{calls} call(s) for {len(committed)} receipt(s)",
            rfc="§12.M04",
        )
    everyone = [r.get("dispatch_id") for r in records]
    expect(len(set(everyone)) == len(everyone), "no two records share a dispatch identity", everyone, rfc="§9.dispatch-id")


@then(parsers.parse('hook "{hook_id}" at the writeback seam ends with status "{status}"'))
def wb_status(world: World, hook_id: str, status: str) -> None:
    mine = [r for r in world.writeback.sidecar_records() if r.get("hook_id") == hook_id]
    expect(bool(mine), f"a sidecar record for hook {hook_id}", "none", rfc=("§12.M04", "§5.2.sidecar-identity"))
    last = mine[-1] if mine else {}
    clause = ("§12.M07", "§12.M08", "§10.independent") if status == "failed" else ("§12.M08", "§10.independent", "§8.result-shape")
    expect_equal(last.get("status"), status, f"hook {hook_id}'s status", rfc=clause)
    if status == "failed":
        expect(
            last.get("failure_code") in RFC_FAILURE_CODES,
            "a compact stable failure code (§10)",
            f"failure_code {str(last.get('failure_code'))[:60]!r}",
            rfc=("§10.failure-codes", "§9.journal-contents", "§12.M07"),
        )
        expect(not last.get("intents"), "no intent recorded for a failed hook", f"{len(last.get('intents') or [])}", rfc="§12.M07")


@then(parsers.parse('hook "{hook_id}" at the writeback seam has exactly one recorded intent'))
def wb_one_intent(world: World, hook_id: str) -> None:
    intents = [i for r in world.writeback.sidecar_records() if r.get("hook_id") == hook_id for i in r.get("intents") or []]
    expect(
        len(intents) == 1,
        f"exactly one recorded intent for hook {hook_id}",
        f"{len(intents)}",
        rfc=("§12.M05", "§9.replay-noop", "§12.M08"),
    )
    receipts = [i for i in world.writeback.intent_receipts() if i.get("hook_id") == hook_id]
    expect(len(receipts) == 1, f"exactly one intent receipt of hook {hook_id}", f"{len(receipts)}", rfc=("§12.M05", "§9.replay-noop"))


@then("the replay returned the same dispatch receipt and recorded nothing new")
def wb_replay_noop(world: World) -> None:
    before = world.__dict__["sidecar_before_replay"]
    after = world.writeback.sidecar_records()
    expect(
        after == before,
        "the sidecar unchanged by the replay",
        f"{len(before)} record(s) before, {len(after)} after",
        rfc=("§12.M05", "§9.replay-noop"),
    )
    calls = world.total_calls() - world.__dict__["calls_before_replay"]
    expect(calls == 0, "no provider called by the replay", f"{calls} call(s)", rfc=("§9.replay-noop", "§12.M05"))
    intents = [i.get("intent_id") for i in world.writeback.intent_receipts()]
    expect(len(set(intents)) == len(intents), "no duplicate intent", intents, rfc="§12.M05")
    replay = _commits(world)[-1]
    expect(replay.raised is None, "the replay raised nothing into the host", replay.raised, rfc="§10.failure-never")
    hooks = replay.dispatch.get("hooks") if isinstance(replay.dispatch, Mapping) else None
    if isinstance(hooks, list):  # the command's own report, when it gives one (its shape is the implementation's)
        mine = {h.get("hook_id"): h.get("dispatch_id") for h in hooks if isinstance(h, Mapping)}
        recorded = {r.get("hook_id"): r.get("dispatch_id") for r in before}
        expect(
            mine == recorded,
            "the replay reports the recorded dispatch identities",
            f"{len(mine)} reported",
            profile="a replayed command reports the dispatch it returned",
        )


@then("nothing of the crashed commit's dispatch was recorded twice or half before recovery")
def wb_nothing_before_recovery(world: World) -> None:
    # As at the dispatcher seam (steps_limits.records_before_recovery): §14 and §9 allow one commit
    # per dispatch identity or one for every hook of a receipt; under both, no record is half
    # written and no identity is recorded twice. That none landed before the crash is profile.
    before = world.__dict__["records_before_recovery"]
    ids = [r.get("dispatch_id") for r in before]
    clause = ("§14.atomic-dedupe", "§9.crash-retry")
    expect(len(ids) == len(set(ids)), "no dispatch identity recorded twice before recovery", ids, rfc=clause)
    whole = [r for r in before if r.get("dispatch_id") and r.get("hook_id") in world.hooks and r.get("status")]
    expect(
        len(whole) == len(before), "every record before recovery whole, of an installed hook", f"{len(before) - len(whole)} not", rfc=clause
    )
    expect_equal(len(before), 0, "sidecar records before recovery", profile="all of a receipt's hook records land in one commit")


@then(parsers.parse("commit {number:d}'s quota-spend eligibility equals a run with no hooks and no crash"))
def wb_spent_once(world: World, number: int) -> None:
    """The crashed command, recovered, against the same command run once without hooks or crash:
    the spend is neither lost nor repeated, in the implementation's own terms."""
    base = world.writeback_baseline()
    expect_equal(
        dict(world.writeback.spend_eligibility(number)),
        dict(base.spend_eligibility(number)),
        f"spend eligibility of receipt {number}",
        rfc=("§5.2.spend", "§9.crash-retry", "§10.failure-never"),
    )


@then("the primary receipts and the spend eligibility equal a run with no hooks")
def wb_primary_unchanged(world: World) -> None:
    base = world.writeback_baseline()
    clause = ("§12.M07", "§10.failure-never", "§11.slice2")
    n = _durable_count(world)
    require(n > 0, "a committed writeback to compare", n)
    for number in range(1, n + 1):
        mine, theirs = world.writeback.primary_receipt(number), base.primary_receipt(number)
        expect(
            mine == theirs,
            f"primary receipt {number} byte-identical to a run with no hooks",
            f"{len(mine)} bytes vs {len(theirs)} bytes",
            rfc=clause,
        )
        expect_equal(
            dict(world.writeback.spend_eligibility(number)),
            dict(base.spend_eligibility(number)),
            f"spend eligibility of receipt {number}",
            rfc=clause,
        )
    raised = [c.raised for c in _commits(world) if c.raised]
    expect(not raised, "no hook failure escaped the primary command", raised, rfc=("§1.failure-contained", "§10.failure-never"))


@then("the hooks at the writeback seam ran in stable hook_id order")
def wb_order(world: World) -> None:
    called = world.call_order
    expect(called == sorted(called), "providers called in hook_id order", called, rfc=("§6.stable-order", "§12.M08"))
    seen = [s.hook_id for s in _seen(world)]
    expect(seen == sorted(seen), "the boundary's account in hook_id order", seen, rfc=("§6.stable-order", "§12.M08"))
    recorded = [r.get("hook_id") for r in world.writeback.sidecar_records()]
    expect(recorded == sorted(recorded), "sidecar records in hook_id order", recorded, profile="records are written in hook_id order")


@then(parsers.parse('the intent recorded at the writeback seam for hook "{hook_id}" requests write scope "{scope}" and claims nothing'))
def wb_scope(world: World, hook_id: str, scope: str) -> None:
    judge_requested_scope(
        [i for r in world.writeback.sidecar_records() if r.get("hook_id") == hook_id for i in r.get("intents") or []], scope
    )


@then(parsers.parse('the writeback seam recorded exactly one "{kind}" intent, for the receipt that closed the segment'))
def wb_trigger_intent(world: World, kind: str) -> None:
    intents = [i for i in world.writeback.intent_receipts() if i.get("intent_kind") == kind]
    expect(len(intents) == 1, f"one {kind} intent receipt", f"{len(intents)}", rfc=("§12.M10", "§12.M11", "§12.e2e"))
    ids = _committed_ids(world)
    if len(intents) == 1 and ids:
        records = [
            r
            for r in world.writeback.sidecar_records()
            if any(i.get("intent_id") == intents[0].get("intent_id") for i in r.get("intents") or [])
        ]
        expect(
            [r.get("source_receipt_id") for r in records] == [ids[-1]],
            "the intent recorded for the last committed receipt",
            f"{len(records)} record(s), for the last receipt: {[r.get('source_receipt_id') == ids[-1] for r in records]}",
            rfc=("§12.M10", "§12.M11", "§12.e2e"),
        )


@then("the writeback seam recorded no intent")
def wb_no_intent(world: World) -> None:
    intents = world.writeback.intent_receipts()
    expect(not intents, "no intent receipt", f"{len(intents)}", rfc=("§12.M10", "§8.reducer-decides"))


@then("no hook input and no journaled record at the writeback seam carries a planted private value")
def wb_no_private(world: World) -> None:
    planted = {k: v for k, v in world.private_values.items() if v}
    require(bool(planted), "private values planted", planted)
    handed = json.dumps([json_view(s.hook_input) for s in _seen(world)], default=str)
    handed += json.dumps([i for p in world.hooks.values() for i in p.inputs], default=str)
    recorded = json.dumps([world.writeback.sidecar_records(), world.writeback.intent_receipts()], default=str)
    reported = json.dumps([[c.dispatch, list(c.notes), c.raised] for c in _commits(world)], default=str)
    for key in sorted(planted):
        value = planted[key]
        credential = key == "credential"
        expect(
            value not in handed,
            f"no planted {key} in any hook's input",
            f"the planted {key} handed to a hook",
            rfc=("§7.input-excludes", "§9.journal-contents", "§12.M13")
            if credential
            else ("§7.opaque-source", "§7.input-excludes", "§12.M13"),
        )
        expect(
            value not in recorded,
            f"no planted {key} in any journaled record",
            f"the planted {key} in the sidecar",
            rfc=("§9.journal-contents", "§7.input-excludes", "§12.M13") if credential else ("§9.journal-contents", "§12.M13"),
        )
        expect(
            value not in reported,
            f"no planted {key} in what the primary command reported",
            f"the planted {key} in a command's report",
            rfc="§12.M13",
        )
