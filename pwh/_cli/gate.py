"""``pwh gate``, ``pwh smoke``, ``pwh scenarios check|steps``, ``pwh rules`` and ``pwh vectors``:
judging one implementation once, and the rules, scenarios and vectors it is judged by."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pwh._cli.common import UsageError, check_outputs, write
from pwh._cli.exit_codes import ExitCode
from pwh._harness.gate_error import GateError
from pwh._harness.paths import feature_label, shown

if TYPE_CHECKING:
    from pwh._harness.gate import Pick

__all__ = ["VERBS", "add_commands", "gate_exit_code"]


def add_gate_command(sub: argparse._SubParsersAction) -> None:
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
    gate.add_argument(
        "--jobs",
        "-j",
        type=_jobs,
        metavar="N",
        help="run the scenarios in N processes side by side, each its own SUT and temp folders (default: one per core; 1: one "
        "process, in order). The verdict is the same either way; --coverage and -x always run in one",
    )
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


def _jobs(text: str) -> int:
    """``--jobs N``: a whole number from 1 (argparse turns the error into one line and exit 2)."""
    if not text.strip().isdigit() or not 1 <= int(text) <= 256:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes from 1 to 256")
    return int(text)


def add_scenarios_commands(sub: argparse._SubParsersAction) -> None:
    scen = sub.add_parser("scenarios", help="work with the feature files")
    scen_sub = scen.add_subparsers(title="scenario commands")
    check = scen_sub.add_parser(
        "check",
        help="every row has scenarios, every scenario one known tag, every step a definition",
        epilog="exit codes: 0 no problem; 1 problems, one line each; 2 the step library or the features cannot be read",
    )
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


def add_vectors_command(sub: argparse._SubParsersAction) -> None:
    vectors = sub.add_parser(
        "vectors",
        help="print the identity test vectors (or --check the shipped file)",
        epilog="exit codes: 0 printed, or (--check) the shipped vectors match; 1 they differ",
    )
    vectors.add_argument("--check", action="store_true", help="exit 1 if the shipped vectors differ from the reference profile")
    vectors.set_defaults(handler=_vectors)


def _gate(args: argparse.Namespace) -> ExitCode:
    from pwh._harness.gate import keyword_expression, tag_expression

    keyword_expression(args.keyword)  # a bad -k or -m: one line, exit 2, before any work
    tag_expression(args.tags)
    rows = [r.strip() for r in args.rows.split(",")] if args.rows else None
    check_outputs(args, "json", "junit", "cucumber", "report")
    saved = _saved_verdict(args)
    sut = _gate_sut(args, saved)
    _refuse_options_that_do_not_apply(args, rows, sut)
    picked = _scenario_selection(args, saved)
    print(f"pwh gate: running the matrix against SUT {sut!r}", flush=True)
    from pwh._cli.reports import cucumber_json, html_report, junit_xml, markdown_report, verdict_json, verdict_table
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
        jobs=args.jobs,
    )
    if not run.scenarios and not run.collection_errors:
        raise UsageError(f"{_selection_words(args)} matches no scenario: nothing was judged, no verdict written")
    verdict = run.verdict()
    if args.coverage and run.coverage is not None:
        from pwh._harness.coverage_notes import OUTSIDE_RFC

        verdict["coverage"]["outside_rfc"] = OUTSIDE_RFC
    print()
    print(verdict_table(verdict, rows=rows), end="")
    # Each output is made only when asked for: Cucumber JSON alone took 0.4 s of every run's end.
    for path, render in ((args.json, verdict_json), (args.junit, junit_xml), (args.cucumber, cucumber_json)):
        if path:
            write(path, render(verdict))
    if args.report:
        write(args.report, html_report(verdict) if args.report.lower().endswith((".html", ".htm")) else markdown_report(verdict))
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
            raise UsageError(f"{shown(path)}: not a .feature file of the features directory{_did_you_mean(path, feature_dir)}")
        label = feature_label(found, feature_dir.resolve())
        picked.append(pick_at(found, label, int(line)) if line else Pick(label, label=label))
    if saved is not None:
        picked += failed_picks(saved, feature_dir, shown(args.failed_in))
    return picked or None


def _did_you_mean(path: str, feature_dir: Path) -> str:
    """``; did you mean features/NAME.feature?`` for the feature file whose name is closest."""
    import difflib

    names = sorted(p.name for p in feature_dir.glob("*.feature"))
    close = difflib.get_close_matches(Path(path).name, names, n=1, cutoff=0.6)
    return f"; did you mean {shown(feature_dir / close[0])}?" if close else ""


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
    if args.jobs is not None and args.jobs > 1 and (args.coverage or args.exitfirst):
        which = "--coverage" if args.coverage else "-x"
        raise UsageError(f"--jobs {args.jobs}: {which} runs the scenarios in one process (in order); drop --jobs")
    unknown = [r for r in rows or [] if r not in RULE_IDS]
    if unknown or (rows is not None and not rows):
        raise UsageError(f"--rows: unknown row {', '.join(unknown) or '(empty)'}; known: {', '.join(RULE_IDS)}")


def gate_exit_code(summary: dict, *, strict: bool = False, fail_on_profile: bool = False) -> ExitCode:
    """0 pass, 1 an RFC failure (or, when asked, a profile divergence or an incomplete verdict),
    2 the testbed's own self-checks failed (no verdict can be trusted), 3 incomplete."""
    if summary["self_checks"]["failed"]:
        print(
            f"pwh gate: {summary['self_checks']['failed']} testbed self-check(s) failed: pwh's own fakes are broken, "
            "so this verdict cannot be trusted",
            file=sys.stderr,
        )
        return ExitCode.ERROR
    if summary["verdict"] == "fail":
        return ExitCode.FAILED
    if summary["verdict"] == "incomplete":
        return ExitCode.FAILED if strict else ExitCode.INCOMPLETE
    if fail_on_profile and summary["profile"] == "divergence":
        return ExitCode.FAILED
    return ExitCode.OK


def _scenarios_check(args: argparse.Namespace) -> ExitCode:
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
        return ExitCode.FAILED
    print(f"pwh scenarios check: ok — {total} scenarios across {len(per_rule)} rows and rules, every step defined")
    return ExitCode.OK


def _scenarios_steps(args: argparse.Namespace) -> ExitCode:
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
    return ExitCode.OK


def _vectors(args: argparse.Namespace) -> ExitCode:
    from pwh._harness.vectors import build_vectors, render_vectors, shipped_vectors

    if args.check:
        same = shipped_vectors() == build_vectors()
        print("identity vectors: " + ("match the reference profile" if same else "DIFFER from the reference profile"))
        return ExitCode.OK if same else ExitCode.FAILED
    sys.stdout.write(render_vectors())
    return ExitCode.OK


def add_smoke_command(sub: argparse._SubParsersAction) -> None:
    smoke_p = sub.add_parser(
        "smoke",
        help="check in seconds that an adapter is wired: per seam operation, answered, unsupported or raised",
        epilog="exit codes: 0 every smoke scenario passed or was unsupported, and dispatch answered; 1 one failed "
        "(a wrong answer or the adapter raised); 2 the smoke could not run; 3 dispatch never answered; 130 Ctrl-C",
    )
    smoke_p.add_argument("--sut", default=None, help="built-in name or module:factory (default: reference)")
    smoke_p.add_argument("--features", metavar="DIR", help="feature files (default: the project's features/)")
    smoke_p.add_argument(
        "--template",
        metavar="PATH",
        help="instead: write a documented adapter skeleton to PATH (a new .py file) to start an adapter from",
    )
    smoke_p.set_defaults(handler=_smoke)


SMOKE_EXIT = {"ok": ExitCode.OK, "failed": ExitCode.FAILED, "unwired": ExitCode.UNWIRED}


def _smoke(args: argparse.Namespace) -> ExitCode:
    from pwh._harness.smoke import render, smoke, write_template

    if args.template:
        if args.sut or args.features:
            raise GateError("--template writes the adapter skeleton and runs nothing: drop --sut and --features")
        write_template(Path(args.template))
        return ExitCode.OK
    report = smoke(args.sut or "reference", features=args.features)
    print(render(report))
    return SMOKE_EXIT[report.outcome]


def add_rules_command(sub: argparse._SubParsersAction) -> None:
    """``pwh rules``: the rulebook on the terminal, as Markdown or as JSON (what every packet carries)."""
    rules_p = sub.add_parser(
        "rules",
        help="list every rule id, RFC or profile, with the clauses it rests on and their words",
        epilog="exit codes: 0 printed",
    )
    form = rules_p.add_mutually_exclusive_group()
    form.add_argument("--md", action="store_true", help="the whole rulebook as Markdown (docs/rules.md)")
    form.add_argument("--json", action="store_true", help="the rulebook as data (a packet's rules.json)")
    rules_p.add_argument(
        "--coverage",
        action="store_true",
        help="which RFC rule is judged on which path, event kind, position and limit side, and by what "
        "(with --md: docs/rule-paths.md; with --json: the table as data)",
    )
    rules_p.set_defaults(handler=_rules)


def _rules(args: argparse.Namespace) -> ExitCode:
    from pwh._harness.rule_paths import paths_document, paths_markdown, paths_text
    from pwh._harness.rulebook import NAMED_RULES, rules_document, rules_markdown, rules_text

    if getattr(args, "coverage", False):
        says = {n.id: n.says for n in NAMED_RULES}
        if args.json:
            sys.stdout.write(json.dumps(paths_document(says), ensure_ascii=False, indent=2) + "\n")
        elif args.md:
            sys.stdout.write(paths_markdown(says))
        else:
            sys.stdout.write(paths_text(says))
    elif args.json:
        sys.stdout.write(json.dumps(rules_document(), ensure_ascii=False, indent=2) + "\n")
    elif args.md:
        sys.stdout.write(rules_markdown())
    else:
        sys.stdout.write(rules_text())
    return ExitCode.OK


# Each verb of this group, by the name ``pwh --help`` lists it under (pwh._cli adds them in its order).
VERBS: dict[str, Callable[[argparse._SubParsersAction], None]] = {
    "gate": add_gate_command,
    "scenarios": add_scenarios_commands,
    "vectors": add_vectors_command,
    "smoke": add_smoke_command,
    "rules": add_rules_command,
}


def add_commands(sub: argparse._SubParsersAction) -> None:
    """``pwh gate``, ``pwh scenarios check|steps``, ``pwh vectors``, ``pwh smoke`` and ``pwh rules``."""
    for add in VERBS.values():
        add(sub)
