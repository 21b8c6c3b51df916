"""World-level actions the models and their exported scenarios share.

The model drives a :class:`fakes._world.World` through exactly these functions, and the
steps in ``scenarios/steps_models.py`` call the same ones, so a counterexample pasted into
``features/`` does what the model did, byte for byte. Each installs hooks with the same
registration and producer body as ``World.install_hook``; ``on_call`` lets the model see every
provider call as it happens (with its input), which a probe alone does not tell in order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fakes._behaviours import BEHAVIOURS, Body, CallContext
from fakes._orchestrator import TurnResult
from fakes._packets import intent_for, proposed, registration
from fakes._world import HookProbe, World
from pwh import DispatchOutcome, Rejection

OnCall = Callable[[str, Mapping[str, Any], int, bool], None]  # hook_id, input, call number, in rollout append

POLICY_ATTR = "model_policies"  # the world's current policy version per versioned hook
KIND_READY_ATTR = "model_generic_kind_registered"


def install_behaviour(world: World, hook_id: str, phrase: str, *, on_call: OnCall | None = None) -> list[Rejection]:
    """``hook "<id>" is installed and <phrase>``, as the step library does it."""
    spec = BEHAVIOURS[phrase]
    return _install(world, hook_id, phrase, spec.body, registration(hook_id, budget={**spec.budget}), on_call)


def install_versioned(world: World, hook_id: str, version: str, *, on_call: OnCall | None = None) -> list[Rejection]:
    """A hook proposing one intent under a policy version the run can move later (JNL-3)."""
    policies: dict[str, str] = getattr(world, POLICY_ATTR, None) or {}
    setattr(world, POLICY_ATTR, policies)
    policies[hook_id] = version
    world.share(f"policy-{hook_id}", version)  # read by the provider wherever it runs

    def body(hook_input: Mapping[str, Any], ctx: CallContext) -> Any:
        return proposed(intent_for(hook_input, policy_version=world.shared(f"policy-{hook_id}", version)))

    phrase = f'proposes one intent under policy version "{version}"'
    return _install(world, hook_id, phrase, body, registration(hook_id), on_call)


def move_policy(world: World, hook_id: str, version: str) -> None:
    """The deployed provider of a versioned hook now proposes under ``version``."""
    policies: dict[str, str] | None = getattr(world, POLICY_ATTR, None)
    if not policies or hook_id not in policies:
        raise AssertionError(f"hook {hook_id} was not installed with a policy version")
    policies[hook_id] = version
    world.share(f"policy-{hook_id}", version)


def install_periodic_report(world: World, *, on_call: OnCall | None = None) -> None:
    """The real periodic-report capability, installed by its own ``install`` function."""
    from pwh.capabilities import periodic_report

    periodic_report.install(_Registrar(world, on_call))
    world.periodic_report = True


def writeback(world: World, n: int) -> dict[str, Any]:
    """The ``n``-th committed primary writeback (1-based, in commit order)."""
    receipts = world.orch.receipts()
    if not 1 <= n <= len(receipts):
        raise AssertionError(f"there is no committed writeback number {n} ({len(receipts)} committed)")
    return receipts[n - 1]


def replay_writeback(world: World, n: int) -> TurnResult:
    """Replay the ``n``-th committed writeback; through ``World.act`` when a scripted Turn made it,
    so the no-hooks baseline of a crash-free run still sees it."""
    turn_key = writeback(world, n)["turn_instance_id"]
    for index, result in enumerate(world.script_results):
        if result.committed and result.turn_key == turn_key:
            return world.act("replay", turn=index)
    result = world.orch.replay(turn_key)
    _remember(world, [result])
    return result


def redeliver_writeback(world: World, n: int) -> DispatchOutcome:
    """A second dispatcher delivers the ``n``-th writeback's dispatch again (providers run)."""
    outcome = world.sut.redeliver(dict(writeback(world, n)))
    world.outcomes.append(outcome)
    return outcome


def restart(world: World) -> list[TurnResult]:
    """Reopen durable storage and run the recovery queue, as after a crash."""
    results = world.orch.restart()
    _remember(world, results)
    return results


def _remember(world: World, results: list[TurnResult]) -> None:
    for result in results:
        world.turns.append(result)
        if result.dispatch is not None:
            world.outcomes.append(result.dispatch)


def _install(world: World, hook_id: str, phrase: str, body: Body, reg: Mapping[str, Any], on_call: OnCall | None) -> list[Rejection]:
    # World.install_hook registers the generic intent kind on every install; the catalog keeps
    # the first (same schema), so once per world is the same and spares a schema compile per hook.
    if not getattr(world, KIND_READY_ATTR, False):
        world.ensure_generic_kind()
        setattr(world, KIND_READY_ATTR, True)
    probe = HookProbe(hook_id, phrase, world.log)
    rejections = world.sut.install(reg, _producer(world, probe, body, on_call))
    world.install_rejections[hook_id] = rejections
    if not rejections:
        world.hooks[hook_id] = probe
    return rejections


def _producer(world: World, probe: HookProbe, body: Body, on_call: OnCall | None) -> Callable[[Mapping[str, Any]], Any]:
    """The probe wrapper of ``World`` (its call log, which works in whatever process the provider
    runs), then ``on_call`` from inside the provider: only for an observer that works there too
    (a file, as the real-crash child's); an in-memory observer reads the world's log instead."""
    produce_inner = world._producer(probe, body)
    if on_call is None:
        return produce_inner

    def produce(hook_input: Mapping[str, Any]) -> Any:
        number = probe.calls + 1
        on_call(probe.hook_id, hook_input, number, world.inside_append())
        return produce_inner(hook_input)

    return produce


class _Registrar:
    """Lets a real capability install itself while the model still sees its provider calls."""

    def __init__(self, world: World, on_call: OnCall | None) -> None:
        self.world = world
        self.on_call = on_call

    def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> None:
        self.world.sut.register_intent_kind(kind, payload_schema)

    def install(self, reg: Mapping[str, Any], producer: Callable[[Mapping[str, Any]], Any]) -> None:
        rejections = _install(self.world, reg["hook_id"], "the capability's own producer", lambda i, c: producer(i), reg, self.on_call)
        if rejections:
            raise AssertionError(f"the capability's registration was rejected: {rejections[0]}")


# -- bad receipts, bad registrations, profile changes ------------------------------------------


def offer_bad_receipt(world: World, flaw: str) -> Any:
    """Offer a receipt that must dispatch nothing, exactly as the step library's line for ``flaw``
    does: an uncommitted, undurable or identity-less receipt straight to the dispatcher, or a
    completion the orchestrator commits for an effect other than the active plan's."""
    from fakes._orchestrator import completion_output
    from fakes._packets import source

    if flaw == "effect_mismatch":
        return world.act("run_turn", output=completion_output(), plan_effect_id=EFFECT_OF_ANOTHER_PLAN)
    if flaw == "not_durable":
        receipt = source(1, durable_checkpoint=False)
    elif flaw == "empty_effect":
        receipt = source(1, effect_id="", plan_effect_id="")
    elif flaw.startswith("empty_"):
        receipt = source(1, **{flaw[len("empty_") :]: ""})
    elif flaw.startswith("durable_"):
        receipt = source(1)
        value = _DURABLE[flaw[len("durable_") :]]
        if value is _MISSING:
            receipt.pop("durable_checkpoint")
        else:
            receipt["durable_checkpoint"] = value
    elif flaw.startswith("status_"):
        receipt = source(1, step_status=flaw[len("status_") :])
    else:
        receipt = source(1, step_status=flaw)
    return world.dispatch_direct(receipt)


_MISSING = object()
_DURABLE: dict[str, Any] = {"missing": _MISSING, "the text true": "true", "the number 1": 1}


EFFECT_OF_ANOTHER_PLAN = "effect_of_another_plan"


def bad_registration(world: World, hook_id: str, flaw: str) -> dict[str, Any]:
    """The registration the step library offers for ``flaw`` (``registered a second time``: the
    plain registration of an installed hook_id)."""
    from fakes._packets import BAD_REGISTRATIONS, DUPLICATE

    if flaw == DUPLICATE:
        return registration(hook_id)
    change = dict(BAD_REGISTRATIONS[flaw][0])
    budget = change.pop("budget", None)
    reg = registration(hook_id, **change)
    if budget:
        reg["budget"] = {**reg["budget"], **budget}
    return reg


def register_bad(world: World, hook_id: str, flaw: str, producer: Callable[[Mapping[str, Any]], Any]) -> list[Rejection]:
    """Offer a bad registration with its own ``producer`` (which must never be called)."""
    world.ensure_generic_kind()
    return world.sut.install(bad_registration(world, hook_id, flaw), producer)


def change_profile(world: World, setting: str, value: Any) -> None:
    """Change one profile setting between dispatches, as the step library's Given lines do."""
    if setting == "phase":
        world.set_profile(phase_enabled=value)
    elif setting == "allowlist":
        world.set_profile(allowlist=None if value is None else {value})
    elif setting == "ceiling":
        world.set_profile(max_intents_per_dispatch=value)
    elif setting == "attempts":
        world.set_profile(max_attempts=value)
    elif setting == "timeout_cap":
        world.set_profile(budget_ceilings={**world.profile.budget_ceilings, "timeout_ms": value})
    else:
        raise AssertionError(f"unknown profile setting {setting!r}")
