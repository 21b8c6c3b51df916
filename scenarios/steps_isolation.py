"""Steps for hooks that must not reach each other through the dispatch's shared state: the
per-dispatch slots and the ids every sidecar record carries (features/m08_slots.feature)."""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_bdd import given, parsers, then

from fakes._packets import registration
from fakes._world import World
from pwh import CORE_CEILINGS
from pwh._harness.expect import expect

from .steps_checks import registration_rejected

# §9 JNL-6 bars host names from the journal, and every record carries its hook's id; but the
# registration grammar admits dotted ids, and no clause says when a dotted token is a host name.
# That a token ending in a public suffix is one is pwh's reading, so these checks are profile.
HOST_ID_READING = "a dotted hook id ending in a public suffix is a host name, which JNL-6 keeps out of the journal (pwh's reading)"


def _host_named_id() -> str:
    """A hook id valid by the registration grammar that is also a host name: made at run time,
    so no public file (features, packet) spells a host out."""
    return ".".join(("m", "ci", "acme", "com"))


@given("a hook whose id names a host is registered")
def host_named_hook(world: World) -> None:
    world.ensure_generic_kind()
    hook_id = world.private_values["host_hook_id"] = _host_named_id()
    world.notes.expected_rejection_path = "$.hook_id"
    world.notes.expected_rejection_clause = None  # HOST_ID_READING: profile, not a clause
    world.install_registration(hook_id, registration(hook_id))


@then("the registration of the host-named hook is rejected at its hook id")
def host_named_rejected(world: World) -> None:
    registration_rejected(world, world.private_values["host_hook_id"])


@then("the sidecar journal holds nothing of the host-named hook")
def nothing_of_hook(world: World) -> None:
    hook_id = world.private_values["host_hook_id"]
    records = world.journal()
    named = [r for r in records if r.get("hook_id") == hook_id]
    expect(not named, "no sidecar record of the host-named hook", f"{len(named)} record(s)", profile=HOST_ID_READING)
    text = json.dumps(records)
    expect(hook_id not in text, "the host-named id nowhere in the journal", "it is spelled out in a record", profile=HOST_ID_READING)


# A payload schema whose reference cannot be resolved here: each kind of unresolvable target.
UNRESOLVABLE_REFS = {
    "a local pointer to nothing": "#/$defs/missing",
    "a remote address": "https://schemas.invalid/note.json",
    "a relative file": "note.json",
}
_REF_RE = "|".join(map(re.escape, UNRESOLVABLE_REFS))


@given(parsers.re(rf'the intent kind "(?P<kind>[a-z_.]+)" is registered with a payload schema whose \$ref is (?P<target>{_REF_RE})'))
def kind_with_unresolvable_ref(world: World, kind: str, target: str) -> None:
    schema = {"type": "object", "properties": {"note": {"$ref": UNRESOLVABLE_REFS[target]}}}
    world.notes.kind_rejections = world.sut.register_intent_kind(kind, schema) or []


# Profile values as a configuration file might spell them: each of the wrong type.
MALFORMED_PROFILES: dict[str, dict[str, Any]] = {
    'a phase switch that is the string "false"': {"phase_enabled": "false"},
    'a phase switch that is the string "true"': {"phase_enabled": "true"},
    "a phase switch that is the number 1": {"phase_enabled": 1},
    "an allowlist that is one string": {"phase_enabled": True, "allowlist": "a.reporter"},
    "a hook ceiling that is a string": {"phase_enabled": True, "max_hooks_per_dispatch": "4"},
    "a retry cap of zero": {"phase_enabled": True, "max_attempts": 0},
    "a timeout ceiling that is a string": {"phase_enabled": True, "budget_ceilings": {**CORE_CEILINGS, "timeout_ms": "500"}},
}
_PROFILE_RE = "|".join(map(re.escape, MALFORMED_PROFILES))


@given(parsers.re(rf"the execution profile has (?P<flaw>{_PROFILE_RE})"))
def malformed_profile(world: World, flaw: str) -> None:
    world.set_profile(**MALFORMED_PROFILES[flaw])
