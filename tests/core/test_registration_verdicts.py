"""The registration check keeps its verdicts by value (pwh/_core/contracts.py): a registration
checked again gets the verdict its value has now, whatever was checked before."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fakes._packets import GENERIC_INTENT_KIND, registration
from pwh import CORE_CEILINGS, validate_registration
from pwh._core import contracts

KINDS = frozenset({GENERIC_INTENT_KIND})


def fresh(reg: Any, kinds: frozenset[str] = KINDS, ceilings: Any = CORE_CEILINGS) -> list[Any]:
    """The verdict with nothing kept: the uncached check."""
    return contracts._public(contracts._registration_rejections(reg, kinds, ceilings))


def test_a_registration_checked_again_gets_an_equal_verdict_in_a_list_of_its_own() -> None:
    reg = registration("a.alpha", budget={"max_invocations_per_dispatch": 1, "max_intents_per_dispatch": 1, "timeout_ms": 10**9})
    first = validate_registration(reg, known_intent_kinds=KINDS, ceilings=dict(CORE_CEILINGS))
    second = validate_registration(reg, known_intent_kinds=KINDS, ceilings=dict(CORE_CEILINGS))
    assert first and first == second == fresh(reg)
    first.append("added by a caller")
    assert validate_registration(reg, known_intent_kinds=KINDS, ceilings=dict(CORE_CEILINGS)) == second


def test_a_registration_changed_after_a_check_is_judged_by_its_new_value() -> None:
    reg = registration("a.alpha", intent_kinds=[GENERIC_INTENT_KIND])
    assert validate_registration(reg, known_intent_kinds=KINDS, ceilings=dict(CORE_CEILINGS)) == []
    reg["budget"]["timeout_ms"] = 10**9
    assert validate_registration(reg, known_intent_kinds=KINDS, ceilings=dict(CORE_CEILINGS)) == fresh(reg) != []
    reg["intent_kinds"] = ["not.known"]
    assert validate_registration(reg, known_intent_kinds=KINDS, ceilings=dict(CORE_CEILINGS)) == fresh(reg) != []


def test_the_kinds_and_the_ceilings_are_part_of_the_verdict() -> None:
    reg = registration("a.alpha", intent_kinds=[GENERIC_INTENT_KIND])
    assert validate_registration(reg, known_intent_kinds=KINDS, ceilings=dict(CORE_CEILINGS)) == []
    assert validate_registration(reg, known_intent_kinds=frozenset(), ceilings=dict(CORE_CEILINGS)) == fresh(reg, frozenset()) != []
    low = {**CORE_CEILINGS, "timeout_ms": 1}
    assert validate_registration(reg, known_intent_kinds=KINDS, ceilings=low) == fresh(reg, KINDS, low) != []


@given(
    timeout=st.integers(-5, 10**6) | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=3),
    ceiling=st.integers(0, 10**6),
    kinds=st.sampled_from([KINDS, frozenset(), frozenset({GENERIC_INTENT_KIND, "x"})]),
    hook=st.sampled_from(["a.alpha", "b.bravo", "Bad Id", "a.alpha.example.com"]),
)
def test_the_kept_verdict_is_always_the_uncached_one(timeout: Any, ceiling: int, kinds: frozenset[str], hook: str) -> None:
    reg = registration(hook, intent_kinds=[GENERIC_INTENT_KIND])
    reg["budget"]["timeout_ms"] = timeout
    ceilings = {**CORE_CEILINGS, "timeout_ms": ceiling}
    for _ in range(2):
        assert validate_registration(reg, known_intent_kinds=kinds, ceilings=ceilings) == fresh(reg, kinds, ceilings)
