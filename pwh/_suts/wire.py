"""Values as JSON across a process boundary, and back, without losing what a producer answered.

A producer's answer may be anything (a set, a mapping with integer keys, NaN); the rules judge
exactly that, so a value crossing to another process must arrive as it was sent. JSON carries
most of it; the rest is tagged: ``{"$set": [...]}`` a set, ``{"$pairs": [[k, v], ...]}`` a mapping
with a key that is not a string, ``{"$float": "NaN" | "Infinity" | "-Infinity"}`` a number JSON
cannot hold, ``{"$bytes": "<base64>"}`` bytes (standard base64, padded; the writeback seam's primary
receipt, say), ``{"$dict": {...}}`` a one-key dict whose key is one of these tags. So every line is
strict JSON that any language's parser reads. The decoder builds plain data types only, from a
fixed table: nothing received chooses code to run.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "decode", "encode"]

TAGS = ("$set", "$pairs", "$dict", "$float", "$bytes")
NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
MAX_DEPTH = 400


def encode(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON data :func:`decode` turns back into the same data; tuples become lists.
    Deeper than :data:`MAX_DEPTH`, or an object that is not data, becomes the nearest non-JSON
    value (an empty set): what crosses is still something no JSON-only reader takes for valid."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(value, Mapping):
        items = list(value.items())
        if all(isinstance(k, str) for k, _ in items):
            inner = {k: encode(v, depth + 1) for k, v in items}
            return {"$dict": inner} if len(inner) == 1 and next(iter(inner)) in TAGS else inner
        return {"$pairs": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in items]}
    if isinstance(value, (list, tuple)):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):
        return {"$set": [encode(v, depth + 1) for v in value]}
    if isinstance(value, (bytes, bytearray)):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, float) and not math.isfinite(value):
        return {"$float": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return {"$set": []}


def decode(value: Any) -> Any:
    """Plain data from :func:`encode`'s form (a JSON-only value decodes to itself)."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if len(value) == 1:
            ((key, inner),) = value.items()
            if key == "$set" and isinstance(inner, list):
                return {_hashable(decode(v)) for v in inner}
            if key == "$pairs" and isinstance(inner, list):
                return {_hashable(decode(k)): decode(v) for k, v in inner}
            if key == "$float" and isinstance(inner, str) and inner in NON_FINITE:
                return NON_FINITE[inner]
            if key == "$bytes" and isinstance(inner, str):
                try:
                    return base64.b64decode(inner.encode("ascii"), validate=True)
                except (binascii.Error, UnicodeEncodeError):
                    pass
            if key == "$dict" and isinstance(inner, dict):
                return {k: decode(v) for k, v in inner.items()}
        return {k: decode(v) for k, v in value.items()}
    return value


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value
