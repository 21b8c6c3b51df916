"""``pwh scenarios steps``: every step of the library in readable form, and the closest steps to
one that has no definition (what ``pwh scenarios check`` suggests).

A step's readable form is its pattern with each parameter shown as ``<name>``; a parameter whose
pattern is a plain alternation of phrases (the hook behaviours, the event kinds, ...) lists those
phrases, so a contributor can pick one without reading the regex. Nothing here runs a step.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from pwh._harness.scenarios_check import step_contexts

__all__ = ["Step", "catalog", "catalog_lines", "closest", "readable"]

_PARSE_FIELD = re.compile(r"\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)?(?::[^}]*)?\}")


@dataclass(frozen=True)
class Step:
    module: str
    kind: str  # given | when | then
    text: str  # readable: parameters as <name>
    parameters: dict[str, list[str] | str] = field(default_factory=dict)  # name -> phrases, or its pattern


_META = set(".^$*+?{}[]()|")


def _literal_alternatives(pattern: str) -> list[str] | None:
    """The phrases of a pattern that is only ``a|b|c`` of literal text (escapes allowed), else
    ``None``."""
    phrases, current, i = [], [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= len(pattern) or pattern[i + 1].isalnum():  # \d, \s, ...: a class, not a literal
                return None
            current.append(pattern[i + 1])
            i += 2
            continue
        if ch == "|":
            phrases.append("".join(current))
            current = []
        elif ch in _META:
            return None
        else:
            current.append(ch)
        i += 1
    phrases.append("".join(current))
    return phrases if len(phrases) > 1 or phrases[0] else None


def _group_spans(pattern: str) -> list[tuple[str, int, int]]:
    """(name, start, end) of each top-level named group ``(?P<name>...)`` in ``pattern``."""
    spans = []
    for match in re.finditer(r"\(\?P<(?P<name>[A-Za-z_][A-Za-z0-9_]*)>", pattern):
        depth, i = 1, match.end()
        while i < len(pattern) and depth:
            if pattern[i] == "\\":
                i += 2
                continue
            depth += {"(": 1, ")": -1}.get(pattern[i], 0)
            i += 1
        spans.append((match.group("name"), match.start(), i))
    return [s for s in spans if not any(o[1] < s[1] < o[2] for o in spans if o is not s)]


def readable(parser: Any) -> tuple[str, dict[str, list[str] | str]]:
    """A step parser's pattern as text with ``<name>`` parameters, and what each parameter takes."""
    kind = type(parser).__name__
    name = str(getattr(parser, "name", ""))
    if kind == "re":
        text, params, last = [], {}, 0
        for group, start, end in _group_spans(name):
            text.append(name[last:start])
            inner = name[start + len(f"(?P<{group}>") : end - 1]
            params[group] = _literal_alternatives(inner) or inner
            text.append(f"<{group}>")
            last = end
        text.append(name[last:])
        shown = re.sub(r"\\(.)", r"\1", "".join(text)).strip("^$")
        return shown, params
    if kind in ("parse", "cfparse"):
        params = {m.group("name") or "?": "a value" for m in _PARSE_FIELD.finditer(name)}
        return _PARSE_FIELD.sub(lambda m: f"<{m.group('name') or '?'}>", name), params
    return name, {}


def catalog(modules: Iterable[ModuleType]) -> list[Step]:
    """Every step definition of ``modules``, in definition order within each module."""
    out = []
    for module in modules:
        for context in step_contexts([module]):
            text, params = readable(context.parser)
            out.append(Step(module.__name__.rpartition(".")[2], context.type, text, params))
    return out


def catalog_lines(steps: list[Step]) -> list[str]:
    lines: list[str] = []
    module = None
    for step in steps:
        if step.module != module:
            module = step.module
            lines += ["", f"{module}:"]
        lines.append(f"  {step.kind.capitalize():<5} {step.text}")
        for name, takes in step.parameters.items():
            if isinstance(takes, list) and len(takes) <= 6:
                lines.append(f"          <{name}>: one of: {'; '.join(takes)}")
            elif isinstance(takes, list):
                lines.append(f"          <{name}>: one of these {len(takes)}:")
                lines += [f"            - {phrase}" for phrase in sorted(takes)]
            elif takes != "a value":
                lines.append(f"          <{name}>: text matching {takes}")
    return lines[1:] if lines and lines[0] == "" else lines


def closest(kind: str, text: str, steps: list[Step], n: int = 3) -> list[str]:
    """The readable steps of ``kind`` most like ``text`` (difflib's ratio, best first)."""
    same_kind = [s.text for s in steps if s.kind == kind]
    return difflib.get_close_matches(text, same_kind, n=n, cutoff=0.45)
