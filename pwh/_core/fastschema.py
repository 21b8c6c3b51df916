"""A compiled validity check for the JSON Schema subset pwh's contracts use.

jsonschema stays the judge of *why* a packet is invalid (the rejection paths and reasons); this
module answers only *whether* it is valid, about fifty times faster, so the dispatcher's hot path
does not pay jsonschema's generality on every valid packet. A schema using any keyword outside
the subset is not compiled (``compile_check`` returns ``None``) and jsonschema decides alone.
A property test holds the two to the same answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

_IGNORED = {"$schema", "$id", "title", "description", "$comment", "examples", "default", "$defs"}
_SUPPORTED = _IGNORED | {
    "type",
    "const",
    "enum",
    "pattern",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "$ref",
    "if",
    "then",
    "else",
    "oneOf",
}


class _Unsupported(Exception):
    pass


def compile_check(
    schema: Mapping[str, Any], resolve: Callable[[str], Mapping[str, Any]], *, regex: Callable[[str], Any] | None = None
) -> Check | None:
    """A predicate equivalent to ``Draft202012Validator(schema).is_valid``, or ``None``.
    ``regex`` compiles the schema's patterns (a linear-time engine for a run-time schema)."""
    try:
        return _compile(schema, _Resolver(schema, resolve, regex or re.compile), {})
    except (_Unsupported, KeyError, IndexError, TypeError):
        return None


class _Resolver:
    """Resolves ``#/...`` pointers inside the document being compiled and other ids via
    ``resolve``; a resolved document becomes the base for its own local pointers."""

    def __init__(self, root: Any, remote: Callable[[str], Mapping[str, Any]], regex: Callable[[str], Any] = re.compile) -> None:
        self.root = root
        self.remote = remote
        self.regex = regex

    def __call__(self, ref: str) -> tuple[Any, _Resolver]:
        if ref.startswith("#"):
            node = self.root
            for part in [p for p in ref[1:].split("/") if p]:
                part = part.replace("~1", "/").replace("~0", "~")
                node = node[int(part)] if type(node) is list else node[part]
            return node, self
        doc = self.remote(ref)
        return doc, _Resolver(doc, self.remote, self.regex)


def _is_int(v: Any) -> bool:
    return (type(v) is int) or (type(v) is float and v.is_integer())


_TYPES: dict[str, Check] = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    "integer": lambda v: type(v) is not bool and _is_int(v),
    "number": lambda v: type(v) in (int, float),
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
}


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality as jsonschema means it: booleans are not numbers."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if type(a) in (int, float) and type(b) in (int, float):
        return a == b
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _compile(schema: Any, resolve: Any, seen: dict[str, Check]) -> Check:
    if schema is True:
        return lambda v: True
    if schema is False:
        return lambda v: False
    if type(schema) is not dict or not set(schema) <= _SUPPORTED:
        raise _Unsupported
    fused = _fused(schema, resolve, seen)
    if fused is not None:
        return fused
    checks: list[Check] = []
    if "$ref" in schema:
        ref = schema["$ref"]
        key = ref if not ref.startswith("#") else f"{id(resolve.root)}{ref}"
        if key not in seen:
            box: list[Check] = []
            seen[key] = lambda v: box[0](v)
            target, base = resolve(ref)
            box.append(_compile(target, base, seen))
        checks.append(seen[key])
    if "type" in schema:
        kinds = schema["type"] if type(schema["type"]) is list else [schema["type"]]
        if not all(k in _TYPES for k in kinds):
            raise _Unsupported
        preds = [_TYPES[k] for k in kinds]
        checks.append(preds[0] if len(preds) == 1 else (lambda v: any(p(v) for p in preds)))
    if "const" in schema:
        want = schema["const"]
        if type(want) is str:
            checks.append(lambda v: type(v) is str and v == want)
        elif want is None or type(want) is bool:  # a singleton: JSON-equal to it is being it (0 is not false)
            checks.append(lambda v: v is want)
        else:
            checks.append(lambda v: _json_equal(v, want))
    if "enum" in schema:
        options = list(schema["enum"])
        if all(type(o) is str for o in options):
            names = frozenset(options)
            checks.append(lambda v: type(v) is str and v in names)
        else:
            checks.append(lambda v: any(_json_equal(v, o) for o in options))
    if "pattern" in schema:
        rx = resolve.regex(schema["pattern"])
        checks.append(lambda v: type(v) is not str or rx.search(v) is not None)
    for key, op in (("minLength", lambda n, m: n >= m), ("maxLength", lambda n, m: n <= m)):
        if key in schema:
            bound = schema[key]
            checks.append(_length_check(bound, op))
    if "minimum" in schema:
        lo = schema["minimum"]
        checks.append(lambda v: type(v) not in (int, float) or v >= lo)
    if "maximum" in schema:
        hi = schema["maximum"]
        checks.append(lambda v: type(v) not in (int, float) or v <= hi)
    checks.extend(_object_checks(schema, resolve, seen))
    checks.extend(_array_checks(schema, resolve, seen))
    if "if" in schema:
        cond = _compile(schema["if"], resolve, seen)
        then = _compile(schema.get("then", True), resolve, seen)
        other = _compile(schema.get("else", True), resolve, seen)
        checks.append(lambda v: then(v) if cond(v) else other(v))
    elif "then" in schema or "else" in schema:
        pass  # without "if", then/else are ignored by the specification
    if "oneOf" in schema:
        subs = [_compile(s, resolve, seen) for s in schema["oneOf"]]
        checks.append(lambda v: sum(1 for s in subs if s(v)) == 1)
    if len(checks) == 1:
        return checks[0]
    sequence = tuple(checks)

    def every(v: Any) -> bool:
        for c in sequence:
            if not c(v):
                return False
        return True

    return every


def _fused(schema: dict[str, Any], resolve: Any, seen: dict[str, Check]) -> Check | None:
    """One closure for the two node shapes the contracts are made of (a typed token, a closed
    object), instead of a sequence of one closure per keyword: half the calls on the hot path."""
    keys = set(schema) - _IGNORED
    kind = schema.get("type")
    if kind == "string" and keys <= {"type", "pattern", "maxLength"}:
        search = resolve.regex(schema["pattern"]).search if "pattern" in schema else None
        most = schema.get("maxLength")
        if most is None and search is not None:
            return lambda v: type(v) is str and search(v) is not None
        if most is not None and search is None:
            return lambda v: type(v) is str and len(v) <= most
        if most is not None and search is not None:
            return lambda v: type(v) is str and len(v) <= most and search(v) is not None
        return None
    if kind == "object" and keys <= {"type", "properties", "required", "additionalProperties"}:
        inner = _object_checks(schema, resolve, seen)
        if not inner:
            return None
        members = inner[0]
        return lambda v: type(v) is dict and members(v)
    return None


def _object_checks(schema: dict[str, Any], resolve: Any, seen: dict[str, Check]) -> list[Check]:
    out: list[Check] = []
    props = {k: _compile(s, resolve, seen) for k, s in schema.get("properties", {}).items()}
    required = tuple(schema.get("required", ()))
    extra = schema.get("additionalProperties", True)
    extra_check = None if extra is True else _compile(extra, resolve, seen)
    if props or required or extra_check is not None:

        def check(v: Any) -> bool:
            if type(v) is not dict:
                return True
            for key in required:
                if key not in v:
                    return False
            for key, value in v.items():
                sub = props.get(key)
                if sub is not None:
                    if not sub(value):
                        return False
                elif extra_check is not None and not extra_check(value):
                    return False
            return True

        out.append(check)
    return out


def _array_checks(schema: dict[str, Any], resolve: Any, seen: dict[str, Check]) -> list[Check]:
    out: list[Check] = []
    if "items" in schema:
        item = _compile(schema["items"], resolve, seen)

        def items(v: Any) -> bool:
            if type(v) is list:
                for x in v:
                    if not item(x):
                        return False
            return True

        out.append(items)
    if "minItems" in schema:
        lo = schema["minItems"]
        out.append(lambda v: type(v) is not list or len(v) >= lo)
    if "maxItems" in schema:
        hi = schema["maxItems"]
        out.append(lambda v: type(v) is not list or len(v) <= hi)
    if schema.get("uniqueItems"):
        out.append(lambda v: type(v) is not list or _unique(v))
    return out


def _unique(items: list[Any]) -> bool:
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            if _json_equal(a, b):
                return False
    return True


def _length_check(bound: Any, op: Callable[[int, Any], bool]) -> Callable[[Any], bool]:
    """A string-length bound as a check: anything but a string passes (another keyword judges it)."""
    return lambda v: type(v) is not str or op(len(v), bound)
