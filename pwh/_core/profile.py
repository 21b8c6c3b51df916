"""The execution profile: whether the phase runs, which hooks may, and the per-dispatch ceilings.

The RFC lets a profile switch the whole phase off or admit only an allowlist of installed hooks
(§10); the harness adds the bounded retry policy its interpretation of §4 needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pwh._core.codes import PROFILE_REJECTED
from pwh._core.schemas import load_schema

# Core ceilings a registration budget may not exceed: the registration schema's maxima, read from
# it so the two can never disagree.
CORE_CEILINGS: dict[str, int] = {
    name: spec["maximum"] for name, spec in load_schema("registration")["properties"]["budget"]["properties"].items()
}


_COUNTS = ("max_hooks_per_dispatch", "max_intents_per_dispatch", "max_result_bytes_per_dispatch", "max_attempts")


class ProfileRejected(ValueError):
    """A profile value of the wrong type or range; ``field`` names it (``Profile.check``)."""

    code = PROFILE_REJECTED

    def __init__(self, field_name: str, reason: str) -> None:
        super().__init__(f"Profile.{field_name}: {reason}")
        self.field = field_name
        self.reason = reason


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"the integer {value}"
    return f"a value of type {type(value).__name__}"


def _count_problem(name: str, value: Any) -> ProfileRejected | None:
    if type(value) is not int or value < 1:
        return ProfileRejected(name, f"must be a positive integer, got {_kind(value)}")
    return None


def _allowlist(value: Any) -> frozenset[str] | ProfileRejected | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        return ProfileRejected("allowlist", f"must be None or a collection of hook ids, got {_kind(value)}")
    ids = frozenset(value)
    if not all(type(i) is str and i for i in ids):
        return ProfileRejected("allowlist", "every entry must be a non-empty hook id string")
    return ids


def _ceiling_problems(value: Any) -> list[ProfileRejected]:
    if not isinstance(value, Mapping):
        return [ProfileRejected("budget_ceilings", f"must be a mapping of budget field to ceiling, got {_kind(value)}")]
    found = [ProfileRejected("budget_ceilings", f"unknown budget field {str(k)!r}") for k in value if k not in CORE_CEILINGS]
    found += [p for k, v in value.items() if k in CORE_CEILINGS if (p := _count_problem(f"budget_ceilings.{k}", v))]
    return found


@dataclass(frozen=True)
class Profile:
    """What the execution profile allows. The phase is off unless a profile turns it on (Slice 2)."""

    phase_enabled: bool = False
    allowlist: frozenset[str] | None = None  # None: every installed hook is admitted
    max_hooks_per_dispatch: int = 16
    max_intents_per_dispatch: int = 32
    max_result_bytes_per_dispatch: int = 262144
    max_attempts: int = 3
    budget_ceilings: dict[str, int] = field(default_factory=lambda: dict(CORE_CEILINGS))

    def __post_init__(self) -> None:
        # A profile is read from configuration, so its values are checked here, never trusted:
        # the string "false" is truthy, a string allowlist would match substrings, a string
        # ceiling would fail inside a dispatch. A profile with problems does not enable the
        # phase (ADM): the dispatcher refuses every dispatch under it with ``profile_rejected``,
        # before any hook; ``check()`` raises instead, for a composition root that wants to stop.
        found: list[ProfileRejected] = []
        if type(self.phase_enabled) is not bool:
            found.append(ProfileRejected("phase_enabled", f"must be true or false, got {_kind(self.phase_enabled)}"))
        found += [p for name in _COUNTS if (p := _count_problem(name, getattr(self, name)))]
        allow = _allowlist(self.allowlist)
        if isinstance(allow, ProfileRejected):
            found.append(allow)
        else:
            object.__setattr__(self, "allowlist", allow)
        ceilings = _ceiling_problems(self.budget_ceilings)
        if not ceilings:
            object.__setattr__(self, "budget_ceilings", dict(self.budget_ceilings))
        object.__setattr__(self, "_problems", tuple(found + ceilings))

    @property
    def problems(self) -> tuple[ProfileRejected, ...]:
        """Every field of the wrong type or range, in field order; empty for a usable profile."""
        return self._problems  # type: ignore[attr-defined]

    def check(self) -> Profile:
        """This profile, or :class:`ProfileRejected` for its first problem."""
        if self.problems:
            raise self.problems[0]
        return self

    def admits(self, hook_id: str) -> bool:
        return self.allowlist is None or hook_id in self.allowlist

    def with_(self, **changes: Any) -> Profile:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "phase_enabled": self.phase_enabled,
            "allowlist": sorted(self.allowlist) if self.allowlist is not None else None,
            "max_hooks_per_dispatch": self.max_hooks_per_dispatch,
            "max_intents_per_dispatch": self.max_intents_per_dispatch,
            "max_result_bytes_per_dispatch": self.max_result_bytes_per_dispatch,
            "max_attempts": self.max_attempts,
            "budget_ceilings": dict(sorted(self.budget_ceilings.items())),
        }
