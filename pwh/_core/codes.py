"""Stable failure codes (rule BUD) and the rejection record every validator returns.

Codes are plain strings so they travel unchanged through JSON, journals, reports and other
implementations' adapters. A rejection names the JSON path of the offending value and a short
reason written by pwh itself: never the offending value, never raw exception text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Hook-level codes from the RFC (§10), in the RFC's order.
REGISTRATION_REJECTED = "registration_rejected"
INPUT_BOUNDARY_REJECTED = "input_boundary_rejected"
PRODUCER_FAILED = "producer_failed"
PRODUCER_TIMED_OUT = "producer_timed_out"
RESULT_CONTRACT_REJECTED = "result_contract_rejected"
INTENT_CONFLICT = "intent_conflict"
DISPATCH_BUDGET_EXHAUSTED = "dispatch_budget_exhausted"

RFC_FAILURE_CODES: tuple[str, ...] = (
    REGISTRATION_REJECTED,
    INPUT_BOUNDARY_REJECTED,
    PRODUCER_FAILED,
    PRODUCER_TIMED_OUT,
    RESULT_CONTRACT_REJECTED,
    INTENT_CONFLICT,
    DISPATCH_BUDGET_EXHAUSTED,
)

# Dispatch-level codes the harness adds where the RFC says "nothing is dispatched" or
# "reported, never a primary failure" without naming a code (docs/rules.md, P-code-names).
SOURCE_REJECTED = "source_rejected"  # the source packet is malformed (ADM)
SOURCE_NOT_COMMITTED = "source_not_committed"  # prepared / rejected / inferred / prose-only step
SOURCE_NOT_DURABLE = "source_not_durable"  # no durable checkpoint
EFFECT_MISMATCH = "effect_mismatch"  # receipt effect id differs from the active plan's
PHASE_DISABLED = "phase_disabled"  # the execution profile does not enable the phase
PROFILE_REJECTED = "profile_rejected"  # the profile has a value of the wrong type or range
NOT_A_HOOK_EVENT = "not_a_post_writeback_event"  # e.g. a plain progress writeback
JOURNAL_WRITE_FAILED = "journal_write_failed"
JOURNAL_RECORD_CORRUPT = "journal_record_corrupt"
JOURNAL_READ_FAILED = "journal_read_failed"
JOURNAL_OPEN_FAILED = "journal_open_failed"

DISPATCH_CODES: tuple[str, ...] = (
    SOURCE_REJECTED,
    SOURCE_NOT_COMMITTED,
    SOURCE_NOT_DURABLE,
    EFFECT_MISMATCH,
    PHASE_DISABLED,
    PROFILE_REJECTED,
    NOT_A_HOOK_EVENT,
    JOURNAL_WRITE_FAILED,
    JOURNAL_RECORD_CORRUPT,
    JOURNAL_READ_FAILED,
    JOURNAL_OPEN_FAILED,
)


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a packet was refused: a stable code, the JSON path at fault, and a pwh-written reason."""

    code: str
    path: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "path": self.path, "reason": self.reason}

    def __str__(self) -> str:
        return f"{self.code} at {self.path}: {self.reason}"


def json_path(parts: list[Any] | tuple[Any, ...]) -> str:
    """Render a path like ``$.budget.timeout_ms`` or ``$.intents[0].payload``."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and _SAFE_KEY.match(part):
            out += f".{part}" if part.isidentifier() else f"['{part}']"
        else:
            # A key that is not a plain token may itself be private (an e-mail, a path):
            # the path then says only that an odd key sits here, never what it is.
            out += "[?]"
    return out


_SAFE_KEY = re.compile(r"^[A-Za-z0-9_$][A-Za-z0-9_.$-]{0,63}$")
