"""Deep-immutable views of plain JSON, so no provider can change what the next one sees."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any


def freeze(value: Any) -> Any:
    """dicts become read-only mappings and lists become tuples, all the way down."""
    if type(value) is dict:
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if type(value) is list:
        return tuple(freeze(v) for v in value)
    return value
