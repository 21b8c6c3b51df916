"""Ctrl-C on the command line: exit 130, no traceback, no process of pwh's left running; SIGTERM
and SIGHUP the same way, with 143 and 129.

SIGTERM is how a supervisor (``timeout``, a CI job's cancel, ``kill PID``, systemd) stops a
program, and SIGHUP how a closed terminal does: each is handled as a Ctrl-C is (every descendant
stopped by PID, the ``KeyboardInterrupt`` unwinding pwh's clean-ups so its temporary folders are
removed, ``/dev/shm`` ones included), and pwh ends with 128 + the signal's number. A SIGHUP that
was ignored when pwh started (``nohup``) stays ignored.

``pwh gate`` runs the scenarios in a child pytest, ``pwh soak`` and ``pwh replay`` kill children
for real at crash points, the reliability campaign starts rival processes. A Ctrl-C reaches the
whole foreground process group, but a SIGINT sent to pwh's own PID (a supervisor, a CI runner's
cancel) reaches only pwh. So on the first SIGINT pwh stops every process descended from it, by
PID, before the ``KeyboardInterrupt`` unwinds its clean-ups (no child is left writing into a
temporary directory being removed); a second SIGINT while it unwinds ends pwh at once with 130.

Run as the program (not called in-process by a test), pwh on Linux is also a *child subreaper*: a
grandchild whose parent died (a provider that forked, a child killed at a crash point) is
re-parented to pwh instead of to init, so it is still found. Elsewhere only what ``/proc`` shows
is stopped (nothing, where there is no ``/proc``).

Python cannot always raise where a signal lands: a ``KeyboardInterrupt`` raised inside a garbage
collector callback (Hypothesis keeps one), a ``__del__`` or a weakref callback is handed to
``sys.unraisablehook``, printed as "Exception ignored" and dropped, and the run would go on as if
no Ctrl-C had come. So while the handling is installed, such a dropped ``KeyboardInterrupt`` is
raised again in the main thread as soon as it runs ordinary code (nothing is printed); long loops
also call :func:`raise_if_interrupted` at their safe points (the models, before every step); and
the first SIGINT arms a last resort: if pwh has not finished :data:`GRACE_S` seconds later (a
clean-up hangs, or code pwh ran caught the interrupt), it stops every descendant and ends with 130
itself. Run as the program, pwh leaves a Ctrl-C through
:func:`exit_now_if_interrupted`, so the exit status is 130 whatever the interpreter's own shutdown
would make of the interrupted state it is left in.
"""

from __future__ import annotations

import _thread
import contextlib
import ctypes
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

PR_SET_CHILD_SUBREAPER = 36
EXIT_INTERRUPTED = 130
# The signals that end pwh as a Ctrl-C does, besides SIGINT; the exit status is 128 + the number.
ENDING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
EXIT_CODES = frozenset({EXIT_INTERRUPTED, *(128 + int(sig) for sig in ENDING_SIGNALS)})
REDELIVER_AFTER_S = 0.01
GRACE_S = 10.0  # how long the clean-ups of a Ctrl-C may take before pwh ends without them

_interrupted = False
_ended_by = 0  # the signal that ends pwh (SIGINT, SIGTERM, SIGHUP), 0 while none came
_redeliver = False  # a dropped KeyboardInterrupt is being raised again: not a second Ctrl-C
_finished = threading.Event()  # set when the command has returned: the last resort stands down


def become_subreaper() -> bool:
    """Ask Linux to re-parent orphaned descendants to this process; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int | None = None) -> list[int]:
    """PIDs of every live process below ``root`` (default: this process), parents first, read from
    ``/proc``; empty where there is none."""
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    proc = Path("/proc")
    try:
        entries = list(os.scandir(proc))
    except OSError:
        return []
    for entry in entries:
        if not entry.name.isdigit():
            continue
        parent = _ppid(int(entry.name))
        if parent is not None:
            children.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in sorted(children.get(todo.pop(), [])):
            if child not in found and child != root:
                found.append(child)
                todo.append(child)
    return found


def _ppid(pid: int) -> int | None:
    """The parent PID from ``/proc/PID/stat`` (the field after the command name, which may itself
    hold spaces and parentheses), or None for a process gone or a zombie (nothing left to stop)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text("ascii", "replace")
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()
    if len(fields) < 2 or fields[0] == "Z":
        return None
    try:
        return int(fields[1])
    except ValueError:
        return None


def _left_to_exit(pid: int) -> bool:
    """multiprocessing's resource tracker: it unlinks the named semaphores of the processes it
    serves and ends by itself once pwh's end of its pipe closes; killed, it is started again and
    prints tracebacks for the names it never saw."""
    try:
        return b"multiprocessing.resource_tracker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def stop_descendants() -> list[int]:
    """SIGKILL every process below this one, by PID (but the resource tracker, which ends with
    pwh); the PIDs signalled. Processes left as zombies are reaped by whoever waits for them
    (``subprocess``), or by init once pwh exits."""
    stopped: list[int] = []
    for _ in range(3):  # a child may fork while its siblings are being stopped
        found = [pid for pid in descendants() if pid not in stopped and not _left_to_exit(pid)]
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                stopped.append(pid)
            except (ProcessLookupError, PermissionError):
                continue
    return stopped


def install() -> Callable[[], None]:
    """Put the Ctrl-C handling in place over the current SIGINT handler (main thread only) and
    return what puts the previous one back.

    The first SIGINT stops every descendant, then calls the previous handler (which raises
    ``KeyboardInterrupt`` and may count the signal: :mod:`pwh._suts.faults`); a second one stops
    the descendants again and ends the process with 130 straight away."""
    global _interrupted
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN or getattr(previous, "_pwh_ctrl_c", False):
        return lambda: None
    _interrupted = False
    _finished.clear()

    def handler(signum: int, frame: FrameType | None) -> None:
        global _interrupted, _redeliver, _ended_by
        if _redeliver:
            if _running(frame, unraisable.__code__):
                # Inside the hook that re-arms (the main thread was held there past the delay):
                # what the hook itself raises is dropped without reaching any hook, so try again.
                _redeliver_later()
                return
            _redeliver = False
            raise KeyboardInterrupt
        stop_descendants()
        if _interrupted:
            _exit_now()
        _interrupted = True
        _ended_by = _ended_by or signum
        threading.Thread(target=_last_resort, name="pwh-ctrl-c", daemon=True).start()
        if callable(previous):
            previous(signum, frame)
        raise KeyboardInterrupt

    handler._pwh_ctrl_c = True  # type: ignore[attr-defined]
    signal.signal(signal.SIGINT, handler)

    def ending(signum: int, frame: FrameType | None) -> None:
        """SIGTERM, SIGHUP: what a Ctrl-C does, without counting as one (no SIGINT came)."""
        global _interrupted, _ended_by
        stop_descendants()
        if _interrupted:
            _exit_now()
        _interrupted = True
        _ended_by = signum
        threading.Thread(target=_last_resort, name="pwh-ctrl-c", daemon=True).start()
        raise KeyboardInterrupt

    replaced = {}
    for sig in ENDING_SIGNALS:
        before = signal.getsignal(sig)
        if before == signal.SIG_DFL or (before is not None and before != signal.SIG_IGN and not callable(before)):
            replaced[sig] = before
            signal.signal(sig, ending)
    previous_hook = sys.unraisablehook

    def unraisable(info: Any) -> None:
        global _redeliver
        if _interrupted and isinstance(info.exc_value, KeyboardInterrupt):
            _redeliver = True
            _redeliver_later()
            return
        previous_hook(info)

    sys.unraisablehook = unraisable

    def restore() -> None:
        global _interrupted, _redeliver, _ended_by
        _finished.set()
        _interrupted = _redeliver = False  # the handling is gone: a later run in this process starts clean
        _ended_by = 0
        for sig, before in replaced.items():
            if signal.getsignal(sig) is ending:
                signal.signal(sig, before)
        if sys.unraisablehook is unraisable:
            sys.unraisablehook = previous_hook
        if signal.getsignal(signal.SIGINT) is handler:
            signal.signal(signal.SIGINT, previous)

    return restore


def _redeliver_later() -> None:
    """Raise the dropped ``KeyboardInterrupt`` again from another thread, a moment later: the main
    thread takes it once it is out of the callback that dropped it (raised there, it would be
    dropped again)."""
    later = threading.Timer(REDELIVER_AFTER_S, _thread.interrupt_main)
    later.daemon = True
    later.start()


def _running(frame: FrameType | None, code: Any) -> bool:
    """Whether ``code`` is on the main thread's stack at ``frame`` (where a signal handler ran)."""
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


@contextmanager
def children_ignore_sigint() -> Iterator[None]:
    """Processes started inside this block have SIGINT blocked for life (a signal mask survives
    fork and exec, and Python never unblocks it): a Ctrl-C at the terminal reaches the whole
    process group, and a child would print its own traceback while pwh stops it; pwh stops
    them by PID instead. In pwh the signal is only *held* meanwhile: one that arrives inside the
    block is delivered by the time it ends (another thread may take it sooner), never lost.
    Outside the main thread (where Python's handlers run) a no-op."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def interrupted() -> bool:
    """Whether a SIGINT (or SIGTERM, SIGHUP) has arrived since :func:`install` (and the handling is
    still in place)."""
    return _interrupted


def terminated() -> bool:
    """Whether pwh is ending for a SIGTERM or SIGHUP (not a Ctrl-C) since :func:`install`."""
    return _ended_by in ENDING_SIGNALS


def exit_code() -> int:
    """The status pwh ends with for the signal that ends it: 128 + its number (130 for a Ctrl-C)."""
    return 128 + int(_ended_by) if _ended_by in ENDING_SIGNALS else EXIT_INTERRUPTED


def message() -> str:
    """The one line pwh prints as it ends for that signal."""
    if _ended_by in ENDING_SIGNALS:
        return f"pwh: terminated ({signal.Signals(_ended_by).name})"
    return "pwh: interrupted"


def raise_if_interrupted() -> None:
    """A safe point: raise ``KeyboardInterrupt`` if a Ctrl-C has come since :func:`install` (its
    own may have been dropped where Python could not raise it). Only before new work starts:
    never in a clean-up."""
    if _interrupted:
        raise KeyboardInterrupt


def exit_now_if_interrupted(code: int) -> None:
    """Run as the program, after the command returned ``code``: for a Ctrl-C, run the exit handlers,
    flush, and end with 130 at once, without the interpreter's shutdown. A soak whose SIGINT
    landed in the middle of an import was seen to print its one line and then die *by* SIGINT
    (status -2) in that shutdown, about once in fifteen; this leaves no such path."""
    if code not in EXIT_CODES:
        return
    import atexit

    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _last_resort() -> None:
    """Started by the first SIGINT: unless the command has returned within :data:`GRACE_S`
    seconds (its ``KeyboardInterrupt`` was dropped, or a clean-up hangs), end pwh with 130."""
    if _finished.wait(GRACE_S):
        return
    stop_descendants()
    _exit_now()


def _exit_now() -> None:
    try:
        sys.stderr.write(message() + "\n")
        sys.stderr.flush()
    finally:
        os._exit(exit_code())
