"""The ``loopx`` SUT adapter: the shipped LoopX post-writeback dispatcher behind the seam.

It hands LoopX the harness's registrations, producers and committed receipts in LoopX's own
shapes (:mod:`pwh._suts.loopx.map`, one table), calls ``dispatch_post_writeback_hooks`` over a
per-adapter ``runtime_root`` (so replay and the journal are LoopX's own persisted receipts), and
reports what LoopX returned and stored in RFC terms. What LoopX cannot express raises
:class:`~pwh._suts.seam.Unsupported`; what it does differently is reported as it is.

loopx is imported only when an adapter is made, after :mod:`pwh._suts.loopx.runtime` has isolated its
Node runtime; every adapter of the process shares that one runtime.

Besides LoopX's receipts the adapter keeps a few *bridge notes* on disk (so ``restart`` needs
nothing else): which LoopX source event id each harness receipt got (LoopX's receipts name only
that id), the RFC intent fields LoopX has no place for (``carried`` rows), and the order in which
receipts first appeared (LoopX's files have none). They only translate; they decide no outcome.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pwh._core import codes
from pwh._core.codes import Rejection
from pwh._core.crash import DISPATCH_AFTER_PROVIDER, DISPATCH_BEFORE_CHECKPOINT, JOURNAL_AFTER_RECORD, SimulatedCrash
from pwh._core.journal import TAMPERED_VALUE
from pwh._core.outcome import DispatchOutcome, HookOutcome
from pwh._core.profile import CORE_CEILINGS, Profile
from pwh._core.registry import IntentKindCatalog, RegistrationRejected
from pwh._suts.loopx.crossing import (
    budget_sides_differ,
    contract_edits,
    is_private,
    probe_source,
    receipt_id_in_source,
    with_contract_edits,
)
from pwh._suts.loopx.map import (
    CARRIED,
    ENVELOPE,
    EVENT_KINDS,
    Binding,
    LoopxDivergence,
    StopDispatch,
    family,
    get_path,
    lacks,
    loopx_version,
    plain_copy,
    reference_dispatch_id_for,
    registration_problems,
    row,
    source_rejection_path,
    to_loopx_event_kind,
    to_loopx_id,
    to_loopx_result,
    to_loopx_source,
    to_rfc_code,
    to_rfc_input,
    to_rfc_record,
)
from pwh._suts.loopx.runtime import RUNTIME, RuntimeUnavailable
from pwh._suts.seam import PrimaryAccess, Producer, SUTLoadError, Unsupported

# The first release whose source packet has a ``receipt_id`` (its decoder refuses a field it does
# not know, so an older one is sent the packet without it).

# The module through which the writeback boundary drives LoopX's real ``todo complete`` path (its
# post-writeback CLI wiring, from 1.4.0): a release without it offers no writeback seam.
# The post-writeback wiring of ``todo complete`` and ``refresh-state`` (every release from 1.0.0);
# ``turn run-once``'s drain of the same hooks is :data:`TURN_DRAIN` (1.4.0 on), the release that
# also made the canonical authority store the Todo authority (before it, the Goal's state file).
WRITEBACK_ENTRY = "loopx.cli_commands.post_writeback"
TURN_DRAIN = "loopx.cli_commands.turn_post_writeback"

# How long past its own timeout_ms the adapter watches a producer before concluding that LoopX,
# which has no timeout, would keep waiting for it.
WATCH_GRACE_SECONDS = 0.5


class _NoSourceRejection(Exception):
    """Caught where ``PostWritebackSourceRejected`` is, in a release that has none (1.0.0): its
    dispatcher never raises for a source packet, so what it does with a bad one is reported as is."""


@dataclass
class _Hook:
    registration: dict[str, Any]  # as the harness gave it
    loopx: Any  # its PostWritebackHookRegistration


class _Provider:
    """The producer LoopX calls. It translates LoopX's input to RFC terms, runs the harness
    producer on a watch (LoopX has no timeout: a producer still running past its ``timeout_ms``
    ends the dispatch as a divergence instead of hanging the run), and translates the result back."""

    def __init__(self, sut: LoopxSUT, registration: Mapping[str, Any], producer: Producer) -> None:
        self.sut, self.registration, self.producer = sut, registration, producer

    def __call__(self, loopx_input: Mapping[str, Any]) -> Any:
        event_id = get_path(loopx_input, "receipt.event_id")
        self.sut._learn(event_id)
        binding = self.sut._binding(self.registration, event_id)
        value = self._watched(to_rfc_input(loopx_input, self.registration, binding))
        self.sut._crash_if_armed(DISPATCH_AFTER_PROVIDER)  # a BaseException: LoopX isolates only Exception
        translated = to_loopx_result(value, self.registration, binding, self.sut._carry)
        if budget_sides_differ(value, translated, get_path(self.registration, "budget.max_result_bytes")):
            raise StopDispatch(lacks("result.bytes"))
        return translated

    def _watched(self, hook_input: dict[str, Any]) -> Any:
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["value"] = self.producer(hook_input)
            except BaseException as exc:  # re-raised below, in LoopX's thread, which isolates it
                box["error"] = exc

        hook_id = self.registration.get("hook_id")
        limit_ms = get_path(self.registration, "budget.timeout_ms")
        limit_ms = limit_ms if isinstance(limit_ms, int) else CORE_CEILINGS["timeout_ms"]
        worker = threading.Thread(target=run, name=f"pwh-loopx-{hook_id}", daemon=True)
        worker.start()
        worker.join(limit_ms / 1000 + WATCH_GRACE_SECONDS)
        if worker.is_alive():  # a provider LoopX would wait for as long as it runs
            watched = round(limit_ms + WATCH_GRACE_SECONDS * 1000)
            raise StopDispatch(
                LoopxDivergence(
                    f"hook {hook_id} given up on at its {limit_ms} ms timeout (producer_timed_out)",
                    f"loopx {loopx_version()} was still waiting for hook {hook_id} {watched} ms after calling it "
                    f"({row('registration.budget.timeout_ms').note})",
                    clause="§10.limits",
                )
            )
        if "error" in box:
            raise box["error"]
        return box.get("value")


def _sentinel(hook_input: Mapping[str, Any]) -> dict[str, Any]:
    """The provider of an install-time probe: the harness's own provider is never called there."""
    return {}


class LoopxSUT:
    """The shipped LoopX, reached through ``dispatch_post_writeback_hooks`` over its own receipts."""

    name = "loopx"

    def __init__(self, *, workdir: str | Path | None = None) -> None:
        try:
            RUNTIME.acquire()
        except RuntimeUnavailable as exc:
            raise SUTLoadError(str(exc)) from None
        self._open = True
        try:
            from loopx.control_plane import capability_hooks
        except ImportError:
            self.close()
            raise SUTLoadError("the loopx extra is not installed: pip install -e '.[loopx]'") from None
        self._lx = capability_hooks
        self._source_rejected: type[Exception] = getattr(capability_hooks, "PostWritebackSourceRejected", _NoSourceRejection)
        self.version = _installed_version("loopx")
        self._receipt_id_in_source = receipt_id_in_source(self.version)
        self._own_dir = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="pwh-loopx-sut-")) if workdir is None else Path(workdir)
        self.root = (self.workdir / "runtime_root").resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self._catalog = IntentKindCatalog()
        self._hooks: list[_Hook] = []
        self._armed: str | None = None  # the crash point armed for the next dispatch
        self._current: dict[str, Any] | None = None
        self._notes = self._load_notes()

    # -- seam -------------------------------------------------------------------------------------

    def turn_contracts(self) -> Any:
        """Seed 003 through LoopX's own primary-Turn code (:mod:`.turn`)."""
        from pwh._suts.loopx.turn import LoopxTurn

        return LoopxTurn(self.workdir / "turn")

    def writeback_boundary(self) -> Any:
        """LoopX's real command paths with their post-writeback wiring (:mod:`.writeback`): a fresh
        private installation per call, its commands forked by the process's one warm LoopX
        interpreter; its ``close`` stops what it started. A release without ``turn run-once``'s
        drain offers ``todo complete`` and ``refresh-state`` only."""
        if not ships(WRITEBACK_ENTRY):
            raise Unsupported(f"loopx {self.version} has no {WRITEBACK_ENTRY}, its todo complete path's post-writeback wiring")
        from pwh._suts.loopx.writeback import LoopxWritebackBoundary

        return LoopxWritebackBoundary(turn_drain=ships(TURN_DRAIN), canonical_authority=ships(TURN_DRAIN))

    def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> list[Rejection]:
        """LoopX has no catalog: the kind is kept for the adapter's RFC checks, and a case only a
        catalog could decide is Unsupported."""
        try:
            self._catalog.register(kind, payload_schema)
        except RegistrationRejected:
            raise lacks("seam.register_intent_kind") from None
        return []

    def install(self, registration: Mapping[str, Any], producer: Producer) -> list[Rejection]:
        if not isinstance(registration, Mapping):
            return self._probe_not_an_object(registration)
        problems = registration_problems(registration, self._catalog.kinds)
        edits = contract_edits(registration, problems)
        if edits is None:
            concept, known = problems[0]
            raise lacks(known.harness if known else concept)
        reg = dict(registration)
        loopx = self._to_loopx_registration(reg, _Provider(self, reg, producer), edits)
        rejected = self._probe(loopx)
        if not rejected:
            self._hooks.append(_Hook(reg, loopx))
        return rejected

    def set_profile(self, profile: Profile) -> None:
        """Only LoopX's one mode is expressible: the default profile with the phase on."""
        given = profile.to_json()
        for key, r in family("profile.").items():
            if given[key] != r.only or type(given[key]) is not type(r.only):  # 1 == True, yet not LoopX's mode
                raise lacks(f"profile.{key}")

    def dispatch(self, source: Mapping[str, Any], *, primary: PrimaryAccess | None = None) -> DispatchOutcome:
        return self._deliver(source, self._dispatch_once, "LoopX's dispatch to return its result")

    def redeliver(self, source: Mapping[str, Any]) -> DispatchOutcome:
        """A racing second dispatcher through LoopX's own two-phase transaction: it planned before
        the first dispatcher's receipts existed (a preflight over no receipt store), ran every
        provider, and finalizes late against the receipts the first one wrote, which LoopX compares
        with the new outcome: a replay or a conflict (post_writeback_hook_transaction.ts)."""
        return self._deliver(source, self._late_finalize, "LoopX's transaction to return its result")

    def _deliver(self, source: Mapping[str, Any], run: Callable[[Any], Mapping[str, Any]], awaited: str) -> DispatchOutcome:
        """One delivery of ``source`` by ``run`` (given LoopX's source packet), read back as RFC outcomes."""
        receipt_id = source.get("receipt_id") if isinstance(source, Mapping) else None
        event_kind = source.get("event_kind") if isinstance(source, Mapping) else None
        loopx_source = self._source_packet(source)
        before = self._receipt_files()
        self._current = {"receipt_id": receipt_id, "event_kind": event_kind, "event_id": None}
        try:
            result = run(loopx_source)
        except self._source_rejected as rejected:
            reason = f"loopx rejected the source packet ({row('dispatch.source_rejected').loopx})"
            at = source_rejection_path(rejected.__cause__)
            return DispatchOutcome(receipt_id, event_kind, False, codes.SOURCE_REJECTED, Rejection(codes.SOURCE_REJECTED, at, reason))
        except StopDispatch as stop:
            raise stop.error from None
        except Exception as exc:  # shown compactly in the report, never as a traceback
            raise LoopxDivergence(awaited, f"loopx {loopx_version()} raised {type(exc).__name__}") from None
        else:
            return self._outcome(receipt_id, event_kind, result, before)
        finally:
            self._current = None
            self._save_notes()

    def _source_packet(self, source: Any) -> Any:
        """LoopX's source packet for ``source``; anything not a receipt crosses untouched."""
        packet = to_loopx_source(source)
        return packet if packet is source else self._for_release(packet)

    def _for_release(self, packet: dict[str, Any]) -> dict[str, Any]:
        """``packet`` as this release takes it. Before 1.3.0 LoopX's source packet has no
        ``receipt_id``: LoopX names a dispatch by the packet's other fields, as its own wiring
        then did, so the id is left out and the gate sees what follows from that."""
        if self._receipt_id_in_source:
            return packet
        return {k: v for k, v in packet.items() if k != "receipt_id"}

    def _dispatch_once(self, loopx_source: Any) -> Mapping[str, Any]:
        self._crash_if_armed(DISPATCH_BEFORE_CHECKPOINT)
        with RUNTIME.request_scope():
            result = self._lx.dispatch_post_writeback_hooks([h.loopx for h in self._hooks], source=loopx_source, runtime_root=self.root)
        self._crash_if_armed(JOURNAL_AFTER_RECORD)  # LoopX has returned: its receipts are written
        return result

    def _late_finalize(self, loopx_source: Any) -> Mapping[str, Any]:
        with RUNTIME.request_scope():
            return self._finalize_late(loopx_source)

    def _finalize_late(self, loopx_source: Any) -> Mapping[str, Any]:
        from loopx.control_plane.effect_runtime import effect_runtime_result

        transaction = "capability_hook.post_writeback.transaction"
        registrations = [h.loopx for h in self._hooks]
        base = {
            "schema_version": "loopx_post_writeback_hook_transaction_request_v0",
            "runtime_root": str(self.root.resolve()),
            "source": loopx_source,
            "hook_input": None,
            "registrations": [r.contract() for r in registrations],
        }
        preflight: dict[str, Any] = {"phase": "preflight", "transaction_id": None, "provider_outcomes": []}
        unplanned = effect_runtime_result(transaction, {**base, **preflight, "runtime_root": None})  # as before any receipt
        current = effect_runtime_result(transaction, {**base, **preflight})  # the transaction that finalizes late
        if not isinstance(unplanned, Mapping) or not isinstance(current, Mapping) or not isinstance(current.get("transaction_id"), str):
            raise ValueError("loopx's preflight gave no plan or transaction")
        # The attempt count the late finalize carries: the current plan's, else the stored receipt's
        # of the same dispatch (never another receipt of the same hook).
        stored = {r.get("dispatch_id"): r for r in map(_json_object, self._receipt_files().values()) if r is not None}
        planned_now = {p.get("dispatch_id"): p for p in current.get("provider_plan") or ()}
        by_key = {(r.hook_id, r.capability_id): r for r in registrations}
        outcomes = []
        for plan in unplanned.get("provider_plan") or ():
            registration = by_key.get((plan.get("hook_id"), plan.get("capability_id")))
            outcome, _ = self._lx._post_writeback_provider_outcome(plan, registration=registration, unavailable_status=None)
            dispatch_id = plan.get("dispatch_id")
            attempts = (planned_now.get(dispatch_id) or stored.get(dispatch_id) or {}).get("attempt_count", plan.get("attempt_count"))
            outcomes.append({**outcome, "attempt_count": attempts})
        finalized = effect_runtime_result(
            transaction, {**base, "phase": "finalize", "transaction_id": current["transaction_id"], "provider_outcomes": outcomes}
        )
        if not isinstance(finalized, Mapping) or not isinstance(finalized.get("dispatch"), Mapping):
            raise ValueError("loopx's finalize gave no dispatch")
        return finalized["dispatch"]

    @property
    def crash_points(self) -> tuple[str, ...]:
        """The points the adapter can crash LoopX's dispatch at from Python: before it is called,
        as a provider returns (inside LoopX's call), and after it returns. Inside LoopX's receipt
        write (its Node transaction) there is no Python to crash from."""
        return (DISPATCH_BEFORE_CHECKPOINT, DISPATCH_AFTER_PROVIDER, JOURNAL_AFTER_RECORD)

    def arm_crash(self, point: str) -> None:
        if point not in self.crash_points:
            raise lacks("seam.arm_crash")
        self._armed = point

    def _crash_if_armed(self, point: str) -> None:
        if self._armed == point:
            self._armed = None
            raise SimulatedCrash(point)

    def restart(self) -> None:
        """LoopX keeps nothing in memory between dispatches; reload the bridge notes from disk."""
        self._current = None
        self._armed = None
        self._notes = self._load_notes()

    def journal_records(self) -> list[dict[str, Any]]:
        files = {n: _json_object(data) for n, data in self._receipt_files().items()}
        order = {d: i for i, d in enumerate(self._notes["order"])}
        names = sorted(files, key=lambda n: (order.get(n.removesuffix(".json"), len(order)), n))
        return [self._to_rfc_record(record) for n in names if (record := files[n]) is not None]

    def inject_fault(self, fault: str) -> None:
        """A corrupted record is one flipped byte in the middle of the newest receipt file (LoopX
        keeps one JSON file a receipt and no checksum of its own); a tampered one has the first
        string value of its intent's payload changed, the file still well-formed JSON. An
        unwritable store cannot be made for a process that may write anywhere, so that fault stays
        inexpressible."""
        if fault not in ("journal_record_corrupted", "journal_record_tampered"):
            raise lacks("seam.inject_fault")
        files = sorted(self.root.glob("goals/*/post_writeback_hooks/*.json"), key=lambda f: (f.stat().st_mtime_ns, f.name))
        if not files:
            raise lacks("seam.inject_fault")
        newest = files[-1]
        if fault == "journal_record_tampered":
            record = _json_object(newest.read_bytes())
            payload = get_path(record, "intent.payload") if record is not None else None
            key = next((k for k, v in payload.items() if isinstance(v, str)), None) if isinstance(payload, dict) else None
            if key is None or not isinstance(payload, dict):
                raise lacks("seam.inject_fault")
            payload[key] = TAMPERED_VALUE
            newest.write_text(json.dumps(record, ensure_ascii=False), "utf-8")
            return
        data = bytearray(newest.read_bytes())
        data[len(data) // 2] ^= 0x01
        newest.write_bytes(bytes(data))

    def close(self) -> None:
        if not getattr(self, "_open", False):
            return
        self._open = False
        if getattr(self, "_own_dir", False):
            shutil.rmtree(self.workdir, ignore_errors=True)
        RUNTIME.release()

    # -- registrations ----------------------------------------------------------------------------------

    def _to_loopx_registration(
        self, reg: Mapping[str, Any], producer: Callable[[Mapping[str, Any]], Any], edits: Mapping[str, Any] | None = None
    ) -> Any:
        def tokens(value: Any, convert: Callable[[Any], Any] = lambda v: v) -> Any:
            return tuple(convert(v) for v in value) if isinstance(value, (list, tuple)) else value

        fields = {r.loopx: reg.get(key) for key, r in family("registration.").items() if r.loopx and "." not in key}
        fields["capability_id"] = to_loopx_id(fields["capability_id"])
        fields["event_kinds"] = tokens(fields["event_kinds"], to_loopx_event_kind)
        fields["intent_kinds"] = tokens(fields["intent_kinds"])
        fields["requested_read_scope"] = tokens(fields["requested_read_scope"])
        fields[str(row("registration.budget.max_result_bytes").loopx)] = get_path(reg, "budget.max_result_bytes")
        fields[str(row("registration.provider").loopx)] = producer
        if not edits:
            return self._lx.PostWritebackHookRegistration(**fields)
        return with_contract_edits(self._lx.PostWritebackHookRegistration, edits)(**fields)

    def _probe(self, candidate: Any) -> list[Rejection]:
        """LoopX's own verdict on ``candidate`` (beside any installed hook with its id), from a
        dispatch whose providers are the adapter's sentinel and which persists nothing."""
        same = [h.loopx for h in self._hooks if h.loopx.hook_id == candidate.hook_id]
        kinds = candidate.event_kinds
        kind = kinds[0] if isinstance(kinds, tuple) and kinds and isinstance(kinds[0], str) else EVENT_KINDS["todo_completed"]
        with RUNTIME.request_scope():
            result = self._lx.dispatch_post_writeback_hooks(
                [replace(r, producer=_sentinel) for r in (*same, candidate)],
                source=self._for_release(probe_source(kind)),
                runtime_root=None,
            )
        found = {f.get("error_code") for f in result.get("failures", []) if f.get("hook_id") == candidate.hook_id}
        if row("install.duplicate_hook_id").loopx in found:
            return [Rejection(codes.REGISTRATION_REJECTED, "$.hook_id", "loopx reports duplicate_hook_id")]
        if row("install.rejected").loopx in found:
            return [Rejection(codes.REGISTRATION_REJECTED, "$", "loopx rejected the registration; it names no field")]
        return []

    def _probe_not_an_object(self, registration: Any) -> list[Rejection]:
        """A registration that is not an object, offered to LoopX as it is (its dispatcher takes
        any sequence of registrations): LoopX's own answer decides, a raise out of its dispatcher
        included, which is shown as the divergence it is."""
        try:
            with RUNTIME.request_scope():
                result = self._lx.dispatch_post_writeback_hooks(
                    [registration], source=self._for_release(probe_source(EVENT_KINDS["todo_completed"])), runtime_root=None
                )
        except Exception as exc:  # shown compactly in the report, never as a traceback
            raise LoopxDivergence(
                "a registration that is not an object rejected (registration_rejected) before any call",
                f"loopx {loopx_version()} raised {type(exc).__name__} out of dispatch_post_writeback_hooks",
                clause="§6.validated-before-call",
            ) from None
        if any(f.get("error_code") == row("install.rejected").loopx for f in result.get("failures", [])):
            return [Rejection(codes.REGISTRATION_REJECTED, "$", "loopx rejected the registration; it names no field")]
        return []

    # -- outcomes ---------------------------------------------------------------------------------------

    def _outcome(self, receipt_id: Any, event_kind: Any, result: Mapping[str, Any], before: dict[str, bytes]) -> DispatchOutcome:
        """Each hook's outcome from LoopX's answer (failures, replays) and its receipts on disk
        (status, intents, dispatch id: the answer names none of these per hook)."""
        raw = self._receipt_files()
        after = {n: _json_object(data) for n, data in raw.items()}
        changed = [r for n, r in sorted(after.items()) if r is not None and raw[n] != before.get(n)]
        for receipt in changed:
            self._learn(receipt.get("source_receipt_id"))
        for intent in result.get("intents", []):
            self._learn(get_path(intent, "source_receipt_id"))
        event_id = (self._current or {}).get("event_id") or self._event_id_of(receipt_id)
        if is_private(receipt_id):  # LoopX handles only its hashed id of a receipt: the outcome names that
            receipt_id = event_id
        mine = {r.get("hook_id"): r for r in after.values() if r is not None and event_id and r.get("source_receipt_id") == event_id}
        for receipt in sorted(changed, key=lambda r: (str(r.get("hook_id")), str(r.get("dispatch_id")))):
            if receipt.get("dispatch_id") not in self._notes["order"]:
                self._notes["order"].append(receipt.get("dispatch_id"))
        failures: dict[str, list[str]] = {}
        for failure in result.get("failures", []):
            failures.setdefault(failure.get("hook_id"), []).append(failure.get("error_code"))
        replayed = set(result.get("replayed_hooks", []))
        # A hook registered for other event kinds is one LoopX never admitted: it answers for it
        # with registration_or_input_rejected and no receipt (capability_hooks.py's per-hook
        # filter), which is no outcome of this dispatch, not an admitted hook's failure.
        unadmitted = {
            h.loopx.hook_id
            for h in self._hooks
            if event_kind not in (h.registration.get("event_kinds") or ())
            and failures.get(h.loopx.hook_id) == ["registration_or_input_rejected"]
            and h.loopx.hook_id not in mine
        }
        hooks = tuple(
            self._hook_outcome(h, mine.get(h), failures.get(h, []), h in replayed)
            for h in sorted({h.loopx.hook_id for h in self._hooks} - unadmitted)
        )
        journal_error = codes.JOURNAL_WRITE_FAILED if any(h.failure_code == codes.JOURNAL_WRITE_FAILED for h in hooks) else None
        runtime = result.get("runtime_failure")
        if isinstance(runtime, Mapping) and runtime.get("phase") == "preflight":
            code = "runtime_result_invalid"
            note = f"loopx runtime_failure: {runtime.get('diagnostic_code')}"
            return DispatchOutcome(
                receipt_id,
                event_kind,
                False,
                code,
                Rejection(code, "$", "loopx could not admit the dispatch"),
                hooks,
                journal_error,
                (note,),
            )
        return DispatchOutcome(receipt_id, event_kind, True, hooks=hooks, journal_error=journal_error)

    def _hook_outcome(self, hook_id: str, receipt: Mapping[str, Any] | None, failures: list[str], replayed: bool) -> HookOutcome:
        record = self._to_rfc_record(receipt) if receipt is not None else None
        dispatch_id = record["dispatch_id"] if record else None
        attempts = record["attempts"] if record else 0
        if failures:
            code = to_rfc_code(failures[0])
            intents = tuple(record["intents"]) if record else ()
            rejection = Rejection(str(code), "$", f"loopx {failures[0]}")
            return HookOutcome(hook_id, dispatch_id, "failed", code, intents, replayed, attempts, record is not None, rejection)
        if record is None:
            return HookOutcome(hook_id, None, "failed", "loopx_reported_nothing", (), replayed, 0, False)
        return HookOutcome(
            hook_id, dispatch_id, record["status"], record["failure_code"], tuple(record["intents"]), replayed, attempts, True
        )

    def _to_rfc_record(self, receipt: Mapping[str, Any]) -> dict[str, Any]:
        event = self._notes["events"].get(receipt.get("source_receipt_id"), {})
        if is_private(event.get("receipt_id")):  # LoopX holds only its hashed id: so does its record, read back
            event = {**event, "receipt_id": receipt.get("source_receipt_id")}
        key = f"{receipt.get('hook_id')}|{get_path(receipt, 'intent.idempotency_key')}"
        return to_rfc_record(receipt, event, self._notes["carried"].get(key, {}))

    # -- bridge notes -----------------------------------------------------------------------------------

    def _learn(self, event_id: Any) -> None:
        """Note that ``event_id`` is LoopX's id of the receipt being dispatched."""
        current = self._current
        if current is None or not isinstance(event_id, str):
            return
        current["event_id"] = current["event_id"] or event_id
        if event_id not in self._notes["events"]:
            self._notes["events"][event_id] = {"receipt_id": current["receipt_id"], "event_kind": current["event_kind"]}

    def _carry(self, hook_id: str, intent: Mapping[str, Any]) -> None:
        fields = {k: plain_copy(intent[k]) for k in ENVELOPE if row(f"intent.{k}").loopx == CARRIED}
        self._notes["carried"][f"{hook_id}|{intent.get('intent_id')}"] = fields

    def _binding(self, registration: Mapping[str, Any], event_id: Any) -> Binding:
        dispatch = reference_dispatch_id_for(self._current or {}, registration.get("hook_id"))
        return Binding(dispatch or event_id, event_id)

    def _event_id_of(self, receipt_id: Any) -> str | None:
        for event_id, known in self._notes["events"].items():
            if known.get("receipt_id") == receipt_id:
                return event_id
        return None

    def _load_notes(self) -> dict[str, Any]:
        notes = _json_object(_read(self.workdir / "bridge_notes.json")) or {}
        return {"events": notes.get("events", {}), "carried": notes.get("carried", {}), "order": notes.get("order", [])}

    def _save_notes(self) -> None:
        path = self.workdir / "bridge_notes.json"
        if not self.workdir.is_dir():
            return
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._notes, sort_keys=True), "utf-8")
        tmp.replace(path)

    def _receipt_files(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted(self.root.glob("goals/*/post_writeback_hooks/*.json"))}


def _installed_version(distribution: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def ships(module: str) -> bool:
    """Whether the loopx this process imports has ``module`` (a ``loopx.`` dotted name), found as a
    file without importing it: importing LoopX's CLI modules is the writeback server's business."""
    import loopx

    where = Path(next(iter(loopx.__path__)), *module.split(".")[1:])
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _json_object(data: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
