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

A new text is not matched against every definition either: each definition's parser is an
anchored regular expression (``parse`` compiles its format to one), and the literal characters it
starts with are read from it once; a definition whose prefix the text does not start with cannot
match, so its parser is never run (about 125 parsers a new text before, a few now). The prefix is
only a necessary condition, read conservatively (case-insensitive parsers compare ASCII only; a
parser it cannot read has none), so the definitions found, and their order, are pytest-bdd's.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["remember_step_lookups"]

_CACHE: dict[tuple[int, str, str, str], tuple[Any, ...]] = {}
# Per (fixture manager, module): every visible step definition, (fixturedef, its step context), in walk order.
_VISIBLE: dict[tuple[int, str], tuple[tuple[Any, Any], ...]] = {}
# Per (fixture manager, module): the visible definitions indexed by their literal prefixes.
_PREFIXES: dict[tuple[int, str], _PrefixIndex] = {}


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
                    _PREFIXES[place] = _PrefixIndex([_prefix(context) for _fd, context in definitions])
                candidates = _PREFIXES[place].candidates(str(step.name))
                found = tuple(definitions[i][0] for i in candidates if _matches(definitions[i][1], step))
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


class _PrefixIndex:
    """Which definitions a text may match, from their literal prefixes alone: a definition whose
    prefix the text does not start with cannot match it. A case-insensitive prefix (ASCII, lower
    case) is compared only with an ASCII text, lower-cased; a text that is not ASCII may match a
    case-insensitive parser in ways lower-casing does not see, so none of those is ruled out."""

    def __init__(self, prefixes: list[tuple[str, bool]]) -> None:
        self.unfiltered: list[int] = []
        self.folded: list[int] = []  # every definition with a case-insensitive prefix
        self.by_prefix: dict[tuple[bool, str], list[int]] = {}
        for index, (prefix, fold) in enumerate(prefixes):
            if not prefix:
                self.unfiltered.append(index)
                continue
            self.by_prefix.setdefault((fold, prefix), []).append(index)
            if fold:
                self.folded.append(index)
        self.lengths = sorted({(fold, len(prefix)) for fold, prefix in self.by_prefix})

    def candidates(self, text: str) -> list[int]:
        """The definitions ``text`` may match, in walk order."""
        folded = text.lower() if text.isascii() else None
        out = list(self.unfiltered)
        if folded is None:
            out.extend(self.folded)
        for fold, length in self.lengths:
            source = folded if fold else text
            if source is not None and len(source) >= length:
                out.extend(self.by_prefix.get((fold, source[:length]), ()))
        return sorted(out)


def _prefix(context: Any) -> tuple[str, bool]:
    """The literal characters every text a definition's parser matches must start with, and
    whether they compare case-insensitively: ``("", False)`` (no filter) for a parser that is not
    a plain string, ``parse`` or ``re`` parser, or whose expression cannot be read."""
    parser: Any = getattr(context, "parser", None)
    try:
        kind = type(parser).__name__
        if kind == "string" and isinstance(parser.name, str):
            return parser.name, False
        if kind == "re":
            return _literal_prefix(parser.regex)
        if kind in ("parse", "cfparse"):
            return _literal_prefix(parser.parser._match_re)
    except Exception:  # an unreadable parser is simply not filtered
        pass
    return "", False


def _literal_prefix(pattern: Any) -> tuple[str, bool]:
    """The literal characters a compiled expression, matched from the start of a text, begins
    with (after ``\\A``), read from the regular-expression parser; case-insensitive ones only while
    they are ASCII."""
    if not isinstance(pattern, re.Pattern) or not isinstance(pattern.pattern, str):
        return "", False
    from re import _constants as sre  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]

    fold = bool(pattern.flags & re.IGNORECASE)
    chars: list[str] = []
    for op, arg in sre_parse.parse(pattern.pattern, pattern.flags):
        if op is sre.AT and arg is sre.AT_BEGINNING_STRING and not chars:
            continue
        if op is not sre.LITERAL:
            break
        char = chr(arg)
        if fold and not char.isascii():
            break
        chars.append(char.lower() if fold else char)
    return "".join(chars), fold


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
