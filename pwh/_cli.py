"""The ``pwh`` command line: one module, argparse, no tracebacks for a user.

Exit codes: 0 success; 1 the judged implementation failed (a row failed, a check found problems);
2 the command could not run (bad arguments, missing files, an unloadable SUT); 3 an incomplete
gate verdict; 130 a real Ctrl-C, 143 a SIGTERM, 129 a SIGHUP (every process pwh started is stopped
first: ``pwh._harness.interrupt``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pwh._harness import interrupt as ctrl_c
from pwh._harness.gate_error import GateError
from pwh._harness.packet.commands import add_packet_commands
from pwh._harness.paths import feature_label, shown, write_output
from pwh._harness.report import cucumber_json, html_report, junit_xml, markdown_report, verdict_json, verdict_table
from pwh._suts.faults import is_user_interrupt, sigint_count, track_user_interrupts
from pwh._version import __version__

if TYPE_CHECKING:
    from pwh._harness.gate import Pick

EXIT_OK, EXIT_FAILED, EXIT_ERROR, EXIT_INCOMPLETE = 0, 1, 2, 3
EXIT_INTERRUPTED = ctrl_c.EXIT_INTERRUPTED


class UsageError(Exception):
    """A problem with what the user asked for; shown as one line, exit 2."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # reported by the sub-command's own parser, so its usage (not pwh's) is shown
        getattr(args, "_command_parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "handler", None):  # `pwh`, `pwh packet`, `pwh scenarios`: that command's own help
        getattr(args, "_command_parser", parser).print_help(sys.stderr)
        return EXIT_ERROR
    track_user_interrupts()
    since = sigint_count()
    if argv is None:  # run as the program: orphaned descendants come back to pwh to be stopped
        ctrl_c.become_subreaper()
    restore = ctrl_c.install()  # a SIGINT stops every process pwh started, by PID (pwh._harness.interrupt)
    code = _run(args, since, restore)
    if argv is None:
        ctrl_c.exit_now_if_interrupted(code)
    return code


def _run(args: argparse.Namespace, since: int, restore: Callable[[], None]) -> int:
    """The command's handler, with every way it can end turned into an exit code."""
    try:
        return int(args.handler(args))
    except (UsageError, GateError) as exc:
        print(f"pwh: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt as exc:
        if ctrl_c.terminated():  # SIGTERM, SIGHUP: ended as a Ctrl-C ends it
            return _interrupted()
        if not is_user_interrupt(exc, since):  # raised by code pwh ran (an adapter), not a Ctrl-C
            return _ended_by(exc)
        return _interrupted()
    except (SystemExit, GeneratorExit) as exc:  # pwh's handlers return codes: this came from an adapter
        return _ended_by(exc)
    except Exception as exc:  # a bug in pwh: one line for the user, the traceback on request
        if os.environ.get("PWH_DEBUG"):
            raise
        if ctrl_c.interrupted():  # a clean-up that failed as the Ctrl-C unwound it
            return _interrupted()
        print(f"pwh: internal error ({type(exc).__name__}); rerun with PWH_DEBUG=1 to see where", file=sys.stderr)
        return EXIT_ERROR
    finally:
        restore()


def _interrupted() -> int:
    """A real Ctrl-C (or SIGTERM, SIGHUP): whatever pwh started is stopped, one line, exit 130 (143, 129)."""
    ctrl_c.stop_descendants()
    print(ctrl_c.message(), file=sys.stderr)
    return ctrl_c.exit_code()


def _ended_by(exc: BaseException) -> int:
    """An adapter's SystemExit/KeyboardInterrupt must not end pwh quietly (exit 0) or pass for a
    Ctrl-C (130): exit 2, naming the exception (where it was raised is named by the loaders)."""
    print(f"pwh: error: the run was ended by {type(exc).__name__} raised inside it (by the SUT?); nothing more was judged", file=sys.stderr)
    return EXIT_ERROR


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pwh", description="Verification harness for the post-writeback capability hooks RFC.")
    p.add_argument("--version", action="version", version=f"pwh {__version__}")
    sub = p.add_subparsers(title="commands")

    gate = sub.add_parser(
        "gate",
        help="run the Gherkin matrix against a SUT and print the verdict per row",
        epilog=(
            "exit codes: 0 the RFC verdict passes; 1 an RFC check failed (or, with --strict, incomplete; with "
            "--fail-on-profile, a profile divergence); 2 the gate could not run (also: a selection it cannot honour, "
            "no verdict written); 3 incomplete (a row skipped); 130 Ctrl-C"
        ),
    )
    gate.add_argument(
        "where",
        nargs="*",
        metavar="FEATURE[:LINE]",
        help="only the scenarios of these feature files; with :LINE, the scenario that line is in (its line as reports "
        "name it, a tag or a step; an outline's Examples row: that example only). A LINE in no scenario is an error",
    )
    gate.add_argument(
        "--sut",
        action="append",
        help="built-in name (reference, reference-memory, loopx) or module:factory (default: reference; with --failed-in, "
        "the verdict's SUT). Given once: a run judges one SUT, so --sut twice is an error (gate each, then pwh compare)",
    )
    gate.add_argument("--json", metavar="PATH", help="write the verdict as JSON")
    gate.add_argument("--junit", metavar="PATH", help="write JUnit XML (one suite per row)")
    gate.add_argument("--cucumber", metavar="PATH", help="write Cucumber JSON")
    gate.add_argument("--report", metavar="PATH", help="write a report: .md for Markdown, .html for one HTML page")
    gate.add_argument("--coverage", action="store_true", help="measure branch coverage of the reference by the matrix alone")
    gate.add_argument("--features", metavar="DIR", help="feature files to run (default: the project's features/)")
    gate.add_argument(
        "--rows", metavar="IDS", help="only these rows, comma-separated (for a quick look; the verdict then covers only them)"
    )
    gate.add_argument(
        "-x",
        "--exitfirst",
        action="store_true",
        help="stop at the first failing scenario (for a quick look; the verdict then says it stopped there)",
    )
    gate.add_argument("--strict", action="store_true", help="an incomplete verdict (a row skipped) fails the gate too (exit 1, not 3)")
    gate.add_argument(
        "--fail-on-profile",
        action="store_true",
        help="a profile divergence (differs from pwh's reading where the RFC is silent) fails the gate too",
    )
    gate.add_argument(
        "--durable",
        action="store_true",
        help="run the SQLite stores at synchronous=FULL (slower; the default NORMAL is crash-safe in WAL mode)",
    )
    gate.add_argument("--quiet", action="store_true", help="no per-scenario progress lines")
    gate.add_argument("-k", dest="keyword", metavar="EXPR", help="only scenarios whose name matches, as pytest's -k")
    gate.add_argument(
        "-m",
        "--tags",
        dest="tags",
        metavar="EXPR",
        help="only scenarios whose tags match, as pytest's -m; a tag with or without its @ ('@M06 and not @wip' is 'M06 and not "
        "wip'). A bad -k or -m, or a selection that matches no scenario, is an error",
    )
    gate.add_argument(
        "--failed-in",
        metavar="VERDICT.json",
        help="only the scenarios that failed in a saved verdict, against the SUT it names (pwh's --lf: the verdict is the "
        "cache). A verdict naming module:factory runs only with that same --sut: a file never chooses code to run",
    )
    gate.set_defaults(handler=_gate)

    scen = sub.add_parser("scenarios", help="work with the feature files")
    scen_sub = scen.add_subparsers(title="scenario commands")
    check = scen_sub.add_parser("check", help="every row has scenarios, every scenario one known tag, every step a definition")
    check.add_argument("--features", metavar="DIR", help="feature files to check (default: the project's features/)")
    check.add_argument("--steps", default="scenarios", metavar="PACKAGE", help="the step library package (default: scenarios)")
    check.set_defaults(handler=_scenarios_check)
    steps = scen_sub.add_parser(
        "steps",
        help="list every step of the library in readable form, with its parameters and allowed phrases",
        epilog="exit codes: 0 listed; 2 the step library cannot be imported",
    )
    steps.add_argument("--steps", default="scenarios", metavar="PACKAGE", help="the step library package (default: scenarios)")
    steps.add_argument("--json", action="store_true", help="print the catalog as JSON")
    steps.set_defaults(handler=_scenarios_steps)

    bench = sub.add_parser("bench", help="measure dispatch cost beside the SQLite commit floor (and LoopX)")
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
    bench.set_defaults(handler=_bench)

    vectors = sub.add_parser("vectors", help="print the identity test vectors (or --check the shipped file)")
    vectors.add_argument("--check", action="store_true", help="exit 1 if the shipped vectors differ from the reference profile")
    vectors.set_defaults(handler=_vectors)
    add_packet_commands(sub)
    _add_model_commands(sub)
    importlib.import_module("pwh._harness.mutation").add_mutation_command(sub)
    importlib.import_module("pwh._harness.divergences").add_divergences_command(sub)
    importlib.import_module("pwh._harness.boundary_corpus").add_corpus_command(sub)
    importlib.import_module("pwh._harness.verdicts").add_verdict_commands(sub)
    importlib.import_module("pwh._harness.smoke").add_smoke_command(sub)
    importlib.import_module("pwh._harness.rulebook").add_rules_command(sub)
    _tag_command_parsers(p, ())
    return p


# Exit codes of the commands whose own parser does not state them (the others set an epilog).
EXIT_CODES: dict[tuple[str, ...], str] = {
    ("soak",): "0 nothing found; 1 a model found a violation (its trace is written) or the reliability campaign a problem; "
    "2 bad options, an unloadable SUT or an unusable --cluster; 130 Ctrl-C. With --against: 1 the two SUTs answered a step "
    "differently in RFC terms (its trace is written), 0 not (profile-only differences are counted, not failed). With "
    "--benchmark: 0 measured, whatever the targets (each is reported met or MISSED, none enforced); 1 the reference broke "
    "an invariant while it was measured; 2 bad options",
    ("replay",): "0 the trace no longer fails; 1 it still fails; 2 not a readable trace, or an unloadable SUT",
    ("vectors",): "0 printed, or (--check) the shipped vectors match; 1 they differ",
    ("bench",): "0 measured (every target is reported, none enforced); 2 bad options",
    ("scenarios", "check"): "0 no problem; 1 problems, one line each; 2 the step library or the features cannot be read",
    ("divergences",): "0 written; 2 the verdict cannot be read",
    ("corpus",): "0 the scanner meets its targets on the corpus; 1 it does not; 2 a bad corpus file (its line named)",
    ("mutate",): "0 the score meets its floor; 1 it does not; 2 the campaign could not run",
}


def _tag_command_parsers(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
    """Each command's parser knows itself (a usage error shows its own usage) and states its exit codes."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                here = (*path, name)
                command.set_defaults(_command_parser=command)
                if command.epilog is None and here in EXIT_CODES:
                    command.epilog = "exit codes: " + EXIT_CODES[here]
                _tag_command_parsers(command, here)


def _add_model_commands(sub: argparse._SubParsersAction) -> None:
    """``pwh soak`` / ``pwh replay`` come from the models package; ``pwh soak --campaign
    reliability`` runs the reliability campaign (core) instead of the models."""
    try:
        from pwh._campaigns.commands import add_model_commands

        add_model_commands(sub)
    except ImportError:
        soak = sub.add_parser("soak", help="run the reliability campaign (the models are not installed)")
        soak.add_argument("--campaign", default=None)
        soak.add_argument("--minutes", type=float, default=None)
        soak.add_argument("--examples", type=int, default=None)
        soak.set_defaults(handler=_models_missing)
    soak = sub.choices["soak"]
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

    def handler(args: argparse.Namespace) -> int:
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
        from pwh._campaigns.commands import replay_command

        replay.set_defaults(handler=replay_command)


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
    "--workers": ("workers", 1),
    "--against": ("against", None),
    "--cluster": ("cluster", None),
}
# What only the models read (not the reliability campaign, not the benchmark).
MODEL_OPTIONS = ("--profile", "--no-real-crashes", "--no-swarm", "--no-database", "--workers", "--against", "--cluster")


def _given_soak_options(args: argparse.Namespace, options: Sequence[str]) -> list[str]:
    """Those of ``options`` the command line gave (a value other than the option's default)."""
    return [o for o in options if getattr(args, SOAK_OPTIONS[o][0], SOAK_OPTIONS[o][1]) != SOAK_OPTIONS[o][1]]


def _soak_benchmark(args: argparse.Namespace) -> int:
    """``pwh soak --benchmark [--quick] [--json PATH]``: the models' own figures, with fixed SUTs,
    seeds and budgets, so every option that chooses what a soak runs is refused."""
    given = _given_soak_options(args, ("--campaign", "--minutes", "--examples", "--sut", "--seed", *MODEL_OPTIONS))
    if given:
        raise UsageError(
            f"--benchmark measures fixed modes, seeds and budgets (the reference, then each mutant the models catch): drop {given[0]}"
        )
    _check_outputs(args, "json")
    from pwh._campaigns.commands import benchmark_command

    return int(benchmark_command(args))


def _soak(args: argparse.Namespace) -> int:
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
    _check_outputs(args, "json")
    if against:
        return _soak_against(args, sut, against, model_error)
    options = {
        "examples": examples,
        "campaign": args.campaign,
        "real_crashes": False if args.no_real_crashes else None,
        "out": lambda line: print(line, flush=True),
        "swarm": not getattr(args, "no_swarm", False),
        "database": not getattr(args, "no_database", False),
        **({"profile": args.profile} if args.profile else {}),  # else the models' own default
    }
    cluster = getattr(args, "cluster", None)
    if cluster and workers != 1:
        raise UsageError("--workers does not apply with --cluster: the cluster runs one soak per worker thread it has")
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
    _write(getattr(args, "json", None), json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return EXIT_FAILED if summary["violations"] else EXIT_OK


def _soak_cluster(address: str, args: argparse.Namespace, sut: str, options: dict[str, Any]) -> dict[str, Any]:
    """``pwh soak --cluster ADDRESS``: the soaks on a Dask cluster (``pwh._campaigns.distribute.cluster``);
    a cluster that cannot be used, or a task that failed there, is one line and exit 2."""
    from pwh._campaigns.distribute import cluster

    try:
        summary: dict[str, Any] = cluster.soak_cluster(address, args.minutes, sut, args.seed, **options)
    except (cluster.ClusterUnavailable, cluster.TaskFailed) as exc:
        raise UsageError(str(exc)) from None
    return summary


def _soak_against(args: argparse.Namespace, sut: str, against: str, model_error: type[Exception]) -> int:
    """``pwh soak --sut A --against B``: the differential soak (``pwh._campaigns.differential``).
    Exit 1 when the two answered a step differently in RFC terms; 0 when only in profile terms."""
    from pwh._suts.seam import SUTLoadError

    refused = _given_soak_options(args, ("--workers", "--cluster", "--no-database", "--campaign"))
    if refused:
        raise UsageError(f"{refused[0]} does not apply to a differential soak (--against): one process, no example database")
    if against == sut:
        raise UsageError("--against must name another SUT than --sut")
    from pwh._campaigns.differential import differential_soak

    try:
        summary = differential_soak(
            args.minutes,
            sut,
            against,
            args.seed,
            examples=getattr(args, "examples", None),
            out=lambda line: print(line, flush=True),
            swarm=not getattr(args, "no_swarm", False),
            **({"profile": args.profile} if args.profile else {}),
        )
    except (SUTLoadError, model_error) as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write counterexamples: {exc.strerror or 'write failed'}") from None
    _write(getattr(args, "json", None), json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return EXIT_FAILED if summary["divergences"] else EXIT_OK


def _models_missing(args: argparse.Namespace) -> int:
    if args.campaign == "reliability":
        return _reliability(args)
    raise UsageError("the stateful models (pwh._campaigns) are not installed beside pwh")


def _reliability(args: argparse.Namespace) -> int:
    from pwh._reliability.campaign import failed, run_campaign

    _check_outputs(args, "json")
    result = run_campaign(
        quick=bool(getattr(args, "quick", False)), seed=getattr(args, "seed", None) or 0, out=lambda line: print(line, flush=True)
    )
    _write(getattr(args, "json", None), json.dumps(result, indent=2, sort_keys=True) + "\n")
    return EXIT_FAILED if failed(result) else EXIT_OK


def _gate(args: argparse.Namespace) -> int:
    from pwh._harness.gate import keyword_expression, tag_expression

    keyword_expression(args.keyword)  # a bad -k or -m: one line, exit 2, before any work
    tag_expression(args.tags)
    rows = [r.strip() for r in args.rows.split(",")] if args.rows else None
    _check_outputs(args, "json", "junit", "cucumber", "report")
    saved = _saved_verdict(args)
    sut = _gate_sut(args, saved)
    _refuse_options_that_do_not_apply(args, rows, sut)
    picked = _scenario_selection(args, saved)
    print(f"pwh gate: running the matrix against SUT {sut!r}", flush=True)
    from pwh._harness.gate import run_gate  # loaded by the verbs that run it: `pwh packet verify` never does

    run = run_gate(
        sut,
        features=args.features,
        coverage=args.coverage,
        progress=not args.quiet,
        rows=rows,
        durable=args.durable,
        exitfirst=args.exitfirst,
        keyword=args.keyword,
        tags=args.tags,
        scenarios=picked,
    )
    if not run.scenarios and not run.collection_errors:
        raise UsageError(f"{_selection_words(args)} matches no scenario: nothing was judged, no verdict written")
    verdict = run.verdict()
    if args.coverage and run.coverage is not None:
        from pwh._harness.coverage_notes import OUTSIDE_RFC

        verdict["coverage"]["outside_rfc"] = OUTSIDE_RFC
    print()
    print(verdict_table(verdict, rows=rows), end="")
    _write(args.json, verdict_json(verdict))
    _write(args.junit, junit_xml(verdict))
    _write(args.cucumber, cucumber_json(verdict, {s["id"]: s.get("steps", []) for s in run.scenarios}))
    if args.report:
        _write(args.report, html_report(verdict) if args.report.lower().endswith((".html", ".htm")) else markdown_report(verdict))
    if verdict.get("stopped_at_first_failure"):
        print("pwh gate: stopped at the first failing scenario (-x): the scenarios after it never ran", file=sys.stderr)
    if run.collection_errors:
        print(f"pwh: {len(run.collection_errors)} collection error(s): the scenarios could not all be loaded", file=sys.stderr)
    return gate_exit_code(verdict["summary"], strict=args.strict, fail_on_profile=args.fail_on_profile)


REPORT_SUFFIXES = (".md", ".html", ".htm")


def _scenario_selection(args: argparse.Namespace, saved: dict[str, Any] | None) -> list[Pick] | None:
    """``FEATURE[:LINE]`` arguments and the failures of a ``--failed-in`` verdict, each resolved
    in the features before any scenario runs: a LINE in no scenario is refused, not an empty run."""
    from pwh._harness.gate import Pick, failed_picks, locate, pick_at

    feature_dir = locate(args.features)[0]
    base = feature_dir.parent
    picked: list[Pick] = []
    for where in args.where:
        path, _, line = where.rpartition(":") if where.rpartition(":")[2].isdigit() else (where, "", "")
        candidates = [Path(path), base / path, feature_dir / path]
        found = next((c.resolve() for c in candidates if c.is_file() and c.suffix == ".feature"), None)
        if found is None or not found.is_relative_to(feature_dir.resolve()):
            raise UsageError(f"{shown(path)}: not a .feature file of the features directory")
        label = feature_label(found, feature_dir.resolve())
        picked.append(pick_at(found, label, int(line)) if line else Pick(label, label=label))
    if saved is not None:
        picked += failed_picks(saved, feature_dir, shown(args.failed_in))
    return picked or None


def _saved_verdict(args: argparse.Namespace) -> dict[str, Any] | None:
    """The ``--failed-in`` verdict, read once, with at least one failure to run again."""
    if not args.failed_in:
        return None
    from pwh._harness.verdicts import load_verdict

    saved = load_verdict(args.failed_in)
    if not any(s["rfc"] == "fail" and s.get("feature") for s in saved["scenarios"]):
        raise UsageError(f"--failed-in {shown(args.failed_in)}: no scenario failed there")
    return saved


def _gate_sut(args: argparse.Namespace, saved: dict[str, Any] | None) -> str:
    """The one SUT a run judges: ``--sut`` (given once), else a ``--failed-in`` verdict's own SUT,
    else the reference. Its failures are that SUT's, so another ``--sut`` is refused; and since a
    file never chooses code to run, a verdict naming ``module:factory`` (not a built-in name) is
    run only when the user names that SUT too (as ``pwh replay`` does with a trace)."""
    from pwh._campaigns.counterexamples.reader import shown_sut
    from pwh._suts.seam import BUILTIN_SUTS

    given = args.sut or []
    if len(given) > 1:
        raise UsageError(
            f"--sut given {len(given)} times ({', '.join(map(repr, given))}): a gate run judges one SUT; "
            "gate each in its own run (then `pwh compare` the verdicts)"
        )
    if saved is None:
        return given[0] if given else "reference"
    named, source = str(saved["sut"]), shown(args.failed_in)
    if given and given[0] != named:
        raise UsageError(
            f"--failed-in {source}: its failures are SUT {shown_sut(named)}'s, and --sut names {given[0]!r}; "
            "drop --sut to run them again against their own SUT"
        )
    if not given and named not in BUILTIN_SUTS:
        shown_name = shown_sut(named)
        hint = f"name it yourself: --sut {named}" if shown_name.startswith("'") else "give --sut NAME|module:factory"
        raise UsageError(f"--failed-in {source} names SUT {shown_name}, which is not built in; a verdict never chooses code to run: {hint}")
    return named


def _selection_words(args: argparse.Namespace) -> str:
    """The selection as the user gave it, for the line saying it matched nothing."""
    parts = [*map(shown, args.where[:3]), *(["..."] if len(args.where) > 3 else [])]
    parts += [f"{flag} {value!r}" for flag, value in (("-k", args.keyword), ("-m", args.tags)) if value is not None]
    parts += [f"--rows {args.rows}"] if args.rows else []
    parts += [f"--failed-in {shown(args.failed_in)}"] if args.failed_in else []
    return "the selection " + " ".join(parts) if parts else "the run"


def _refuse_options_that_do_not_apply(args: argparse.Namespace, rows: list[str] | None, sut: str) -> None:
    """An option that would be ignored is an error, before any work: a user must not believe a
    report, a coverage figure or a row filter was produced when it was not."""
    from pwh._harness.rules import RULE_IDS

    for option in ("json", "junit", "cucumber", "report"):
        if getattr(args, option, None) == "-":
            raise UsageError(f"--{option} -: the terminal gets the verdict table; name a file to write")
    if args.report and not args.report.lower().endswith(REPORT_SUFFIXES):
        raise UsageError(f"--report {shown(args.report)}: name a .md (Markdown) or .html (HTML) file")
    if args.coverage and sut != "reference":
        raise UsageError("--coverage measures the reference dispatcher: it does not apply to --sut " + repr(sut))
    if args.coverage and rows:
        raise UsageError("--coverage measures what the whole matrix covers: it does not apply with --rows")
    unknown = [r for r in rows or [] if r not in RULE_IDS]
    if unknown or (rows is not None and not rows):
        raise UsageError(f"--rows: unknown row {', '.join(unknown) or '(empty)'}; known: {', '.join(RULE_IDS)}")


def gate_exit_code(summary: dict, *, strict: bool = False, fail_on_profile: bool = False) -> int:
    """0 pass, 1 an RFC failure (or, when asked, a profile divergence or an incomplete verdict),
    2 the testbed's own self-checks failed (no verdict can be trusted), 3 incomplete."""
    if summary["self_checks"]["failed"]:
        print(
            f"pwh gate: {summary['self_checks']['failed']} testbed self-check(s) failed: pwh's own fakes are broken, "
            "so this verdict cannot be trusted",
            file=sys.stderr,
        )
        return EXIT_ERROR
    if summary["verdict"] == "fail":
        return EXIT_FAILED
    if summary["verdict"] == "incomplete":
        return EXIT_FAILED if strict else EXIT_INCOMPLETE
    if fail_on_profile and summary["profile"] == "divergence":
        return EXIT_FAILED
    return EXIT_OK


def _write(path: str | None, text: str) -> None:
    if path:
        try:
            write_output(path, text)
        except GateError as exc:  # what the user asked for cannot be written: a usage error
            raise UsageError(str(exc)) from None


def _check_outputs(args: argparse.Namespace, *options: str) -> None:
    """Before a long run: an output path that names a directory is refused at once, not after it."""
    for option in options:
        path = getattr(args, option, None)
        if path and Path(path).is_dir():
            raise UsageError(f"--{option} {shown(path)} is a directory; name a file")


def _scenarios_check(args: argparse.Namespace) -> int:
    from pwh._harness.gate import locate
    from pwh._harness.scenarios_check import check, load_step_modules, step_definitions

    features = Path(args.features) if args.features else locate(None)[0]
    if not features.is_dir():
        raise UsageError(f"features directory not found: {args.features}")
    try:
        modules = load_step_modules(args.steps)
    except ImportError as exc:
        raise UsageError(f"cannot import the step library {args.steps!r} ({type(exc).__name__})") from None
    from pwh._harness.step_catalog import catalog, closest

    known = catalog(modules)
    problems, per_rule = check(features, step_definitions(modules), suggest=lambda kind, text: closest(kind, text, known))
    for problem in problems:
        print(problem)
    total = sum(per_rule.values())
    if problems:
        print(f"pwh scenarios check: {len(problems)} problem(s)", file=sys.stderr)
        return EXIT_FAILED
    print(f"pwh scenarios check: ok — {total} scenarios across {len(per_rule)} rows and rules, every step defined")
    return EXIT_OK


def _scenarios_steps(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from pwh._harness.scenarios_check import load_step_modules
    from pwh._harness.step_catalog import catalog, catalog_lines

    try:
        modules = load_step_modules(args.steps)
    except ImportError as exc:
        raise UsageError(f"cannot import the step library {args.steps!r} ({type(exc).__name__})") from None
    steps = catalog(modules)
    if args.json:
        print(json.dumps([asdict(s) for s in steps], indent=2, ensure_ascii=False))
    else:
        print("\n".join(catalog_lines(steps)))
        print(f"\n{len(steps)} steps in {len({s.module for s in steps})} modules")
    return EXIT_OK


def _bench(args: argparse.Namespace) -> int:
    import tempfile

    from pwh._bench.measure import BenchPlan, run_bench
    from pwh._bench.report import render_table

    if args.plot:  # every refusal of --plot comes before the measuring, the missing extra too
        if Path(args.plot).suffix.lower() not in (".svg", ".png"):
            raise UsageError("--plot writes SVG or PNG: give a path ending in .svg or .png")
        _check_outputs(args, "plot")
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
        return 0
    if args.compare == "loopx":
        try:
            import loopx  # noqa: F401
        except ImportError:
            raise UsageError("--compare loopx needs the loopx extra: pip install -e '.[loopx]'") from None
    base = Path(args.dir) if args.dir else Path(tempfile.gettempdir())
    if not base.is_dir():
        raise UsageError(f"--dir {args.dir} is not a directory")
    plan = BenchPlan(quick=args.quick, compare_loopx=args.compare == "loopx")
    print(f"pwh bench: {'quick' if args.quick else 'full'} run, {plan.reps()} repetitions, durable stores under --dir", flush=True)
    result = run_bench(plan, base, out=lambda line: print(line, flush=True))
    print()
    print(render_table(result), end="")
    _write(args.json, json.dumps(result, indent=2, sort_keys=True) + "\n")
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
    return EXIT_OK


def _vectors(args: argparse.Namespace) -> int:
    from pwh._harness.vectors import build_vectors, render_vectors, shipped_vectors

    if args.check:
        same = shipped_vectors() == build_vectors()
        print("identity vectors: " + ("match the reference profile" if same else "DIFFER from the reference profile"))
        return EXIT_OK if same else EXIT_FAILED
    sys.stdout.write(render_vectors())
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
