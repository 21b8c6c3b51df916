"""The models' action language: one small JSON object per step.

A run is a list of these, so the same list drives the Hypothesis machine, is written as the
portable JSON trace, is replayed by ``pwh replay`` and is turned into Gherkin. Every step is an
action a maintainer could take on a real host: commit a writeback, replay or re-deliver one,
crash at a named point and restart, install a hook, move a hook's policy version, offer a
receipt or a registration that must change nothing, change one profile setting.
"""

from __future__ import annotations

import re
from typing import Any

from fakes._behaviours import BEHAVIOURS
from fakes._packets import DUPLICATE

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
    "bad_receipt": ("flaw",),
    "bad_register": ("hook", "flaw"),
    "profile": ("setting", "value"),
}

# A receipt that must dispatch nothing (SPEC §4 ADM, M03): the step library's wording of each flaw.
BAD_RECEIPTS: tuple[str, ...] = (
    "prepared",
    "rejected",
    "inferred",
    "prose_only",
    "not_durable",
    "empty_goal_id",
    "empty_agent_id",
    "empty_todo_id",
    "empty_turn_instance_id",
    "effect_mismatch",
    "status_Committed",
    "status_done",
    "durable_missing",
    "durable_the text true",
    "durable_the number 1",
    "empty_effect",
)
# A registration that must be rejected before any provider call (SPEC §2 REG, M02): the step
# library's flaws (fakes/_packets.py BAD_REGISTRATIONS) and a second registration of an installed
# hook_id (DUPLICATE).
# Profile settings a run may change between dispatches (SPEC §4, RFC §10) and the values drawn.
PROFILE_SETTINGS: tuple[str, ...] = ("phase", "allowlist", "ceiling", "attempts", "timeout_cap")
CORE_TIMEOUT_CAP = 30000


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
    if op == "bad_receipt" and step["flaw"] not in BAD_RECEIPTS:
        raise StepError(f"{where}: unknown receipt flaw")
    if op == "bad_register" and step["flaw"] not in bad_registration_flaws():
        raise StepError(f"{where}: unknown registration flaw")
    if op == "profile" and not _profile_value_ok(step["setting"], step["value"]):
        raise StepError(f"{where}: a profile step needs one of {', '.join(PROFILE_SETTINGS)} and a value of its kind")
    if op == "crash" and type(step["real"]) is not bool:
        raise StepError(f"{where}: 'real' must be true or false")
    return dict(step)


def bad_registration_flaws() -> tuple[str, ...]:
    """Every registration flaw the step library can state, the duplicate first."""
    from fakes._packets import BAD_REGISTRATIONS

    return (DUPLICATE, *sorted(BAD_REGISTRATIONS))


def _profile_value_ok(setting: Any, value: Any) -> bool:
    if setting == "phase":
        return type(value) is bool
    if setting == "allowlist":
        return value is None or (isinstance(value, str) and bool(_HOOK_ID.fullmatch(value)))
    if setting in ("ceiling", "attempts", "timeout_cap"):
        return type(value) is int and 0 < value <= 1_000_000
    return False


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
    if op == "bad_receipt":
        return f"offer a bad receipt ({step['flaw']})"
    if op == "bad_register":
        return f"register {step['hook']} with {step['flaw']}"
    if op == "profile":
        return f"profile {step['setting']} -> {step['value']}"
    if op == "crash":
        kind = "SIGKILL" if step["real"] else "simulated"
        return f"crash ({kind}) at {step['point']} during {step['action']}"
    return op
