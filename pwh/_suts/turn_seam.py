"""The turn seam: the primary Turn's contracts of seed 003, beside the dispatcher seam.

Seed 003 describes code that runs *before* the post-writeback dispatch: a provider registry with
its lifecycle (PRV-1), a host request builder (HST-1) and the host result's capped read and
validation (HST-2..HST-6). An implementation that ships that code offers it here, and the
seed-003 scenarios then judge the implementation's own answers; what it does not offer runs on
pwh's testbed, and those checks stay testbed self-checks (docs/rules.md).

Everything crosses in neutral terms. The Turn's plan is a mapping of :data:`PLAN_FIELDS`; the
host's output is bytes in pwh's host-result vocabulary (``pwh_host_result_v0``: ``result_kind``,
``completed_phases``, ``evidence``, ``path_delta``, ``progress_observation``, ``lifecycle``,
``turn_key``, ``effect_ref``), which an adapter renders into its own wire format, keeping the byte
length, before reading it with its own cap. Answers name the seed's failure classes
(:data:`HOST_FAILURES`). A case the implementation cannot express raises
:class:`~pwh._suts.seam.Unsupported` with what it lacks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "HOST_FAILURES",
    "LIFECYCLE_FLAGS",
    "PLAN_BOUNDS",
    "PLAN_FIELDS",
    "TURN_OPERATIONS",
    "HostVerdict",
    "ProviderAnswer",
    "RequestView",
    "TurnContracts",
    "key_paths",
    "turn_contracts_of",
]

# The operations a turn seam may offer; an adapter lists the ones it implements.
TURN_OPERATIONS: tuple[str, ...] = ("register_provider", "build_host_request", "accept_host_output")

LIFECYCLE_FLAGS: tuple[str, ...] = ("declared", "installed", "enabled", "ready")

PLAN_FIELDS: tuple[str, ...] = (
    "turn_key",
    "effect_ref",
    "goal_id",
    "agent_id",
    "todo_id",
    "route",
    "gate",
    "scope",
    "output_schema",
    "evidence_requirements",
    "stop_conditions",
    "resume_conditions",
)

# HST-1: the Turn's bounds a host request must carry, by name.
PLAN_BOUNDS: tuple[str, ...] = (
    "route",
    "todo",
    "gate",
    "scope",
    "output_schema",
    "evidence_requirements",
    "stop_conditions",
    "resume_conditions",
)

# Seed 003's failure classes for a host's output (experiments C and D, the failure table).
HOST_FAILURES: frozenset[str] = frozenset(
    {
        "host_output_oversize",  # HST-5: over the read cap
        "host_output_not_json",  # HST-5: never half-parsed
        "host_phase_overclaim",  # HST-2
        "completion_lifecycle_missing",  # HST-3
        "non_material_with_evidence",  # HST-4
        "host_result_binding_mismatch",  # HST-6
        "host_result_shape_rejected",  # anything else the validator refused
    }
)


@dataclass(frozen=True)
class ProviderAnswer:
    """PRV-1: registered at ``stage`` (the furthest lifecycle flag set), or refused naming the
    lifecycle flag that is out of order (``path``, e.g. ``$.enabled``; ``None`` if it named none)."""

    registered: bool
    stage: str | None = None
    path: str | None = None


@dataclass(frozen=True)
class RequestView:
    """HST-1, what a host would be handed: the phases it may complete, which of
    :data:`PLAN_BOUNDS` it carries, and the JSON path of every key it holds (for the no-write
    check, judged on the implementation's own keys)."""

    allowed_phases: tuple[str, ...]
    carries: frozenset[str]
    key_paths: tuple[str, ...]


@dataclass(frozen=True)
class HostVerdict:
    """What the Turn's validation made of the host's output: accepted with the writeback's event
    kind (``None`` for a non-material result, which writes nothing back) and evidence, or refused
    with one of :data:`HOST_FAILURES` and the path it names, if any."""

    accepted: bool
    code: str | None = None
    path: str | None = None
    event_kind: str | None = None
    evidence: tuple[str, ...] = ()


@runtime_checkable
class TurnContracts(Protocol):
    """The primary Turn's contracts an implementation offers (see the module docstring)."""

    name: str
    operations: frozenset[str]

    def register_provider(self, provider_id: str, flags: Mapping[str, bool]) -> ProviderAnswer: ...

    def build_host_request(self, plan: Mapping[str, Any]) -> RequestView: ...

    def accept_host_output(self, plan: Mapping[str, Any], raw: bytes) -> HostVerdict: ...


def turn_contracts_of(sut: Any) -> TurnContracts | None:
    """The SUT's turn seam, or ``None`` when it offers none (its seed-003 rows stay self-checks).

    An adapter offers one through a ``turn_contracts()`` method; an ``operations`` set naming
    anything outside :data:`TURN_OPERATIONS` is an adapter bug, refused here."""
    factory = getattr(sut, "turn_contracts", None)
    if factory is None or not callable(factory):
        return None
    contracts = factory()
    if contracts is None:
        return None
    unknown = set(getattr(contracts, "operations", ())) - set(TURN_OPERATIONS)
    if unknown:
        raise TypeError(f"turn seam offers unknown operations: {', '.join(sorted(unknown))}")
    return contracts


def key_paths(value: Any, prefix: str = "$") -> list[str]:
    """The JSON path of every key in ``value``, at any depth (HST-1's no-write check reads them)."""
    out: list[str] = []
    if isinstance(value, Mapping):
        for k, v in value.items():
            out.append(f"{prefix}.{k}")
            out.extend(key_paths(v, f"{prefix}.{k}"))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            out.extend(key_paths(v, f"{prefix}[{i}]"))
    return out
