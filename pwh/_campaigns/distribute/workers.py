"""``pwh soak --workers N``: N soaks at once, one process each, merged into one summary.

Each worker is a fresh ``spawn`` process that runs one campaign engine under the one driver (the
models' :func:`~pwh._campaigns.soak.soak`, or with ``against`` the differential
:func:`~pwh._campaigns.differential.differential_soak`) with the same budget (minutes, or examples each, or both) and its own seed, derived from the soak's seed
and the worker's index (:func:`worker_seed`), so the whole run is reproducible from the one seed
printed first. Workers share the example database (Hypothesis's directory database is safe across
processes) and the counterexample directory; their lines are prefixed ``[w1]``, ``[w2]``... The parent merges what
they return (:func:`merge_summaries`): counts summed, violations one per (row, invariant) with the
times each was found, profile divergences the same way (never a failure), counterexample paths
listed, coverage reports merged (``Coverage.merge``).

Workers ignore SIGINT: a Ctrl-C reaches the parent, which terminates the pool (and pwh's own
handler stops every descendant by PID, on SIGTERM and SIGHUP too), so no worker prints a traceback
or is left running; a worker dies with the parent (``PR_SET_PDEATHSIG``) even if the parent is
killed outright. A worker killed by PID never runs its own clean-ups, so the temporary folders of
every worker (their stores, ``/dev/shm`` ones included) are made inside one folder of the run's,
which the parent removes as it ends, however it ends.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import secrets
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from pwh._campaigns.engine import check_budget, derive_seed
from pwh._campaigns.models.coverage import Coverage
from pwh._campaigns.soak import _keeps_journal_on_disk, divergence_lines, merge_divergence, soak

START_METHOD = "spawn"  # a fresh interpreter: no state of the parent's (threads, open SUTs) is inherited


def worker_seed(seed: int, index: int) -> int:
    """The seed of worker ``index`` (from 0): stable for a soak seed, apart from every round seed."""
    return derive_seed(seed, -1 - index)


def soak_workers(
    minutes: float | None,
    sut: str,
    seed: int | None,
    workers: int,
    *,
    against: str | None = None,
    out: Callable[[str], None] = print,
    **options: Any,
) -> dict[str, Any]:
    """Run ``workers`` soaks of ``sut`` at once (``options`` as :func:`soak` takes them, or as
    :func:`differential_soak` does with ``against``); return the merged summary, with ``workers``,
    ``worker_seeds`` and each worker's own counts and PID."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    check_budget(minutes, options.get("examples"))
    if against is None:
        _keeps_journal_on_disk(sut)  # a SUT that cannot load fails here, once, before any worker starts
    else:
        from pwh._campaigns.models.machine import _probe_sut

        if against == sut:
            raise ValueError("--against must name another SUT than --sut")
        for name in (sut, against):
            _probe_sut(name, {}, False)
    seed = secrets.randbelow(2**32) if seed is None else seed
    seeds = [worker_seed(seed, i) for i in range(workers)]
    out(f"pwh soak: seed {seed}, {workers} workers (seeds {', '.join(map(str, seeds))})")
    from pwh._harness.paths import fast_tmp

    run_dir = tempfile.mkdtemp(prefix="pwh-soak-", dir=fast_tmp())
    observations = options.pop("observations", None)
    logs = [os.path.join(run_dir, f"observations-w{i + 1}.jsonl") if observations else None for i in range(workers)]
    jobs = [
        (i, minutes, sut, s, {**options, **({"against": against} if against else {}), **({"observations": logs[i]} if logs[i] else {})})
        for i, s in enumerate(seeds)
    ]
    try:
        pool = multiprocessing.get_context(START_METHOD).Pool(workers, initializer=_init_worker, initargs=(os.getpid(), run_dir))
        try:
            results = pool.map_async(_run_worker, jobs, chunksize=1).get()
        except BaseException:
            pool.terminate()
            raise
        else:
            pool.close()
        finally:
            pool.join()
        if observations:  # the workers' files, concatenated: observations merge that way
            with open(observations, "ab") as target:
                for log in logs:
                    if log and os.path.exists(log):
                        with open(log, "rb") as part:
                            shutil.copyfileobj(part, target)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    coverage = Coverage.merge_all([c for _, c in results])
    if against is not None:
        merged = merge_differential(seed, [s for s, _ in results], coverage)
        report_differential(merged, coverage, out, f"{workers} workers")
        return merged
    summary = merge_summaries(seed, [s for s, _ in results], coverage)
    report_merged(summary, coverage, out, f"{workers} workers", "worker ")
    return summary


def merge_differential(seed: int, summaries: list[dict[str, Any]], coverage: Coverage) -> dict[str, Any]:
    """One differential summary from the workers' (in worker order): counts summed, one divergence
    per kind with the times each was found and the worker that found it first."""
    first = summaries[0]
    found: dict[str, dict[str, Any]] = {}
    profile_only: dict[str, dict[str, Any]] = {}
    for index, s in enumerate(summaries, 1):
        for d in s["divergences"]:
            if d["key"] in found:
                found[d["key"]]["times"] += d["times"]
            else:
                found[d["key"]] = {**d, "worker": index}
        for key, kept in s["profile_only"].items():
            mine = profile_only.setdefault(key, {"times": 0, "example": kept["example"]})
            mine["times"] += kept["times"]
    totals = ("rounds", "examples", "steps", "steps_compared", "steps_not_compared")
    return {
        **{k: first[k] for k in ("sut", "against", "minutes", "max_examples", "profile", "swarm")},
        "seed": seed,
        "workers": len(summaries),
        "worker_seeds": [s["seed"] for s in summaries],
        "per_worker": [
            {"worker": i, "seed": s["seed"], "pid": s["pid"], "elapsed_s": s["elapsed_s"], **{k: s[k] for k in totals}}
            for i, s in enumerate(summaries, 1)
        ],
        "elapsed_s": max(s["elapsed_s"] for s in summaries),
        **{k: sum(s[k] for s in summaries) for k in totals},
        "divergences": list(found.values()),
        "profile_only": dict(sorted(profile_only.items())),
        "counterexamples": [p for s in summaries for p in s["counterexamples"]],
        "coverage": coverage.to_json(),
    }


def report_differential(summary: dict[str, Any], coverage: Coverage, out: Callable[[str], None], ran: str) -> None:
    """The end of a merged differential run: the merged coverage, the counts, each divergence."""
    for line in coverage.lines(invariants=False):
        out(line)
    out(
        f"pwh soak: {ran} done in {summary['elapsed_s']:.0f} s: {summary['rounds']} rounds, {summary['examples']} examples, "
        f"{summary['steps']} steps, {summary['steps_compared']} compared ({summary['steps_not_compared']} refused by one SUT), "
        f"{len(summary['divergences'])} RFC divergence(s), {len(summary['profile_only'])} kind(s) of profile-only difference"
    )
    for d in summary["divergences"]:
        out(f"  RFC: {d['key']}: found {d['times']} time(s), first by worker {d['worker']}")
    for key, kept in summary["profile_only"].items():
        out(f"  profile only: {key}: {kept['times']} step(s)")


def report_merged(summary: dict[str, Any], coverage: Coverage, out: Callable[[str], None], ran: str, by: str) -> None:
    """The end of a merged run (``--workers``, ``--cluster``): the merged coverage, the counts, and
    each violation with the ``by`` (``"worker "``, ``"task t"``) that found it first."""
    for line in coverage.lines():
        out(line)
    out(
        f"pwh soak: {ran} done in {summary['elapsed_s']:.0f} s: {summary['rounds']} rounds, "
        f"{summary['examples']} examples, {summary['steps']} steps, {summary['crashes']['simulated']} simulated + "
        f"{summary['crashes']['real']} real crashes, {summary['restarts']} restarts, {len(summary['violations'])} counterexample(s), "
        f"{len(summary['profile_divergences'])} kind(s) of profile divergence"
    )
    for v in summary["violations"]:
        out(f"  {v['row']} {v['invariant']}: found {v['times']} time(s), first by {by}{v['worker']}")
    for line in divergence_lines(summary["profile_divergences"], by):
        out(line)
    for p in summary["counterexamples"]:
        out(f"  {p}")


def merge_summaries(seed: int, summaries: list[dict[str, Any]], coverage: Coverage) -> dict[str, Any]:
    """One summary from the workers' summaries (in worker order) and their merged ``coverage``."""
    first = summaries[0]
    violations: dict[tuple[str, str], dict[str, Any]] = {}
    for index, s in enumerate(summaries, 1):
        for v in s["violations"]:
            key = (v["row"], v["invariant"])
            if key in violations:
                violations[key]["times"] += v["times"]
            else:
                violations[key] = {**v, "worker": index}
    diverged: dict[tuple[str, str], dict[str, Any]] = {}
    for index, s in enumerate(summaries, 1):
        for d in s.get("profile_divergences", []):
            merge_divergence(diverged, (d["row"], d["invariant"]), d, worker=index)
    return {
        **{k: first[k] for k in ("sut", "campaign", "minutes", "profile", "swarm", "example_database")},
        "max_examples": first.get("max_examples"),  # each worker's
        "seed": seed,
        "workers": len(summaries),
        "worker_seeds": [s["seed"] for s in summaries],
        "per_worker": [
            {
                "worker": index,
                "seed": s["seed"],
                "pid": s["pid"],
                "elapsed_s": s["elapsed_s"],
                "rounds": s["rounds"],
                "examples": s["examples"],
                "steps": s["steps"],
                "violations": {f"{v['row']} {v['invariant']}": v["times"] for v in s["violations"]},
                "profile_divergences": {f"{d['row']} {d['invariant']}": d["times"] for d in s.get("profile_divergences", [])},
            }
            for index, s in enumerate(summaries, 1)
        ],
        "elapsed_s": max(s["elapsed_s"] for s in summaries),
        "rounds": sum(s["rounds"] for s in summaries),
        "examples": sum(s["examples"] for s in summaries),
        "steps": sum(s["steps"] for s in summaries),
        "crashes": {m: sum(s["crashes"][m] for s in summaries) for m in ("simulated", "real")},
        "restarts": sum(s["restarts"] for s in summaries),
        "violations": list(violations.values()),
        "profile_divergences": list(diverged.values()),
        "counterexamples": [p for s in summaries for p in s["counterexamples"]],
        "coverage": coverage.to_json(),
    }


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _init_worker(parent: int, run_dir: str) -> None:
    """In each worker: ignore SIGINT, die with the parent, and make every temporary folder in the
    run's folder (``run_dir``, removed by the parent), for this process and what it starts."""
    _ignore_sigint()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        if os.getppid() != parent:  # the parent died before the death signal was armed
            os._exit(1)
    os.environ["TMPDIR"] = run_dir
    tempfile.tempdir = run_dir
    from pwh._campaigns.models import system as _system

    _system.fast_tmp = lambda: run_dir  # the model stores' fast folder


def _run_worker(job: tuple[int, float | None, str, int, dict[str, Any]]) -> tuple[dict[str, Any], Coverage]:
    index, minutes, sut, seed, options = job
    prefix = f"[w{index + 1}] "

    def out(line: str) -> None:
        print(prefix + line, flush=True)

    coverage = Coverage()
    options = {**options, **({"worker": index + 1} if "observations" in options else {})}
    against = options.pop("against", None)
    if against is not None:
        from pwh._campaigns.differential import differential_soak

        summary = differential_soak(minutes, sut, against, seed, out=out, coverage=coverage, **options)
    else:
        summary = soak(minutes, sut, seed, out=out, coverage=coverage, **options)
    return {**summary, "pid": os.getpid()}, coverage
