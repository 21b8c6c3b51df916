"""Bad input: known-bad registrations, source receipts, hook results and intents, driven through
the public validators *and* through the reference dispatcher (install, dispatch, a producer
returning the bad result).

A packet is *isolated* when both paths refuse it with stable codes and ``$`` paths, no provider
is called for a refused registration or source, a refused result leaves only a compact failed
receipt in the journal, and neither the packet nor the primary receipt was changed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from pwh._core import codes
from pwh._core.boundary import BoundaryScanner
from pwh._core.contracts import (
    admissibility,
    build_hook_input,
    validate_hook_input,
    validate_registration,
    validate_result,
    validate_source,
)
from pwh._core.profile import CORE_CEILINGS, Profile
from pwh._reliability.packets import (
    HOOK,
    BadPacket,
    dispatch_of,
    hypothesis_bad,
    intent,
    proposed,
    random_bad,
    registration,
    source,
)
from pwh._reliability.rig import Rig, Tally, hook_failed_with, rejection_ok, rejections_ok, snapshot, stable

KINDS = ("registration", "source", "result", "intent")
# Lower than the schema's maxima, so a registration can be schema-valid yet over the profile.
CEILINGS = {**CORE_CEILINGS, "timeout_ms": 10000, "max_result_bytes": 32768}
REBUILD_EVERY = 1000  # a fresh rig (and journal) every so many packets keeps memory flat


def _drive_after(driver: _Driver, offset: int, packet: Any, index: int) -> None:
    """A Hypothesis example numbered after the random mutations (partial, not a lambda in the loop)."""
    driver.drive(packet, offset + index)


class _Driver:
    """Drives bad packets of one kind; owns a rig that is rebuilt now and then."""

    def __init__(self, kind: str, tally: Tally) -> None:
        self.kind = kind
        self.tally = tally
        self.rig: Rig | None = None
        self.used = 0
        self.next_result: Any = None
        self.scanner = BoundaryScanner()

    def _fresh_rig(self) -> Rig:
        if self.rig is not None:
            self.rig.close()
        rig = Rig(profile=Profile(phase_enabled=True, budget_ceilings=dict(CEILINGS)), scanner=self.scanner)
        rig.install(HOOK, self._produce)
        self.rig, self.used = rig, 0
        return rig

    def _produce(self, hook_input: Mapping[str, Any]) -> Any:
        if self.kind in ("result", "intent"):
            return self.next_result
        return proposed(intent(hook_input["dispatch_id"]))

    def close(self) -> None:
        if self.rig is not None:
            if self.rig.calls.get("?", 0):
                self.tally.note("a rejected registration's provider was called")
                self.tally.isolated -= 1
            self.rig.close()
            self.rig = None

    def drive(self, packet: BadPacket, n: int) -> None:
        rig = self.rig if self.rig is not None and self.used < REBUILD_EVERY else self._fresh_rig()
        self.used += 1
        self.tally.tried += 1
        before = snapshot(packet.value)
        try:
            ok, primary_same = getattr(self, "_" + self.kind)(rig, packet, n)
        except Exception as exc:
            self.tally.uncaught += 1
            self.tally.note(f"{packet.label}: {type(exc).__name__} escaped")
            self._fresh_rig()
            return
        if snapshot(packet.value) != before:
            ok = False
            if self.kind == "source":
                primary_same = False
            self.tally.note(f"{packet.label}: the packet was changed")
        if not primary_same:
            self.tally.primary_changed += 1
        if ok:
            self.tally.isolated += 1
        else:
            self.tally.note(f"{packet.label}: not refused with a stable code and a $ path")

    # -- one method per kind: (isolated, primary unchanged) ----------------------------------

    def _registration(self, rig: Rig, packet: BadPacket, n: int) -> tuple[bool, bool]:
        found = validate_registration(packet.value, known_intent_kinds=rig.registry.catalog.kinds, ceilings=CEILINGS)
        duplicate = packet.label == "semantic:duplicate_hook_id"  # valid alone; only the registry knows
        public_ok = found == [] if duplicate else rejections_ok(found)
        refused = rig.try_install(packet.value, lambda i: proposed(intent(i["dispatch_id"])))
        if not refused:
            self._fresh_rig()  # the registry has no uninstall: start over without the bad hook
        return public_ok and rejections_ok(refused), True

    def _source(self, rig: Rig, packet: BadPacket, n: int) -> tuple[bool, bool]:
        public_ok = _public_source_refusal(packet.value, self.scanner)
        calls = sum(rig.calls.values())
        outcome = rig.dispatch(packet.value)
        if outcome.journal_error is not None or sum(rig.calls.values()) != calls:
            return False, True
        if not outcome.admitted:
            dispatch_ok = stable(outcome.code) and rejection_ok(outcome.rejection) and not outcome.hooks
        else:
            dispatch_ok = bool(outcome.hooks) and all(
                hook_failed_with(outcome, h.hook_id, codes.INPUT_BOUNDARY_REJECTED) is not None for h in outcome.hooks
            )
        return public_ok and dispatch_ok, True

    def _result(self, rig: Rig, packet: BadPacket, n: int) -> tuple[bool, bool]:
        return self._returned(rig, packet.value, n)

    def _intent(self, rig: Rig, packet: BadPacket, n: int) -> tuple[bool, bool]:
        return self._returned(rig, {**proposed(), "intents": [packet.value]}, n)

    def _returned(self, rig: Rig, result: Any, n: int) -> tuple[bool, bool]:
        src = source(n)
        did = dispatch_of(src)
        plain, _, found = validate_result(
            result,
            registration=rig.registry.hooks()[0].registration,
            dispatch=did,
            payload_validators=rig.registry.catalog.validators,
        )
        public_ok = plain is None and rejections_ok(found)
        primary = snapshot(src)
        self.next_result = result
        outcome = rig.dispatch(src)
        self.next_result = None
        hook = hook_failed_with(outcome, HOOK, codes.RESULT_CONTRACT_REJECTED)
        record = rig.journal.get_many([did]).get(did)
        journal_ok = (
            outcome.journal_error is None
            and record is not None
            and record["status"] == "failed"
            and record["intents"] == []
            and record["result_digest"] is None
        )
        return public_ok and hook is not None and hook.rejection is not None and journal_ok, snapshot(src) == primary


def _public_source_refusal(value: Any, scanner: BoundaryScanner) -> bool:
    """The public checks a source meets before any hook: schema, ADM, then the built input's boundary."""
    plain, found = validate_source(value)
    if plain is None:
        return rejections_ok(found)
    refusal = admissibility(plain, True)
    if refusal is not None:
        return rejection_ok(refusal)
    hook_input = build_hook_input(plain, registration(), dispatch_of(plain))
    return bool(scanner.scan_value(hook_input)) or rejections_ok(validate_hook_input(hook_input))


def run_bad_input(tallies: dict[str, Tally], *, mutations: int, hypothesis: int, seed: int) -> None:
    """``mutations`` random known-bad packets and ``hypothesis`` schema-derived ones per kind."""
    rnd = random.Random(seed)
    for kind in KINDS:
        tally = tallies.setdefault("bad_" + kind, Tally())
        driver = _Driver(kind, tally)
        try:
            for n in range(mutations):
                driver.drive(random_bad(kind, rnd, n), n)
            _hypothesis_examples(kind, hypothesis, seed, partial(_drive_after, driver, mutations))
        finally:
            driver.close()


def _hypothesis_examples(kind: str, count: int, seed: int, body: Callable[[BadPacket, int], None]) -> None:
    if count <= 0:
        return
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fix_seed

    seen = [0]

    @fix_seed(seed)
    @settings(
        max_examples=count, database=None, deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck), print_blob=False
    )
    @given(hypothesis_bad(kind))
    def run(packet: BadPacket | None) -> None:
        if packet is not None:
            seen[0] += 1
            body(packet, seen[0])

    run()
