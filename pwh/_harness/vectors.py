"""Identity test vectors: fixed inputs and the ids the reference profile gives them.

Published in the public packet so another implementation can opt into byte-equal identities.
The file is generated from :data:`CASES`; a test checks the shipped file still matches.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from pwh._core.canonical import canonical_bytes
from pwh._core.identity import dispatch_id, intent_id

REG_V0 = "loopx_post_writeback_capability_hook_registration_v0"

DISPATCH_CASES: tuple[dict[str, str], ...] = (
    {
        "receipt_id": "receipt_opaque",
        "hook_id": "periodic_report.runtime_trigger",
        "registration_schema_version": REG_V0,
        "event_kind": "todo_completed",
    },
    {
        "receipt_id": "receipt_opaque",
        "hook_id": "periodic_report.runtime_trigger",
        "registration_schema_version": REG_V0,
        "event_kind": "replan_recorded",
    },
    {
        "receipt_id": "receipt_opaque_2",
        "hook_id": "periodic_report.runtime_trigger",
        "registration_schema_version": REG_V0,
        "event_kind": "todo_completed",
    },
    {"receipt_id": "receipt_opaque", "hook_id": "a.reporter", "registration_schema_version": REG_V0, "event_kind": "todo_completed"},
    {
        "receipt_id": "receipt_opaque",
        "hook_id": "periodic_report.runtime_trigger",
        "registration_schema_version": REG_V0 + "_next",
        "event_kind": "todo_completed",
    },
    {"receipt_id": "r\u00e9ceipt_unicode", "hook_id": "b.flaky", "registration_schema_version": REG_V0, "event_kind": "todo_completed"},
)

INTENT_CASES: tuple[dict[str, Any], ...] = (
    {
        "dispatch_id": "pwh_" + "0" * 64,
        "intent_kind": "periodic_report.trigger_evaluation",
        "policy_version": "weekly_v0",
        "payload": {"transition": "segment_completed", "segment_ref": "segment_opaque", "source_event_refs": ["event_opaque"]},
    },
    {
        "dispatch_id": "pwh_" + "0" * 64,
        "intent_kind": "periodic_report.trigger_evaluation",
        "policy_version": "weekly_v0",
        "payload": {"source_event_refs": ["event_opaque"], "segment_ref": "segment_opaque", "transition": "segment_completed"},
    },
    {
        "dispatch_id": "pwh_" + "0" * 64,
        "intent_kind": "periodic_report.trigger_evaluation",
        "policy_version": "weekly_v1",
        "payload": {"transition": "segment_completed", "segment_ref": "segment_opaque", "source_event_refs": ["event_opaque"]},
    },
    {
        "dispatch_id": "pwh_" + "1" * 64,
        "intent_kind": "periodic_report.trigger_evaluation",
        "policy_version": "weekly_v0",
        "payload": {"transition": "replanned", "segment_ref": "segment_opaque", "source_event_refs": []},
    },
    {
        "dispatch_id": "pwh_" + "1" * 64,
        "intent_kind": "x.numbers",
        "policy_version": "v0",
        "payload": {"int": 1, "float": 1.5, "neg": -0.25, "big": 9007199254740991, "t": True, "n": None},
    },
)


def build_vectors() -> dict[str, Any]:
    """The vector document, computed from the cases with the reference profile."""
    return {
        "schema_version": "pwh_identity_vectors_v0",
        "recipe": {
            "canonical_json": "UTF-8, keys sorted, separators ',' and ':', no whitespace, no NaN/Infinity",
            "dispatch_id": "'pwh_' + sha256(canonical {receipt_id, hook_id, registration_schema_version, event_kind})",
            "intent_id": "'pwi_' + sha256(canonical {dispatch_id, intent_kind, policy_version, payload})",
        },
        "dispatch_id": [
            {"input": case, "canonical": canonical_bytes(case).decode("utf-8"), "dispatch_id": dispatch_id(**case)}
            for case in DISPATCH_CASES
        ],
        "intent_id": [
            {
                "input": case,
                "canonical": canonical_bytes({k: case[k] for k in ("dispatch_id", "intent_kind", "policy_version", "payload")}).decode(
                    "utf-8"
                ),
                "intent_id": intent_id(case["dispatch_id"], case["intent_kind"], case["policy_version"], case["payload"]),
            }
            for case in INTENT_CASES
        ],
    }


def render_vectors() -> str:
    return json.dumps(build_vectors(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def shipped_vectors() -> dict[str, Any]:
    return json.loads(resources.files("pwh").joinpath("vectors", "identity.json").read_text("utf-8"))
