"""Run provider calls in a worker process the dispatcher can kill: the reference's default runner.

A thread cannot be stopped: a provider inside one C call that holds the interpreter lock, a call
to ``os._exit``, ``os.fork``, ``signal.alarm``, ``os.chdir`` or ``_thread.interrupt_main`` reaches
the whole host. A process boundary holds against all of them, so providers run in a *worker*:

- **Forked, pre-started, reused.** Providers are arbitrary callables installed in the host (often
  closures), which only ``fork`` can carry into another process. A worker is forked the first time
  a batch names a producer the current worker does not know (so, in practice, after the registry
  last changed) and then serves every later batch while it is healthy: one fork per registry
  change, not per dispatch. What a provider keeps between calls lives in the worker (and is lost
  when the worker is replaced); what the host changes after the fork is not seen by the provider.
- **One call at a time, each with its own token.** The host hands the worker one call (the
  producer's index, its plain input as JSON, its byte budget) with a random 16-byte token made
  for that call alone; the worker answers with the token, and a frame without the awaited token
  is dropped (its worker gets no further call), so no call's answer is ever taken for another's.
  The next call is handed over as soon as an answer is in, so it runs while the host judges that
  answer. Each call's limit counts from its hand-over.
- **Killed and replaced.** A call that overruns its ``timeout_ms`` gets the worker's whole process
  group (and every descendant it adopted) SIGKILLed and reaped, ``producer_timed_out``, and the
  rest of the batch goes to a fresh worker. A worker that dies (``os._exit``, a signal, a crash)
  ends its call as ``raised`` (the dispatcher's ``producer_failed``) and is replaced the same way.
  Nothing is left behind: no thread, no process, no zombie.
- **Answers cross back as data.** The worker sends the provider's value as JSON text, with tags
  for whatever is not plain JSON (NaN, a set, a 65-bit integer, a non-string key, a subclass, a
  value nested deeper than core reads, a value past its byte budget), decoded in the host into a
  value that the host's own checks judge exactly as they would have judged the original (same
  path, same reason). Nothing the worker says is trusted beyond being a value to validate
  (RFC §9); nothing is unpickled. The input is handed to the provider deep-frozen, as in the host.
- **After each call** the worker cancels the provider's timers, restores its working directory and
  SIGKILLs any process the provider left running (it is a child subreaper, so daemonised
  grandchildren are its children too); a forked copy of the worker that returns from the provider
  exits at once and never answers.
- **A supervisor between host and provider.** The host's child is a *supervisor* that starts a
  session of its own (``setsid``: its own process group, no terminal), ignores the signals a
  child could send its parent, and dies with the host (``PR_SET_PDEATHSIG``); providers run in
  its child, the *executor*, which dies with it. So a provider's ``os.kill(os.getppid(), ...)``
  or ``os.killpg(0, ...)`` never reaches the host, and a Ctrl-C at the terminal reaches the host
  alone. Every live worker is killed at exit and when its runner is garbage-collected.
- **Nothing of a call outlives it.** After each answer the host reads ``/proc`` for the executor:
  a thread besides its main one, or a child, gets the worker killed by PID and replaced before
  the next call (what a provider can still do by other roads: docs/reliability.md, "Provider isolation").

Linux-first: the descendants' clean-up uses ``prctl`` and ``/proc``; where ``fork`` is missing
(or ``PWH_RUNNER=thread``) :func:`default_runner` gives the thread runner.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import os
import select
import signal
import sys
import time
import types
import weakref
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

from pwh._core.process_worker import (
    _CALL,
    _HEAD,
    _HELLO,
    _MAX_FRAME,
    _PLAIN,
    _RAISED,
    _TAGGED,
    TAG,
    _descendants,
    _wait_dead,
    _worker_main,
    _write_all,
    outlived,
)
from pwh._core.runner import RAISED, RETURNED, TIMED_OUT, Call, CallVerdict, ThreadRunner


class _Foreign:
    """A value the worker saw but that is not plain JSON and has no named built-in type."""

    __slots__ = ()


def _sample_generator() -> Any:
    yield None


_SAMPLES: dict[str, Callable[[], Any]] = {
    "set": set,
    "frozenset": frozenset,
    "bytes": bytes,
    "bytearray": bytearray,
    "memoryview": lambda: memoryview(b""),
    "complex": complex,
    "range": lambda: range(0),
    "type": lambda: _Foreign,
    "generator": _sample_generator,
    "function": lambda: lambda: None,
    "builtin_function_or_method": lambda: len,
    "module": lambda: types.ModuleType("m"),
}


def decode_value(kind: bytes, data: bytes, max_bytes: int) -> Any:
    """The host's reading of an answer: a value its checks judge as they would the original."""
    if kind == _PLAIN:
        return json.loads(data)
    return json.loads(data, object_hook=lambda node: _untag(node, max_bytes))


def _untag(node: dict[str, Any], max_bytes: int) -> Any:
    tag = node.get(TAG)
    decode = _UNTAG.get(tag) if type(tag) is str and len(node) <= 2 else None
    return node if decode is None else decode(node, max_bytes)


class _ForeignMapping(dict):
    """Stands for the mapping behind a read-only view that was not an exact dict."""


# What each tag decodes to: a value the host's checks judge as they would have judged the original.
_UNTAG: dict[str, Callable[[dict[str, Any], int], Any]] = {
    "dict": lambda node, _: {(k if type(k) is not list else _Foreign()): v for k, v in node.get("items", [])},
    "key": lambda node, _: node.get("v"),
    "over": lambda _, limit: "x" * (limit + 1),  # the host's budget runs out here, as it did in the worker
    "deep": lambda node, _: None,  # beyond the depth to_plain reads: refused there whatever it is
    "bigint": lambda node, _: 1 << 65,
    "float": lambda node, _: float(node.get("v", "nan")),
    "proxy": lambda node, _: MappingProxyType(_ForeignMapping()),
    "changing": lambda node, _: _Foreign(),
    "other": lambda node, _: _SAMPLES.get(node.get("t", ""), _Foreign)(),
}


# -- host side -----------------------------------------------------------------------------------

# How long the host watches a worker's pipe on the CPU before it sleeps in poll().
_ANSWER_SPIN_S = 0.0002
_LIVE: dict[int, _Worker] = {}  # every worker any runner started and has not reaped
_ALL_FDS: set[int] = set()  # the host's ends of every worker's pipes (closed in each new worker)


class _Worker:
    """The host's handle on one worker: its supervisor (the host's child, ``pid``) and, once it
    has said hello, the executor below it (``executor``), where providers run."""

    def __init__(self, producers: list[Callable[[Any], Any]]) -> None:
        self.producers = producers
        self.index = {id(p): i for i, p in enumerate(producers)}
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        host = os.getpid()
        for stream in (sys.stdout, sys.stderr):  # or the worker would inherit, and print, the host's buffer
            with contextlib.suppress(Exception):  # a closed or odd stream: nothing to lose
                stream.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child; measured through its answers
            try:
                for fd in _ALL_FDS:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
                os.close(req_w)
                os.close(resp_r)
                _worker_main(producers, req_r, resp_w, host)
            finally:
                os._exit(0)
        os.close(req_r)
        os.close(resp_w)
        self.pid = pid
        self.executor: int | None = None  # its PID, from the hello the executor sends first
        self.req, self.resp = req_w, resp_r
        _ALL_FDS.update((req_w, resp_r))
        self.pidfd: int | None = os.pidfd_open(pid)  # readable once the supervisor has exited (Linux 5.3+)
        _ALL_FDS.add(self.pidfd)
        os.set_blocking(resp_r, False)
        self.poller = select.poll()
        self.poller.register(resp_r, select.POLLIN | select.POLLHUP | select.POLLERR)
        self.poller.register(self.pidfd, select.POLLIN)
        self.buffer = b""
        self.dead = False
        self.busy = False  # a call was handed over and its answer not read
        self.tainted = False  # a frame without the awaited token came: never trusted with another call
        _LIVE[pid] = self

    def send(self, payload: bytes, token: bytes = bytes(16)) -> bool:
        try:
            _write_all(self.req, _CALL.pack(len(payload), token) + payload)
            return True
        except OSError:
            return False

    def wake(self) -> None:
        """Tell the worker a batch is coming (an empty frame), so it is running when it comes. A
        worker found dead (the write fails) is replaced when the batch starts, as always."""
        self.dead = not self.send(b"") or self.dead

    def answer(self, deadline: float, token: bytes) -> tuple[bytes, bytes] | None:
        """The answer to the call ``token`` names, or None when the deadline passed or the worker
        died first. A frame with another token is dropped (and the worker marked tainted): no
        call's answer is ever taken for another's. An answer already waiting in the pipe when the
        host looks counts (the host may have been busy judging the previous one), as it does for
        the thread runner. The host watches the pipe on the CPU for a short while first (most
        answers come within it) and then sleeps in ``poll``."""
        spin_until = time.monotonic() + _ANSWER_SPIN_S
        while True:
            frame = self._frame()
            while frame is not None and frame[1] != token:
                self.tainted = True
                frame = self._frame()
            if frame is not None:
                return frame[0], frame[2]
            if self.dead:
                return None
            now = time.monotonic()
            if now < min(spin_until, deadline):
                self._pull(exited=False)
                continue
            remaining = deadline - now
            events = self.poller.poll(max(0, math.ceil(remaining * 1000)))
            if events:
                self._pull(exited=any(fd == self.pidfd for fd, _event in events))
            elif remaining <= 0:
                return None

    def _pull(self, *, exited: bool) -> None:
        """Read all the pipe holds now (it is non-blocking). The worker is dead at end of file, or
        when it has exited and the pipe is empty (a process it left may still hold the pipe open)."""
        while True:
            try:
                chunk: bytes | None = os.read(self.resp, 1 << 20)
            except BlockingIOError:
                chunk = None
            if not chunk:
                self.dead = self.dead or chunk == b"" or exited
                return
            self.buffer += chunk

    def _frame(self) -> tuple[bytes, bytes, bytes] | None:
        if self.executor is None:
            if len(self.buffer) < _HELLO.size:
                return None
            self.executor = _HELLO.unpack_from(self.buffer)[0]
            self.buffer = self.buffer[_HELLO.size :]
        if len(self.buffer) < _HEAD.size:
            return None
        kind, token, size = _HEAD.unpack_from(self.buffer)
        if size > _MAX_FRAME or kind not in (_PLAIN, _TAGGED, _RAISED):
            self.dead = True  # not our protocol (something else wrote to the pipe): not trusted
            self.buffer = b""
            return None
        end = _HEAD.size + size
        if len(self.buffer) < end:
            return None
        data = self.buffer[_HEAD.size : end]
        self.buffer = self.buffer[end:]
        return kind, token, data

    def outlived(self) -> bool:
        """Whether anything of the call just answered still runs in the executor (a thread, a
        child): then the worker is not given another call."""
        return self.executor is None or outlived(self.executor)

    def kill(self) -> None:
        """SIGKILL the worker (supervisor, executor), its process group and every descendant;
        reap what is the host's to reap."""
        _LIVE.pop(self.pid, None)
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGSTOP)  # freeze the group so nothing forks meanwhile
        family = _descendants(self.pid)
        self._end(family)
        self._close_fds()

    def stop(self) -> None:
        """End an idle worker: its executor reads end-of-file and exits, then its supervisor; both
        are killed if they do not at once."""
        _LIVE.pop(self.pid, None)
        try:
            os.close(self.req)
        except OSError:
            pass
        _ALL_FDS.discard(self.req)
        self.req = -1
        if not self._reap(within=0.5):
            self._end([self.executor] if self.executor is not None else _descendants(self.pid))
        self._close_fds()

    def _end(self, family: list[int]) -> None:
        """SIGKILL the worker, ``family`` and the worker's process group; reap the worker, then
        whatever of ``family`` was handed to the host (pwh is a child subreaper when it runs as
        the program), so no zombie is left."""
        for pid in [*family, self.pid]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)
        self._reap()
        _wait_dead(family)
        for pid in family:
            with contextlib.suppress(OSError):
                os.waitpid(pid, os.WNOHANG)

    def _reap(self, within: float = 5.0) -> bool:
        """Reap the (killed or ending) worker; False if it is still running after ``within``
        seconds. The wait sleeps on the worker's pidfd, readable the moment it has exited, rather
        than waking every millisecond to ask (a worker's exit takes about one)."""
        deadline = time.monotonic() + within
        exited = select.poll()
        if self.pidfd is not None:
            exited.register(self.pidfd, select.POLLIN)
        while True:
            try:
                pid, _status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:  # pragma: no cover - a process stuck in the kernel
                return False
            if self.pidfd is None:
                time.sleep(0.001)
            else:
                exited.poll(max(1, math.ceil(min(remaining, 0.05) * 1000)))

    def _close_fds(self) -> None:
        for fd in (self.req, self.resp, self.pidfd):
            if fd is not None and fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
                _ALL_FDS.discard(fd)
        self.req = self.resp = -1
        self.pidfd = None


def _kill_all() -> None:
    for worker in list(_LIVE.values()):
        worker.stop()


atexit.register(_kill_all)


class ProcessBatch:
    """The calls of one dispatch, answered in order by :meth:`next_verdict`. The worker is handed
    one call at a time, with a token of its own; the next call is handed over as soon as the
    previous answer is in, so it runs while the host judges that answer."""

    def __init__(self, runner: ProcessRunner, calls: Sequence[Call]) -> None:
        self._runner = runner
        self._calls = list(calls)
        self._budgets = [_budget(call) for call in self._calls]
        self._next = 0
        self._worker: _Worker | None = None
        self._token = b""
        self._started = 0.0  # when the call self._next was handed over
        self._retired: list[_Worker] = []  # workers something of a call outlived in, to kill
        if self._calls:
            self._hand_over(0)

    def next_verdict(self) -> CallVerdict:
        index = self._next
        self._next += 1
        worker = self._worker
        assert worker is not None  # a batch with calls always has one
        frame = worker.answer(self._started + self._calls[index][2] / 1000.0, self._token)
        if frame is not None:
            worker.busy = False
            # Something of the call runs on (a thread, a frame it wrote itself): the worker gets no
            # other call, and is killed once the next call is handed to a fresh one (or the batch
            # closes): it can reach nothing of that call, and the host has the next call running first.
            if worker.tainted or worker.buffer or worker.outlived():
                self._runner._detach(worker)
                self._retired.append(worker)
                self._worker = None
            if index + 1 < len(self._calls):
                self._hand_over(index + 1)
                self._kill_retired()
            kind, data = frame
            if kind == _RAISED:
                return CallVerdict(RAISED)
            try:
                return CallVerdict(RETURNED, decode_value(kind, data, self._budgets[index]))
            except (ValueError, RecursionError, TypeError):
                return CallVerdict(RAISED)  # not data the host can read: the producer's failure
        died = worker.dead
        self._runner._replace(worker)
        self._worker = None
        if index + 1 < len(self._calls):
            self._hand_over(index + 1)
        return CallVerdict(RAISED if died else TIMED_OUT)

    def close(self) -> None:
        """Start nothing more of this batch: a worker still running any of it is killed (a crash,
        an error or a Ctrl-C mid-dispatch), so no producer outlives the dispatch that called it."""
        worker = self._worker
        if worker is not None and worker.busy:
            self._runner._replace(worker)
        self._worker = None
        self._kill_retired()

    def _kill_retired(self) -> None:
        while self._retired:
            self._retired.pop().kill()

    def _hand_over(self, index: int) -> None:
        worker = self._worker
        if worker is None:
            worker = self._worker = self._runner._worker_for([c[0] for c in self._calls[index:]])
        call = self._calls[index]
        payload = json.dumps(
            [worker.index[id(call[0])], self._budgets[index], call[1], index + 1 < len(self._calls)],
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode("utf-8")
        self._token = os.urandom(16)
        self._started = time.monotonic()
        worker.busy = True
        worker.dead = not worker.send(payload, self._token) or worker.dead  # a worker gone before the hand-over: its death shows at once


def _budget(call: Call) -> int:
    """The byte budget the host judges a call's answer by (``max_result_bytes``, the optional
    fourth item of a call); without one, the most any registration may have."""
    return call[3] if len(call) > 3 else DEFAULT_RESULT_BYTES


DEFAULT_RESULT_BYTES = 1 << 20


class ProcessRunner:
    """Calls producers in a forked worker process, killing and replacing it when one hangs or
    kills it. The default runner of the reference dispatcher (see the module's docstring)."""

    copies_input = True  # the input crosses as JSON and is frozen in the worker: the host need not copy it

    def __init__(self) -> None:
        self._worker: _Worker | None = None
        self._producers: list[Callable[[Any], Any]] = []
        self._known: dict[int, int] = {}
        self.abandoned = 0
        self.forks = 0
        self._holder: list[_Worker | None] = [None]  # the live worker, for the finaliser below
        self._finalizer = weakref.finalize(self, ProcessRunner._finish, self._holder)

    def wake(self) -> None:
        """A batch is about to start (its attempts are being counted): wake the worker now, so
        its wake-up overlaps the count's write instead of following the hand-over."""
        if self._worker is not None:
            self._worker.wake()

    def start(self, calls: Sequence[Call]) -> ProcessBatch:
        """Hand every call to the worker now; collect the verdicts with :meth:`ProcessBatch.next_verdict`."""
        return ProcessBatch(self, calls)

    def _worker_for(self, producers: list[Callable[[Any], Any]]) -> _Worker:
        worker = self._worker
        if worker is not None and (worker.dead or worker.busy or worker.tainted):
            self._replace(worker)
            worker = None
        fresh = [p for p in producers if id(p) not in self._known or self._producers[self._known[id(p)]] is not p]
        for producer in fresh:
            self._known[id(producer)] = len(self._producers)
            self._producers.append(producer)
        if worker is not None and not fresh:
            return worker
        if worker is not None:
            worker.stop()
        # Every producer ever named stays known (and referenced, so ids stay unique): a host that
        # installs a new producer per dispatch pays a fork per dispatch, whatever is forgotten.
        worker = self._worker = _Worker(list(self._producers))
        self._holder[0] = worker
        self.forks += 1
        return worker

    def _replace(self, worker: _Worker) -> None:
        self._detach(worker)
        worker.kill()

    def _detach(self, worker: _Worker) -> None:
        """``worker`` serves no further call of this runner (it is killed by its caller)."""
        self.abandoned += 1
        if self._worker is worker:
            self._worker = None
            self._holder[0] = None

    @staticmethod
    def _finish(holder: list[_Worker | None]) -> None:
        worker = holder[0]
        if worker is not None:
            holder[0] = None
            worker.stop()

    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
            self._holder[0] = None


def fork_available() -> bool:
    return hasattr(os, "fork") and hasattr(os, "pidfd_open") and sys.platform.startswith("linux")


def default_runner() -> ThreadRunner | ProcessRunner:
    """The runner a dispatcher gets when none is given: the process runner where ``fork`` works
    (Linux), unless ``PWH_RUNNER=thread`` asks for the thread runner."""
    if os.environ.get("PWH_RUNNER", "").lower() == "thread" or not fork_available():
        return ThreadRunner()
    return ProcessRunner()
