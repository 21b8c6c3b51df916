"""``--sut 'stdio:COMMAND'``: the harness's side of the stdio seam protocol (:mod:`.protocol`).

The command is split like a shell would (no shell runs it) and started in a session of its own,
its stdin and stdout the protocol's channel and its stderr discarded (what an implementation says
there could carry anything). One such process serves every :class:`StdioSUT` this process opens
with the same command (from the same working directory and environment, as a process started
for it would have had): the handshake is sent once, and each instance is an ``open`` on it, so
the implementation's start-up is paid once per harness process, not once per scenario. Each
instance is the implementation's own (its own state, its own ``workdir``); ``close`` ends that
instance only. A process that ends, or breaks the protocol's framing, fails every instance open
on it with :class:`ProtocolError` and is stopped; the next instance starts a fresh one. The
processes are stopped (stdin closed, then their process group killed) by :func:`shutdown`, which
runs at exit.

The writeback seam crosses too (:meth:`StdioSUT.writeback_boundary`, a :class:`StdioWriteback`
proxy answering :class:`~pwh._suts.writeback_seam.WritebackBoundary` by ``writeback_*`` requests
on its instance), when the handshake lists ``writeback_open``; otherwise it is ``Unsupported``. So
does the turn seam (:meth:`StdioSUT.turn_contracts`, a :class:`StdioTurn` proxy), when the handshake
lists ``turn_open``; otherwise there is none, and the seed-003 rows run on pwh's testbed.

Providers stay here: the implementation calls one by message, and its answer goes back in the
wire form (:mod:`pwh._suts.wire`), so whatever a provider answers is judged as it was given. A
call runs on a thread of its own, so a hung provider holds nothing but itself; the
implementation's own limits decide when it stops waiting.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from typing import IO, Any

from pwh._core.codes import Rejection
from pwh._core.crash import SimulatedCrash
from pwh._core.freeze import freeze
from pwh._core.outcome import DispatchOutcome, HookOutcome
from pwh._core.profile import Profile
from pwh._core.registry import Producer
from pwh._suts.errors import SUTLoadError, Unsupported
from pwh._suts.stdio.protocol import LOOKUP_REQUESTS, PROTOCOL, ProtocolError, check, parse_line
from pwh._suts.turn_seam import HostVerdict, ProviderAnswer, RequestView
from pwh._suts.wire import decode, encode
from pwh._suts.writeback_seam import Commit, HookSeen, PrimaryFailure

__all__ = ["PREFIX", "StdioSUT", "StdioTurn", "StdioWriteback", "shutdown"]

PREFIX = "stdio:"
STOP_SECONDS = 5.0


class _Child:
    """One implementation process, its channel, and its handshake; shared by the instances
    opened on it. One request is open on it at a time (:attr:`busy`, held for a whole exchange)."""

    def __init__(self, argv: list[str], key: tuple[Any, ...]) -> None:
        self.key = key
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True
            )
        except OSError as exc:
            raise SUTLoadError(f"stdio: the command could not start ({type(exc).__name__})") from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.pid = self.proc.pid
        self._in: IO[bytes] = self.proc.stdin
        self._out: IO[bytes] = self.proc.stdout
        self._write_lock = threading.Lock()
        self.busy = threading.Lock()
        self._stop_lock = threading.Lock()
        self._next = 0
        self.ended: str | None = None  # why no request may be sent any more
        self.instances = 0  # open on it
        self.providers = 0  # installed on it, by any instance
        self.hello: dict[str, Any] = {}
        with self.busy:
            try:
                self.hello = check(self.exchange("start", {}, {"protocol": PROTOCOL}), "handshake")
            except (ProtocolError, Unsupported, SimulatedCrash) as exc:
                self.stop()
                raise SUTLoadError(f"stdio: the implementation did not start the protocol: {exc}") from None
            except BaseException:  # a Ctrl-C mid-handshake, say: no process is left behind either
                self.stop(grace=0.0)
                raise

    def exchange(self, op: str, producers: Mapping[str, Producer], fields: dict[str, Any]) -> Any:
        """Send one request and read until its answer, calling back the providers it asks for;
        the caller holds :attr:`busy`. Anything that leaves the channel out of step (a line that
        is not the protocol, an answer to another request, the process ending) ends the process."""
        if self.ended is not None:
            raise ProtocolError(self.ended)
        self._next += 1
        ident = self._next
        try:
            self._send({"id": ident, "op": op, **fields})
            while True:
                message = self._receive()
                if "call" in message:
                    self._answer_call(check(message, "call"), producers)
                    continue
                answer = check(message, "answer")
                if answer["id"] != ident:
                    raise ProtocolError(f"an answer to request {answer['id']} while {ident} was open")
                break
        except ProtocolError as exc:
            self._end(str(exc))
            raise
        if "unsupported" in answer:
            raise Unsupported(str(answer["unsupported"]))
        if "crashed" in answer:
            raise SimulatedCrash(str(answer["crashed"]))
        if "lookup" in answer:
            if op not in LOOKUP_REQUESTS:
                raise ProtocolError(f"a lookup answer to {op}, which reads no commit number")
            raise LookupError(str(answer["lookup"])[:200])
        if "error" in answer:
            raise ProtocolError(f"{op} failed in the implementation ({answer['error']['type'][:80]})")
        if "ok" not in answer:
            raise ProtocolError(f"an answer to {op} with neither ok, unsupported, crashed nor error")
        return answer["ok"]

    def _answer_call(self, call: dict[str, Any], producers: Mapping[str, Producer]) -> None:
        producer = producers.get(call["hook"])
        if producer is None:
            raise ProtocolError(f"a call of provider {call['hook'][:40]!r}, which no install on this instance named")
        hook_input = freeze(decode(call["input"]))
        threading.Thread(target=self._run_provider, args=(call["call"], producer, hook_input), daemon=True).start()

    def _run_provider(self, number: int, producer: Producer, hook_input: Any) -> None:
        try:
            value = producer(hook_input)
        except Exception:
            reply: dict[str, Any] = {"reply": number, "raised": "exception"}
        except BaseException:
            reply = {"reply": number, "raised": "base_exception"}
        else:
            reply = {"reply": number, "value": encode(value)}
        with contextlib.suppress(OSError, ValueError, ProtocolError):
            self._send(reply)

    def _send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, allow_nan=False, separators=(",", ":")).encode("utf-8") + b"\n"
        with self._write_lock:
            try:
                self._in.write(line)
                self._in.flush()
            except (OSError, ValueError):
                raise ProtocolError("the implementation's process stopped reading") from None

    def _receive(self) -> dict[str, Any]:
        try:
            line = self._out.readline()
        except (OSError, ValueError):
            line = b""
        if not line:
            raise ProtocolError("the implementation's process ended without answering")
        return parse_line(line)

    def _end(self, why: str) -> None:
        """The channel is out of step or gone: no request goes to this process again (every
        instance on it fails with ``why``), and it is killed now."""
        if self.ended is None:
            self.ended = f"the implementation's process is gone ({why[:200]})"
        with _POOL_LOCK:
            if self in _POOL:
                _POOL.remove(self)
        self.stop(grace=0.0)

    def stop(self, grace: float = STOP_SECONDS) -> None:
        """End the process: stdin closed (the implementation closes its instances and exits), then,
        after ``grace`` seconds at most, its whole process group killed, by its id."""
        with self._stop_lock:
            if self.ended is None:
                self.ended = "the implementation's process was stopped"
            if self.proc.returncode is not None:
                return
            with self._write_lock, contextlib.suppress(OSError, ValueError):
                self._in.close()
            deadline = time.monotonic() + grace
            while not _exited(self.proc) and time.monotonic() < deadline:
                time.sleep(0.01)
            # The leader is not reaped yet (a zombie at most), so its id still names its group alone.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            self.proc.wait()
            with contextlib.suppress(OSError, ValueError):
                self._out.close()


def _exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the process has ended, without reaping it where the platform can tell so."""
    if not hasattr(os, "waitid"):
        return proc.poll() is not None
    try:
        found = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return found is not None


# The live processes, newest last; only this process's own (a fork forgets them: see _forget).
_POOL: list[_Child] = []
_POOL_LOCK = threading.Lock()
_ORPHANS: list[_Child] = []  # a forked copy's inherited ones, held so they are never finalized
_PER_TEST_ENV = frozenset({"PYTEST_CURRENT_TEST"})  # pytest's own, changed for every test: no new process for it


def _lease(argv: list[str]) -> _Child:
    """A live process for ``argv`` whose :attr:`_Child.busy` the caller now holds: one already
    running for the same command, working directory and environment that has no request open,
    else a new one. Idle processes for anything else are stopped (nothing will open on them)."""
    key = (tuple(argv), os.getcwd(), tuple(sorted((k, v) for k, v in os.environ.items() if k not in _PER_TEST_ENV)))
    idle: list[_Child] = []
    found = None
    with _POOL_LOCK:
        for child in list(_POOL):
            if child.ended is not None:
                _POOL.remove(child)
            elif child.key != key:
                if child.instances == 0 and child.busy.acquire(blocking=False):
                    _POOL.remove(child)
                    idle.append(child)
            elif found is None and child.busy.acquire(blocking=False):
                found = child
    for child in idle:
        child.stop()
        child.busy.release()
    if found is not None:
        return found
    child = _Child(argv, key)
    child.busy.acquire()
    with _POOL_LOCK:
        _POOL.append(child)
    return child


def shutdown() -> None:
    """Stop every implementation process this process started (at exit, and for tests)."""
    with _POOL_LOCK:
        children, _POOL[:] = list(_POOL), []
    for child in children:
        child.stop()


def _forget() -> None:
    """In a forked copy of this process: its copies of the channels are closed (so an
    implementation still sees its stdin end when pwh does) and the processes are not its own."""
    for child in _POOL:
        for stream in (child._in, child._out):
            with contextlib.suppress(OSError, ValueError):
                os.close(stream.fileno())
        _ORPHANS.append(child)
    _POOL.clear()


atexit.register(shutdown)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)


class StdioSUT:
    """One instance of an implementation behind the stdio protocol, as the seam's
    :class:`~pwh._suts.seam.SUT`. ``workdir`` (the one option) is where its durable state lives."""

    def __init__(self, command: str, **options: Any) -> None:
        argv = shlex.split(command)
        if not argv:
            raise SUTLoadError("stdio: needs a command, e.g. stdio:'node my_adapter.js'")
        workdir = options.get("workdir")
        self._producers: dict[str, Producer] = {}
        self._closed = False
        child = _lease(argv)
        try:
            opened = check(child.exchange("open", {}, {"workdir": str(workdir) if workdir else None}), "opened")
            with _POOL_LOCK:
                child.instances += 1
        except (ProtocolError, Unsupported, SimulatedCrash) as exc:
            raise SUTLoadError(f"stdio: the implementation did not open an instance: {exc}") from None
        finally:
            child.busy.release()
        self._child = child
        self._instance = opened["instance"]
        hello = child.hello
        self.name = str(hello["name"])
        self.version = str(hello["version"])
        self.language = str(hello["language"])
        self.operations = tuple(hello["operations"])
        self._crash_points = tuple(hello["crash_points"])
        self.faults = tuple(hello["faults"])

    @property
    def pid(self) -> int:
        """The implementation process this instance is served by."""
        return self._child.pid

    # -- the seam ----------------------------------------------------------------------------------

    def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> list[Rejection]:
        return _rejections(self._request("register_intent_kind", kind=kind, payload_schema=encode(payload_schema)))

    def install(self, registration: Mapping[str, Any], producer: Producer) -> list[Rejection]:
        return _rejections(self._request("install", registration=encode(registration), provider=self._token(producer)))

    def _token(self, producer: Producer) -> str | None:
        """The name a provider crosses under (None for one that is not callable): unique on the
        process, so a call names its instance's own, whichever seam installed it."""
        if not callable(producer):
            return None
        self._child.providers += 1
        token = f"p{self._child.providers}"
        self._producers[token] = producer
        return token

    def set_profile(self, profile: Profile) -> None:
        raw = {name: getattr(profile, name) for name in profile.__dataclass_fields__}
        self._nothing(self._request("set_profile", profile=encode(raw)))

    def dispatch(self, source: Mapping[str, Any], *, primary: Any = None) -> DispatchOutcome:
        return _outcome(check(self._request("dispatch", source=encode(source)), "dispatch_outcome"))

    def redeliver(self, source: Mapping[str, Any]) -> DispatchOutcome:
        return _outcome(check(self._request("redeliver", source=encode(source)), "dispatch_outcome"))

    @property
    def crash_points(self) -> tuple[str, ...]:
        return self._crash_points

    def arm_crash(self, point: str) -> None:
        self._nothing(self._request("arm_crash", point=point))

    def restart(self) -> None:
        self._nothing(self._request("restart"))

    def journal_records(self) -> list[dict[str, Any]]:
        return [decode(r) for r in check(self._request("journal_records"), "journal_records")]

    def inject_fault(self, fault: str) -> None:
        self._nothing(self._request("inject_fault", fault=fault))

    def writeback_boundary(self) -> StdioWriteback:
        """A new writeback boundary of this instance (the implementation's ``writeback_open``);
        ``Unsupported`` when its handshake offers none, or it answers so."""
        if "writeback_open" not in self.operations:
            raise Unsupported("the implementation offers no writeback seam over the stdio protocol (no writeback_open in its handshake)")
        opened = check(self._request("writeback_open"), "writeback_opened")
        return StdioWriteback(self, opened["writeback"], tuple(opened["operations"]))

    def turn_contracts(self) -> StdioTurn | None:
        """This instance's turn seam (the implementation's ``turn_open``), or None when it offers
        none: its seed-003 rows then run on pwh's testbed, as for an in-process adapter."""
        if "turn_open" not in self.operations:
            return None
        opened = check(self._request("turn_open"), "turn_opened")
        if opened is None:
            return None
        return StdioTurn(self, opened["turn"], str(opened["name"]), frozenset(opened["operations"]))

    def close(self) -> None:
        """Close this instance (the process serves on); nothing to do when the process is gone."""
        if self._closed:
            return
        try:
            if self._child.ended is None:
                self._nothing(self._request("close"))
        finally:
            self._closed = True
            with _POOL_LOCK:
                self._child.instances -= 1

    # -- the channel -------------------------------------------------------------------------------

    def _request(self, op: str, **fields: Any) -> Any:
        if self._closed:
            raise ProtocolError("a request to an instance already closed")
        with self._child.busy:
            return self._child.exchange(op, self._producers, {"instance": self._instance, **fields})

    @staticmethod
    def _nothing(value: Any) -> None:
        check(value, "nothing")


class StdioWriteback:
    """One writeback boundary of a :class:`StdioSUT` instance, as
    :class:`~pwh._suts.writeback_seam.WritebackBoundary`: each method a ``writeback_*`` request
    naming the boundary, each answer checked against the protocol's schema and turned back into
    the seam's types. Providers installed through it stay here, as the instance's do."""

    def __init__(self, sut: StdioSUT, number: int, operations: tuple[str, ...]) -> None:
        self._sut = sut
        self._number = number
        self.operations = operations
        self._closed = False

    def _call(self, method: str, **fields: Any) -> Any:
        if self._closed:
            raise ProtocolError("a request to a writeback boundary already closed")
        return self._sut._request(f"writeback_{method}", writeback=self._number, **fields)

    def prepare(self, *, todos: int, phase_enabled: bool, report_capability: bool) -> None:
        check(self._call("prepare", todos=todos, phase_enabled=phase_enabled, report_capability=report_capability), "nothing")

    def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> list[Any]:
        return _rejections(self._call("register_intent_kind", kind=kind, payload_schema=encode(payload_schema)))

    def install(self, registration: Mapping[str, Any], producer: Producer) -> list[Any]:
        return _rejections(self._call("install", registration=encode(registration), provider=self._sut._token(producer)))

    def commit_completion(self, todo: int, *, fail: PrimaryFailure | None = None, crash: str | None = None) -> Commit:
        return _commit(self._call("commit_completion", todo=todo, fail=fail, crash=crash))

    def commit_replan(self, *, fail: PrimaryFailure | None = None, crash: str | None = None) -> Commit:
        return _commit(self._call("commit_replan", fail=fail, crash=crash))

    def replay(self, commit_number: int) -> Commit:
        return _commit(self._call("replay", commit_number=commit_number))

    def recover(self) -> None:
        check(self._call("recover"), "nothing")

    def primary_receipt(self, commit_number: int) -> bytes:
        found = decode(check(self._call("primary_receipt", commit_number=commit_number), "primary_receipt"))
        if not isinstance(found, bytes):
            raise ProtocolError("primary_receipt at $.$bytes: not base64")
        return found

    def spend_eligibility(self, commit_number: int) -> Mapping[str, Any]:
        found: Mapping[str, Any] = decode(check(self._call("spend_eligibility", commit_number=commit_number), "spend_eligibility"))
        return found

    def sidecar_records(self) -> list[dict[str, Any]]:
        return [decode(r) for r in check(self._call("sidecar_records"), "records")]

    def intent_receipts(self) -> list[dict[str, Any]]:
        return [decode(r) for r in check(self._call("intent_receipts"), "records")]

    def hooks_seen(self) -> list[HookSeen]:
        seen = check(self._call("hooks_seen"), "hooks_seen")
        return [HookSeen(h["hook_id"], h["receipt_id"], decode(h["hook_input"])) for h in seen]

    def plant(self, values: Mapping[str, str]) -> None:
        check(self._call("plant", values=dict(values)), "nothing")

    def close(self) -> None:
        """End the boundary; nothing to do once its instance is closed or its process gone (the
        implementation ends an instance's boundaries with it)."""
        if self._closed:
            return
        try:
            if not self._sut._closed and self._sut._child.ended is None:
                check(self._call("close"), "nothing")
        finally:
            self._closed = True


class StdioTurn:
    """The turn seam of a :class:`StdioSUT` instance, as :class:`~pwh._suts.turn_seam.TurnContracts`:
    each method a ``turn_*`` request naming it, each answer schema-checked and turned back into the
    seam's types."""

    def __init__(self, sut: StdioSUT, number: int, name: str, operations: frozenset[str]) -> None:
        self._sut = sut
        self._number = number
        self.name = name
        self.operations = operations

    def _call(self, method: str, **fields: Any) -> Any:
        return self._sut._request(f"turn_{method}", turn=self._number, **fields)

    def register_provider(self, provider_id: str, flags: Mapping[str, bool]) -> ProviderAnswer:
        a = check(self._call("register_provider", provider_id=provider_id, flags=dict(flags)), "provider_answer")
        return ProviderAnswer(a["registered"], stage=a.get("stage"), path=a.get("path"))

    def build_host_request(self, plan: Mapping[str, Any]) -> RequestView:
        v = check(self._call("build_host_request", plan=encode(plan)), "request_view")
        return RequestView(tuple(v["allowed_phases"]), frozenset(v["carries"]), tuple(v["key_paths"]))

    def accept_host_output(self, plan: Mapping[str, Any], raw: bytes) -> HostVerdict:
        v = check(self._call("accept_host_output", plan=encode(plan), raw=encode(bytes(raw))), "host_verdict")
        return HostVerdict(
            v["accepted"], code=v.get("code"), path=v.get("path"), event_kind=v.get("event_kind"), evidence=tuple(v.get("evidence") or ())
        )


def _commit(value: Any) -> Commit:
    c = check(value, "commit")
    dispatch = c.get("dispatch")
    return Commit(
        c["committed"],
        c["receipt_id"],
        c["event_kind"],
        dispatch=decode(dispatch) if dispatch is not None else None,
        raised=c.get("raised"),
        notes=tuple(c.get("notes") or ()),
    )


def _rejections(value: Any) -> list[Rejection]:
    return [Rejection(r["code"], r["path"], r["reason"]) for r in check(value, "rejections")]


def _rejection(value: Any) -> Rejection | None:
    return Rejection(value["code"], value["path"], value["reason"]) if value else None


def _outcome(value: dict[str, Any]) -> DispatchOutcome:
    hooks = tuple(
        HookOutcome(
            h["hook_id"],
            h["dispatch_id"],
            h["status"],
            h.get("failure_code"),
            tuple(decode(i) for i in h.get("intents") or ()),
            bool(h.get("replayed", False)),
            int(h.get("attempts", 0)),
            bool(h.get("recorded", False)),
            _rejection(h.get("rejection")),
        )
        for h in value.get("hooks") or ()
    )
    return DispatchOutcome(
        value["receipt_id"],
        value["event_kind"],
        value["admitted"],
        value.get("code"),
        _rejection(value.get("rejection")),
        hooks,
        value.get("journal_error"),
        tuple(value.get("notes") or ()),
    )
