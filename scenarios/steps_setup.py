"""Given: the profile, the installed hooks and capabilities, the registrations."""

from __future__ import annotations

import re

from pytest_bdd import given, parsers, when

from fakes._behaviours import BEHAVIOURS
from fakes._packets import BAD_REGISTRATIONS, registration
from fakes._world import World
from pwh._harness.expect import expect, require

_BEHAVIOUR_RE = "|".join(re.escape(p) for p in sorted(BEHAVIOURS, key=len, reverse=True))


@given("the post-writeback phase is enabled")
def phase_enabled(world: World) -> None:
    world.set_profile(phase_enabled=True)


@given("the post-writeback phase is disabled")
def phase_disabled(world: World) -> None:
    world.set_profile(phase_enabled=False)


@given(parsers.re(rf'hook "(?P<hook_id>[a-z0-9_.]+)" is installed and (?P<behaviour>{_BEHAVIOUR_RE})'))
def hook_installed(world: World, hook_id: str, behaviour: str) -> None:
    rejections = world.install_hook(hook_id, behaviour)
    expect(
        not rejections,
        f"hook {hook_id} to install",
        f"rejected: {rejections[:1]}",
        rfc=("§4.composition-root", "§6.validated-before-call"),
    )


@given(parsers.re(r'hook "(?P<hook_id>[a-z0-9_.]+)" is installed for (?P<kind>todo_completed|replan_recorded) writebacks only'))
def hook_for_kind(world: World, hook_id: str, kind: str) -> None:
    rejections = world.install_hook(hook_id, "proposes one intent", event_kinds=[kind])
    expect(
        not rejections,
        f"hook {hook_id} to install",
        f"rejected: {rejections[:1]}",
        rfc=("§4.composition-root", "§6.validated-before-call"),
    )


@given(parsers.parse('hook "{hook_id}" is installed and reads only its settlement identity'))
def hook_identity_only(world: World, hook_id: str) -> None:
    rejections = world.install_hook(hook_id, "proposes one intent", requested_read_scope=["settlement_identity"])
    expect(
        not rejections,
        f"hook {hook_id} to install",
        f"rejected: {rejections[:1]}",
        rfc=("§4.composition-root", "§6.validated-before-call"),
    )


@given(
    parsers.re(
        r'hook "(?P<hook_id>[a-z0-9_.]+)" may be called at most (?P<n>\d+) times? per dispatch and (?P<behaviour>raises an error|fails on its first call only)'
    )
)
def hook_with_invocations(world: World, hook_id: str, n: str, behaviour: str) -> None:
    rejections = world.install_hook(hook_id, behaviour, budget={"max_invocations_per_dispatch": int(n)})
    expect(
        not rejections,
        f"hook {hook_id} to install",
        f"rejected: {rejections[:1]}",
        rfc=("§4.composition-root", "§6.validated-before-call"),
    )


@given("the periodic-report capability is installed")
def periodic_report_installed(world: World) -> None:
    world.install_periodic_report()


@given("no capability is installed")
def nothing_installed(world: World) -> None:
    require(not world.hooks, "no hook installed", sorted(world.hooks))


@given(parsers.parse("a segment closes after {n:d} completed Todos"))
def segment_size(world: World, n: int) -> None:
    world.segment_size = n


@given(parsers.parse('only hook "{hook_id}" is on the profile allowlist'))
def allowlist(world: World, hook_id: str) -> None:
    world.set_profile(allowlist={hook_id})


@given("the profile allowlist is empty")
def empty_allowlist(world: World) -> None:
    world.set_profile(allowlist=frozenset())


@given(parsers.parse("the profile allows at most {n:d} intents per dispatch"))
def intents_ceiling(world: World, n: int) -> None:
    world.set_profile(max_intents_per_dispatch=n)


@given(parsers.parse("the profile allows at most {n:d} hooks per dispatch"))
def hooks_ceiling(world: World, n: int) -> None:
    world.set_profile(max_hooks_per_dispatch=n)


@given(parsers.parse("the profile allows at most {n:d} attempts per dispatch"))
def attempts_ceiling(world: World, n: int) -> None:
    world.set_profile(max_attempts=n)


@given(parsers.parse("the profile caps hook timeouts at {n:d} ms"))
def timeout_ceiling(world: World, n: int) -> None:
    world.set_profile(budget_ceilings={**world.profile.budget_ceilings, "timeout_ms": n})


_BAD_RE = "|".join(re.escape(k) for k in sorted(BAD_REGISTRATIONS, key=len, reverse=True))


@given(parsers.re(rf'hook "(?P<hook_id>[a-z0-9_.]+)" is registered with (?P<flaw>{_BAD_RE})'))
def bad_registration(world: World, hook_id: str, flaw: str) -> None:
    world.ensure_generic_kind()
    change, path, clause = BAD_REGISTRATIONS[flaw]
    change = dict(change)
    budget = change.pop("budget", None)
    reg = registration(hook_id, **change)
    if budget:
        reg["budget"] = {**reg["budget"], **budget}
    world.notes.expected_rejection_path = path
    world.notes.expected_rejection_clause = clause
    world.install_registration(hook_id, reg)


@given(parsers.parse('hook "{hook_id}" is registered a second time'))
def duplicate_registration(world: World, hook_id: str) -> None:
    world.notes.expected_rejection_path = "$.hook_id"
    world.notes.expected_rejection_clause = "§6.validated-before-call"
    world.install_registration(hook_id, registration(hook_id))


@given("private values made by Faker are planted in the run")
def plant_private_values(world: World) -> None:
    from faker import (
        Faker,  # imported here: it is slow to load and only these scenarios need it
    )

    fake = Faker()
    fake.seed_instance(13)
    world.private_values.update(
        {
            "email": fake.email(),
            "url": fake.url() + "internal/" + fake.slug(),
            "path": "/home/" + fake.user_name() + "/projects/" + fake.slug() + "/notes.md",
            "credential": "ghp_" + fake.pystr(min_chars=36, max_chars=36),
            "name": fake.name(),
        }
    )


@given("the sidecar journal cannot be written")
@when("the sidecar journal can no longer be written")
def journal_unwritable(world: World) -> None:
    world.sut.inject_fault("journal_unwritable")


_FILE_FAULTS = {
    "removed": "removed",
    "replaced by another database": "replaced",
    "left with a truncated write-ahead log": "wal_truncated",
    "left without its write-ahead log": "wal_removed",
    "left with its write-ahead log replaced by a copy": "wal_replaced",
    "left with a write-ahead log one byte short": "wal_shortened",
}
_FILE_FAULT_RE = "|".join(map(re.escape, _FILE_FAULTS))


@when(parsers.re(rf"the sidecar journal's file is (?P<how>{_FILE_FAULT_RE}) while it is open"))
def journal_file_changed(world: World, how: str) -> None:
    """An operator or a cleanup job changes the journal's files under the open dispatcher (a SUT
    whose journal has no files answers Unsupported)."""
    world.sut.inject_fault("journal_file_" + _FILE_FAULTS[how])


@given(parsers.parse('hook "{hook_id}" is registered with a provider that is not callable'))
def not_callable(world: World, hook_id: str) -> None:
    world.ensure_generic_kind()
    world.notes.expected_rejection_path = "$"
    world.install_rejections[hook_id] = world.sut.install(registration(hook_id), "reports.hooks:run")


@given(parsers.parse('the intent kind "{kind}" is registered twice with different payload schemas'))
def kind_twice(world: World, kind: str) -> None:
    first = world.sut.register_intent_kind(kind, {"type": "object"})
    second = world.sut.register_intent_kind(kind, {"type": "object", "required": ["x"]})
    world.notes.kind_rejections = (first or []) + (second or [])


@given(parsers.parse('the intent kind "{kind}" is registered with a payload schema that is not a schema'))
def kind_bad_schema(world: World, kind: str) -> None:
    world.notes.kind_rejections = world.sut.register_intent_kind(kind, {"type": "no-such-type"}) or []


_SHAPES = {
    "a list": lambda: [registration("a.reporter")],
    "an object with a NaN budget": lambda: registration("a.reporter", budget={"timeout_ms": float("nan")}),
}


@given(parsers.re(r"a registration that is (?P<shape>a list|an object with a NaN budget) is offered"))
def odd_registration(world: World, shape: str) -> None:
    world.ensure_generic_kind()
    world.notes.offered_rejections = world.sut.install(_SHAPES[shape](), lambda i: None)
