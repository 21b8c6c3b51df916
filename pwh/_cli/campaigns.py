"""``pwh soak``, ``pwh replay``, ``pwh bench``, ``pwh mutate`` and ``pwh corpus``: searching over
time (the stateful models, the reliability campaign, mutation) and measuring (the dispatcher's
benchmarks, the boundary scanner on its corpus).

``pwh soak`` / ``pwh replay`` come from the models (:func:`add_model_commands`; their handlers
return exit codes and print one clear line on error, never a traceback: 0 nothing found
(``soak``) or the trace passes (``replay``); 1 a counterexample was found or the trace still
fails; 2 the command could not run); :func:`add_soak_commands` puts pwh's own ``soak`` handler
over them: ``--campaign reliability`` runs the reliability campaign (core) instead of the models,
``--benchmark`` measures the models (0 measured, whatever the targets; 1 the reference broke an
invariant while it was measured; 2 bad options).
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pwh._cli.common import UsageError, check_outputs, say, unwritable, write
from pwh._cli.exit_codes import ExitCode
from pwh._harness.paths import shown

__all__ = ["VERBS", "add_commands", "add_model_commands"]

EPILOGS = {
    "soak": "exit codes: 0 nothing found; 1 a model found a violation (its trace is written) or the reliability campaign a problem; "
    "2 bad options, an unloadable SUT or an unusable --cluster; 130 Ctrl-C. With --against: 1 the two SUTs answered a step "
    "differently in RFC terms (its trace is written), 0 not (profile-only differences are counted, not failed). With "
    "--benchmark: 0 measured, whatever the targets (each is reported met or MISSED, none enforced); 1 the reference broke "
    "an invariant while it was measured; 2 bad options",
    "replay": "exit codes: 0 the trace no longer fails; 1 it still fails; 2 not a readable trace, or an unloadable SUT",
    "bench": "exit codes: 0 measured (every target is reported, none enforced); 2 bad options",
    "corpus": "exit codes: 0 the scanner meets its targets on the corpus; 1 it does not; 2 a bad corpus file (its line named)",
    "mutate": "exit codes: 0 the score meets its floor; 1 it does not; 2 the campaign could not run",
}


def add_soak_commands(sub: argparse._SubParsersAction) -> None:
    """``pwh soak`` / ``pwh replay`` come from the models package; ``pwh soak --campaign
    reliability`` runs the reliability campaign (core) instead of the models."""
    try:
        add_model_commands(sub)
    except ImportError:
        soak = sub.add_parser("soak", help="run the reliability campaign (the models are not installed)")
        soak.add_argument("--campaign", default=None)
        soak.add_argument("--minutes", type=float, default=None)
        soak.add_argument("--examples", type=int, default=None)
        soak.set_defaults(handler=_models_missing)
    soak = sub.choices["soak"]
    soak.epilog = EPILOGS["soak"]
    for action in soak._actions:
        if action.dest == "minutes":
            action.required = False
    soak.add_argument("--quick", action="store_true", help="with --campaign reliability or --benchmark: the short run the tests use")
    soak.add_argument(
        "--json",
        metavar="PATH",
        help="write the run as JSON: the models' summary with its coverage report (what each action, crash point, "
        "behaviour and invariant was exercised), the reliability campaign's counts, or the benchmark's figures",
    )
    models_handler = soak.get_default("handler")

    def handler(args: argparse.Namespace) -> ExitCode:
        if getattr(args, "benchmark", False):
            return _soak_benchmark(args)
        if args.campaign == "reliability":
            sut = getattr(args, "sut", None)
            if sut not in (None, "reference"):
                raise UsageError("--campaign reliability runs against pwh's reference only: drop --sut")
            for budget in ("--minutes", "--examples"):
                if _given_soak_options(args, (budget,)):
                    raise UsageError(f"--campaign reliability runs a fixed set of cases: drop {budget} (or --quick for the short set)")
            models_only = _given_soak_options(args, MODEL_OPTIONS)
            if models_only:
                raise UsageError(f"{models_only[0]} applies to the models, not to --campaign reliability (a fixed set of cases)")
            return _reliability(args)
        if args.quick:  # --json applies to the models too: their summary and coverage report
            raise UsageError(
                "--quick applies to --campaign reliability or --benchmark only (a soak is as long as its --minutes or --examples)"
            )
        if args.minutes is None and getattr(args, "examples", None) is None:
            raise UsageError("pwh soak needs a budget: --minutes N, --examples N or both (or --campaign reliability)")
        if models_handler is _models_missing:
            return _models_missing(args)
        return _soak(args)

    soak.set_defaults(handler=handler)
    replay = sub.choices.get("replay")
    if replay is not None:  # the trace is read here, as data: it never chooses code to run (pwh._campaigns.counterexamples.reader)
        replay.set_defaults(handler=replay_command)
        replay.epilog = EPILOGS["replay"]


# ``pwh soak``'s options, each with the attribute it sets and its value when not given: one table
# for every mode that refuses some of them (--benchmark, --campaign reliability, --against).
SOAK_OPTIONS: dict[str, tuple[str, object]] = {
    "--campaign": ("campaign", None),
    "--minutes": ("minutes", None),
    "--examples": ("examples", None),
    "--sut": ("sut", None),
    "--seed": ("seed", None),
    "--profile": ("profile", None),
    "--no-real-crashes": ("no_real_crashes", False),
    "--no-swarm": ("no_swarm", False),
    "--no-database": ("no_database", False),
    "--real-time": ("real_time", False),
    "--workers": ("workers", 1),
    "--against": ("against", None),
    "--cluster": ("cluster", None),
    "--observations": ("observations", None),
}
# What only the models read (not the reliability campaign, not the benchmark).
MODEL_OPTIONS = (
    "--profile",
    "--no-real-crashes",
    "--no-swarm",
    "--no-database",
    "--real-time",
    "--workers",
    "--against",
    "--cluster",
    "--observations",
)


def _given_soak_options(args: argparse.Namespace, options: Sequence[str]) -> list[str]:
    """Those of ``options`` the command line gave (a value other than the option's default)."""
    return [o for o in options if getattr(args, SOAK_OPTIONS[o][0], SOAK_OPTIONS[o][1]) != SOAK_OPTIONS[o][1]]


def _soak_benchmark(args: argparse.Namespace) -> ExitCode:
    """``pwh soak --benchmark [--quick] [--json PATH]``: the models' own figures, with fixed SUTs,
    seeds and budgets, so every option that chooses what a soak runs is refused."""
    given = _given_soak_options(args, ("--campaign", "--minutes", "--examples", "--sut", "--seed", *MODEL_OPTIONS))
    if given:
        raise UsageError(
            f"--benchmark measures fixed modes, seeds and budgets (the reference, then each mutant the models catch): drop {given[0]}"
        )
    check_outputs(args, "json")
    return benchmark_command(args)


def _soak(args: argparse.Namespace) -> ExitCode:
    """``pwh soak --minutes N | --examples N [--sut ...]``: the models for a while, or for so many
    generated histories. An adapter named with ``--sut`` (or ``$PWH_SUT``, the user's own
    environment) may come from the working directory, searched last; a built-in SUT imports
    nothing from it."""
    from pwh._campaigns.models.errors import ModelError as model_error
    from pwh._campaigns.soak import soak
    from pwh._harness.gate import searchable_cwd
    from pwh._suts.seam import BUILTIN_SUTS, SUTLoadError

    examples = getattr(args, "examples", None)
    if args.minutes is not None and not args.minutes > 0:
        raise UsageError("--minutes must be positive")
    if examples is not None and examples < 1:
        raise UsageError("--examples must be at least 1")
    workers = getattr(args, "workers", 1)
    if workers < 1:
        raise UsageError("--workers must be at least 1")
    sut = args.sut or os.environ.get("PWH_SUT") or "reference"
    against = getattr(args, "against", None)
    if sut not in BUILTIN_SUTS or (against and against not in BUILTIN_SUTS):
        searchable_cwd()
    check_outputs(args, "json", "observations")
    observations = _observations_file(args)
    if against:
        return _soak_against(args, sut, against, model_error)
    options = {
        "examples": examples,
        "campaign": args.campaign,
        "real_crashes": False if args.no_real_crashes else None,
        "out": say,
        "swarm": not getattr(args, "no_swarm", False),
        "database": not getattr(args, "no_database", False),
        "simulate": not getattr(args, "real_time", False),
        **({"profile": args.profile} if args.profile else {}),  # else the models' own default
        **({"observations": observations} if observations else {}),
    }
    cluster = getattr(args, "cluster", None)
    if cluster and workers != 1:
        raise UsageError("--workers does not apply with --cluster: the cluster runs one soak per worker thread it has")
    if cluster and observations:
        raise UsageError("--observations does not apply with --cluster: its tasks run on other machines")
    try:
        if cluster:
            summary = _soak_cluster(cluster, args, sut, options)
        elif workers == 1:  # today's path: one soak in this process
            summary = soak(args.minutes, sut, args.seed, **options)
        else:
            from pwh._campaigns.distribute.workers import soak_workers

            summary = soak_workers(args.minutes, sut, args.seed, workers, **options)
    except (SUTLoadError, model_error) as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write counterexamples: {exc.strerror or 'write failed'}") from None
    write(getattr(args, "json", None), json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return ExitCode.FAILED if summary["violations"] else ExitCode.OK


def _observations_file(args: argparse.Namespace) -> str | None:
    """``--observations PATH``, opened for appending before any work, so a path that cannot be
    written is refused at once (one line, exit 2) rather than after the soak."""
    path = getattr(args, "observations", None)
    if not path:
        return None
    try:
        if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the open
            raise UsageError(f"--observations {shown(path)}: not a regular file (a FIFO, socket or device is never written)")
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UsageError(f"--observations {shown(path)}: cannot be written ({exc.strerror or 'write failed'})") from None
    return str(path)


def _soak_cluster(address: str, args: argparse.Namespace, sut: str, options: dict[str, Any]) -> dict[str, Any]:
    """``pwh soak --cluster ADDRESS``: the soaks on a Dask cluster (``pwh._campaigns.distribute.cluster``);
    a cluster that cannot be used, or a task that failed there, is one line and exit 2."""
    from pwh._campaigns.distribute import cluster

    try:
        summary: dict[str, Any] = cluster.soak_cluster(address, args.minutes, sut, args.seed, **options)
    except (cluster.ClusterUnavailable, cluster.TaskFailed) as exc:
        raise UsageError(str(exc)) from None
    return summary


def _soak_against(args: argparse.Namespace, sut: str, against: str, model_error: type[Exception]) -> ExitCode:
    """``pwh soak --sut A --against B``: the differential soak (``pwh._campaigns.differential``).
    Exit 1 when the two answered a step differently in RFC terms; 0 when only in profile terms."""
    from pwh._suts.seam import SUTLoadError

    refused = _given_soak_options(args, ("--cluster", "--no-database", "--campaign", "--real-time"))
    if refused:
        raise UsageError(
            f"{refused[0]} does not apply to a differential soak (--against): no example database, no cluster, always in real time"
        )
    if against == sut:
        raise UsageError("--against must name another SUT than --sut")
    options: dict[str, Any] = {
        "examples": getattr(args, "examples", None),
        "swarm": not getattr(args, "no_swarm", False),
        **({"profile": args.profile} if args.profile else {}),
        **({"observations": args.observations} if getattr(args, "observations", None) else {}),
    }
    workers = getattr(args, "workers", 1)
    try:
        if workers == 1:
            from pwh._campaigns.differential import differential_soak

            summary = differential_soak(args.minutes, sut, against, args.seed, out=say, **options)
        else:  # the same engine in each worker, merged
            from pwh._campaigns.distribute.workers import soak_workers

            summary = soak_workers(args.minutes, sut, args.seed, workers, against=against, out=say, **options)
    except (SUTLoadError, model_error) as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write counterexamples: {exc.strerror or 'write failed'}") from None
    write(getattr(args, "json", None), json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return ExitCode.FAILED if summary["divergences"] else ExitCode.OK


def _models_missing(args: argparse.Namespace) -> ExitCode:
    if args.campaign == "reliability":
        return _reliability(args)
    raise UsageError("the stateful models (pwh._campaigns) are not installed beside pwh")


def _reliability(args: argparse.Namespace) -> ExitCode:
    from pwh._reliability.campaign import failed, run_campaign

    check_outputs(args, "json")
    result = run_campaign(quick=bool(getattr(args, "quick", False)), seed=getattr(args, "seed", None) or 0, out=say)
    write(getattr(args, "json", None), json.dumps(result, indent=2, sort_keys=True) + "\n")
    return ExitCode.FAILED if failed(result) else ExitCode.OK


def add_bench_command(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="measure dispatch cost beside the SQLite commit floor (and LoopX)", epilog=EPILOGS["bench"])
    bench.add_argument("--quick", action="store_true", help="fewer repetitions (a minute or two); every ratio is still reported")
    bench.add_argument("--json", metavar="PATH", help="write workloads and ratios as JSON")
    bench.add_argument(
        "--plot",
        metavar="PATH",
        help="write the figure, PATH.svg or PATH.png (needs the plot extra): time per dispatch against hook count and journal size "
        "beside the floor, the skeleton and LoopX, and each ratio against its target",
    )
    bench.add_argument("--compare", choices=["loopx"], help="also run the 1- and 8-hook workloads through the loopx adapter")
    bench.add_argument(
        "--dir",
        metavar="DIR",
        help="where the durable workloads write (default: the system temp dir); put it on the disk you mean to measure",
    )
    bench.add_argument(
        "--ab",
        choices=["memory", "sqlite"],
        help="instead: alternate the process and thread runners in one process (12 blocks of 50 dispatches) and print the A/B as JSON",
    )
    bench.add_argument(
        "--gate",
        choices=["also", "only", "no"],
        default="also",
        help="time whole `pwh gate --quiet` runs of the reference and (when installed) LoopX against 10 s and 30 s: "
        "after the dispatcher figures (also, the default), alone (only), or not at all (no)",
    )
    bench.set_defaults(handler=_bench)


def _bench(args: argparse.Namespace) -> ExitCode:
    import tempfile

    from pwh._bench.measure import BenchPlan, run_bench
    from pwh._bench.report import render_table

    if args.plot:  # every refusal of --plot comes before the measuring, the missing extra too
        if Path(args.plot).suffix.lower() not in (".svg", ".png"):
            raise UsageError("--plot writes SVG or PNG: give a path ending in .svg or .png")
        check_outputs(args, "plot")
        try:
            from pwh._bench import plot
        except ImportError as exc:
            name = exc.name or "matplotlib"
            if name.startswith("pwh"):
                raise
            missing = "" if name.partition(".")[0] == "matplotlib" else f" (it cannot import {name})"
            raise UsageError(f"--plot needs matplotlib, the plot extra{missing}: pip install -e '.[plot]'") from None
    if args.ab:
        from pwh._bench.workloads import isolation_ab

        print(json.dumps(isolation_ab(args.ab)))
        return ExitCode.OK
    if args.compare == "loopx":
        try:
            import loopx  # noqa: F401
        except ImportError:
            raise UsageError("--compare loopx needs the loopx extra: pip install -e '.[loopx]'") from None
    base = Path(args.dir) if args.dir else Path(tempfile.gettempdir())
    if not base.is_dir():
        raise UsageError(f"--dir {args.dir} is not a directory")
    plan = BenchPlan(quick=args.quick, compare_loopx=args.compare == "loopx")
    if args.gate == "only" and (args.compare or args.dir or args.plot):
        raise UsageError("--gate only times whole gate runs: drop --compare, --dir and --plot (they are the dispatcher figures')")
    if args.gate != "only":
        print(f"pwh bench: {'quick' if args.quick else 'full'} run, {plan.reps()} repetitions, durable stores under --dir", flush=True)
        result = run_bench(plan, base, out=say)
    else:
        result = {"workloads": {}, "ratios": {}}
    if args.gate != "no":
        from pwh._bench.gate import gate_figures

        reps = 1 if args.quick else 3
        print(f"pwh bench: {reps} whole gate run(s) per SUT", flush=True)
        result["gate"] = gate_figures(reps=reps, out=say)
    print()
    print(render_table(result), end="")
    write(args.json, json.dumps(result, indent=2, sort_keys=True) + "\n")
    if args.plot:
        run = f"{'quick' if args.quick else 'full'} run, {plan.reps()} repetitions"
        figure = plot.render_plot(
            result, Path(args.plot).suffix.lower()[1:], measured=plot.today_utc(), machine=plot.machine_description(), run=run
        )
        try:
            Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
            Path(args.plot).write_bytes(figure)
        except OSError as exc:
            raise UsageError(f"cannot write {shown(args.plot)}: {exc.strerror or 'write failed'}") from None
        print(f"wrote {shown(args.plot)}", flush=True)
    return ExitCode.OK


def add_mutation_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mutate", help="mutation campaign over the dispatcher core, judged by the matrix and the quick models", epilog=EPILOGS["mutate"]
    )
    p.add_argument("--max-children", type=int, default=2, help="mutants run at once (default 2)")
    p.add_argument("--resume", action="store_true", help="keep mutants/ and mutmut's cached results (default: a fresh campaign)")
    p.add_argument(
        "--only",
        metavar="FILE",
        help="re-run only the mutants named in FILE (one a line, e.g. survivors); the rest keep their cached results (implies --resume)",
    )
    p.add_argument(
        "--within",
        metavar="FILE",
        help="the mutants named in FILE (e.g. the seeded sample) that this run did not check keep"
        " the outcome the committed survivors.md gives them (a mutant of FILE it does not list was killed): for --only on a fresh mutants/",
    )
    p.add_argument("--report-only", action="store_true", help="do not run: write score.json and survivors.md from mutants/")
    p.add_argument("--partial", action="store_true", help="label the results partial (a campaign stopped before every mutant ran)")
    p.set_defaults(handler=_mutate)


def _mutate(args: argparse.Namespace) -> ExitCode:
    from pwh._harness.mutation import MutationError, run_campaign

    try:
        score = run_campaign(
            max_children=args.max_children,
            resume=args.resume,
            only=args.only,
            within=args.within,
            report_only=args.report_only,
            partial=args.partial,
        )
    except MutationError as exc:
        print(f"pwh mutate: error: {exc}", file=sys.stderr)
        return ExitCode.ERROR
    return ExitCode.OK if score["score"] >= score["target"] else ExitCode.FAILED


def add_corpus_command(sub: argparse._SubParsersAction) -> None:
    """``pwh corpus [CORPUS.jsonl] [--json]``: this module's own verb, added to the one CLI."""
    p = sub.add_parser(
        "corpus",
        help="measure the boundary scanner on a labelled corpus (the shipped one, or one kept apart)",
        epilog=EPILOGS["corpus"],
    )
    p.add_argument(
        "corpus", metavar="CORPUS.jsonl", nargs="?", help="one JSON object a line: value, label (private|legitimate), kind[, field]"
    )
    p.add_argument("--json", action="store_true", help="print the rates as JSON instead of the table")
    p.set_defaults(handler=run_corpus_command)


def run_corpus_command(args: argparse.Namespace) -> ExitCode:
    """0 every target met; 1 a target missed; 2 the corpus could not be read (one line, its name only)."""
    from pwh._core.boundary import BoundaryScanner
    from pwh._harness.boundary_corpus import load_entries, measure, render_corpus
    from pwh._harness.gate_error import GateError

    entries = None
    if args.corpus:
        try:
            entries = load_entries(args.corpus)
        except GateError as exc:  # not a regular file, too large, unreadable: one line naming it
            print(f"pwh corpus: error: {exc}", file=sys.stderr)
            return ExitCode.ERROR
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            why = (
                exc.strerror
                if isinstance(exc, OSError) and exc.strerror
                else ("not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc))
            )
            print(f"pwh corpus: error: {Path(args.corpus).name}: {why}", file=sys.stderr)
            return ExitCode.ERROR
    rates = measure(BoundaryScanner(), entries)
    print(json.dumps(rates, indent=2, sort_keys=True) if args.json else "\n".join(render_corpus(rates)))
    return ExitCode.OK if rates["target_met"] else ExitCode.FAILED


def add_model_commands(subparsers: argparse._SubParsersAction) -> None:
    """Register ``soak`` and ``replay`` as the models define them (pwh's own ``soak`` handler,
    :func:`add_soak_commands`, adds the reliability campaign and the benchmark over it)."""
    from pwh._campaigns.models.profiles import DEFAULT_PROFILE, PROFILES

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
        "--real-time",
        action="store_true",
        help="run every round in real mode: Hypothesis's histories, providers on the SUT's own runner with real limits "
        "(default: simulation, histories drawn from each round's seed and providers in virtual time, with every 4th "
        "round in real mode; a finding made in simulation is replayed in real mode before it is reported)",
    )
    soak.add_argument(
        "--no-database",
        action="store_true",
        help="neither save failing examples nor replay them (default: Hypothesis's example database, one per SUT in "
        "hypothesis-examples/ under $PWH_COUNTEREXAMPLES, else under the temp dir's pwh-counterexamples-UID/; "
        "a failure found there is tried first the next time)",
    )
    soak.add_argument(
        "--observations",
        metavar="PATH",
        help="append what the soak saw to PATH as JSON lines (pwh_campaign_observation_v0: its start, each round, each "
        "finding, its end; with --workers, every worker's); files of several soaks merge by concatenation, and "
        "pwh report PATH... renders the merged totals",
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
        "back, counts, counterexamples and coverage merged here (needs the cluster extra: pip install -e '.[cluster]')",
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


def soak_command(args: argparse.Namespace) -> ExitCode:
    from pwh import SUTLoadError
    from pwh._campaigns.models.profiles import DEFAULT_PROFILE
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
    path = getattr(args, "json", None)  # pwh's CLI adds --json (the summary with its coverage report)
    if path and unwritable(Path(path)):
        return _error(f"--json {shown(path)} {unwritable(Path(path))}")
    _importable_cwd()
    sut = args.sut or os.environ.get("PWH_SUT") or "reference"
    options: dict[str, Any] = {
        "examples": getattr(args, "examples", None),
        "campaign": args.campaign,
        "real_crashes": False if args.no_real_crashes else None,
        "profile": args.profile or DEFAULT_PROFILE,
        "swarm": not getattr(args, "no_swarm", False),
        "database": not getattr(args, "no_database", False),
        "simulate": not getattr(args, "real_time", False),
    }
    try:
        if workers == 1:
            summary = soak(args.minutes, sut, args.seed, out=say, **options)
        else:
            from pwh._campaigns.distribute.workers import soak_workers

            summary = soak_workers(args.minutes, sut, args.seed, workers, out=say, **options)
    except (SUTLoadError, ModelError) as exc:
        return _error(str(exc))
    except OSError as exc:
        return _error(f"cannot write counterexamples: {exc.strerror or 'write failed'}")
    write(path, json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return ExitCode.FAILED if summary["violations"] else ExitCode.OK


def benchmark_command(args: argparse.Namespace) -> ExitCode:
    """``pwh soak --benchmark [--quick] [--json PATH]``: the figures beside their targets, on the
    terminal and (``--json``) in a file. Exit 0 once measured, whatever the targets; 1 when the
    reference broke an invariant while it was measured; 2 bad options or an unwritable file."""
    from pwh._campaigns.search_bench import render_table, run_benchmark, to_json

    path = getattr(args, "json", None)
    if path and unwritable(Path(path)):
        return _error(f"--json {shown(path)} {unwritable(Path(path))}")
    _importable_cwd()
    result = run_benchmark(quick=bool(getattr(args, "quick", False)), out=say)
    print()
    print(render_table(result), end="", flush=True)
    write(path, json.dumps(to_json(result), indent=2, sort_keys=True) + "\n")
    return ExitCode.FAILED if result["reference_violations"] else ExitCode.OK


def replay_command(args: argparse.Namespace) -> ExitCode:
    """``pwh replay``: pwh's own handler, which reads the trace as data (it never chooses code)."""
    return _replay(args)


def _importable_cwd() -> None:
    """``--sut module:factory`` names modules relative to where pwh is run, as ``python -m`` does,
    but the working directory is searched last: a stray ``random.py`` there never shadows a module."""
    from pwh._harness.gate import searchable_cwd

    searchable_cwd()


def _error(message: str) -> ExitCode:
    print(f"pwh: error: {message}", file=sys.stderr)
    return ExitCode.ERROR


def _replay(args: argparse.Namespace) -> ExitCode:
    """``pwh replay TRACE.json [--sut NAME|module:factory]``: 0 every invariant holds, 1 the trace
    still fails, 2 it could not run (not a trace, a refused or unloadable SUT)."""
    from pwh._campaigns.counterexamples.reader import ReplayError, choose_sut, parse_trace, read_trace_bytes, shown_file
    from pwh._harness.gate import searchable_cwd
    from pwh._suts.seam import BUILTIN_SUTS, SUTLoadError

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
        return ExitCode.OK
    for i, step in enumerate(trace.steps[: violation.step + 1]):
        print(f"  {i:>3}  {describe(step)}", flush=True)
    recorded = trace.violation or {}
    again = " (the recorded violation)" if recorded.get("invariant") == violation.invariant else ""
    print(
        f"pwh replay: {sut!r} breaks {violation.row} {violation.invariant} at step {violation.step}{again}: {violation.message}", flush=True
    )
    return ExitCode.FAILED


# Each verb of this group, by the name ``pwh --help`` lists it under (pwh._cli adds them in its order);
# ``soak`` adds ``replay`` too (its handler is pwh's own, over the models').
VERBS: dict[str, Callable[[argparse._SubParsersAction], None]] = {
    "bench": add_bench_command,
    "soak": add_soak_commands,
    "mutate": add_mutation_command,
    "corpus": add_corpus_command,
}


def add_commands(sub: argparse._SubParsersAction) -> None:
    """``pwh soak``, ``pwh replay``, ``pwh bench``, ``pwh mutate`` and ``pwh corpus``."""
    for add in VERBS.values():
        add(sub)
