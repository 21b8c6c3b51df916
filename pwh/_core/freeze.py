"""Deep-immutable views of plain JSON, so no provider can change what the next one sees."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

_LEAVES = frozenset({str, int, float, bool, type(None)})


def freeze(value: Any) -> Any:
    """dicts become read-only mappings and lists become tuples, all the way down."""
    kind = type(value)
    if kind is dict:
        return MappingProxyType({k: (v if type(v) in _LEAVES else freeze(v)) for k, v in value.items()})
    if kind is list:
        return tuple(v if type(v) in _LEAVES else freeze(v) for v in value)
    return value
