"""`pwh soak --cluster ADDRESS` (pwh/_campaigns/distribute/cluster.py, the `cluster` extra): soaks spread
over a Dask distributed cluster, here a two-worker LocalCluster on loopback (no dashboard).

Each test starts and closes its own cluster and checks that no process it started is left. Skips
without Dask distributed: the README's test command installs only `.[test,loopx]` (.ci/run
installs the extra after it and runs this file on its own).
"""

from __future__ import annotations

import _thread
import contextlib
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

distributed = pytest.importorskip(
    "distributed", reason="the cluster extra (Dask distributed) is not installed: pip install -e '.[cluster]'"
)

from pwh._campaigns.counterexamples.trace import replay_trace  # noqa: E402
from pwh._campaigns.distribute import cluster as _cluster  # noqa: E402
from pwh._campaigns.distribute.cluster import TASK_DIR_PREFIX, ClusterUnavailable, TaskFailed, read_entries, soak_cluster  # noqa: E402
from pwh._campaigns.distribute.workers import worker_seed  # noqa: E402
from pwh._campaigns.soak import example_database_dir, soak  # noqa: E402
from pwh._harness.interrupt import descendants  # noqa: E402

QUIET = {"real_crashes": False, "database": True}


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _ours(before: set[int]) -> set[int]:
    """Processes below this one that were not there before (multiprocessing's resource tracker,
    which the cluster's spawned workers start and which ends with this process, aside)."""
    return {p for p in descendants() if p not in before and "multiprocessing.resource_tracker" not in _cmdline(p)}


def _wait_until(done: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A two-worker LocalCluster on loopback, one thread a worker; on the way out, closed, and
    every process it started gone. Counterexamples (and the example database) go to tmp_path."""
    monkeypatch.setenv("PWH_COUNTEREXAMPLES", str(tmp_path))
    before = set(descendants())
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as local:
        yield local
    assert _wait_until(lambda: not _ours(before), 10), {p: _cmdline(p) for p in _ours(before)}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _public_safe(summary: dict[str, Any], lines: list[str], local: Any, tmp_path: Path) -> None:
    """No worker's address or directory in the summary or the lines; the only paths are the client's."""
    text = json.dumps(summary) + "\n".join(lines)
    workers = list(local.scheduler_info["workers"])
    assert len(workers) == 2 and not any(w in text for w in workers), workers
    assert TASK_DIR_PREFIX not in text
    assert all(s.startswith(str(tmp_path)) for s in _strings(summary) if s.startswith("/")), summary


def test_a_cluster_soak_runs_a_task_per_worker_thread_and_merges_them(cluster: Any, tmp_path: Path) -> None:
    """Two tasks (the cluster's two threads), seeds derived from the one seed as `--workers` derives
    them, counts the sum of the tasks' own, their coverage merged, lines prefixed by task."""
    lines: list[str] = []
    summary = soak_cluster(cluster.scheduler_address, None, "reference-memory", seed=5, examples=4, out=lines.append, **QUIET)
    assert summary["cluster"] == {"address": cluster.scheduler_address, "tasks": 2, "workers": 2}
    assert summary["seed"] == 5 and summary["workers"] == 2
    assert summary["worker_seeds"] == [worker_seed(5, 0), worker_seed(5, 1)] == [w["seed"] for w in summary["per_worker"]]
    for key in ("steps", "examples", "rounds"):
        assert summary[key] == sum(w[key] for w in summary["per_worker"]) > 0, key
    assert all(w["steps"] > 0 for w in summary["per_worker"]) and len({w["pid"] for w in summary["per_worker"]}) == 2
    coverage = summary["coverage"]
    assert (coverage["steps"], coverage["examples"]) == (summary["steps"], summary["examples"])
    assert sum(coverage["actions"].values()) > 0 and coverage["invariants_counted"]
    assert all(i["held"] == i["checked"] for i in coverage["invariants"].values()) and not summary["violations"]
    assert summary["example_database"] == str(example_database_dir("reference-memory"))
    assert lines[0].startswith("pwh soak: seed 5, 2 tasks on the Dask cluster at ") and lines[-1].startswith("pwh soak: 2 tasks done in")
    assert any(line.startswith("[t1] pwh soak: seed ") for line in lines) and any(line.startswith("[t2] pwh soak: seed ") for line in lines)
    assert sum(line.startswith("pwh soak: coverage: ") for line in lines) == 5
    _public_safe(summary, lines, cluster, tmp_path)


def test_findings_and_database_entries_come_back_to_the_client(cluster: Any, tmp_path: Path) -> None:
    """A mutant the tasks find: its traces are written on the client (and replay there), its
    failing examples land in the client's example database, and the next cluster soak sends them
    with its task, which finds the failure at its very first example (it would not without them)."""
    sut, address = "mutant:out_of_order", cluster.scheduler_address
    lines: list[str] = []
    real_time = {**QUIET, "simulate": False}  # the example database is Hypothesis's: its rounds run in real time
    # an example budget, not minutes: a loaded machine runs the same histories, only slower
    first = soak_cluster(address, None, sut, seed=5, examples=16, out=lines.append, **real_time)
    assert [v["invariant"] for v in first["violations"]] == ["hook_order"], first["violations"]
    assert first["counterexamples"] and all(Path(p).is_file() and Path(p).parent == tmp_path for p in first["counterexamples"])
    trace = next(Path(p) for p in first["counterexamples"] if p.endswith(".json"))
    assert replay_trace(trace, sut).same_as_recorded
    stored = read_entries(example_database_dir(sut))
    assert stored and any(p.is_file() for p in example_database_dir(sut).rglob("*"))
    _public_safe(first, lines, cluster, tmp_path)

    seed = 6
    alone = soak(None, sut, worker_seed(seed, 0), examples=1, out=lambda line: None, real_crashes=False, simulate=False)  # no database
    assert all((v["round"], v["example"]) != (0, 1) for v in alone["violations"]), alone["violations"]
    again = soak_cluster(address, None, sut, seed=seed, tasks=1, examples=1, out=lambda line: None, **real_time)
    refound = next(v for v in again["violations"] if v["invariant"] == "hook_order")
    assert (refound["round"], refound["example"]) == (0, 1), refound
    assert set(stored) <= set(read_entries(example_database_dir(sut)))


def test_a_failed_task_or_ctrl_c_stops_every_soak_process(cluster: Any) -> None:
    """A task whose soak fails on its worker (here: a profile only the worker checks) is one line
    naming the task and the error, no worker path. A KeyboardInterrupt in the client while the
    tasks soak is raised again, and the soak processes on the (still running) workers are stopped
    within seconds, not at the end of their minute."""
    with pytest.raises(TaskFailed) as failed:
        soak_cluster(cluster.scheduler_address, 0.01, "reference-memory", seed=5, out=lambda line: None, profile="nope")
    message = str(failed.value)
    assert re.fullmatch(r"pwh soak: task t[12] failed: the soak process ended with status 1: ValueError: unknown profile 'nope'.*", message)
    assert "\n" not in message and TASK_DIR_PREFIX not in message

    def soaking() -> list[int]:
        return [p for p in descendants() if "_soak_process" in _cmdline(p)]

    def interrupt_once_both_soak() -> None:
        if _wait_until(lambda: len(soaking()) == 2, 30):
            _thread.interrupt_main()

    threading.Thread(target=interrupt_once_both_soak, daemon=True).start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        soak_cluster(cluster.scheduler_address, 5, "reference-memory", seed=5, out=lambda line: None, **QUIET)
    assert time.monotonic() - started < 120  # well before the end of its five minutes (generous: a loaded machine)
    assert _wait_until(lambda: not soaking(), 30), soaking()  # (a loaded machine relays the stop slowly)


def test_a_cluster_that_cannot_be_used_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """No scheduler at the address, a scheduler without workers, Dask not installed: a
    ClusterUnavailable of one line each, naming only the address given, and soon."""
    monkeypatch.setattr(_cluster, "CONNECT_TIMEOUT_S", 1.0)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"  # free once the socket is closed
    before = set(descendants())
    started = time.monotonic()
    with pytest.raises(ClusterUnavailable) as nobody:
        soak_cluster(address, 0.01, "reference-memory", seed=1, out=lambda line: None)
    assert time.monotonic() - started < 30  # a 1 s connect timeout, never a wait for the soak (generous: a loaded machine)
    assert str(nobody.value) == f"pwh soak: no Dask scheduler answered at {address} within 1 s"
    with distributed.LocalCluster(n_workers=0, processes=True, host="127.0.0.1", dashboard_address=None) as empty:
        with pytest.raises(ClusterUnavailable) as idle:
            soak_cluster(empty.scheduler_address, 0.01, "reference-memory", seed=1, out=lambda line: None)
    assert str(idle.value).startswith(f"pwh soak: the Dask scheduler at {empty.scheduler_address} has no worker")
    monkeypatch.setitem(sys.modules, "distributed", None)  # what `import distributed` makes of a missing package
    with pytest.raises(ClusterUnavailable) as missing:
        soak_cluster(address, 0.01, "reference-memory", seed=1)
    assert "pip install -e '.[cluster]'" in str(missing.value)
    for error in (nobody, idle, missing):
        assert "\n" not in str(error.value) and error.value.__cause__ is None
    assert not _ours(before)


def test_pwh_soak_cluster_on_the_command_line_writes_the_merged_summary(cluster: Any, tmp_path: Path) -> None:
    import os
    import subprocess

    env = {**os.environ, "PWH_COUNTEREXAMPLES": str(tmp_path)}
    args = ["soak", "--cluster", cluster.scheduler_address, "--examples", "4", "--sut", "reference-memory", "--seed", "5"]
    done = subprocess.run(
        [sys.executable, "-m", "pwh", *args, "--json", str(tmp_path / "s.json")],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["cluster"]["tasks"] == 2 and summary["worker_seeds"] == [worker_seed(5, 0), worker_seed(5, 1)]
    assert summary["steps"] == sum(w["steps"] for w in summary["per_worker"]) > 0


def _listener(mode: str) -> tuple[socket.socket, str]:
    """A loopback port that accepts and then says nothing (``silent``) or sends bytes that are not
    Dask's protocol (``garbage``): a wrong service, a stuck scheduler."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            if mode == "garbage":
                with contextlib.suppress(OSError):
                    conn.sendall(bytes(range(256)) * 256)

    threading.Thread(target=serve, daemon=True).start()
    return server, f"tcp://127.0.0.1:{server.getsockname()[1]}"


_AS_PWH = """
import sys
import pwh._cli as cli
from pwh._campaigns.distribute import cluster as _cluster
_cluster.CONNECT_TIMEOUT_S = 1.0
sys.argv = ["pwh", "soak", "--minutes", "0.05", "--sut", "reference-memory", "--no-database", "--cluster", sys.argv[1]]
sys.exit(cli.main())
"""


@pytest.mark.parametrize("mode", ["silent", "garbage", "nonsense"])
def test_a_scheduler_address_that_never_answers_or_answers_garbage_is_one_line_exit_2_soon(mode: str) -> None:
    import subprocess

    server, address = _listener(mode) if mode != "nonsense" else (None, "nonsense")
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-c", _AS_PWH, address],
            cwd=Path(__file__).resolve().parents[2],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"pwh soak --cluster {mode}: no answer within 60 s of a 1 s connect timeout")
    finally:
        if server is not None:
            server.close()
    took = time.monotonic() - started
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and "pwh soak: " in lines[0], (done.returncode, lines[:20])
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert took < 45, took  # the 1 s connect timeout, not the 60 s hang guard above (generous: a loaded machine)
