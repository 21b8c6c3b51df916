"""The fake orchestrator: one primary Turn, end to end, with the dispatcher reached only through
the SUT seam (docs/rules.md).

    provider resolution (PRV-1) -> host request (HST-1) -> fake host -> capped read (HST-5)
    -> validation (HST-2..6) -> durable primary writeback + committed receipt
    -> diagnostic rollout event (best effort) -> post-writeback dispatch (the SUT)
    -> quota spend, whose eligibility reads the primary receipt and nothing else

Every boundary has a named crash point. Time and ids are injected, so one script gives the same
bytes every run. The orchestrator never catches what the SUT raises: if an implementation lets a
hook failure escape, the Turn visibly breaks, as it would in a real host.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from pwh import CrashPlan, DispatchOutcome

from ._host import FakeHost, TurnPlan, build_host_request, make_host_result
from ._ids import SeededIds, StepClock
from ._primary import WRITEBACK_FAILED, PrimaryHandle, PrimaryStore, WritebackFailed
from ._providers import CapabilityCatalog, ProviderRegistry, ProviderState
from ._turn import TestbedTurn

PRIMARY_BEFORE_WRITEBACK = "primary.before_writeback"
PRIMARY_INSIDE_WRITEBACK = "primary.inside_writeback"
PRIMARY_AFTER_WRITEBACK = "primary.after_writeback"  # committed, before the sidecar checkpoint (JNL-4)
PRIMARY_AFTER_DISPATCH = "primary.after_dispatch"
PRIMARY_AFTER_SPEND = "primary.after_spend"

PRIMARY_CRASH_POINTS: tuple[str, ...] = (
    PRIMARY_BEFORE_WRITEBACK,
    PRIMARY_INSIDE_WRITEBACK,
    PRIMARY_AFTER_WRITEBACK,
    PRIMARY_AFTER_DISPATCH,
    PRIMARY_AFTER_SPEND,
)

TURN_CAPABILITY = "todo_work"
TURN_PROVIDER = "fake_host_provider"

HostOutput = Mapping[str, Any] | bytes | str | Callable[[dict[str, Any]], Any]


@dataclass
class TurnResult:
    """How far one Turn got, and what it left behind."""

    stage: str  # provider_unavailable | validation_rejected | not_material | writeback_failed | committed
    turn_key: str
    code: str | None = None
    path: str | None = None
    receipt: dict[str, Any] | None = None
    dispatch: DispatchOutcome | None = None
    judged_by: Literal["sut", "testbed"] = "testbed"  # whose validation judged the host's output: "sut" (its turn seam) or "testbed"
    spend: dict[str, Any] | None = None
    primary_uses: list[str] = field(default_factory=list)

    @property
    def committed(self) -> bool:
        return self.stage == "committed"


def snapshot_difference(without_hooks: bytes, with_hooks: bytes) -> str:
    """Where two primary-store snapshots (:meth:`FakeOrchestrator.primary_snapshot`) first
    differ, by table and row count only: the rows themselves may hold private values."""
    base, hooked = json.loads(without_hooks), json.loads(with_hooks)
    for table in ("writebacks", "spends", "todos"):
        if base[table] != hooked[table]:
            return f"{table} differ: {len(base[table])} without hooks, {len(hooked[table])} with hooks"
    return "bytes differ"


def spend_eligible(receipt: Mapping[str, Any]) -> bool:
    """Quota-spend eligibility: a committed, durably checkpointed primary receipt. Nothing else
    is read: not the dispatch outcome, not the sidecar, not any hook's health."""
    return receipt.get("step_status") == "committed" and receipt.get("durable_checkpoint") is True


class RolloutLog:
    """The best-effort diagnostic event log. Losing or failing an append changes nothing, and
    no dispatch ever starts from it."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.fail_appends = False
        self.appending = False  # true only while inside the append helper

    def append(self, event: dict[str, Any]) -> bool:
        self.appending = True
        try:
            if self.fail_appends:
                return False
            self.events.append(dict(event))
            return True
        finally:
            self.appending = False


class FakeOrchestrator:
    """Runs primary Turns against one SUT. ``workdir`` holds the primary store (SQLite)."""

    def __init__(
        self,
        sut: Any,
        workdir: str | Path | None = None,
        *,
        seed: int = 0,
        segment_size: int = 3,
        turn: Any = None,
        keep_connection: bool = False,
        in_memory: bool = False,
    ) -> None:
        self.sut = sut
        # A restart (:meth:`reopen`) rolls back what the store's connection had not committed and
        # goes on with that connection, instead of opening the file again: the same durable state
        # (a process that dies loses its uncommitted transaction, nothing else of SQLite's), at a
        # fraction of the cost. For crashes simulated in this process (the models' simulation);
        # after a real crash, a fresh process opens the file, as the default does.
        # ``in_memory``: the primary store is an SQLite database in memory, which only this
        # connection sees (so restarts keep the connection): for an orchestrator no provider runs
        # beside, whose store nothing reads apart (the models' no-hooks twin). The same tables,
        # transactions and rows, so the same snapshot bytes, without a file.
        self.keep_connection = keep_connection or in_memory
        self._store_path = Path(":memory:") if in_memory else None
        # The host's output is judged by the SUT's turn seam when it offers that operation
        # (seed 003 then judges the SUT's code), by the testbed otherwise.
        self.turn = turn if turn is not None and "accept_host_output" in turn.operations else TestbedTurn()
        self.turn_judged_by: Literal["sut", "testbed"] = "testbed" if isinstance(self.turn, TestbedTurn) else "sut"
        self._own_dir = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="pwh-orch-")) if workdir is None else Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.segment_size = segment_size
        self.clock = StepClock()
        self.ids = SeededIds(seed)
        self.goal_id = self.ids.next("goal")
        self.agent_id = self.ids.next("agent")
        self.crash = CrashPlan(PRIMARY_CRASH_POINTS)
        self.rollout = RolloutLog()
        self.store = PrimaryStore(self._store_path or self.workdir / "primary.sqlite3")
        self.providers = ProviderRegistry()
        self.catalog = CapabilityCatalog()
        self.providers.register(TURN_PROVIDER, TURN_CAPABILITY, ProviderState(True, True, True, True))
        self.catalog.add(
            {
                "capability_id": TURN_CAPABILITY,
                "provider_id": TURN_PROVIDER,
                "success_condition": "todo_acceptance_met",
                "evidence_kinds": ["test_result"],
            }
        )
        self.turns: list[TurnResult] = []
        self.spend_attempts = 0

    # -- one Turn -----------------------------------------------------------------------------

    def plan(self) -> TurnPlan:
        return TurnPlan(
            turn_key=self.ids.next("turn"),
            effect_ref=self.ids.next("effect"),
            goal_id=self.goal_id,
            agent_id=self.agent_id,
            todo_id=self.ids.next("todo"),
            route="default_route",
            gate="no_gate",
            scope=("workspace_read", "workspace_write"),
            output_schema="pwh_host_result_v0",
            evidence_requirements=("test_result",),
            stop_conditions=("acceptance_met",),
            resume_conditions=("operator_resume",),
        )

    def run_turn(
        self,
        output: HostOutput,
        *,
        plan: TurnPlan | None = None,
        capability: str = TURN_CAPABILITY,
        fail_writeback: bool = False,
        plan_effect_id: str | None = None,
    ) -> TurnResult:
        """Run one Turn whose fake host answers ``output`` (a dict, raw bytes, or a function of
        the request)."""
        plan = plan or self.plan()
        resolution = self.catalog.resolve(capability, self.providers)
        if not resolution.ok:
            return self._done(TurnResult("provider_unavailable", plan.turn_key, resolution.status, "$.provider"))
        raw = FakeHost([output]).execute(build_host_request(plan))
        verdict = self.turn.accept_host_output(plan_as_dict(plan), raw)
        by = self.turn_judged_by
        if not verdict.accepted:
            return self._done(TurnResult("validation_rejected", plan.turn_key, verdict.code, verdict.path, judged_by=by))
        if verdict.event_kind is None:
            return self._done(TurnResult("not_material", plan.turn_key, judged_by=by))
        try:
            receipt = self._write_back(plan, verdict.event_kind, list(verdict.evidence), fail_writeback, plan_effect_id)
        except WritebackFailed as exc:
            return self._done(TurnResult("writeback_failed", plan.turn_key, exc.code, exc.path, judged_by=by))
        result = self._after_commit(plan.turn_key, receipt)
        result.judged_by = by
        return self._done(result)

    def complete_todo(self, **kw: Any) -> TurnResult:
        """A Turn whose host returns a valid completion with its lifecycle."""
        return self.run_turn(completion_output(), **kw)

    def replan(self, **kw: Any) -> TurnResult:
        return self.run_turn(replan_output(), **kw)

    def progress(self, **kw: Any) -> TurnResult:
        return self.run_turn(progress_output(), **kw)

    def replay(self, turn_key: str) -> TurnResult:
        """Replay a committed primary writeback: no second writeback, the same receipt goes
        through the same post-writeback boundary, and a spend already made is not made again."""
        receipt = self.store.writeback_by_turn(turn_key)
        if receipt is None:
            return self._done(TurnResult("writeback_failed", turn_key, "primary_receipt_missing", "$"))
        return self._done(self._after_commit(turn_key, receipt))

    # -- crash and recovery ---------------------------------------------------------------------

    @property
    def crash_points(self) -> tuple[str, ...]:
        return PRIMARY_CRASH_POINTS + tuple(self.sut.crash_points)

    def arm_crash(self, point: str) -> None:
        if point in PRIMARY_CRASH_POINTS:
            self.crash.arm(point)
        else:
            self.sut.arm_crash(point)

    def restart(self) -> list[TurnResult]:
        """Come back from durable storage: reopen the primary store, restart the SUT, then run
        the recovery queue: every committed receipt is dispatched again (a no-op where recorded)
        and spent if its spend is missing."""
        self.reopen()
        return self.recover()

    def reopen(self) -> None:
        """The durable state a crashed process left, opened again by a fresh process: the primary
        store reopened and the SUT restarted, with no recovery run (what another dispatcher sees)."""
        if self.keep_connection:
            self.store.rollback()
        else:
            self.store.close()
            self.store = PrimaryStore(self.workdir / "primary.sqlite3")
        self.sut.restart()

    def recover(self) -> list[TurnResult]:
        results = []
        for receipt in self.store.receipts():
            turn_key = self._turn_key_of(receipt["receipt_id"])
            results.append(self._done(self._after_commit(turn_key, receipt)))
        return results

    # -- reads ----------------------------------------------------------------------------------

    def primary_snapshot(self) -> bytes:
        return self.store.snapshot()

    def receipts(self) -> list[dict[str, Any]]:
        return self.store.receipts()

    def spends(self) -> list[dict[str, Any]]:
        return self.store.spends()

    def intent_receipts(self) -> list[dict[str, Any]]:
        """Validated intents as recorded in the sidecar, in record order (for the scheduler)."""
        return [i for r in self.sut.journal_records() if r.get("status") == "proposed" for i in r.get("intents", [])]

    def close(self) -> None:
        self.store.close()
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # -- internals ------------------------------------------------------------------------------

    def _done(self, result: TurnResult) -> TurnResult:
        self.turns.append(result)
        return result

    def _turn_key_of(self, receipt_id: str) -> str:
        row = self.store.db.execute("SELECT turn_key FROM writebacks WHERE receipt_id = ?", (receipt_id,)).fetchone()
        return row[0]

    def _event(self, event_kind: str, evidence: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
        segment = self.store.counter("segment", {"ref": None, "completed": 0})
        if segment["ref"] is None:
            segment = {"ref": self.ids.next("segment"), "completed": 0}
        if event_kind == "todo_completed":
            segment["completed"] += 1
            closes = segment["completed"] >= self.segment_size
            transition = "segment_completed" if closes else "segment_progressed"
        elif event_kind == "replan_recorded":
            closes, transition = True, "replanned"
        else:
            closes, transition = False, "progressed"
        event = {"transition": transition, "segment_ref": segment["ref"], "fact_refs": evidence[:16]}
        next_segment = {"ref": None, "completed": 0} if closes else segment
        return event, next_segment

    def _write_back(self, plan: TurnPlan, event_kind: str, evidence: list[str], fail: bool, plan_effect_id: str | None) -> dict[str, Any]:
        self.crash.hit(PRIMARY_BEFORE_WRITEBACK)
        self.store.begin()
        try:
            event, next_segment = self._event(event_kind, evidence)
            receipt = {
                "schema_version": "pwh_primary_receipt_v0",
                "receipt_id": self.ids.next("receipt"),
                "effect_id": plan.effect_ref,
                "plan_effect_id": plan_effect_id or plan.effect_ref,
                "step_kind": "durable_writeback",
                "step_status": "committed",
                "durable_checkpoint": True,
                "goal_id": plan.goal_id,
                "agent_id": plan.agent_id,
                "todo_id": plan.todo_id,
                "turn_instance_id": plan.turn_key,
                "event_kind": event_kind,
                "state_revision": self.ids.next("rev"),
                "committed_at": self.clock.now(),
                "event": event,
            }
            todo_state = {"todo_completed": "done", "replan_recorded": "replanned"}.get(event_kind, "in_progress")
            self.store.insert_writeback(plan.turn_key, receipt, todo_state)
            self.store.set_counter("segment", next_segment)
            if fail:
                raise WritebackFailed(WRITEBACK_FAILED, "$", "the primary writeback could not be committed")
            self.crash.hit(PRIMARY_INSIDE_WRITEBACK)
            self.store.commit()
        except BaseException:
            self.store.rollback()
            raise
        self.crash.hit(PRIMARY_AFTER_WRITEBACK)
        return receipt

    def _after_commit(self, turn_key: str, receipt: dict[str, Any]) -> TurnResult:
        self.rollout.append({"kind": receipt["event_kind"], "receipt_id": receipt["receipt_id"]})
        handle = PrimaryHandle(self.store, receipt["receipt_id"])
        outcome = self.sut.dispatch(dict(receipt), primary=handle)
        self.crash.hit(PRIMARY_AFTER_DISPATCH)
        spend = self._spend(receipt["receipt_id"], handle)
        self.crash.hit(PRIMARY_AFTER_SPEND)
        stored = self.store.receipt(receipt["receipt_id"])
        return TurnResult("committed", turn_key, receipt=stored, dispatch=outcome, spend=spend, primary_uses=handle.uses)

    def _spend(self, receipt_id: str, handle: PrimaryHandle) -> dict[str, Any] | None:
        """Spend quota for the receipt, once. Eligibility reads the stored primary receipt only."""
        self.spend_attempts += 1
        receipt = self.store.receipt(receipt_id)
        if receipt is None or handle.spend_blocked or not spend_eligible(receipt):
            return self.store.spend(receipt_id)
        existing = self.store.spend(receipt_id)
        if existing is not None:
            return existing
        spend = {"receipt_id": receipt_id, "units": 1, "eligible": True, "spent_at": self.clock.now()}
        self.store.begin()
        self.store.record_spend(spend)
        self.store.commit()
        return spend


def plan_as_dict(plan: TurnPlan) -> dict[str, Any]:
    """``dataclasses.asdict(plan)``, without its recursive copy: a :class:`TurnPlan` holds only
    strings and tuples of strings (it validates them when it is made), which are immutable, so
    the same fields in the same order with the same values is what ``asdict`` would give."""
    if type(plan) is not TurnPlan:
        return asdict(plan)
    return {f.name: getattr(plan, f.name) for f in _PLAN_FIELDS}


_PLAN_FIELDS = fields(TurnPlan)


def completion_output(evidence: tuple[str, ...] = ("test_result_ok",)) -> Callable[[dict[str, Any]], Any]:
    def answer(request: dict[str, Any]) -> dict[str, Any]:
        return make_host_result(
            request,
            "validated_completion",
            evidence=list(evidence),
            lifecycle={"adapter": "todo_lifecycle_v0", "followup": {"kind": "no_followup", "ref": None}},
        )

    return answer


def replan_output() -> Callable[[dict[str, Any]], Any]:
    def answer(request: dict[str, Any]) -> dict[str, Any]:
        return make_host_result(request, "replan", evidence=["replan_reason_recorded"])

    return answer


def progress_output() -> Callable[[dict[str, Any]], Any]:
    def answer(request: dict[str, Any]) -> dict[str, Any]:
        return make_host_result(request, "progress", evidence=["partial_result"], progress_observation="step_done")

    return answer
