"""Identity (SPEC §3): canonical JSON and the dispatch/intent digests are stable and sensitive."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pwh import CanonicalError, canonical_bytes, dispatch_id, intent_id
from pwh._core.identity import plain_dispatch_id, plain_intent_id
from pwh._harness.vectors import build_vectors, shipped_vectors

json_scalars = (
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20) | st.floats(allow_nan=False, allow_infinity=False)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
tokens = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)


def test_canonical_form_sorts_keys_and_drops_whitespace() -> None:
    assert canonical_bytes({"b": 1, "a": [1, {"d": None, "c": "é"}]}) == '{"a":[1,{"c":"é","d":null}],"b":1}'.encode()


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, {1: "x"}, object(), b"bytes", {1.5}])
def test_canonical_form_refuses_non_json(bad: object) -> None:
    with pytest.raises(CanonicalError):
        canonical_bytes({"v": [bad]})


def test_canonical_error_names_the_path() -> None:
    with pytest.raises(CanonicalError) as info:
        canonical_bytes({"intents": [{"payload": {"x": math.nan}}]})
    assert info.value.path == "$.intents[0].payload.x"


@given(json_values)
def test_key_order_and_whitespace_do_not_matter(value: object) -> None:
    pretty = json.loads(json.dumps(value, indent=3, sort_keys=False))
    reordered = json.loads(json.dumps(value, sort_keys=True))
    assert canonical_bytes(pretty) == canonical_bytes(reordered) == canonical_bytes(value)
    assert intent_id("pwh_x", "k", "v0", pretty) == intent_id("pwh_x", "k", "v0", reordered)


@given(tokens, tokens, tokens, tokens, st.integers(0, 3), tokens)
def test_dispatch_id_changes_with_every_component(r: str, h: str, s: str, e: str, which: int, other: str) -> None:
    parts = [r, h, s, e]
    base = dispatch_id(*parts)
    assert base == dispatch_id(*parts)  # stable
    changed = list(parts)
    changed[which] = changed[which] + "_" + other
    assert dispatch_id(*changed) != base


@given(tokens, tokens, tokens, json_values, st.integers(0, 3))
def test_intent_id_changes_with_every_component(d: str, k: str, p: str, payload: object, which: int) -> None:
    parts: list[object] = [d, k, p, {"v": payload}]
    base = intent_id(*parts)  # type: ignore[arg-type]
    changed = list(parts)
    changed[which] = {"v": payload, "x": 1} if which == 3 else str(changed[which]) + "_x"
    assert intent_id(*changed) != base  # type: ignore[arg-type]


def test_ids_have_prefixes_and_hex_digests() -> None:
    assert dispatch_id("r", "h", "s", "e").startswith("pwh_") and len(dispatch_id("r", "h", "s", "e")) == 68
    assert intent_id("d", "k", "p", {}).startswith("pwi_")


def test_shipped_vectors_match_the_reference_profile() -> None:
    assert shipped_vectors() == build_vectors()


def test_each_vector_recomputes() -> None:
    vectors = shipped_vectors()
    for case in vectors["dispatch_id"]:
        assert dispatch_id(**case["input"]) == case["dispatch_id"]
        assert canonical_bytes(case["input"]).decode() == case["canonical"]
    for case in vectors["intent_id"]:
        i = case["input"]
        assert intent_id(i["dispatch_id"], i["intent_kind"], i["policy_version"], i["payload"]) == case["intent_id"]
    # the two payloads written in different key orders share one id
    assert vectors["intent_id"][0]["intent_id"] == vectors["intent_id"][1]["intent_id"]


def test_hostile_and_oversized_values_are_refused_cheaply() -> None:
    from pwh._core.canonical import to_plain

    class Hostile:
        def __eq__(self, other: object) -> bool:
            raise AssertionError("__eq__ ran")

        __hash__ = None  # type: ignore[assignment]

        @property
        def __class__(self):  # type: ignore[no-untyped-def,override]
            raise AssertionError("__class__ ran")

    with pytest.raises(CanonicalError):
        to_plain({"x": Hostile()})
    with pytest.raises(CanonicalError) as info:
        to_plain({"n": 2**70})
    assert info.value.path == "$.n"
    huge = ["x" * 10] * 10_000_000
    with pytest.raises(CanonicalError) as info:
        to_plain({"items": huge}, max_bytes=16384)
    assert "byte budget" in info.value.reason  # refused at the budget, not after copying it all
    deep: object = "bottom"
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(CanonicalError):
        to_plain(deep)


@given(st.text(max_size=30), st.text(max_size=30), st.text(max_size=30), st.text(max_size=30))
def test_the_dispatchers_plain_dispatch_id_is_the_same_digest(r: str, h: str, s: str, e: str) -> None:
    try:
        expected = dispatch_id(r, h, s, e)
    except CanonicalError:  # a lone surrogate: not text the dispatcher ever gets (its source is validated)
        return
    assert plain_dispatch_id(r, h, s, e) == expected


_odd_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(["\ud800", b"bytes", (1, 2), frozenset({1})]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=4) | st.integers(0, 3), inner, max_size=3)
    ),
    max_leaves=10,
)


def _strict(value: object) -> object:
    if type(value) is dict:
        return ("d", tuple((k, _strict(v)) for k, v in value.items()))  # type: ignore[attr-defined]
    if type(value) is list:
        return ("l", tuple(_strict(v) for v in value))  # type: ignore[attr-defined]
    return (type(value).__name__, value)


def _nested(depth: int) -> object:
    value: object = []
    for _ in range(depth):
        value = [value]
    return value


@settings(max_examples=400)  # cheap: the copies are tiny
@given(_odd_values, st.one_of(st.none(), st.integers(0, 60)))
@example(2**64, None)
@example({"n": -(2**64)}, None)
@example({"x": [float("nan")]}, None)
@example([float("-inf"), "\ud800"], None)
@example({"\ud800": 1}, None)
@example(_nested(64), None)
@example(_nested(65), None)
@example({"k": _nested(64)}, None)
def test_the_quick_copy_returns_only_what_the_path_naming_copy_returns(value: object, budget: int | None) -> None:
    from pwh._core.canonical import QuickCopyUnsure, _free_copy, _plain, quick_copy

    limit = -1 if budget is None else budget
    try:
        slow = _plain(value, (), 0, [limit])
    except CanonicalError:
        slow = CanonicalError
    copies = [lambda: quick_copy(value, 0, [limit])] + ([lambda: _free_copy(value, 0)] if budget is None else [])
    for copy in copies:  # with no budget, the copy that counts nothing must agree as well
        try:
            quick = copy()
        except (QuickCopyUnsure, UnicodeEncodeError):
            continue  # unsure is always allowed: the path-naming copy then decides
        assert slow is not CanonicalError and _strict(quick) == _strict(slow)


@given(st.text(max_size=20), st.text(max_size=20), json_values)
def test_the_plain_intent_id_is_the_same_digest(kind: str, version: str, payload: object) -> None:
    try:
        expected = intent_id("pwh_x", kind, version, payload)
    except CanonicalError:  # not plain JSON: the fast path never gets such a payload
        return
    assert plain_intent_id("pwh_x", kind, version, payload) == expected


@settings(max_examples=300)  # cheap: small values, two encodings each
@given(json_values)
@example({"z": 1e16, "a": [-0.0, 1.5e-7, 2**63], "é": '\u2028\x00"\\'})
def test_the_direct_encoder_writes_the_standard_encoders_bytes(value: object) -> None:
    """dumps_plain reuses one C encoder; its bytes must be the configured JSONEncoder's exactly,
    or every digest and stored record would change."""
    from pwh._core.canonical import _ENCODER, dumps_plain

    assert dumps_plain(value) == _ENCODER.encode(value).encode("utf-8")


def test_the_direct_encoder_refuses_what_is_not_json() -> None:
    from pwh._core.canonical import dumps_plain

    with pytest.raises(TypeError):
        dumps_plain({"x": object()})
