"""The models' action language: one small JSON object per step.

A run is a list of these, so the same list drives the Hypothesis machine, is written as the
portable JSON trace, is replayed by ``pwh replay`` and is turned into Gherkin. Every step is an
action a maintainer could take on a real host: commit a writeback, replay or re-deliver one,
crash at a named point and restart, install a hook, move a hook's policy version.
"""

from __future__ import annotations

import re
from typing import Any

from .._behaviours import BEHAVIOURS

TURN_ACTIONS: tuple[str, ...] = ("complete_todo", "replan", "progress")
CRASH_ACTIONS: tuple[str, ...] = ("complete_todo", "replan")

# op -> the fields it carries (besides "op").
OPS: dict[str, tuple[str, ...]] = {
    "setup": ("ceiling", "segment"),
    "install": ("hook", "behaviour"),
    "install_versioned": ("hook", "version"),
    "install_periodic_report": (),
    "policy": ("hook", "version"),
    "turn": ("action",),
    "replay": ("writeback",),
    "redeliver": ("writeback",),
    "crash": ("point", "action", "real"),
    "restart": (),
}


_HOOK_ID = re.compile(r"[a-z0-9_]+\.[a-z0-9_.]+")
_VERSION = re.compile(r"v[0-9]{1,6}")
_POINT = re.compile(r"[a-z0-9_]+\.[a-z0-9_.]+")  # the SUT names its own sidecar points


class StepError(ValueError):
    """A step object that is not part of the action language."""


def check_step(step: Any, index: int) -> dict[str, Any]:
    """The step as a plain dict, or :class:`StepError` saying what is wrong with it."""
    where = f"step {index}"
    if not isinstance(step, dict) or step.get("op") not in OPS:
        raise StepError(f"{where}: 'op' must be one of {', '.join(OPS)}")
    op = step["op"]
    missing = [f for f in OPS[op] if f not in step]
    extra = sorted(set(step) - {"op", *OPS[op]})
    if missing or extra:
        raise StepError(f"{where} ({op}): fields {', '.join(OPS[op]) or 'none'} expected")
    if "hook" in OPS[op] and not (isinstance(step["hook"], str) and _HOOK_ID.fullmatch(step["hook"])):
        raise StepError(f"{where}: 'hook' must be a hook id like a.alpha")
    if "version" in OPS[op] and not (isinstance(step["version"], str) and _VERSION.fullmatch(step["version"])):
        raise StepError(f"{where}: 'version' must look like v1")
    if op == "install" and step["behaviour"] not in BEHAVIOURS:
        raise StepError(f"{where}: unknown behaviour phrase")
    if op == "turn" and step["action"] not in TURN_ACTIONS:
        raise StepError(f"{where}: unknown action")
    if op == "crash" and (not (isinstance(step["point"], str) and _POINT.fullmatch(step["point"])) or step["action"] not in CRASH_ACTIONS):
        raise StepError(f"{where}: a crash needs a named crash point and a completion or replan")
    if op in ("replay", "redeliver") and (type(step["writeback"]) is not int or step["writeback"] < 1):
        raise StepError(f"{where}: 'writeback' must be a positive integer")
    if op == "setup":
        ceiling, segment = step["ceiling"], step["segment"]
        if not (ceiling is None or (type(ceiling) is int and ceiling > 0)) or type(segment) is not int or segment < 1:
            raise StepError(f"{where}: 'ceiling' must be null or a positive integer, 'segment' a positive integer")
    if op == "crash" and type(step["real"]) is not bool:
        raise StepError(f"{where}: 'real' must be true or false")
    return dict(step)


def describe(step: dict[str, Any]) -> str:
    """One line a person reads in progress output and reports."""
    op = step["op"]
    if op == "setup":
        ceiling = step["ceiling"] if step["ceiling"] is not None else "default"
        return f"setup (intent ceiling {ceiling}, segment {step['segment']})"
    if op == "install":
        return f"install {step['hook']}: {step['behaviour']}"
    if op in ("install_versioned", "policy"):
        return f"{op} {step['hook']} {step['version']}"
    if op == "turn":
        return f"turn {step['action']}"
    if op in ("replay", "redeliver"):
        return f"{op} writeback {step['writeback']}"
    if op == "crash":
        kind = "SIGKILL" if step["real"] else "simulated"
        return f"crash ({kind}) at {step['point']} during {step['action']}"
    return op
