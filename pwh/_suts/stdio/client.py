"""``--sut 'stdio:COMMAND'``: the harness's side of the stdio seam protocol (:mod:`.protocol`).

The command is split like a shell would (no shell runs it) and started in a session of its own,
its stdin and stdout the protocol's channel and its stderr discarded (what an implementation says
there could carry anything). Providers stay here: the implementation calls one by message, and
its answer goes back in the wire form (:mod:`pwh._suts.wire`), so whatever a provider answers is
judged as it was given. A call runs on a thread of its own, so a hung provider holds nothing but
itself; the implementation's own limits decide when it stops waiting.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import threading
from collections.abc import Mapping
from typing import IO, Any

from pwh._core.codes import Rejection
from pwh._core.crash import SimulatedCrash
from pwh._core.freeze import freeze
from pwh._core.outcome import DispatchOutcome, HookOutcome
from pwh._core.profile import Profile
from pwh._core.registry import Producer
from pwh._suts.errors import SUTLoadError, Unsupported
from pwh._suts.stdio.protocol import PROTOCOL, ProtocolError, check, parse_line
from pwh._suts.wire import decode, encode

__all__ = ["PREFIX", "StdioSUT"]

PREFIX = "stdio:"
START_SECONDS = 60.0


class StdioSUT:
    """An implementation behind the stdio protocol, as the seam's :class:`~pwh._suts.seam.SUT`."""

    def __init__(self, command: str, **options: Any) -> None:
        argv = shlex.split(command)
        if not argv:
            raise SUTLoadError("stdio: needs a command, e.g. stdio:'node my_adapter.js'")
        workdir = options.get("workdir")
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                env={**os.environ, **({"PWH_SEAM_WORKDIR": str(workdir)} if workdir else {})},
            )
        except OSError as exc:
            raise SUTLoadError(f"stdio: the command could not start ({type(exc).__name__})") from None
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in: IO[bytes] = self._proc.stdin
        self._out: IO[bytes] = self._proc.stdout
        self._write_lock = threading.Lock()
        self._next = 0
        self._producers: dict[str, Producer] = {}
        self._closed = False
        try:
            hello = check(self._request("start", protocol=PROTOCOL), "handshake")
        except (ProtocolError, Unsupported) as exc:
            self._stop()
            raise SUTLoadError(f"stdio: the implementation did not start the protocol: {exc}") from None
        self.name = str(hello["name"])
        self.version = str(hello["version"])
        self.language = str(hello["language"])
        self.operations = tuple(hello["operations"])
        self._crash_points = tuple(hello["crash_points"])
        self.faults = tuple(hello["faults"])

    # -- the seam ----------------------------------------------------------------------------------

    def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> list[Rejection]:
        return _rejections(self._request("register_intent_kind", kind=kind, payload_schema=encode(payload_schema)))

    def install(self, registration: Mapping[str, Any], producer: Producer) -> list[Rejection]:
        token = None
        if callable(producer):
            token = f"p{len(self._producers) + 1}"
            self._producers[token] = producer
        return _rejections(self._request("install", registration=encode(registration), provider=token))

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

    def close(self) -> None:
        if self._closed:
            return
        try:
            self._nothing(self._request("close"))
        finally:
            self._stop()

    # -- the channel -------------------------------------------------------------------------------

    def _request(self, op: str, **fields: Any) -> Any:
        if self._closed:
            raise ProtocolError("the implementation's process has ended")
        self._next += 1
        ident = self._next
        self._send({"id": ident, "op": op, **fields})
        while True:
            message = self._receive()
            if "call" in message:
                self._answer_call(check(message, "call"))
                continue
            answer = check(message, "answer")
            if answer["id"] != ident:
                raise ProtocolError(f"an answer to request {answer['id']} while {ident} was open")
            if "unsupported" in answer:
                raise Unsupported(str(answer["unsupported"]))
            if "crashed" in answer:
                raise SimulatedCrash(str(answer["crashed"]))
            if "error" in answer:
                raise ProtocolError(f"{op} failed in the implementation ({answer['error']['type'][:80]})")
            if "ok" not in answer:
                raise ProtocolError(f"an answer to {op} with neither ok, unsupported, crashed nor error")
            return answer["ok"]

    def _answer_call(self, call: dict[str, Any]) -> None:
        producer = self._producers.get(call["hook"])
        if producer is None:
            raise ProtocolError(f"a call of provider {call['hook'][:40]!r}, which no install named")
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
        line = self._out.readline()
        if not line:
            self._closed = True
            raise ProtocolError("the implementation's process ended without answering")
        return parse_line(line)

    @staticmethod
    def _nothing(value: Any) -> None:
        check(value, "nothing")

    def _stop(self) -> None:
        self._closed = True
        for stream in (self._in, self._out):
            with contextlib.suppress(OSError, ValueError):
                stream.close()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()


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
