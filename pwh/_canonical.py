"""Canonical JSON: the one byte form every digest, size budget and replay comparison uses (SPEC §3).

UTF-8, keys sorted, no insignificant whitespace, no NaN or Infinity, only JSON types. Anything
else is refused with :class:`CanonicalError` naming the JSON path, so a hostile result can never
make two different values hash alike or crash the caller.
"""

from __future__ import annotations

import hashlib
import json
import math
from types import MappingProxyType
from typing import Any

from ._codes import json_path

MAX_DEPTH = 64


class CanonicalError(ValueError):
    """The value is not plain JSON; ``path`` names where, ``reason`` says what."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def to_plain(value: Any, *, max_bytes: int | None = None) -> Any:
    """Copy ``value`` into plain dict/list/str/int/float/bool/None, refusing anything else.

    Only exact built-in types are accepted (no subclasses, no ``isinstance``), so objects with
    hostile ``__eq__``, ``__hash__``, ``__str__`` or ``__class__`` are rejected before any of their
    code runs. Integers must fit in 64 bits (portable JSON; Python would also refuse to print a
    huge one). With ``max_bytes``, the copy stops as soon as a lower bound of the serialised size
    passes it, so a hostile ten-million-element answer costs little to refuse.
    """
    budget = [max_bytes if max_bytes is not None else -1]
    return _plain(value, (), 0, budget)


def _spend(budget: list[int], n: int, path: tuple[Any, ...]) -> None:
    if budget[0] >= 0:
        budget[0] -= n
        if budget[0] < 0:
            raise CanonicalError("$", "the serialised value is over its byte budget")


def _plain(value: Any, path: tuple[Any, ...], depth: int, budget: list[int]) -> Any:
    if depth > MAX_DEPTH:
        raise CanonicalError(json_path(path), f"nested deeper than {MAX_DEPTH} levels")
    kind = type(value)
    if kind is str:
        _spend(budget, len(value) + 2, path)
        return value
    if value is None or kind is bool:
        _spend(budget, 4, path)
        return value
    if kind is int:
        if value.bit_length() > 64:
            raise CanonicalError(json_path(path), "integer outside the 64-bit range")
        _spend(budget, 1, path)
        return value
    if kind is float:
        if math.isnan(value) or math.isinf(value):
            raise CanonicalError(json_path(path), "NaN or Infinity is not JSON")
        _spend(budget, 1, path)
        return value
    if kind is dict or kind is MappingProxyType:
        _spend(budget, 2, path)
        out: dict[str, Any] = {}
        for key in list(value.keys()):
            if type(key) is not str:
                raise CanonicalError(json_path(path), "object keys must be strings")
            _spend(budget, len(key) + 3, path)
            out[key] = _plain(value[key], path + (key,), depth + 1, budget)
        return out
    if kind is list or kind is tuple:
        _spend(budget, 2, path)
        return [_plain(item, path + (i,), depth + 1, budget) for i, item in enumerate(value)]
    raise CanonicalError(json_path(path), f"a {_type_name(value)} is not a JSON value")


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
