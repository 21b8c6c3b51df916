"""Providers isolated for real: the reference's default runner puts every provider in a worker
process the dispatcher kills and replaces, so ``timeout_ms`` holds whatever the provider runs and
nothing it does reaches the host (SPEC §4 "timeout_ms is enforced for real"; "never, whatever a
hook does"). Each test is one way a provider tried to reach past its limit or into the host.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from pwh import (
    CanonicalError,
    Dispatcher,
    IntentKindCatalog,
    MemoryJournal,
    Profile,
    RegistrationRejected,
    Registry,
    SQLiteJournal,
    intent_id,
)
from pwh._core.canonical import to_plain
from pwh._core.process_runner import ProcessRunner, decode_value
from pwh._core.process_worker import _children, encode_value
from pwh._core.runner import RAISED, RETURNED, TIMED_OUT, ThreadRunner
from pwh._harness.examples import example_receipt, example_registration

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the process runner is Linux-first")

KIND = "x.note"
NOT_APPLICABLE = {"schema_version": "loopx_post_writeback_hook_result_v0", "status": "not_applicable", "intents": []}


def _registration(hook_id: str, timeout_ms: int = 10000) -> dict[str, Any]:
    """A registration of ``hook_id``; the default limit is for a provider that must not time out,
    generous (a loaded machine forks a fresh worker slowly); a test of a timeout names its own."""
    return example_registration(hook_id, intent_kinds=[KIND], budget={"timeout_ms": timeout_ms})


def _proposed(hook_input: Any, payload: dict[str, Any]) -> dict[str, Any]:
    did = hook_input["dispatch_id"]
    return {
        "schema_version": "loopx_post_writeback_hook_result_v0",
        "status": "proposed",
        "intents": [
            {
                "schema_version": "loopx_post_writeback_intent_v0",
                "intent_id": intent_id(did, KIND, "v0", payload),
                "hook_id": hook_input["hook_id"],
                "capability_id": hook_input["capability_id"],
                "source_dispatch_id": did,
                "intent_kind": KIND,
                "operation": "note",
                "policy_version": "v0",
                "payload": payload,
                "budget": {"max_attempts": 1, "max_result_bytes": 1024},
                "requested_write_scope": [],
                "failure_policy": "isolate",
                "grants_new_action_authority": False,
                "external_write_performed": False,
            }
        ],
    }


def _dispatcher(journal: Any = None, payload_schema: dict[str, Any] | None = None) -> tuple[Registry, Dispatcher]:
    catalog = IntentKindCatalog()
    catalog.register(KIND, payload_schema or {"type": "object"})
    registry = Registry(catalog)
    return registry, Dispatcher(registry, journal or MemoryJournal(), Profile(phase_enabled=True))


def _outcomes(outcome: Any) -> list[tuple[str, str, str | None]]:
    return [(h.hook_id, h.status, h.failure_code) for h in outcome.hooks]


def _timed_dispatch(d: Dispatcher) -> tuple[Any, float]:
    """One dispatch of a fresh receipt, and the seconds it took; the dispatcher closed after."""
    try:
        started = time.monotonic()
        out = d.dispatch(example_receipt(1))
        return out, time.monotonic() - started
    finally:
        d.close()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")


def _live_children() -> set[int]:
    return {p for p in _children(os.getpid()) if _alive(p)}


@pytest.fixture
def no_new_process() -> Any:
    """Whatever a test starts is gone when it ends (other tests' workers may still be alive)."""
    before = _live_children()
    yield before
    deadline = time.monotonic() + 30  # a hang guard: the loop ends as soon as they are gone
    while _live_children() - before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _live_children() - before


def test_the_default_runner_is_the_process_runner() -> None:
    _registry, d = _dispatcher()
    try:
        assert isinstance(d.runner, ProcessRunner)
    finally:
        d.close()


def test_a_provider_holding_the_interpreter_lock_times_out_at_its_limit() -> None:
    # One C call that never releases the GIL (a backtracking match of 2^30 steps, minutes of work):
    # a thread runner cannot even wake up to notice the deadline. The bound below is generous (a
    # loaded machine forks and reaps slowly) and still far short of the match's own time.
    registry, d = _dispatcher()
    registry.install(_registration("a.busy", 100), lambda i: (re.fullmatch(r"(a+)+$", "a" * 30 + "!"), NOT_APPLICABLE)[1])
    registry.install(_registration("z.witness"), lambda i: NOT_APPLICABLE)
    out, took = _timed_dispatch(d)
    assert _outcomes(out) == [("a.busy", "failed", "producer_timed_out"), ("z.witness", "not_applicable", None)]
    assert took < 30


def test_hung_providers_leak_no_thread_and_no_process(no_new_process: set[int]) -> None:
    registry, d = _dispatcher()
    registry.install(_registration("a.hangs", 5), lambda i: time.sleep(60))
    registry.install(_registration("z.witness"), lambda i: NOT_APPLICABLE)
    threads = threading.active_count()
    try:
        for n in range(15):
            out = d.dispatch(example_receipt(n))
            assert _outcomes(out) == [("a.hangs", "failed", "producer_timed_out"), ("z.witness", "not_applicable", None)]
        assert threading.active_count() == threads
        assert len(_live_children() - no_new_process) <= 1  # the one live worker
        assert d.runner.abandoned == 15
    finally:
        d.close()


def test_a_provider_interrupting_the_main_thread_fails_alone() -> None:
    import _thread

    def hostile(i: Any) -> Any:
        _thread.interrupt_main()
        time.sleep(0.05)
        return NOT_APPLICABLE

    registry, d = _dispatcher()
    registry.install(_registration("a.hostile"), hostile)
    registry.install(_registration("z.witness"), lambda i: NOT_APPLICABLE)
    try:
        out = d.dispatch(example_receipt(1))
        assert _outcomes(out) == [("a.hostile", "failed", "producer_failed"), ("z.witness", "not_applicable", None)]
        assert len(d.journal.records()) == 2
    finally:
        d.close()


def test_a_provider_that_exits_its_worker_is_producer_failed_and_the_worker_is_replaced(no_new_process: set[int]) -> None:
    registry, d = _dispatcher()
    registry.install(_registration("a.exits"), lambda i: os._exit(3))
    registry.install(_registration("z.witness"), lambda i: NOT_APPLICABLE)
    try:
        for n in range(2):
            out = d.dispatch(example_receipt(n))
            assert _outcomes(out) == [("a.exits", "failed", "producer_failed"), ("z.witness", "not_applicable", None)]
    finally:
        d.close()


def test_nothing_a_provider_forks_outlives_its_call(tmp_path: Path, no_new_process: set[int]) -> None:
    pids = tmp_path / "pids"

    def forks_like_r14(i: Any) -> Any:
        if os.fork() == 0:
            return NOT_APPLICABLE  # the copy carries on like any provider: it must never answer
        return NOT_APPLICABLE

    def daemonises(i: Any) -> Any:
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:  # the classic double fork: a daemon in its own session
                with open(pids, "a") as handle:
                    handle.write(f"{os.getpid()}\n")
                time.sleep(60)
            os._exit(0)
        time.sleep(0.2)
        return NOT_APPLICABLE

    def spawns(i: Any) -> Any:
        child = subprocess.Popen(["sleep", "60"])
        with open(pids, "a") as handle:
            handle.write(f"{child.pid}\n")
        return NOT_APPLICABLE

    registry, d = _dispatcher(journal=SQLiteJournal(tmp_path / "j.sqlite3"))
    registry.install(_registration("a.forks"), forks_like_r14)
    registry.install(_registration("b.daemon"), daemonises)
    registry.install(_registration("c.spawns"), spawns)
    registry.install(_registration("z.witness"), lambda i: NOT_APPLICABLE)
    try:
        out = d.dispatch(example_receipt(1))
        assert [h.status for h in out.hooks] == ["not_applicable"] * 4
        assert len(d.journal.records()) == 4
        left = [int(p) for p in pids.read_text().split()]
        assert len(left) == 2 and not [p for p in left if _alive(p)]
        worker = d.runner._worker
        assert _live_children() - no_new_process == {worker.pid}  # the worker's supervisor
        assert [p for p in _children(worker.pid) if _alive(p)] == [worker.executor]  # and its executor, alone
        assert not [p for p in _children(worker.executor) if _alive(p)]
    finally:
        d.close()


def test_a_copy_of_the_host_forked_on_the_thread_runner_exits_as_it_returns(tmp_path: Path, no_new_process: set[int]) -> None:
    """r14 as written (the provider shares the host's memory, so the host learns the copy's pid):
    on the thread runner the forked copy's only thread is the runner's worker, which used to wait
    for work forever holding the journal open. It exits as it returns from the provider."""
    forked: list[int] = []

    def forks(i: Any) -> Any:
        pid = os.fork()
        if pid:
            forked.append(pid)
        return NOT_APPLICABLE

    catalog = IntentKindCatalog()
    catalog.register(KIND, {"type": "object"})
    registry = Registry(catalog)
    d = Dispatcher(registry, SQLiteJournal(tmp_path / "j.sqlite3"), Profile(phase_enabled=True), runner=ThreadRunner())
    registry.install(_registration("a.forks"), forks)
    registry.install(_registration("z.witness"), lambda i: NOT_APPLICABLE)
    try:
        out = d.dispatch(example_receipt(1))
        assert _outcomes(out) == [("a.forks", "not_applicable", None), ("z.witness", "not_applicable", None)]
        assert len(forked) == 1
        deadline = time.monotonic() + 30  # a hang guard: the copy exits at once, or never
        while (ended := os.waitpid(forked[0], os.WNOHANG)) == (0, 0) and time.monotonic() < deadline:
            time.sleep(0.01)
        if ended == (0, 0):
            os.kill(forked[0], signal.SIGKILL)
            os.waitpid(forked[0], 0)
        assert ended[0] == forked[0] and os.WIFEXITED(ended[1]) and os.WEXITSTATUS(ended[1]) == 0  # by itself
        assert len(d.journal.records()) == 2
    finally:
        d.close()


def test_a_hung_provider_s_descendants_die_with_its_worker(tmp_path: Path) -> None:
    pids = tmp_path / "pids"

    def hangs_with_a_daemon(i: Any) -> Any:
        if os.fork() == 0:
            os.setsid()
            with open(pids, "a") as handle:
                handle.write(f"{os.getpid()}\n")
            time.sleep(60)
            os._exit(0)
        time.sleep(60)

    registry, d = _dispatcher()
    registry.install(_registration("a.hangs", 300), hangs_with_a_daemon)
    try:
        out = d.dispatch(example_receipt(1))
        assert _outcomes(out) == [("a.hangs", "failed", "producer_timed_out")]
        (pid,) = [int(p) for p in pids.read_text().split()]
        assert not _alive(pid)
    finally:
        d.close()


_HOST_SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time
    from pwh import Dispatcher, IntentKindCatalog, MemoryJournal, Profile, Registry
    from pwh._harness.examples import example_receipt, example_registration
    NA = {"schema_version": "loopx_post_writeback_hook_result_v0", "status": "not_applicable", "intents": []}
    CASES = {
        "alarm": lambda: signal.setitimer(signal.ITIMER_REAL, 0.05),
        "pthread_kill": lambda: signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM),
        "kill_parent": lambda: os.kill(os.getppid(), signal.SIGTERM) if False else os.kill(os.getpid(), signal.SIGKILL),
    }
    catalog = IntentKindCatalog(); catalog.register("x.note", {"type": "object"})
    registry = Registry(catalog)
    work = CASES[sys.argv[1]]
    registry.install(example_registration("a.hostile", intent_kinds=["x.note"]), lambda i: (work(), NA)[1])
    registry.install(example_registration("z.witness", intent_kinds=["x.note"]), lambda i: NA)
    d = Dispatcher(registry, MemoryJournal(), Profile(phase_enabled=True))
    out = d.dispatch(example_receipt(1))
    print([h.status for h in out.hooks], flush=True)
    time.sleep(0.3)  # the host carries on with its Turn
    print("host alive", flush=True)
""")


@pytest.mark.parametrize("case", ["alarm", "pthread_kill", "kill_parent"])
def test_a_provider_s_signals_never_end_the_host(case: str) -> None:
    p = subprocess.run([sys.executable, "-c", _HOST_SCRIPT, case], check=False, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.splitlines()[-1] == "host alive"
    assert p.stdout.splitlines()[0].endswith("'not_applicable']")  # the witness


_CTRL_C_SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading, time
    from pwh import Dispatcher, IntentKindCatalog, MemoryJournal, Profile, Registry
    from pwh._harness.examples import example_receipt, example_registration
    NA = {"schema_version": "loopx_post_writeback_hook_result_v0", "status": "not_applicable", "intents": []}
    catalog = IntentKindCatalog(); catalog.register("x.note", {"type": "object"})
    registry = Registry(catalog)
    def slow(i):
        with open(sys.argv[1] + ".part", "w") as handle:  # whole before it is seen: the host waits for the name
            handle.write(str(os.getpid()))
        os.replace(sys.argv[1] + ".part", sys.argv[1])
        time.sleep(30)
    registry.install(example_registration("a.slow", intent_kinds=["x.note"], budget={"timeout_ms": 20000}), slow)
    registry.install(example_registration("b.next", intent_kinds=["x.note"]), lambda i: NA)
    d = Dispatcher(registry, MemoryJournal(), Profile(phase_enabled=True))
    def interrupt_once_called():  # not after a fixed time: a loaded machine may not have called it yet
        while not os.path.exists(sys.argv[1]):
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=interrupt_once_called, daemon=True).start()
    try:
        d.dispatch(example_receipt(1))
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(1)
""")


def test_ctrl_c_during_a_dispatch_is_keyboard_interrupt_and_leaves_no_process(tmp_path: Path) -> None:
    marker = tmp_path / "worker.pid"
    p = subprocess.run([sys.executable, "-c", _CTRL_C_SCRIPT, str(marker)], check=False, capture_output=True, text=True, timeout=60)
    assert p.returncode == 130, p.stderr[-2000:]
    assert "Traceback" not in p.stderr
    assert not _alive(int(marker.read_text()))


def test_a_provider_changing_directory_moves_nothing_of_the_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, elsewhere = tmp_path / "host", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(home)
    seen = tmp_path / "seen"

    def wanders(i: Any) -> Any:
        with open(seen, "a") as handle:
            handle.write(os.getcwd() + "\n")
        os.chdir(elsewhere)
        return _proposed(i, {"n": 1})

    journal = SQLiteJournal("sidecar.sqlite3")
    registry, d = _dispatcher(journal=journal)
    registry.install(_registration("a.wanders"), wanders)
    try:
        d.dispatch(example_receipt(1))
        d.dispatch(example_receipt(2))
    finally:
        d.close()
        journal.close()
    assert Path.cwd() == home
    assert seen.read_text().split() == [str(home), str(home)]  # each call starts where the host is


def test_a_relative_journal_path_is_resolved_when_the_journal_is_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    journal = SQLiteJournal("sidecar.sqlite3")
    try:
        os.chdir("/")  # whoever changes the process's directory later (a thread runner's provider)
        assert journal.path == tmp_path / "sidecar.sqlite3"  # what a reopen or a fault injection uses
        registry, d = _dispatcher(journal=journal)
        registry.install(_registration("a.one"), lambda i: _proposed(i, {"n": 1}))
        d.dispatch(example_receipt(1))
        d.close()
    finally:
        journal.close()
        monkeypatch.chdir(tmp_path)
    again = SQLiteJournal(tmp_path / "sidecar.sqlite3")
    try:
        assert len(again.records()) == 1
    finally:
        again.close()


def test_a_backtracking_payload_pattern_is_matched_in_linear_time() -> None:
    schema = {"type": "object", "properties": {"ref": {"type": "string", "pattern": "^(a+)+$"}}}
    registry, d = _dispatcher(payload_schema=schema)
    registry.install(_registration("a.hostile"), lambda i: _proposed(i, {"ref": "a" * 40 + "!"}))
    registry.install(_registration("b.honest"), lambda i: _proposed(i, {"ref": "a" * 40}))
    out, took = _timed_dispatch(d)
    assert _outcomes(out) == [("a.hostile", "failed", "result_contract_rejected"), ("b.honest", "proposed", None)]
    assert took < 30  # Python's re would take days on 41 characters (generous: a loaded machine)


def test_patterns_the_linear_engine_cannot_run_are_refused_at_registration() -> None:
    catalog = IntentKindCatalog()
    for pattern in (r"^(a)\1$", r"^a(?=b)", r"^(?<!x)a$"):
        with pytest.raises(RegistrationRejected):
            catalog.register(KIND, {"type": "object", "properties": {"ref": {"type": "string", "pattern": pattern}}})
    with pytest.raises(RegistrationRejected):
        catalog.register(KIND, {"type": "object", "patternProperties": {r"(?=x)": {}}})


def test_the_trailing_newline_idiom_keeps_its_meaning() -> None:
    schema = {"type": "object", "properties": {"ref": {"type": "string", "pattern": "^[a-z]{1,8}(?!\\n)$"}}}
    registry, d = _dispatcher(payload_schema=schema)
    registry.install(_registration("a.newline"), lambda i: _proposed(i, {"ref": "abc\n"}))
    registry.install(_registration("b.plain"), lambda i: _proposed(i, {"ref": "abc"}))
    try:
        out = d.dispatch(example_receipt(1))
    finally:
        d.close()
    assert _outcomes(out) == [("a.newline", "failed", "result_contract_rejected"), ("b.plain", "proposed", None)]


def test_a_write_to_the_input_fails_that_producer_in_the_worker_too() -> None:
    def mutates(i: Any) -> Any:
        i["source"]["todo_id"] = "changed"
        return NOT_APPLICABLE

    seen: list[Any] = []
    registry, d = _dispatcher()
    registry.install(_registration("a.mutates"), mutates)
    registry.install(_registration("b.reads"), lambda i: _proposed(i, {"todo": i["source"]["todo_id"]}))
    try:
        out = d.dispatch(example_receipt(1))
        seen = [h.intents[0]["payload"]["todo"] for h in out.hooks if h.intents]
    finally:
        d.close()
    assert [h.failure_code for h in out.hooks] == ["producer_failed", None]
    assert seen == [example_receipt(1)["todo_id"]]


class _Str(str):
    pass


def _cyclic() -> Any:
    loop: list[Any] = []
    loop.append(loop)
    return loop


def _deep(n: int) -> Any:
    value: Any = "bottom"
    for _ in range(n):
        value = [value]
    return value


HOSTILE_VALUES = {
    "nan": {"a": float("nan")},
    "infinity": [float("-inf")],
    "non-string key": {1: "one", "b": 2},
    "tuple key": {("a",): 1},
    "set": {"a": {1, 2}},
    "bytes": [b"x"],
    "function": {"f": len},
    "65-bit integer": {"n": 2**70},
    "huge integer": 10**5000,
    "str subclass": {"s": _Str("x")},
    "lone surrogate": {"s": "\udc80"},
    "tag lookalike": {"\u0000pwh": "dict", "items": []},
    "deep": _deep(200),
    "very deep": _deep(100_000),
    "cyclic": _cyclic(),
    "wide": list(range(10**6)),
    "long text then a set": ["x" * 70_000, {1}],
    "a set then long text": [{1}, "x" * 70_000],
    "read-only view": MappingProxyType({"a": [1, 2]}),
    "object": object(),
}


def _judged(value: Any, budget: int) -> tuple[str, Any]:
    try:
        return "plain", to_plain(value, max_bytes=budget)
    except CanonicalError as exc:
        return "refused", (exc.path, exc.reason)


@pytest.mark.parametrize("name", sorted(HOSTILE_VALUES))
def test_an_answer_crossing_the_process_boundary_is_judged_as_the_original(name: str) -> None:
    # What the host's checks say of the decoded answer (the first thing they do is to_plain) is
    # exactly what they would say of the provider's own value: same acceptance, path and reason.
    value = HOSTILE_VALUES[name]
    budget = 65536
    kind, data = encode_value(value, budget)
    assert len(data) < 32 * budget  # bounded whatever the provider returned (a digit costs 1 of the budget)
    assert _judged(decode_value(kind, data, budget), budget) == _judged(value, budget)


def test_plain_answers_cross_unchanged() -> None:
    value = {"a": [1, 2.5, True, None, "é\u2028"], "b": {"c": -0.0, "d": 2**63}}
    kind, data = encode_value(value, 65536)
    assert kind == b"P" and decode_value(kind, data, 65536) == value


def test_sequential_batches_reuse_one_worker_and_a_new_provider_gets_a_fresh_one(tmp_path: Path, no_new_process: set[int]) -> None:
    log = tmp_path / "log"

    def noting(tag: str) -> Any:
        def producer(argument: Any) -> Any:
            with open(log, "a") as handle:
                handle.write(f"{tag}:{os.getpid()}\n")
            return argument

        return producer

    a, b = noting("a"), noting("b")
    runner = ProcessRunner()
    try:
        for n in range(3):
            batch = runner.start([(a, n, 1000), (a, n + 10, 1000)])
            assert [batch.next_verdict().value, batch.next_verdict().value] == [n, n + 10]
            batch.close()
        assert runner.forks == 1
        batch = runner.start([(b, "x", 1000)])
        assert (batch.next_verdict().kind, runner.forks) == (RETURNED, 2)
        batch.close()
    finally:
        runner.close()
    pids = [line.split(":") for line in log.read_text().split()]
    assert len({pid for tag, pid in pids if tag == "a"}) == 1
    assert {pid for tag, pid in pids if tag == "b"}.isdisjoint({pid for tag, pid in pids if tag == "a"})


def test_a_woken_worker_serves_the_batch_that_follows_soon_or_late(no_new_process: set[int]) -> None:
    """The wake frame the dispatcher sends before counting attempts is not a batch: a worker told
    one is coming answers it whether it comes at once or after the worker went back to sleep,
    woken twice or woken and then replaced (a new provider) it serves the same."""
    runner = ProcessRunner()

    def same(v: object) -> object:
        return v

    try:
        runner.wake()  # no worker yet: nothing to wake
        for n, pause in enumerate([0.0, 0.01, 0.0]):
            batch = runner.start([(same, n, 1000)])
            assert batch.next_verdict().value == n
            batch.close()
            runner.wake()
            runner.wake()
            time.sleep(pause)
        batch = runner.start([(same, "after", 1000), (lambda v: v * 2, 4, 1000)])
        assert [batch.next_verdict().value, batch.next_verdict().value] == ["after", 8]
        batch.close()
        assert (runner.forks, runner.abandoned) == (2, 0)
    finally:
        runner.close()


def test_a_wake_to_a_dead_worker_is_noticed_and_the_next_call_gets_a_fresh_one() -> None:
    runner = ProcessRunner()
    try:
        batch = runner.start([(lambda v: v, 1, 1000)])
        assert batch.next_verdict().kind == RETURNED
        batch.close()
        os.kill(runner._worker.pid, 9)  # type: ignore[union-attr]
        time.sleep(0.05)
        runner.wake()  # to a dead worker: noticed, never raised
        batch = runner.start([(lambda v: v, 2, 1000)])
        assert batch.next_verdict().value == 2  # a fresh worker: the dead one was noticed
        batch.close()
        batch = runner.start([(lambda v: v, 3, 1000)])
        assert batch.next_verdict().value == 3
        batch.close()
    finally:
        runner.close()


def test_a_timed_out_call_hands_the_rest_to_a_fresh_worker() -> None:
    runner = ProcessRunner()
    try:
        batch = runner.start([(lambda _: 1, None, 1000), (lambda _: time.sleep(30), None, 100), (lambda _: 3, None, 1000)])
        verdicts = [batch.next_verdict() for _ in range(3)]
        batch.close()
        assert [(v.kind, v.value) for v in verdicts] == [(RETURNED, 1), (TIMED_OUT, None), (RETURNED, 3)]
        assert (runner.forks, runner.abandoned) == (2, 1)
    finally:
        runner.close()


def test_closing_mid_batch_kills_the_worker_running_it() -> None:
    runner = ProcessRunner()
    batch = runner.start([(lambda _: 1, None, 1000), (lambda _: time.sleep(30), None, 20000)])
    assert batch.next_verdict().kind == RETURNED
    worker = runner._worker.pid  # type: ignore[union-attr]
    started = time.monotonic()
    batch.close()
    assert time.monotonic() - started < 15 and not _alive(worker)  # not the provider's 30 s (generous: a loaded machine)
    runner.close()


def test_garbage_collected_runners_leave_no_worker(no_new_process: set[int]) -> None:
    import gc

    for _ in range(3):
        runner = ProcessRunner()
        batch = runner.start([(lambda _: 1, None, 1000)])
        assert batch.next_verdict().kind == RETURNED
        del runner, batch
    gc.collect()


def test_the_thread_runner_still_isolates_pure_python_providers() -> None:
    runner = ThreadRunner()
    try:
        batch = runner.start([(lambda _: (_ for _ in ()).throw(SystemExit(3)), None, 1000), (lambda _: json.dumps([1]), None, 1000)])
        assert [batch.next_verdict().kind, batch.next_verdict().kind] == [RAISED, RETURNED]
        batch.close()
    finally:
        runner.close()


def test_closing_a_thread_batch_waits_for_every_call_its_worker_already_started() -> None:
    """The worker runs ahead of the answers collected: with one answer read, it may have finished
    the second call and started the third. Closing the batch then (a crash mid-dispatch) must wait
    for that third call too, or a provider runs on after its dispatch has ended (the quick models
    on the thread runner saw its call land in the next receipt's dispatch)."""
    done: list[int] = []

    def quick(n: int) -> int:
        done.append(n)
        return n

    def slow(n: int) -> int:
        time.sleep(0.2)
        done.append(n)
        return n

    runner = ThreadRunner()
    try:
        batch = runner.start([(quick, 0, 1000), (quick, 1, 1000), (slow, 2, 1000), (quick, 3, 1000)])
        assert batch.next_verdict().value == 0
        deadline = time.monotonic() + 30  # a hang guard
        while 1 not in done and time.monotonic() < deadline:  # the worker is on the third call now
            time.sleep(0.005)
        batch.close()
        assert done == [0, 1, 2]  # the started call finished before close returned; the fourth never ran
        time.sleep(0.05)
        assert done == [0, 1, 2]
    finally:
        runner.close()
