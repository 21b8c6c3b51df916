"""pytest wiring for the Gherkin matrix: SUT selection, the per-scenario world, the network guard,
and the step library (imported here so every feature file can use every step)."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes._world import World
from pwh import RULES, Unsupported, load_sut
from pwh._harness.network_guard import refuse_outbound
from pwh._suts.guard import AdapterGuard, guarded_close

from ._step_lookup import remember_step_lookups
from .steps_checks import *  # noqa: F403
from .steps_corpus import *  # noqa: F403
from .steps_isolation import *  # noqa: F403
from .steps_limits import *  # noqa: F403
from .steps_models import *  # noqa: F403
from .steps_outcome_report import *  # noqa: F403
from .steps_samples import *  # noqa: F403
from .steps_seed003 import *  # noqa: F403
from .steps_setup import *  # noqa: F403
from .steps_turns import *  # noqa: F403
from .steps_writeback import *  # noqa: F403

SUT_ENV = "PWH_SUT"

remember_step_lookups()  # the same step text finds the same definitions (scenarios/_step_lookup.py)

# The seed-003 rows: their scenarios reach the SUT's turn seam when it offers one.
SEED003_ROWS = frozenset(rule.id for rule in RULES if rule.group != "matrix")


def _row_tags(request: pytest.FixtureRequest) -> set[str]:
    return {mark.name for mark in request.node.iter_markers()}


def pytest_configure(config: pytest.Config) -> None:
    AdapterGuard.install(config)  # an adapter's SystemExit or KeyboardInterrupt fails its scenario, not the run
    for rule in RULES:
        config.addinivalue_line("markers", f"{rule.id}: {rule.case}")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--sut", default=None, help="SUT adapter: a built-in name or module:factory (default: reference)")


@pytest.fixture
def sut_name(request: pytest.FixtureRequest) -> str:
    return request.config.getoption("--sut") or os.environ.get(SUT_ENV) or "reference"


@pytest.fixture
def guard() -> Iterator[object]:
    """Outbound network is refused for the whole scenario: an accidental call is caught, not made."""
    with refuse_outbound() as g:
        yield g


@pytest.fixture
def world(request: pytest.FixtureRequest, sut_name: str, tmp_path: Path, guard: object) -> Iterator[World]:
    sut = load_sut(sut_name)
    w = World(sut, tmp_path, turn_seam=bool(_row_tags(request) & SEED003_ROWS))
    w.guard = guard  # type: ignore[attr-defined]
    try:
        yield w
    finally:
        guarded_close(w.close)
        request.node.user_properties.append(("pwh", w.judgement()))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, None]:
    outcome = yield
    exc = outcome.excinfo
    if exc is not None and isinstance(exc[1], Unsupported):
        outcome.force_exception(pytest.skip.Exception(f"unsupported by the SUT: {exc[1].reason}", _use_item_location=True))
