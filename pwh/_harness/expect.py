"""Assertions that say, in the RFC's words, what was expected and what was seen — and which kind
of check each one is (docs/rules.md).

Every check is either **RFC** (a clause of the RFC or of seed 003 requires it: pass ``rfc=`` with
the id of that clause in pwh's clause table, ``pwh/_harness/clauses.py``, e.g. ``rfc="§12.M01"``, or
a tuple of ids) or **profile** (pwh's reading where the documents are silent:
pass ``profile=`` with a few words saying what pwh chose). A failed RFC check ends the scenario as
a failure of the implementation; a failed profile check is recorded as a *profile divergence* and
the scenario goes on, so its remaining RFC checks still judge the implementation.

``about`` says whose answer a check judges: ``"sut"`` (the implementation's: its outcomes, journal,
provider calls, what it did to the primary Turn) or ``"testbed"`` (pwh's own fakes: host, provider
registry, sink recovery). A scenario whose every check is about the testbed is a self-check, never a
pass of the implementation.

The gate report quotes these messages, so they must read well on their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pwh._harness.clauses import cite
from pwh._harness.difference import Difference, first_difference

About = Literal["sut", "testbed"]

__all__ = ["ExpectationFailed", "Ledger", "current_ledger", "expect", "expect_code", "expect_equal", "require"]


class ExpectationFailed(AssertionError):
    """An RFC check failed: the implementation (or, for a testbed check, the fakes) broke a rule."""

    def __init__(self, expected: str, seen: str, clause: str = "", about: str = "sut", difference: Difference | None = None) -> None:
        super().__init__(f"expected: {expected}\nseen: {seen}")
        self.expected = expected
        self.seen = seen
        self.clause = clause
        self.about = about
        self.difference = difference  # where two compared values part (expect_equal), else None


@dataclass
class Ledger:
    """What one scenario's checks found: how many judged the SUT (rather than pwh's fakes), and
    every profile divergence."""

    sut_checks: int = 0
    divergences: list[dict[str, Any]] = field(default_factory=list)


_CURRENT: list[Ledger] = []


def current_ledger() -> Ledger | None:
    return _CURRENT[-1] if _CURRENT else None


def push_ledger(ledger: Ledger) -> None:
    _CURRENT.append(ledger)


def pop_ledger(ledger: Ledger) -> None:
    if ledger in _CURRENT:
        _CURRENT.remove(ledger)


def expect(
    condition: bool,
    expected: str,
    seen: Any,
    *,
    rfc: str | tuple[str, ...] | None = None,
    profile: str | None = None,
    about: About = "sut",
    difference: Difference | None = None,
) -> bool:
    """Check ``condition``; returns it. Exactly one of ``rfc`` (clause ids from the clause table)
    or ``profile`` (pwh's reading) must be given: a check that says neither, or cites a clause the
    table does not hold, is a harness bug, refused at once whether or not the check passes."""
    if (rfc is None) == (profile is None):
        raise TypeError("a check is either rfc=CLAUSE or profile=READING (docs/rules.md), never both or neither")
    citation = cite(rfc) if rfc is not None else ""
    if about not in ("sut", "testbed"):
        raise TypeError(f"about must be 'sut' or 'testbed', not {about!r}")
    ledger = current_ledger()
    if ledger is not None and about == "sut":
        ledger.sut_checks += 1
    if condition:
        return True
    if rfc is not None:
        raise ExpectationFailed(expected, str(seen), citation, about, difference)
    if ledger is None:  # outside a scenario (a unit test of a step): a profile miss still fails
        raise ExpectationFailed(expected, str(seen), "profile", about, difference)
    divergence: dict[str, Any] = {"expected": expected, "seen": str(seen), "reading": str(profile)}
    if difference is not None:
        divergence["difference"] = difference.as_dict()
    ledger.divergences.append(divergence)
    return False


def expect_equal(
    actual: Any,
    wanted: Any,
    what: str,
    *,
    rfc: str | tuple[str, ...] | None = None,
    profile: str | None = None,
    about: About = "sut",
) -> bool:
    same = actual == wanted
    return expect(
        same,
        f"{what} = {wanted!r}",
        f"{what} = {actual!r}",
        rfc=rfc,
        profile=profile,
        about=about,
        difference=None if same else first_difference(wanted, actual),
    )


def require(condition: bool, expected: str, seen: Any) -> None:
    """A precondition of the testbed itself (a fake did what the scenario set up). Not a check of
    anything: it neither counts as a check nor judges the implementation, but a miss stops the
    scenario, since what follows would judge nothing."""
    if not condition:
        raise ExpectationFailed(expected, str(seen), "testbed precondition", "testbed")


def expect_code(
    seen: str | None, wanted: str, what: str, *, clause: str | tuple[str, ...], rfc_codes: frozenset[str] | set[str], about: About = "sut"
) -> bool:
    """A failure code, judged as docs/rules.md says: when the implementation's code is one of the
    RFC's §10 classes (as its adapter mapped it), a different class is an RFC failure; a code outside
    those classes (the implementation's own name, or one pwh made up) is judged as profile only."""
    if wanted in rfc_codes and seen in rfc_codes:
        return expect_equal(seen, wanted, what, rfc=clause, about=about)
    cite(clause)  # a bad citation is refused even where the code is judged as profile
    return expect_equal(seen, wanted, what, profile="the exact code name beyond the RFC's §10 failure classes", about=about)
