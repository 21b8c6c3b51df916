"""The execution profile: whether the phase runs, which hooks may, and the per-dispatch ceilings.

The RFC lets a profile switch the whole phase off or admit only an allowlist of installed hooks
(§10); the harness adds the bounded retry policy its interpretation of §4 needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

# Core ceilings a registration budget may not exceed (the schema carries the same numbers).
CORE_CEILINGS: dict[str, int] = {
    "max_invocations_per_dispatch": 8,
    "max_intents_per_dispatch": 16,
    "max_result_bytes": 65536,
    "timeout_ms": 30000,
}


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

    def admits(self, hook_id: str) -> bool:
        return self.allowlist is None or hook_id in self.allowlist

    def with_(self, **changes: Any) -> "Profile":
        if "allowlist" in changes and changes["allowlist"] is not None:
            changes["allowlist"] = frozenset(changes["allowlist"])
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
