"""The compiled validity check agrees with jsonschema on every packet pwh validates."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakes._packets import (
    GENERIC_PAYLOAD_SCHEMA,
    intent_for,
    proposed,
    registration,
    source,
)
from pwh import build_hook_input
from pwh._core.fastschema import compile_check
from pwh._core.schemas import _resolve, compile_schema, validator
from pwh.capabilities.periodic_report import PAYLOAD_SCHEMA

_INPUT = build_hook_input(source(), registration(), "pwh_" + "0" * 64)
VALID: dict[str, Any] = {
    "registration": registration(),
    "source_receipt": source(),
    "hook_input": _INPUT,
    "hook_result": proposed(intent_for(_INPUT)),
    "intent": intent_for(_INPUT),
}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 70000)
    | st.floats(allow_nan=False)
    | st.sampled_from(["", "x", "receipt_1", "receipt_1\n", "todo_completed", "post_writeback", "isolate", "a b", "pwh_" + "0" * 64]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "status", "intents", "x"]), inner, max_size=3),
    max_leaves=8,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, prefix + (i,))
    return out


@st.composite
def mutated(draw: Any, name: str) -> Any:
    value = copy.deepcopy(VALID[name])
    for _ in range(draw(st.integers(0, 2))):
        paths = _paths(value)
        path = draw(st.sampled_from(paths))
        replacement = draw(json_values)
        if not path:
            value = replacement
            continue
        parent = value
        for part in path[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "command", "status"]))] = replacement
        else:
            parent[path[-1]] = replacement
    return value


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_packets_compile_and_pass(name: str) -> None:
    check = compile_check(validator(name).schema, _resolve)
    assert check is not None and check(VALID[name])


@pytest.mark.parametrize("name", sorted(VALID))
@given(data=st.data())
def test_fast_check_agrees_with_jsonschema(name: str, data: st.DataObject) -> None:
    value = data.draw(mutated(name))
    check = compile_check(validator(name).schema, _resolve)
    assert check(value) == validator(name).is_valid(value)


@pytest.mark.parametrize("schema", [GENERIC_PAYLOAD_SCHEMA, PAYLOAD_SCHEMA])
@given(value=json_values)
def test_payload_schemas_agree(schema: dict[str, Any], value: Any) -> None:
    check = compile_check(schema, _resolve)
    assert check is not None and check(value) == compile_schema(schema).is_valid(value)


@pytest.mark.parametrize(
    "schema, value",
    [
        ({"type": "integer"}, True),
        ({"type": "integer"}, 1.0),
        ({"type": "number"}, False),
        ({"const": False}, 0),
        ({"const": False}, 0.0),
        ({"const": False}, False),
        ({"const": False}, None),
        ({"const": True}, 1),
        ({"const": True}, 1.0),
        ({"const": True}, True),
        ({"const": None}, None),
        ({"const": None}, False),
        ({"const": None}, 0),
        ({"const": None}, ""),
        ({"const": 1}, True),
        ({"const": {"a": 1}}, {"a": 1, "b": 2}),
        ({"const": [1, 2]}, [1]),
        ({"enum": [1, "a"]}, 1.0),
        ({"uniqueItems": True}, [1, True]),
        ({"uniqueItems": True}, [1, 1.0]),
        ({"type": "string", "pattern": "^a(?!\\n)$"}, "a\n"),
        ({"maxLength": 2}, "abc"),
        ({"type": "string", "maxLength": 2}, "abc"),
        ({"type": "string", "maxLength": 2}, 12),
        ({"type": "string", "pattern": "^a+$", "maxLength": 2}, "aaa"),
        ({"type": "string", "pattern": "^a+$", "maxLength": 2}, "aa"),
        ({"type": "string", "pattern": "^a+$"}, ["a"]),
        ({"type": "object", "properties": {"a": {"const": 1}}, "additionalProperties": False}, []),
        ({"type": "object", "required": ["a"]}, {"b": 1}),
        ({"minimum": 0}, "not a number"),
        ({"oneOf": [{"type": "null"}, {"type": "string"}]}, None),
        ({"if": {"const": 1}, "then": {"type": "integer"}, "else": {"type": "string"}}, 2),
    ],
)
def test_edge_cases_agree(schema: dict[str, Any], value: Any) -> None:
    check = compile_check(schema, _resolve)
    assert check is not None and check(value) == compile_schema(schema).is_valid(value)


def test_unsupported_keywords_fall_back_to_jsonschema() -> None:
    assert compile_check({"type": "object", "patternProperties": {"^x": {}}}, _resolve) is None
    assert compile_check({"format": "email"}, _resolve) is None
