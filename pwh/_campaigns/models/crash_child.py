"""The crash child: ``python -m pwh._campaigns.models.crash_child SPEC.json``.

Rebuilds the parent's composition over the parent's directories, arms one crash point with a
hook that SIGKILLs this process, and runs one Turn. Exit code 3 means the point was never
reached; any other ending than the kill is an error the parent reports.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fakes import _actions as actions
from fakes._orchestrator import PRIMARY_CRASH_POINTS
from fakes._world import World, input_as_json
from pwh import SimulatedCrash, load_sut
from pwh._campaigns.models.catalog import PERIODIC, VERSIONED
from pwh._campaigns.models.realcrash import NOT_REACHED_EXIT


def _die(point: str) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def main(argv: list[str]) -> int:
    if os.environ.get("PWH_SUT_PATH"):  # an adapter the user named, found in their cwd: searched last
        sys.path.append(os.environ["PWH_SUT_PATH"])
    spec = json.loads(Path(argv[0]).read_text("utf-8"))
    with open(spec["calls_log"], "a", encoding="utf-8", buffering=1) as log:

        def on_call(hook_id: str, hook_input: Mapping[str, Any], number: int, appending: bool) -> None:
            # Written before the provider runs: a kill right after it returns must not lose the call.
            line = {"hook_id": hook_id, "input": input_as_json(hook_input), "number": number, "appending": appending}
            log.write(json.dumps(line) + "\n")
            log.flush()

        world = _compose(spec, on_call)
        orch = world.orch
        orch.ids, orch.clock = pickle.loads(base64.b64decode(spec["orchestrator_state"]))
        point = spec["point"]
        plan = orch.crash if point in PRIMARY_CRASH_POINTS else getattr(world.sut, "crash", None)
        if plan is not None and hasattr(plan, "on_hit"):
            plan.on_hit(_die)
        orch.arm_crash(point)
        try:
            getattr(orch, spec["action"])()
        except SimulatedCrash:
            _die(point)  # an adapter without on_hit: die where its simulated crash surfaced
        world.close()
    return NOT_REACHED_EXIT


def _compose(spec: dict[str, Any], on_call: actions.OnCall) -> World:
    """The parent's composition, over the parent's directories."""
    sut = load_sut(spec["sut"], workdir=spec["sut_dir"], **spec["sut_options"])
    world = World(sut, Path(spec["world_dir"]))
    world.segment_size = spec["segment"]
    world.set_profile(phase_enabled=True)
    if spec["ceiling"] is not None:
        world.set_profile(max_intents_per_dispatch=spec["ceiling"])
    for hook in spec["hooks"]:
        if hook["behaviour"] == PERIODIC:
            actions.install_periodic_report(world, on_call=on_call)
        elif hook["behaviour"] == VERSIONED:
            actions.install_versioned(world, hook["hook_id"], hook["version"], on_call=on_call)
        else:
            actions.install_behaviour(world, hook["hook_id"], hook["behaviour"], on_call=on_call)
        world.hooks[hook["hook_id"]].calls = hook["calls"]
    if "profile" in spec:  # after the installs: a ceiling lowered since was not in force when they were made
        world.set_profile(**spec["profile"])
    return world


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
