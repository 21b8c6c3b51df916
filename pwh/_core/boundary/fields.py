"""Typed opaque-id fields: the contracts' token grammars, by field name.

A string in one of these fields that matches its grammar is judged as an id, not as free text. So
is a string under any other key that names an id or a reference by its last word (``ref``,
``source_ref``, ``parentId``, ``kind``): the key says what the value is, as a secret-named key
does (:func:`field_grammar`).
"""

from __future__ import annotations

import re

from pwh._core.boundary.secrets import is_secret_key, key_words

# --------------------------------------------------------------------------------------------
# Typed opaque-id fields (SPEC §2: the contracts' token grammars, pwh/schemas/*.json). A string in
# one of these fields that matches the field's grammar is an opaque id: a dotted id is not refused
# for looking like a host under a generic-word TLD (``billing.report``), while a real host
# (``build.acme.com``), a credential, an address or a declared name still is. Every other string
# is free data, judged by every rule. tests/harness/test_boundary_corpus.py holds this table equal to the
# schemas' patterns.
# --------------------------------------------------------------------------------------------

_G_DOTTED = re.compile(r"[a-z][a-z0-9_]{0,63}(?:\.[a-z][a-z0-9_]{0,63}){0,3}")  # hook_id, intent_kind, ...
_G_TOKEN = re.compile(r"[a-z][a-z0-9_]{0,63}")  # capability_id and the enumerated tokens
_G_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:\-]{0,127}")  # source identities and references
_G_DISPATCH = re.compile(r"pwh_[0-9a-f]{64}")
_G_INTENT = re.compile(r"pwi_[0-9a-f]{64}")
_G_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_G_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?Z")
OPAQUE_FIELDS: dict[str, re.Pattern[str]] = {
    **dict.fromkeys(("hook_id", "intent_kind", "intent_kinds", "operation", "policy_version", "requested_write_scope"), _G_DOTTED),
    **dict.fromkeys(
        (
            "capability_id",
            "schema_version",
            "event_kind",
            "event_kinds",
            "transition",
            "step_kind",
            "step_status",
            "phase",
            "status",
            "failure_policy",
            "requested_read_scope",
        ),
        _G_TOKEN,
    ),
    **dict.fromkeys(
        (
            "receipt_id",
            "effect_id",
            "plan_effect_id",
            "goal_id",
            "agent_id",
            "todo_id",
            "turn_instance_id",
            "state_revision",
            "segment_ref",
            "fact_refs",
            "source_receipt_id",
        ),
        _G_REF,
    ),
    **dict.fromkeys(("dispatch_id", "source_dispatch_id"), _G_DISPATCH),
    "intent_id": _G_INTENT,
    "result_digest": _G_DIGEST,
    "committed_at": _G_TIME,
}
_SCHEMA_NAME_MAPS = (".properties", ".patternProperties", ".definitions", "['$defs']", ".$defs")
_SECRET = object()  # walk context: everything below a key that names a secret
_LAST_KEY = re.compile(r"(?:\.([A-Za-z_][A-Za-z0-9_]*)|\['([^'\]]*)'\])(?:\[[0-9]+\])?$")

# The last word of a key that names an id or a reference; a word naming a place makes the value a
# place ("host_id", "url_ref"), and a secret-named key ("session_id") keeps its own rule.
_ID_WORDS = frozenset({"id", "ids", "ref", "refs", "kind", "kinds"})
_ID_ENDINGS = tuple(_ID_WORDS)
_PLACE_WORDS = frozenset(
    """
    host hostname hostnames domain domains server servers url urls uri uris endpoint endpoints address
    addresses addr ip ips email emails mail path paths file files dir dirs folder origin proxy site
    link links href
    """.split()
)


def field_grammar(key: str) -> re.Pattern[str] | None:
    """The grammar a string under ``key`` (exact ``str``) is an opaque id of: the contract's for a
    typed field (:data:`OPAQUE_FIELDS`), the reference grammar for a key naming an id or a
    reference, else None (free data). Not memoised here: the scanner keeps what it learns about
    a key only for keys it found clean."""
    grammar = OPAQUE_FIELDS.get(key)
    if grammar is not None or not key[-5:].lower().endswith(_ID_ENDINGS):  # most keys end in no id word
        return grammar
    words = key_words(key)
    if not words or words[-1] not in _ID_WORDS or any(w in _PLACE_WORDS for w in words) or is_secret_key(key):
        return None
    return _G_REF
