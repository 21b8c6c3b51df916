"""Saved verdicts: ``pwh report`` renders one again (several: one row × SUT table,
:mod:`pwh._harness.matrix_report`), ``pwh compare`` shows where two differ.

A verdict file is read as data and checked against ``gate_verdict.json`` before anything uses it,
so a truncated or hand-edited file gets one line naming the file and the field, never a traceback.
The comparison follows Bowtie's ``summary``: the rows whose RFC or profile status differ, then
each scenario whose statuses differ or that only one run has, keyed by feature, scenario and
example (not by line, which moves when a feature file is edited).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pwh._core.schemas import schema_rejections, validator
from pwh._harness.gate_error import GateError
from pwh._harness.paths import read_json_file, shown, write_output
from pwh._harness.rules import RULES
from pwh._harness.safe_text import for_terminal

__all__ = ["COMPARISON_SCHEMA_VERSION", "add_verdict_commands", "compare", "comparison_lines", "load_verdict"]

COMPARISON_SCHEMA_VERSION = "pwh_verdict_comparison_v1"
EXIT_SAME, EXIT_DIFFERENT, EXIT_ERROR = 0, 1, 2


def load_verdict(path: str) -> dict[str, Any]:
    """The verdict in ``path``, valid against its schema, or :class:`GateError` saying why not:
    read bounded in size and depth, never a FIFO or device (:func:`pwh._harness.paths.read_json_file`)."""
    verdict = read_json_file(path, what="pwh gate verdict")
    try:
        bad = [str(r) for r in schema_rejections(validator("gate_verdict"), verdict, "invalid")]
    except RecursionError:
        bad = ["nested too deeply to check"]
    if bad:
        raise GateError(f"{shown(path)} is not a pwh gate verdict: {for_terminal(bad[0])}")
    return verdict


def _scenario_key(s: dict[str, Any]) -> str:
    params = f" [{s['params']}]" if s.get("params") else ""
    return f"{s.get('feature', '?')}: {s.get('scenario', s['id'])}{params}"


def _statuses(x: dict[str, Any]) -> dict[str, str]:
    return {"rfc": x["rfc"], "profile": x["profile"]}


def _side(v: dict[str, Any]) -> dict[str, Any]:
    partial = bool((v.get("run") or {}).get("partial")) or "selected_rows" in v or bool(v.get("stopped_at_first_failure"))
    return {"sut": v["sut"], "rfc": v["summary"]["verdict"], "profile": v["summary"]["profile"], "partial": partial, "run": v.get("run")}


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Where verdict ``b`` differs from ``a``: rows, then scenarios (``None``: absent from a run)."""
    order = [r.id for r in RULES]
    row_ids = sorted(set(a["rows"]) | set(b["rows"]), key=lambda r: (order.index(r) if r in order else len(order), r))
    rows = []
    for row in row_ids:
        x, y = a["rows"].get(row), b["rows"].get(row)
        sx, sy = (_statuses(x) if x else None), (_statuses(y) if y else None)
        if sx != sy:
            rows.append({"row": row, "a": sx, "b": sy})
    by_a = {_scenario_key(s): s for s in a["scenarios"]}
    by_b = {_scenario_key(s): s for s in b["scenarios"]}
    scenarios = []
    for key in sorted(set(by_a) | set(by_b)):
        x, y = by_a.get(key), by_b.get(key)
        sx, sy = (_statuses(x) if x else None), (_statuses(y) if y else None)
        if sx != sy:
            tags = (x or y or {}).get("tags", [])
            scenarios.append({"scenario": key, "rows": list(tags), "a": sx, "b": sy})
    return {
        "schema_version": COMPARISON_SCHEMA_VERSION,
        "a": _side(a),
        "b": _side(b),
        "same": not rows and not scenarios,
        "rows": rows,
        "scenarios": scenarios,
    }


def _pair(s: dict[str, str] | None) -> str:
    return "absent" if s is None else (s["rfc"] if s["rfc"] == s["profile"] else f"{s['rfc']}/{s['profile']}")


def comparison_lines(result: dict[str, Any], a_name: str, b_name: str) -> list[str]:
    a, b = result["a"], result["b"]
    lines = [
        f"{side}: {for_terminal(name)} — SUT {for_terminal(v['sut'])}, verdict {v['rfc']} (profile {v['profile']})"
        + (" — PARTIAL run" if v["partial"] else "")
        for side, name, v in (("A", a_name, a), ("B", b_name, b))
    ]
    if a["partial"] or b["partial"]:
        lines.append("a partial run has only the rows it ran: the others show as absent")
    if result["same"]:
        return [*lines, "", "no difference: every row and scenario has the same RFC and profile status"]
    lines += ["", f"rows that differ ({len(result['rows'])}), as RFC/profile A → B:"]
    lines += [f"  {r['row']:<6} {_pair(r['a'])} → {_pair(r['b'])}" for r in result["rows"]] or ["  (none)"]
    lines += ["", f"scenarios that differ ({len(result['scenarios'])}):"]
    for s in result["scenarios"]:
        lines.append(for_terminal(f"  {','.join(s['rows']) or '-'} {s['scenario']}: {_pair(s['a'])} → {_pair(s['b'])}"))
    return lines


def _report(args: argparse.Namespace) -> int:
    from pwh._harness.report import html_report, junit_xml, markdown_report, verdict_table

    if len(args.verdict) > 1:  # several verdicts: one row × SUT table (pwh._harness.matrix_report)
        return _matrix_report(args)
    verdict = load_verdict(args.verdict[0])
    if not (args.md or args.html or args.junit or args.json):
        print(verdict_table(verdict), end="")
    for path, render in ((args.md, markdown_report), (args.html, html_report), (args.junit, junit_xml)):
        if path:
            write_output(path, render(verdict))
    if args.json:
        from pwh._harness.matrix_report import matrix, matrix_json

        write_output(args.json, matrix_json(matrix([(shown(args.verdict[0]), verdict)])))
    return 0


def _matrix_report(args: argparse.Namespace) -> int:
    from pwh._harness.matrix_report import matrix, matrix_html, matrix_json, matrix_markdown, matrix_table

    if args.junit:
        raise GateError("--junit renders one verdict: give one VERDICT.json (several make a row × SUT table)")
    loaded = [(shown(path), load_verdict(path)) for path in args.verdict]  # every file checked before any output
    data = matrix(loaded)
    if not (args.md or args.html or args.json):
        print(matrix_table(data), end="")
    for path, render in ((args.md, matrix_markdown), (args.html, matrix_html), (args.json, matrix_json)):
        if path:
            write_output(path, render(data))
    return 0


def _compare(args: argparse.Namespace) -> int:
    a, b = load_verdict(args.a), load_verdict(args.b)
    result = compare(a, b)
    if args.json == "-":
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        print("\n".join(comparison_lines(result, shown(args.a), shown(args.b))))
        if args.json:
            write_output(args.json, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return EXIT_SAME if result["same"] else EXIT_DIFFERENT


def add_verdict_commands(sub: Any) -> None:
    report = sub.add_parser(
        "report",
        help="render a saved verdict again (terminal table, Markdown, HTML, JUnit); several: one row × SUT table",
        description="Render a verdict written by `pwh gate --json` again. With no output option, print the terminal table. "
        "Given several verdicts (implementations, or releases of one), render one table of row × verdict instead, the "
        "columns in the order given, each cell the row's RFC/profile status.",
        epilog="exit codes: 0 rendered; 2 a file is missing, not JSON or not a pwh gate verdict, or an output cannot be written",
    )
    report.add_argument("verdict", metavar="VERDICT.json", nargs="+")
    report.add_argument("--md", metavar="PATH", help="write the Markdown report (several verdicts: the Markdown table)")
    report.add_argument("--html", metavar="PATH", help="write the HTML report (several verdicts: the table as one HTML page)")
    report.add_argument("--junit", metavar="PATH", help="write JUnit XML (one verdict only)")
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
