"""PRV-1: the provider lifecycle registry and the capability catalog (seed 003 §4, §5, §7).

The four lifecycle flags answer four different questions (is it known, is it on this machine,
does policy allow it, is it healthy right now), so they are never merged into one "available"
bit. Invalid combinations are refused when a provider is registered, not half-way through a
Turn (experiment A), and :meth:`ProviderRegistry.stage` says where a provider is stuck.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ._errors import FakeRejected, is_token, json_path

Stage = Literal["declared", "installed", "enabled", "ready"]

# Lifecycle flags in order: each one implies the one before it.
LIFECYCLE_FLAGS: tuple[Stage, ...] = ("declared", "installed", "enabled", "ready")

# Stable codes.
PROVIDER_LIFECYCLE_REJECTED = "provider_lifecycle_rejected"
PROVIDER_DUPLICATE = "provider_duplicate"
PROVIDER_UNKNOWN = "provider_unknown"
PROVIDER_RECORD_REJECTED = "provider_record_rejected"
PROVIDER_TRANSITION_SKIPPED = "provider_transition_skipped"
PROVIDER_TRANSITION_REDUNDANT = "provider_transition_redundant"
CAPABILITY_RECORD_REJECTED = "capability_record_rejected"
CAPABILITY_DUPLICATE = "capability_duplicate"

# Resolution statuses: ``ready`` or one failure, each with its recovery hint (seed §7).
RESOLUTION_READY = "ready"
PROVIDER_NOT_INSTALLED = "provider_not_installed"
PROVIDER_NOT_READY = "provider_not_ready"
PROVIDER_DISABLED = "provider_disabled"
CAPABILITY_UNKNOWN = "capability_unknown"

RECOVERY_HINTS: Mapping[str, str] = {
    # "安装并重新探测，禁用跳过": install and probe again; skipping the capability is not a recovery.
    PROVIDER_NOT_INSTALLED: "install_and_reprobe",
    # "修复依赖，走 capability gate": fix the dependency, then pass the capability gate again.
    PROVIDER_NOT_READY: "repair_dependencies_via_capability_gate",
    # Not in the seed's table: policy switched the provider off; only policy can switch it on.
    PROVIDER_DISABLED: "enable_via_policy",
    CAPABILITY_UNKNOWN: "register_capability",
}

TRANSITION_KINDS: tuple[str, ...] = ("progress", "completion", "repair", "replan")


class LifecycleRejected(FakeRejected):
    """A provider registration or lifecycle transition was refused."""


class CatalogRejected(FakeRejected):
    """A capability record was refused by the catalog."""


@dataclass(frozen=True, slots=True)
class ProviderState:
    """The four lifecycle flags. May hold an invalid combination; the registry refuses those."""

    declared: bool = False
    installed: bool = False
    enabled: bool = False
    ready: bool = False

    @classmethod
    def from_mapping(cls, value: Mapping[str, Any]) -> ProviderState:
        """Read flags from a mapping; an absent flag means that stage was not reached."""
        for key in value:
            if key not in LIFECYCLE_FLAGS:
                raise LifecycleRejected(PROVIDER_LIFECYCLE_REJECTED, json_path(key), "not a lifecycle flag")
        return cls(**{flag: value.get(flag, False) for flag in LIFECYCLE_FLAGS})

    def violation(self) -> tuple[str, str] | None:
        """The first (path, reason) that makes this combination invalid, or None."""
        for flag in LIFECYCLE_FLAGS:
            if type(getattr(self, flag)) is not bool:
                return json_path(flag), "lifecycle flags must be booleans"
        for previous, flag in itertools.pairwise(LIFECYCLE_FLAGS):
            if getattr(self, flag) and not getattr(self, previous):
                return json_path(flag), f"{flag} requires {previous}"
        return None

    @property
    def stage(self) -> Stage | None:
        """The furthest flag set, or None when not even declared."""
        reached = [flag for flag in LIFECYCLE_FLAGS if getattr(self, flag) is True]
        return reached[-1] if reached else None

    def to_json(self) -> dict[str, bool]:
        return {flag: getattr(self, flag) for flag in LIFECYCLE_FLAGS}


@dataclass(frozen=True, slots=True)
class ProviderRecord:
    provider_id: str
    capability_id: str
    state: ProviderState

    @property
    def stage(self) -> Stage:
        stage = self.state.stage
        assert stage is not None  # the registry only holds declared providers
        return stage


def _require_token(value: object, name: str, code: str, exc: type[FakeRejected]) -> None:
    if not is_token(value):
        raise exc(code, json_path(name), f"{name} must be an opaque token")


class ProviderRegistry:
    """Providers by id. Every stored state is valid; transitions move exactly one step."""

    def __init__(self) -> None:
        self._records: dict[str, ProviderRecord] = {}

    def register(self, provider_id: str, capability_id: str, state: ProviderState | Mapping[str, Any]) -> ProviderRecord:
        """Refuse a bad id, a duplicate, or an invalid flag combination before storing anything."""
        _require_token(provider_id, "provider_id", PROVIDER_RECORD_REJECTED, LifecycleRejected)
        _require_token(capability_id, "capability_id", PROVIDER_RECORD_REJECTED, LifecycleRejected)
        if provider_id in self._records:
            raise LifecycleRejected(PROVIDER_DUPLICATE, json_path("provider_id"), "provider id already registered")
        if isinstance(state, Mapping):
            state = ProviderState.from_mapping(state)
        elif type(state) is not ProviderState:
            raise LifecycleRejected(PROVIDER_LIFECYCLE_REJECTED, "$", "state must be a ProviderState or a mapping")
        problem = state.violation()
        if problem is not None:
            raise LifecycleRejected(PROVIDER_LIFECYCLE_REJECTED, *problem)
        if not state.declared:
            raise LifecycleRejected(
                PROVIDER_LIFECYCLE_REJECTED,
                json_path("declared"),
                "a provider must be declared to be registered",
            )
        record = ProviderRecord(provider_id, capability_id, state)
        self._records[provider_id] = record
        return record

    def get(self, provider_id: str) -> ProviderRecord | None:
        return self._records.get(provider_id) if type(provider_id) is str else None

    def __contains__(self, provider_id: object) -> bool:
        return type(provider_id) is str and provider_id in self._records

    def records(self) -> tuple[ProviderRecord, ...]:
        return tuple(self._records.values())

    def stage(self, provider_id: str) -> Stage:
        """Where the provider is stuck: the furthest lifecycle stage it has reached."""
        return self._require(provider_id).stage

    # Transitions. Forward ones need the previous stage; backward ones need the next stage
    # cleared first. "Skipped" means a step is missing, "redundant" means it is already done.

    def install(self, provider_id: str) -> ProviderRecord:
        return self._forward(provider_id, "installed")

    def enable(self, provider_id: str) -> ProviderRecord:
        return self._forward(provider_id, "enabled")

    def mark_ready(self, provider_id: str) -> ProviderRecord:
        return self._forward(provider_id, "ready")

    def mark_unready(self, provider_id: str) -> ProviderRecord:
        """A health check failed: ready -> enabled (policy still allows it)."""
        return self._backward(provider_id, "ready", clears=("ready",))

    def disable(self, provider_id: str) -> ProviderRecord:
        """Policy switched it off. Readiness means nothing without policy, so it is dropped too."""
        return self._backward(provider_id, "enabled", clears=("enabled", "ready"))

    def uninstall(self, provider_id: str) -> ProviderRecord:
        """installed -> declared; refused while still enabled (disable first)."""
        return self._backward(provider_id, "installed", clears=("installed",))

    def _require(self, provider_id: str) -> ProviderRecord:
        record = self.get(provider_id)
        if record is None:
            raise LifecycleRejected(PROVIDER_UNKNOWN, json_path("provider_id"), "no provider registered under this id")
        return record

    def _forward(self, provider_id: str, flag: Stage) -> ProviderRecord:
        record = self._require(provider_id)
        previous = LIFECYCLE_FLAGS[LIFECYCLE_FLAGS.index(flag) - 1]
        if getattr(record.state, flag):
            raise LifecycleRejected(PROVIDER_TRANSITION_REDUNDANT, json_path(flag), f"provider is already {flag}")
        if not getattr(record.state, previous):
            raise LifecycleRejected(
                PROVIDER_TRANSITION_SKIPPED,
                json_path(flag),
                f"provider must be {previous} first; it is {record.stage}",
            )
        return self._store(record, {flag: True})

    def _backward(self, provider_id: str, flag: Stage, clears: tuple[Stage, ...]) -> ProviderRecord:
        record = self._require(provider_id)
        if not getattr(record.state, flag):
            raise LifecycleRejected(PROVIDER_TRANSITION_REDUNDANT, json_path(flag), f"provider is not {flag}")
        following = LIFECYCLE_FLAGS[LIFECYCLE_FLAGS.index(flag) + 1 :]
        blocking = [f for f in following if getattr(record.state, f) and f not in clears]
        if blocking:
            raise LifecycleRejected(
                PROVIDER_TRANSITION_SKIPPED,
                json_path(blocking[0]),
                f"provider is still {blocking[0]}; undo that first",
            )
        return self._store(record, {f: False for f in clears})

    def _store(self, record: ProviderRecord, changes: dict[str, bool]) -> ProviderRecord:
        state = ProviderState(**{**record.state.to_json(), **changes})
        assert state.violation() is None and state.declared
        updated = ProviderRecord(record.provider_id, record.capability_id, state)
        self._records[record.provider_id] = updated
        return updated


@dataclass(frozen=True, slots=True)
class CapabilityRecord:
    """The domain contract: what proves success, which evidence counts, which moves are legal."""

    capability_id: str
    provider_id: str
    success_condition: str
    evidence_kinds: tuple[str, ...]
    transitions: tuple[str, ...] = field(default=TRANSITION_KINDS)

    def allows(self, transition: str) -> bool:
        return transition in self.transitions

    def to_json(self) -> dict[str, Any]:
        return {
            "capability_id": self.capability_id,
            "provider_id": self.provider_id,
            "success_condition": self.success_condition,
            "evidence_kinds": list(self.evidence_kinds),
            "transitions": list(self.transitions),
        }


@dataclass(frozen=True, slots=True)
class Resolution:
    """Whether a capability can be used now; on failure, which fact is at fault and how to recover."""

    capability_id: str
    status: str
    provider_id: str | None = None
    stage: Stage | None = None
    recovery: str | None = None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status == RESOLUTION_READY

    def to_json(self) -> dict[str, Any]:
        return {
            "capability_id": self.capability_id,
            "status": self.status,
            "provider_id": self.provider_id,
            "stage": self.stage,
            "recovery": self.recovery,
            "reason": self.reason,
        }


_RECORD_FIELDS = ("capability_id", "provider_id", "success_condition", "evidence_kinds", "transitions")


def _token_tuple(value: object, name: str, allowed: Iterable[str] | None = None) -> tuple[str, ...]:
    if type(value) not in (tuple, list) or not value:
        raise CatalogRejected(CAPABILITY_RECORD_REJECTED, json_path(name), f"{name} must be a non-empty sequence")
    allowed_set = None if allowed is None else frozenset(allowed)
    seen: set[str] = set()
    items: Iterable[Any] = value  # type: ignore[assignment]
    for index, item in enumerate(items):
        if not is_token(item) or (allowed_set is not None and item not in allowed_set):
            raise CatalogRejected(CAPABILITY_RECORD_REJECTED, json_path(name, index), f"not an allowed {name} token")
        if item in seen:
            raise CatalogRejected(CAPABILITY_RECORD_REJECTED, json_path(name, index), f"duplicate {name} token")
        seen.add(item)
    return tuple(value)  # type: ignore[arg-type]


class CapabilityCatalog:
    """Capability records by id, resolved against a :class:`ProviderRegistry` at use time."""

    def __init__(self, records: Iterable[CapabilityRecord | Mapping[str, Any]] = ()) -> None:
        self._records: dict[str, CapabilityRecord] = {}
        for record in records:
            self.add(record)

    def add(self, record: CapabilityRecord | Mapping[str, Any]) -> CapabilityRecord:
        """Validate and store one record; a duplicate id is refused, never overwritten."""
        if isinstance(record, Mapping):
            for key in record:
                if key not in _RECORD_FIELDS:
                    raise CatalogRejected(CAPABILITY_RECORD_REJECTED, json_path(key), "not a capability record field")
            values = {name: record.get(name) for name in _RECORD_FIELDS}
            if values["transitions"] is None:
                values["transitions"] = TRANSITION_KINDS
        elif type(record) is CapabilityRecord:
            values = {name: getattr(record, name) for name in _RECORD_FIELDS}
        else:
            raise CatalogRejected(CAPABILITY_RECORD_REJECTED, "$", "record must be a CapabilityRecord or a mapping")
        for name in ("capability_id", "provider_id", "success_condition"):
            _require_token(values[name], name, CAPABILITY_RECORD_REJECTED, CatalogRejected)
        checked = CapabilityRecord(
            capability_id=str(values["capability_id"]),  # each a token: checked just above
            provider_id=str(values["provider_id"]),
            success_condition=str(values["success_condition"]),
            evidence_kinds=_token_tuple(values["evidence_kinds"], "evidence_kinds"),
            transitions=_token_tuple(values["transitions"], "transitions", TRANSITION_KINDS),
        )
        if checked.capability_id in self._records:
            raise CatalogRejected(CAPABILITY_DUPLICATE, json_path("capability_id"), "capability id already in catalog")
        self._records[checked.capability_id] = checked
        return checked

    def get(self, capability_id: str) -> CapabilityRecord | None:
        return self._records.get(capability_id) if type(capability_id) is str else None

    def resolve(self, capability_id: str, registry: ProviderRegistry) -> Resolution:
        """Ready, or the one failing fact (seed §7 rows "Provider 未安装" / "Provider 未 ready")."""
        record = self.get(capability_id)
        if record is None:
            shown = capability_id if is_token(capability_id) else "?"
            return _failed(shown, CAPABILITY_UNKNOWN, None, None, "capability not in catalog")
        provider = registry.get(record.provider_id)
        if provider is None or provider.capability_id != record.capability_id:
            why = "required provider is not registered" if provider is None else ("required provider is declared for another capability")
            return _failed(record.capability_id, PROVIDER_NOT_INSTALLED, record.provider_id, None, why)
        state, stage = provider.state, provider.stage
        if not state.installed:
            return _failed(
                record.capability_id,
                PROVIDER_NOT_INSTALLED,
                provider.provider_id,
                stage,
                "provider is declared but not installed",
            )
        if not state.enabled:
            return _failed(
                record.capability_id,
                PROVIDER_DISABLED,
                provider.provider_id,
                stage,
                "provider is installed but policy has not enabled it",
            )
        if not state.ready:
            return _failed(
                record.capability_id,
                PROVIDER_NOT_READY,
                provider.provider_id,
                stage,
                "provider is enabled but its health check or dependencies are not satisfied",
            )
        return Resolution(
            record.capability_id,
            RESOLUTION_READY,
            provider.provider_id,
            stage,
            None,
            "provider is ready",
        )


def _failed(capability_id: str, status: str, provider_id: str | None, stage: Stage | None, reason: str) -> Resolution:
    return Resolution(capability_id, status, provider_id, stage, RECOVERY_HINTS[status], reason)
