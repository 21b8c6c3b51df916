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
from jsonschema import Draft202012Validator, ValidationError, validators

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
        except Exception:
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


def _linear_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and compile_linear(pattern).search(instance) is None:
        yield ValidationError("does not match the pattern")


def _linear_pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        rx = compile_linear(pattern)
        for key, value in instance.items():
            if rx.search(key) is not None:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _linear_additional_properties(validator: Any, extra_schema: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    patterns = [compile_linear(p) for p in schema.get("patternProperties", {})]
    extras = [k for k in instance if k not in known and not any(rx.search(k) is not None for rx in patterns)]
    if validator.is_type(extra_schema, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], extra_schema, path=extra)
    elif extra_schema is False and extras:
        yield ValidationError("additional properties are not allowed")


# Draft 2020-12 with every keyword that matches a regular expression (pattern, patternProperties,
# and additionalProperties, which reads patternProperties) on the linear engine.
PayloadValidator = validators.extend(
    Draft202012Validator,
    {
        "pattern": _linear_pattern,
        "patternProperties": _linear_pattern_properties,
        "additionalProperties": _linear_additional_properties,
    },
)


def python_equivalent(pattern: str) -> re.Pattern[str]:
    """Only for tests: the backtracking compile of the same pattern."""
    return re.compile(pattern)
