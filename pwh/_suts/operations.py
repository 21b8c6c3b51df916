"""The dispatcher seam's operations, in one place: the seam, the stdio protocol and the tests that
walk every operation read this list."""

from __future__ import annotations

__all__ = ["SEAM_OPERATIONS"]

# The methods of pwh._suts.seam.SUT the matrix calls (the stdio protocol carries the same ones).
SEAM_OPERATIONS: tuple[str, ...] = (
    "register_intent_kind",
    "install",
    "set_profile",
    "dispatch",
    "redeliver",
    "arm_crash",
    "restart",
    "journal_records",
    "inject_fault",
    "close",
)
