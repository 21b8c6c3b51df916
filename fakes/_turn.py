"""pwh's testbed behind the turn seam (:mod:`pwh._suts.turn_seam`): the fake provider registry,
host request builder and host-result validator, answering in the seam's neutral terms.

The fake orchestrator runs every Turn through a turn seam: the SUT's own where it offers one,
this one otherwise. It is also the skeleton an adapter author copies: one method per operation,
each a thin translation of the implementation's own answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pwh import HostVerdict, ProviderAnswer, RequestView
from pwh._suts.turn_seam import PLAN_BOUNDS, TURN_OPERATIONS, key_paths

from ._errors import FakeRejected
from ._host import HostResultRejected, TurnPlan, build_host_request, read_host_output, validate_host_result
from ._providers import ProviderRegistry, ProviderState

__all__ = ["TestbedTurn"]

_REQUEST_KEY_OF_BOUND = {"todo": "todo_id"}


class TestbedTurn:
    """The testbed's answers to the turn seam's three operations."""

    name = "testbed"
    operations = frozenset(TURN_OPERATIONS)
    capability_id = "periodic_report"

    def __init__(self) -> None:
        self.providers = ProviderRegistry()

    def register_provider(self, provider_id: str, flags: Mapping[str, bool]) -> ProviderAnswer:
        try:
            record = self.providers.register(provider_id, self.capability_id, ProviderState.from_mapping(flags))
        except FakeRejected as exc:
            return ProviderAnswer(False, path=exc.path)
        return ProviderAnswer(True, stage=record.stage)

    def build_host_request(self, plan: Mapping[str, Any]) -> RequestView:
        request = build_host_request(TurnPlan(**plan))
        carries = frozenset(b for b in PLAN_BOUNDS if request.get(_REQUEST_KEY_OF_BOUND.get(b, b)) not in (None, "", []))
        return RequestView(tuple(request["allowed_phases"]), carries, tuple(key_paths(request)))

    def accept_host_output(self, plan: Mapping[str, Any], raw: bytes) -> HostVerdict:
        request = build_host_request(TurnPlan(**plan))
        try:
            validated = validate_host_result(read_host_output(raw), request)
        except HostResultRejected as exc:
            return HostVerdict(False, code=exc.code, path=exc.path)
        return HostVerdict(True, event_kind=validated.event_kind, evidence=tuple(validated.evidence))
