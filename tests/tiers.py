"""Parameters split between the test command and the ``extended`` tier (tests/conftest.py).

A parametrized check keeps a few of its cases in the test command (chosen where it is used, one
of each kind that matters) and marks the rest ``extended``, which ``.ci/run`` runs right after
the test command: the rule is held on every commit, its whole width in CI."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest


def beyond(cases: Iterable[Any], keep: Callable[[Any], bool], *, unpack: bool = False) -> list[Any]:
    """Each case as it is where ``keep(case)``; else marked ``extended`` (``unpack``: a tuple case
    is the parameters of several arguments)."""
    out: list[Any] = []
    for case in cases:
        if keep(case):
            out.append(case)
        else:
            out.append(pytest.param(*case, marks=pytest.mark.extended) if unpack else pytest.param(case, marks=pytest.mark.extended))
    return out


def collected_cases(request: pytest.FixtureRequest, test: str, names: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """The parameters (``names``, in order) of each case of ``test`` in the requesting module that
    this run collected: a module fixture that does every case's work up front (concurrently) does
    only the work of the cases the run keeps, so cases marked ``extended`` cost the test command
    nothing."""
    out: list[tuple[Any, ...]] = []
    for item in request.session.items:
        if getattr(item, "originalname", None) == test and getattr(item, "path", None) == request.path:
            params = item.callspec.params  # type: ignore[attr-defined]
            out.append(tuple(params[name] for name in names))
    return out
