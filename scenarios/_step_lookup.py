"""pytest-bdd's step lookup, remembered: the same step text finds the same definitions.

For every step of every scenario, pytest-bdd 9 walks every fixture name the session knows and asks
pytest which definitions are visible to the scenario (``find_fixturedefs_for_step``): about 1.6 ms
a step here, a quarter of a whole gate run. The step definitions are all registered when the
bindings module is collected and every scenario of the matrix lives in that one module, so the
answer depends only on the step's type and text and on the module the scenario is in; it is kept
per (fixture manager, module, type, text). Fixtures registered later are the values of steps'
``target_fixture``, never step definitions, so they cannot change an answer.

The walk itself is done once per (fixture manager, module) too: it lists, in pytest-bdd's order,
every visible definition that is a step definition, with its context. A step text met for the
first time is then matched against that list alone (its type, then its parser), which is what
the walk does for each definition it finds; most texts of the matrix are met once (each carries
its own values), so this, not the memo, is what saves the walk.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["remember_step_lookups"]

_CACHE: dict[tuple[int, str, str, str], tuple[Any, ...]] = {}
# Per (fixture manager, module): every visible step definition, (fixturedef, its step context), in walk order.
_VISIBLE: dict[tuple[int, str], tuple[tuple[Any, Any], ...]] = {}


def remember_step_lookups() -> bool:
    """Wrap pytest-bdd's lookup once per process; ``False`` when this pytest-bdd has none to wrap
    (it then runs unchanged, only slower)."""
    # The module by name: ``import pytest_bdd.scenario as bdd`` binds the package's attribute of
    # that name, the ``scenario`` decorator, which has no lookup to wrap.
    bdd = importlib.import_module("pytest_bdd.scenario")
    original: Callable[..., Iterable[Any]] | None = getattr(bdd, "find_fixturedefs_for_step", None)
    if original is None or getattr(original, "_pwh_remembered", False):
        return original is not None
    visible_to = _visible_definitions(bdd)

    def find(step: Any, fixturemanager: Any, node: Any) -> Iterable[Any]:
        module = str(getattr(node, "nodeid", "")).split("::", 1)[0]
        key = (id(fixturemanager), module, str(step.type), str(step.name))
        found = _CACHE.get(key)
        if found is None:
            if visible_to is None:
                found = tuple(original(step=step, fixturemanager=fixturemanager, node=node))
            else:
                place = (id(fixturemanager), module)
                definitions = _VISIBLE.get(place)
                if definitions is None:
                    definitions = _VISIBLE[place] = visible_to(fixturemanager, node)
                found = tuple(fd for fd, context in definitions if _matches(context, step))
            _CACHE[key] = found
        return found

    find._pwh_remembered = True  # type: ignore[attr-defined]
    find.__wrapped__ = original  # type: ignore[attr-defined]  # pytest-bdd's own, for whoever must reach it
    setattr(bdd, "find_fixturedefs_for_step", find)  # noqa: B010 - a module attribute pytest-bdd types as its own function
    return True


def _matches(context: Any, step: Any) -> bool:
    """What pytest-bdd asks of each step definition it finds: the step's type (when the definition
    names one), then the definition's parser."""
    if context.type is not None and context.type != step.type:
        return False
    return bool(context.parser.is_matching(step.name))


def _visible_definitions(bdd: Any) -> Callable[[Any, Any], tuple[tuple[Any, Any], ...]] | None:
    """The walk pytest-bdd's lookup does, without the matching: every fixture name, each of its
    definitions visible to ``node``, kept when it is a step definition. ``None`` when this
    pytest-bdd lacks a piece of it (the lookup is then its own, memoised only)."""
    names = getattr(bdd, "get_fixture_names", None)
    defs_of = getattr(bdd, "getfixturedefs", None)
    registry = getattr(bdd, "step_function_context_registry", None)
    if names is None or defs_of is None or registry is None:
        return None

    def walk(fixturemanager: Any, node: Any) -> tuple[tuple[Any, Any], ...]:
        out = []
        for fixturename in names(fixturemanager=fixturemanager):
            for fixturedef in defs_of(fixturemanager, fixturename, node) or []:
                context = registry.get(fixturedef.func)
                if context is not None:
                    out.append((fixturedef, context))
        return tuple(out)

    return walk
