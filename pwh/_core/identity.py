"""Dispatch and intent identities (rule JNL, P-identity-bytes, RFC §9): stable digests of their semantic inputs.

This is the harness's reference profile. Other implementations must be *stable* (same inputs,
same id; any listed component changed, a new id); the published test vectors let them opt in
to byte equality.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pwh._core.canonical import digest, dumps_plain

DISPATCH_PREFIX = "pwh_"
INTENT_PREFIX = "pwi_"


def _dispatch_fields(receipt_id: Any, hook_id: Any, registration_schema_version: Any, event_kind: Any) -> dict[str, Any]:
    return {
        "receipt_id": receipt_id,
        "hook_id": hook_id,
        "registration_schema_version": registration_schema_version,
        "event_kind": event_kind,
    }


def _intent_fields(dispatch: Any, intent_kind: Any, policy_version: Any, payload: Any) -> dict[str, Any]:
    return {"dispatch_id": dispatch, "intent_kind": intent_kind, "policy_version": policy_version, "payload": payload}


def dispatch_id(receipt_id: str, hook_id: str, registration_schema_version: str, event_kind: str) -> str:
    """Identity of one hook's dispatch for one committed receipt."""
    return DISPATCH_PREFIX + digest(_dispatch_fields(receipt_id, hook_id, registration_schema_version, event_kind))


def intent_id(dispatch: str, intent_kind: str, policy_version: str, payload: Any) -> str:
    """Identity of one intent: its dispatch, kind, policy version and canonical payload."""
    return INTENT_PREFIX + digest(_intent_fields(dispatch, intent_kind, policy_version, payload))


# The same digests for inputs already proven plain JSON (the dispatcher's validated source,
# installed registrations, a result it has just copied): the same bytes, without the defensive copy.


def plain_dispatch_id(receipt_id: str, hook_id: str, registration_schema_version: str, event_kind: str) -> str:
    """:func:`dispatch_id` of plain JSON text."""
    fields = _dispatch_fields(receipt_id, hook_id, registration_schema_version, event_kind)
    return DISPATCH_PREFIX + hashlib.sha256(dumps_plain(fields)).hexdigest()


def plain_intent_id(dispatch: str, intent_kind: str, policy_version: str, payload: Any) -> str:
    """:func:`intent_id` of a plain JSON payload."""
    fields = _intent_fields(dispatch, intent_kind, policy_version, payload)
    return INTENT_PREFIX + hashlib.sha256(dumps_plain(fields)).hexdigest()
