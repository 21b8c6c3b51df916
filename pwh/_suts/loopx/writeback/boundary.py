"""LoopX through its real command paths, as a :class:`~pwh._suts.writeback_seam.WritebackBoundary`.

One boundary is one private LoopX installation: a directory with its own HOME, TMPDIR (so its
Node runtime and usage-ping state are its own), runtime root and Goal fixture
(:mod:`.fixture`). Its commands run in children forked by the process's one warm LoopX
interpreter (:mod:`.server`, started with this interpreter, ``sys.executable``, and shared by
every boundary of the process with the promoted fixtures, :mod:`.shared`); each child takes the
boundary's environment and folder. Each command is LoopX's
own CLI path (``loopx.entrypoint.main(argv)``): ``quota should-run --turn-instance-id`` opens a
Turn, ``todo complete`` commits the completion and dispatches the post-writeback hooks LoopX's
composition root returns (its own report capability's hook plus the test hooks the server adds there);
a replan is a Turn-bound ``refresh-state``, or, with LoopX's report capability installed, its
orchestrator-owned Turn (``turn run-once`` with a fake host, :mod:`.turn`), replayed and recovered
by its ``--resume-turn-key``.

A test hook's producer stays in this process: the LoopX child hands each provider call over a
Unix socket, the boundary translates LoopX's input to RFC terms (:mod:`pwh._suts.loopx.map`),
runs the producer on a watch, and sends the translated result back as plain data. A crash is a
real SIGKILL of the child by PID while a provider runs. Readback is from LoopX's files: the
canonical authority store, run record or Turn journal (primary receipt), the command's
``settlement_result`` or the Turn journal's ``commit_eligibility`` (spend eligibility),
``<RT>/goals/G/post_writeback_hooks/pwh_*.json`` (sidecar records and intent receipts), and the
server's JSONL of every hook input.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pwh._core import codes
from pwh._core.codes import Rejection
from pwh._core.profile import CORE_CEILINGS
from pwh._core.registry import IntentKindCatalog, Producer, RegistrationRejected
from pwh._suts.loopx.crossing import budget_sides_differ, contract_edits
from pwh._suts.loopx.map import (
    CARRIED,
    ENVELOPE,
    Binding,
    LoopxDivergence,
    StopDispatch,
    get_path,
    lacks,
    loopx_version,
    plain_copy,
    reference_dispatch_id_for,
    registration_problems,
    row,
    to_loopx_event_kind,
    to_loopx_result,
    to_rfc_code,
    to_rfc_event_kind,
    to_rfc_input,
    to_rfc_record,
)
from pwh._suts.loopx.runtime import node_bin_dir, pid_alive
from pwh._suts.seam import Unsupported
from pwh._suts.wire import encode
from pwh._suts.writeback_seam import WRITEBACK_OPERATIONS, Commit, HookSeen, PrimaryFailure

from . import turn as lxturn
from .fixture import AGENT_ID, GOAL_ID, Layout, todo_id, write_goal
from .shared import SHARED, CommandFailed, WarmServer, copy_tree, runtime_pids, stop_pids

__all__ = ["CommandFailed", "LoopxWritebackBoundary", "encode"]

COMMAND_SECONDS = 180.0
WATCH_GRACE_SECONDS = 0.5
COMPLETION = "todo_completed"
REPLAN = "replan_recorded"

UNSUPPORTED_CRASHES = {
    "after_primary_commit": (
        "no point between LoopX's committed completion and its first provider call: its hooks are composed before "
        "the command commits (cli_runtime.py:476-510) and only a provider can hold the process after the commit"
    ),
    "before_sidecar_checkpoint": (
        "no point after every provider answered and before the sidecar write: LoopX finalizes its receipts inside "
        "its Node transaction (post_writeback_hook_transaction.ts), which no Python entry reaches"
    ),
}


class LoopxWritebackBoundary:
    """LoopX 2.1.1's ``todo complete``, ``refresh-state`` and ``turn run-once`` paths with their
    post-writeback wiring, driven from outside.

    ``completions="turn"`` completes each Todo through LoopX's orchestrator-owned Turn (its host
    answering ``validated_completion``) instead of ``todo complete``: LoopX then drains two sources
    for the one Turn, its ``refresh_state`` writeback and the terminal ``todo_complete``.

    ``templates=False`` promotes the Goal in every :meth:`prepare` instead of copying a kept
    promotion of the same fixture (:mod:`.shared`).

    ``turn_drain=False`` is a release whose ``turn run-once`` dispatches no post-writeback hook
    (before 1.4.0): what only that path reaches is :class:`Unsupported` there.
    ``canonical_authority=False`` is a release whose Todo authority is still the Goal's state file
    (before 1.4.0): nothing is promoted, and a completion is read back from that file."""

    operations = WRITEBACK_OPERATIONS  # every operation; a case one cannot express raises Unsupported

    def __init__(
        self,
        *,
        workdir: str | Path | None = None,
        completions: Literal["todo", "turn"] = "todo",
        templates: bool = True,
        turn_drain: bool = True,
        canonical_authority: bool = True,
    ) -> None:
        self._completions = completions
        self._turn_drain = turn_drain
        self._canonical_authority = canonical_authority
        self._templates = templates
        self.promoted = False  # whether prepare promoted the Goal (False: it copied a kept promotion)
        self._own_dir = workdir is None
        self._base = _lasting_temp_dir()
        root = Path(tempfile.mkdtemp(prefix="pwh-lxwb-", dir=self._base)) if workdir is None else Path(workdir)
        self.layout = Layout(root.resolve())
        self.layout.make_dirs()
        self._closed = False
        self._hooks: dict[str, dict[str, Any]] = {}  # hook_id -> {registration, producer, edits}
        self._commits: list[dict[str, Any]] = []
        self._crashed: dict[str, Any] | None = None
        self._events: dict[str, str] = {}  # LoopX source event id (pwr_) -> committed receipt id (tcw_)
        self._kinds: dict[str, str] = {}  # LoopX source event id -> RFC event kind
        self._carried: dict[str, dict[str, Any]] = {}
        self._order: list[str] = []  # sidecar dispatch ids, in the order they first appeared
        self._planted: dict[str, str] = {}
        self._todos = 0
        self._done: set[int] = set()  # Todos this boundary completed
        self._host: Path | None = None  # the fake Turn host, written on first use
        self._report = False
        self._vision_closed = False
        self._catalog = IntentKindCatalog()
        self._turns = 0
        self._node_pids: set[int] = set()
        self.command_seconds: list[tuple[str, float]] = []
        self.command_pids: list[tuple[str, int]] = []  # the forked child that ran each command
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket_dir: Path | None = None
        self._socket_path = str(self.layout.root / "cb.sock")
        if len(self._socket_path) > 100:  # AF_UNIX paths are short (108 bytes on Linux)
            self._socket_dir = Path(tempfile.mkdtemp(prefix="pwh-cb-", dir="/tmp"))
            self._socket_path = str(self._socket_dir / "cb.sock")
        self._listener.bind(self._socket_path)
        self._listener.listen(4)
        self._ran = False  # a LoopX command ran (its Node runtime then compiled what commands need)
        self._server_pid: int | None = None
        self._capabilities: list[str] = []
        try:
            self._environ = self._env()
            with SHARED.session(self._base, self._environ) as server:  # started here, or already warm
                self._server_pid, self._capabilities = server.pid, list(server.capabilities)
        except BaseException:
            self.close()
            raise

    # -- environment -------------------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            HOME=str(self.layout.home),
            TMPDIR=str(self.layout.tmp),
            LOOPX_USAGE_PING="0",
            LOOPX_EFFECT_RUNTIME_IDLE_MS="60000",
            PYTHONDONTWRITEBYTECODE="1",
        )
        env.pop("PWH_LOOPX_PID_LOG", None)
        node = node_bin_dir()
        if node is not None:
            env["PATH"] = os.pathsep.join(filter(None, [str(node), env.get("PATH", "")]))
        repo = str(Path(__file__).resolve().parents[4])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [repo, env.get("PYTHONPATH", "")]))
        env["NODE_COMPILE_CACHE"] = str(SHARED.compile_cache(self._base))
        return env

    @property
    def server_pid(self) -> int | None:
        """The warm interpreter that forked this boundary's last command (shared by the process)."""
        return self._server_pid

    # -- the seam ----------------------------------------------------------------------------------

    def prepare(self, *, todos: int, phase_enabled: bool, report_capability: bool) -> None:
        if not phase_enabled:
            raise lacks("profile.phase_enabled")
        texts = {n: self._planted_text(n) for n in range(1, todos + 1)} if self._planted else None
        own = self._capabilities[0] if self._capabilities and report_capability else None
        self._report, self._vision_closed = own is not None, False
        write_goal(self.layout, todos=todos, report_capability=own, texts=texts)
        self._todos, self._done = todos, set()
        copyable = self._templates and not any(self.layout.runtime_root.iterdir())  # a fresh runtime root
        key = self._fixture_key()
        kept = SHARED.template(key) if copyable else None
        if kept is not None:
            copy_tree(kept, self.layout.runtime_root)
            self.promoted = False
            return
        self._promote()
        if copyable and not SHARED.known(key):
            SHARED.keep_template(self._base, key, self.layout.runtime_root, self.layout.root)

    def _fixture_key(self) -> str:
        """What a promotion reads, less this installation's folder: the state file and the registry."""
        registry = self.layout.registry.read_text("utf-8").replace(str(self.layout.root), "<installation>")
        return json.dumps([GOAL_ID, self.layout.state_file.read_text("utf-8"), registry])

    def _promote(self) -> None:
        """Make the Goal's Todo authority canonical, LoopX's way (the server's ``promote``); a
        release whose authority is the state file has nothing to promote."""
        if not self._canonical_authority:
            return
        self.promoted = True
        request: dict[str, Any] = {
            "registry": str(self.layout.registry),
            "runtime_root": str(self.layout.runtime_root),
            "goal_id": GOAL_ID,
            "state_path": str(self.layout.state_file),
        }
        answer = self._run("promote", **request)
        if answer["exit"] != 0:
            said = (answer["err"] or answer["out"])[-1500:].strip() or "nothing on stderr or stdout"
            raise CommandFailed(f"canonical Todo authority promotion failed (exit {answer['exit']}, signal {answer['signal']}): {said}")

    def plant(self, values: Mapping[str, str]) -> None:
        """Private values go where a user puts them: every value into the completion evidence of the
        next commits, and, when planted before :meth:`prepare`, into each Todo's text too."""
        self._planted.update({str(k): str(v) for k, v in values.items()})

    def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> list[Any]:
        """LoopX has no intent-kind catalog: the kind is kept for the RFC checks of registrations,
        and a case only a catalog could decide is Unsupported (as at the dispatcher seam)."""
        try:
            self._catalog.register(kind, payload_schema)
        except RegistrationRejected:
            raise lacks("seam.register_intent_kind") from None
        return []

    def install(self, registration: Mapping[str, Any], producer: Producer) -> list[Any]:
        if not isinstance(registration, Mapping):
            raise Unsupported("a registration that is not an object cannot cross to the LoopX process as a registration")
        problems = registration_problems(registration, self._catalog.kinds)
        edits = contract_edits(registration, problems)
        if edits is None:
            concept, known = problems[0]
            raise lacks(known.harness if known else concept)
        hook = {"registration": plain_copy(dict(registration)), "edits": plain_copy(edits)}
        others = [self._wire(h) for h in self._hooks.values() if h["registration"].get("hook_id") == registration.get("hook_id")]
        kinds = registration.get("event_kinds")
        kind = kinds[0] if isinstance(kinds, list) and kinds and isinstance(kinds[0], str) else COMPLETION
        failures = self._probe([*others, hook], to_loopx_event_kind(kind))
        found = {f.get("error_code") for f in failures if f.get("hook_id") == registration.get("hook_id")}
        if row("install.duplicate_hook_id").loopx in found:
            return [Rejection(codes.REGISTRATION_REJECTED, "$.hook_id", "loopx reports duplicate_hook_id")]
        if row("install.rejected").loopx in found:
            return [Rejection(codes.REGISTRATION_REJECTED, "$", "loopx rejected the registration; it names no field")]
        self._hooks[str(registration.get("hook_id"))] = {**hook, "producer": producer}
        return []

    def _probe(self, hooks: list[dict[str, Any]], event_kind: str) -> list[dict[str, Any]]:
        """LoopX's failures for ``hooks`` from its registration probe (the server's ``probe``: a
        dispatch of a probe source that persists nothing, so its answer is the same for the same
        request in any installation); an answer the process already has is not asked again."""
        request: dict[str, Any] = {"hooks": hooks, "event_kind": event_kind}
        key = json.dumps(request, sort_keys=True, allow_nan=True, default=repr)
        known = SHARED.probe_verdict(key)
        if known is not None:
            return known
        answer = self._run("probe", **request)
        if answer["exit"] != 0:
            raise CommandFailed("LoopX's registration probe failed: " + answer["err"][-1500:])
        failures = [f for f in _json(answer["out"]).get("failures", []) if isinstance(f, dict)]
        SHARED.keep_probe_verdict(key, failures)
        return failures

    def commit_completion(self, todo: int, *, fail: PrimaryFailure | None = None, crash: str | None = None) -> Commit:
        if fail == "writeback" and not self._canonical_authority:
            raise Unsupported(
                f"loopx {loopx_version()} has no way from outside to make its Goal state-file write fail "
                "(this process runs as a user the file mode does not stop)"
            )
        if fail == "writeback":
            raise Unsupported(
                f"loopx {loopx_version()} has no way from outside to make its canonical authority write fail "
                "(the file-v0 store is written by its Node runtime; this process runs as a user the file mode does not stop)"
            )
        self._crash_supported(crash)
        if self._completions == "turn":
            return self._turn_completion(todo, fail, crash)
        self._turns += 1
        turn = f"pwh-turn-{self._turns:04d}"
        opened: dict[str, Any] = {}
        if fail == "validation":
            # LoopX's own primary validation of a completion: its Turn-settlement gate refuses a
            # completion whose Turn was never opened by quota should-run (nothing commits).
            turn = f"pwh-unopened-turn-{self._turns:04d}"
        else:
            opened = self._open_turn(turn, todo)
        if self._report and todo == self._todos and fail is None and not self._vision_closed:
            self._close_vision()  # inside the open Turn: once the Vision is closed LoopX opens none for a Todo
        argv = [
            "todo", "complete", "--goal-id", GOAL_ID, "--agent-id", AGENT_ID, "--todo-id", todo_id(todo),
            "--turn-instance-id", turn, "--claimed-by", AGENT_ID, "--evidence", self._evidence(todo),
        ]  # fmt: skip
        record = {
            "argv": argv,
            "turn": turn,
            "todo": todo,
            "kind": COMPLETION,
            "opened": opened.get("json"),
            "receipt_id": None,
            "output": None,
        }
        answer = self._loopx(argv, crash_in_provider=crash == "inside_provider")
        if answer["crashed"]:
            # The process that would have answered is gone; the authority store says what committed.
            record["receipt_id"] = self._durable_completion(todo)
            return self._crashed_commit(record, done=todo)
        commit = self._commit_of(answer)
        if fail is None and not commit.committed and get_path(answer.get("json"), "settlement_result.failure.kind") == "writeback_missing":
            raise Unsupported(
                f"loopx {loopx_version()}'s todo complete commits only after a Turn-bound refresh-state of the same Turn "
                "(its settlement found no durable writeback), and that refresh would itself dispatch the hooks: not wired in this boundary"
            )
        if commit.committed:
            record["receipt_id"], record["output"] = commit.receipt_id, answer.get("json")
            self._commits.append(record)
            self._done.add(todo)
        return commit

    def _open_turn(self, turn: str, todo: int) -> dict[str, Any]:
        """``quota should-run --turn-instance-id`` for the Todo the Turn settles: on a Goal LoopX
        finds healthy the receipt binds a settlement identity only when the Todo is named."""
        argv = ["quota", "should-run", "--codex-app", "--goal-id", GOAL_ID, "--agent-id", AGENT_ID, "--turn-instance-id", turn]
        return self._loopx([*argv, "--todo-id", todo_id(todo)])

    def _crashed_commit(self, record: dict[str, Any], *, done: int | None = None) -> Commit:
        """A command killed inside a provider: what committed is read from durable storage (the
        record's ``receipt_id``); :meth:`recover` runs it again."""
        self._crashed = record
        self._commits.append(record)
        if done is not None and record.get("receipt_id"):
            self._done.add(done)
        return Commit(committed=False, receipt_id=None, event_kind=None, raised="killed", notes=("SIGKILL inside a provider",))

    def _open_todo(self) -> int | None:
        """The first Todo this boundary has not completed (LoopX selects the same one for a Turn)."""
        return next((n for n in range(1, self._todos + 1) if n not in self._done), None)

    def _close_vision(self) -> None:
        """LoopX closes a segment with a closed Vision (a ``refresh-state`` with ``--vision-state
        vision_closed``) followed by a goal-terminal completion (before the Goal's last Todo) or by
        an accepted successor replan (before a Turn replan); its report capability proposes its
        trigger evaluation only then (stage_completion.py). The refresh carries no Turn binding,
        so LoopX rejects its post-writeback source (``source_projection_failed``) and calls no hook for it."""
        answer = self._loopx(
            [
                "refresh-state", "--goal-id", GOAL_ID, "--agent-id", AGENT_ID,
                "--delivery-workspace-path", str(self.layout.project), "--delivery-batch-scale", "implementation",
                "--delivery-outcome", "outcome_progress", "--vision-state", "vision_closed",
                "--vision-summary", "The fixture segment is complete", "--vision-acceptance", "Every fixture Todo is done",
                "--no-global-sync", "--suppress-external-sinks",
            ]
        )  # fmt: skip
        if not (answer.get("json") or {}).get("ok"):
            raise CommandFailed("LoopX's closed-Vision refresh-state failed: " + (answer["out"] + answer["err"])[-1500:])
        self._vision_closed = True

    def commit_replan(self, *, fail: PrimaryFailure | None = None, crash: str | None = None) -> Commit:
        """A replan recorded LoopX's way, for the Turn's open Todo. With LoopX's report capability
        installed: its orchestrator-owned Turn (:meth:`_turn_replan`), the replan that capability
        recognizes; without: a Turn-bound ``refresh-state`` (LoopX's event kind ``refresh_state``,
        the map's ``replan_recorded``)."""
        if fail is not None:
            raise Unsupported(
                f"loopx {loopx_version()} has no way from outside to make a replan's writeback fail; a refusing validation "
                "(refresh-state has none, turn run-once's validator) is not wired in this boundary"
            )
        self._crash_supported(crash)
        todo = self._open_todo()
        if todo is None:
            raise Unsupported(
                "with no open Todo LoopX binds a replan to its autonomous replan obligation alone: its generic-cli Turn "
                "planner blocks that (only an agent-scoped session, which needs its codex-cli host, carries one), and a "
                "refresh-state bound to the obligation (with a typed semantic delta) is not wired in this boundary"
            )
        if self._report:
            return self._turn_replan(crash)
        self._turns += 1
        turn = f"pwh-turn-{self._turns:04d}"
        opened = self._open_turn(turn, todo)
        bound_todo = get_path(opened.get("json"), "heartbeat_receipt.settlement_identity.todo_id")
        if bound_todo != todo_id(todo):
            said = get_path(opened.get("json"), "error_code") or get_path(opened.get("json"), "decision")
            raise Unsupported(f"loopx {loopx_version()}'s quota should-run bound the replan's Turn to no open Todo ({said})")
        argv = [
            "refresh-state", "--goal-id", GOAL_ID, "--agent-id", AGENT_ID, "--todo-id", bound_todo, "--turn-instance-id", turn,
            "--delivery-workspace-path", str(self.layout.project), "--classification", "replan_recorded",
            "--delivery-batch-scale", "implementation", "--delivery-outcome", "outcome_progress",
            "--no-global-sync", "--suppress-external-sinks",
        ]  # fmt: skip
        record = {"argv": argv, "turn": turn, "todo": None, "kind": REPLAN, "receipt_id": None, "output": None}
        answer = self._loopx(argv, crash_in_provider=crash == "inside_provider", kind=REPLAN)
        if answer["crashed"]:
            return self._crashed_commit(record)
        commit = self._commit_of(answer, REPLAN)
        if commit.committed:
            record["receipt_id"], record["output"], record["run"] = (
                commit.receipt_id,
                answer.get("json"),
                (answer.get("json") or {}).get("json_path"),
            )
            self._commits.append(record)
        return commit

    def _crash_supported(self, crash: str | None) -> None:
        if crash is not None and crash != "inside_provider":
            raise Unsupported(f"loopx {loopx_version()} has {UNSUPPORTED_CRASHES.get(crash, 'no such crash point')}")
        if crash is not None and not self._hooks:
            raise Unsupported("a crash inside a provider needs an installed test hook to hold LoopX's process there")

    def _turn_replan(self, crash: str | None) -> Commit:
        """The replan LoopX's report capability recognizes: a closed Vision first (:meth:`_close_vision`),
        which leaves LoopX owing an accepted ``vision_successor_required`` replan; then its
        orchestrator-owned Turn (``turn run-once``), which plans itself onto that obligation and
        the open Todo; the fake host answers a material replan with an active successor Vision
        (:mod:`.turn`). After it the successor Vision is open, so a later segment closes again."""
        self._turn_drain_offered()
        if not self._vision_closed:
            self._close_vision()
        self._turns += 1
        turn = f"pwh-turn-{self._turns:04d}"
        argv = lxturn.run_once_argv(self.layout, self._fake_host(), answer="replan", turn=turn)
        record: dict[str, Any] = {"argv": argv, "turn": turn, "todo": None, "kind": REPLAN}
        commit = self._run_turn(record, crash)
        if self._turn_receipt(record["journal"]):
            self._vision_closed = False
        return commit

    def _run_turn(self, record: dict[str, Any], crash: str | None) -> Commit:
        """One ``turn run-once``; the record keeps its journal key (from its answer, or, when the
        process was killed, the one journal that appeared), which replay and recovery resume."""
        record.update(receipt_id=None, output=None, journal=None)
        before = lxturn.journals(self.layout)
        answer = self._loopx(record["argv"], crash_in_provider=crash == "inside_provider", kind=record["kind"])
        appeared = sorted(lxturn.journals(self.layout) - before)
        record["journal"] = lxturn.key_of(answer.get("json") or {}) or (appeared[0] if len(appeared) == 1 else None)
        if answer["crashed"]:
            record["receipt_id"] = self._turn_receipt(record["journal"])
            return self._crashed_commit(record)
        commit = self._commit_of(answer, record["kind"])
        if commit.committed:
            record["receipt_id"], record["output"] = commit.receipt_id, answer.get("json")
            self._commits.append(record)
        return commit

    def _turn_completion(self, todo: int, fail: PrimaryFailure | None, crash: str | None) -> Commit:
        """Todo ``todo`` completed by LoopX's orchestrator-owned Turn: the fake host answers a
        validated completion of the Todo the Turn is asked for (``--todo-id``). A Turn cannot also
        close the Vision (only a material replan carries one), so this path closes no segment."""
        self._turn_drain_offered()
        if fail is not None:
            raise Unsupported("a Turn completion refused by LoopX's independent validator is not wired in this boundary")
        self._turns += 1
        turn = f"pwh-turn-{self._turns:04d}"
        argv = lxturn.run_once_argv(self.layout, self._fake_host(), answer="complete", turn=turn, todo=todo_id(todo))
        record: dict[str, Any] = {"argv": argv, "turn": turn, "todo": todo, "kind": COMPLETION}
        commit = self._run_turn(record, crash)
        if self._turn_receipt(record["journal"]):
            self._done.add(todo)
        return commit

    def _turn_drain_offered(self) -> None:
        if not self._turn_drain:
            raise Unsupported(
                f"loopx {loopx_version()}'s turn run-once dispatches no post-writeback hook (its drain, "
                "cli_commands/turn_post_writeback.py, ships from 1.4.0), and LoopX's own report replan is planned only there"
            )

    def _fake_host(self) -> Path:
        if self._host is None:
            self._host = lxturn.write_host(self.layout)
        return self._host

    def _turn_journal(self, key: str | None) -> dict[str, Any]:
        return _json(_read(lxturn.journal_path(self.layout, key))) if key else {}

    def _turn_receipt(self, key: str | None) -> str | None:
        return lxturn.writeback_ref(self._turn_journal(key))

    def replay(self, commit_number: int) -> Commit:
        """The committed command again, LoopX's way: a Turn by ``--resume-turn-key`` (its journal
        replayed, the host not called), any other command as it was."""
        record = self._commit(commit_number)
        kind = record.get("kind", COMPLETION)
        return self._commit_of(self._loopx(self._again(record), kind=kind), kind)

    def _again(self, record: Mapping[str, Any]) -> list[str]:
        key = record.get("journal")
        return lxturn.resume_argv(list(record["argv"]), key) if isinstance(key, str) else list(record["argv"])

    def recover(self) -> None:
        """LoopX's own recovery: re-run the committed CLI mutation (its composition-retry journal's
        replay action; a Turn resumed by its key), in a fresh child of the warm interpreter, which
        keeps no state of its own."""
        record, self._crashed = self._crashed, None
        if record is None:
            return
        kind = record.get("kind", COMPLETION)
        answer = self._loopx(self._again(record), kind=kind)
        commit = self._commit_of(answer, kind)
        record["receipt_id"], record["output"] = commit.receipt_id, answer.get("json")
        record["run"] = (answer.get("json") or {}).get("json_path")

    def primary_receipt(self, commit_number: int) -> bytes:
        """The completion's terminal lifecycle receipt (``loopx_coordination_todo_terminal_lifecycle_receipt_v0``)
        as the canonical authority store's committed entry holds it, canonical JSON bytes, with its
        one wall-clock value (``result.completed_at``, whole seconds) masked: two installations
        commit the same completion at different seconds, and pwh compares a hooked run with a run
        without hooks. Everything else (ids, request digest, result) is LoopX's bytes as stored.
        A refresh's is its run record (:meth:`_run_record`), a Turn's its journal (:meth:`_journal_record`)."""
        record = self._commit(commit_number)
        if record.get("journal"):
            return self._journal_record(record)
        if record.get("kind") == REPLAN:
            return self._run_record(record)
        return _canonical(_masked(self._stored_receipt(commit_number)))

    def _journal_record(self, record: Mapping[str, Any]) -> bytes:
        """A Turn's primary receipt: LoopX's Turn journal (``turns/<key>.json``), canonical JSON,
        with only what two installations cannot share masked: the installation's directory (the
        plan names the registry, runtime root and state file), wall-clock times, the digests of
        the Goal's state the plan signs (:data:`_PER_TURN`) and so the Turn key, which digests
        them, and the authority store's revision. Nothing is masked for a replay: it leaves the
        file itself byte-identical (a test holds it)."""
        key = str(record["journal"])
        path = lxturn.journal_path(self.layout, key)
        if not path.is_file():
            raise LookupError("the Turn's journal is gone")
        text = path.read_text("utf-8").replace(str(self.layout.root), "<installation>").replace(key, "<turn key>")
        return _canonical(_mask_keys(json.loads(_TIMESTAMP.sub("<wall clock>", text)), _PER_INSTALLATION | _PER_TURN))

    def _run_record(self, record: Mapping[str, Any]) -> bytes:
        """A replan's primary receipt: LoopX's run record (``runs/<ts>.json``, indexed in
        ``runs/index.jsonl``), canonical JSON, with what differs between two installations by
        construction masked: the installation's directory, wall-clock times and the rollout event
        ids LoopX draws at random, and the digests of those and the store's random identity
        (:data:`_PER_INSTALLATION`)."""
        path = Path(str(record.get("run") or ""))
        if not path.is_file():
            raise LookupError("the replan's run record is gone")
        text = path.read_text("utf-8").replace(str(self.layout.root), "<installation>")
        text = _TIMESTAMP.sub("<wall clock>", text)
        text = _EVENT_REF.sub(r"\1<random>", text)
        return _canonical(_mask_keys(json.loads(text)))

    def _durable_completion(self, todo: int) -> str | None:
        for entry in self._authority_entries():
            for receipt in entry.get("receipts") or ():
                if receipt.get("todo_id") == todo_id(todo) and isinstance(get_path(receipt, "result.completion_receipt_id"), str):
                    return str(get_path(receipt, "result.completion_receipt_id"))
        if self._canonical_authority:
            return None
        record = _state_file_todo(_read(self.layout.state_file), todo_id(todo))
        if record.get("status") != "done":
            return None
        if record.get("completion_receipt_id"):
            return record["completion_receipt_id"]
        events = [e for e in _json_lines(_read(self.layout.rollout_log)) if e.get("event_kind") == "todo_complete"]
        done = [e for e in events if e.get("todo_id") == todo_id(todo) and e.get("status") == "done" and isinstance(e.get("event_id"), str)]
        return f"rollout_event:{done[-1]['event_id']}" if done else None

    def _stored_receipt(self, commit_number: int) -> dict[str, Any]:
        """The completion as LoopX stored it: the canonical authority store's committed receipt,
        or, for a release whose Todo authority is still the Goal's state file (before 1.4.0),
        that Todo's record there (its metadata comment, decoded)."""
        record = self._commit(commit_number)
        receipt_id = record.get("receipt_id")
        for entry in self._authority_entries():
            for receipt in entry.get("receipts") or ():
                if get_path(receipt, "result.completion_receipt_id") == receipt_id:
                    return dict(receipt)
        if not self._canonical_authority and isinstance(record.get("todo"), int):
            todo = _state_file_todo(_read(self.layout.state_file), todo_id(record["todo"]))
            if todo.get("status") == "done":
                return {"state_file_todo": todo, "result": {"completed_at": todo.get("completed_at")}}
        raise LookupError(f"no committed authority entry holds completion {receipt_id}")

    def spend_eligibility(self, commit_number: int) -> Mapping[str, Any]:
        """The heartbeat settlement LoopX reads back for the commit's Turn (``settlement_result``
        of the completing command, or of its recovery: its receipts and failure; hooks never feed
        it); ``eligible`` when it is ok with no failure. A Turn's is its journal's own
        (``receipt.commit_eligibility``, :func:`.turn.eligibility`)."""
        record = self._commit(commit_number)
        if record.get("journal"):
            return lxturn.eligibility(self._turn_journal(str(record["journal"])))
        output = record.get("output") or {}
        settlement = output.get("settlement_result") or {}
        return {
            "eligible": settlement.get("ok") is True and settlement.get("failure") is None,
            "ok": settlement.get("ok"),
            "failure": plain_copy(settlement.get("failure")),
            # Each settlement receipt without its source_ref, which names a rollout event id LoopX
            # draws at random per installation (a run without hooks has another one).
            "receipts": [{k: plain_copy(v) for k, v in r.items() if k != "source_ref"} for r in settlement.get("receipts") or ()],
        }

    def sidecar_records(self) -> list[dict[str, Any]]:
        files = self._sidecar_files()
        self._note_order(files)
        order = {d: i for i, d in enumerate(self._order)}
        names = sorted(files, key=lambda d: (order.get(d, len(order)), d))
        return [self._to_rfc(files[d]) for d in names]

    def intent_receipts(self) -> list[dict[str, Any]]:
        return [dict(i) for r in self.sidecar_records() if r.get("status") == "proposed" for i in r.get("intents") or ()]

    def hooks_seen(self) -> list[HookSeen]:
        seen = []
        for line in _read(self.layout.root / "hook-inputs.jsonl").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            hook_id, loopx_input = entry.get("hook_id"), entry.get("input") or {}
            event_id = get_path(loopx_input, "receipt.event_id")
            hook = self._hooks.get(hook_id)
            shown = to_rfc_input(loopx_input, hook["registration"], self._binding(hook_id, loopx_input)) if hook else loopx_input
            seen.append(HookSeen(hook_id, self._events.get(event_id, event_id), shown))
        return seen

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._stop_node()
        finally:
            with contextlib.suppress(OSError):
                self._listener.close()
            if self._socket_dir is not None:
                shutil.rmtree(self._socket_dir, ignore_errors=True)
            if self._own_dir:
                shutil.rmtree(self.layout.root, ignore_errors=True)

    def _stop_node(self) -> None:
        """Stop this installation's Node runtime (the shared warm interpreter stays). The first
        one of the process that served commands retires LoopX's way, which writes its compile
        cache for the later ones; the others are stopped by PID (their folder goes with them)."""
        if self._ran and not SHARED.cache_flushed and self._server_pid is not None:
            with contextlib.suppress(Exception):
                self._run_on("stop_runtime", seconds=30)
                SHARED.cache_flushed = True
        self._note_node_pids()
        stop_pids(sorted(self._node_pids))

    def survivors(self) -> list[int]:
        """PIDs this boundary started (Node runtimes) that still run."""
        pids = list(self._node_pids)
        return [p for p in pids if pid_alive(p)]

    @property
    def node_pids(self) -> tuple[int, ...]:
        return tuple(sorted(self._node_pids))

    # -- commands ----------------------------------------------------------------------------------

    def _loopx(self, argv: list[str], *, crash_in_provider: bool = False, kind: str = COMPLETION) -> dict[str, Any]:
        full = ["--registry", str(self.layout.registry), "--runtime-root", str(self.layout.runtime_root), "--format", "json", *argv]
        started, offset = time.monotonic(), self._inputs_size()
        answer = self._run("run", argv=full, hooks=[self._wire(h) for h in self._hooks.values()], crash=crash_in_provider)
        self.command_seconds.append((" ".join(argv[:2]), time.monotonic() - started))
        self.command_pids.append((" ".join(argv[:2]), answer["pid"]))
        answer["json"] = _json(answer["out"]) if answer["out"].strip().startswith("{") else None
        answer["events"] = self._events_since(offset)
        self._after_command(answer, kind)
        return answer

    def _wire(self, hook: Mapping[str, Any]) -> dict[str, Any]:
        return {"registration": hook["registration"], "edits": hook.get("edits") or {}}

    def _run(self, op: str, *, crash: bool = False, **fields: Any) -> dict[str, Any]:
        if self._closed:
            raise CommandFailed("the boundary is closed")
        self._ran = self._ran or op == "run"
        answer = self._run_on(op, crash=crash, **fields)
        SHARED.check_untouched()
        return answer

    def _run_on(self, op: str, *, crash: bool = False, seconds: float = COMMAND_SECONDS, **fields: Any) -> dict[str, Any]:
        """One op in a child of the shared warm interpreter, with this boundary's environment,
        folder and callback socket; the child's provider calls are answered until it is reaped."""
        n = len(self.command_seconds) + len(self._commits) + int(time.monotonic() * 1000)
        out, err = self.layout.root / f"cmd-{n}.out", self.layout.root / f"cmd-{n}.err"
        request = {
            "op": op,
            "out": str(out),
            "err": str(err),
            "callback": self._socket_path,
            "inputs": str(self.layout.root / "hook-inputs.jsonl"),
            "env": self._environ,
            **fields,
        }
        state: dict[str, Any] = {"crashed": False, "problem": None}
        with SHARED.session(self._base, self._environ) as server:
            self._server_pid = server.pid
            server.send(request)
            forked = server.read_line(30)
            if not forked or not isinstance(forked.get("pid"), int):
                raise CommandFailed("the warm LoopX interpreter did not fork: " + server.tail())
            pid = server.child = forked["pid"]
            done = self._serve(server, pid, crash, state, time.monotonic() + seconds)
            server.child = None
        answer = {
            "exit": done.get("exit"),
            "signal": done.get("signal"),
            "crashed": state["crashed"],
            "out": _read(out),
            "err": _read(err),
            "pid": pid,
        }
        for f in (out, err):
            with contextlib.suppress(OSError):
                f.unlink()
        if state["problem"] is not None:
            raise state["problem"]
        return answer

    def _serve(self, server: WarmServer, pid: int, crash: bool, state: dict[str, Any], deadline: float) -> dict[str, Any]:
        """Answer the child's provider calls until the server reports it reaped."""
        conns: list[socket.socket] = []
        bufs: dict[int, bytes] = {}
        with selectors.DefaultSelector() as sel:
            sel.register(server.fd, selectors.EVENT_READ, "server")
            sel.register(self._listener, selectors.EVENT_READ, "accept")
            try:
                while True:
                    line = server.pending_line()
                    if line is not None and "exit" in line:
                        return line
                    left = deadline - time.monotonic()
                    if left <= 0:
                        _kill(pid)
                        state["problem"] = state["problem"] or CommandFailed("a LoopX command ran past its deadline")
                        deadline = time.monotonic() + 30
                        continue
                    for key, _ in sel.select(min(left, 1.0)):
                        if key.data == "server":
                            if not server.feed():
                                raise CommandFailed("the warm LoopX interpreter ended: " + server.tail())
                        elif key.data == "accept":
                            conn, _ = self._listener.accept()
                            conns.append(conn)
                            bufs[conn.fileno()] = b""
                            sel.register(conn, selectors.EVENT_READ, "conn")
                        else:
                            conn = key.fileobj  # type: ignore[assignment]
                            try:
                                chunk = conn.recv(1 << 20)
                            except OSError:  # the child was killed mid-call
                                chunk = b""
                            if not chunk:
                                sel.unregister(conn)
                                continue
                            bufs[conn.fileno()] += chunk
                            while b"\n" in bufs[conn.fileno()]:
                                raw, bufs[conn.fileno()] = bufs[conn.fileno()].split(b"\n", 1)
                                reply = self._provider_call(json.loads(raw), pid, crash, state)
                                if reply is not None:
                                    with contextlib.suppress(OSError):
                                        conn.sendall((json.dumps(reply, allow_nan=True) + "\n").encode("utf-8"))
            finally:
                for conn in conns:
                    with contextlib.suppress(OSError):
                        conn.close()

    def _provider_call(self, message: Mapping[str, Any], pid: int, crash: bool, state: dict[str, Any]) -> dict[str, Any] | None:
        hook_id = str(message.get("hook_id"))
        loopx_input = message.get("input") or {}
        if crash and not state["crashed"]:
            state["crashed"] = True
            _kill(pid)  # a real SIGKILL while the provider runs: nothing of its result is durable
            return None
        hook = self._hooks.get(hook_id)
        if hook is None or state["problem"] is not None:
            return {"abort": "unknown hook"}
        registration = hook["registration"]
        binding = self._binding(hook_id, loopx_input)
        try:
            value = self._watched(hook, to_rfc_input(loopx_input, registration, binding), pid)
        except LoopxDivergence as divergence:
            state["problem"] = divergence
            return {"abort": "divergence"}
        except BaseException as exc:  # the producer's own failure, raised again in LoopX's process
            return {"raise": type(exc).__name__}
        try:
            translated = to_loopx_result(value, registration, binding, self._carry)
        except StopDispatch as stop:
            state["problem"] = stop.error
            return {"abort": "unsupported"}
        if budget_sides_differ(value, translated, get_path(registration, "budget.max_result_bytes")):
            state["problem"] = lacks("result.bytes")
            return {"abort": "unsupported"}
        return {"result": encode(translated)}

    def _watched(self, hook: Mapping[str, Any], hook_input: dict[str, Any], pid: int) -> Any:
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["value"] = hook["producer"](hook_input)
            except BaseException as exc:
                box["error"] = exc

        registration = hook["registration"]
        limit_ms = get_path(registration, "budget.timeout_ms")
        limit_ms = limit_ms if isinstance(limit_ms, int) else CORE_CEILINGS["timeout_ms"]
        worker = threading.Thread(target=run, name=f"pwh-lxwb-{registration.get('hook_id')}", daemon=True)
        worker.start()
        worker.join(limit_ms / 1000 + WATCH_GRACE_SECONDS)
        if worker.is_alive():
            _kill(pid)
            hook_id = registration.get("hook_id")
            raise LoopxDivergence(
                f"hook {hook_id} given up on at its {limit_ms} ms timeout (producer_timed_out)",
                f"loopx {loopx_version()}'s todo complete was still waiting for hook {hook_id} "
                f"{round(limit_ms + WATCH_GRACE_SECONDS * 1000)} ms after calling it ({row('registration.budget.timeout_ms').note})",
                clause="§10.limits",
            )
        if "error" in box:
            raise box["error"]
        return box.get("value")

    # -- readback ----------------------------------------------------------------------------------

    def _commit_of(self, answer: Mapping[str, Any], kind: str = COMPLETION) -> Commit:
        output = answer.get("json") or {}
        raised = None
        if answer.get("signal") is not None:
            raised = f"signal_{answer['signal']}"
        elif not output:
            match = re.findall(r"^([A-Za-z_][\w.]*)(?::|$)", answer.get("err") or "", re.M)
            raised = (match[-1].rsplit(".", 1)[-1] if match else f"exit_{answer.get('exit')}")[:64]
        receipt_id = self._receipt_of(output, kind)
        turn = lxturn.is_turn(output)
        if turn:
            done = output.get("status") == "committed"
        else:
            done = output.get("completed") if kind == COMPLETION else output.get("appended")
        committed = bool(output.get("ok")) and bool(done) and not output.get("dry_run") and receipt_id is not None
        # A Turn that completed its Todo drains a second, terminal dispatch: that one is the completion's.
        hooks = output.get("terminal_post_writeback_hooks" if turn and kind == COMPLETION else "post_writeback_hooks")
        dispatch = self._dispatch_of(receipt_id, hooks, kind) if isinstance(hooks, Mapping) and committed else None
        return Commit(committed, receipt_id if committed else None, kind, dispatch, raised, _notes(output))

    def _dispatch_of(self, receipt_id: Any, hooks: Mapping[str, Any], kind: str) -> dict[str, Any]:
        """The command's post-writeback answer in RFC terms (a dispatch outcome): one entry per hook
        LoopX answered for, from its sidecar record of this receipt and its failures list."""
        records = {r["hook_id"]: r for r in self.sidecar_records() if r.get("source_receipt_id") == receipt_id}
        failures: dict[str, str] = {}
        for failure in hooks.get("failures") or ():
            failures.setdefault(str(failure.get("hook_id")), str(failure.get("error_code")))
        replayed = set(hooks.get("replayed_hooks") or ())
        out = []
        for hook_id in sorted(set(records) | set(failures)):
            record = records.get(hook_id)
            failed = failures.get(hook_id)
            out.append(
                {
                    "hook_id": hook_id,
                    "dispatch_id": record["dispatch_id"] if record else None,
                    "status": "failed" if failed or record is None else record["status"],
                    "failure_code": to_rfc_code(failed) if failed else (record or {}).get("failure_code"),
                    "intents": list((record or {}).get("intents") or ()),
                    "replayed": hook_id in replayed,
                    "attempts": (record or {}).get("attempts") or 0,
                    "recorded": record is not None,
                    "rejection": None,
                }
            )
        notes = [f"loopx invoked {hooks.get('invoked_count')} of {hooks.get('registered_count')} registered hooks"]
        return {
            "receipt_id": receipt_id,
            "event_kind": kind,
            "admitted": True,
            "code": None,
            "rejection": None,
            "hooks": out,
            "journal_error": "journal_write_failed" if "journal_write_failed" in failures.values() else None,
            "notes": notes,
        }

    def _after_command(self, answer: Mapping[str, Any], kind: str = COMPLETION) -> None:
        """Learn which LoopX source event ids belong to the committed receipt, and note new sidecars.
        The event kind of each is the one LoopX handed its hooks (a Turn drains a ``refresh_state``
        and, when it completed its Todo, a ``todo_complete`` source), else the command's."""
        output = answer.get("json") or {}
        files = self._sidecar_files()
        fresh = self._note_order(files)
        receipt_id = self._receipt_of(output, kind)
        if isinstance(receipt_id, str):
            events: dict[Any, str] = {files[d].get("source_receipt_id"): kind for d in fresh}
            for result in ("post_writeback_hooks", "terminal_post_writeback_hooks"):
                events.update({get_path(i, "source_receipt_id"): kind for i in get_path(output, f"{result}.intents") or ()})
            events.update(answer.get("events") or {})
            self._bind(receipt_id, events)
        self._note_node_pids()

    def _bind(self, receipt_id: str, events: Mapping[Any, str]) -> None:
        for event_id, kind in events.items():
            if isinstance(event_id, str):
                self._events.setdefault(event_id, receipt_id)
                self._kinds.setdefault(event_id, kind)

    def _receipt_of(self, output: Mapping[str, Any], kind: str) -> str | None:
        """The committed receipt's id a command answered: a Turn's from its journal, else :func:`_receipt_id_of`."""
        if lxturn.is_turn(output):
            return self._turn_receipt(lxturn.key_of(output))
        return _receipt_id_of(output, kind, legacy=not self._canonical_authority)

    def _inputs_size(self) -> int:
        with contextlib.suppress(OSError):
            return (self.layout.root / "hook-inputs.jsonl").stat().st_size
        return 0

    def _events_since(self, offset: int) -> dict[str, str]:
        """The source event ids (and their RFC event kinds) LoopX handed any hook since ``offset``
        of the hook-input log: what a command's hooks were called for, even if it was killed."""
        try:
            with open(self.layout.root / "hook-inputs.jsonl", "rb") as f:
                f.seek(offset)
                lines = f.read().decode("utf-8", errors="replace").splitlines()
        except OSError:
            return {}
        events: dict[str, str] = {}
        for line in lines:
            receipt = get_path(_json(line), "input.receipt")
            if isinstance(receipt, Mapping) and isinstance(receipt.get("event_id"), str):
                events[receipt["event_id"]] = to_rfc_event_kind(receipt.get("event_kind"))
        return events

    def _note_order(self, files: Mapping[str, Mapping[str, Any]]) -> list[str]:
        fresh = [
            d for d in sorted(files, key=lambda d: (str(files[d].get("recorded_at")), str(files[d].get("hook_id")))) if d not in self._order
        ]
        self._order.extend(fresh)
        return fresh

    def _sidecar_files(self) -> dict[str, dict[str, Any]]:
        out = {}
        for path in sorted(self.layout.sidecar_dir.glob("pwh_*.json")):
            record = _json(_read(path))
            if record:
                out[path.stem] = record
        return out

    def _to_rfc(self, receipt: Mapping[str, Any]) -> dict[str, Any]:
        hook_id = receipt.get("hook_id")
        event_id = receipt.get("source_receipt_id")
        kind = to_rfc_event_kind(self._event_kind_of(receipt))
        key = f"{hook_id}|{get_path(receipt, 'intent.idempotency_key')}"
        record = to_rfc_record(receipt, {"receipt_id": event_id, "event_kind": kind}, self._carried.get(key, {}))
        record["source_receipt_id"] = self._events.get(str(event_id), event_id)
        return record

    def _event_kind_of(self, receipt: Mapping[str, Any]) -> str:
        return to_loopx_event_kind(self._kinds.get(str(receipt.get("source_receipt_id")), COMPLETION))

    def _binding(self, hook_id: Any, loopx_input: Mapping[str, Any]) -> Binding:
        event_id = get_path(loopx_input, "receipt.event_id")
        kind = to_rfc_event_kind(get_path(loopx_input, "receipt.event_kind"))
        dispatch = reference_dispatch_id_for({"receipt_id": event_id, "event_kind": kind}, hook_id)
        return Binding(dispatch or event_id, event_id)

    def _carry(self, hook_id: str, intent: Mapping[str, Any]) -> None:
        fields = {k: plain_copy(intent[k]) for k in ENVELOPE if row(f"intent.{k}").loopx == CARRIED}
        self._carried[f"{hook_id}|{intent.get('intent_id')}"] = fields

    def _authority_entries(self) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = []
        for path in sorted(self.layout.authority_dir.glob("authority-store-*.json")):
            store = _json(_read(path))
            entries.extend(e for e in store.get("committed") or () if isinstance(e, dict))
        return entries

    def _commit(self, commit_number: int) -> dict[str, Any]:
        committed = [c for c in self._commits if c.get("receipt_id")]
        if not 1 <= commit_number <= len(committed):
            raise LookupError(f"no committed writeback number {commit_number}")
        return committed[commit_number - 1]

    def _evidence(self, todo: int) -> str:
        extra = "; ".join(self._planted.values())
        return f"pwh fixture evidence for task {todo}" + (f" ({extra})" if extra else "")

    def _planted_text(self, n: int) -> str:
        return f"Fixture task {n}: " + "; ".join(self._planted.values())

    def _note_node_pids(self) -> None:
        self._node_pids.update(runtime_pids(self.layout.tmp))


def _lasting_temp_dir() -> str:
    """The temp dir, outside any LoopX runtime's private one: a dispatcher runtime in this process
    points the temp dir at a folder it removes when it goes idle or closes, which would take the
    boundary's Goal, journals and command files with it."""
    base = Path(tempfile.gettempdir())
    while base.name.startswith("pwh-loopx-") and base.parent != base:
        base = base.parent
    return str(base)


_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}[:-]?\d{2})?")
_EVENT_REF = re.compile(r"(rollout_event:|\"event_id\": \")[0-9a-f]{12,32}")


def _receipt_id_of(output: Mapping[str, Any], kind: str, *, legacy: bool = False) -> str | None:
    """The committed receipt's id: a completion's ``completion_receipt_id`` (tcw_...; ``legacy``,
    a release before it, its completion's rollout event, ``rollout_event:<id>``, which a replay
    answers again), a refresh's durable-writeback settlement receipt reference (``rollout_event:<id>``)."""
    if kind == COMPLETION:
        value = output.get("completion_receipt_id")
        if isinstance(value, str):
            return value
        event = output.get("rollout_event")
        if legacy and isinstance(event, Mapping) and event.get("event_kind") == "todo_complete" and isinstance(event.get("event_id"), str):
            return f"rollout_event:{event['event_id']}"
        return None
    for receipt in get_path(output, "settlement_result.receipts") or ():
        if isinstance(receipt, Mapping) and receipt.get("step_kind") == "durable_writeback" and isinstance(receipt.get("source_ref"), str):
            return str(receipt["source_ref"])
    return None


# Run-record fields that differ between two installations by construction: digests of the
# installation's paths and state file (which holds wall-clock times), and the authority store's
# random identity and revision.
_PER_INSTALLATION = frozenset(
    {
        "route_id",
        "source_registry_sha256_16",
        "source_runtime_sha256_16",
        "target_runtime_sha256_16",
        "sha256_16",
        "provider_revision",
        "store_identity",
    }
)


def _notes(output: Mapping[str, Any]) -> tuple[str, ...]:
    """What a command said of its primary outcome, as tokens only (LoopX's texts may name paths)."""
    notes = []
    turn = ("status", "result_kind", "validation_stage", "replayed") if lxturn.is_turn(output) else ()
    for key in ("provider_status", *turn):
        value = output.get(key)
        if isinstance(value, (str, bool)) and re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", str(value)):
            notes.append(f"{key}={value}")
    return tuple(notes)


# A Turn plan's digests of the Goal's state as this installation holds it (its state file names
# wall-clock times; its authority store has its own revision).
_PER_TURN = frozenset({"envelope_hash", "source_hash", "source_decision_hash"})


def _mask_keys(value: Any, keys: frozenset[str] = _PER_INSTALLATION) -> Any:
    if isinstance(value, dict):
        return {k: "<per installation>" if k in keys and isinstance(v, str) else _mask_keys(v, keys) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_keys(v, keys) for v in value]
    return value


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _masked(receipt: Mapping[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(receipt))
    result = out.get("result")
    if isinstance(result, dict) and "completed_at" in result:
        result["completed_at"] = "<wall clock>"
    todo = out.get("state_file_todo")
    if isinstance(todo, dict):
        for field in ("completed_at", "updated_at"):
            if field in todo:
                todo[field] = "<wall clock>"
    return out


_TODO_METADATA = re.compile(r"<!--\s*loopx:todo\s+(?P<fields>[^>]*?)\s*-->")


def _state_file_todo(text: str, wanted: str) -> dict[str, str]:
    """The metadata comment of Todo ``wanted`` in a Goal state file, as its fields (values
    percent-decoded, as LoopX writes them); empty when the Todo is not there."""
    from urllib.parse import unquote

    for match in _TODO_METADATA.finditer(text):
        fields = dict(part.split("=", 1) for part in match["fields"].split() if "=" in part)
        if fields.get("todo_id") == wanted:
            return {k: unquote(v) for k, v in fields.items()}
    return {}


def _json_lines(text: str) -> list[dict[str, Any]]:
    return [value for value in (_json(line) for line in text.splitlines()) if value]


def _kill(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8", errors="replace")
    except OSError:
        return ""


def _json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
