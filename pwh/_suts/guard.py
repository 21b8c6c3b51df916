"""The matrix's guard against an adapter that ends the scenario run: see :class:`AdapterGuard`.

Its own module because it needs pytest (the gate's extra), while :mod:`pwh._suts.faults` is used
by core's ``load_sut``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pwh._suts.faults import adapter_location, describe, is_user_interrupt, module_roots, sigint_count, track_user_interrupts


def escapes_pytest(exc: BaseException) -> bool:
    """Whether ``exc`` would end the whole pytest run (or vanish from it) instead of failing one
    test: a ``BaseException`` that is not an ``Exception`` and not pytest's own skip/fail/xfail
    outcome, or ``pytest.exit``'s ``Exit`` (an ``Exception`` pytest re-raises)."""
    if isinstance(exc, pytest.exit.Exception):
        return True
    if isinstance(exc, (pytest.skip.Exception, pytest.fail.Exception, pytest.xfail.Exception)):
        return False
    return not isinstance(exc, Exception)


class AdapterFault(Exception):
    """A ``BaseException`` the adapter raised during a scenario, made an ordinary failure of that
    scenario; ``expected``/``seen`` are what the gate's report shows."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.expected = "the SUT to return, or to raise an ordinary exception"
        self.seen = f"it raised {what}"
        self.about = "sut"  # the gate's verdict: this failure judges the SUT, not pwh's testbed


class AdapterGuard:
    """pytest plugin for the matrix: a ``BaseException`` that would end the run (``SystemExit``,
    an adapter's own ``KeyboardInterrupt``, ``GeneratorExit``, ``pytest.exit``) raised in a
    scenario's setup, call or teardown fails that scenario instead. The user's Ctrl-C still stops."""

    NAME = "pwh-adapter-guard"

    def __init__(self) -> None:
        track_user_interrupts()

    @classmethod
    def install(cls, config: pytest.Config) -> None:
        """Register the guard once per pytest run."""
        if not config.pluginmanager.has_plugin(cls.NAME):
            config.pluginmanager.register(cls(), cls.NAME)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Iterator[None]:
        return (yield from self._guarded())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        return (yield from self._guarded())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Iterator[None]:
        return (yield from self._guarded())

    def _guarded(self) -> Iterator[None]:
        since = sigint_count()
        try:
            return (yield)
        except BaseException as exc:
            failure = _as_failure(exc, since)
            if failure is exc:
                raise
            raise failure from None


def guarded_close(close: Callable[[], None]) -> None:
    """Run a fixture's teardown so that an escaping ``BaseException`` becomes an ordinary failure
    there: pytest stops tearing an item down at the first one, leaving the other fixtures (the
    network guard) open; an ``Exception`` lets it finish the rest."""
    since = sigint_count()
    try:
        close()
    except BaseException as exc:
        failure = _as_failure(exc, since)
        if failure is exc:
            raise
        raise failure from None


def _as_failure(exc: BaseException, since: int) -> BaseException:
    """``exc`` itself, or for one that would end the run (and is not the user's Ctrl-C) an
    :class:`AdapterFault` naming it and the adapter's file:line."""
    if not escapes_pytest(exc) or is_user_interrupt(exc, since):
        return exc
    return AdapterFault(describe(exc, adapter_location(exc, _sut_roots(), "")))


def _sut_roots() -> list[Path]:
    """The adapter's code in the scenario process: the module ``PWH_SUT`` names (a built-in name
    is pwh's own code, whose frames are then the ones named)."""
    from pwh._suts.seam import adapter_target

    spec = adapter_target(os.environ.get("PWH_SUT", "reference"))
    module_name = spec.partition(":")[0]
    return module_roots(module_name) if module_name else []
