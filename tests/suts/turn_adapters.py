"""Adapters with a turn seam, for the tests of the seam itself (loaded as ``module:factory``).

- ``testbed_turn``: the reference dispatcher offering pwh's testbed as its turn seam, so the
  seed-003 rows judge it (a conforming implementation of the seam: every reachable row passes);
- ``lenient_turn``: the same, but its turn seam registers any lifecycle and accepts any host
  output whole (an implementation with no primary-Turn checks: every such row must fail).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fakes._turn import TestbedTurn
from pwh import HostVerdict, ProviderAnswer
from pwh._suts.reference import ReferenceSUT


class _WithTestbedTurn(ReferenceSUT):
    def turn_contracts(self) -> Any:
        return TestbedTurn()


class LenientTurn(TestbedTurn):
    """Checks nothing: the wrong implementation the seed-003 rows exist to fail."""

    name = "lenient"

    def register_provider(self, provider_id: str, flags: Mapping[str, bool]) -> ProviderAnswer:
        reached = [f for f in ("declared", "installed", "enabled", "ready") if flags.get(f)]
        return ProviderAnswer(True, stage=reached[-1] if reached else None)

    def accept_host_output(self, plan: Mapping[str, Any], raw: bytes) -> HostVerdict:
        return HostVerdict(True, event_kind="todo_completed", evidence=("test_result_ok",))


class _WithLenientTurn(ReferenceSUT):
    def turn_contracts(self) -> Any:
        return LenientTurn()


def testbed_turn(**options: Any) -> ReferenceSUT:
    sut = _WithTestbedTurn(journal="memory", **options)
    sut.name = "reference+testbed-turn"
    return sut


def lenient_turn(**options: Any) -> ReferenceSUT:
    sut = _WithLenientTurn(journal="memory", **options)
    sut.name = "reference+lenient-turn"
    return sut
