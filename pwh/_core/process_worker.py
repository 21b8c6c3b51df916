"""The worker half of the process runner: what runs in the forked worker process (the wire
format's encoder, the call loop, the clean-up after each call) and the /proc helpers the host
also uses to kill a worker's descendants. It runs where the host's coverage and tracers do not
reach; tests/core/test_isolation.py exercises it directly and through real workers.
"""

from __future__ import annotations

import ctypes
import gc
import json
import math
import os
import select
import signal
import struct
import time
import types
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from pwh._core.canonical import MAX_DEPTH, QuickCopyUnsure, quick_copy
from pwh._core.freeze import freeze

# -- wire format ---------------------------------------------------------------------------------
#
# host -> worker: one frame per call: 4-byte length, the call's 16-byte token (random, made by the
# host for this call alone), then JSON [producer index, byte budget, input, more]; ``more`` says
# another call of the batch follows at once (the worker stays awake for it). A frame of length 0
# says a batch is coming (the worker stays awake for it, see _stay_awake).
# worker -> host: first the executor's PID (4 bytes, before any call), then one frame per call:
# kind (1 byte), the call's token, length, then the value's JSON text. The host takes a frame as
# the answer to the call it is waiting for only when it carries that call's token.

_CALL = struct.Struct("<I16s")
_HEAD = struct.Struct("<c16sI")
_HELLO = struct.Struct("<i")
_PLAIN, _TAGGED, _RAISED = b"P", b"T", b"X"
TAG = "\u0000pwh"  # the key of a tagged node; a genuine dict holding it is sent tagged itself
_MAX_FRAME = 64 * 1024 * 1024
# After a wake frame, how long the worker watches its pipe on the CPU before it sleeps again.
_WAKE_SPIN_S = 0.002

# Non-JSON built-in types whose name a rejection spells out (pwh/_core/canonical.py's list, same
# order): the host rebuilds one of the same type so the same words come out.
_NAMED: dict[type, str] = {
    set: "set",
    frozenset: "frozenset",
    bytes: "bytes",
    bytearray: "bytearray",
    memoryview: "memoryview",
    complex: "complex",
    range: "range",
    type: "type",
    types.GeneratorType: "generator",
    types.FunctionType: "function",
    types.BuiltinFunctionType: "builtin_function_or_method",
    types.ModuleType: "module",
}


def encode_value(value: Any, max_bytes: int) -> tuple[bytes, bytes]:
    """``(kind, JSON bytes)`` for a provider's value, in the worker. Plain JSON (exact types,
    within ``max_bytes`` by the host's own lower-bound count) goes as it is; anything else tagged."""
    try:
        plain = quick_copy(value, 0, [max_bytes])
        return _PLAIN, json.dumps(plain, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except (QuickCopyUnsure, UnicodeEncodeError, RecursionError, ValueError, TypeError):
        pass
    budget = [max_bytes]
    tagged = _tag(value, 0, budget)
    return _TAGGED, json.dumps(tagged, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _charge(budget: list[int], n: int) -> bool:
    budget[0] -= n
    return budget[0] < 0


def _tag(value: Any, depth: int, budget: list[int]) -> Any:
    """The value as JSON with tagged nodes, charging the same lower bound ``to_plain`` charges and
    stopping (an ``over`` tag) exactly where it would stop on the budget; deeper than core reads, a
    ``deep`` tag (``to_plain`` refuses any node there whatever it is)."""
    if depth > MAX_DEPTH:
        return {TAG: "deep"}
    kind = type(value)
    if kind is str:
        return {TAG: "over"} if _charge(budget, len(value) + 2) else value
    if value is None or kind is bool:
        return {TAG: "over"} if _charge(budget, 4) else value
    if kind is int:
        if value.bit_length() > 64:
            return {TAG: "bigint"}
        return {TAG: "over"} if _charge(budget, 1) else value
    if kind is float:
        if math.isnan(value) or math.isinf(value):
            return {TAG: "float", "v": repr(value)}
        return {TAG: "over"} if _charge(budget, 1) else value
    if kind is MappingProxyType:
        referents = gc.get_referents(value)
        if len(referents) == 1 and type(referents[0]) is dict:
            value, kind = referents[0], dict
        else:
            return {TAG: "proxy"}
    if kind is dict:
        try:
            items = list(value.items())
        except RuntimeError:
            return {TAG: "changing"}
        if _charge(budget, 2):
            return {TAG: "over"}
        plain_keys = all(type(k) is str for k, _ in items) and TAG not in value
        pairs: list[list[Any]] = []
        for key, item in items:
            if type(key) is str:
                if _charge(budget, len(key) + 3):
                    pairs.append([key, {TAG: "over"}])
                    break
                out_key: Any = key
            else:
                out_key = _key(key)
            pairs.append([out_key, _tag(item, depth + 1, budget)])
            if budget[0] < 0:
                break
        if plain_keys:
            return {k: v for k, v in pairs}
        return {TAG: "dict", "items": pairs}
    if kind is list or kind is tuple:
        if _charge(budget, 2):
            return {TAG: "over"}
        out: list[Any] = []
        for item in value:
            out.append(_tag(item, depth + 1, budget))
            if budget[0] < 0:
                break
        return out
    return {TAG: "other", "t": _NAMED.get(kind, "")}


def _key(key: Any) -> Any:
    kind = type(key)
    if key is None or kind in (bool, int) or (kind is float and not (math.isnan(key) or math.isinf(key))):
        if kind is int and key.bit_length() > 64:
            return {TAG: "other", "t": ""}
        return {TAG: "key", "v": key}
    return {TAG: "other", "t": _NAMED.get(kind, "")}


# -- the worker (runs in the forked child) -------------------------------------------------------

_LIBC: Any = None
_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36


def _prctl(option: int, value: int) -> None:
    global _LIBC
    try:
        if _LIBC is None:
            _LIBC = ctypes.CDLL(None, use_errno=True)
        _LIBC.prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks: list[bytes] = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _stay_awake(fd: int) -> None:
    """Watch ``fd`` on the CPU, for a short while, until it is readable: told a batch is on its
    way, a worker that sleeps in ``read`` costs the hand-over a wake-up (tens of microseconds on a
    virtual machine); one that is already running reads the batch as it arrives."""
    deadline = time.monotonic() + _WAKE_SPIN_S
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0)[0]:
            return


def _children(pid: int) -> list[int]:
    """The live children of ``pid``, read from /proc (no per-task ``children`` file needed)."""
    out: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            out.append(int(name))
    return out


def _descendants(root: int) -> list[int]:
    found: list[int] = []
    todo = [root]
    while todo:
        kids = _children(todo.pop())
        found.extend(kids)
        todo.extend(kids)
    return found


def _wait_dead(pids: list[int], within: float = 2.0) -> None:
    """Wait (briefly) until each SIGKILLed process is really gone: a kill is delivered
    asynchronously, and 'nothing outlives the call' should hold when the call returns."""
    deadline = time.monotonic() + within
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    state = handle.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                break
            if state in (b"Z", b"X"):
                break
            time.sleep(0.001)


def _reap_leftovers(me: int) -> None:
    """Kill whatever the provider left running (the worker is a subreaper: orphans are ours)."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # no child at all: the usual case, one system call
        if pid:
            continue
        for kid in _descendants(me):
            try:
                os.kill(kid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


# Signals the supervisor ignores (a provider's os.kill(os.getppid(), ...) lands on it, not on the
# host); SIGKILL and SIGSTOP cannot be ignored: a killed supervisor takes its executor with it
# (the call is producer_failed), a stopped one stops nothing of the host's.
_SUPERVISOR_IGNORES = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGTSTP", "SIGTTIN", "SIGTTOU")
    if hasattr(signal, name)
)


def _worker_main(producers: list[Callable[[Any], Any]], req: int, resp: int, host: int) -> None:
    """The forked worker: a *supervisor* that sits between the host and the *executor* (its own
    child, where providers run). It starts a session of its own (so no process group or terminal
    signal of the provider's reaches the host's), ignores the signals a provider could send its
    parent, dies with the host, and ends (with everything below it) when its executor ends."""
    try:
        os.setsid()
    except OSError:
        pass
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != host:  # the host died before the death signal was armed
        os._exit(0)
    saved = {sig: signal.signal(sig, signal.SIG_IGN) for sig in _SUPERVISOR_IGNORES}
    supervisor = os.getpid()
    executor = os.fork()
    if executor == 0:
        try:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != supervisor:
                os._exit(0)
            for sig, handler in saved.items():
                signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
            _serve(producers, req, resp)
        finally:
            os._exit(0)
    os.close(req)
    os.close(resp)
    while True:
        try:
            pid, _status = os.waitpid(executor, 0)
        except ChildProcessError:
            break
        if pid == executor:
            break
    _reap_leftovers(supervisor)
    os._exit(0)


def _serve(producers: list[Callable[[Any], Any]], req: int, resp: int) -> None:
    """The executor's loop: one call at a time, each answered with its own token."""
    me = os.getpid()
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    for sig in (signal.SIGTERM, signal.SIGALRM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    home = os.open(".", os.O_RDONLY)
    _write_all(resp, _HELLO.pack(me))
    while True:
        head = _read_exact(req, _CALL.size)
        if head is None:
            os._exit(0)
        size, token = _CALL.unpack(head)
        if size == 0:
            _stay_awake(req)
            continue
        body = _read_exact(req, size)
        if body is None:
            os._exit(0)
        which, max_bytes, argument, more = json.loads(body)
        del body, head
        try:
            value = producers[which](freeze(argument))
            if os.getpid() != me:
                os._exit(0)  # a forked copy returning from the provider: it never answers
            kind, data = encode_value(value, max_bytes)
        except BaseException:
            if os.getpid() != me:
                os._exit(0)
            kind, data = _RAISED, b""
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            signal.setitimer(signal.ITIMER_PROF, 0)
            os.fchdir(home)
            _reap_leftovers(me)
        except BaseException:
            os._exit(1)
        _write_all(resp, _HEAD.pack(kind, token, len(data)) + data)
        if more:
            _stay_awake(req)


def outlived(executor: int) -> bool:
    """Whether anything of the executor's last call is still running besides its main thread: a
    thread (the link count of ``/proc/PID/task`` is 2 + the number of threads: one ``stat``). The
    executor kills and reaps every process a provider left before it answers. Read by the host
    after each answer."""
    try:
        return os.stat(f"/proc/{executor}/task").st_nlink != 3
    except OSError:
        return True  # gone, or not ours to read: not to be trusted with another call
