"""A small Chrome DevTools Protocol client over ``--remote-debugging-pipe``, for tests that look
at a rendered page as a person would (computed colours, what is visible, where it sits).

Chromium reads commands on its fd 3 and writes replies and events on its fd 4, each message JSON
ended by a NUL byte. The browser runs in a session of its own (its own process group), so that
:meth:`Chromium.close` can stop it by its PID and then make sure none of its helper processes
(zygote, renderer, utility) outlives it. No dependency beyond the standard library.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
)


def chromium_path() -> str | None:
    """Debian's Chromium (``/usr/bin/chromium``), else one on PATH, else ``None``."""
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else shutil.which("chromium")


class CdpError(AssertionError):
    """The browser did not answer as the protocol says (or not in time): the test fails, clearly."""


# Run in the child before the browser: put the two pipe ends at 3 and 4, close the originals and
# exec the browser (the same PID throughout, so the test stops what it started).
_TRAMPOLINE = (
    "import os, sys\n"
    "r, w = int(sys.argv[1]), int(sys.argv[2])\n"
    "w = os.dup(w) if w == 3 else w\n"
    "os.dup2(r, 3)\nos.dup2(w, 4)\n"
    "[os.close(fd) for fd in (r, w) if fd not in (3, 4)]\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)


class Chromium:
    """One headless browser; use as a context manager. ``page()`` opens a tab to drive."""

    def __init__(self, exe: str, profile: Path, *, timeout: float = 20.0) -> None:
        self.timeout = timeout
        cmd_r, cmd_w = os.pipe()  # we write commands; the browser reads them on its fd 3
        out_r, out_w = os.pipe()  # the browser writes on its fd 4; we read
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _TRAMPOLINE, str(cmd_r), str(out_w), exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(cmd_r, out_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        os.close(cmd_r)
        os.close(out_w)
        self._w, self._r = cmd_w, out_r
        self._buf = b""
        self._pending: list[dict[str, Any]] = []
        self._next = 0

    # -- the wire ------------------------------------------------------------------------

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode("utf-8") + b"\0"
        deadline = time.monotonic() + self.timeout
        while data:
            if time.monotonic() > deadline or not select.select([], [self._w], [], max(0.0, deadline - time.monotonic()))[1]:
                raise CdpError(f"chromium did not take the command {method} within {self.timeout} s")
            data = data[os.write(self._w, data) :]
        return self._next

    def _read_one(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                raise CdpError(f"chromium sent nothing for {self.timeout} s while waiting for {waiting_for}")
            chunk = os.read(self._r, 1 << 16)
            if not chunk:
                raise CdpError(f"chromium closed its pipe (exit status {self.proc.poll()}) while waiting for {waiting_for}")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def wait(self, match: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
        """The first message (an event or a reply, earlier ones kept) that ``match`` accepts."""
        for i, msg in enumerate(self._pending):
            if match(msg):
                return self._pending.pop(i)
        deadline = time.monotonic() + self.timeout
        while True:
            msg = self._read_one(deadline, what)
            if match(msg):
                return msg
            self._pending.append(msg)

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        ident = self.send(method, params, session)
        reply = self.wait(lambda m: m.get("id") == ident, f"the reply to {method}")
        if "error" in reply:
            raise CdpError(f"{method} failed: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    # -- pages ---------------------------------------------------------------------------

    def page(self, width: int = 1280, height: int = 900) -> Page:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", session=session)
        self.call(
            "Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session
        )
        return Page(self, session)

    # -- stopping ------------------------------------------------------------------------

    def close(self) -> None:
        """Ask the browser to close; else terminate it, then kill it; then anything left in its group."""
        with contextlib.suppress(OSError, CdpError):
            self.send("Browser.close")
        for stop in (None, self.proc.terminate, self.proc.kill):
            if stop is not None:
                with contextlib.suppress(ProcessLookupError):
                    stop()
            try:
                self.proc.wait(timeout=5)
                break
            except subprocess.TimeoutExpired:
                continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # the group is the browser's own (start_new_session)
        # A killed process lingers until the kernel has torn it down, which takes a while on a busy
        # machine: wait for the group to empty (a generous hang guard, not a time budget).
        deadline = time.monotonic() + 60
        while self.survivors() and time.monotonic() < deadline:
            time.sleep(0.05)
        for fd in (self._w, self._r):
            with contextlib.suppress(OSError):
                os.close(fd)

    def survivors(self) -> list[int]:
        """PIDs still in the browser's process group (none, once closed)."""
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError, ValueError, IndexError):
                    stat = (entry / "stat").read_text()
                    fields = stat[stat.rindex(")") + 2 :].split()
                    if int(fields[2]) == self.proc.pid and fields[0] != "Z":
                        found.append(int(entry.name))
        return found

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class Page:
    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser = browser
        self.session = session

    def open(self, path: Path) -> None:
        """Navigate to a local file and wait until it has loaded."""
        url = path.resolve().as_uri()
        reply = self.browser.call("Page.navigate", {"url": url}, self.session)
        if reply.get("errorText"):
            raise CdpError(f"navigating to {path.name} failed: {reply['errorText']}")
        self.browser.wait(lambda m: m.get("method") == "Page.loadEventFired" and m.get("sessionId") == self.session, f"{path.name} to load")

    def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (returned by value)."""
        reply = self.browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, self.session)
        if "exceptionDetails" in reply:
            detail = reply["exceptionDetails"]
            text = detail.get("exception", {}).get("description") or detail.get("text")
            raise CdpError(f"the page's script failed: {text}\n  in: {expression[:300]}")
        return reply["result"].get("value")


@contextlib.contextmanager
def chromium(profile: Path) -> Iterator[Chromium]:
    exe = chromium_path()
    assert exe is not None
    browser = Chromium(exe, profile)
    try:
        yield browser
    finally:
        browser.close()
