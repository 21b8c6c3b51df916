"""The ``periodic_report`` capability: a post-writeback hook producer and its trigger reducer.

Core never imports this package; the composition root calls :func:`install` with whatever
registrar the system under test provides. The producer only proposes a trigger evaluation; the
reducer (reached through a separately admitted executor) decides whether a report is due; nothing
here renders, sends or writes anything.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol

from ._producer import build_intent, produce
from ._reducer import (
    DECISION_SCHEMA_VERSION,
    REASON_BELOW,
    REASON_REPLAN,
    REASON_THRESHOLD,
    STATE_SCHEMA_VERSION,
    TRIGGER_INTENT_REJECTED,
    TRIGGER_SNAPSHOT_REJECTED,
    TriggerDecision,
    TriggerReducer,
    TriggerRejected,
)
from ._registration import (
    CAPABILITY_ID,
    HOOK_ID,
    INTENT_KIND,
    OPERATION,
    PAYLOAD_SCHEMA,
    POLICY_VERSION,
    REGISTRATION,
    TOKEN_PATTERN,
)


class Registrar(Protocol):
    """The composition-root seam a system under test offers for installing a capability."""

    def register_intent_kind(self, intent_kind: str, payload_schema: dict[str, Any]) -> Any: ...

    def install(self, registration: dict[str, Any], producer: Any) -> Any: ...


def install(registrar: Registrar) -> None:
    """Install the hook: register its intent kind's payload schema first, then the registration.

    Deep copies are handed over so neither side can alter the other's idea of the contract.
    """
    registrar.register_intent_kind(INTENT_KIND, copy.deepcopy(PAYLOAD_SCHEMA))
    registrar.install(copy.deepcopy(REGISTRATION), produce)


__all__ = [
    "CAPABILITY_ID",
    "DECISION_SCHEMA_VERSION",
    "HOOK_ID",
    "INTENT_KIND",
    "OPERATION",
    "PAYLOAD_SCHEMA",
    "POLICY_VERSION",
    "REASON_BELOW",
    "REASON_REPLAN",
    "REASON_THRESHOLD",
    "REGISTRATION",
    "Registrar",
    "STATE_SCHEMA_VERSION",
    "TOKEN_PATTERN",
    "TRIGGER_INTENT_REJECTED",
    "TRIGGER_SNAPSHOT_REJECTED",
    "TriggerDecision",
    "TriggerReducer",
    "TriggerRejected",
    "build_intent",
    "install",
    "produce",
]
