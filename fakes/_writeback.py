"""The reference's writeback boundary: pwh's fake orchestrator (a real primary Turn, its durable
writeback in its own SQLite store, the quota spend) wired to a dispatcher through the SUT seam,
answering :class:`pwh._suts.writeback_seam.WritebackBoundary`.

It is the reference's own primary path, so the writeback scenarios judge the reference's wiring
here; another implementation offers its own boundary from its adapter's ``writeback_boundary()``.
A crash is the orchestrator's simulated one (:class:`pwh.SimulatedCrash` out of the command),
and recovery is a restart from the durable primary store and the dispatcher's durable journal.

``orchestrator_class`` lets a deliberately miswired boundary (pwh/_suts/mutants/_writeback.py) put
the dispatch where it does not belong, so that the scenarios can be seen to catch it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pwh import Profile, SimulatedCrash, canonical_bytes
from pwh._core.registry import Producer
from pwh._suts.seam import Unsupported
from pwh._suts.writeback_seam import WRITEBACK_OPERATIONS, Commit, HookSeen, PrimaryFailure

from ._errors import is_token
from ._orchestrator import PRIMARY_AFTER_WRITEBACK, FakeOrchestrator, TurnResult, completion_output, replan_output, spend_eligible

__all__ = ["ReferenceWriteback"]

# Where each of the seam's crash moments (``WRITEBACK_CRASH_POINTS``) is in the reference's layout,
# by what is durable when it fires.
_CRASH_AT: dict[str, str] = {
    "after_primary_commit": PRIMARY_AFTER_WRITEBACK,
    "inside_provider": "sidecar.after_provider_returned",
    "before_sidecar_checkpoint": "sidecar.inside_record_transaction",
}

_NOT_JSON_HOST_OUTPUT = b"{ this is not the host's result"  # fails the primary validation


def _plain(value: Any, depth: int = 0) -> Any:
    """A read-only hook input (any Mapping, any Sequence but text) as plain JSON values."""
    if depth > 64 or isinstance(value, (str, bytes, bytearray)):
        return value if not isinstance(value, (bytes, bytearray)) else repr(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [_plain(v, depth + 1) for v in value]
    return value


class ReferenceWriteback:
    """One scenario's primary path: a Goal, its Todos, the orchestrator and the dispatcher ``sut``."""

    name = "reference-writeback"
    operations: tuple[str, ...] = WRITEBACK_OPERATIONS
    orchestrator_class: type[FakeOrchestrator] = FakeOrchestrator

    def __init__(
        self, sut: Any, workdir: str | Path | None = None, *, seed: int = 7, orchestrator_class: type[FakeOrchestrator] | None = None
    ) -> None:
        self.sut = sut
        self.seed = seed
        if orchestrator_class is not None:
            self.orchestrator_class = orchestrator_class
        self._own_dir = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="pwh-wb-")) if workdir is None else Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._calls = self.workdir / f"hooks-seen-{os.getpid()}-{id(self):x}.jsonl"
        self._calls.write_bytes(b"")
        self._orch: FakeOrchestrator | None = None
        self._todo_ids: list[str] = []
        self._planted: dict[str, str] = {}
        self._environ: dict[str, str | None] = {}

    # -- set-up ---------------------------------------------------------------------------------

    @property
    def orch(self) -> FakeOrchestrator:
        if self._orch is None:
            raise RuntimeError("prepare() first: the boundary has no Goal yet")
        return self._orch

    def prepare(self, *, todos: int, phase_enabled: bool, report_capability: bool) -> None:
        # Completing every Todo of the Goal closes its segment: the periodic report's threshold.
        self._orch = self.orchestrator_class(self.sut, self.workdir / "primary", seed=self.seed, segment_size=max(todos, 1))
        self._todo_ids = [self._orch.ids.next("todo") for _ in range(todos)]
        self.sut.set_profile(Profile(phase_enabled=phase_enabled))
        if report_capability:
            from pwh.capabilities import periodic_report as capability

            capability.install(self)

    def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> list[Any]:
        return list(self.sut.register_intent_kind(kind, payload_schema) or [])

    def install(self, registration: Mapping[str, Any], producer: Producer) -> list[Any]:
        return list(self.sut.install(registration, self._seeing(producer)) or [])

    def _seeing(self, producer: Producer) -> Producer:
        """``producer`` noting what it was handed, in whatever process the dispatcher calls it (one
        ``O_APPEND`` write a call, so a worker process's note reaches this file too)."""
        path = self._calls

        def seen(hook_input: Mapping[str, Any]) -> Any:
            plain = _plain(hook_input)
            source = plain.get("source") if isinstance(plain, dict) else None
            entry = {
                "hook_id": plain.get("hook_id") if isinstance(plain, dict) else None,
                "receipt_id": source.get("receipt_id") if isinstance(source, dict) else None,
                "hook_input": plain,
            }
            line = (json.dumps(entry, sort_keys=True, default=str) + "\n").encode("utf-8", "surrogatepass")
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
            return producer(hook_input)

        return seen

    def plant(self, values: Mapping[str, str]) -> None:
        """Where this primary path keeps what a user wrote: the Goal's Todo text and summaries in the
        primary store beside the receipts, the diagnostic rollout log, the process environment."""
        self._planted.update(values)
        orch = self.orch
        orch.store.begin()
        for key, value in values.items():
            orch.store.set_counter(f"user_text.{key}", value)
        orch.store.commit()
        orch.rollout.append({"kind": "operator_note", "text": " ".join(values.values())})
        for key, value in values.items():
            name = f"PWH_PLANTED_{key.upper()}"
            self._environ.setdefault(name, os.environ.get(name))
            os.environ[name] = value

    def _evidence(self) -> tuple[str, ...]:
        """The host's evidence for a completion: a planted value that passes for an evidence token
        (a credential, say) is reported with it, as a careless host would."""
        return ("test_result_ok", *(v for _, v in sorted(self._planted.items()) if is_token(v)))

    # -- commands -------------------------------------------------------------------------------

    def commit_completion(self, todo: int, *, fail: PrimaryFailure | None = None, crash: str | None = None) -> Commit:
        if not 1 <= todo <= len(self._todo_ids):
            raise ValueError(f"the Goal has {len(self._todo_ids)} Todos, not a number {todo}")
        plan = replace(self.orch.plan(), todo_id=self._todo_ids[todo - 1])
        output = _NOT_JSON_HOST_OUTPUT if fail == "validation" else completion_output(self._evidence())
        return self._command(lambda: self.orch.run_turn(output, plan=plan, fail_writeback=fail == "writeback"), crash)

    def commit_replan(self, *, fail: PrimaryFailure | None = None, crash: str | None = None) -> Commit:
        output = _NOT_JSON_HOST_OUTPUT if fail == "validation" else replan_output()
        return self._command(lambda: self.orch.run_turn(output, fail_writeback=fail == "writeback"), crash)

    def replay(self, commit_number: int) -> Commit:
        receipt = self._receipt(commit_number)
        turn_key = self.orch._turn_key_of(receipt["receipt_id"])
        return self._command(lambda: self.orch.replay(turn_key), None)

    def recover(self) -> None:
        self.orch.restart()

    def _command(self, run: Any, crash: str | None) -> Commit:
        if crash is not None:
            if crash not in _CRASH_AT:
                raise Unsupported(f"no crash moment {crash!r} in the writeback seam")
            self.orch.arm_crash(_CRASH_AT[crash])
        before = len(self.orch.receipts())
        try:
            result: TurnResult = run()
        except SimulatedCrash as exc:
            if crash is None:
                raise
            return Commit(False, None, None, raised="killed", notes=(f"crashed at {exc.point}",))
        except Exception as exc:  # what the dispatcher let escape into the host (never caught by the orchestrator)
            after = self.orch.receipts()
            last = after[-1] if len(after) > before else None
            return Commit(
                last is not None,
                last["receipt_id"] if last else None,
                last["event_kind"] if last else None,
                raised=type(exc).__name__,
            )
        receipt = result.receipt if result.committed else None
        return Commit(
            result.committed,
            receipt["receipt_id"] if receipt else None,
            receipt["event_kind"] if receipt else None,
            dispatch=result.dispatch.to_json() if result.dispatch is not None else None,
            notes=(result.stage,) + ((result.code,) if result.code else ()),
        )

    # -- reads ----------------------------------------------------------------------------------

    def _receipt(self, commit_number: int) -> dict[str, Any]:
        receipts = self.orch.receipts()
        if not 1 <= commit_number <= len(receipts):
            raise IndexError(f"{len(receipts)} committed writeback(s), not a number {commit_number}")
        return receipts[commit_number - 1]

    def primary_receipt(self, commit_number: int) -> bytes:
        return canonical_bytes(self._receipt(commit_number))

    def spend_eligibility(self, commit_number: int) -> Mapping[str, Any]:
        receipt = self._receipt(commit_number)
        spend = self.orch.store.spend(receipt["receipt_id"])
        return {"eligible": spend_eligible(receipt), "spent_units": spend["units"] if spend else 0}

    def sidecar_records(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.sut.journal_records()]

    def intent_receipts(self) -> list[dict[str, Any]]:
        return [dict(i) for r in self.sidecar_records() if r.get("status") == "proposed" for i in r.get("intents", [])]

    def hooks_seen(self) -> list[HookSeen]:
        raw = self._calls.read_bytes()
        complete = raw[: raw.rfind(b"\n") + 1]
        entries = [json.loads(line) for line in complete.splitlines() if line]
        return [HookSeen(e["hook_id"], e["receipt_id"], e["hook_input"]) for e in entries]

    def close(self) -> None:
        for name, old in self._environ.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old
        self._environ.clear()
        if self._orch is not None:
            self._orch.close()
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)
