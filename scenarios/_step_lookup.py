"""pytest-bdd's step lookup, remembered: the same step text finds the same definitions.

For every step of every scenario, pytest-bdd 9 walks every fixture name the session knows and asks
pytest which definitions are visible to the scenario (``find_fixturedefs_for_step``): about 1.6 ms
a step here, a quarter of a whole gate run. The step definitions are all registered when the
bindings module is collected and every scenario of the matrix lives in that one module, so the
answer depends only on the step's type and text and on the module the scenario is in; it is kept
per (fixture manager, module, type, text). Fixtures registered later are the values of steps'
``target_fixture``, never step definitions, so they cannot change an answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["remember_step_lookups"]

_CACHE: dict[tuple[int, str, str, str], tuple[Any, ...]] = {}


def remember_step_lookups() -> bool:
    """Wrap pytest-bdd's lookup once per process; ``False`` when this pytest-bdd has none to wrap
    (it then runs unchanged, only slower)."""
    import pytest_bdd.scenario as bdd

    original: Callable[..., Iterable[Any]] | None = getattr(bdd, "find_fixturedefs_for_step", None)
    if original is None or getattr(original, "_pwh_remembered", False):
        return original is not None

    def find(step: Any, fixturemanager: Any, node: Any) -> Iterable[Any]:
        key = (id(fixturemanager), str(getattr(node, "nodeid", "")).split("::", 1)[0], str(step.type), str(step.name))
        found = _CACHE.get(key)
        if found is None:
            found = _CACHE[key] = tuple(original(step=step, fixturemanager=fixturemanager, node=node))
        return found

    find._pwh_remembered = True  # type: ignore[attr-defined]
    bdd.find_fixturedefs_for_step = find
    return True
