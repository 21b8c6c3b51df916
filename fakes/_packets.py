"""Builders for well-formed packets, so tests and steps state only what they change."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pwh._harness.examples import (
    example_intent,
    example_receipt,
    example_registration,
    example_result,
)

GENERIC_INTENT_KIND = "synthetic.follow_up"
GENERIC_PAYLOAD_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "note_ref": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}(?!\\n)$"},
        "n": {"type": "integer", "minimum": 0, "maximum": 1000000},
        "score": {"type": "number"},
        "filler": {"type": "string", "maxLength": 70000},
        "detail": {"type": "string", "maxLength": 512},
    },
    "required": ["note_ref"],
    "additionalProperties": False,
}


def registration(hook_id: str = "a.reporter", **overrides: Any) -> dict[str, Any]:
    """A valid registration for ``hook_id`` proposing the generic intent kind."""
    return example_registration(hook_id, intent_kinds=overrides.pop("intent_kinds", [GENERIC_INTENT_KIND]), **overrides)


def source(n: int = 1, **overrides: Any) -> dict[str, Any]:
    """A committed, durable primary receipt numbered ``n``."""
    return example_receipt(n, **overrides)


def intent_for(
    hook_input: Mapping[str, Any],
    payload: Mapping[str, Any] | None = None,
    *,
    kind: str = GENERIC_INTENT_KIND,
    policy_version: str = "v0",
    **overrides: Any,
) -> dict[str, Any]:
    """An intent bound to ``hook_input``'s dispatch with a correct ``intent_id``."""
    payload = dict(payload) if payload is not None else {"note_ref": "note_" + hook_input["source"]["receipt_id"]}
    intent = example_intent(
        hook_input["dispatch_id"],
        hook_input["hook_id"],
        payload,
        kind=kind,
        capability_id=hook_input["capability_id"],
        policy_version=policy_version,
    )
    intent.update(copy.deepcopy(overrides))
    return intent


def proposed(*intents: Mapping[str, Any]) -> dict[str, Any]:
    return example_result("proposed", *intents)


def not_applicable() -> dict[str, Any]:
    return example_result("not_applicable")
