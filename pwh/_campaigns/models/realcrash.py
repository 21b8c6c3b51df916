"""Real crashes: run one Turn in a child process over the run's durable storage and SIGKILL it
at a named crash point; the parent then recovers from the same directory.

The child rebuilds exactly the parent's composition (same SUT over the same journal directory,
same hooks with their call counts, same profile, the orchestrator's ids and clock) and installs a
``CrashPlan.on_hit`` hook that kills the process for real at the armed point: no ``finally``, no
rollback, no flush. Every provider call it makes is appended to a log first, so the parent's
view of calls stays complete. The child is reaped by PID, killed by PID if it overruns.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fakes._actions import POLICY_ATTR
from pwh import canonical_bytes
from pwh._campaigns.models.catalog import VERSIONED
from pwh._campaigns.models.observe import Call, Episode, final_records

if TYPE_CHECKING:
    from fakes._world import World
    from pwh._campaigns.models.catalog import HookSpec


class CrashingSystem(Protocol):
    """What a real crash reads and updates of the model's system (``models.system.ModelSystem``,
    which calls in here: naming that class would make the two modules a cycle)."""

    sut_spec: str
    sut_options: dict[str, Any]
    root: Path
    world: World
    hooks: dict[str, HookSpec]
    segment: int
    episodes: list[Episode]
    calls: list[Call]
    steps: list[dict[str, Any]]
    _calls_seen: int

    def journal(self) -> list[dict[str, Any]]: ...


CHILD_TIMEOUT_S = 60.0
NOT_REACHED_EXIT = 3  # the child finished its Turn without reaching the armed point


def crash_in_child(system: CrashingSystem, point: str, action: str) -> None:
    """Run ``action`` in a child that dies by SIGKILL at ``point``; merge its provider calls."""
    from pwh._campaigns.models.errors import ModelError

    index = len(system.steps) - 1
    spec_path = system.root / f"child-{index}.json"
    calls_path = system.root / f"child-{index}.calls.jsonl"
    errors_path = system.root / f"child-{index}.stderr"
    spec_path.write_text(json.dumps(_spec(system, point, action, calls_path)), "utf-8")
    episode = Episode("dispatch", index, None, None, frozenset(system.hooks), final_records(system.journal()), in_child=True)
    with open(errors_path, "wb") as errors:
        proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "pwh._campaigns.models.crash_child", str(spec_path)],  # -P: no cwd first
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            env=_child_env(system.sut_spec),
        )
        try:
            code = proc.wait(timeout=CHILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()  # by PID: this child only
            proc.wait(timeout=10)
            raise ModelError(f"the crash child did not finish within {CHILD_TIMEOUT_S:.0f} s") from None
    _merge_calls(system, episode, calls_path)
    system.episodes.append(episode)
    if code == -signal.SIGKILL:
        return
    if code == NOT_REACHED_EXIT:
        raise AssertionError(f"the child was armed to die at {point} but its Turn completed")
    tail = errors_path.read_text("utf-8", "replace").strip().splitlines()[-1:] if errors_path.exists() else []
    raise ModelError(f"the crash child ended with exit code {code}" + (f": {tail[0]}" if tail else ""))


def _spec(system: CrashingSystem, point: str, action: str, calls_path: Path) -> dict[str, Any]:
    world = system.world
    policies = getattr(world, POLICY_ATTR, None) or {}
    hooks = []
    for hook_id, spec in sorted(system.hooks.items()):
        entry = {"hook_id": hook_id, "behaviour": spec.behaviour, "calls": world.hooks[hook_id].calls}
        if spec.behaviour == VERSIONED:
            entry["version"] = policies[hook_id]
        hooks.append(entry)
    state = base64.b64encode(pickle.dumps((world.orch.ids, world.orch.clock))).decode("ascii")
    return {
        "sut": system.sut_spec,
        "sut_options": system.sut_options,
        "sut_dir": str(system.root / "sut"),
        "world_dir": str(world.workdir),
        "segment": system.segment,
        "ceiling": system.steps[0]["ceiling"],
        "profile": world.profile.to_json(),  # as the run's profile steps left it
        "hooks": hooks,
        "orchestrator_state": state,
        "point": point,
        "action": action,
        "calls_log": str(calls_path),
    }


def _merge_calls(system: CrashingSystem, episode: Episode, calls_path: Path) -> None:
    """The child's provider calls, as if the parent's probes had seen them."""
    if not calls_path.exists():
        return
    world = system.world
    for line in calls_path.read_text("utf-8").splitlines():
        try:
            seen = json.loads(line)
        except ValueError:
            continue  # a line cut short by the kill
        # The call happened (in the killed child): it joins this world's call log.
        world.log.note({"e": "call", "h": seen["hook_id"], "i": seen["input"], "r": seen["appending"], "p": 0})
        system._calls_seen += 1
        source = seen["input"].get("source") or {}
        call = Call(
            seen["hook_id"],
            seen["input"].get("dispatch_id"),
            source.get("receipt_id"),
            seen["number"],
            seen["input"],
            seen["appending"],
            canonical_bytes(source),
        )
        system.calls.append(call)
        episode.calls.append(call)


def _child_env(sut_spec: str) -> dict[str, str]:
    """The child imports what the gate's child may: the project, then the user's own PYTHONPATH;
    the working directory only for an adapter the user named that was found there, and searched
    last (``PWH_SUT_PATH``), so a stray ``random.py`` where pwh runs never runs in the child."""
    from pwh._harness.gate import adapter_dir_in_cwd, child_import_env

    sut_dir = adapter_dir_in_cwd(sut_spec) if ":" in sut_spec else None
    return {**os.environ, **child_import_env(sut_dir)}
