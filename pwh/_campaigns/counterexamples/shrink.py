"""Shrink a failing trace within a time budget, by re-running it without Hypothesis.

Hypothesis's own shrinker re-runs the machine hundreds of times, which is right for a soak but
too slow for CI, for real SIGKILL crashes (a child process per crash) and for hung providers
(their real timeouts). This one works on the action language itself: drop steps, then make the
remaining ones plainer (a simulated crash for a real one, an ordinary hook for an odd one,
writeback 1, the default profile), keeping a change only when the *same* invariant still breaks.
It stops when nothing changes or the budget is spent, and returns the best trace so far.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from pwh._campaigns.counterexamples.trace import make_trace, run_steps
from pwh._campaigns.models.system import ModelError

PLAIN_BEHAVIOUR = "proposes one intent"


class _OutOfTime(Exception):
    pass


def shrink_trace(trace: dict[str, Any], *, budget_s: float = 8.0) -> dict[str, Any]:
    """A shorter, plainer trace breaking the same invariant (``trace`` itself if none is found)."""
    target = trace["violation"]["invariant"]
    options = trace.get("sut_options", {})

    def reproduces(candidate: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Any] | None:
        try:
            ran, found = run_steps(trace["sut"], candidate, options, simulated=bool(trace.get("simulated")))
        except ModelError:
            return None
        if found is None or found.invariant != target:
            return None
        return candidate[:ran], found.to_json()

    best, violation = shrink_steps(list(trace["steps"]), trace["violation"], reproduces, budget_s=budget_s)
    return make_trace(trace["seed"], trace["sut"], options, best, violation)


Reproduces = Callable[[list[dict[str, Any]]], "tuple[list[dict[str, Any]], Any] | None"]


def shrink_steps(steps: list[dict[str, Any]], found: Any, reproduces: Reproduces, *, budget_s: float) -> tuple[list[dict[str, Any]], Any]:
    """The shortest, plainest steps ``reproduces`` still accepts within ``budget_s`` seconds, with
    what it found on them (``steps`` and ``found`` themselves if no candidate reproduces).
    ``reproduces(candidate)`` returns ``(the steps up to the finding, the finding)`` or None."""
    deadline = time.monotonic() + budget_s
    best = list(steps)

    def attempt(candidate: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Any] | None:
        if time.monotonic() > deadline:
            raise _OutOfTime
        return reproduces(candidate)

    try:
        changed = True
        while changed:
            changed = False
            for candidate in _deletions(best):
                result = attempt(candidate)
                if result is not None:
                    (best, found), changed = result, True
                    break
            else:
                for candidate in _simplifications(best):
                    result = attempt(candidate)
                    if result is not None:
                        (best, found), changed = result, True
                        break
    except _OutOfTime:
        pass
    return best, found


def _deletions(steps: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """Every trace with one step (never the setup) left out, latest first."""
    for i in range(len(steps) - 1, 0, -1):
        yield steps[:i] + steps[i + 1 :]


def _simplifications(steps: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for i, step in enumerate(steps):
        for plainer in _plainer(step):
            yield steps[:i] + [plainer] + steps[i + 1 :]


def _plainer(step: dict[str, Any]) -> Iterator[dict[str, Any]]:
    op = step["op"]
    if op == "crash":
        yield {"op": "turn", "action": step["action"]}  # the crash may not matter at all
    if op == "crash" and step["real"]:
        yield {**step, "real": False}
    if op == "setup":
        if step["ceiling"] is not None:
            yield {**step, "ceiling": None}
        if step["segment"] != 3:
            yield {**step, "segment": 3}
    if op == "install" and step["behaviour"] != PLAIN_BEHAVIOUR:
        yield {**step, "behaviour": PLAIN_BEHAVIOUR}
    if op == "install_versioned":
        yield {"op": "install", "hook": step["hook"], "behaviour": PLAIN_BEHAVIOUR}
    if op in ("replay", "redeliver") and step["writeback"] > 1:
        yield {**step, "writeback": 1}
    if op == "turn" and step["action"] != "complete_todo":
        yield {**step, "action": "complete_todo"}
    if op == "crash" and step["action"] != "complete_todo":
        yield {**step, "action": "complete_todo"}
