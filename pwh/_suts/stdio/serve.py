"""An in-process adapter served over the stdio seam protocol: ``python -m pwh._suts.stdio.serve
SUT`` (a built-in name or ``module:factory``), for ``--sut 'stdio:python -m pwh._suts.stdio.serve
reference'``. It is the protocol's own conformance test: served this way, the reference must earn
the verdict it earns in-process.

Each ``open`` makes a new adapter (``load_sut(SUT)``, with ``workdir=`` when the request names
one), so the instances this process serves share nothing but the process; ``close`` closes one,
and when stdin ends every one still open is closed and the process exits.

The writeback seam: ``writeback_open`` answers with the served adapter's own boundary
(``writeback_boundary_of(sut)``, pwh/_suts/writeback_seam.py). pwh's reference offers none of its
own: pwh's world wires pwh's fake orchestrator to it (fakes/_writeback.py), and so does this
process, inside itself, as the world does in-process: the first boundary opened on an instance
drives that instance's dispatcher, any later one (the world's no-hooks baseline) a dispatcher with
no hooks. A crash there is the orchestrator's simulated one, so the process serves on. The turn
seam likewise: ``turn_open`` answers with the adapter's ``turn_contracts_of(sut)`` (null for none).

The protocol owns this process's stdout (whatever else writes there goes to stderr). Providers
live in the harness: each installed hook's producer here is a proxy that sends a ``call`` and
waits for its ``reply``, so the implementation's own runner (the thread runner: ``PWH_RUNNER``
is set here) enforces its limits as it would on a provider of its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import sys
import threading
from collections.abc import Mapping
from typing import IO, Any

from pwh._suts.stdio.protocol import LOOKUP_REQUESTS, OPERATIONS, PROTOCOL, TURN_REQUESTS, WRITEBACK_REQUESTS, parse_line
from pwh._suts.wire import decode, encode

__all__ = ["main"]

CALL_WAIT_SECONDS = 3600.0


class ProviderBaseException(BaseException):
    """What a proxy raises when the harness's provider raised a ``BaseException``."""


class _Channel:
    def __init__(self, out: IO[bytes]) -> None:
        self._out = out
        self._lock = threading.Lock()
        self._calls: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self._next = 0
        self.gone = False
        self.requests: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, allow_nan=False, separators=(",", ":")).encode("utf-8") + b"\n"
        with self._lock:
            self._out.write(line)
            self._out.flush()

    def read(self, stream: IO[bytes]) -> None:
        """The reader thread: requests queue for the main thread, replies wake their proxy."""
        for line in stream:
            try:
                message = parse_line(line)
            except Exception:
                continue
            if "reply" in message:
                waiting = self._calls.pop(message["reply"], None) if isinstance(message["reply"], int) else None
                if waiting is not None:
                    waiting[1].append(message)
                    waiting[0].set()
            else:
                self.requests.put(message)
        # The harness is gone: a provider call still waiting will never be answered.
        self.gone = True
        for done, _ in list(self._calls.values()):
            done.set()
        self.requests.put(None)

    def call(self, token: str, hook_input: Any) -> Any:
        with self._lock:
            self._next += 1
            number = self._next
        done: threading.Event = threading.Event()
        box: list[dict[str, Any]] = []
        self._calls[number] = (done, box)
        if self.gone:
            raise ConnectionError("the harness is gone")
        self.send({"call": number, "hook": token, "input": encode(hook_input)})
        if not done.wait(CALL_WAIT_SECONDS) or not box:
            raise TimeoutError("the harness never answered the provider call")
        reply = box[0]
        if reply.get("raised") == "base_exception":
            raise ProviderBaseException("the provider raised a BaseException")
        if "raised" in reply:
            raise RuntimeError("the provider raised")
        return decode(reply.get("value"))


def _proxy(channel: _Channel, token: str) -> Any:
    def provider(hook_input: Mapping[str, Any]) -> Any:
        return channel.call(token, hook_input)

    return provider


def _outcome(outcome: Any) -> dict[str, Any]:
    value = outcome.to_json()
    for hook in value["hooks"]:
        hook["intents"] = [encode(i) for i in hook["intents"]]
    return value


def _rejections(found: Any) -> list[dict[str, Any]]:
    return [r.to_json() for r in found or ()]


def _is_reference(sut: Any) -> bool:
    """pwh's reference dispatcher (or a mutant of it), by type as pwh's world decides it
    (fakes/_world.py ``is_reference``): its writeback boundary is pwh's fake orchestrator."""
    from pwh._suts.reference import ReferenceSUT

    return isinstance(sut, ReferenceSUT)


def _offers(sut: Any, op: str) -> bool:
    """Whether ``sut`` offers ``writeback_open`` or ``turn_open``, the seams beside the dispatcher's."""
    if op == "writeback_open":
        return callable(getattr(sut, "writeback_boundary", None)) or _is_reference(sut)
    return op == "turn_open" and callable(getattr(sut, "turn_contracts", None))


class _Instance:
    """One served instance: its adapter and the writeback boundaries open on it."""

    def __init__(self, sut: Any) -> None:
        self.sut = sut
        self.boundaries: dict[int, Any] = {}
        self.boundaries_opened = 0
        self.turns: dict[int, Any] = {}

    def open_turn(self) -> dict[str, Any] | None:
        from pwh._suts.turn_seam import turn_contracts_of

        contracts = turn_contracts_of(self.sut)
        if contracts is None:
            return None
        number = len(self.turns) + 1
        self.turns[number] = contracts
        return {"turn": number, "name": str(contracts.name)[:64], "operations": sorted(contracts.operations)}

    def open_boundary(self) -> dict[str, Any]:
        from pwh._suts.seam import Unsupported
        from pwh._suts.writeback_seam import WRITEBACK_OPERATIONS, writeback_boundary_of

        boundary = writeback_boundary_of(self.sut)
        if boundary is None and _is_reference(self.sut):
            try:
                from fakes import NoHooksSUT
                from fakes._writeback import ReferenceWriteback
            except ImportError:
                raise Unsupported("pwh's fakes (the reference's writeback boundary) are not importable here") from None
            dispatcher = self.sut if self.boundaries_opened == 0 else NoHooksSUT()
            boundary = ReferenceWriteback(dispatcher, seed=7)  # pwh's world's seed (fakes/_world.py)
        if boundary is None:
            raise Unsupported("the adapter offers no writeback seam (writeback_boundary(); docs/seam.md)")
        self.boundaries_opened += 1
        self.boundaries[self.boundaries_opened] = boundary
        offered = getattr(boundary, "operations", WRITEBACK_OPERATIONS)
        return {"writeback": self.boundaries_opened, "operations": [str(op)[:64] for op in offered]}

    def close(self) -> None:
        for boundary in self.boundaries.values():
            with contextlib.suppress(Exception):
                boundary.close()
        self.boundaries.clear()
        self.sut.close()


def _commit(commit: Any) -> dict[str, Any]:
    return {
        "committed": bool(commit.committed),
        "receipt_id": commit.receipt_id,
        "event_kind": commit.event_kind,
        "dispatch": encode(commit.dispatch) if commit.dispatch is not None else None,
        "raised": commit.raised,
        "notes": [str(n) for n in commit.notes],
    }


def _serve_writeback(instance: _Instance, channel: _Channel, request: dict[str, Any]) -> Any:
    method = WRITEBACK_REQUESTS[request["op"]]
    number = request["writeback"]
    boundary = instance.boundaries.get(number)
    if boundary is None:
        raise ValueError("no writeback boundary of that number is open on this instance")
    if method == "prepare":
        boundary.prepare(todos=request["todos"], phase_enabled=request["phase_enabled"], report_capability=request["report_capability"])
        return None
    if method == "register_intent_kind":
        return _rejections(boundary.register_intent_kind(request["kind"], decode(request["payload_schema"])))
    if method == "install":
        token = request.get("provider")
        producer = _proxy(channel, token) if isinstance(token, str) else "not callable"
        return _rejections(boundary.install(decode(request["registration"]), producer))
    if method == "commit_completion":
        return _commit(boundary.commit_completion(request["todo"], fail=request.get("fail"), crash=request.get("crash")))
    if method == "commit_replan":
        return _commit(boundary.commit_replan(fail=request.get("fail"), crash=request.get("crash")))
    if method == "replay":
        return _commit(boundary.replay(request["commit_number"]))
    if method == "primary_receipt":
        return encode(bytes(boundary.primary_receipt(request["commit_number"])))
    if method == "spend_eligibility":
        return encode(dict(boundary.spend_eligibility(request["commit_number"])))
    if method in ("sidecar_records", "intent_receipts"):
        return [encode(dict(r)) for r in getattr(boundary, method)()]
    if method == "hooks_seen":
        return [{"hook_id": h.hook_id, "receipt_id": h.receipt_id, "hook_input": encode(h.hook_input)} for h in boundary.hooks_seen()]
    if method == "plant":
        boundary.plant(request["values"])
        return None
    if method == "recover":
        boundary.recover()
        return None
    del instance.boundaries[number]  # close
    boundary.close()
    return None


def _serve_turn(instance: _Instance, request: dict[str, Any]) -> Any:
    method = TURN_REQUESTS[request["op"]]
    contracts = instance.turns.get(request["turn"])
    if contracts is None:
        raise ValueError("no turn seam of that number is open on this instance")
    if method == "register_provider":
        answer = contracts.register_provider(request["provider_id"], request["flags"])
        return {"registered": bool(answer.registered), "stage": answer.stage, "path": answer.path}
    if method == "build_host_request":
        view = contracts.build_host_request(decode(request["plan"]))
        return {"allowed_phases": list(view.allowed_phases), "carries": sorted(view.carries), "key_paths": list(view.key_paths)}
    verdict = contracts.accept_host_output(decode(request["plan"]), decode(request["raw"]))
    return {
        "accepted": bool(verdict.accepted),
        "code": verdict.code,
        "path": verdict.path,
        "event_kind": verdict.event_kind,
        "evidence": list(verdict.evidence),
    }


def _serve(sut: Any, channel: _Channel, request: dict[str, Any]) -> Any:
    from pwh._core.profile import Profile

    op = request.get("op")
    if op == "register_intent_kind":
        return _rejections(sut.register_intent_kind(request["kind"], decode(request["payload_schema"])))
    if op == "install":
        token = request.get("provider")
        producer = _proxy(channel, token) if isinstance(token, str) else "not callable"
        return _rejections(sut.install(decode(request["registration"]), producer))
    if op == "set_profile":
        sut.set_profile(Profile(**decode(request["profile"])))
        return None
    if op == "dispatch":
        return _outcome(sut.dispatch(decode(request["source"])))
    if op == "redeliver":
        return _outcome(sut.redeliver(decode(request["source"])))
    if op == "arm_crash":
        sut.arm_crash(request["point"])
        return None
    if op == "restart":
        sut.restart()
        return None
    if op == "journal_records":
        return [encode(r) for r in sut.journal_records()]
    if op == "inject_fault":
        sut.inject_fault(request["fault"])
        return None
    raise LookupError("unknown operation")


def _handshake(spec: str) -> dict[str, Any]:
    """What ``start`` answers: read off one instance, made and closed for it."""
    from pwh._suts.seam import FAULTS, load_sut

    sut = load_sut(spec)
    try:
        return {
            "protocol": PROTOCOL,
            "name": str(getattr(sut, "name", spec))[:64],
            "version": str(getattr(sut, "version", ""))[:64],
            "language": "python",
            "operations": [op for op in OPERATIONS if hasattr(sut, op) or _offers(sut, op)],
            "crash_points": list(getattr(sut, "crash_points", ())),
            "faults": list(FAULTS),
        }
    finally:
        sut.close()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m pwh._suts.stdio.serve SUT\n")
        return 2
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything else printed goes to stderr, never into the protocol
    sys.stdout = sys.stderr
    os.environ["PWH_RUNNER"] = "thread"  # providers are proxies: they must run in this process
    from pwh._core.crash import SimulatedCrash
    from pwh._suts.seam import Unsupported, load_sut

    channel = _Channel(protocol_out)
    threading.Thread(target=channel.read, args=(sys.stdin.buffer,), daemon=True).start()
    instances: dict[int, _Instance] = {}
    opened = 0
    while True:
        request = channel.requests.get()
        if request is None:
            break
        ident, op = request.get("id"), request.get("op")
        try:
            if op == "start":
                answer: dict[str, Any] = {"id": ident, "ok": _handshake(args[0])}
            elif op == "open":
                workdir = request.get("workdir")
                sut = load_sut(args[0], **({"workdir": workdir} if isinstance(workdir, str) and workdir else {}))
                opened += 1
                instances[opened] = _Instance(sut)
                answer = {"id": ident, "ok": {"instance": opened}}
            else:
                instance = instances[request["instance"]]
                if op == "close":
                    del instances[request["instance"]]
                    instance.close()
                    answer = {"id": ident, "ok": None}
                elif op == "writeback_open":
                    answer = {"id": ident, "ok": instance.open_boundary()}
                elif op == "turn_open":
                    answer = {"id": ident, "ok": instance.open_turn()}
                elif op in TURN_REQUESTS:
                    answer = {"id": ident, "ok": _serve_turn(instance, request)}
                elif op in WRITEBACK_REQUESTS:
                    try:
                        answer = {"id": ident, "ok": _serve_writeback(instance, channel, request)}
                    except LookupError as exc:
                        if op not in LOOKUP_REQUESTS:
                            raise
                        answer = {"id": ident, "lookup": str(exc)[:200] or type(exc).__name__}
                else:
                    answer = {"id": ident, "ok": _serve(instance.sut, channel, request)}
        except Unsupported as exc:
            answer = {"id": ident, "unsupported": exc.reason}
        except SimulatedCrash as crash:
            answer = {"id": ident, "crashed": crash.point}
        except Exception as exc:
            answer = {"id": ident, "error": {"type": type(exc).__name__}}
        try:
            channel.send(answer)
        except OSError:  # no one reads any more: the harness is gone
            break
    for instance in instances.values():
        with contextlib.suppress(Exception):
            instance.close()
    # A provider call the implementation gave up on may still wait for its reply on a thread the
    # runner abandoned: the process ends now rather than waiting for it.
    with contextlib.suppress(Exception):
        protocol_out.flush()
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(main())
