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


# -- the step library's own lookup (scenarios/_step_lookup.py): one walk per place, then matching ----


def _context(kind: str | None, pattern: str) -> Any:
    from pytest_bdd import parsers

    return SimpleNamespace(type=kind, parser=parsers.re(pattern))


def test_the_step_librarys_lookup_answers_as_pytest_bdds_own_walk(monkeypatch: Any) -> None:
    """Every (type, text) gets the definitions, in the order, pytest-bdd's walk finds; the walk
    over every fixture name is made once per fixture manager and module, whatever the texts."""
    import pytest_bdd.steps

    import scenarios._step_lookup as lookup

    module = importlib.import_module("pytest_bdd.scenario")
    funcs = {name: (lambda: None) for name in ("a", "b", "c", "d", "plain")}
    contexts = {
        funcs["a"]: _context("given", r"a hook (\d+)"),
        funcs["b"]: _context(None, r"a hook 1"),  # any type
        funcs["c"]: _context("then", r"a hook \d+"),
        funcs["d"]: _context("given", r"a hook 2"),
    }
    defs = {name: SimpleNamespace(func=f, name=name) for name, f in funcs.items()}
    # Visibility depends on the node: "d" is visible only in b.py.
    visible = {"one": ["a", "plain"], "two": ["b", "c"], "three": ["d"]}
    walks: list[str] = []

    def names(fixturemanager: Any) -> list[str]:
        walks.append(fixturemanager.name)
        return list(visible)

    def fixturedefs(fixturemanager: Any, name: str, node: Any) -> list[Any] | None:
        return [defs[n] for n in visible[name] if n != "d" or node.nodeid.startswith("b.py")]

    monkeypatch.setattr(module, "get_fixture_names", names)
    monkeypatch.setattr(module, "getfixturedefs", fixturedefs)
    monkeypatch.setattr(module, "step_function_context_registry", contexts)
    monkeypatch.setattr(pytest_bdd.steps, "step_function_context_registry", contexts)
    # pytest-bdd's own lookup, unwrapped: another test in this process may have wrapped it already.
    original = getattr(module.find_fixturedefs_for_step, "__wrapped__", module.find_fixturedefs_for_step)
    monkeypatch.setattr(module, "find_fixturedefs_for_step", original)  # restored after the test
    monkeypatch.setattr(lookup, "_CACHE", {})
    monkeypatch.setattr(lookup, "_VISIBLE", {})
    assert lookup.remember_step_lookups() is True
    remembered = module.find_fixturedefs_for_step
    assert remembered is not original and lookup.remember_step_lookups() is True and module.find_fixturedefs_for_step is remembered

    manager = SimpleNamespace(name="m")
    cases = [
        (kind, text, nodeid)
        for kind in ("given", "when", "then")
        for text in ("a hook 1", "a hook 2", "a hook x")
        for nodeid in ("a.py::t", "b.py::t")
    ]
    for kind, text, nodeid in cases:
        walks.clear()
        expected = list(original(step=_step(kind, text), fixturemanager=manager, node=_node(nodeid)))
        walks.clear()
        got = list(remembered(step=_step(kind, text), fixturemanager=manager, node=_node(nodeid)))
        assert [d.name for d in got] == [d.name for d in expected], (kind, text, nodeid)
        assert walks in ([], ["m"])
    assert set(lookup._VISIBLE) == {(id(manager), "a.py"), (id(manager), "b.py")}  # one walk per module
    assert [d.name for d in remembered(step=_step("given", "a hook 2"), fixturemanager=manager, node=_node("b.py::u"))] == ["a", "d"]


def test_the_prefix_index_never_rules_out_a_definition_that_matches() -> None:
    """A definition is skipped only when its literal prefix rules the text out: every parser kind,
    case-insensitive ones (parse's default, re.IGNORECASE) and texts that are not ASCII included."""
    import re

    from pytest_bdd import parsers

    import scenarios._step_lookup as lookup

    made = [
        parsers.parse('hook "{hook_id}" answers {late:d} ms late'),
        parsers.parse("the profile allows at most {n:d} hooks"),
        parsers.parse("{who} installs a hook"),
        parsers.parse("Straße {n:d}", case_sensitive=True),
        parsers.cfparse("a hook {n:d} is ready"),
        parsers.re(r'hook "(?P<hook_id>[a-z]+)" is installed'),
        parsers.re(r"(?:the|a) hook runs"),
        parsers.re(r"the hook (runs|hangs)"),
        parsers.re(r"KELVIN (?P<k>\d+)", re.IGNORECASE),
        parsers.re(r"(?i)ſtep \d+"),
        parsers.re(r"ab*c"),
        parsers.string("a plain step"),
    ]
    contexts = [SimpleNamespace(type=None, parser=p) for p in made] + [SimpleNamespace(type=None, parser=object())]
    index = lookup._PrefixIndex([lookup._prefix(c) for c in contexts])
    texts = [
        'hook "a" answers 5 ms late',
        'HOOK "a" ANSWERS 5 MS LATE',
        'hook "abc" is installed',
        'Hook "abc" is installed',
        "the profile allows at most 3 hooks",
        "The Profile Allows At Most 3 Hooks",
        "somebody installs a hook",
        "Straße 4",
        "STRASSE 4",
        "a hook 3 is ready",
        "A HOOK 3 IS READY",
        "a hook runs",
        "the hook runs",
        "the hook hangs",
        "kelvin 3",
        "\u212aelvin 3",  # the Kelvin sign matches k under IGNORECASE
        "step 1",
        "STEP 2",
        "\u017ftep 3",
        "ac",
        "abbbc",
        "a plain step",
        "A plain step",
        "",
    ]
    for text in texts:
        candidates = set(index.candidates(text))
        for i, context in enumerate(contexts[:-1]):
            if context.parser.is_matching(text):
                assert i in candidates, (text, context.parser.name)
        assert len(contexts) - 1 in candidates  # a parser it cannot read is never ruled out
    # Ruled in by its prefix: 0 and 5; without a readable prefix: a leading field (2), a leading
    # group (6), a case-insensitive letter that is not ASCII (9), an unknown parser (12).
    assert index.candidates('hook "a" answers 5 ms late') == [0, 2, 5, 6, 9, 12]
    assert index.candidates("kelvin 3") == [2, 6, 8, 9, 12] and 8 in index.candidates("\u212aelvin 3")
