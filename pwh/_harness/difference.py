"""Where an expected and a seen value differ: the first differing path and both values there.

A failure that shows two long values cut at the same length often cuts both before the part that
differs (a rounded big integer deep in an intent's payload). So a check that compares two values
says where they part — ``$[0].payload.score``, and the two values at that path in full — and any
text too long to show whole is cut *around* its first difference, never before it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Difference", "TEXT_LIMIT", "cut_around", "cut_pair", "first_difference", "first_differing_index"]

TEXT_LIMIT = 400  # characters of one expected/seen text in a verdict (the cut keeps the first difference)
LEAF_LIMIT = 2000  # characters of one value at the differing path (each is shown on a line of its own)
_CONTEXT = 60  # characters kept before a difference when a text is cut around it
_ABSENT = "(absent)"


@dataclass(frozen=True)
class Difference:
    """The first path where two values differ, both values there (repr, cut around their own first
    difference only past ``LEAF_LIMIT``), and how many further paths differ."""

    path: str
    expected: str
    seen: str
    others: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "expected": self.expected, "seen": self.seen, "others": self.others}


def first_difference(wanted: Any, actual: Any) -> Difference | None:
    """The first of the paths where ``actual`` differs from ``wanted`` (mappings key by key in
    ``wanted``'s order then ``actual``'s extra keys, sequences index by index), or None when equal.
    A value of another type differs even where Python calls it equal (``1`` and ``True``, ``1`` and
    ``1.0``): what a journal records is compared as JSON would be. Two texts that are each a JSON
    object or array (a record's canonical text) are compared as what they encode."""
    found: list[tuple[str, str, str]] = []
    try:
        _walk(wanted, actual, "$", found)
    except RecursionError:  # nested past what Python can walk: the failure's texts still say it
        return None
    if not found:
        return None
    path, expected, seen = found[0]
    return Difference(path, *cut_pair(expected, seen, LEAF_LIMIT), others=len(found) - 1)


def _walk(wanted: Any, actual: Any, path: str, found: list[tuple[str, str, str]], limit: int = 1000) -> None:
    if len(found) >= limit:
        return
    if isinstance(wanted, Mapping) and isinstance(actual, Mapping):
        for key in wanted:
            here = _child(path, key)
            if key in actual:
                _walk(wanted[key], actual[key], here, found, limit)
            else:
                found.append((here, repr(wanted[key]), _ABSENT))
        found.extend((_child(path, key), _ABSENT, repr(actual[key])) for key in actual if key not in wanted)
        return
    if _is_sequence(wanted) and _is_sequence(actual):
        for i in range(max(len(wanted), len(actual))):
            here = f"{path}[{i}]"
            if i >= len(actual):
                found.append((here, repr(wanted[i]), _ABSENT))
            elif i >= len(wanted):
                found.append((here, _ABSENT, repr(actual[i])))
            else:
                _walk(wanted[i], actual[i], here, found, limit)
        return
    if isinstance(wanted, str) and isinstance(actual, str) and wanted != actual:
        inner = _json_texts(wanted, actual)
        if inner is not None:  # two encoded records (a journal's canonical text): compared as what they encode
            _walk(*inner, path, found, limit)
            return
    if type(wanted) is not type(actual) or (wanted != actual and repr(wanted) != repr(actual)):
        found.append((path, repr(wanted), repr(actual)))


def _json_texts(a: str, b: str) -> tuple[Any, Any] | None:
    """Both texts decoded, where each is a JSON object or array, else None."""
    if not a.startswith(("{", "[")) or not b.startswith(("{", "[")):
        return None
    try:
        return json.loads(a), json.loads(b)
    except (ValueError, RecursionError):
        return None


def _is_sequence(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray))


def _child(path: str, key: Any) -> str:
    if isinstance(key, str) and key.isascii() and key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{key!r}]"


def first_differing_index(a: str, b: str) -> int | None:
    """The index of the first character where ``a`` and ``b`` differ (the shorter one's length
    when one is a prefix of the other), or None when they are the same text."""
    if a == b:
        return None
    n = min(len(a), len(b))
    lo, hi = 0, n  # binary search on equal prefixes: long equal heads cost no per-character loop
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def cut_around(text: str, at: int, limit: int) -> str:
    """``text`` in at most ``limit`` characters (plus the elision marks), keeping the character at
    index ``at``: a head elided with ``…`` when ``at`` lies past the limit, a tail elided after."""
    if len(text) <= limit:
        return text
    context = min(_CONTEXT, limit // 4)
    start = 0 if at < limit - context else max(0, min(at - context, len(text) - limit))
    end = start + limit
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def cut_pair(expected: str, seen: str, limit: int = TEXT_LIMIT) -> tuple[str, str]:
    """Both texts cut to ``limit`` around the first character where they differ, so each still
    shows it; texts within the limit are whole."""
    at = first_differing_index(expected, seen)
    where = 0 if at is None else at
    return cut_around(expected, where, limit), cut_around(seen, where, limit)
