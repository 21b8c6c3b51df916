"""Linear-time matching for the regular expressions a capability supplies (payload schemas).

An intent kind's payload schema is run-time data from a capability, and its ``pattern`` (or
``patternProperties``) is matched in the host, after the provider answered and outside any
provider's time limit. With a backtracking engine a pattern such as ``^(a+)+$`` and a 30-character
answer stall the dispatch for minutes. RE2 (google-re2, the bindings Google publishes) matches in
time linear in the text, whatever the pattern, and reads ``$`` as JSON Schema (ECMA-262) does:
the end of the text only, so the Python idiom ``(?!\\n)$`` (refuse a trailing newline, which
Python's ``$`` would allow) means plain ``$`` there and is rewritten to it. A pattern RE2 cannot
run (a backreference, any other lookaround) is refused when the kind is registered.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern is a rejection, not a line on stderr
_PY_END_IDIOM = "(?!\\n)$"


class LinearRegexUnsupported(ValueError):
    """The pattern needs a backtracking engine (a backreference or a lookaround)."""


class _Linear:
    __slots__ = ("_rx", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        text = pattern.replace(_PY_END_IDIOM, "$") if pattern.endswith(_PY_END_IDIOM) else pattern
        try:
            self._rx = re2.compile(text, options=_OPTIONS)
        except Exception as exc:  # re2.error: not a pattern RE2 can run
            raise LinearRegexUnsupported(pattern) from exc

    def search(self, text: str) -> Any:
        if type(text) is not str:
            return None
        try:
            return self._rx.search(text)
        except Exception:  # noqa: BLE001 - text RE2 cannot take (a lone surrogate): no match
            return None


@lru_cache(maxsize=4096)
def compile_linear(pattern: str) -> _Linear:
    """The pattern compiled for linear-time ``search``; :class:`LinearRegexUnsupported` if RE2
    cannot run it."""
    if type(pattern) is not str:
        raise LinearRegexUnsupported(repr(pattern))
    return _Linear(pattern)


def patterns_in(schema: Any) -> list[str]:
    """Every ``pattern`` and ``patternProperties`` key anywhere in ``schema``."""
    found: list[str] = []
    todo = [schema]
    while todo:
        node = todo.pop()
        if type(node) is dict:
            if type(node.get("pattern")) is str:
                found.append(node["pattern"])
            props = node.get("patternProperties")
            if type(props) is dict:
                found.extend(k for k in props if type(k) is str)
            todo.extend(node.values())
        elif type(node) is list:
            todo.extend(node)
    return found


def python_equivalent(pattern: str) -> re.Pattern[str]:
    """Only for tests: the backtracking compile of the same pattern."""
    return re.compile(pattern)
