"""The warm LoopX interpreter: a fork server that imports loopx once and forks a child per command.

Run as ``python -m pwh._suts.loopx.writeback.server`` once per process (:mod:`.shared`), with a
HOME and TMPDIR of its own; each request carries its boundary's private environment (HOME,
TMPDIR, PATH with the wheel's Node, ``LOOPX_USAGE_PING=0``), which the forked child takes before
it runs the command. Before ``loopx.cli`` and LoopX's wiring modules (:data:`WIRING_MODULES`) are
imported (they copy the name at import), it re-binds LoopX's one composition-root function (found
by its shape, :func:`composition_roots`), to :func:`composed`: LoopX's own answer (its report
capability's hook, its producer wrapped to log its input) plus the test hooks of the current
command. That is the adapter's one monkeypatch; the command path is otherwise LoopX's own
(``loopx.entrypoint.main(argv)`` in the forked child).

Control protocol (JSON lines): requests on stdin, answers on stdout. Each request names an
``op`` from a fixed table (:data:`OPS`); the forked child's answer lands in the request's ``out``
file, the server answers ``{"pid": ...}`` when the child is forked and ``{"exit": ...}`` once it is
reaped. Test hooks cross as RFC registrations (data); their providers are proxies that hand
LoopX's input to the boundary over a Unix socket (``callback``) and return the boundary's answer,
decoded by a fixed table of plain data types. Nothing received chooses code to run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pwh._suts.wire import decode

# Set by the forked child from its request, read by ``composed`` when LoopX composes its hooks.
CURRENT: dict[str, Any] = {"hooks": (), "inputs": None, "callback": None}
_ORIGINAL: Any = None
_CONNECTION: list[socket.socket] = []


# -- the composition root ----------------------------------------------------------------------------


def composed(*, registry_path: Path, goal_id: str, runtime_root: Path | None = None) -> tuple[Any, ...]:
    """LoopX's own post-writeback hooks, each producer logging its input, plus the test hooks."""
    own = _ORIGINAL(registry_path=registry_path, goal_id=goal_id, runtime_root=runtime_root)
    logged = tuple(replace(r, producer=_logged(r.hook_id, r.producer)) for r in own)
    return logged + tuple(CURRENT["hooks"])


def _record_input(hook_id: str, hook_input: Any) -> None:
    path = CURRENT.get("inputs")
    if not path:
        return
    line = json.dumps({"hook_id": hook_id, "input": hook_input}, default=repr, allow_nan=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def _logged(hook_id: str, producer: Any) -> Any:
    def logging_producer(hook_input: Mapping[str, Any]) -> Any:
        _record_input(hook_id, hook_input)
        return producer(hook_input)

    return logging_producer


# Exceptions a proxy may raise on the boundary's word (a fixed table; anything else: RuntimeError).
RAISABLE: dict[str, type[BaseException]] = {
    "RuntimeError": RuntimeError,
    "ValueError": ValueError,
    "TypeError": TypeError,
    "SystemExit": SystemExit,
    "KeyboardInterrupt": KeyboardInterrupt,
}


class AbortCommand(BaseException):
    """The boundary cannot put the provider's answer to LoopX: end the command (LoopX isolates only Exception)."""


def _exchange(message: dict[str, Any]) -> dict[str, Any]:
    if not _CONNECTION:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(CURRENT["callback"])
        _CONNECTION.append(conn)
    conn = _CONNECTION[0]
    conn.sendall((json.dumps(message, default=repr, allow_nan=True) + "\n").encode("utf-8"))
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            raise AbortCommand("the boundary closed the callback channel")
        buf += chunk
    return json.loads(buf)


def _proxy(hook_id: str) -> Any:
    def provider(hook_input: Mapping[str, Any]) -> Any:
        _record_input(hook_id, hook_input)
        answer = _exchange({"op": "call", "hook_id": hook_id, "input": hook_input})
        if "result" in answer:
            return decode(answer["result"])
        if "raise" in answer:
            raise RAISABLE.get(str(answer["raise"]), RuntimeError)("provider failed (raised by the boundary's producer)")
        raise AbortCommand(str(answer.get("abort")))

    return provider


def _test_registrations(hooks: list[Mapping[str, Any]]) -> tuple[Any, ...]:
    from loopx.control_plane.capability_hooks import PostWritebackHookRegistration

    from pwh._suts.loopx.crossing import with_contract_edits
    from pwh._suts.loopx.map import family, get_path, row, to_loopx_event_kind, to_loopx_id

    out = []
    for hook in hooks:
        reg, edits = hook["registration"], hook.get("edits") or {}

        def tokens(value: Any, convert: Any = lambda v: v) -> Any:
            return tuple(convert(v) for v in value) if isinstance(value, (list, tuple)) else value

        fields = {r.loopx: reg.get(key) for key, r in family("registration.").items() if r.loopx and "." not in key}
        fields["capability_id"] = to_loopx_id(fields["capability_id"])
        fields["event_kinds"] = tokens(fields["event_kinds"], to_loopx_event_kind)
        fields["intent_kinds"] = tokens(fields["intent_kinds"])
        fields["requested_read_scope"] = tokens(fields["requested_read_scope"])
        fields[str(row("registration.budget.max_result_bytes").loopx)] = get_path(reg, "budget.max_result_bytes")
        fields[str(row("registration.provider").loopx)] = _proxy(str(reg.get("hook_id")))
        kind = with_contract_edits(PostWritebackHookRegistration, edits) if edits else PostWritebackHookRegistration
        out.append(kind(**fields))
    return tuple(out)


# -- what a forked child does ------------------------------------------------------------------------


def _run_command(request: Mapping[str, Any]) -> int:
    from loopx.entrypoint import main

    CURRENT["hooks"] = _test_registrations(request.get("hooks") or [])
    CURRENT["inputs"] = request.get("inputs")
    CURRENT["callback"] = request.get("callback")
    try:
        code = main(list(request["argv"]))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except AbortCommand:
        return 70
    sys.stdout.flush()
    return int(code or 0)


def _probe(request: Mapping[str, Any]) -> int:
    """LoopX's own verdict on test registrations: a dispatch of a probe source that persists nothing."""
    from loopx.control_plane.capability_hooks import dispatch_post_writeback_hooks

    from pwh._suts.loopx.crossing import probe_source, receipt_id_in_source
    from pwh._suts.loopx.map import loopx_version

    registrations = [replace(r, producer=lambda _i: {}) for r in _test_registrations(request.get("hooks") or [])]
    source = probe_source(request["event_kind"], receipt_id=receipt_id_in_source(loopx_version()))
    result = dispatch_post_writeback_hooks(registrations, source=source, runtime_root=None)
    sys.stdout.write(json.dumps({"failures": result.get("failures", [])}, default=repr))
    return 0


def _promote(request: Mapping[str, Any]) -> int:
    """Make the Goal's Todo authority canonical: one commit of its source projection into the
    installed file-v0 authority store, then the legacy writer fence (both LoopX's own TS modules)."""
    import subprocess

    import loopx
    from loopx.control_plane.coordination.authority_source_capture import build_runtime_shadow_source_snapshot
    from loopx.control_plane.projects.registry_codec import load_project_registry
    from loopx.registry import find_registry_goal

    registry_path, runtime_root = Path(request["registry"]), Path(request["runtime_root"])
    goal = find_registry_goal(load_project_registry(registry_path), request["goal_id"])
    state_path = Path(request["state_path"])
    projection, _ = build_runtime_shadow_source_snapshot(
        goal=goal, runtime_root=runtime_root, state_path=state_path, registry_path=registry_path
    )
    base = Path(loopx.__file__).parent / "control_plane" / "coordination"
    script = PROMOTE_SCRIPT.replace("@PROVIDER@", json.dumps((base / "local_authority_provider.ts").as_uri()))
    script = script.replace("@FENCE@", json.dumps((base / "legacy_writer_fence.ts").as_uri()))
    script = script.replace("@CODEC@", json.dumps((base / "authority_store_codec.ts").as_uri()))
    payload = {"root": str(runtime_root), "goal": request["goal_id"], "projection": projection, "state_path": str(state_path)}
    proc = subprocess.run(
        ["node", "--no-warnings", "--experimental-strip-types", "--input-type=module", "-e", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    sys.stderr.write(proc.stderr[-4000:])
    sys.stdout.write(proc.stdout)
    return proc.returncode


PROMOTE_SCRIPT = """
import {openLocalAuthorityStore} from @PROVIDER@;
import {engageLegacyCoordinationWriterFence} from @FENCE@;
import {canonicalAuthoritySha256} from @CODEC@;
let raw = ''; for await (const chunk of process.stdin) raw += chunk;
const q = JSON.parse(raw);
const store = await openLocalAuthorityStore(q.root, q.goal);
const committed = await store.commitAuthority({expected_provider_revision: null, operation_id: 'pwh-writeback-fixture',
  events: [], next_projection: q.projection, receipts: []});
if (committed.status !== 'applied') throw new Error('authority commit: ' + JSON.stringify(committed));
const fence = await engageLegacyCoordinationWriterFence({schema_version: 'loopx_legacy_coordination_writer_fence_engage_request_v0',
  runtime_root: q.root, goal_id: q.goal, state_path: q.state_path,
  fence: {schema_version: 'loopx_legacy_coordination_writer_fence_v0', state: 'engaged', goal_id: q.goal,
    fence_id: 'pwh-writeback-fixture', source_version: 'pwh-writeback-fixture',
    source_projection_sha256: canonicalAuthoritySha256(q.projection), expected_shadow_provider_revision: committed.provider_revision}});
if (fence.status !== 'applied') throw new Error('fence: ' + JSON.stringify(fence));
process.stdout.write(JSON.stringify({provider_revision: committed.provider_revision}));
"""


def _stop_runtime(request: Mapping[str, Any]) -> int:
    """Stop LoopX's Node runtime (found by its locator in this private TMPDIR), waiting for it to exit."""
    from loopx.control_plane.effect_runtime import restart_effect_runtime

    try:
        answer = restart_effect_runtime(timeout=5.0, wait_for_exit=True)
    except Exception as exc:  # none running is fine
        answer = {"error": type(exc).__name__}
    sys.stdout.write(json.dumps(answer, default=repr))
    return 0


OPS = {"run": _run_command, "probe": _probe, "promote": _promote, "stop_runtime": _stop_runtime}


def _adopt_environment(request: Mapping[str, Any]) -> None:
    """The requesting boundary's whole environment (HOME, TMPDIR, PATH, ...): one server serves
    every boundary of a process, so a command gets the environment a server of its own would have
    been started with. ``tempfile`` caches its directory: it is pointed at the new TMPDIR too."""
    env = request.get("env")
    if not isinstance(env, Mapping):
        return
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    tempfile.tempdir = os.environ.get("TMPDIR") or None


def _child(request: Mapping[str, Any]) -> None:
    """In the forked child: take the boundary's environment, redirect stdio to the request's
    files, do the op, end without cleanup."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _adopt_environment(request)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        out = os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.dup2(err, 2)
        # Each command runs in its boundary's own folder: the directory the server was started in
        # may be gone by now (a test run's temp folders come and go), and Node refuses a missing cwd.
        os.chdir(os.path.dirname(request["out"]))
        sys.stdin = open(0, encoding="utf-8", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
        code = OPS[request["op"]](request)
    except BaseException as exc:  # a child never returns into the server loop
        try:
            sys.stderr.write(f"pwh fork child: {type(exc).__name__}: {exc}\n")
        except BaseException:
            pass
        code = 71
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        os._exit(code if isinstance(code, int) and 0 <= code < 256 else 1)


# -- the server loop ---------------------------------------------------------------------------------


def _answer(message: Mapping[str, Any]) -> None:
    out = sys.__stdout__
    if out is None:  # no stdout to answer on: the boundary reads the pipe it started us with
        raise SystemExit(2)
    out.write(json.dumps(message) + "\n")
    out.flush()


def composition_roots() -> list[tuple[Any, str, str]]:
    """LoopX's post-writeback composition roots, found by shape rather than by name: each
    ``loopx.capabilities.<package>.post_writeback_hook`` module's ``*_post_writeback_hooks_for_goal``
    function (LoopX 2.1.1 has one). Returns (module, function name, capability package)."""
    import importlib
    import importlib.util
    import pkgutil

    import loopx.capabilities as capabilities

    found = []
    for info in pkgutil.iter_modules(capabilities.__path__):
        name = f"loopx.capabilities.{info.name}.post_writeback_hook"
        if not info.ispkg or importlib.util.find_spec(name) is None:
            continue
        module = importlib.import_module(name)
        found += [(module, attr, info.name) for attr in dir(module) if attr.endswith(ROOT_SUFFIX) and callable(getattr(module, attr))]
    return found


ROOT_SUFFIX = "_post_writeback_hooks_for_goal"

# LoopX's modules that copy the composition root's name at import: ``todo complete`` and
# ``refresh-state``'s dispatch (every release), ``turn run-once``'s drain (1.4.0 on).
WIRING_MODULES = ("loopx.cli_commands.post_writeback", "loopx.cli_commands.turn_post_writeback")

# What a command imports on first use, imported once here so no forked child pays for it: the
# todo, quota and rollout handlers, and everything ``turn run-once`` reaches only when it runs.
WARM_MODULES = (
    "loopx.cli_commands.todo",
    "loopx.cli_commands.quota",
    "loopx.cli_rollout",
    "loopx.control_plane.capability_hooks",
    "loopx.cli_commands.turn_run_once",
    "loopx.cli_commands.turn_cadence",
    "loopx.cli_commands.turn_dsh_host",
    "loopx.cli_commands.turn_todo_writeback",
    "loopx.capabilities.periodic_report.cadence_runtime",
    "loopx.control_plane.todos.durable_completion",
    "loopx.control_plane.todos.completion_fence",
    "loopx.control_plane.quota.settlement_validation",
    "loopx.control_plane.quota.slot_accounting",
    "loopx.control_plane.turn_driver.codex_cli",
    "loopx.extensions.codex_native_child",
)


def warm() -> tuple[float, list[str]]:
    """Re-bind the composition root, then import what every command needs; the seconds it took
    and the capability packages whose composition root was re-bound."""
    global _ORIGINAL
    started = time.monotonic()
    tmp = os.environ.get("TMPDIR")
    if tmp:
        tempfile.tempdir = tmp
    roots = composition_roots()
    copied = [name for name in ("loopx.cli", *WIRING_MODULES) if name in sys.modules]
    if len(roots) != 1 or copied:
        raise SystemExit("pwh: LoopX's post-writeback composition root is not where loopx 1.0.0 to 2.1.1 have it")
    module, attr, package = roots[0]
    _ORIGINAL = getattr(module, attr)
    setattr(module, attr, composed)
    import loopx.cli
    import loopx.cli_runtime
    import loopx.entrypoint  # noqa: F401

    for name in WIRING_MODULES:
        if importlib.util.find_spec(name) is not None:
            __import__(name)

    for name in WARM_MODULES:
        try:
            __import__(name)
        except ImportError:
            pass
    import pwh._suts.loopx.crossing
    import pwh._suts.loopx.map  # noqa: F401

    return time.monotonic() - started, [package]


def serve() -> None:
    seconds, packages = warm()
    _answer({"ready": True, "pid": os.getpid(), "import_seconds": round(seconds, 3), "capabilities": packages})
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        op = request.get("op")
        if op == "exit":
            break
        if op not in OPS:
            _answer({"error": "unknown op"})
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request)
        _answer({"pid": pid})
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            _answer({"exit": None, "signal": os.WTERMSIG(status)})
        else:
            _answer({"exit": os.WEXITSTATUS(status), "signal": None})
    _answer({"bye": True})


if __name__ == "__main__":
    serve()
