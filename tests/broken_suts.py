"""Kept for old command lines (``--sut tests.broken_suts:NAME``): the mutants now live in
:mod:`pwh._suts.mutants`."""

from __future__ import annotations

from typing import Any

from pwh._suts.mutants import MUTANTS, caught_by

BROKEN: dict[str, str] = caught_by("matrix")


def __getattr__(name: str) -> Any:
    found = MUTANTS.get(name)
    if found is None:
        raise AttributeError(name)
    return found.factory
