"""What a dispatch outcome reports about how each hook's
receipt came about (attempts, replayed, recorded), what a journal-error outcome still names, what a
conflict reports, and that every rejection carries a stable code and a non-empty, public-safe
reason. Each is pwh's reading of the seam (profile) unless a clause requires it; none judges the
wording of a reason."""

from __future__ import annotations

import re
from typing import Any

from pytest_bdd import given, parsers, then

from fakes._packets import registration
from fakes._world import World
from pwh import BoundaryScanner
from pwh._harness.expect import expect

# Parameterised steps use parsers.parse; parsers.re is kept only where a parameter is a closed
# list of phrases (which `pwh scenarios steps` lists) or a part is optional ("times?").
HOOK = r'"(?P<hook_id>[a-z0-9_.]+)"'
_CODE = re.compile(r"^[a-z][a-z0-9_]*$")


def _last_hook_outcome(world: World, hook_id: str) -> Any:
    found = world.hook_outcomes(hook_id)
    return found[-1] if found else None


@then(
    parsers.re(
        rf"the outcome of hook {HOOK} reports (?P<n>\d+) attempts?, (?P<replay>a replay|not a replay), (?P<rec>recorded|not recorded)"
    )
)
def outcome_flags(world: World, hook_id: str, n: str, replay: str, rec: str) -> None:
    outcome = _last_hook_outcome(world, hook_id)
    wanted = (int(n), replay == "a replay", rec == "recorded")
    seen = (getattr(outcome, "attempts", None), getattr(outcome, "replayed", None), getattr(outcome, "recorded", None))
    ok = (
        outcome is not None
        and type(seen[0]) is int
        and seen[0] == wanted[0]
        and type(seen[1]) is bool
        and seen[1] == wanted[1]
        and type(seen[2]) is bool
        and seen[2] == wanted[2]
    )
    expect(
        ok,
        f"hook {hook_id}: attempts {wanted[0]}, replayed {wanted[1]}, recorded {wanted[2]}",
        f"attempts {seen[0]!r}, replayed {seen[1]!r}, recorded {seen[2]!r}" if outcome is not None else "no outcome for the hook",
        profile="a hook outcome says how this delivery came by its receipt: the attempts on record and, as booleans,"
        " whether it was replayed and whether it is recorded (§9 requires only the stored receipt on a replay)",
    )


@then("the dispatch that reported the journal error still names its receipt and event kind")
def journal_error_names_receipt(world: World) -> None:
    outcome = world.outcomes[-1] if world.outcomes else None
    receipt = world.last_committed().receipt or {}
    wanted = (receipt.get("receipt_id"), receipt.get("event_kind"))
    seen = (getattr(outcome, "receipt_id", None), getattr(outcome, "event_kind", None), getattr(outcome, "journal_error", None))
    expect(
        outcome is not None and seen[2] is not None and seen[:2] == wanted,
        f"a journal error reported for receipt {wanted[0]!r} ({wanted[1]!r})",
        f"receipt {seen[0]!r}, event kind {seen[1]!r}, journal error {seen[2]!r}",
        profile="an outcome that reports a journal error still names the receipt and event kind it was dispatching"
        " (§10 only requires that the sidecar failure never becomes a primary failure)",
    )


@then(parsers.parse('the outcome of hook "{hook_id}" carries a rejection with code "{code}"'))
def hook_rejection_code(world: World, hook_id: str, code: str) -> None:
    outcome = _last_hook_outcome(world, hook_id)
    rejection = getattr(outcome, "rejection", None)
    seen = getattr(rejection, "code", None)
    expect(
        seen == code,
        f"hook {hook_id}'s outcome carries a rejection coded {code}",
        f"rejection {rejection!r}" if rejection is None else f"rejection coded {seen!r}",
        profile="a failed hook's outcome carries the rejection that says why, with its own code (the RFC names the failure, not this shape)",
    )


def _rejections(world: World) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for hook_id, rejections in world.install_rejections.items():
        found.extend((f"the installation of {hook_id}", r) for r in rejections or ())
    for k, outcome in enumerate(world.outcomes):
        if getattr(outcome, "rejection", None) is not None:
            found.append((f"dispatch {k + 1}", outcome.rejection))
        for h in getattr(outcome, "hooks", ()) or ():
            if getattr(h, "rejection", None) is not None:
                found.append((f"dispatch {k + 1}, hook {h.hook_id}", h.rejection))
    return found


@then("every rejection reported so far has a stable code and a non-empty, public-safe reason")
def every_rejection_explained(world: World) -> None:
    found = _rejections(world)
    expect(
        bool(found),
        "at least one rejection reported",
        "none",
        profile="the SUT reports the rejection it made as an object with a code, a path and a reason",
    )
    scanner = BoundaryScanner(private_names=[world.private_values["name"]] if "name" in world.private_values else [])
    bad: list[str] = []
    for where, r in found:
        code, reason = getattr(r, "code", None), getattr(r, "reason", None)
        if not (isinstance(code, str) and _CODE.match(code)):
            bad.append(f"{where}: code {code!r}")
        elif not (isinstance(reason, str) and reason.strip()):
            bad.append(f"{where}: reason {reason!r}")
        elif scanner.scan_value(reason):
            bad.append(f"{where}: a reason that carries a private value")
    expect(
        not bad,
        "every rejection with a stable code and a non-empty reason that carries no private value",
        "; ".join(bad[:3]),
        profile="every rejection gives a stable code and says why in a non-empty, public-safe reason"
        " (the RFC requires the rejection, not its wording; pwh never judges the wording)",
    )


@given(parsers.parse('hook "{hook_id}" is registered with an extra field named by the private sample "{name}"'))
def registered_with_private_field(world: World, hook_id: str, name: str) -> None:
    from fakes._private_samples import PRIVATE_SAMPLES

    world.ensure_generic_kind()
    reg = dict(registration(hook_id))
    reg[PRIVATE_SAMPLES[name][0]] = 1
    world.install_registration(hook_id, reg)


@then(parsers.parse('the installation of hook "{hook_id}" is rejected with a path that spells out no private key'))
def install_rejection_path_public(world: World, hook_id: str) -> None:
    from fakes._private_samples import PRIVATE_SAMPLES

    rejections = list(world.install_rejections.get(hook_id) or ())
    expect(
        bool(rejections),
        f"the registration of {hook_id} rejected",
        "it was installed",
        rfc="§6.validated-before-call",
    )
    samples = [text for text, _kind in PRIVATE_SAMPLES.values()]
    scanner = BoundaryScanner()
    spelled = [r.path for r in rejections if not isinstance(r.path, str) or scanner.scan_value(r.path) or any(s in r.path for s in samples)]
    expect(
        not spelled,
        "every rejection path names where, with the private key withheld",
        f"paths {spelled[:2]}",
        profile="a rejection's path never spells out a private key: pwh shows such a key as [?] (§7 forbids carrying it on)",
    )


OPEN_KIND = "open.note"
OPEN_SCHEMA = {"type": "object", "additionalProperties": {"type": "string"}}


@given(
    parsers.parse(
        'hook "{hook_id}" is installed for an intent kind whose payload takes any key, and proposes one keyed by the private sample "{name}"'
    )
)
def open_kind_private_key(world: World, hook_id: str, name: str) -> None:
    """A payload schema that allows any key (a kind a host may register): the contract accepts the
    key, so only the public-boundary scan of the result can refuse it, and the path it names must
    withhold the key."""
    from fakes._packets import intent_for, proposed
    from fakes._private_samples import PRIVATE_SAMPLES

    key = PRIVATE_SAMPLES[name][0]
    world.sut.register_intent_kind(OPEN_KIND, OPEN_SCHEMA)
    rejections = world.install_body(
        hook_id,
        "proposes an intent of an open kind keyed by a private value",
        lambda i, _c: proposed(intent_for(i, {key: "x"}, kind=OPEN_KIND)),
        registration(hook_id, intent_kinds=[OPEN_KIND]),
    )
    expect(
        not rejections,
        f"hook {hook_id} to install",
        f"rejected: {rejections[:1]}",
        rfc=("§4.composition-root", "§6.validated-before-call"),
    )


# A fine-grained GitHub token (github_pat_...): it holds no "gh", so each lane of the scanner must
# look for it by name.
FINE_GRAINED_TOKEN = "github_pat_" + "A1b2" * 6
FINE_GRAINED_LANES = {
    "in a sentence": f"use {FINE_GRAINED_TOKEN} now",
    "in a dotted id": f"{FINE_GRAINED_TOKEN}.x",
    "alone": FINE_GRAINED_TOKEN,
}


@given(
    parsers.re(
        rf"hook {HOOK} is installed and proposes an intent whose detail is a fine-grained GitHub token (?P<lane>in a sentence|in a dotted id|alone)"
    )
)
def hook_with_fine_grained_token(world: World, hook_id: str, lane: str) -> None:
    from .steps_samples import _install_with_detail

    _install_with_detail(world, hook_id, FINE_GRAINED_LANES[lane])


OPEN_ANY_KIND = "open.any"
OPEN_ANY_SCHEMA = {"type": "object"}
_TOKEN = "ghp_" + "c3" * 18  # built here, never spelled out in a public file

# Payload shapes under a payload schema that takes any JSON (a kind a host may register), so only
# the public-boundary scan can refuse them: each puts a value where one lane of the scan's walk
# must find it (or must let it pass). Built at run time so no feature file spells a value out.
PAYLOAD_SHAPES: dict[str, dict[str, Any]] = {
    "a word under a secret-named key": {"api_key": "plainword"},
    "a number under a secret-named key": {"api_key": 271828},
    "a word after a null in a list under a secret-named key": {"api_key": [None, "plainword"]},
    "a word in an object under a secret-named key": {"api_key": {"inner": "plainword"}},
    "a value under an environment variable's name": {"HOME": "x"},
    "a GitHub token under a key that is not an identifier": {"note-ref": _TOKEN},
    "a GitHub token in a list in a list": {"notes": [["clean", _TOKEN]]},
    "a placeholder in a list under a secret-named key": {"api_key": ["<redacted>"]},
    "nulls and booleans under a secret-named key": {"api_key": [None, True, {"inner": False}]},
    "a dotted field name as a key": {"user.name": "x"},
}


def _nested(levels: int) -> dict[str, Any]:
    """A word inside ``levels`` lists under the payload: the payload sits at depth 3 of the result
    (result, intents, intent, payload), so the word sits at depth 4 + levels."""
    value: Any = "word"
    for _ in range(levels):
        value = [value]
    return {"deep": value}


# The canonical form's nesting limit (pwh/_core/canonical.py MAX_DEPTH, 64: profile) met exactly and passed by one.
PAYLOAD_SHAPES["a word nested 60 lists deep, at the nesting limit"] = _nested(60)
PAYLOAD_SHAPES["a word nested 61 lists deep, one level past the nesting limit"] = _nested(61)
_SHAPE_RE = "|".join(map(re.escape, PAYLOAD_SHAPES))


@given(parsers.re(rf"hook {HOOK} is installed for an intent kind whose payload takes any JSON, and proposes (?P<shape>{_SHAPE_RE})"))
def open_kind_payload_shape(world: World, hook_id: str, shape: str) -> None:
    from fakes._packets import intent_for, proposed

    payload = PAYLOAD_SHAPES[shape]
    world.sut.register_intent_kind(OPEN_ANY_KIND, OPEN_ANY_SCHEMA)
    rejections = world.install_body(
        hook_id,
        f"proposes an intent of an open kind holding {shape}",
        lambda i, _c: proposed(intent_for(i, payload, kind=OPEN_ANY_KIND)),
        registration(hook_id, intent_kinds=[OPEN_ANY_KIND]),
    )
    expect(
        not rejections,
        f"hook {hook_id} to install",
        f"rejected: {rejections[:1]}",
        rfc=("§4.composition-root", "§6.validated-before-call"),
    )
