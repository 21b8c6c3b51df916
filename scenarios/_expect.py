"""Assertions that say, in the RFC's words, what was expected and what was seen.

The gate report quotes these messages for a failing row, so they must read well on their own.
"""

from __future__ import annotations

from typing import Any


class ExpectationFailed(AssertionError):
    def __init__(self, expected: str, seen: str) -> None:
        super().__init__(f"expected: {expected}\nseen: {seen}")
        self.expected = expected
        self.seen = seen


def expect(condition: bool, expected: str, seen: Any) -> None:
    if not condition:
        raise ExpectationFailed(expected, str(seen))


def expect_equal(actual: Any, wanted: Any, what: str) -> None:
    if actual != wanted:
        raise ExpectationFailed(f"{what} = {wanted!r}", f"{what} = {actual!r}")
