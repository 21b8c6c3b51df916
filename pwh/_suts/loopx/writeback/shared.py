"""What every LoopX writeback boundary of a process shares: one warm LoopX interpreter and the promoted Goals.

None of these can differ between scenarios, and each used to cost a boundary time:

- The warm interpreter (:mod:`.server`) imports LoopX once and forks a child per command. A child
  takes its boundary's whole environment from the request (HOME, TMPDIR, PATH, ...) and runs in
  the boundary's folder, so a command sees exactly what it saw in a server of its own. The server
  itself runs with a HOME and TMPDIR of its own, which no boundary uses: what LoopX derives from
  them at import (``loopx.paths.DEFAULT_RUNTIME_ROOT``) names nothing a boundary can share, and
  :meth:`Shared.check_untouched` fails a command after which anything appeared there.
- A promoted Goal: the canonical-authority promotion of the same fixture (a Node process) writes
  the same files under the runtime root whatever the installation's folder (no path or time in
  them; the store's identity is random, and so its revisions, which the checks comparing two
  installations mask). The first promotion of each fixture is kept (:meth:`Shared.keep_template`)
  unless a file names its folder, and copied into the runtime root of each later boundary with
  that fixture (:meth:`Shared.template`).
- LoopX's Node compile cache (``NODE_COMPILE_CACHE``, which LoopX's runtime defers to): compiled
  code only, validated by Node against the source.
- LoopX's verdict on a set of test registrations (its registration probe: a dispatch of a probe
  source that persists nothing), by the exact request (:meth:`Shared.probe_verdict`).

One command runs at a time (a lock). A command whose exchange with the server did not finish (an
error, an interrupt) leaves its stream out of step: its child and the server are stopped by PID
and the next command starts a new server. The server, and the folder holding the templates, are
stopped and removed at interpreter exit (``atexit``) or by :func:`shutdown`; when this process
dies without either, the server reads the end of its stdin and exits. A process forked from this
one forgets them (:meth:`Shared.forget`): its exit stops nothing of its parent's.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import hashlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pwh._suts.loopx.runtime import pid_alive

READY_SECONDS = 120.0
STOP_SECONDS = 5.0
BUSY_SECONDS = 600.0


class CommandFailed(RuntimeError):
    """The warm interpreter or a LoopX command could not be run at all (not a LoopX answer)."""


class WarmServer:
    """The fork server process and its JSON-lines control channel (stdin/stdout pipes)."""

    def __init__(self, root: Path, env: Mapping[str, str]) -> None:
        self.err = root / "server.err"
        self.log = open(self.err, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pwh._suts.loopx.writeback.server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=dict(env),
            cwd=str(root),
            start_new_session=True,
        )
        self._buf = b""
        self.child: int | None = None  # the forked child of the command under way
        self.fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        ready = self.read_line(READY_SECONDS)
        if not ready or not ready.get("ready"):
            self.kill()
            raise CommandFailed("the warm LoopX interpreter did not start: " + self.tail())
        self.capabilities: list[str] = list(ready.get("capabilities") or ())

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self) -> str:
        try:
            return self.err.read_text("utf-8", errors="replace")[-1500:]
        except OSError:
            return ""

    def send(self, message: Mapping[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
        self.proc.stdin.flush()

    def pending_line(self) -> dict[str, Any] | None:
        if b"\n" in self._buf:
            line, self._buf = self._buf.split(b"\n", 1)
            return json.loads(line)
        return None

    def feed(self) -> bool:
        chunk = os.read(self.fd, 65536)
        self._buf += chunk
        return bool(chunk)

    def read_line(self, seconds: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + seconds
        while True:
            line = self.pending_line()
            if line is not None:
                return line
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            with selectors.DefaultSelector() as sel:
                sel.register(self.fd, selectors.EVENT_READ)
                if sel.select(left) and not self.feed():
                    return None

    def stop(self) -> None:
        """Ask the server to exit (it answers ``bye``), then :meth:`kill` whatever is left."""
        if self.alive():
            with contextlib.suppress(OSError, ValueError):
                self.send({"op": "exit"})
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(STOP_SECONDS)
        self.kill()

    def kill(self) -> None:
        """SIGKILL the command's child and the server, by PID, and close the pipes. The child is
        waited for (it is the server's, not ours to reap): a process killed inside a system call
        ends only when the call returns."""
        if self.child is not None:
            stop_pids([self.child], term=False)
            self.child = None
        if self.alive():
            with contextlib.suppress(OSError):
                self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(STOP_SECONDS)
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]
        self.log.close()


class Shared:
    """The process's warm server, its private folder and the kept promotions (see the module)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._root: Path | None = None
        self._server: WarmServer | None = None
        self._templates: dict[str, Path | None] = {}  # fixture key -> kept runtime root (None: not kept)
        self._probes: dict[str, list[dict[str, Any]]] = {}  # probe request -> LoopX's failures
        self.servers_started = 0
        self.cache_flushed = False  # a runtime that served commands has written the compile cache

    # -- the folder ----------------------------------------------------------------------------

    def root(self, base: str) -> Path:
        """The process's private folder under ``base`` (made on first use): the server's HOME and
        TMPDIR, the Node compile cache and the kept promotions."""
        if self._root is None or not self._root.is_dir():
            self._root = Path(tempfile.mkdtemp(prefix="pwh-lxwb-shared-", dir=base)).resolve()
            for name in ("home", "tmp", "node-compile-cache", "templates"):
                (self._root / name).mkdir(mode=0o700)
            self._templates.clear()
            self.cache_flushed = False
        return self._root

    @property
    def folder(self) -> Path | None:
        """The process's private folder, once made (None before the first boundary, after :meth:`stop`)."""
        return self._root

    def compile_cache(self, base: str) -> Path:
        return self.root(base) / "node-compile-cache"

    def check_untouched(self) -> None:
        """Fail (:class:`CommandFailed`) if LoopX wrote under the server's own HOME or TMPDIR: a
        path derived from them at import would then be shared by every boundary."""
        if self._root is None:
            return
        for name, variable in (("home", "HOME"), ("tmp", "TMPDIR")):
            if any((self._root / name).iterdir()):
                raise CommandFailed(
                    f"LoopX wrote under the shared warm interpreter's own {variable} (a path it fixed at import): "
                    "boundaries of this process are no longer isolated"
                )

    # -- the server ----------------------------------------------------------------------------

    @property
    def server_pid(self) -> int | None:
        server = self._server
        return server.pid if server is not None and server.alive() else None

    def server(self, base: str, env: Mapping[str, str]) -> WarmServer:
        """The warm server, started with ``env`` (a boundary's) but this folder's HOME and TMPDIR."""
        if self._server is not None and not self._server.alive():
            self._discard()
        if self._server is None:
            root = self.root(base)
            own = {**env, "HOME": str(root / "home"), "TMPDIR": str(root / "tmp")}
            self._server = WarmServer(root, own)
            self.servers_started += 1
        return self._server

    @contextlib.contextmanager
    def session(self, base: str, env: Mapping[str, str]) -> Iterator[WarmServer]:
        """The server for one whole exchange (request, fork, provider calls, reaping). If the
        exchange does not finish, the server's stream is out of step: it is stopped."""
        if not self._lock.acquire(timeout=BUSY_SECONDS):
            raise CommandFailed("the shared warm LoopX interpreter stayed busy")
        try:
            server = self.server(base, env)
            try:
                yield server
            except BaseException:
                self._discard()
                raise
            if server.child is not None:  # the caller left before the child was reaped
                self._discard()
        finally:
            self._lock.release()

    def forget(self) -> None:
        """In a forked child of this process: the server, its folder and its lock are the parent's;
        drop them without stopping anything, so the child's exit leaves them to the parent."""
        self._lock = threading.Lock()
        self._server, self._root = None, None
        self._templates = {}
        self._probes = {}
        self.cache_flushed = False

    def _discard(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.kill()

    # -- kept promotions -----------------------------------------------------------------------

    def template(self, key: str) -> Path | None:
        """The kept runtime root of the fixture ``key``, or None (none kept yet, or not keepable)."""
        kept = self._templates.get(key)
        return kept if kept is not None and kept.is_dir() else None

    def known(self, key: str) -> bool:
        return key in self._templates

    def keep_template(self, base: str, key: str, runtime_root: Path, folder: Path) -> bool:
        """Keep a copy of ``runtime_root`` just after its promotion, unless a file in it names the
        installation's ``folder`` (then no later boundary may copy it: every one promotes)."""
        target = self.root(base) / "templates" / hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
        shutil.rmtree(target, ignore_errors=True)
        copy_tree(runtime_root, target)
        named = names_path(target, (str(folder), str(folder.resolve())))
        if named:
            shutil.rmtree(target, ignore_errors=True)
        self._templates[key] = None if named else target
        return not named

    # -- registration probes -------------------------------------------------------------------

    def probe_verdict(self, key: str) -> list[dict[str, Any]] | None:
        """LoopX's answer to the registration probe ``key`` (the request, as canonical JSON), if asked already."""
        known = self._probes.get(key)
        return copy.deepcopy(known) if known is not None else None

    def keep_probe_verdict(self, key: str, failures: list[dict[str, Any]]) -> None:
        self._probes[key] = copy.deepcopy(failures)

    # -- the end -------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the server by PID and remove the folder (templates, compile cache). Never waits
        long for a command under way (at exit, a daemon thread may hold the lock)."""
        held = self._lock.acquire(timeout=STOP_SECONDS)
        try:
            server, self._server = self._server, None
            if server is not None:
                server.stop()
            root, self._root = self._root, None
            self._templates.clear()
            self._probes.clear()
            self.cache_flushed = False
            if root is not None:  # a Node runtime here was started by no boundary's command: stopped too
                stop_pids(sorted(runtime_pids(root / "tmp")))
                shutil.rmtree(root, ignore_errors=True)
        finally:
            if held:
                self._lock.release()


def copy_tree(source: Path, target: Path) -> None:
    """``source`` into ``target`` (which may exist), modes kept and modification times new: the
    copied files look written now, as a promotion made now would have written them."""
    shutil.copytree(source, target, copy_function=shutil.copy, dirs_exist_ok=True)


def names_path(root: Path, paths: tuple[str, ...]) -> bool:
    """Whether any file under ``root`` holds one of ``paths`` (as UTF-8 bytes)."""
    needles = [p.encode("utf-8") for p in paths if p]
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if any(n in data for n in needles):
                return True
    return False


def runtime_pids(tmp: Path) -> set[int]:
    """The PIDs LoopX's Node runtimes published in their locators under the TMPDIR ``tmp``."""
    pids: set[int] = set()
    for locator in tmp.glob("loopx-effect-runtime-*/runtime-*.json"):
        with contextlib.suppress(OSError, ValueError):
            pid = json.loads(locator.read_text("utf-8")).get("pid")
            if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0:
                pids.add(pid)
    return pids


def stop_pids(pids: list[int], *, term: bool = True) -> None:
    """SIGTERM (or, ``term=False``, SIGKILL) each live PID, wait for them to go, SIGKILL any still there."""
    for pid in pids:
        if pid_alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM if term else signal.SIGKILL)
    deadline = time.monotonic() + STOP_SECONDS
    while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in pids:
        if pid_alive(pid):
            _kill(pid)


def _kill(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


SHARED = Shared()
atexit.register(SHARED.stop)
os.register_at_fork(after_in_child=SHARED.forget)


def shutdown() -> None:
    """Stop this process's shared warm interpreter and remove its folder now (also done at exit)."""
    SHARED.stop()
