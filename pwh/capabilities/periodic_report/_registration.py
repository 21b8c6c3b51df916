"""The periodic-report hook's contract data: its registration (RFC §6) and its payload schema.

Kept as plain data so the composition root can hand it to any registrar (reference or LoopX)
and so the public packet can ship the payload schema for other languages to validate against.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

HOOK_ID: Final = "periodic_report.runtime_trigger"
CAPABILITY_ID: Final = "periodic_report"
INTENT_KIND: Final = "periodic_report.trigger_evaluation"
OPERATION: Final = "evaluate_runtime_trigger"
POLICY_VERSION: Final = "weekly_v0"

REGISTRATION_SCHEMA_VERSION: Final = "loopx_post_writeback_capability_hook_registration_v0"
INPUT_SCHEMA_VERSION: Final = "loopx_post_writeback_hook_input_v0"
PROJECTION_SCHEMA_VERSION: Final = "loopx_post_writeback_event_projection_v0"
RESULT_SCHEMA_VERSION: Final = "loopx_post_writeback_hook_result_v0"
INTENT_SCHEMA_VERSION: Final = "loopx_post_writeback_intent_v0"

SEGMENT_COMPLETED: Final = "segment_completed"
REPLANNED: Final = "replanned"

# Which projected transition makes which event kind eligible (rules M10/M11). Anything else
# (e.g. ``segment_progressed``) is a completion that did not close a bounded segment.
ELIGIBLE_TRANSITIONS: Final[Mapping[str, str]] = {
    "todo_completed": SEGMENT_COMPLETED,
    "replan_recorded": REPLANNED,
}

# "(?!\n)$" ends the string in both Python and ECMA-262 regexes (Python's "$" alone also
# matches before a final newline), so every validator of the published schema agrees.
TOKEN_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}(?!\n)$"
MAX_SOURCE_EVENT_REFS: Final = 16

# ``re.fullmatch`` (not the pattern's ``$``) so a trailing newline is refused here, as it is by
# an ECMA-262 validator; Python's ``re.search`` with ``$`` would let "token\n" through.
_TOKEN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")

REGISTRATION: Final[dict[str, Any]] = {
    "schema_version": REGISTRATION_SCHEMA_VERSION,
    "hook_id": HOOK_ID,
    "capability_id": CAPABILITY_ID,
    "phase": "post_writeback",
    "event_kinds": ["todo_completed", "replan_recorded"],
    "intent_kinds": [INTENT_KIND],
    "requested_read_scope": ["settlement_identity", "bounded_event_projection"],
    "budget": {
        "max_invocations_per_dispatch": 1,
        "max_intents_per_dispatch": 1,
        "max_result_bytes": 16384,
        "timeout_ms": 1000,
    },
    "failure_policy": "isolate",
}

PAYLOAD_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "periodic_report.trigger_evaluation payload (weekly_v0)",
    "type": "object",
    "additionalProperties": False,
    "required": ["transition", "segment_ref", "source_event_refs"],
    "properties": {
        "transition": {"type": "string", "enum": [SEGMENT_COMPLETED, REPLANNED]},
        "segment_ref": {"$ref": "#/$defs/opaque_token"},
        "source_event_refs": {
            "type": "array",
            "items": {"$ref": "#/$defs/opaque_token"},
            "minItems": 0,
            "maxItems": MAX_SOURCE_EVENT_REFS,
            "uniqueItems": True,
        },
    },
    "$defs": {
        "opaque_token": {"type": "string", "maxLength": 128, "pattern": TOKEN_PATTERN},
    },
}

INTENT_BUDGET: Final[Mapping[str, int]] = {"max_attempts": 1, "max_result_bytes": 16384}


def is_opaque_token(value: Any) -> bool:
    """True for an exact ``str`` matching the opaque-token pattern (no subclasses, no newline)."""
    return type(value) is str and _TOKEN_RE.fullmatch(value) is not None


def payload_problem(payload: Any) -> tuple[str, str] | None:
    """``(json_path, reason)`` if ``payload`` breaks :data:`PAYLOAD_SCHEMA`, else ``None``.

    A hand-written twin of the schema so the producer and reducer stay dependency-free and
    cannot raise; a property test keeps the two in agreement.
    """
    if type(payload) is not dict:
        return "$", "payload must be an object"
    extra = sorted(set(payload) - set(PAYLOAD_SCHEMA["properties"]))
    if extra:
        return "$", "payload has fields outside the schema"
    for key in PAYLOAD_SCHEMA["required"]:
        if key not in payload:
            return f"$.{key}", "required field is missing"
    transition = payload["transition"]
    if type(transition) is not str or transition not in (SEGMENT_COMPLETED, REPLANNED):
        return "$.transition", "transition is not one the policy evaluates"
    if not is_opaque_token(payload["segment_ref"]):
        return "$.segment_ref", "segment_ref is not an opaque token"
    refs = payload["source_event_refs"]
    if type(refs) is not list:
        return "$.source_event_refs", "source_event_refs must be an array"
    if len(refs) > MAX_SOURCE_EVENT_REFS:
        return "$.source_event_refs", "too many source_event_refs"
    for i, ref in enumerate(refs):
        if not is_opaque_token(ref):
            return f"$.source_event_refs[{i}]", "source event ref is not an opaque token"
    if len(set(refs)) != len(refs):
        return "$.source_event_refs", "source_event_refs must be unique"
    return None
