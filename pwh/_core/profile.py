"""The execution profile: whether the phase runs, which hooks may, and the per-dispatch ceilings.

The RFC lets a profile switch the whole phase off or admit only an allowlist of installed hooks
(§5.1, §10), and has core bound every dispatch's invocations, intents, bytes and wall time (§10);
the harness adds the bounded retry policy §10's "有界 policy" needs. Each field is defined on
:class:`Profile` below and, for adapter authors, in docs/seam.md ("The execution profile"), with
the clause it rests on or "pwh's reading" where the RFC names no number or no mechanism.
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
    """What the execution profile allows. The phase is off unless a profile turns it on (Slice 2).

    ``phase_enabled``
        RFC §5.1 (a dispatch is legal only if the current execution profile enables the phase) and
        §10 (a profile may switch the whole phase off). False: no provider is called and nothing is
        recorded for any receipt (§12 M01); pwh's reading reports the dispatch not admitted with
        ``phase_disabled``.
    ``allowlist``
        RFC §10 ("只准入已安装 hook allowlist"): ``None`` admits every installed hook; a set of hook
        ids admits only those. A hook left off is never called and gets no sidecar record (M01).
    ``max_hooks_per_dispatch``
        RFC §10's per-dispatch bound, read by pwh as result *slots*: at most this many hooks of one
        dispatch may have their results accepted. A failed hook takes no slot (§10: one hook's
        failure does not use up another's result slot); a hook left without a slot is not called
        and ends ``dispatch_budget_exhausted``. The number is pwh's reading.
    ``max_intents_per_dispatch``
        RFC §10 (intent count): the intents accepted across all hooks of one dispatch. A hook whose
        accepted intents would pass it ends ``dispatch_budget_exhausted``, none of them recorded (M08).
    ``max_result_bytes_per_dispatch``
        RFC §10 (bytes): the canonical-JSON bytes of the results accepted across all hooks of one
        dispatch; past it, as for intents. (A hook's own result is bounded by its registration's
        ``budget.max_result_bytes``, §6/§8.)
    ``max_attempts``
        RFC §10 ("可在有界 policy 下用相同 dispatch identity 重试"): the bounded retry policy, the most
        provider calls one dispatch identity gets across replays, redeliveries, restarts and
        concurrent dispatchers together, each counted durably before the call. At the cap the
        hook ends ``dispatch_budget_exhausted`` uncalled. That a bound exists and holds is the RFC;
        the number (3) is pwh's reading.
    ``budget_ceilings``
        RFC §6 (core checks size/timeout limits before any provider is called) and §10: the most a
        registration's ``budget`` may ask, per field (``max_invocations_per_dispatch``,
        ``max_intents_per_dispatch``, ``max_result_bytes``, ``timeout_ms``). A registration over a
        ceiling is rejected with ``registration_rejected`` at install, and an installed one is
        refused the same way at dispatch if the profile lowered a ceiling since. Defaults: the
        registration schema's maxima (:data:`CORE_CEILINGS`), pwh's reading.

    A value of the wrong type or range (the string ``"false"``, a one-string allowlist, a retry cap
    of 0) is listed in :attr:`problems`; a profile with problems enables nothing: every dispatch is
    refused before any hook (pwh's code ``profile_rejected`` at ``$.profile.<field>``).
    """

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
