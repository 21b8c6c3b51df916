"""``pwh report``, ``pwh compare`` and ``pwh divergences``: saved verdicts rendered again, compared,
and turned into the known divergences of an implementation."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from pwh._cli.common import write
from pwh._cli.exit_codes import ExitCode
from pwh._harness.gate_error import GateError
from pwh._harness.paths import shown

__all__ = ["VERBS", "add_commands"]


def add_verdict_commands(sub: argparse._SubParsersAction) -> None:
    """``pwh report`` and ``pwh compare``."""
    report = sub.add_parser(
        "report",
        help="render a saved verdict again (terminal table, Markdown, HTML, JUnit, Cucumber); several: one row × SUT table",
        description="Render a verdict written by `pwh gate --json` again. With no output option, print the terminal table. "
        "Given several verdicts (implementations, or releases of one), render one table of row × verdict instead, the "
        "columns in the order given, each cell the row's RFC/profile status. Given campaign observations (pwh soak "
        "--observations, any number of files: they merge by concatenation), print their merged totals.",
        epilog="exit codes: 0 rendered; 1 campaign observations that found something; 2 a file is missing, not JSON, not a "
        "pwh gate verdict or not campaign observations, or an output cannot be written",
    )
    report.add_argument("verdict", metavar="VERDICT.json|OBS.jsonl", nargs="+")
    report.add_argument("--md", metavar="PATH", help="write the Markdown report (several verdicts: the Markdown table)")
    report.add_argument("--html", metavar="PATH", help="write the HTML report (several verdicts: the table as one HTML page)")
    report.add_argument("--junit", metavar="PATH", help="write JUnit XML (one verdict only)")
    report.add_argument("--cucumber", metavar="PATH", help="write Cucumber JSON (one verdict only)")
    report.add_argument("--json", metavar="PATH", help="write the row × SUT table as JSON data")
    report.set_defaults(handler=_report)
    cmp_ = sub.add_parser(
        "compare",
        help="show the row and scenario differences between two saved verdicts",
        description="Compare two verdicts (two runs, or two SUTs): rows whose RFC or profile status differ, then scenarios.",
        epilog="exit codes: 0 no difference; 1 they differ; 2 a file is missing, not JSON or not a pwh gate verdict",
    )
    cmp_.add_argument("a", metavar="A.json")
    cmp_.add_argument("b", metavar="B.json")
    cmp_.add_argument("--json", metavar="PATH", help="also write the comparison as JSON ('-': only JSON, to stdout)")
    cmp_.set_defaults(handler=_compare)


def _report(args: argparse.Namespace) -> ExitCode:
    from pwh._campaigns.observations import is_observation_file
    from pwh._cli.reports import cucumber_json, html_report, junit_xml, markdown_report, matrix, matrix_json, verdict_table
    from pwh._harness.verdicts import load_verdict

    campaign = [is_observation_file(path) for path in args.verdict]
    if any(campaign):
        if not all(campaign):
            raise GateError("give saved verdicts or campaign observations (pwh soak --observations), not both")
        return _campaign_report(args)

    if len(args.verdict) > 1:  # several verdicts: one row × SUT table (pwh._harness.report.matrix)
        return _matrix_report(args)
    verdict = load_verdict(args.verdict[0])
    if not (args.md or args.html or args.junit or args.cucumber or args.json):
        print(verdict_table(verdict), end="")
    for path, render in ((args.md, markdown_report), (args.html, html_report), (args.junit, junit_xml), (args.cucumber, cucumber_json)):
        if path:
            write(path, render(verdict))
    if args.json:
        write(args.json, matrix_json(matrix([(shown(args.verdict[0]), verdict)])))
    return ExitCode.OK


def _campaign_report(args: argparse.Namespace) -> ExitCode:
    """Campaign observations (JSON lines, any number of files: concatenation merges them) as the
    merged totals; ``--json`` writes them as data. Exit 1 when any run found something."""
    from pwh._campaigns.observations import ObservationError, merge, merged_lines, read_observations

    if args.md or args.html or args.junit or args.cucumber:
        raise GateError("campaign observations render to the terminal and --json only")
    try:
        merged = merge(read_observations(args.verdict))
    except ObservationError as exc:
        raise GateError(str(exc)) from None
    print("\n".join(merged_lines(merged)))
    if args.json:
        write(args.json, json.dumps(merged, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return ExitCode.FAILED if merged["findings"] else ExitCode.OK


def _matrix_report(args: argparse.Namespace) -> ExitCode:
    from pwh._cli.reports import matrix, matrix_html, matrix_json, matrix_markdown, matrix_table
    from pwh._harness.verdicts import load_verdict

    if args.junit or args.cucumber:
        raise GateError("--junit and --cucumber render one verdict: give one VERDICT.json (several make a row × SUT table)")
    loaded = [(shown(path), load_verdict(path)) for path in args.verdict]  # every file checked before any output
    data = matrix(loaded)
    if not (args.md or args.html or args.json):
        print(matrix_table(data), end="")
    for path, render in ((args.md, matrix_markdown), (args.html, matrix_html), (args.json, matrix_json)):
        if path:
            write(path, render(data))
    return ExitCode.OK


def _compare(args: argparse.Namespace) -> ExitCode:
    from pwh._harness.verdicts import compare, comparison_lines, load_verdict

    a, b = load_verdict(args.a), load_verdict(args.b)
    result = compare(a, b)
    if args.json == "-":
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        print("\n".join(comparison_lines(result, shown(args.a), shown(args.b))))
        if args.json:
            write(args.json, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return ExitCode.OK if result["same"] else ExitCode.FAILED


def add_divergences_command(sub: argparse._SubParsersAction) -> None:
    """``pwh divergences``: the known divergences of a saved verdict (:mod:`pwh._harness.divergences`)."""
    p = sub.add_parser(
        "divergences",
        help="render the divergences of a saved verdict (and refresh a Markdown file's verdict table)",
        epilog="exit codes: 0 written; 2 the verdict cannot be read",
    )
    p.add_argument("verdict", metavar="VERDICT.json", help="a verdict written by pwh gate --json")
    p.add_argument("out", metavar="OUT.json", nargs="?", help="where to write the divergences (default: standard output)")
    p.add_argument(
        "--readme",
        metavar="FILE.md",
        help="also replace the generated verdict table for the verdict's SUT in that Markdown file (LoopX's: docs/loopx.md)",
    )
    p.set_defaults(handler=_divergences)


def _divergences(args: argparse.Namespace) -> ExitCode:
    from pwh._harness.divergences import observed_divergences, render, replace_readme_block, shape_problem
    from pwh._harness.paths import read_json_file

    try:
        verdict = read_json_file(args.verdict, what="pwh gate verdict")  # bounded in size and depth, never a FIFO
    except GateError as exc:
        print(f"pwh divergences: error: {exc}", file=sys.stderr)
        return ExitCode.ERROR
    try:
        problem = shape_problem(verdict)
        if problem:
            raise ValueError(f"not a pwh gate verdict — {problem}")
        if args.readme is not None:
            readme = Path(args.readme)
            before = readme.read_text("utf-8")
            try:
                after = replace_readme_block(before, verdict)
            except (KeyError, TypeError, AttributeError):  # a verdict without its rows' table
                raise ValueError(f"not a whole pwh gate verdict — its table cannot be drawn ({Path(args.verdict).name})") from None
            if after != before:
                readme.write_text(after, "utf-8")
            table_said = f"{'wrote' if after != before else 'unchanged:'} {shown(readme)} (the {verdict.get('sut', '?')} verdict table)"
    except (OSError, ValueError) as exc:  # JSONDecodeError is a ValueError
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).split(":")[0]
        print(f"pwh divergences: error: {why} ({Path(getattr(exc, 'filename', None) or args.verdict).name})", file=sys.stderr)
        return ExitCode.ERROR
    sut = str(verdict.get("sut", ""))
    text = render(observed_divergences(verdict), sut=sut, sut_version=_version_of(sut))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, "utf-8")
        print(f"wrote {shown(args.out)}", flush=True)
    else:
        sys.stdout.write(text)
    if args.readme is not None:  # said on stderr when the divergences themselves go to stdout
        print(table_said, file=sys.stdout if args.out else sys.stderr, flush=True)
    return ExitCode.OK


def _version_of(sut: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(sut)
    except (metadata.PackageNotFoundError, ValueError):
        return ""


# Each verb of this group, by the name ``pwh --help`` lists it under (pwh._cli adds them in its order);
# ``report`` adds ``compare`` too.
VERBS: dict[str, Callable[[argparse._SubParsersAction], None]] = {
    "divergences": add_divergences_command,
    "report": add_verdict_commands,
}


def add_commands(sub: argparse._SubParsersAction) -> None:
    """``pwh report``, ``pwh compare`` and ``pwh divergences``."""
    for add in VERBS.values():
        add(sub)
