"""``pwh soak --cluster ADDRESS``: the soaks of ``_workers`` spread over a Dask distributed cluster.

The client connects to the scheduler at ``ADDRESS`` and submits one task per soak (by default one
per worker thread the cluster reports), each with its seed derived as ``_workers`` derives them
(:func:`~pwh._campaigns.distribute.workers.worker_seed`), so the whole run is reproducible from the one
seed printed first. The parent merges what the tasks return as ``_workers`` does
(:func:`~pwh._campaigns.distribute.workers.merge_summaries`), under ``"cluster"`` the address and sizes.

A task runs its soak in a process of its own, started on the worker: the models are pure Python,
so two soaks in the threads of one worker process would share one GIL (one core); the process's
``$PWH_COUNTEREXAMPLES`` is a temporary directory of the task's own (the environment of a worker
process is shared by its threads); and a process can be stopped, with whatever it started, where a
thread cannot. The process ends when its soak does, when its task is told to stop (the client sets
a Dask ``Event`` on Ctrl-C or when another task failed) and when its worker is gone (it checks
its parent); the temporary directory is removed with it.

The machines share no file system, so the example database travels with the tasks: the client
lists every (key, value) of its local database for the SUT (:func:`read_entries`), each task saves
them into its own database before its soak starts (so stored failures are replayed first) and
returns every entry it holds at the end, which the client saves into its local database (entries
are only added there: one a task's Hypothesis dropped stays until a soak on the client drops it;
client and workers should run one Hypothesis version, whose database format is its own). Traces
come back as JSON and are written into the client's counterexample directory; the summary and the
lines printed name the client's paths only, never a worker's host or directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from hypothesis.database import DirectoryBasedExampleDatabase

from pwh._campaigns.counterexamples.trace import COUNTEREXAMPLES_ENV, counterexample_dir, write_counterexample
from pwh._campaigns.distribute.workers import merge_summaries, report_merged, worker_seed
from pwh._campaigns.engine import check_budget
from pwh._campaigns.models.coverage import Coverage
from pwh._campaigns.models.names import sut_slug
from pwh._campaigns.soak import _keeps_journal_on_disk, example_database_dir, soak

CONNECT_TIMEOUT_S = 10.0  # for the scheduler to answer, and for a first worker to join it
POLL_S = 1.0  # how often a task looks whether it was told to stop, and a soak process for its worker
# Where a DirectoryBasedExampleDatabase lists every key it holds (its files are named by digests
# of key and value, so the keys cannot be read back from the layout); fetched and saved through
# the database's own API. Hypothesis 6.150 and later keep it.
KEYS_ENTRY = b".hypothesis-keys"
TASK_DIR_PREFIX = "pwh-cluster-task-"
HIDDEN = "<task dir>"  # what a worker's temporary directory reads as in lines and summaries
INSTALL_HINT = "pip install -e '.[cluster]'"

if TYPE_CHECKING:
    from distributed import Client, Future

Entry = tuple[bytes, bytes]


class ClusterUnavailable(RuntimeError):
    """The cluster cannot be used (Dask missing, no scheduler answering, no worker): one line."""


class TaskFailed(RuntimeError):
    """A task's soak did not finish (its process failed or was stopped): one line, no worker path."""


def soak_cluster(
    address: str,
    minutes: float | None,
    sut: str,
    seed: int | None,
    tasks: int | None = None,
    *,
    out: Callable[[str], None] = print,
    **options: Any,
) -> dict[str, Any]:
    """Run ``tasks`` soaks of ``sut`` on the Dask cluster at ``address`` (``options`` as
    :func:`~pwh._campaigns.soak.soak` takes them); return the merged summary of
    :func:`~pwh._campaigns.distribute.workers.merge_summaries` (``workers`` and ``per_worker`` count
    the tasks) with ``"cluster": {"address", "tasks", "workers"}``."""
    if tasks is not None and tasks < 1:
        raise ValueError("tasks must be at least 1")
    check_budget(minutes, options.get("examples"))
    try:
        import distributed
    except ImportError:
        raise ClusterUnavailable(f"pwh soak --cluster needs Dask distributed, the cluster extra: {INSTALL_HINT}") from None
    _keeps_journal_on_disk(sut)  # a SUT that cannot load fails here, before any task is submitted
    seed = secrets.randbelow(2**32) if seed is None else seed
    database = example_database_dir(sut) if options.get("database") else None
    entries = read_entries(database) if database is not None else []
    campaign = options.get("campaign")
    directory = counterexample_dir() / sut_slug(campaign) if campaign else None
    with _connect(address) as client:
        nthreads = client.nthreads()
        n = tasks or max(1, sum(nthreads.values()))
        seeds = [worker_seed(seed, i) for i in range(n)]
        out(
            f"pwh soak: seed {seed}, {n} tasks on the Dask cluster at {address} ({len(nthreads)} workers, "
            f"{sum(nthreads.values())} threads; seeds {', '.join(map(str, seeds))})"
        )
        if database is not None:
            out(f"pwh soak: example database {database}: {len(entries)} entries sent with each task")
        stop = distributed.Event(f"pwh-soak-stop-{uuid.uuid4().hex}", client=client)
        futures: list[Future[dict[str, Any]]] = []
        results: dict[int, tuple[dict[str, Any], Coverage]] = {}
        try:
            for s in seeds:
                job = {"minutes": minutes, "sut": sut, "seed": s, "options": options, "entries": entries, "stop": stop.name}
                futures.append(client.submit(_run_task, job, pure=False))
            order = {f.key: i for i, f in enumerate(futures)}
            for future in distributed.as_completed(futures, loop=client.loop):
                i = order[future.key]
                try:
                    result = future.result()
                except TaskFailed as exc:
                    raise TaskFailed(f"pwh soak: task t{i + 1} failed: {exc}") from None
                except Exception as exc:  # Dask's own (a worker lost...): its text may name other hosts
                    raise TaskFailed(f"pwh soak: task t{i + 1} failed: {type(exc).__name__}") from None
                results[i] = _take(result, f"[t{i + 1}] ", database, directory, out)
        except BaseException:  # Ctrl-C, or a task failed: stop the others' soak processes too
            with contextlib.suppress(Exception):
                stop.set()
            with contextlib.suppress(Exception):
                client.cancel(futures, force=True)
            raise
    coverage = Coverage.merge_all([results[i][1] for i in range(n)])
    summary = merge_summaries(seed, [results[i][0] for i in range(n)], coverage)
    summary["cluster"] = {"address": address, "tasks": n, "workers": len(nthreads)}
    report_merged(summary, coverage, out, f"{n} tasks", "task t")
    return summary


def read_entries(path: Path) -> list[Entry]:
    """Every (key, value) of the example database at ``path``, sorted (none where there is none)."""
    if not path.is_dir():
        return []
    db = DirectoryBasedExampleDatabase(path)
    return sorted({(key, value) for key in db.fetch(KEYS_ENTRY) if key != KEYS_ENTRY for value in db.fetch(key)})


def save_entries(path: Path, entries: Iterable[Entry]) -> None:
    """Save ``entries`` into the example database at ``path`` (one already there stays as it is)."""
    db = DirectoryBasedExampleDatabase(path)
    for key, value in entries:
        db.save(key, value)


def _connect(address: str) -> Client:
    """A client of the scheduler at ``address`` with at least one worker, or one line saying why not
    (naming only the address given: the exception's text may name other hosts). The address is
    checked, and the scheduler asked who it is under a hard deadline (:func:`_probe`), before a
    Dask client is made: a port that accepts and never answers, or answers with bytes that are not
    Dask's, would otherwise hold the client's connect forever or leave a half-made client behind."""
    import distributed

    _probe(address)
    try:
        client = distributed.Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except ValueError:
        raise ClusterUnavailable(f"pwh soak: {address!r} is not a Dask scheduler address (tcp://HOST:PORT)") from None
    except (OSError, TimeoutError):
        raise ClusterUnavailable(f"pwh soak: no Dask scheduler answered at {address} within {CONNECT_TIMEOUT_S:g} s") from None
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError):
        client.close()
        raise ClusterUnavailable(
            f"pwh soak: the Dask scheduler at {address} has no worker (none joined within {CONNECT_TIMEOUT_S:g} s)"
        ) from None
    return client


def _probe(address: str) -> None:
    """Check ``address`` and ask the scheduler there who it is, every wait bounded by
    :data:`CONNECT_TIMEOUT_S` (the connect, the handshake, the question, the answer); one
    :class:`ClusterUnavailable` line for anything else than a scheduler's answer."""
    import asyncio

    from distributed.comm import connect
    from distributed.comm.addressing import get_address_host_port

    try:
        get_address_host_port(address if "://" in address else f"tcp://{address}")
    except (ValueError, TypeError):
        raise ClusterUnavailable(f"pwh soak: {address!r} is not a Dask scheduler address (tcp://HOST:PORT)") from None

    async def ask() -> Any:
        comm = await asyncio.wait_for(connect(address, timeout=CONNECT_TIMEOUT_S), CONNECT_TIMEOUT_S)
        try:
            await asyncio.wait_for(comm.write({"op": "identity", "reply": True}), CONNECT_TIMEOUT_S)
            return await asyncio.wait_for(comm.read(), CONNECT_TIMEOUT_S)
        finally:
            comm.abort()

    try:
        answer = asyncio.run(asyncio.wait_for(ask(), CONNECT_TIMEOUT_S * 2))
    except (OSError, TimeoutError):
        raise ClusterUnavailable(f"pwh soak: no Dask scheduler answered at {address} within {CONNECT_TIMEOUT_S:g} s") from None
    except ValueError:
        raise ClusterUnavailable(f"pwh soak: {address!r} is not a Dask scheduler address (tcp://HOST:PORT)") from None
    except Exception:  # bytes that are not Dask's protocol (a wrong service): whatever the decoder raised
        raise ClusterUnavailable(f"pwh soak: what answered at {address} is not a Dask scheduler") from None
    if not isinstance(answer, dict) or answer.get("type") != "Scheduler":
        raise ClusterUnavailable(f"pwh soak: what answered at {address} is not a Dask scheduler")


def _take(
    result: dict[str, Any], prefix: str, database: Path | None, directory: Path | None, out: Callable[[str], None]
) -> tuple[dict[str, Any], Coverage]:
    """On the client, as a task finishes: print its lines, save its database entries locally and
    write its traces into the local counterexample directory, which its summary then names."""
    for line in result["lines"]:
        out(prefix + line)
    if database is not None:
        save_entries(database, result["entries"])
    paths: list[Path] = []
    for trace in result["traces"]:
        paths += write_counterexample(trace, directory, out=lambda line: out(prefix + line))
    summary = {
        **result["summary"],
        "counterexamples": [str(p) for p in paths],
        "example_database": str(database) if database is not None else None,
    }
    return summary, result["coverage"]


# -- on a worker -----------------------------------------------------------------------------------


def _run_task(job: dict[str, Any]) -> dict[str, Any]:
    """The Dask task: run one soak in a process of its own (:func:`_soak_process`) in a temporary
    directory, and return what it found; stop the process if the client says so."""
    import distributed

    stop = distributed.Event(job["stop"])
    task_dir = Path(tempfile.mkdtemp(prefix=TASK_DIR_PREFIX))
    try:
        (task_dir / "job.pickle").write_bytes(pickle.dumps(job))
        env = {
            **os.environ,
            COUNTEREXAMPLES_ENV: str(task_dir / "found"),
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),  # what this worker imports, the process imports
        }
        code = "from pwh._campaigns.distribute.cluster import _soak_process; _soak_process()"
        with open(task_dir / "stderr", "wb") as stderr:
            proc = subprocess.Popen(
                [sys.executable, "-c", code, str(task_dir)],
                cwd=task_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        try:
            while True:
                try:
                    proc.wait(POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    if _told_to_stop(stop):
                        raise TaskFailed("stopped by the client") from None
        finally:
            if proc.poll() is None:
                proc.terminate()  # the process stops what it started, then itself
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        result_file = task_dir / "result.pickle"
        if not result_file.is_file():
            lines = (task_dir / "stderr").read_text("utf-8", "replace").replace(str(task_dir), HIDDEN).strip().splitlines()
            raise TaskFailed(f"the soak process ended with status {proc.returncode}" + (f": {lines[-1][:300]}" if lines else ""))
        result: dict[str, Any] = pickle.loads(result_file.read_bytes())
        return result
    finally:
        shutil.rmtree(task_dir, ignore_errors=True)


def _told_to_stop(stop: Any) -> bool:
    try:
        return bool(stop.is_set())
    except Exception:  # the scheduler is gone: nobody is left to take the result
        return True


def _soak_process() -> None:
    """The soak process of a task (``argv[1]``: the task's directory, ``$PWH_COUNTEREXAMPLES`` under
    it): seed the example database with the entries sent, soak, and leave ``result.pickle`` with
    the summary, coverage, lines, traces and database entries, the directory's path hidden. Ended
    because its worker is gone, it removes the directory itself (the task that would is gone too)."""
    task_dir = Path(sys.argv[1])
    parent = os.getppid()
    signal.signal(signal.SIGTERM, _on_sigterm)
    threading.Thread(target=_end_when_orphaned, args=(parent,), daemon=True).start()
    try:
        _soak_in(task_dir)
    finally:
        if os.getppid() != parent:
            shutil.rmtree(task_dir, ignore_errors=True)


def _soak_in(task_dir: Path) -> None:
    """The soak itself, with ``$PWH_COUNTEREXAMPLES`` (and so its database) in ``task_dir``."""
    job = pickle.loads((task_dir / "job.pickle").read_bytes())
    database = example_database_dir(job["sut"]) if job["options"].get("database") else None
    if database is not None:
        save_entries(database, job["entries"])
    lines: list[str] = []
    coverage = Coverage()
    summary = soak(job["minutes"], job["sut"], job["seed"], out=lines.append, coverage=coverage, **job["options"])
    traces = [json.loads(Path(p).read_text("utf-8")) for p in summary["counterexamples"] if p.endswith(".json")]
    result = {
        "summary": {**summary, "pid": os.getpid()},
        "coverage": coverage,
        "lines": lines,
        "traces": traces,
        "entries": read_entries(database) if database is not None else [],
    }
    hidden = {k: _hide(result[k], str(task_dir)) for k in ("summary", "lines", "traces")}
    (task_dir / "result.pickle").write_bytes(pickle.dumps({**result, **hidden}))


def _hide(value: Any, text: str) -> Any:
    """``value`` (JSON-able) with every occurrence of ``text`` in its strings replaced by :data:`HIDDEN`."""
    return json.loads(json.dumps(value).replace(json.dumps(text)[1:-1], HIDDEN))


def _end_when_orphaned(parent: int) -> None:
    """A soak process whose worker died (a cluster closed, a worker killed) ends too."""
    while os.getppid() == parent:
        time.sleep(POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """Stop every process the soak started (real crashes run children), then unwind the soak, so
    its clean-ups remove what it made; end at once if that has not ended it within ``GRACE_S``."""
    from pwh._harness.interrupt import GRACE_S, stop_descendants

    stop_descendants()
    last_resort = threading.Timer(GRACE_S, os._exit, args=(1,))
    last_resort.daemon = True
    last_resort.start()
    raise KeyboardInterrupt
