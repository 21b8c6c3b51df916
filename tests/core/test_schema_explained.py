"""schema_rejections keeps the explanation of a small plain invalid value by its exact text
(pwh/_core/schemas.py): whatever was explained before, a value gets the rejections its own walk gives."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fakes._packets import registration
from pwh._core import schemas
from pwh._core.schemas import schema_rejections, validator


def walked(name: str, value: Any, code: str = "c", prefix: tuple[Any, ...] = ()) -> list[Any]:
    """The rejections with nothing kept: jsonschema's own walk, as schema_rejections explains it."""
    check = validator(name)
    out = [r for error in check.iter_errors(value) for r in schemas._explain(error, code, prefix)]
    return sorted(set(out), key=lambda r: (r.path, r.reason))[: schemas.MAX_ERRORS]


def test_an_invalid_value_explained_again_gets_equal_rejections_in_a_list_of_its_own() -> None:
    bad = {"status": "done", "message": "all good"}
    first = schema_rejections(validator("hook_result"), bad, "c")
    assert first and first == walked("hook_result", bad)
    first.clear()
    assert schema_rejections(validator("hook_result"), bad, "c") == walked("hook_result", bad)


def test_values_that_print_alike_in_json_are_told_apart() -> None:
    reg = registration("a.alpha")
    as_int, as_float, as_bool = ({**reg, "budget": {**reg["budget"], "timeout_ms": v}} for v in (10**9, 1e9, True))
    for value in (as_int, as_float, as_bool, as_int):
        assert schema_rejections(validator("registration"), value, "c") == walked("registration", value)
    tupled = {**reg, "event_kinds": ("todo_completed",)}  # not plain JSON: never kept
    assert schema_rejections(validator("registration"), tupled, "c") == walked("registration", tupled)


def test_the_code_and_the_prefix_are_part_of_what_is_kept() -> None:
    bad = {"status": "done"}
    assert schema_rejections(validator("hook_result"), bad, "a") == walked("hook_result", bad, "a")
    assert schema_rejections(validator("hook_result"), bad, "b", ("intents", 0)) == walked("hook_result", bad, "b", ("intents", 0))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=4),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["status", "intents", "schema_version", "x"]), children, max_size=4)
    ),
    max_leaves=12,
)


@given(value=json_values)
def test_the_kept_explanation_is_always_the_walk(value: Any) -> None:
    for _ in range(2):
        got = schema_rejections(validator("hook_result"), value, "c")
        assert got == ([] if not walked("hook_result", value) else walked("hook_result", value))
