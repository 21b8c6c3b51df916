"""Steps the stateful models need for their exported counterexamples.

A model replays or re-delivers any earlier writeback (not only the last), restarts without a
crash, and moves a hook's policy version (JNL-3). Each step calls the same function the model
ran (``fakes._actions``), so a pasted counterexample does exactly what was found.
"""

from __future__ import annotations

from pytest_bdd import given, parsers, when

from fakes import _actions as actions
from fakes._world import World
from pwh._harness.expect import expect


@given(parsers.parse('hook "{hook_id}" is installed and proposes one intent under policy version "{version}"'))
def versioned_hook(world: World, hook_id: str, version: str) -> None:
    rejections = actions.install_versioned(world, hook_id, version)
    expect(
        not rejections,
        f"hook {hook_id} to install",
        f"rejected: {rejections[:1]}",
        rfc=("§4.composition-root", "§6.validated-before-call"),
    )


@when(parsers.parse('hook "{hook_id}" moves to policy version "{version}"'))
def move_policy(world: World, hook_id: str, version: str) -> None:
    actions.move_policy(world, hook_id, version)


@when(parsers.parse("the orchestrator replays writeback number {n:d}"))
def replay_number(world: World, n: int) -> None:
    actions.replay_writeback(world, n)


@when(parsers.parse("a second dispatcher delivers writeback number {n:d} again"))
def redeliver_number(world: World, n: int) -> None:
    actions.redeliver_writeback(world, n)


@given("the profile admits every installed hook")
def allowlist_lifted(world: World) -> None:
    world.set_profile(allowlist=None)


@when("the process restarts")
def restart(world: World) -> None:
    actions.restart(world)
