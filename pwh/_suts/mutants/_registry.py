"""The mutant registry: every deliberately broken SUT, the row whose rule it breaks, the clause,
and which of pwh's instruments (the Gherkin matrix, the stateful models) must catch it.

A mutant ``caught_by=("profile",)`` breaks only pwh's reading where the documents are silent: the
matrix must show it as a profile divergence on its row and must *pass* it on the RFC verdict, so a
reading of pwh's is never taken for the RFC."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Instrument = str  # "matrix", "models", or "profile" (a reading of pwh's only; never an RFC failure)


@dataclass(frozen=True)
class Mutant:
    name: str
    row: str  # the row or rule ID that names the rule it breaks (pwh/_harness/rules.py)
    breaks: str  # one line: the clause and how this mutant breaks it
    factory: Callable[..., Any]
    caught_by: tuple[Instrument, ...] = ("matrix",)


MUTANTS: dict[str, Mutant] = {}


def mutant(
    name: str, row: str, breaks: str, *, caught_by: tuple[Instrument, ...] = ("matrix",)
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``factory`` as a mutant; ``pwh gate --sut mutant:NAME`` then loads it."""
    if not caught_by or not (set(caught_by) <= {"matrix", "models"} or tuple(caught_by) == ("profile",)):
        raise ValueError(f"mutant {name}: caught_by must name 'matrix' and/or 'models', or be ('profile',) alone")

    def register(factory: Callable[..., Any]) -> Callable[..., Any]:
        if name in MUTANTS:
            raise ValueError(f"mutant {name!r} registered twice")
        MUTANTS[name] = Mutant(name, row, breaks, factory, tuple(caught_by))
        return factory

    return register
