"""One step-definition lookup per distinct step, not per step of every scenario.

pytest-bdd finds the definition of a step by walking every fixture name pytest knows and asking
pytest which of its definitions the scenario can see (``pytest_bdd.scenario.
find_fixturedefs_for_step``): with the matrix's ~130 definitions and ~6,000 steps a run, that
walk was 30 % of a reference gate (17 of 58 s in a profile). Its answer depends only on the
step's type and text and on where the scenario is (which conftests and modules it sees), and the
step definitions are all registered when the modules are imported, before any scenario runs; so
the gate asks once per (type, text, test file) and keeps the answer for the run.

Where the installed pytest-bdd has no such function (another major version), nothing is changed
and the lookup is pytest-bdd's own.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["memoise_step_lookup"]

_MARK = "_pwh_memoised"


def memoise_step_lookup() -> bool:
    """Wrap pytest-bdd's step lookup in a per-process memo; True when it was (or already is) wrapped."""
    try:  # the module (the package's own ``scenario`` attribute is the decorator of that name)
        bdd_scenario = importlib.import_module("pytest_bdd.scenario")
    except ImportError:
        return False
    original = getattr(bdd_scenario, "find_fixturedefs_for_step", None)
    if original is None or not callable(original):
        return False
    if getattr(original, _MARK, False):
        return True
    setattr(bdd_scenario, "find_fixturedefs_for_step", _memoised(original))  # noqa: B010 - a module pytest-bdd may not type
    return True


def _memoised(original: Callable[..., Iterable[Any]]) -> Callable[..., Iterator[Any]]:
    answers: dict[tuple[Any, ...], tuple[Any, ...]] = {}

    def find_fixturedefs_for_step(step: Any, fixturemanager: Any, node: Any) -> Iterator[Any]:
        key = (id(fixturemanager), getattr(step, "type", None), getattr(step, "name", None), node.nodeid.partition("::")[0])
        found = answers.get(key)
        if found is None:
            found = answers[key] = tuple(original(step=step, fixturemanager=fixturemanager, node=node))
        return iter(found)

    setattr(find_fixturedefs_for_step, _MARK, True)
    return find_fixturedefs_for_step
