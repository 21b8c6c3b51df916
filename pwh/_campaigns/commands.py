"""``pwh soak`` and ``pwh replay``: the models on the command line.

The CLI adds these with :func:`add_model_commands`. Handlers return exit codes and print one
clear line on error, never a traceback: 0 nothing found (``soak``) or the trace passes
(``replay``); 1 a counterexample was found or the trace still fails; 2 the command could not run.
``pwh soak --benchmark`` (:func:`benchmark_command`, ``_benchmark``): 0 measured, whatever the
targets (they are reported, not enforced); 1 the reference broke an invariant while it was
measured; 2 bad options.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from pwh._campaigns.counterexamples.reader import ReplayError, choose_sut, parse_trace, read_trace_bytes, shown_file
from pwh._campaigns.models.profiles import DEFAULT_PROFILE, PROFILES
from pwh._suts.seam import BUILTIN_SUTS, SUTLoadError

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


def add_model_commands(subparsers: Any) -> None:
    """Register ``soak`` and ``replay`` on the CLI's sub-command parsers."""
    soak = subparsers.add_parser("soak", help="run the stateful crash/replay models against a SUT for a while")
    soak.add_argument("--minutes", type=float, default=None, help="time budget (fractions allowed, e.g. 0.5)")
    soak.add_argument(
        "--examples",
        type=int,
        default=None,
        metavar="N",
        help="example budget: N generated histories (each worker's, with --workers), then stop; with --minutes too, "
        "whichever is spent first. Given alone, the soak does not depend on the machine's speed: the same seed runs "
        "the same histories (one of --minutes or --examples is needed)",
    )
    soak.add_argument("--sut", default=None, help="built-in name or module:factory (default: $PWH_SUT or reference)")
    soak.add_argument("--seed", type=int, default=None, help="reproduce a soak (default: a fresh seed, printed first)")
    soak.add_argument("--campaign", default=None, help="name the run; its counterexamples go to a sub-directory of that name")
    soak.add_argument("--no-real-crashes", action="store_true", help="simulated crashes only (no child process is killed)")
    soak.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        default=None,
        help="how long each generated history is: "
        + "; ".join(f"{p.name}, {p.soak_steps} steps" for p in PROFILES.values())
        + f" (default {DEFAULT_PROFILE}; the same names as the tests' Hypothesis profiles)",
    )
    soak.add_argument(
        "--no-swarm",
        action="store_true",
        help="draw every action, hook behaviour and crash point in every example (default: swarm testing, each example "
        "leaves out a random subset of them; the coverage report and each counterexample trace say which)",
    )
    soak.add_argument(
        "--no-database",
        action="store_true",
        help="neither save failing examples nor replay them (default: Hypothesis's example database, one per SUT in "
        "hypothesis-examples/ under $PWH_COUNTEREXAMPLES, else under the temp dir's pwh-counterexamples-UID/; "
        "a failure found there is tried first the next time)",
    )
    soak.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="run N soaks at once, one process each, with seeds derived from the soak's seed, and merge what they "
        "found (default 1: one soak in this process)",
    )
    soak.add_argument(
        "--cluster",
        default=None,
        metavar="ADDRESS",
        help="spread the soak over the Dask distributed cluster whose scheduler is at ADDRESS (tcp://host:port): one "
        "soak per worker thread, seeds derived from the soak's seed, the example database carried to the workers and "
        "back, counts, counterexamples and coverage merged here (needs the cluster extra: pip install 'pwh[cluster]')",
    )
    soak.add_argument(
        "--against",
        default=None,
        metavar="SUT",
        help="differential soak: run the same generated histories against --sut and this SUT, compare their answers "
        "after every step, and shrink and write the first difference in RFC terms (differences in profile terms are "
        "counted apart); simulated crashes only, no example database",
    )
    soak.add_argument(
        "--benchmark",
        action="store_true",
        help="measure the models instead: steps/s in three modes, the scaling of two workers over one on the same "
        "histories (full run only) and the time to find each mutant they catch, "
        "each beside its target (with --quick: a few seconds; --json PATH: write the figures)",
    )
    soak.set_defaults(handler=soak_command)

    replay = subparsers.add_parser("replay", help="re-run a model counterexample trace (exit 1 while it still fails)")
    replay.add_argument("trace", metavar="TRACE.json", help="a trace written by a model run")
    replay.add_argument("--sut", default=None, help="judge this SUT instead of the one the trace was found with")
    replay.set_defaults(handler=replay_command)


def soak_command(args: argparse.Namespace) -> int:
    from pwh import SUTLoadError
    from pwh._campaigns.models.system import ModelError
    from pwh._campaigns.soak import soak

    if getattr(args, "benchmark", False):
        return benchmark_command(args)
    if args.minutes is None and getattr(args, "examples", None) is None:
        return _error("pwh soak needs a budget: --minutes N, --examples N or both")
    if args.minutes is not None and args.minutes <= 0:
        return _error("--minutes must be positive")
    if getattr(args, "examples", None) is not None and args.examples < 1:
        return _error("--examples must be at least 1")
    workers = getattr(args, "workers", 1)
    if workers < 1:
        return _error("--workers must be at least 1")
    _importable_cwd()
    sut = args.sut or os.environ.get("PWH_SUT") or "reference"
    options: dict[str, Any] = {
        "examples": getattr(args, "examples", None),
        "campaign": args.campaign,
        "real_crashes": False if args.no_real_crashes else None,
        "profile": args.profile or DEFAULT_PROFILE,
        "swarm": not getattr(args, "no_swarm", False),
        "database": not getattr(args, "no_database", False),
    }
    try:
        if workers == 1:
            summary = soak(args.minutes, sut, args.seed, out=_print, **options)
        else:
            from pwh._campaigns.distribute.workers import soak_workers

            summary = soak_workers(args.minutes, sut, args.seed, workers, out=_print, **options)
    except (SUTLoadError, ModelError) as exc:
        return _error(str(exc))
    except OSError as exc:
        return _error(f"cannot write counterexamples: {exc.strerror or 'write failed'}")
    path = getattr(args, "json", None)  # pwh's CLI adds --json (the summary with its coverage report)
    if path:
        import json
        from pathlib import Path

        try:
            Path(path).write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", "utf-8")
        except OSError as exc:
            return _error(f"cannot write {Path(path).name}: {exc.strerror or 'write failed'}")
    return EXIT_FAILED if summary["violations"] else EXIT_OK


def benchmark_command(args: argparse.Namespace) -> int:
    """``pwh soak --benchmark [--quick] [--json PATH]``: the figures beside their targets, on the
    terminal and (``--json``) in a file. Exit 0 once measured, whatever the targets; 1 when the
    reference broke an invariant while it was measured; 2 bad options or an unwritable file."""
    import json
    from pathlib import Path

    from pwh._campaigns.search_bench import render_table, run_benchmark, to_json

    path = getattr(args, "json", None)
    if path and Path(path).is_dir():
        return _error(f"--json {Path(path).name} is a directory; name a file")
    _importable_cwd()
    result = run_benchmark(quick=bool(getattr(args, "quick", False)), out=_print)
    print()
    print(render_table(result), end="", flush=True)
    if path:
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(json.dumps(to_json(result), indent=2, sort_keys=True) + "\n", "utf-8")
        except OSError as exc:
            return _error(f"cannot write {Path(path).name}: {exc.strerror or 'write failed'}")
    return EXIT_FAILED if result["reference_violations"] else EXIT_OK


def replay_command(args: argparse.Namespace) -> int:
    """``pwh replay``: pwh's own handler, which reads the trace as data (it never chooses code)."""
    return _replay(args)


def _importable_cwd() -> None:
    """``--sut module:factory`` names modules relative to where pwh is run, as ``python -m`` does,
    but the working directory is searched last: a stray ``random.py`` there never shadows a module."""
    from pwh._harness.gate import searchable_cwd

    searchable_cwd()


def _print(line: str) -> None:
    print(line, flush=True)


def _error(message: str) -> int:
    print(f"pwh: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def _replay(args: argparse.Namespace) -> int:
    """``pwh replay TRACE.json [--sut NAME|module:factory]``: 0 every invariant holds, 1 the trace
    still fails, 2 it could not run (not a trace, a refused or unloadable SUT)."""
    from pwh._harness.gate import searchable_cwd

    name = shown_file(args.trace)
    try:
        trace = parse_trace(read_trace_bytes(args.trace), name)
        sut = choose_sut(trace, args.sut)
    except ReplayError as exc:
        return _error(str(exc))
    if trace.had_options:
        print("pwh replay: the trace's sut_options are not applied (a file never chooses arguments to code)", file=sys.stderr, flush=True)
    if sut not in BUILTIN_SUTS:
        searchable_cwd()  # an adapter the user named may live in the working directory (searched last)
    from pwh._campaigns.counterexamples.trace import run_steps
    from pwh._campaigns.models.errors import ModelError
    from pwh._campaigns.models.language import describe

    try:
        run, violation = run_steps(sut, trace.steps, {})
    except (SUTLoadError, ModelError) as exc:
        return _error(str(exc))
    if violation is None:
        print(f"pwh replay: {run} steps against {sut!r}: every invariant holds", flush=True)
        return EXIT_OK
    for i, step in enumerate(trace.steps[: violation.step + 1]):
        print(f"  {i:>3}  {describe(step)}", flush=True)
    recorded = trace.violation or {}
    again = " (the recorded violation)" if recorded.get("invariant") == violation.invariant else ""
    print(
        f"pwh replay: {sut!r} breaks {violation.row} {violation.invariant} at step {violation.step}{again}: {violation.message}", flush=True
    )
    return EXIT_FAILED
