"""How the harness's packets cross to the shipped LoopX and back: the mapping table and its
translations (pure functions; no loopx import here).

Every correspondence is one row of :data:`MAPPING` (harness concept -> LoopX concept -> note),
and the translations read the table rather than repeat it. The rules the rows follow:

- A value LoopX has a place for crosses as it is (renamed or re-keyed by its row), and LoopX
  judges it, even when the harness made it invalid on purpose. A packet that is not the
  harness's shape at all crosses untouched, so LoopX judges that too.
- A field LoopX has no place for crosses only when its value is the one LoopX implies (the row's
  ``only``), or, for a few intent fields (``carried``), when the RFC allows it: the adapter keeps
  those beside LoopX's receipt so the harness sees a whole RFC intent; LoopX judges none of them.
  Anything else is a case LoopX cannot express: :class:`~pwh._suts.seam.Unsupported`, with the row's
  note as the reason.
- A claim LoopX has no field for (an intent granting authority or reporting an external write)
  crosses as the field it is when it is made (``claim``), so LoopX's own exact-field check judges
  it; several intents cross as a list in LoopX's one-intent slot, which LoopX judges the same way.
  A registration flaw its Python type cannot hold (another phase or failure policy, an invalid
  invocation budget, an extra field) crosses in the contract its TypeScript validator reads.
- Where the harness's case cannot be put to LoopX without hiding how LoopX differs, the dispatch
  stops with :class:`LoopxDivergence`, so the scenario fails.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from pwh._core import codes
from pwh._core.codes import json_path
from pwh._core.contracts import (
    HOOK_INPUT_SCHEMA_VERSION,
    INTENT_SCHEMA_VERSION,
    PROJECTION_SCHEMA_VERSION,
    REGISTRATION_SCHEMA_VERSION,
    RESULT_SCHEMA_VERSION,
    SIDECAR_SCHEMA_VERSION,
    validate_registration,
)
from pwh._core.identity import dispatch_id as reference_dispatch_id
from pwh._core.profile import CORE_CEILINGS, Profile
from pwh._core.schemas import schema_rejections, validator
from pwh._suts.seam import Unsupported

EXPECTED_LOOPX = "2.1.1"
CARRIED = "carried"  # LoopX has no place for it; the adapter keeps an RFC-valid value beside LoopX's receipt
CLAIM = "the claim itself, when made"  # LoopX has no such field: false crosses as nothing, any other value as the field it is
SAME_AS_EFFECT_ID = "<the receipt's effect_id>"
ID_PREFIX = "pwh."  # see the ``registration.capability_id`` row
_ON = Profile(phase_enabled=True).to_json()  # LoopX's one mode: the default profile, phase on


@dataclass(frozen=True)
class Row:
    """One correspondence: a harness (RFC) concept, its LoopX concept (``None``: LoopX has no
    place for it), why, and, for a field LoopX lacks, the one harness value it still expresses."""

    harness: str
    loopx: str | None
    note: str
    only: Any = None


# fmt: off
MAPPING: tuple[Row, ...] = (
    # -- the seam --------------------------------------------------------------------------------
    Row("seam.install", "a sentinel dispatch of the registration (nothing persisted)",
        "LoopX has no install step: it validates registrations on every dispatch, so the adapter asks LoopX's own "
        "validator at install time, with a provider of its own, and reports that verdict"),
    Row("seam.set_profile", None, "no execution profile: LoopX dispatches whenever it is called, i.e. the phase is always on"),
    Row("seam.redeliver", "a late finalize of its two-phase transaction",
        "planned by a preflight over no receipt store (as before the first dispatcher's receipts existed), every provider "
        "run, then finalized against the receipts the first one wrote, which LoopX compares: replay or conflict "
        "(post_writeback_hook_transaction.ts, the finalize over a stored receipt)"),
    Row("seam.arm_crash", "the adapter's own points around and inside dispatch_post_writeback_hooks",
        "no crash point inside its receipt write, which runs in its Node transaction (post_writeback_hook_transaction.ts); "
        "the adapter crashes it before LoopX is called, as a provider returns (SimulatedCrash is a BaseException, which "
        "LoopX's isolation of Exception lets through) and after LoopX returns"),
    Row("seam.inject_fault", "one flipped byte, or one changed payload value, in its newest receipt file",
        "no way to make its receipt store unwritable to the process: only a corrupted or a tampered record is expressible"),
    Row("seam.register_intent_kind", None,
        "no intent-kind catalog and no payload schemas: a kind is only a token in a registration, so a schema conflict "
        "or an invalid schema cannot be put to it"),
    Row("seam.restart", "the same runtime_root",
        "LoopX keeps no state between dispatches but its receipts on disk; the adapter reloads its bridge notes from disk"),
    Row("seam.journal_records", "runtime_root/goals/<goal_id>/post_writeback_hooks/<dispatch_id>.json",
        "LoopX's own persisted receipts, translated"),
    Row("seam.hook_order", "registrations sorted by hook_id",
        "LoopX calls hooks in hook_id order (the adapter hands them over in installation order); its answer has no "
        "per-hook list, so the adapter lists hook outcomes in hook_id order too"),
    # -- the execution profile (anything but the default profile with the phase on) ----------------
    Row("profile.phase_enabled", None, "no phase switch: LoopX's phase is always on", only=_ON["phase_enabled"]),
    Row("profile.allowlist", None, "no hook allowlist", only=_ON["allowlist"]),
    Row("profile.max_hooks_per_dispatch", None, "no per-dispatch hook ceiling", only=_ON["max_hooks_per_dispatch"]),
    Row("profile.max_intents_per_dispatch", None, "no per-dispatch intent ceiling", only=_ON["max_intents_per_dispatch"]),
    Row("profile.max_result_bytes_per_dispatch", None, "no per-dispatch result-byte ceiling",
        only=_ON["max_result_bytes_per_dispatch"]),
    Row("profile.max_attempts", None,
        "no retry cap of its own choosing: LoopX retries a failed hook on every replay, up to 10,000 attempts",
        only=_ON["max_attempts"]),
    Row("profile.budget_ceilings", None, "no adjustable budget ceilings (its envelope is fixed)", only=_ON["budget_ceilings"]),
    # -- event kinds (LoopX's are open tokens; any other kind crosses unchanged) -------------------
    Row("event_kind.todo_completed", "todo_complete", "a committed Todo completion"),
    Row("event_kind.replan_recorded", "refresh_state",
        "LoopX records a replan (its replan acknowledgement) in a project refresh-state writeback, its nearest event "
        "kind; refresh_state is broader than a replan"),
    # -- schema versions ---------------------------------------------------------------------------
    Row("schema.pwh_primary_receipt_v0", "loopx_post_writeback_hook_source_v0", "the committed receipt"),
    Row(f"schema.{REGISTRATION_SCHEMA_VERSION}", REGISTRATION_SCHEMA_VERSION, "the same string, fixed by LoopX's registration type"),
    Row(f"schema.{HOOK_INPUT_SCHEMA_VERSION}", "loopx_post_writeback_capability_hook_input_v0", "the hook input"),
    Row(f"schema.{RESULT_SCHEMA_VERSION}", "loopx_post_writeback_capability_hook_result_v0", "the hook result"),
    Row(f"schema.{INTENT_SCHEMA_VERSION}", "loopx_capability_intent_v0", "the intent"),
    Row(f"schema.{SIDECAR_SCHEMA_VERSION}", "loopx_post_writeback_capability_hook_receipt_v0", "the sidecar receipt"),
    # -- committed receipt -> LoopX source packet --------------------------------------------------
    Row("source.schema_version", "schema_version", "via the schema rows"),
    Row("source.receipt_id", "receipt_id",
        "LoopX derives its source event id (pwr_...) from it and keeps only that; a receipt id the public boundary "
        "refuses is read back as that hashed id, as LoopX holds it, never as the raw value"),
    Row("source.event_kind", "event_kind", "via the event-kind rows"),
    Row("source.step_status", "status", "LoopX admits committed, appended and receipt_repaired"),
    Row("source.durable_checkpoint", "durable", ""),
    Row("source.goal_id", "identity.goal_id", ""),
    Row("source.agent_id", "identity.agent_id", ""),
    Row("source.todo_id", "identity.todo_id", "LoopX reads an empty todo_id as none"),
    Row("source.turn_instance_id", "identity.turn_instance_id", ""),
    Row("source.effect_id", "identity.effect_id", ""),
    Row("source.state_revision", "state_version", ""),
    Row("source.committed_at", "committed_at", ""),
    Row("source.event", "projection.bounded_event_projection",
        "the RFC event projection, keyed by the read-scope token LoopX filters projections by"),
    Row("source.step_kind", None, "no step kind in its source packet: only a durable writeback is expressible", only="durable_writeback"),
    Row("source.plan_effect_id", None, "no active-plan effect id in its source packet: a receipt for another effect cannot be put to it",
        only=SAME_AS_EFFECT_ID),
    Row("source.post_writeback_actions", None, "no place in its source packet for operator post_writeback_actions"),
    # -- registration -> PostWritebackHookRegistration ---------------------------------------------
    Row("registration.schema_version", None, "no other schema version: its registration type fixes it", only=REGISTRATION_SCHEMA_VERSION),
    Row("registration.hook_id", "hook_id", ""),
    Row("registration.capability_id", "capability_id",
        "namespaced as pwh.<id>: LoopX's token grammar needs 3..96 characters and the harness's fixtures use one-letter "
        "capability ids; a LoopX id is read back by dropping the prefix"),
    Row("registration.phase", None,
        "no other phase: its registration type fixes post_writeback; another phase crosses in the contract its validator "
        "reads, which rejects it (capability_hooks.ts:646-656: exact fields, phase and failure_policy)", only="post_writeback"),
    Row("registration.event_kinds", "event_kinds", "via the event-kind rows"),
    Row("registration.intent_kinds", "intent_kinds", "tokens only: LoopX has no intent-kind catalog"),
    Row("registration.requested_read_scope", "requested_read_scope", "LoopX hands the source projection entries named by these tokens"),
    Row("registration.budget.max_result_bytes", "max_result_bytes", "LoopX admits 1024..65536"),
    Row("registration.budget.max_invocations_per_dispatch", None,
        "no invocation budget of the hook's choosing: its registration type fixes 1 (contract(), and capability_hooks.ts:714-715 "
        "rejects any other), and it calls a hook again on every replay until it succeeds (up to 10,000 attempts); an invalid "
        "value crosses in the contract its validator reads, a valid one other than 1 is read as 1"),
    Row("registration.budget.max_intents_per_dispatch", None, "no intent budget: a LoopX result carries at most one intent"),
    Row("registration.budget.timeout_ms", None, "no producer timeout: LoopX waits for a provider as long as it runs"),
    Row("registration.budget", None, "no other budget fields: its budget has max_invocations_per_dispatch, max_input_bytes and max_result_bytes"),
    Row("registration.failure_policy", None,
        "no other failure policy: its registration type fixes isolate; another crosses in the contract its validator reads, "
        "which rejects it (capability_hooks.ts:651-656)", only="isolate"),
    Row("registration.provider", "producer", "called with LoopX's input translated to RFC terms; its result translated back"),
    # -- LoopX hook input -> RFC hook input (what the harness producer receives) --------------------
    Row("input.schema_version", "schema_version", "via the schema rows"),
    Row("input.dispatch_id", None,
        "LoopX hands its providers no dispatch id: the adapter hands pwh's reference identity of this receipt and hook "
        "(pwh._core.identity.dispatch_id), which stands for the source event id LoopX binds intents to"),
    Row("input.hook_id", "(the hook's own registration)", "not in LoopX's input"),
    Row("input.capability_id", "(the hook's own registration)", "not in LoopX's input"),
    Row("input.source.receipt_id", "receipt.event_id", "LoopX's id of the committed receipt"),
    Row("input.source.effect_id", "identity.effect_id", ""),
    Row("input.source.step_kind", "receipt.schema_version", "LoopX's primary writeback receipt is a durable writeback"),
    Row("input.source.goal_id", "identity.goal_id", ""),
    Row("input.source.agent_id", "identity.agent_id", ""),
    Row("input.source.todo_id", "identity.todo_id", ""),
    Row("input.source.turn_instance_id", "identity.turn_instance_id", ""),
    Row("input.source.event_kind", "receipt.event_kind", "via the event-kind rows"),
    Row("input.source.state_revision", "state_version", ""),
    Row("input.source.committed_at", "receipt.recorded_at", ""),
    Row("input.projection", "projection.bounded_event_projection", "absent when the hook did not ask for that read scope"),
    Row("input.boundary", None, "LoopX's input carries no boundary block; the adapter does not invent one"),
    # -- RFC hook result -> LoopX hook result ---------------------------------------------------------
    Row("result.schema_version", "schema_version", "via the schema rows; a result that is not an RFC result crosses untouched"),
    Row("result.status.proposed", "intent", ""),
    Row("result.status.not_applicable", "not_applicable", ""),
    Row("result.bytes", None,
        "no byte budget over the RFC result: LoopX measures its own result shape (capability_hooks.ts:807-810), which "
        "the translation makes smaller, so a result whose two sizes fall on either side of the budget cannot be put to it"),
    Row("result.intents", "intent", "one intent object or null; 2+ intents cross as a list in the same slot, which LoopX judges: "
        "requiredObject(result.intent) refuses a list (capability_hooks.ts:821, runtime_decode.ts:11), so it takes one intent per result"),
    # -- RFC intent -> LoopX capability intent --------------------------------------------------------
    Row("intent.schema_version", "schema_version", "via the schema rows; an intent that is not an RFC intent crosses untouched"),
    Row("intent.intent_id", "idempotency_key", "opaque; LoopX does not check it against a digest"),
    Row("intent.hook_id", "result.hook_id", ""),
    Row("intent.capability_id", "result.capability_id", "namespaced as in the registration"),
    Row("intent.source_dispatch_id", "source_receipt_id",
        "the input's dispatch id crosses as LoopX's source event id (and back); any other value crosses unchanged"),
    Row("intent.intent_kind", "intent_kind", ""),
    Row("intent.payload", "payload", "LoopX has no payload schema"),
    Row("intent.requested_write_scope", "requested_write_scope", ""),
    Row("intent.operation", CARRIED, "no operation in its intents: the adapter carries an RFC-valid one, an invalid one cannot be put to it"),
    Row("intent.policy_version", CARRIED,
        "no policy version in its intents (LoopX versions the policy per registration, default v0): the adapter carries an RFC-valid one"),
    Row("intent.budget", CARRIED, "no budget in its intents: one over the RFC's bounds or the hook's own budget cannot be put to it"),
    Row("intent.failure_policy", None, "no failure policy in a LoopX intent: only isolate is expressible", only="isolate"),
    Row("intent.grants_new_action_authority", CLAIM,
        "no authority field in a LoopX intent (it grants nothing by construction): false crosses as nothing; any other value "
        "crosses as the field it is, which LoopX's exact-field intent check rejects (capability_hooks.ts:822, "
        "requireExactFields over CAPABILITY_INTENT_FIELDS: contract_rejected)",
        only=False),
    Row("intent.external_write_performed", CLAIM,
        "no external-write field in a LoopX intent (effect-free by construction): false crosses as nothing; any other value "
        "crosses as the field it is, which LoopX's exact-field intent check rejects (capability_hooks.ts:822)",
        only=False),
    # -- statuses and failure codes (LoopX's on the right; a LoopX code without a row crosses verbatim) --
    Row("status.proposed", "intent_recorded", "sidecar receipt status"),
    Row("status.not_applicable", "not_applicable", "sidecar receipt status"),
    Row("status.failed", "retryable_failure", "sidecar receipt status (or a failure without a receipt)"),
    Row("code.producer_failed", "producer_failed", ""),
    Row("code.result_contract_rejected", "contract_rejected", ""),
    Row("code.intent_conflict", "receipt_conflict", "a stored receipt differs from the new result for the same dispatch id"),
    Row("code.journal_write_failed", "journal_write_failed", "also reported as the dispatch's journal_error"),
    Row("code.registration_rejected", None,
        "LoopX's registration_or_input_rejected covers a bad registration and an inadmissible input alike; reported verbatim"),
    Row("code.input_boundary_rejected", None, "no boundary check of its own; see code.registration_rejected"),
    Row("code.producer_timed_out", None, "no producer timeout"),
    Row("code.dispatch_budget_exhausted", None, "no dispatch budget"),
    Row("install.duplicate_hook_id", "duplicate_hook_id", "reported as registration_rejected at $.hook_id"),
    Row("install.rejected", "registration_or_input_rejected", "reported as registration_rejected at $: LoopX names no field"),
    Row("dispatch.source_rejected", "PostWritebackSourceRejected",
        "reported as not admitted, source_rejected at the field LoopX's typed cause names (EffectRuntimeRejected, "
        "'source.identity.<field> ...', capability_hooks.py:967-980), mapped back by the source rows; at $ when it names none"),
    Row("dispatch.not_admitted", "runtime_failure in the preflight phase", "reported as not admitted, with LoopX's runtime_result_invalid"),
    # -- the turn seam (seed 003: the primary Turn's contracts) ------------------------------------
    Row("turn.register_provider", "loopx.capabilities.registry.CapabilityRegistry.register_provider",
        "an extension-origin provider with all four lifecycle flags given; its refusals (registry.py: installed but "
        "undeclared, enabled but uninstalled, ready but disabled) name the flag that is out of order"),
    Row("turn.advance_provider", None,
        "no lifecycle transition: LoopX's registry takes a provider's four flags once, at registration, and has no "
        "install, enable or ready step afterwards, so a skipped step cannot be put to it (testbed self-check)"),
    Row("turn.resolve_provider", None,
        "no provider resolution for a Turn: the registry records provider_state but resolves no Turn's provider, so the "
        "failure table's not-installed and not-ready rows stay testbed self-checks"),
    Row("turn.build_host_request", "executor.build_loopx_turn_host_request",
        "over a plan whose turn_envelope carries the Turn's bounds as LoopX's planner would (the Todo as "
        "action.selected_todo); the request's result_contract names the phases a host may complete"),
    Row("turn.accept_host_output", "executor._run_host, then executor.validate_loopx_turn_host_result",
        "the candidate, rendered as a LoopX host result of the same byte length, is the stdout of a host process LoopX's "
        "own bridge reads with HOST_RESULT_MAX_BYTES = 12_000; the validator's errors map onto seed 003's classes"),
    Row("turn.effect_ref", None,
        "no effect reference in its host request or result: LoopX 2.1.1 binds a host result to its Turn by turn_key "
        "alone (validate_loopx_turn_host_result), so a result bound to another effect cannot be put to it"),
    Row("turn.followup", None,
        "no follow-up in its host result: LoopX 2.1.1 checks only that a completion lifecycle adapter is configured "
        "(completion_lifecycle_configured); the follow-up comes from its completion_intent callback after validation"),
    Row("turn.path_delta", None,
        "no path delta list in a material result: LoopX's path delta is a path_delta_mode with an agent vision document"),
    Row("turn.recovery", None,
        "no effect provider to crash: its recovery by readback (turn_journal_effect_readback.ts) runs inside its Node "
        "Turn journal, which no Python entry reaches (testbed self-check)"),
)
# fmt: on

_ROWS: dict[str, Row] = {r.harness: r for r in MAPPING}


def row(concept: str) -> Row:
    return _ROWS[concept]


def family(prefix: str) -> dict[str, Row]:
    return {k[len(prefix) :]: r for k, r in _ROWS.items() if k.startswith(prefix)}


EVENT_KINDS: dict[str, str] = {k: r.loopx for k, r in family("event_kind.").items() if r.loopx}
SCHEMAS: dict[str, str] = {k: r.loopx for k, r in family("schema.").items() if r.loopx}
RESULT_STATUSES: dict[str, str] = {k: r.loopx for k, r in family("result.status.").items() if r.loopx}
RECEIPT_STATUSES: dict[str, str] = {k: r.loopx for k, r in family("status.").items() if r.loopx}
LOOPX_CODES: dict[str, str] = {r.loopx: k for k, r in family("code.").items() if r.loopx}  # LoopX code -> RFC code
_BACK = {
    "event_kind": {v: k for k, v in EVENT_KINDS.items()},
    "schema": {v: k for k, v in SCHEMAS.items()},
    "status": {v: k for k, v in RECEIPT_STATUSES.items()},
}


def loopx_version() -> str:
    try:
        return metadata.version("loopx")
    except metadata.PackageNotFoundError:
        return EXPECTED_LOOPX


def lacks(concept: str, detail: str = "") -> Unsupported:
    """The Unsupported for a case LoopX cannot express: its row's note (each reads "no ..."), or,
    for a field without a row, that LoopX's packet has no place for it."""
    if concept in _ROWS:
        return Unsupported(f"loopx {loopx_version()} has {row(concept).note}{detail}")
    packet, _, field = concept.partition(".")
    return Unsupported(f"loopx {loopx_version()} has no place for the {packet} field `{field or '$'}`{detail}")


# -- values both ways ---------------------------------------------------------------------------------


def to_loopx_event_kind(kind: Any) -> Any:
    return EVENT_KINDS.get(kind, kind) if isinstance(kind, str) else kind


def to_rfc_event_kind(kind: Any) -> Any:
    return _BACK["event_kind"].get(kind, kind) if isinstance(kind, str) else kind


def to_loopx_id(capability_id: Any) -> Any:
    return ID_PREFIX + capability_id if isinstance(capability_id, str) else capability_id


def to_rfc_id(capability_id: Any) -> Any:
    if isinstance(capability_id, str) and capability_id.startswith(ID_PREFIX):
        return capability_id[len(ID_PREFIX) :]
    return capability_id


def to_rfc_code(loopx_code: Any) -> Any:
    return LOOPX_CODES.get(loopx_code, loopx_code)


def get_path(value: Any, path: str) -> Any:
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def put_path(target: dict[str, Any], path: str, value: Any) -> None:
    *parents, leaf = path.split(".")
    for part in parents:
        target = target.setdefault(part, {})
    target[leaf] = value


def plain_copy(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return copy.deepcopy(value)


# -- harness -> LoopX -----------------------------------------------------------------------------------


def to_loopx_source(source: Any) -> Any:
    """The LoopX source packet for a harness receipt; anything else crosses untouched (LoopX judges it)."""
    if not isinstance(source, Mapping) or source.get("schema_version") != "pwh_primary_receipt_v0":
        return source
    out: dict[str, Any] = {}
    for key, value in source.items():
        concept = f"source.{key}"
        r = _ROWS.get(concept)
        if r is None:
            raise lacks(concept)
        if r.loopx is None:
            expressible = value == source.get("effect_id") if r.only == SAME_AS_EFFECT_ID else value == r.only
            if not expressible:
                raise lacks(concept)
            continue
        if key == "schema_version":
            value = SCHEMAS[value]
        elif key == "event_kind":
            value = to_loopx_event_kind(value)
        elif key == "event" and isinstance(value, Mapping):
            value = {"schema_version": PROJECTION_SCHEMA_VERSION, **plain_copy(dict(value))}
        put_path(out, r.loopx, value)
    return out


_NAMED_SOURCE_FIELD = re.compile(r"^source\.([a-z_]+(?:\.[a-z_]+)*) ")


def source_rejection_path(cause: BaseException | None) -> str:
    """The RFC path of the source field LoopX's typed source rejection names, or ``$``. LoopX's
    runtime names it in its message (``source.identity.goal_id must be a non-empty string``:
    ``EffectRuntimeRejected``, the ``__cause__`` of ``PostWritebackSourceRejected``,
    capability_hooks.py:967-980); the source rows map LoopX's field back to the receipt's."""
    match = _NAMED_SOURCE_FIELD.match(str(cause)) if cause is not None else None
    if match is None:
        return "$"
    for concept, r in family("source.").items():
        if r.loopx == match.group(1):
            return json_path((concept,))
    return "$"


def registration_problems(registration: Mapping[str, Any], known_kinds: frozenset[str]) -> list[tuple[str, Row | None]]:
    """The RFC flaws of ``registration`` that sit in fields LoopX has no place for (their rows)."""
    found = []
    for rejection in validate_registration(registration, known_intent_kinds=known_kinds, ceilings=CORE_CEILINGS):
        field = rejection.path.removeprefix("$").lstrip(".").split("[")[0]
        r = _ROWS.get(f"registration.{field}") or _ROWS.get(f"registration.{field.split('.')[0]}")
        if r is None or r.loopx is None:
            found.append((f"registration.{field}" if field else "registration", r))
    return found


@dataclass(frozen=True)
class Binding:
    """What an intent binds to: the dispatch id the harness producer was handed, and the LoopX
    source event id it stands for (see the ``input.dispatch_id`` row)."""

    dispatch_id: Any
    event_id: Any

    def to_loopx(self, value: Any) -> Any:
        return self.event_id if value == self.dispatch_id else value

    def to_rfc(self, value: Any) -> Any:
        return self.dispatch_id if value == self.event_id else value


def to_rfc_input(loopx_input: Mapping[str, Any], registration: Mapping[str, Any], binding: Binding) -> dict[str, Any]:
    """What the harness producer receives: LoopX's input in RFC terms (a fresh, plain dict)."""
    src: dict[str, Any] = {}
    for key, r in family("input.source.").items():
        src[key] = get_path(loopx_input, r.loopx or "")
    src["step_kind"] = "durable_writeback" if src["step_kind"] == "loopx_primary_writeback_receipt_v0" else src["step_kind"]
    src["event_kind"] = to_rfc_event_kind(src["event_kind"])
    schema = loopx_input.get("schema_version")
    out: dict[str, Any] = {
        "schema_version": _BACK["schema"].get(schema, schema) if isinstance(schema, str) else schema,
        "dispatch_id": binding.dispatch_id,
        "hook_id": registration.get("hook_id"),
        "capability_id": registration.get("capability_id"),
        "source": src,
    }
    projection = get_path(loopx_input, row("input.projection").loopx or "")
    if projection is not None:
        out["projection"] = plain_copy(projection)
    return plain_copy(out)


def _is_rfc(value: Any, schema_version: str, keys: frozenset[str]) -> bool:
    return isinstance(value, Mapping) and frozenset(value) == keys and value.get("schema_version") == schema_version


_RESULT_KEYS = frozenset({"schema_version", "status", "intents"})
_INTENT_KEYS = frozenset(k.removeprefix("intent.") for k in _ROWS if k.startswith("intent."))
ENVELOPE = tuple(k for k, r in family("intent.").items() if r.loopx in (None, CARRIED))


def envelope_problem(intent: Mapping[str, Any], registration: Mapping[str, Any]) -> str | None:
    """The first intent field LoopX cannot be given (its row), or ``None``."""
    for key in ENVELOPE:
        r = row(f"intent.{key}")
        if r.loopx is None and intent.get(key) != r.only:
            return r.harness
    bad = {
        x.path.removeprefix("$.").split(".")[0].split("[")[0]
        for x in schema_rejections(validator("intent"), intent, codes.RESULT_CONTRACT_REJECTED)
    }
    for key in ENVELOPE:
        if key in bad:
            return f"intent.{key}"
    budget, own = intent.get("budget"), registration.get("budget")
    if isinstance(budget, Mapping) and isinstance(own, Mapping):
        if budget.get("max_result_bytes", 0) > own.get("max_result_bytes", 0):
            return "intent.budget"
    return None


def to_loopx_intent(intent: Mapping[str, Any], binding: Binding) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, r in family("intent.").items():
        if r.loopx == CLAIM:
            if intent[key] is not r.only:  # false is LoopX's construction; a claim crosses for LoopX to judge
                out[key] = intent[key]
            continue
        if r.loopx in (None, CARRIED) or r.loopx.startswith("result."):
            continue
        value = intent[key]
        if key == "schema_version":
            value = SCHEMAS.get(value, value)
        elif key == "source_dispatch_id":
            value = binding.to_loopx(value)
        out[r.loopx] = value
    return out


class LoopxDivergence(AssertionError):
    """LoopX cannot take the harness's case without hiding how it differs; the scenario fails with
    this ``expected``/``seen`` pair (the gate report quotes them)."""

    def __init__(self, expected: str, seen: str, clause: str = "") -> None:
        super().__init__(f"expected: {expected}\nseen: {seen}")
        self.expected = expected
        self.seen = seen
        self.clause = clause  # the RFC clause LoopX's answer breaks, when the divergence is normative


class StopDispatch(BaseException):
    """Ends a LoopX dispatch from inside a provider. LoopX isolates only ``Exception``, so this
    passes through it (its file locks are released on the way out) and ``error`` is raised."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def to_loopx_result(value: Any, registration: Mapping[str, Any], binding: Binding, carry: Callable[[str, Mapping[str, Any]], None]) -> Any:
    """LoopX's result for a harness result; a non-RFC result crosses untouched (LoopX judges it)."""
    if not _is_rfc(value, RESULT_SCHEMA_VERSION, _RESULT_KEYS) or not isinstance(value.get("intents"), list):
        return value
    intents, hook_id = value["intents"], registration.get("hook_id")
    result_hook, capability = hook_id, registration.get("capability_id")
    translated: list[Any] = []
    for one in intents:
        if _is_rfc(one, INTENT_SCHEMA_VERSION, _INTENT_KEYS):
            problem = envelope_problem(one, registration)
            if problem is not None:
                raise StopDispatch(lacks(problem))
            if not translated:
                result_hook, capability = one["hook_id"], one["capability_id"]
                carry(str(one["hook_id"]), one)
            one = to_loopx_intent(one, binding)
        translated.append(one)
    # One intent crosses as LoopX's one intent; several as a list in that slot, for LoopX to judge.
    intent: Any = (translated[0] if len(translated) == 1 else translated) if translated else None
    status = value["status"]
    return {
        "schema_version": SCHEMAS[RESULT_SCHEMA_VERSION],
        "hook_id": result_hook,
        "capability_id": to_loopx_id(capability),
        "phase": "post_writeback",
        "status": RESULT_STATUSES.get(status, status) if isinstance(status, str) else status,
        "intent": intent,
    }


# -- LoopX -> harness ----------------------------------------------------------------------------------


def to_rfc_intent(
    loopx_intent: Mapping[str, Any], receipt: Mapping[str, Any], carried: Mapping[str, Any], binding: Binding
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, r in family("intent.").items():
        if r.loopx == CARRIED:
            if key in carried:
                out[key] = carried[key]
        elif r.loopx is None or r.loopx == CLAIM:
            out[key] = r.only
        elif r.loopx.startswith("result."):
            value = receipt.get(r.loopx.removeprefix("result."))
            out[key] = to_rfc_id(value) if key == "capability_id" else value
        else:
            value = loopx_intent.get(r.loopx)
            if key == "schema_version":
                value = _BACK["schema"].get(value, value) if isinstance(value, str) else value
            elif key == "source_dispatch_id":
                value = binding.to_rfc(value)
            out[key] = value
    return out


def to_rfc_record(receipt: Mapping[str, Any], event: Mapping[str, Any], carried: Mapping[str, Any]) -> dict[str, Any]:
    """One LoopX sidecar receipt as an RFC sidecar record. ``event`` is what the adapter knows of
    the harness receipt behind LoopX's source event id; ``carried`` the intent fields it kept."""
    binding = Binding(reference_dispatch_id_for(event, receipt.get("hook_id")), receipt.get("source_receipt_id"))
    intent, schema = receipt.get("intent"), receipt.get("schema_version")
    return {
        "schema_version": _BACK["schema"].get(schema, schema) if isinstance(schema, str) else schema,
        "dispatch_id": receipt.get("dispatch_id"),
        "hook_id": receipt.get("hook_id"),
        "capability_id": to_rfc_id(receipt.get("capability_id")),
        "source_receipt_id": event.get("receipt_id", receipt.get("source_receipt_id")),
        "event_kind": event.get("event_kind"),
        "status": _back_status(receipt.get("status")),
        "failure_code": to_rfc_code(receipt.get("error_code")),
        "intents": [to_rfc_intent(intent, receipt, carried, binding)] if isinstance(intent, Mapping) else [],
        "attempts": receipt.get("attempt_count"),
    }


def _back_status(status: Any) -> Any:
    """LoopX's status word in RFC terms (a word it does not map stays as it is)."""
    return _BACK["status"].get(status, status) if isinstance(status, str) else status


def reference_dispatch_id_for(event: Mapping[str, Any], hook_id: Any) -> str | None:
    """pwh's reference dispatch identity for the harness receipt behind ``event`` and ``hook_id``."""
    receipt_id, kind = event.get("receipt_id"), event.get("event_kind")
    if not (isinstance(receipt_id, str) and isinstance(kind, str) and isinstance(hook_id, str)):
        return None
    return reference_dispatch_id(receipt_id, hook_id, REGISTRATION_SCHEMA_VERSION, kind)
