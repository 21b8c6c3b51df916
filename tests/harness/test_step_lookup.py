"""The gate's memo of pytest-bdd's step lookup answers exactly as the lookup does, once per
distinct step and place, and is in force with the pytest-bdd pwh pins."""

from __future__ import annotations

import importlib
from types import SimpleNamespace
from typing import Any

from pwh._harness.step_lookup import _memoised, memoise_step_lookup


def _step(kind: str, text: str) -> Any:
    return SimpleNamespace(type=kind, name=text)


def _node(nodeid: str) -> Any:
    return SimpleNamespace(nodeid=nodeid)


def test_one_lookup_per_step_text_type_and_file() -> None:
    calls: list[tuple[str, str, str]] = []

    def lookup(step: Any, fixturemanager: Any, node: Any) -> list[str]:
        calls.append((step.type, step.name, node.nodeid))
        return [f"{step.type}:{step.name}@{node.nodeid.partition('::')[0]}"]

    memo = _memoised(lookup)
    manager = object()
    first = list(memo(step=_step("given", "a hook"), fixturemanager=manager, node=_node("a.py::test_one")))
    again = list(memo(step=_step("given", "a hook"), fixturemanager=manager, node=_node("a.py::test_two[x]")))
    assert first == again == ["given:a hook@a.py"] and len(calls) == 1
    # Another type, another text, another file, another run's manager: each asked afresh.
    memo(step=_step("then", "a hook"), fixturemanager=manager, node=_node("a.py::test_one"))
    memo(step=_step("given", "a hook 2"), fixturemanager=manager, node=_node("a.py::test_one"))
    memo(step=_step("given", "a hook"), fixturemanager=manager, node=_node("b.py::test_one"))
    memo(step=_step("given", "a hook"), fixturemanager=object(), node=_node("a.py::test_one"))
    assert len(calls) == 5


def test_the_memo_is_installed_on_the_pinned_pytest_bdd() -> None:
    module = importlib.import_module("pytest_bdd.scenario")
    before = module.find_fixturedefs_for_step
    try:
        assert memoise_step_lookup() is True
        assert getattr(module.find_fixturedefs_for_step, "_pwh_memoised", False)
        wrapped = module.find_fixturedefs_for_step
        assert memoise_step_lookup() is True and module.find_fixturedefs_for_step is wrapped  # never wrapped twice
    finally:
        module.find_fixturedefs_for_step = before
