"""Steps for the limit scenarios: both sides of every numeric limit, whole-record and
whole-packet comparisons, late answers, the journal between a crash and its recovery.

Every hook keeps a copy of each answer it gave (``World.keep_answer``, in
whatever process the provider runs), so a
step can compare what is on record with exactly what the provider proposed, field for field.
Sizes are counted as the RFC counts them: the UTF-8 bytes of the canonical serialisation (keys
sorted, no insignificant whitespace), computed here with the standard library alone, not with
pwh's own encoder.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from pytest_bdd import given, parsers, then, when

from fakes._behaviours import CallContext
from fakes._packets import (
    GENERIC_INTENT_KIND,
    GENERIC_PAYLOAD_SCHEMA,
    intent_for,
    not_applicable,
    proposed,
    registration,
)
from fakes._world import World
from pwh import RFC_FAILURE_CODES, SimulatedCrash
from pwh._core.contracts import BOUNDARY_FLAGS
from pwh._harness.expect import expect, expect_code, expect_equal

from .steps_checks import SOURCE_IDENTITY, SOURCE_OPAQUE, _nothing_dispatched, never_called_once_rejected, plain

# Parameterised steps use parsers.parse; parsers.re is kept only where a parameter is a closed
# list of phrases (which `pwh scenarios steps` lists) or a part is optional ("times?").
HOOK = r'"(?P<hook_id>[a-z0-9_.]+)"'
OTHER_KIND = "synthetic.other_follow_up"
BOUND_READING = "pwh's core bounds: 8 invocations, 16 intents, 65,536 result bytes, 30,000 ms, 8 intent kinds, 64-character id segments"


# -- helpers ------------------------------------------------------------------------------------


def canonical(value: Any) -> bytes:
    """The RFC's canonical bytes (rule JNL, P-identity-bytes): UTF-8, keys sorted, no insignificant whitespace."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def _state(world: World) -> dict[str, Any]:
    state = world.notes.limits
    if state is None:
        state = {"registrations": {}, "arrived": {}, "kept": {}, "noted": None, "errors": {}}
        world.notes.limits = state
    return state


def _install(
    world: World,
    hook_id: str,
    body: Callable[[Mapping[str, Any], CallContext], Any],
    reg: dict[str, Any] | None = None,
    *,
    must_install: bool = True,
) -> list[Any]:
    """Install ``body`` as hook ``hook_id``'s provider (the world keeps a copy of each answer it gives)."""
    world.ensure_generic_kind()
    state = _state(world)
    reg = reg if reg is not None else registration(hook_id)
    rejections = world.install_body(hook_id, "a scripted provider", body, reg)
    state["registrations"][hook_id] = reg
    if must_install:
        expect(
            not rejections,
            f"hook {hook_id} to install",
            f"rejected: {rejections[:1]}",
            rfc=("§4.composition-root", "§6.validated-before-call"),
        )
    return rejections


def _sized_result(hook_input: Mapping[str, Any], size: int) -> dict[str, Any]:
    """A valid one-intent result whose canonical serialisation is exactly ``size`` UTF-8 bytes,
    padded mostly with a three-byte character (so characters and bytes differ by about 3x)."""

    def build(filler: str) -> dict[str, Any]:
        return proposed(intent_for(hook_input, {"note_ref": "sized", "filler": filler}))

    need = size - len(canonical(build("")))
    if need < 0:
        raise AssertionError(f"the smallest result is {size + -need} bytes, over the {size} asked for")
    wide = need // 3
    result = build("\u20ac" * wide + "x" * (need - 3 * wide))
    if len(canonical(result)) != size:
        raise AssertionError("the testbed could not size the result")
    return result


def _registration_of(world: World, hook_id: str) -> dict[str, Any]:
    """The registration this module installed, else the one the step library's builder makes."""
    return _state(world)["registrations"].get(hook_id) or registration(hook_id)


def _records(world: World, hook_id: str) -> list[dict[str, Any]]:
    return [r for r in world.journal() if r.get("hook_id") == hook_id]


def _only_record(world: World, hook_id: str) -> dict[str, Any] | None:
    records = _records(world, hook_id)
    expect(len(records) == 1, f"one sidecar record for {hook_id}", f"{len(records)} record(s)", rfc="§12.M04")
    return records[0]


def _proposed_intents(world: World, hook_id: str) -> list[dict[str, Any]]:
    answers = world.answers(hook_id)
    return [i for a in answers if isinstance(a, dict) for i in a.get("intents", [])]


def _committed_receipts(world: World) -> list[dict[str, Any]]:
    return [t.receipt for t in world.turns if t.committed and t.receipt]


def _expected_record(
    world: World, hook_id: str, *, status: str, code: str | None, intents: list[Any], digest: str | None, attempts: int
) -> dict[str, Any]:
    """The whole sidecar record pwh's profile writes for one dispatch of ``hook_id``."""
    reg = _registration_of(world, hook_id)
    receipt = world.last_committed().receipt
    assert receipt is not None  # last_committed returns a committed Turn, which has its receipt
    outcome = world.hook_outcomes(hook_id)[-1]
    return {
        "schema_version": "pwh_post_writeback_sidecar_receipt_v0",
        "dispatch_id": outcome.dispatch_id,
        "hook_id": hook_id,
        "capability_id": reg["capability_id"],
        "source_receipt_id": receipt["receipt_id"],
        "event_kind": receipt["event_kind"],
        "registration_schema_version": reg["schema_version"],
        "status": status,
        "failure_code": code,
        "intents": intents,
        "result_digest": digest,
        "attempts": attempts,
    }


# -- Given: hooks ---------------------------------------------------------------------------------


@given(parsers.parse('hook "{hook_id}" may answer at most {limit:d} bytes and answers a result of exactly {size:d} bytes'))
def sized_hook(world: World, hook_id: str, limit: int, size: int) -> None:
    _install(world, hook_id, lambda i, c: _sized_result(i, size), registration(hook_id, budget={"max_result_bytes": limit}))


@given(parsers.parse('hook "{hook_id}" may propose at most {limit:d} intents and proposes {count:d}'))
def counted_hook(world: World, hook_id: str, limit: int, count: int) -> None:
    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        return proposed(*(intent_for(i, {"note_ref": f"n{k}"}) for k in range(count)))

    _install(world, hook_id, body, registration(hook_id, budget={"max_intents_per_dispatch": limit}))


@given(parsers.parse('hook "{hook_id}" answers {late:d} ms after its {limit:d} ms timeout has passed'))
def late_hook(world: World, hook_id: str, late: int, limit: int) -> None:
    state = _state(world)
    arrived = state["arrived"].setdefault(hook_id, world.flag())
    total = (limit + late) / 1000

    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        deadline = time.monotonic() + total
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or c.release.is_set():
                break
            try:
                c.release.wait(remaining)
            except BaseException:
                continue
        result = proposed(intent_for(i, {"note_ref": "late_answer"}))
        arrived.set()
        return result

    _install(world, hook_id, body, registration(hook_id, budget={"timeout_ms": limit}))


@given(parsers.parse('hook "{hook_id}" proposes an intent with an extra field "{name}"'))
def intent_extra_field(world: World, hook_id: str, name: str) -> None:
    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        intent = intent_for(i)
        intent[name] = "extra"
        return proposed(intent)

    _install(world, hook_id, body)


@given(parsers.parse('hook "{hook_id}" proposes an intent whose budget has an extra field "{name}"'))
def intent_budget_extra_field(world: World, hook_id: str, name: str) -> None:
    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        intent = intent_for(i)
        intent["budget"][name] = 1
        return proposed(intent)

    _install(world, hook_id, body)


@given(parsers.parse('hook "{hook_id}" answers a result with an extra field "{name}"'))
def result_extra_field(world: World, hook_id: str, name: str) -> None:
    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        result = proposed(intent_for(i))
        result[name] = "extra"
        return result

    _install(world, hook_id, body)


@given(parsers.parse('hook "{hook_id}" proposes an intent without its "{name}" field'))
def intent_missing_field(world: World, hook_id: str, name: str) -> None:
    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        intent = intent_for(i)
        intent.pop(name)
        return proposed(intent)

    _install(world, hook_id, body)


@given(parsers.parse('hook "{hook_id}" proposes an intent naming another capability'))
def other_capability(world: World, hook_id: str) -> None:
    _install(world, hook_id, lambda i, c: proposed(intent_for(i, capability_id="zz_other")))


@given(parsers.parse('hook "{hook_id}" proposes an intent of a known kind it did not register'))
def known_unregistered_kind(world: World, hook_id: str) -> None:
    world.sut.register_intent_kind(OTHER_KIND, GENERIC_PAYLOAD_SCHEMA)
    _install(world, hook_id, lambda i, c: proposed(intent_for(i, kind=OTHER_KIND)))


@given(
    parsers.parse('hook "{hook_id}" proposes an intent that says policy version "{said}" but whose identity was computed under "{used}"')
)
def policy_digest_mismatch(world: World, hook_id: str, said: str, used: str) -> None:
    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        intent = intent_for(i, policy_version=used)
        intent["policy_version"] = said
        return proposed(intent)

    _install(world, hook_id, body)


@given(parsers.parse('hook "{hook_id}" answers with a completed sidecar receipt of its own making'))
def forged_receipt(world: World, hook_id: str) -> None:
    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        return {
            "schema_version": "pwh_post_writeback_sidecar_receipt_v0",
            "dispatch_id": i["dispatch_id"],
            "hook_id": i["hook_id"],
            "capability_id": i["capability_id"],
            "source_receipt_id": i["source"]["receipt_id"],
            "event_kind": i["source"]["event_kind"],
            "registration_schema_version": "loopx_post_writeback_capability_hook_registration_v0",
            "status": "proposed",
            "failure_code": None,
            "intents": [intent_for(i)],
            "result_digest": "sha256:" + "0" * 64,
            "attempts": 1,
        }

    _install(world, hook_id, body)


@given(parsers.parse('hook "{hook_id}" proposes an intent whose score is the integer {n:d}'))
def scores_an_integer(world: World, hook_id: str, n: int) -> None:
    # n is an exact integer (JSON bounds none; parse's {n:d} reads it whole), never the nearest binary64 number
    _install(world, hook_id, lambda i, c: proposed(intent_for(i, {"note_ref": "counted", "score": n})))


@given(parsers.parse('hook "{hook_id}" proposes one intent and keeps its answer'))
def keeps_answer(world: World, hook_id: str) -> None:
    kept = _state(world)["kept"]

    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        result = proposed(intent_for(i))
        kept[hook_id] = result
        return result

    _install(world, hook_id, body)


@given(parsers.parse('hook "{hook_id}" changes the answer hook "{other}" kept, {ms:d} ms after it is called'))
def changes_kept_answer(world: World, hook_id: str, other: str, ms: int) -> None:
    kept = _state(world)["kept"]

    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        c.release.wait(ms / 1000)
        answer = kept.get(other)
        if answer is not None:
            for intent in answer["intents"]:
                intent["payload"]["note_ref"] = "changed_after_answering"
                intent["hook_id"] = "zz.rewritten"
        return not_applicable()

    _install(world, hook_id, body, registration(hook_id, budget={"timeout_ms": 5000}))


class ProviderVaultError(RuntimeError):
    """An error class whose name and message a journal must never carry (JNL-6)."""


@given(parsers.parse('hook "{hook_id}" raises an error of its own kind whose message carries a credential'))
def raises_own_kind(world: World, hook_id: str) -> None:
    message = "vault refused token ghp_" + "Q7w" * 12
    _state(world)["errors"][hook_id] = (ProviderVaultError.__name__, message)

    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        raise ProviderVaultError(message)

    _install(world, hook_id, body)


_BUDGET_FIELDS = "max_invocations_per_dispatch|max_intents_per_dispatch|max_result_bytes|timeout_ms"


@given(parsers.re(rf"hook {HOOK} is registered with its (?P<field>{_BUDGET_FIELDS}) budget at (?P<value>\d+)"))
def budget_at(world: World, hook_id: str, field: str, value: str) -> None:
    reg = registration(hook_id, budget={field: int(value)})
    world.notes.expected_rejection_path = f"$.budget.{field}"
    _install(world, hook_id, lambda i, c: proposed(intent_for(i)), reg, must_install=False)


@given(parsers.parse('hook "{hook_id}" is registered with {n:d} intent kinds'))
def many_intent_kinds(world: World, hook_id: str, n: int) -> None:
    world.ensure_generic_kind()
    kinds = [GENERIC_INTENT_KIND] + [f"synthetic.kind_{k}" for k in range(1, n)]
    for kind in kinds[1:]:
        world.sut.register_intent_kind(kind, GENERIC_PAYLOAD_SCHEMA)
    world.notes.expected_rejection_path = "$.intent_kinds"
    _install(world, hook_id, lambda i, c: proposed(intent_for(i)), registration(hook_id, intent_kinds=kinds), must_install=False)


@given(parsers.parse("a hook is registered whose hook id has a segment of {n:d} characters"))
def long_hook_segment(world: World, n: int) -> None:
    hook_id = "a." + "r" * n
    world.notes.long_hook_id = hook_id
    world.notes.expected_rejection_path = "$.hook_id"
    reg = registration(hook_id, capability_id="a")
    _install(world, hook_id, lambda i, c: proposed(intent_for(i)), reg, must_install=False)


@given(parsers.parse("the profile allows at most {n:d} result bytes per dispatch"))
def bytes_ceiling(world: World, n: int) -> None:
    world.set_profile(max_result_bytes_per_dispatch=n)


# -- When -------------------------------------------------------------------------------------------


@when(parsers.parse('the late answer of hook "{hook_id}" has arrived'))
def late_answer_arrived(world: World, hook_id: str) -> None:
    arrived = _state(world)["arrived"][hook_id]
    # A runner that kills the provider at its limit (the reference's worker process) leaves no
    # late answer to come: the provider's process is gone, which is as late as an answer gets.
    deadline = time.monotonic() + 10
    came = gone = False
    while not (came or gone) and time.monotonic() < deadline:
        came = arrived.wait(0.01)
        gone = world.provider_gone(hook_id)
    expect(
        came or gone, f"hook {hook_id} to answer late, or its process to be gone", "it never answered", rfc="§10.limits", about="testbed"
    )
    time.sleep(0.2)  # let whatever the implementation does with a late answer happen


@when(parsers.parse('the process crashes at "{point}" during a completion, before any recovery'))
def crash_without_recovery(world: World, point: str) -> None:
    world.orch.arm_crash(point)
    try:
        world.act("complete_todo")
    except SimulatedCrash as crash:
        world.crashes.append(crash.point)
        world.script.pop()
    else:
        expect(False, f"the process to crash at {point}", "the Turn completed", rfc="§9.crash-retry", about="testbed")


@when("a second dispatcher delivers every committed receipt again, with no recovery run")
def second_dispatcher_after_crash(world: World) -> None:
    """Another dispatcher (a fresh SUT over the same durable storage) is handed the committed
    receipts the crashed process left, instead of the crashed process's own recovery queue."""
    from fakes._orchestrator import TurnResult

    world.orch.reopen()
    for receipt in world.orch.receipts():
        outcome = world.dispatch_direct(dict(receipt), redeliver=True)
        world.turns.append(TurnResult("committed", "", receipt=receipt, dispatch=outcome))


@when("the sidecar journal is noted")
def note_journal(world: World) -> None:
    _state(world)["noted"] = copy.deepcopy(world.journal())


@when(parsers.parse('a receipt whose writeback step is "{status}" is offered for dispatch'))
def receipt_with_status(world: World, status: str) -> None:
    from fakes._packets import source

    world.dispatch_direct(source(1, step_status=status))


@when(
    parsers.re(
        r'a (?P<kind>todo_completed|replan_recorded) receipt whose writeback step is "(?P<status>[a-z_A-Z]+)" is offered for dispatch'
    )
)
def kind_receipt_with_status(world: World, kind: str, status: str) -> None:
    from fakes._packets import source

    world.dispatch_direct(source(1, event_kind=kind, step_status=status))


@when(parsers.re(r"a committed (?P<kind>todo_completed|replan_recorded) receipt that is not durably checkpointed is offered for dispatch"))
def kind_receipt_not_durable(world: World, kind: str) -> None:
    from fakes._packets import source

    world.dispatch_direct(source(1, event_kind=kind, durable_checkpoint=False))


@when(parsers.re(r'the same receipt, its writeback step still "(?P<status>[a-z_]+)", is offered again (?P<times>\d+) times?'))
def same_receipt_again(world: World, status: str, times: str) -> None:
    """A redelivery (a host retrying, a recovery queue) of a receipt refused the first time: each
    delivery is judged afresh, never by what an earlier one was."""
    from fakes._packets import source

    for _ in range(int(times)):
        world.dispatch_direct(source(1, step_status=status))


_DURABLE = {"missing": None, "the text true": "true", "the number 1": 1}


@when(parsers.re(r"a committed receipt whose durable checkpoint is (?P<value>missing|the text true|the number 1) is offered for dispatch"))
def receipt_with_durable(world: World, value: str) -> None:
    from fakes._packets import source

    receipt = source(1)
    if value == "missing":
        receipt.pop("durable_checkpoint")
    else:
        receipt["durable_checkpoint"] = _DURABLE[value]
    world.dispatch_direct(receipt)


@when("a committed receipt with an empty effect identity is offered for dispatch")
def empty_effect(world: World) -> None:
    from fakes._packets import source

    world.dispatch_direct(source(1, effect_id="", plan_effect_id=""))


# -- Then: records ----------------------------------------------------------------------------------


@then(parsers.parse('the sidecar record of hook "{hook_id}" is a failure with code "{code}" and nothing else'))
def failure_record_whole(world: World, hook_id: str, code: str) -> None:
    record = _only_record(world, hook_id)
    if record is None:
        return
    expect_equal(
        (record.get("status"), record.get("intents")),
        ("failed", []),
        f"status and intents of {hook_id}'s record",
        rfc=("§9.journal-contents", "§10.failure-codes"),
    )
    expect_code(
        record.get("failure_code"),
        code,
        f"failure code of {hook_id}'s record",
        clause="§10.failure-codes",
        rfc_codes=frozenset(RFC_FAILURE_CODES),
    )
    wanted = _expected_record(
        world,
        hook_id,
        status="failed",
        code=code,
        intents=[],
        digest=None,
        attempts=record.get("attempts", 1) if isinstance(record.get("attempts"), int) else 1,
    )
    expect_equal(record, wanted, f"{hook_id}'s whole sidecar record", profile="the sidecar receipt's field set")


@then("no late answer is on record or reported")
def no_late_answer(world: World) -> None:
    text = json.dumps({"journal": world.journal(), "outcomes": [o.to_json() for o in world.outcomes]})
    expect(
        "late_answer" not in text,
        "no trace of the late answer in the journal or the outcomes",
        "the late answer was recorded",
        rfc="§10.limits",
    )


@then(parsers.parse('the sidecar record of hook "{hook_id}" holds exactly what it proposed, with no failure'))
def proposed_record_whole(world: World, hook_id: str) -> None:
    record = _only_record(world, hook_id)
    if record is None:
        return
    proposed_intents = _proposed_intents(world, hook_id)
    expect_equal(record.get("status"), "proposed", f"status of {hook_id}'s record", rfc=("§1.journaled", "§8.result-shape"))
    expect_equal(record.get("failure_code"), None, f"failure code of {hook_id}'s record", rfc=("§1.journaled", "§8.result-shape"))
    _same_intents(record.get("intents") or [], proposed_intents, hook_id)
    answers = world.answers(hook_id)
    digest = "sha256:" + hashlib.sha256(canonical(answers[-1])).hexdigest() if answers else None
    wanted = _expected_record(world, hook_id, status="proposed", code=None, intents=proposed_intents, digest=digest, attempts=1)
    expect_equal(record, wanted, f"{hook_id}'s whole sidecar record", profile="the sidecar receipt's field set and result digest")


@then(parsers.parse('hook "{hook_id}" has exactly the intents it proposed on record'))
def intents_as_proposed(world: World, hook_id: str) -> None:
    answers = world.answers(hook_id)
    expect(bool(answers), f"hook {hook_id} called and answering", "it never answered", rfc="§12.M04")
    recorded = [i for r in _records(world, hook_id) if r.get("status") == "proposed" for i in r.get("intents", [])]
    _same_intents(recorded, _proposed_intents(world, hook_id), hook_id)


def _same_intents(recorded: list[Any], proposed: list[Any], hook_id: str) -> None:
    """The validated intents are journaled as proposed (§1); the RFC sets no order among them, so the
    order is pwh's reading."""
    key = lambda i: json.dumps(plain(i), sort_keys=True)  # noqa: E731
    expect_equal(sorted(map(key, recorded)), sorted(map(key, proposed)), f"intents on record for {hook_id}", rfc="§1.journaled")
    expect_equal(recorded, proposed, f"order of the intents on record for {hook_id}", profile="intents are recorded in the order proposed")


@then(parsers.re(r"before any recovery, the sidecar journal holds (?P<n>\d+) records?"))
def records_before_recovery(world: World, n: str) -> None:
    # §14's "atomic per-dispatch dedupe" and §9's identity per receipt *and hook* allow one commit
    # per dispatch identity or one for all the hooks of a receipt. Under both, no record is
    # half-written and no identity is recorded twice; how many landed before the crash is profile.
    journal = world.journal()
    ids = [r.get("dispatch_id") for r in journal]
    clause = ("§14.atomic-dedupe", "§9.replay-noop")
    expect(len(ids) == len(set(ids)), "no dispatch identity recorded twice before recovery", ids, rfc=clause)
    whole = [r for r in journal if r.get("dispatch_id") and r.get("hook_id") in world.hooks and r.get("status")]
    expect(
        len(whole) == len(journal),
        "every record before recovery whole, of an installed hook",
        f"{len(journal) - len(whole)} not",
        rfc=clause,
    )
    expect_equal(len(journal), int(n), "sidecar records before recovery", profile="all of a receipt's hook records land in one commit")


@then(parsers.parse('hook "{hook_id}" has one sidecar record per committed writeback, each under its own dispatch identity'))
def record_per_writeback(world: World, hook_id: str) -> None:
    receipts = [r["receipt_id"] for r in world.orch.receipts()]
    records = _records(world, hook_id)
    expect_equal(
        sorted(r.get("source_receipt_id") for r in records),
        sorted(receipts),
        f"committed receipts with a record for {hook_id}",
        rfc="§9.new-identity",
    )
    ids = {r.get("dispatch_id") for r in records}
    expect(
        len(ids) == len(records) == len(receipts),
        "a distinct dispatch identity per writeback",
        f"{len(ids)} identities for {len(records)} records",
        rfc="§9.new-identity",
    )


@then(parsers.parse('the intent on record for writeback number {n:d} of hook "{hook_id}" is under policy version "{version}"'))
def intent_policy(world: World, n: int, hook_id: str, version: str) -> None:
    receipt_id = world.orch.receipts()[n - 1]["receipt_id"]
    intents = [i for r in _records(world, hook_id) if r.get("source_receipt_id") == receipt_id for i in r.get("intents", [])]
    expect_equal(
        [i.get("policy_version") for i in intents], [version], f"policy versions on record for writeback {n}", rfc="§9.new-identity"
    )


@then(parsers.parse('the intents on record for hook "{hook_id}" have distinct identities'))
def distinct_intent_ids(world: World, hook_id: str) -> None:
    ids = [i.get("intent_id") for r in _records(world, hook_id) for i in r.get("intents", [])]
    expect(len(ids) == len(set(ids)), "a distinct intent identity per policy version", ids, rfc="§9.new-identity")


@then("every sidecar record noted earlier is still there, unchanged")
def noted_unchanged(world: World) -> None:
    noted = _state(world)["noted"] or []
    now = {r.get("dispatch_id"): r for r in world.journal()}
    for record in noted:
        expect_equal(
            now.get(record.get("dispatch_id")), record, f"the record of {record.get('hook_id')} noted earlier", rfc="§9.new-identity"
        )


# -- Then: inputs -----------------------------------------------------------------------------------


@then(parsers.parse('hook "{hook_id}" was given exactly the RFC input for that writeback'))
def whole_input(world: World, hook_id: str) -> None:
    probe = world.hooks[hook_id]
    expect(bool(probe.inputs), f"hook {hook_id} called", "never called", rfc="§12.M04")
    if not probe.inputs:
        return
    seen = plain(probe.inputs[-1])
    receipt = world.last_committed().receipt
    assert receipt is not None  # last_committed returns a committed Turn, which has its receipt
    reg = _registration_of(world, hook_id)
    outcome = world.hook_outcomes(hook_id)[-1]
    source = {key: receipt[key] for key in SOURCE_IDENTITY + SOURCE_OPAQUE}
    seen_source = seen.get("source") or {}
    identity = sorted(SOURCE_IDENTITY)
    expect_equal(
        {k: seen_source.get(k) for k in identity},
        {k: source[k] for k in identity},
        f"the source identities {hook_id} saw",
        rfc="§7.opaque-source",
    )
    expect_equal(
        seen_source,
        source,
        f"the whole source {hook_id} saw",
        profile="the reference passes the receipt id, revision and commit time through unchanged (§7 only asks for opaque ids)",
    )
    expect_equal(
        seen.get("boundary"), {flag: False for flag in BOUNDARY_FLAGS}, f"the boundary block {hook_id} saw", rfc="§7.immutable-input"
    )
    expect_equal(
        (seen.get("schema_version"), seen.get("dispatch_id"), seen.get("hook_id"), seen.get("capability_id")),
        ("loopx_post_writeback_hook_input_v0", outcome.dispatch_id, hook_id, reg["capability_id"]),
        f"the identities {hook_id}'s input carries",
        rfc="§7.immutable-input",
    )
    projection = seen.get("projection") or {}
    expect_equal(
        (projection.get("transition"), projection.get("fact_refs")),
        (receipt["event"]["transition"], receipt["event"]["fact_refs"]),
        f"the projection {hook_id} saw",
        rfc=("§7.immutable-input", "§7.bounded-projection"),
    )
    wanted = {
        "schema_version": "loopx_post_writeback_hook_input_v0",
        "dispatch_id": outcome.dispatch_id,
        "hook_id": hook_id,
        "capability_id": reg["capability_id"],
        "source": source,
        "projection": {"schema_version": "loopx_post_writeback_event_projection_v0", **receipt["event"]},
        "boundary": {flag: False for flag in BOUNDARY_FLAGS},
    }
    expect_equal(seen, wanted, f"the whole input {hook_id} saw", profile="the projection carries segment_ref beside the RFC's fields")


@then(parsers.parse('hook "{hook_id}" was given nothing of hook "{other}"\'s result'))
def nothing_of_other(world: World, hook_id: str, other: str) -> None:
    marks = [i.get("intent_id") for i in _proposed_intents(world, other)]
    marks += [o.dispatch_id for o in world.hook_outcomes(other) if o.dispatch_id]
    seen = json.dumps([plain(i) for i in world.hooks[hook_id].inputs])
    found = [m for m in marks if m and m in seen]
    expect(not found, f"no identity from {other}'s result in {hook_id}'s input", f"{len(found)} found", rfc="§6.no-hook-dependency")


# -- Then: outcomes and text ------------------------------------------------------------------------


@then(parsers.parse('the journal and the dispatch outcomes carry nothing of the error hook "{hook_id}" raised'))
def nothing_of_error(world: World, hook_id: str) -> None:
    name, message = _state(world)["errors"][hook_id]
    text = json.dumps({"journal": world.journal(), "outcomes": [o.to_json() for o in world.outcomes]})
    found = [
        label
        for label, needle in (
            ("its class name", name),
            ("its message", message),
            ("its credential", message.split()[-1]),
            ("a traceback", "Traceback"),
            ("a source line", 'File "'),
        )
        if needle in text
    ]
    expect(not found, "only a compact failure code", f"found {', '.join(found)}", rfc="§9.journal-contents")


@then("the dispatch is not admitted and nothing is recorded")
def not_admitted_nothing_recorded(world: World) -> None:
    """What the RFC requires of an inadmissible source is no dispatch: zero provider calls and no
    intent, in the outcome or on record (§5.1, §12 M03). Refusing it as a whole, with no per-hook
    outcome and an empty journal, is pwh's reading: refusing it hook by hook (each refused before
    any call, nothing proposed) satisfies the same clauses."""
    outcome = _nothing_dispatched(world)
    clause = world.notes.inadmissible_clause
    judged: dict[str, Any] = {"rfc": clause} if clause else {"profile": "pwh refuses this source; the RFC does not say it must"}
    recorded = [i for r in world.journal() for i in r.get("intents", []) or []]
    expect(not recorded, "no intent on record for an inadmissible source", f"{len(recorded)} intent(s) recorded", **judged)
    expect(
        outcome is not None and not outcome.admitted and not outcome.hooks,
        "the source refused as a whole, no per-hook outcome",
        f"admitted={getattr(outcome, 'admitted', None)}, hooks={len(getattr(outcome, 'hooks', ()))}",
        profile="an inadmissible source is refused per dispatch, not per hook",
    )
    expect_equal(
        world.journal(),
        [],
        "sidecar records",
        profile="an inadmissible source leaves no sidecar record at all (the RFC requires no intent)",
    )


@then(parsers.re(r"the hook whose id has a (?P<n>\d+)-character segment (?P<verdict>is installed|is rejected at the field it breaks)"))
def long_segment_verdict(world: World, n: str, verdict: str) -> None:
    hook_id = world.notes.long_hook_id
    assert hook_id is not None, "a long-segment hook is installed by an earlier step"
    rejections = world.install_rejections.get(hook_id, [])
    if verdict == "is installed":
        expect(not rejections, f"a {n}-character segment accepted", [r.path for r in rejections], profile=BOUND_READING)
    else:
        expect(bool(rejections), f"a {n}-character segment rejected", "installed", profile=BOUND_READING)
        if rejections:
            never_called_once_rejected(world, hook_id)
        expect(
            any(r.path == "$.hook_id" for r in rejections),
            "a rejection naming $.hook_id",
            [r.path for r in rejections],
            profile="the JSON path a rejection names",
        )


@then(parsers.parse('hook "{hook_id}" is installed at that bound and its intents are on record as proposed'))
def installed_at_bound(world: World, hook_id: str) -> None:
    rejections = world.install_rejections.get(hook_id, [])
    installed = expect(not rejections, f"{hook_id} installed at pwh's bound", [r.path for r in rejections], profile=BOUND_READING)
    if installed:
        intents_as_proposed(world, hook_id)


@then(parsers.parse('if the registration of hook "{hook_id}" was rejected, it was never called'))
def rejected_never_called(world: World, hook_id: str) -> None:
    if world.install_rejections.get(hook_id):
        calls = world.hooks[hook_id].calls if hook_id in world.hooks else 0
        expect(
            calls == 0,
            f"a rejected {hook_id} never called",
            f"{calls} call(s)",
            rfc=("§6.validated-before-call", "§12.M02"),
        )


# -- a profile lowered after installation; a result's key order -------------------------------------


@when(parsers.parse("the profile's timeout ceiling is then lowered to {n:d} ms"))
def lower_timeout_ceiling(world: World, n: int) -> None:
    world.set_profile(budget_ceilings={**world.profile.budget_ceilings, "timeout_ms": n})


def _reordered(value: Any) -> Any:
    """The same JSON value with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


@given(parsers.parse('hook "{hook_id}" proposes the same intent on every call, its keys in a different order each time'))
def reordering_hook(world: World, hook_id: str) -> None:
    def body(i: Mapping[str, Any], c: CallContext) -> Any:
        result = proposed(intent_for(i))
        return _reordered(result) if c.call_number % 2 == 0 else result

    _install(world, hook_id, body)
