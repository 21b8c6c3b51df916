"""The one result check (pwh/_core/contracts.py::check_result): its early exit never accepts what
the general path would reject, and when it accepts, it yields the same copy and the same bytes; on
ordinary valid results it is actually taken (else it would be dead weight); the general path runs
only when it does not accept; and the check answers what the general path answers."""

from __future__ import annotations

import hashlib
import json
import math
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pwh._core import contracts
from pwh._core.boundary import BoundaryScanner
from pwh._core.canonical import CanonicalError, dumps_plain
from pwh._core.codes import Rejection
from pwh._core.contracts import accept_clean_result, check_result, judge_validated_result, validate_result
from pwh._core.registry import Registry
from pwh._reliability.packets import (
    OPEN_KIND,
    OPEN_PAYLOAD_SCHEMA,
    STRICT_KIND,
    STRICT_PAYLOAD_SCHEMA,
    dispatch_of,
    intent,
    not_applicable,
    proposed,
    registration,
    semantic_intents,
    semantic_results,
    source,
)

REG = registration(intent_kinds=[STRICT_KIND, OPEN_KIND])
DID = dispatch_of(source(1))
SCANNER = BoundaryScanner(private_names=["Quillmoor"])


def _validators() -> Any:
    registry = Registry()
    registry.catalog.register(STRICT_KIND, STRICT_PAYLOAD_SCHEMA)
    registry.catalog.register(OPEN_KIND, OPEN_PAYLOAD_SCHEMA)
    return registry.catalog.validators


VALIDATORS = _validators()


def _strict(value: Any) -> Any:
    """A comparison key that tells 1 from 1.0 from True and a list from a tuple."""
    if type(value) is dict:
        return ("d", tuple((k, _strict(v)) for k, v in value.items()))
    if type(value) is list:
        return ("l", tuple(_strict(v) for v in value))
    return (type(value).__name__, value)


def _general(value: Any, reg: Any) -> Any:
    """The general path alone: the contract with every rejection, then the full scan."""
    plain, raw, rejected = validate_result(value, registration=reg, dispatch=DID, payload_validators=VALIDATORS)
    return judge_validated_result(plain, raw, rejected, SCANNER)


def assert_sound(value: Any, reg: Any = REG) -> bool:
    """If the early exit accepts, the general path accepts the same copy and bytes, and the full
    scan finds nothing; either way the one check answers what the general path answers. Returns
    whether the early exit accepted."""
    fast = accept_clean_result(value, reg, DID, VALIDATORS, SCANNER)
    general = _general(value, reg)
    checked = check_result(value, registration=reg, dispatch=DID, payload_validators=VALIDATORS, scanner=SCANNER)
    if type(general) is Rejection:
        assert checked == general
    else:
        assert type(checked) is tuple and _strict(checked[0]) == _strict(general[0]) and checked[1] == general[1]
    if fast is None:
        return False
    plain, raw, rejected = validate_result(value, registration=reg, dispatch=DID, payload_validators=VALIDATORS)
    assert rejected == [] and plain is not None, rejected
    assert _strict(fast[0]) == _strict(plain)
    assert fast[1] == raw == dumps_plain(plain)
    assert SCANNER.scan_value(plain) == []
    assert checked[0] is fast[0] or _strict(checked[0]) == _strict(fast[0])
    return True


def test_the_early_exit_is_on_for_the_shipped_schemas() -> None:
    assert contracts._SHAPE.enabled


def test_the_general_path_runs_only_when_the_early_exit_does_not_accept(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    real = contracts.validate_result
    monkeypatch.setattr(contracts, "validate_result", lambda *a, **k: calls.append(a) or real(*a, **k))
    good = proposed(intent(DID))
    checked = check_result(good, registration=REG, dispatch=DID, payload_validators=VALIDATORS, scanner=SCANNER)
    assert type(checked) is tuple and calls == []
    bad = proposed(intent(DID) | {"hook_id": "other.hook"})
    checked = check_result(bad, registration=REG, dispatch=DID, payload_validators=VALIDATORS, scanner=SCANNER)
    assert type(checked) is Rejection and checked.path == "$.intents[0].hook_id" and len(calls) == 1


def test_a_result_carrying_a_private_value_is_left_to_the_full_scan() -> None:
    leaky = proposed(intent(DID, {"note_ref": "n1", "detail": "write to ann.lee@acme-widgets.net"}, kind=OPEN_KIND))
    assert not assert_sound(leaky)
    checked = check_result(leaky, registration=REG, dispatch=DID, payload_validators=VALIDATORS, scanner=SCANNER)
    assert type(checked) is Rejection and checked.path == "$.intents[0].payload.detail" and "email" in checked.reason


def test_ordinary_valid_results_take_the_early_exit() -> None:
    assert assert_sound(proposed(intent(DID)))
    assert assert_sound(not_applicable())
    assert assert_sound(proposed(intent(DID, {"note_ref": "n1", "n": 3, "score": 0.5}), intent(DID, {"note_ref": "n2"})))
    assert assert_sound(proposed(intent(DID, {"note": {"deep": [1, 2.5, None, True, "x"]}}, kind=OPEN_KIND)))
    assert assert_sound(proposed(intent(DID, requested_write_scope=["report.publish", "report.draft"])))


def test_named_bad_results_are_never_taken() -> None:
    strict_only = registration()  # the registration these named cases are written against
    for _label, value in semantic_results(DID):
        assert not assert_sound(value, strict_only)
    for _label, bad in semantic_intents(DID):
        assert not assert_sound(proposed(bad), strict_only)


def _with_id(payload: Any, kind: str = STRICT_KIND, **overrides: Any) -> dict[str, Any]:
    """An intent whose id is the digest of its payload, where the payload has one at all."""
    try:
        return intent(DID, payload, kind=kind, **overrides)
    except CanonicalError:  # not JSON: no digest exists, so any id is wrong
        return intent(DID, {"note_ref": "n1"}, kind=kind, **overrides) | {"payload": payload}


def _forged(payload: Any, kind: str = OPEN_KIND) -> dict[str, Any]:
    """An intent whose id is the digest recipe applied to bytes ``to_plain`` would never produce
    (Python's json writes a 70-bit integer, NaN, a lone surrogate): only the copy rules stop it."""
    out = _with_id({"note_ref": "n1"}, kind) | {"payload": payload}
    semantic = {"dispatch_id": DID, "intent_kind": kind, "policy_version": out["policy_version"], "payload": payload}
    out["intent_id"] = (
        "pwi_"
        + hashlib.sha256(
            json.dumps(semantic, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
        ).hexdigest()
    )
    return out


def test_values_only_the_copy_rules_stop_are_never_taken() -> None:
    for odd in (2**70, -(2**65), math.nan, math.inf, "\ud800"):
        assert not assert_sound(proposed(_forged({"note": odd})))
    assert_sound(proposed(_forged({"note": {"k": (1, 2)}})))  # a tuple is copied as the array it stands for, as to_plain does
    assert assert_sound(proposed(_forged({"note": 2**63})))  # the recipe itself is right: in range, taken
    twice = _with_id({"note_ref": "n1"}, requested_write_scope=["report.publish", "report.publish"])
    assert not assert_sound(proposed(twice))


# Values that are JSON-like but that the early exit must leave to the general path, or that the
# general path rejects; each is planted in an otherwise valid result.
ODD_VALUES: list[Any] = [
    1.0,
    True,
    -1,
    2**70,
    math.nan,
    math.inf,
    "\ud800",
    "bob@example.com",
    "/home/quill/notes.md",
    "Quillmoor",
    "ghp_" + "a" * 36,
    (1, 2),
    MappingProxyType({"a": 1}),
    {1: "x"},
    {"\ud800": 1},
    "x" * 5000,
    [[[[[[]]]]]],
    None,
    "",
    "report.publish",
    10**6,
    0.25,
]


class _Str(str):
    pass


PLACES = [
    ("payload", "note_ref"),
    ("payload", "n"),
    ("payload", "detail"),
    ("payload", "score"),
    ("payload", "extra"),
    ("intent", "operation"),
    ("intent", "policy_version"),
    ("intent", "hook_id"),
    ("intent", "intent_kind"),
    ("intent", "requested_write_scope"),
    ("intent", "grants_new_action_authority"),
    ("intent", "failure_policy"),
    ("budget", "max_attempts"),
    ("budget", "max_result_bytes"),
    ("result", "status"),
    ("result", "extra"),
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    place=st.sampled_from(PLACES),
    odd=st.sampled_from(ODD_VALUES + [_Str("note")]),
    kind=st.sampled_from([STRICT_KIND, OPEN_KIND]),
    fix_id=st.booleans(),
    as_tuple=st.booleans(),
)
def test_a_planted_value_is_taken_only_when_the_general_path_agrees(
    place: tuple[str, str], odd: Any, kind: str, fix_id: bool, as_tuple: bool
) -> None:
    payload: dict[str, Any] = {"note_ref": "n1"}
    where, key = place
    if where == "payload":
        payload[key] = odd
    one = _with_id(payload, kind) if fix_id else _with_id({"note_ref": "n1"}, kind) | {"payload": payload}
    if where == "intent":
        one[key] = odd
    elif where == "budget":
        one["budget"] = {**one["budget"], key: odd}
    result: Any = proposed(one)
    if where == "result":
        result[key] = odd
    if as_tuple:
        result["intents"] = tuple(result["intents"])
    assert_sound(result)


@pytest.mark.parametrize("where", ["result", "intent", "budget"])
def test_a_key_of_a_string_subclass_is_left_to_the_general_path(where: str) -> None:
    """A key equal to a contract key but not an exact ``str`` (its own code could run on any
    comparison): never accepted by the early exit, and rejected by the general path."""
    one = _with_id({"note_ref": "n1"}, STRICT_KIND)
    result: Any = proposed(one)
    target = {"result": result, "intent": one, "budget": one["budget"]}[where]
    key = next(iter(target))
    target[_Str(key)] = target.pop(key)
    assert assert_sound(result) is False
    assert validate_result(result, registration=REG, dispatch=DID, payload_validators=VALIDATORS)[0] is None


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**66), 2**66) | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=st.dictionaries(st.text(max_size=8), _json, max_size=4), kind=st.sampled_from([STRICT_KIND, OPEN_KIND]))
def test_any_payload_is_taken_only_when_the_general_path_agrees(payload: dict[str, Any], kind: str) -> None:
    assert_sound(proposed(_with_id(payload, kind)))
