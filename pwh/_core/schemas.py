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
    :data:`MAX_ERRORS` of them. A valid value costs one compiled check, not a jsonschema walk."""
    fast = _fast(check)
    if fast is not None and fast(value):
        return []
    out: list[Rejection] = []
    for error in check.iter_errors(value):
        out.extend(_explain(error, code, prefix))
    out = sorted(set(out), key=lambda r: (r.path, r.reason))
    return out[:MAX_ERRORS]


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
