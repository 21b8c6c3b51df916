"""The JSON Schema (2020-12) files under ``pwh/schemas/``: loading, cross-references, and errors
turned into stable rejections.

Schemas are data shipped in the public packet, so another language can validate the same shapes.
jsonschema's own messages quote the offending value; a rejection here says only *where* and
*what kind* of rule failed, because a value in a hostile packet may be private.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from pwh._core.codes import Rejection, json_path
from pwh._core.fastschema import compile_check
from pwh._core.linear_regex import PayloadValidator, compile_linear, patterns_in

SCHEMA_NAMES: tuple[str, ...] = (
    "registration",
    "source_receipt",
    "event_projection",
    "hook_input",
    "hook_result",
    "intent",
    "sidecar_receipt",
    "packet_manifest",
    "gate_verdict",
)

MAX_ERRORS = 8


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The parsed schema document ``name`` (one of :data:`SCHEMA_NAMES`)."""
    text = resources.files("pwh").joinpath("schemas", f"{name}.json").read_text("utf-8")
    return json.loads(text)


@lru_cache(maxsize=1)
def _registry() -> Registry:
    resources_ = [(load_schema(n)["$id"], Resource.from_contents(load_schema(n))) for n in SCHEMA_NAMES]
    return Registry().with_resources(resources_)


@cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(load_schema(name), registry=_registry())


def compile_schema(schema: dict[str, Any]) -> Draft202012Validator:
    """A validator for a schema supplied at run time (an intent kind's payload schema).

    Raises ``ValueError`` for a schema that is not valid 2020-12 or holds a reference that
    cannot be resolved here: refused when it is registered, it can never fail a dispatch later
    (nothing is ever fetched from the network; only local pointers and pwh's own schemas resolve).
    Its regular expressions are matched in linear time (pwh/_core/linear_regex.py); one the linear
    engine cannot run is refused here too.
    """
    Draft202012Validator.check_schema(schema)
    base = "urn:pwh:payload-schema"
    resolver = _registry().with_resource(base, Resource.from_contents(schema, default_specification=DRAFT202012)).resolver(base)
    for ref in _references(schema):
        try:
            resolver.lookup(ref)
        except Exception:
            raise UnresolvableReference("a $ref of the schema cannot be resolved") from None
    for pattern in patterns_in(schema):
        compile_linear(pattern)
    return PayloadValidator(schema, registry=_registry())


class UnresolvableReference(ValueError):
    """A payload schema refers to something that cannot be resolved here."""


# Keywords whose values are data, not subschemas: a {"$ref": ...} inside them is not a reference.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


def _references(schema: Any) -> list[str]:
    """Every ``$ref`` / ``$dynamicRef`` string in ``schema``, without recursion (a deep schema
    must not exhaust the stack)."""
    found: list[str] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                    found.append(value)
                elif key not in _DATA_KEYWORDS:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _resolve(ref: str) -> dict[str, Any]:
    return _registry().contents(ref)


_FAST: dict[int, Any] = {}


def _fast(check: Draft202012Validator) -> Any:
    """The compiled validity predicate for ``check``'s schema (cached; ``None`` if unsupported)."""
    key = id(check)
    if key not in _FAST:
        regex = compile_linear if isinstance(check, PayloadValidator) else None
        _FAST[key] = (check, compile_check(check.schema, _resolve, regex=regex))  # keep check alive: ids stay unique
    return _FAST[key][1]


def schema_rejections(check: Draft202012Validator, value: Any, code: str, prefix: tuple[Any, ...] = ()) -> list[Rejection]:
    """Every schema violation in ``value`` as a :class:`Rejection`, sorted by path, at most
    :data:`MAX_ERRORS` of them. A valid value costs one compiled check, not a jsonschema walk.

    An invalid one costs the walk that says why, once per value: the rejections of a small plain
    value (:func:`_exact_text`) are kept by the exact text of the value, the check and the path
    prefix, so the same bad packet seen again (a provider that always answers it, a retry, a
    recovery) is explained from what was kept. A new list each time."""
    fast = _fast(check)
    if fast is not None and fast(value):
        return []
    text = _exact_text(value)
    key = (id(check), code, prefix, text) if text is not None and _hashable_prefix(prefix) else None
    if key is not None:
        kept = _EXPLAINED.get(key)
        if kept is not None:
            return list(kept)
    out: list[Rejection] = []
    for error in check.iter_errors(value):
        out.extend(_explain(error, code, prefix))
    out = sorted(set(out), key=lambda r: (r.path, r.reason))[:MAX_ERRORS]
    if key is not None and id(check) in _FAST:  # the check is kept alive there: its id is not reused
        if len(_EXPLAINED) >= _EXPLAINED_MAX:
            _EXPLAINED.pop(next(iter(_EXPLAINED)))
        _EXPLAINED[key] = tuple(out)
    return out


_EXPLAINED: dict[tuple[Any, ...], tuple[Rejection, ...]] = {}
_EXPLAINED_MAX = 1024
_EXACT_TEXT_MAX = 4096  # characters: larger values are explained afresh (and never kept)


def _hashable_prefix(prefix: Any) -> bool:
    return type(prefix) is tuple and all(type(p) is str or type(p) is int for p in prefix)


def _exact_text(value: Any) -> str | None:
    """``repr(value)`` when ``value`` is a plain JSON tree of exact types (dicts with string keys,
    lists, strings, integers, finite floats, booleans, None) and its text is short, else None.
    For such a tree the text names the value exactly, key order and types included (``1``,
    ``1.0`` and ``True`` differ), so equal texts mean values the schema walk cannot tell apart."""
    stack = [value]
    budget = 256  # nodes: a larger (or deeper, or cyclic) tree is not kept
    while stack:
        node = stack.pop()
        budget -= 1
        if budget < 0:
            return None
        kind = type(node)
        if kind is dict:
            for key, item in node.items():
                if type(key) is not str:
                    return None
                stack.append(item)
        elif kind is list:
            stack.extend(node)
        elif kind is float:
            if node != node or node in (float("inf"), float("-inf")):
                return None
        elif not (kind is str or kind is int or kind is bool or node is None):
            return None
    try:
        text = repr(value)
    except ValueError:  # an integer too long to print
        return None
    return text if len(text) <= _EXACT_TEXT_MAX else None


def _explain(error: Any, code: str, prefix: tuple[Any, ...]) -> list[Rejection]:
    where = prefix + tuple(error.absolute_path)
    kind = error.validator
    instance = error.instance
    if kind == "required" and isinstance(instance, dict):
        missing = [k for k in error.validator_value if k not in instance]
        return [Rejection(code, json_path(where + (k,)), "required field is missing") for k in missing]
    if kind == "additionalProperties" and isinstance(instance, dict):
        known = set(error.schema.get("properties", {}))
        extra = [k for k in instance if k not in known]
        return [Rejection(code, json_path(where + (k,)), "field is not allowed here") for k in extra]
    if kind in ("if", "then", "else", "allOf", "anyOf", "oneOf") and error.context:
        # Report the most specific sub-error instead of the combinator.
        best = max(error.context, key=lambda e: len(e.absolute_path))
        return _explain(best, code, prefix)
    return [Rejection(code, json_path(where), _REASONS.get(kind, "violates the schema"))]


_REASONS = {
    "type": "has the wrong JSON type",
    "const": "must have the one value the contract fixes",
    "enum": "is not one of the allowed values",
    "pattern": "does not match the allowed token pattern",
    "minimum": "is below the minimum",
    "maximum": "is over the core ceiling",
    "minItems": "has too few items",
    "maxItems": "has too many items",
    "uniqueItems": "has duplicate items",
    "minLength": "is too short",
    "maxLength": "is too long",
    "minProperties": "has too few fields",
    "maxProperties": "has too many fields",
    "format": "is not in the required format",
}
