"""What crosses to LoopX beyond the mapping table's rows, and how the adapter judges a crossing:
registration flaws carried in the contract LoopX's validator reads, receipt ids LoopX never shows,
byte budgets its own result shape cannot keep, and the source packet of an install-time probe.
Pure functions over values; :mod:`.adapter` calls them.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Mapping
from typing import Any

from pwh._core.boundary import scan_value
from pwh._core.canonical import canonical_bytes
from pwh._core.schemas import load_schema
from pwh._suts.loopx.map import SCHEMAS, get_path, put_path

__all__ = [
    "budget_sides_differ",
    "contract_edits",
    "is_private",
    "probe_source",
    "receipt_id_in_source",
    "release_tuple",
    "with_contract_edits",
]

# Before 1.3.0 LoopX's source packet has no ``receipt_id`` (its decoder refuses one it does not know).
SOURCE_RECEIPT_ID_SINCE = (1, 3, 0)


# Registration flaws LoopX's Python type cannot hold but its TypeScript validator judges: the
# contract it hands that validator carries them (dispatch_post_writeback_hooks takes any object
# with a contract(); capability_hooks.ts validates phase, failure_policy, the budget and the exact
# field set). Other flaws stay inexpressible.
_CONTRACT_FIELDS = frozenset({"phase", "failure_policy", "budget.max_invocations_per_dispatch"})
_RFC_REGISTRATION_FIELDS = frozenset(load_schema("registration")["properties"])


def contract_edits(registration: Mapping[str, Any], problems: list[tuple[str, Any]]) -> dict[str, Any] | None:
    """``{contract path: the harness's value}`` for problems LoopX's contract can carry, ``{}``
    for none, ``None`` when one of them cannot be put to LoopX."""
    edits: dict[str, Any] = {}
    for concept, known in problems:
        field = concept.removeprefix("registration.")
        if field in _CONTRACT_FIELDS or (known is None and field and "." not in field and field in registration):
            edits[field] = get_path(registration, field)
        elif known is None and concept == "registration":  # a field whose name the path withholds (a private key)
            extra = {k: v for k, v in registration.items() if isinstance(k, str) and k not in _RFC_REGISTRATION_FIELDS}
            if not extra:
                return None
            edits.update(extra)
        else:
            return None
    return edits


def with_contract_edits(base: Any, edits: Mapping[str, Any]) -> Any:
    """A registration type whose contract carries ``edits`` over LoopX's own."""

    def contract(self: Any) -> dict[str, Any]:
        out = base.contract(self)
        for path, value in edits.items():
            put_path(out, path, copy.deepcopy(value))
        return out

    return type("EditedContractRegistration", (base,), {"contract": contract})


def is_private(receipt_id: Any) -> bool:
    """Whether a harness receipt id is a value the public boundary refuses (LoopX never shows it:
    its inputs and receipts carry only its hashed pwr_ id, so the adapter must not put it back)."""
    return isinstance(receipt_id, str) and bool(scan_value(receipt_id, "$.receipt_id"))


def budget_sides_differ(rfc_result: Any, loopx_result: Any, budget: Any) -> bool:
    """Whether the RFC result and its LoopX translation fall on either side of the byte budget:
    the RFC's canonical bytes against LoopX's own measure (JSON.stringify's bytes). A result that
    is not JSON is LoopX's alone to judge."""
    if not isinstance(budget, int) or loopx_result is rfc_result:
        return False
    try:
        rfc = len(canonical_bytes(rfc_result))
        loopx = len(json.dumps(loopx_result, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8"))
    except (TypeError, ValueError, RecursionError):  # CanonicalError is a ValueError
        return False
    return (rfc > budget) != (loopx > budget)


def release_tuple(version: str | None) -> tuple[int, ...]:
    """``1.2.4`` as ``(1, 2, 4)``; a version that is not plain numbers (or none) counts as the
    newest, so an unknown build is driven as today's LoopX is."""
    parts = (version or "").split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else (sys.maxsize,)


def receipt_id_in_source(version: str | None) -> bool:
    """Whether release ``version``'s post-writeback source packet carries a ``receipt_id``."""
    return release_tuple(version) >= SOURCE_RECEIPT_ID_SINCE


def probe_source(kind: str, *, receipt_id: bool = True) -> dict[str, Any]:
    """The committed source packet of an install-time probe (runtime_root=None: nothing persists);
    without its ``receipt_id`` for a release that has none (:func:`receipt_id_in_source`)."""
    packet = {
        "schema_version": SCHEMAS["pwh_primary_receipt_v0"],
        "event_kind": kind,
        "status": "committed",
        "durable": True,
        "identity": {
            "goal_id": "goal_probe",
            "agent_id": "agent_probe",
            "todo_id": "todo_probe",
            "turn_instance_id": "turn_probe",
            "effect_id": "effect_probe",
        },
        "state_version": "rev_probe",
        "receipt_id": "receipt_probe",
        "committed_at": "1970-01-01T00:00:00Z",
        "projection": {},
    }
    if not receipt_id:
        del packet["receipt_id"]
    return packet
