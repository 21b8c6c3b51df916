"""Canonical JSON: the one byte form every digest, size budget and replay comparison uses (SPEC §3).

UTF-8, keys sorted, no insignificant whitespace, no NaN or Infinity, only JSON types. Anything
else is refused with :class:`CanonicalError` naming the JSON path, so a hostile result can never
make two different values hash alike or crash the caller.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

from ._codes import json_path

MAX_DEPTH = 64


class CanonicalError(ValueError):
    """The value is not plain JSON; ``path`` names where, ``reason`` says what."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def to_plain(value: Any, _path: tuple[Any, ...] = (), _depth: int = 0) -> Any:
    """Copy ``value`` into plain dict/list/str/int/float/bool/None, refusing anything else.

    Only exact built-in types are accepted (no subclasses), so objects with hostile ``__eq__``,
    ``__hash__`` or ``__str__`` are rejected before any of their code runs.
    """
    if _depth > MAX_DEPTH:
        raise CanonicalError(json_path(_path), f"nested deeper than {MAX_DEPTH} levels")
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value
    if kind is float:
        if math.isnan(value) or math.isinf(value):
            raise CanonicalError(json_path(_path), "NaN or Infinity is not JSON")
        return value
    if kind is dict or (isinstance(value, Mapping) and _is_frozen_mapping(value)):
        out: dict[str, Any] = {}
        for key in list(value.keys()):
            if type(key) is not str:
                raise CanonicalError(json_path(_path), "object keys must be strings")
            out[key] = to_plain(value[key], _path + (key,), _depth + 1)
        return out
    if kind is list or kind is tuple:
        return [to_plain(item, _path + (i,), _depth + 1) for i, item in enumerate(value)]
    raise CanonicalError(json_path(_path), f"a {_type_name(value)} is not a JSON value")


def _is_frozen_mapping(value: Any) -> bool:
    # Our own immutable input view (types.MappingProxyType) is plain JSON underneath.
    return type(value).__name__ == "mappingproxy"


def _type_name(value: Any) -> str:
    try:
        return type(value).__name__[:40]
    except Exception:  # pragma: no cover - a type whose name cannot be read
        return "value"


def canonical_bytes(value: Any) -> bytes:
    """Serialise ``value`` canonically; raises :class:`CanonicalError` for non-JSON input."""
    return dumps_plain(to_plain(value))


def dumps_plain(plain: Any) -> bytes:
    """The canonical bytes of a value that is already plain JSON (the output of :func:`to_plain`
    or a packet pwh built itself): the hot path skips the defensive copy."""
    return _ENCODER.encode(plain).encode("utf-8")


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def digest(value: Any) -> str:
    """Hex SHA-256 of the canonical bytes of ``value``."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()
