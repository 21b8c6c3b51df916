"""What the SUT does with a named sample text (fakes/_private_samples.py): a hook that proposes an
intent carrying it, or a committed receipt whose Todo identity is it. The samples are named, so
the feature files stay readable and need no escaping of pipes, quotes or newlines."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pytest_bdd import given, parsers, then, when

from fakes._packets import intent_for, proposed
from fakes._private_samples import PRIVATE_SAMPLES
from fakes._world import World
from pwh._harness.expect import expect

# Texts the reference reads as public (pwh's reading where the RFC is silent: §7 forbids private
# values, it does not list which words are harmless).
CLEAN_SAMPLES: dict[str, str] = {
    "a JSON Schema address": "https://json-schema.org/draft/2020-12/schema",
    "a documentation domain": "see docs.example.org",
    "a version number": "2.1.1",
    "five dotted numbers": "1.2.3.4.5",
    "a dotted code id": "a_capability.runtime_trigger",
    "a file name": "README.md",
    "a masked password": "password=***",
    "a redacted token field": "token: redacted",
    "a secret in prose": "the secret: any",
    "a Python except clause": "except ValueError:  # fine",
    "a short code path": "a::b",
    "a clock time": "12:30:45",
    "a JSON path": "$.a/b",
    "and-or": "and/or",
    "a timestamp": "2026-08-26T00:00:00Z",
    "a sentence naming a user": "the User guide",
    "a sentence naming a user, with a colon": "Read the User guide: it helps",
    "a file name after a word ending in w": "see the new.notes file",
    "a call on a known domain beside a file name": "call x.com() on notes.txt",
    "a file named in prose": 'the File "notes" is empty',
    "an exception class named in prose": "a ValueError:bad",
    "a log level in prose": "the ERROR count is zero",
    "a dollar amount": "costs $ 5",
    "a lowercase environment-like word": "my_var=1",
    "a sentence in French": "rapport d'été prêt",
}


def _install_with_detail(world: World, hook_id: str, detail: str) -> None:
    description = "proposes an intent whose detail is a sample"

    def body(i: Mapping[str, Any], _c: Any) -> Any:
        return proposed(intent_for(i, {"note_ref": "n", "detail": detail}))

    rejections = world.install_body(hook_id, description, body)
    expect(
        not rejections,
        f"hook {hook_id} to install",
        f"rejected: {rejections[:1]}",
        rfc=("§4.composition-root", "§6.validated-before-call"),
    )


@given(parsers.parse('hook "{hook_id}" is installed and proposes an intent whose detail is the private sample "{name}"'))
def hook_with_private_detail(world: World, hook_id: str, name: str) -> None:
    _install_with_detail(world, hook_id, PRIVATE_SAMPLES[name][0])


_POSITIONS = {"first": 0, "middle": 1, "last": 2}


@given(
    parsers.re(
        r'hook "(?P<hook_id>[a-z0-9_.]+)" is installed and proposes three intents, the (?P<position>first|middle|last) '
        r'of which has the private sample "(?P<name>[^"]+)" as its detail'
    )
)
def hook_with_private_detail_at(world: World, hook_id: str, position: str, name: str) -> None:
    """A rule of the result check kept for one intent of a result only is met here at every position."""
    at = _POSITIONS[position]
    detail = PRIVATE_SAMPLES[name][0]

    def body(i: Mapping[str, Any], _c: Any) -> Any:
        notes = [{"note_ref": f"n{k}", "detail": detail if k == at else f"public note {k}"} for k in range(3)]
        return proposed(*(intent_for(i, note) for note in notes))

    from fakes._packets import registration

    reg = registration(hook_id, budget={"max_intents_per_dispatch": 3})
    rejections = world.install_body(hook_id, f"proposes three intents, the {position} carrying a sample", body, reg)
    expect(
        not rejections, f"hook {hook_id} to install", f"rejected: {rejections[:1]}", rfc=("§4.composition-root", "§6.validated-before-call")
    )


@given(parsers.parse('hook "{hook_id}" is installed and proposes an intent whose detail is the clean sample "{name}"'))
def hook_with_clean_detail(world: World, hook_id: str, name: str) -> None:
    _install_with_detail(world, hook_id, CLEAN_SAMPLES[name])


@when(parsers.parse('a committed receipt whose Todo identity is the private sample "{name}" is dispatched'))
def todo_identity_sample(world: World, name: str) -> None:
    from fakes._packets import source

    world.dispatch_direct(source(1, todo_id=PRIVATE_SAMPLES[name][0]))


def _rejection_reason(world: World, hook_id: str) -> str:
    found = world.hook_outcomes(hook_id)
    rejection = getattr(found[-1], "rejection", None) if found else None
    return str(getattr(rejection, "reason", "") or "")


@then(parsers.parse('the rejection of hook "{hook_id}" names the kind of the private sample "{name}"'))
def rejection_names_kind(world: World, hook_id: str, name: str) -> None:
    kind = PRIVATE_SAMPLES[name][1]
    reason = _rejection_reason(world, hook_id)
    expect(
        reason.endswith(f"carry a {kind}") or reason.endswith(f"carries a {kind}"),
        f"the rejection says what it found: a {kind}",
        f"reason {reason!r}",
        profile="the reference names the first kind of private value it found (§12 M13 only requires the rejection)",
    )


@then(parsers.parse('the intent of hook "{hook_id}" is recorded as proposed, its clean sample kept'))
def clean_sample_recorded(world: World, hook_id: str) -> None:
    found = world.hook_outcomes(hook_id)
    outcome = found[-1] if found else None
    status = getattr(outcome, "status", None)
    intents = list(getattr(outcome, "intents", ()) or ())
    expect(
        status == "proposed" and len(intents) == 1,
        f"hook {hook_id} proposed one intent, recorded",
        f"status {status}, failure code {getattr(outcome, 'failure_code', None)}, {len(intents)} intent(s)",
        profile="pwh reads these texts as public: none is a private value of §7",
    )


@given(parsers.parse('hook "{hook_id}" is installed and proposes an intent whose payload has the private sample "{name}" as a key'))
def hook_with_private_key(world: World, hook_id: str, name: str) -> None:
    key = PRIVATE_SAMPLES[name][0]
    description = "proposes an intent whose payload has a private key"

    def body(i: Mapping[str, Any], _c: Any) -> Any:
        return proposed(intent_for(i, {"note_ref": "n", key: "x"}))

    rejections = world.install_body(hook_id, description, body)
    expect(
        not rejections,
        f"hook {hook_id} to install",
        f"rejected: {rejections[:1]}",
        rfc=("§4.composition-root", "§6.validated-before-call"),
    )


@then(parsers.parse('the rejection of hook "{hook_id}" points at "{path}"'))
def rejection_points_at(world: World, hook_id: str, path: str) -> None:
    found = world.hook_outcomes(hook_id)
    rejection = getattr(found[-1], "rejection", None) if found else None
    seen = getattr(rejection, "path", None)
    expect(
        seen == path,
        f"the rejection of hook {hook_id} points at {path}",
        f"it points at {seen!r}",
        profile="the JSON path a rejection names (docs/rules.md: profile); a private key is withheld from it (§12 M13)",
    )


@given(parsers.parse('hook "{hook_id}" is installed and proposes one intent behind read-only views'))
def hook_with_read_only_views(world: World, hook_id: str) -> None:
    """A valid result whose objects are read-only views of plain dicts (what the dispatcher hands a
    provider as its input): the same JSON to any reader, but not the exact types the one-pass
    check takes, so the general path (contract, digest, boundary) decides it."""
    description = "proposes one intent behind read-only views"

    def body(i: Mapping[str, Any], _c: Any) -> Any:
        result = proposed(intent_for(i))
        intent = result["intents"][0]
        intent["payload"] = MappingProxyType(intent["payload"])
        intent["budget"] = MappingProxyType(intent["budget"])
        result["intents"] = (MappingProxyType(intent),)
        return MappingProxyType(result)

    rejections = world.install_body(hook_id, description, body)
    expect(
        not rejections,
        f"hook {hook_id} to install",
        f"rejected: {rejections[:1]}",
        rfc=("§4.composition-root", "§6.validated-before-call"),
    )


def _reference_digest(prefix: str, fields: Mapping[str, Any]) -> str:
    """The reference profile's identity recipe (docs/rules.md, P-identity-bytes), computed here on its own: canonical
    JSON (UTF-8, keys sorted, no insignificant whitespace), SHA-256, the prefix."""
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return prefix + hashlib.sha256(text.encode("utf-8")).hexdigest()


@then(parsers.parse('the dispatch identity of hook "{hook_id}" follows the reference profile\'s recipe'))
def dispatch_identity_recipe(world: World, hook_id: str) -> None:
    records = world.records_for(hook_id)
    expect(bool(records), f"a sidecar record for hook {hook_id}", "none", rfc=("§9.replay-noop", "§12.M04"))
    for r in records:
        wanted = _reference_digest(
            "pwh_",
            {
                "receipt_id": r.get("source_receipt_id"),
                "hook_id": r.get("hook_id"),
                "registration_schema_version": r.get("registration_schema_version"),
                "event_kind": r.get("event_kind"),
            },
        )
        expect(
            r.get("dispatch_id") == wanted,
            f"dispatch_id {wanted}",
            f"dispatch_id {r.get('dispatch_id')}",
            profile="the digest bytes of the identity recipe are the reference profile (§9 requires only stability)",
        )


@then(parsers.parse('the intent identity recorded for hook "{hook_id}" follows the reference profile\'s recipe'))
def intent_identity_recipe(world: World, hook_id: str) -> None:
    intents = [(r, i) for r in world.records_for(hook_id) for i in r.get("intents", [])]
    expect(bool(intents), f"a recorded intent for hook {hook_id}", "none", rfc=("§1.journaled", "§12.M04"))
    for r, i in intents:
        wanted = _reference_digest(
            "pwi_",
            {
                "dispatch_id": r.get("dispatch_id"),
                "intent_kind": i.get("intent_kind"),
                "policy_version": i.get("policy_version"),
                "payload": i.get("payload"),
            },
        )
        expect(
            i.get("intent_id") == wanted,
            f"intent_id {wanted}",
            f"intent_id {i.get('intent_id')}",
            profile="the digest bytes of the identity recipe are the reference profile (§9 requires only stability)",
        )


@when("a committed receipt whose effect differs from the active plan's effect is offered for dispatch")
def effect_differs(world: World) -> None:
    from fakes._packets import source

    world.dispatch_direct(source(1, plan_effect_id="effect_of_another_plan"))


@then("the refused dispatch still names receipt number 1 and its event kind")
def refused_names_receipt(world: World) -> None:
    from fakes._packets import source

    offered = source(1)
    outcome = world.outcomes[-1] if world.outcomes else None
    seen = (getattr(outcome, "receipt_id", None), getattr(outcome, "event_kind", None), getattr(outcome, "admitted", None))
    wanted = (offered["receipt_id"], offered["event_kind"], False)
    expect(
        seen == wanted,
        f"the refusal names receipt {wanted[0]} ({wanted[1]}), admitted false",
        f"receipt {seen[0]!r}, event kind {seen[1]!r}, admitted {seen[2]!r}",
        profile="a refused dispatch's outcome names the receipt and event kind it refused (§5.1 only requires the refusal)",
    )


# Ids shaped like host names (dotted, ending in a public suffix) that the receipt's grammar for
# fact refs admits: in a field typed as an opaque id the scan judges them as ids (pwh._core.boundary
# OPAQUE_FIELDS), so a receipt citing them is dispatched like any other.
HOST_SHAPED_REFS = ["billing.report", "notes.app"]


@when("a committed receipt whose fact refs are ids shaped like host names is dispatched")
def host_shaped_fact_refs(world: World) -> None:
    from fakes._packets import source

    receipt = source(1)
    receipt["event"] = {**receipt["event"], "fact_refs": list(HOST_SHAPED_REFS)}
    world.dispatch_direct(receipt)
