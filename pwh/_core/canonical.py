"""Canonical JSON: the one byte form every digest, size budget and replay comparison uses (rule JNL, P-identity-bytes).

UTF-8, keys sorted, no insignificant whitespace, no NaN or Infinity, only JSON types. Anything
else is refused with :class:`CanonicalError` naming the JSON path, so a hostile result can never
make two different values hash alike or crash the caller.
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
import types
from types import MappingProxyType
from typing import Any

from pwh._core.codes import json_path

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
    code runs; a read-only mapping proxy (the frozen hook input) counts only when it wraps an
    exact dict, found without calling the proxy's methods. Integers must fit in 64 bits (portable
    JSON; Python would also refuse to print a huge one); strings must be encodable as UTF-8 (no
    lone surrogates). Each dict is read from one atomic snapshot of its items, so another thread
    changing it meanwhile cannot make the copy fail. With ``max_bytes``, the copy stops as soon as
    a lower bound of the serialised size passes it, so a hostile ten-million-element answer costs
    little to refuse.
    """
    limit = max_bytes if max_bytes is not None else -1
    try:  # the usual plain value: one pass without path bookkeeping (nor byte counting, with no budget)
        return quick_copy(value, 0, [limit]) if limit >= 0 else _free_copy(value, 0)
    except (QuickCopyUnsure, UnicodeEncodeError):  # anything unusual: the pass that names the path decides
        return _plain(value, (), 0, [limit])


class QuickCopyUnsure(Exception):
    """The quick copy is not sure: the path-naming copy decides."""


def quick_copy(value: Any, depth: int, budget: list[int]) -> Any:
    """:func:`_plain` without the path, also for a part of a larger value: ``depth`` is where
    the part sits and ``budget`` the shared byte allowance (``[-1]`` for none). The same checks
    and byte accounting (the order of the charges does not matter: every charge is positive, so
    the budget is overrun at some point exactly when the total overruns it), so whatever it
    returns is exactly what ``_plain`` would. On any doubt it raises :class:`QuickCopyUnsure`
    (or ``UnicodeEncodeError``)."""
    kind = type(value)
    if kind is str:
        if not value.isascii():
            value.encode("utf-8")  # a lone surrogate raises: unsure
        _charge(budget, len(value) + 2)
        return value
    if kind is int:
        if value.bit_length() > 64:
            raise QuickCopyUnsure
        _charge(budget, 1)
        return value
    if value is None or kind is bool:
        _charge(budget, 4)
        return value
    if kind is float:
        if value != value or value in (math.inf, -math.inf):
            raise QuickCopyUnsure
        _charge(budget, 1)
        return value
    if depth >= MAX_DEPTH:  # its items would be deeper than _plain allows
        raise QuickCopyUnsure
    if kind is dict:
        try:
            items = list(value.items())
        except RuntimeError:
            raise QuickCopyUnsure from None
        _charge(budget, 2)
        out: dict[str, Any] = {}
        for key, item in items:
            if type(key) is not str:
                raise QuickCopyUnsure
            if not key.isascii():
                key.encode("utf-8")
            _charge(budget, len(key) + 3)
            out[key] = quick_copy(item, depth + 1, budget)
        return out
    if kind is list or kind is tuple:
        _charge(budget, 2)
        return [quick_copy(item, depth + 1, budget) for item in value]
    raise QuickCopyUnsure


def _free_copy(value: Any, depth: int) -> Any:
    """:func:`quick_copy` with no byte budget: the same checks, in the same order, without the
    counting (most copies have no budget, and the count was most of their cost)."""
    kind = type(value)
    if kind is str:
        if not value.isascii():
            value.encode("utf-8")  # a lone surrogate raises: unsure
        return value
    if kind is int:
        if value.bit_length() > 64:
            raise QuickCopyUnsure
        return value
    if value is None or kind is bool:
        return value
    if kind is float:
        if value != value or value in (math.inf, -math.inf):
            raise QuickCopyUnsure
        return value
    if depth >= MAX_DEPTH:  # its items would be deeper than _plain allows
        raise QuickCopyUnsure
    if kind is dict:
        try:
            items = list(value.items())
        except RuntimeError:
            raise QuickCopyUnsure from None
        out: dict[str, Any] = {}
        for key, item in items:
            if type(key) is not str:
                raise QuickCopyUnsure
            if not key.isascii():
                key.encode("utf-8")
            # A leaf the call would return as it is (an ASCII string, a 64-bit integer, None, a
            # bool) is taken here, without the call: most of a packet's values are such leaves.
            t = type(item)
            out[key] = (
                item
                if (t is str and item.isascii()) or (t is int and item.bit_length() <= 64) or item is None or t is bool
                else _free_copy(item, depth + 1)
            )
        return out
    if kind is list or kind is tuple:
        return [
            item
            if ((t := type(item)) is str and item.isascii()) or (t is int and item.bit_length() <= 64) or item is None or t is bool
            else _free_copy(item, depth + 1)
            for item in value
        ]
    raise QuickCopyUnsure


def _charge(budget: list[int], n: int) -> None:
    if budget[0] >= 0:
        budget[0] -= n
        if budget[0] < 0:
            raise QuickCopyUnsure


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
        _check_text(value, path)
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
    if kind is MappingProxyType:
        value = _proxied_dict(value, path)
        kind = dict
    if kind is dict:
        _spend(budget, 2, path)
        out: dict[str, Any] = {}
        for key, item in _items(value, path):
            if type(key) is not str:
                raise CanonicalError(json_path(path), "object keys must be strings")
            _check_text(key, path)
            _spend(budget, len(key) + 3, path)
            out[key] = _plain(item, path + (key,), depth + 1, budget)
        return out
    if kind is list or kind is tuple:
        _spend(budget, 2, path)
        return [_plain(item, path + (i,), depth + 1, budget) for i, item in enumerate(value)]
    raise CanonicalError(json_path(path), f"a {_type_name(value)} is not a JSON value")


def _items(value: dict[Any, Any], path: tuple[Any, ...]) -> list[tuple[Any, Any]]:
    """One atomic snapshot of a dict's items: another thread changing the dict meanwhile (a
    producer that keeps its result) can then no longer make a key vanish between two reads."""
    try:
        return list(value.items())
    except RuntimeError:  # changed while being listed (possible only if a finaliser ran meanwhile)
        raise CanonicalError(json_path(path), "the object changed while it was read") from None


def _check_text(text: str, path: tuple[Any, ...]) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise CanonicalError(json_path(path), "text is not valid Unicode (a lone surrogate)") from None


def _proxied_dict(proxy: Any, path: tuple[Any, ...]) -> dict[Any, Any]:
    """The exact dict behind a mapping proxy, read without calling any of the proxy's methods
    (they would run the wrapped mapping's own code)."""
    referents = gc.get_referents(proxy)
    if len(referents) == 1 and type(referents[0]) is dict:
        return referents[0]
    raise CanonicalError(json_path(path), "a read-only view of a non-JSON mapping is not a JSON value")


# Non-JSON built-in types named in a rejection. Any other type gets a generic word: a class name
# is the provider's own text (it may be private), and reading it may run a metaclass's code.
_NAMED_TYPES: tuple[type, ...] = (
    set,
    frozenset,
    bytes,
    bytearray,
    memoryview,
    complex,
    range,
    type,
    types.GeneratorType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.ModuleType,
)


def _type_name(value: Any) -> str:
    kind = type(value)
    return next((named.__name__ for named in _NAMED_TYPES if kind is named), "non-JSON object")


def canonical_bytes(value: Any) -> bytes:
    """Serialise ``value`` canonically; raises :class:`CanonicalError` for non-JSON input."""
    return dumps_plain(to_plain(value))


def dumps_plain(plain: Any) -> bytes:
    """The canonical bytes of a value that is already plain JSON (the output of :func:`to_plain`
    or a packet pwh built itself): the hot path skips the defensive copy."""
    return _encode(plain).encode("utf-8")


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _refuse(value: Any) -> Any:
    raise TypeError("not a JSON value")


# The C encoder behind _ENCODER, made once instead of on every call (a third of the cost of
# encoding a small packet), with the same settings, so the same bytes (a test holds the two
# equal). No circularity check: every value given here is a tree (to_plain copies, or pwh built
# it). Where CPython lacks its C accelerator, the standard encoder.
_MAKE_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODER = (
    None if _MAKE_C_ENCODER is None else _MAKE_C_ENCODER(None, _refuse, json.encoder.encode_basestring, None, ":", ",", True, False, False)
)


def _encode(plain: Any) -> str:
    """The canonical text of plain JSON. A function, not a closure made at import, so a mutation
    tool that switches code at call time reaches it."""
    if _C_ENCODER is None:
        return _ENCODER.encode(plain)
    return "".join(_C_ENCODER(plain, 0))


def digest(value: Any) -> str:
    """Hex SHA-256 of the canonical bytes of ``value``."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()
