"""Where two compared values differ: the first differing path, both values there, and cuts that
never fall before the first difference (pwh/_harness/difference.py)."""

from __future__ import annotations

import ast
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pwh._harness.difference import LEAF_LIMIT, cut_around, cut_pair, first_difference, first_differing_index
from pwh._harness.expect import ExpectationFailed, Ledger, expect_equal, pop_ledger, push_ledger

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=30).filter(lambda t: not t.startswith(("{", "["))),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


def _at(value: Any, path: str) -> Any:
    """The value at a path first_difference wrote ($, .name, [index], ['key']), or an absent mark."""
    for name, index, key in re.findall(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\]", path[1:]):
        step: Any = name or (int(index) if index else ast.literal_eval(key))
        if isinstance(value, dict) and step in value:
            value = value[step]
        elif isinstance(value, list) and isinstance(step, int) and step < len(value):
            value = value[step]
        else:
            return "(absent)"
    return repr(value)


@given(json_values, json_values)
def test_the_first_difference_names_a_path_where_both_values_really_differ(wanted: Any, actual: Any) -> None:
    found = first_difference(wanted, actual)
    if repr(wanted) == repr(actual):
        assert found is None
        return
    assert found is not None
    expected, seen = _at(wanted, found.path), _at(actual, found.path)
    assert expected != seen
    if max(len(expected), len(seen)) <= LEAF_LIMIT:
        assert (found.expected, found.seen) == (expected, seen)


def test_a_rounded_big_integer_deep_in_a_long_payload_is_shown_with_its_path() -> None:
    wanted = [{"intent_kind": "a.report", "payload": {"note": "x" * 900, "score": 9007199254740993}}]
    actual = [{"intent_kind": "a.report", "payload": {"note": "x" * 900, "score": 9007199254740992.0}}]
    found = first_difference(wanted, actual)
    assert found is not None and found.as_dict() == {
        "path": "$[0].payload.score",
        "expected": "9007199254740993",
        "seen": "9007199254740992.0",
        "others": 0,
    }
    expected, seen = cut_pair(repr(wanted), repr(actual))
    assert "9007199254740993" in expected and "9007199254740992.0" in seen and expected.startswith("…")


def test_a_value_of_another_type_differs_even_where_python_calls_it_equal() -> None:
    assert first_difference({"n": 1}, {"n": True}) is not None
    assert first_difference([1], [1.0]) is not None
    assert first_difference({"a": 1, "b": 2}, {"a": 1, "c": 2}) is not None
    found = first_difference({"a": 1, "b": 2}, {"a": 1, "c": 2})
    assert found is not None and (found.path, found.seen, found.others) == ("$.b", "(absent)", 1)
    assert first_difference({"a": [1, 2]}, {"a": [1, 2, 3]}).path == "$.a[2]"  # type: ignore[union-attr]
    assert first_difference({"odd key": 1}, {"odd key": 2}).path == "$['odd key']"  # type: ignore[union-attr]


@given(st.text(max_size=2000), st.text(max_size=200), st.text(max_size=200), st.integers(8, 500))
def test_a_cut_never_falls_before_the_first_difference(head: str, tail_a: str, tail_b: str, limit: int) -> None:
    a, b = head + tail_a, head + tail_b  # a shared head of any length, then anything
    at = first_differing_index(a, b)
    if at is None:
        assert a == b and cut_pair(a, b, limit)[0] == cut_pair(a, b, limit)[1]
        return
    assert a[:at] == b[:at] and (at == min(len(a), len(b)) or a[at] != b[at])
    for text, cut in zip((a, b), cut_pair(a, b, limit), strict=True):
        body = cut.removeprefix("…").removesuffix("…")
        assert len(body) <= limit
        starts = [s for s in range(len(text) - len(body) + 1) if text.startswith(body, s)]
        assert starts
        if at < len(text):  # the differing character itself is shown
            assert any(s <= at < s + len(body) for s in starts)


def test_cut_around_keeps_whole_texts_whole() -> None:
    assert cut_around("short", 3, 10) == "short"
    assert cut_around("a" * 50 + "B" + "c" * 50, 50, 20).count("B") == 1


def test_expect_equal_carries_the_difference_to_the_failure_and_to_a_divergence() -> None:
    wanted, actual = {"payload": {"score": 2**53 + 1}}, {"payload": {"score": float(2**53 + 1)}}
    with pytest.raises(ExpectationFailed) as failed:
        expect_equal(actual, wanted, "the intent", rfc="§12.M04")
    assert failed.value.difference is not None and failed.value.difference.path == "$.payload.score"
    ledger = Ledger()
    push_ledger(ledger)
    try:
        assert expect_equal(actual, wanted, "the intent", profile="pwh's reading") is False
    finally:
        pop_ledger(ledger)
    assert ledger.divergences[0]["difference"]["path"] == "$.payload.score"
    assert expect_equal(wanted, wanted, "the intent", rfc="§12.M04") is True


def test_two_encoded_records_are_compared_as_what_they_encode() -> None:
    found = first_difference(['{"payload": {"score": 9007199254740993}}'], ['{"payload": {"score": 9007199254740992.0}}'])
    assert found is not None and (found.path, found.expected, found.seen) == (
        "$[0].payload.score",
        "9007199254740993",
        "9007199254740992.0",
    )
    assert first_difference("{not json", "{not json either").path == "$"  # type: ignore[union-attr]


def test_a_value_nested_past_the_recursion_limit_has_no_difference_rather_than_an_error() -> None:
    deep_a: Any = 1
    deep_b: Any = 2
    for _ in range(5000):
        deep_a, deep_b = [deep_a], [deep_b]
    assert first_difference(deep_a, deep_b) is None
    text = "[" * 100_000 + "]" * 100_000
    assert first_difference(text, text[:-1] + " ]") is not None  # not JSON past the limit: compared as text
