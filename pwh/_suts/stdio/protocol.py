"""The stdio seam protocol: its version, its operations, and the checks every message passes.

Each message is one JSON object on one line. One child process serves many SUT instances: the
harness sends ``start`` once (the handshake), then ``open`` for each instance (its answer names
the instance), and every later request ``{"id", "op", "instance", ...}`` names the instance it is
for; ``close`` closes that instance only, and the process ends when its stdin does. The
implementation answers each request with ``{"id", "ok": ...}``, ``{"id", "unsupported": reason}``,
``{"id", "crashed": point}``, ``{"id", "lookup": reason}`` (a writeback read past the last
committed writeback: the harness raises ``LookupError``) or ``{"id", "error": {"type", "message"}}``. While a request is open
it may ask the harness to call a provider of that request's instance, ``{"call", "hook",
"input"}``, and the harness answers ``{"reply", "value"}`` or ``{"reply", "raised"}``. Every
answer is checked against the protocol's JSON Schema (``pwh/schemas/seam_protocol.json``) before
anything reads it: one that does not fit is a :class:`ProtocolError`, the adapter's fault, never a
verdict on the RFC.
"""

from __future__ import annotations

import json
from typing import Any

from pwh._core.schemas import load_schema
from pwh._suts.operations import SEAM_OPERATIONS

__all__ = ["OPERATIONS", "PROTOCOL", "TURN_REQUESTS", "WRITEBACK_REQUESTS", "ProtocolError", "check"]

PROTOCOL = "pwh-seam-stdio/2"
# The operations an instance may offer (the handshake lists those it does); ``start`` and
# ``open`` are the channel's own.
OPERATIONS = (*SEAM_OPERATIONS, "writeback_open", "turn_open")
# The writeback seam (pwh/_suts/writeback_seam.py) over the protocol: ``writeback_open`` on an
# instance opens a boundary (``{"writeback": N, "operations": [...]}``), and each of these requests,
# named after a ``WritebackBoundary`` method, carries the boundary's ``writeback`` and the method's
# keyword arguments; ``writeback_close`` ends it. A request name and the method it calls.
WRITEBACK_REQUESTS: dict[str, str] = {
    f"writeback_{name}": name
    for name in (
        "prepare",
        "register_intent_kind",
        "install",
        "commit_completion",
        "commit_replan",
        "replay",
        "recover",
        "primary_receipt",
        "spend_eligibility",
        "sidecar_records",
        "intent_receipts",
        "hooks_seen",
        "plant",
        "close",
    )
}
# The turn seam (pwh/_suts/turn_seam.py) over the protocol: ``turn_open`` on an instance answers
# ``{"turn": T, "name", "operations"}`` (or null: no turn seam), and each of these requests carries
# ``turn`` and the method's arguments. A request name and the method it calls.
TURN_REQUESTS: dict[str, str] = {f"turn_{name}": name for name in ("register_provider", "build_host_request", "accept_host_output")}
# The requests whose ``lookup`` answer is a ``LookupError`` (a commit number past the last committed
# writeback); to any other request it is outside the protocol.
LOOKUP_REQUESTS = ("writeback_primary_receipt", "writeback_spend_eligibility", "writeback_replay")
# How a provider failure crosses back: the exception class the implementation's proxy raises
# (a fixed table: a message never names a class to build).
RAISED = ("exception", "base_exception")
MAX_LINE_BYTES = 64 * 1024 * 1024


class ProtocolError(Exception):
    """The implementation answered outside the protocol: the adapter broke it, the RFC is not judged."""


_VALIDATORS: dict[str, Any] = {}


def check(message: Any, what: str) -> Any:
    """``message`` if it is a valid ``what`` (a ``$defs`` name of the protocol schema), else
    :class:`ProtocolError` naming the first field at fault."""
    import jsonschema

    validator = _VALIDATORS.get(what)
    if validator is None:
        defs = load_schema("seam_protocol")["$defs"]
        validator = _VALIDATORS[what] = jsonschema.Draft202012Validator({"$ref": f"#/$defs/{what}", "$defs": defs})
    error = jsonschema.exceptions.best_match(validator.iter_errors(message))
    if error is not None:
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        raise ProtocolError(f"{what} at {where}: {error.message[:200]}")
    return message


def parse_line(line: bytes) -> dict[str, Any]:
    if len(line) > MAX_LINE_BYTES:
        raise ProtocolError(f"a line of {len(line)} bytes, over the protocol's {MAX_LINE_BYTES}")
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        raise ProtocolError("a line that is not JSON") from None
    if not isinstance(value, dict):
        raise ProtocolError("a line that is not a JSON object")
    return value
