"""``pwh report A.json B.json ...``: several saved verdicts as one row × implementation table.

Each column is one verdict, headed by the SUT it names and the version its adapter stated
(``run.sut_version``). Columns that are all releases of one SUT (``loopx@1.2.4``, ``loopx@2.1.1``,
...: one name before any ``@``, each with a plain release number) are put in version order, so the
table reads as a release history whatever order the files came in (a shell's ``*.json`` puts
1.10 before 1.2); any other set of columns keeps the order given. Each cell is that row's RFC
status and profile status (``pass/pass``, ``pass/differs``, ``FAIL/FAIL``, ``skip/skip``,
``self/self``), or ``—`` when the verdict has no such row (a partial run).

A row whose result changes from one column to the next (its statuses, or how many of its
scenarios fail) is marked, and the changes are listed column to column: *fixed* (the RFC status
went from FAIL to pass), *broke* (pass to FAIL) or *changed* (anything else: skipped or run, the
profile alone, the number of failing or skipped scenarios). That list is what a maintainer reads to see
which release broke or fixed what; ``pwh compare A.json B.json`` then names the scenarios.

The rows are the rulebook's, in its order, then any other row a verdict names; with several
columns, the rows that differ between them (``differs``: any two present cells disagree on a status
or on how many scenarios failed or were skipped, the same test that marks a change) come first, then
the rows alike in every column, each group in that order. A row a verdict lacks (``—``, a partial
run) differs from nothing. After the rows, every scenario × SUT, again the differing ones first
(a scenario is its feature:line, name and example; its status pass, fail, skip, divergence,
self-check or self-fail, as the single report shows it; ``—`` when a verdict lacks it).

Rendered for the terminal (only the differing scenarios, a few a row), as JSON data, as Markdown
and as one self-contained HTML page, whose cells link to the failure cards of each verdict, embedded
below the tables (:mod:`pwh._harness.report.matrix_cards`); everything taken from a file is escaped
for where it is shown (a SUT name is whatever the gate was given).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pwh._harness.report._common import STATUS_MARK, VERDICT_WORD
from pwh._harness.report.html import RULE_ORDER, _row_of, _scenario_kind
from pwh._harness.rules import RULES

__all__ = [
    "MATRIX_SCHEMA_VERSION",
    "column_changes",
    "matrix",
    "matrix_json",
    "matrix_markdown",
    "matrix_table",
    "release_order",
]

MATRIX_SCHEMA_VERSION = "pwh_verdict_matrix_v1"
ABSENT = "—"
_HEADER_WIDTH = 32  # a longer SUT name is cut in the terminal table's header (the legend has it whole)


# What a terminal would act on, shown escaped (Python's form): C0 but tab, DEL, C1, and the bidi
# overrides and isolates (text that reorders what a reader sees).
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def for_terminal(text: Any) -> str:
    """``text`` on one terminal line: every control character shown escaped."""
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) <= 0xFF else f"\\u{ord(m.group()):04x}", str(text))


def for_markdown(text: Any) -> str:
    """``text`` as one Markdown table cell: no live HTML, no table syntax, one line."""
    out = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|").replace("\n", " ")
    return for_terminal(out)


def for_markdown_code(text: Any) -> str:
    """``text`` inside a Markdown code span: no backtick to close it, one line."""
    return for_terminal(str(text).replace("`", "'").replace("\n", " "))


class MatrixData(dict[str, Any]):
    """The table as data (a plain dict to JSON) that also keeps the loaded verdicts, in column
    order, for the HTML page's failure cards: data read back from JSON has none (no cards)."""

    verdicts: list[dict[str, Any]]


def matrix(verdicts: Sequence[tuple[str, dict[str, Any]]]) -> MatrixData:
    """The table as data: ``verdicts`` are (file label, loaded verdict), in the order given."""
    columns = [_column(label, v) for label, v in verdicts]
    order = release_order(columns)
    if order is not None:
        columns, verdicts = [columns[i] for i in order], [verdicts[i] for i in order]
    rulebook = [r.id for r in RULES]
    cases = {r.id: r.case for r in RULES}
    named = {row for _, v in verdicts for row in v["rows"]}
    row_ids = [r for r in rulebook if r in named] + sorted(named - set(rulebook))
    rows = []
    for row in row_ids:
        cells = [_cell(v["rows"].get(row)) for _, v in verdicts]
        found = changes(cells)
        rows.append({"row": row, "case": cases.get(row, ""), "cells": cells, "changes": found, "differs": bool(found)})
    scenarios = scenario_matrix([v for _, v in verdicts])
    data = MatrixData(
        {
            "schema_version": MATRIX_SCHEMA_VERSION,
            "order": "version" if order is not None else "given",
            "row_order": ROW_ORDER,
            "harness_differs": harness_differs(columns),
            "columns": columns,
            "differing_rows": sum(1 for r in rows if r["differs"]),
            "rows": differing_first(rows),
            "differing_scenarios": sum(1 for x in scenarios if x["differs"]),
            "scenarios": scenarios,
        }
    )
    data.verdicts = [v for _, v in verdicts]
    return data


ROW_ORDER = "differs_first"  # the rows (and scenarios) that differ between columns, then the rest; each group in rulebook order


def differing_first(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``items`` (rows or scenarios) with those that differ first, the order kept within each group."""
    return [x for x in items if x["differs"]] + [x for x in items if not x["differs"]]


def scenario_matrix(verdicts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every scenario any verdict names × the verdicts: one entry per scenario (its row, feature,
    line, name and example), each cell its status there and its index in that verdict's
    ``scenarios`` (``None`` when the verdict lacks it); ``differs`` when two present cells' statuses
    differ. The differing ones first; each group by row (rulebook order), feature, line, then as
    first met. A scenario named twice in one verdict (the same place, name and example) is matched
    occurrence by occurrence."""
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    for k, v in enumerate(verdicts):
        seen: dict[tuple[Any, ...], int] = {}
        for i, x in enumerate(v.get("scenarios") or []):
            place = (str(x.get("feature", "?")), x.get("line", "?"), str(x.get("scenario", x.get("id", ""))), str(x.get("params", "")))
            n = seen[place] = seen.get(place, -1) + 1
            key = (*place, n)
            if key not in found:
                found[key] = {
                    "row": _row_of(x),
                    "feature": place[0],
                    "line": place[1],
                    "scenario": place[2],
                    "params": place[3],
                    "cells": [None] * len(verdicts),
                }
            found[key]["cells"][k] = {"status": _scenario_kind(x)[0], "index": i}
    rank = {r: n for n, r in enumerate(RULE_ORDER)}
    entries = sorted(
        enumerate(found.values()),
        key=lambda e: (
            rank.get(e[1]["row"], len(rank)),
            e[1]["row"],
            e[1]["feature"],
            e[1]["line"] if isinstance(e[1]["line"], int) else -1,
            e[0],
        ),
    )
    out = []
    for _, x in entries:
        statuses = {c["status"] for c in x["cells"] if c is not None}
        out.append({**x, "differs": len(statuses) > 1})
    return differing_first(out)


def _column(label: str, v: dict[str, Any]) -> dict[str, Any]:
    stated = v.get("run")
    run: dict[str, Any] = stated if isinstance(stated, dict) else {}
    return {
        "file": label,
        "sut": v["sut"],
        "sut_version": run.get("sut_version") or None,
        "verdict": v["summary"]["verdict"],
        "profile": v["summary"]["profile"],
        "partial": bool(run.get("partial")) or "selected_rows" in v or bool(v.get("stopped_at_first_failure")),
        "pwh_commit": run.get("pwh_commit") or None,
        "features_digest": run.get("features_digest") or None,
    }


def harness_differs(columns: Sequence[dict[str, Any]]) -> list[str]:
    """What of the harness differs between the columns' runs (a change between two columns may
    then be pwh's, not the SUT's): ``feature files`` and ``pwh commit``, as far as the verdicts say."""
    fields = (("feature files", "features_digest"), ("pwh commit", "pwh_commit"))
    return [what for what, key in fields if len({c.get(key) for c in columns}) > 1]


def _cell(row: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a cell compares by: the two statuses and how many of the row's scenarios failed or
    were skipped (a seam the SUT gains or loses shows as fewer or more skipped)."""
    if row is None:
        return None
    counts = {k: row.get(k, 0) for k in ("scenarios", "failed", "skipped")}
    return {"rfc": row["rfc"], "profile": row["profile"], **counts}


_RELEASE = re.compile(r"[0-9]{1,6}(?:\.[0-9]{1,6}){0,3}")


def release_key(column: dict[str, Any]) -> tuple[str, tuple[int, ...]] | None:
    """(SUT name, release number) of a column: the name before any ``@``; the version the adapter
    stated, else (none stated) the one after ``@``. ``None`` when that is not a plain release
    number: a development build is not placed among releases."""
    name, _, given = str(column["sut"]).partition("@")
    version = column.get("sut_version") or given
    if not isinstance(version, str) or not _RELEASE.fullmatch(version):
        return None
    return name, tuple(int(part) for part in version.split("."))


def release_order(columns: Sequence[dict[str, Any]]) -> list[int] | None:
    """The columns' indexes in release order when they are all releases of one SUT, else ``None``
    (the order given is kept). Equal releases keep the order given."""
    found = [release_key(c) for c in columns]
    keys = [k for k in found if k is not None]
    if len(keys) < 2 or len(keys) != len(found) or len({name for name, _ in keys}) != 1:
        return None
    return sorted(range(len(keys)), key=lambda i: keys[i][1])


def changes(cells: Sequence[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """Where a row's result changes: each present cell against the nearest present cell before it."""
    found, before = [], None
    for i, cell in enumerate(cells):
        if cell is None:
            continue
        if before is not None and _differs(cells[before], cell):
            found.append({"column": i, "since": before, "kind": change_kind(cells[before], cell)})
        before = i
    return found


def _differs(a: dict[str, Any] | None, b: dict[str, Any]) -> bool:
    return a is not None and any(a.get(k) != b.get(k) for k in ("rfc", "profile", "failed", "skipped"))


def change_kind(was: dict[str, Any] | None, now: dict[str, Any]) -> str:
    """``fixed`` (RFC FAIL to pass), ``broke`` (pass to FAIL) or ``changed``."""
    step = (str((was or {}).get("rfc")), str(now.get("rfc")))
    return {("fail", "pass"): "fixed", ("pass", "fail"): "broke"}.get(step, "changed")


def column_changes(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The changes grouped by the column they appear in (every column after the first, in order,
    with an empty list when nothing changed there): (column, rows that changed, how)."""
    by_column: dict[int, list[dict[str, Any]]] = {i: [] for i in range(1, len(data["columns"]))}
    for r in data["rows"]:
        for ch in r.get("changes", []):
            was, now = r["cells"][ch["since"]], r["cells"][ch["column"]]
            by_column[ch["column"]].append({"row": r["row"], "kind": ch["kind"], "since": ch["since"], "was": was, "now": now})
    return [{"column": i, "changes": found} for i, found in by_column.items()]


def cell_text(cell: dict[str, Any] | None) -> str:
    """``RFC/profile`` in the terminal table's words, or ``—`` for a row the verdict lacks."""
    if cell is None:
        return ABSENT
    return f"{STATUS_MARK.get(cell['rfc'], cell['rfc'])}/{STATUS_MARK.get(cell['profile'], cell['profile'])}"


def change_text(cell: dict[str, Any] | None) -> str:
    """A cell in a list of changes: its statuses, and how many scenarios fail or are skipped."""
    text = cell_text(cell)
    if cell is None:
        return text
    counts = [(cell[k], word) for k, word in (("failed", "failing"), ("skipped", "skipped")) if cell.get(k)]
    if not counts:
        return text
    (first, word), rest = counts[0], counts[1:]
    return text + f" ({first} of {cell.get('scenarios', '?')} {word}" + "".join(f", {n} {w}" for n, w in rest) + ")"


def column_name(column: dict[str, Any]) -> str:
    """A column in a sentence: the SUT, and its stated version unless the name already says it."""
    version = column["sut_version"]
    return column["sut"] if version is None or str(column["sut"]).endswith(f"@{version}") else f"{column['sut']} {version}"


def _harness_note(data: dict[str, Any]) -> str | None:
    differs = data.get("harness_differs")
    if not differs:
        return None
    return (
        f"note: the {' and the '.join(differs)} differ between these verdicts: "
        "a change between two columns may be pwh's, not the SUT's (gate every column with one pwh)"
    )


def _order_text(data: dict[str, Any]) -> str:
    return "columns in release order" if data.get("order") == "version" else "columns in the order given"


MARK = "*"


def _row_label(r: dict[str, Any]) -> str:
    return f"{r['row']} {MARK}" if r.get("changes") else r["row"]


def _version(column: dict[str, Any]) -> str:
    return column["sut_version"] or "(version not stated)"


def _verdict_text(column: dict[str, Any]) -> str:
    text = f"{VERDICT_WORD.get(column['verdict'], column['verdict'])}/{VERDICT_WORD.get(column['profile'], column['profile'])}"
    return text + (" PARTIAL" if column["partial"] else "")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def matrix_table(data: dict[str, Any]) -> str:
    """The terminal table: one line per row, a column per verdict, a legend of the files, then
    what changed from column to column."""
    columns, rows = data["columns"], data["rows"]
    heads = [(_cut(for_terminal(c["sut"]), _HEADER_WIDTH), _cut(for_terminal(_version(c)), _HEADER_WIDTH)) for c in columns]
    totals = [_verdict_text(c) for c in columns]
    widths = [
        max(len(name), len(version), len(total), *(len(cell_text(r["cells"][i])) for r in rows))
        for i, ((name, version), total) in enumerate(zip(heads, totals, strict=True))
    ]

    def line(first: str, values: Sequence[str], last: str = "") -> str:
        return (f"{first:<10}" + "  ".join(f"{value:<{w}}" for value, w in zip(values, widths, strict=True)) + f"  {last}").rstrip()

    out = [
        f"pwh report — {len(columns)} verdicts, row × SUT, {_order_text(data)}",
        f"(each cell: RFC/profile status; {ABSENT}: row not run; {MARK}: the row's result changes between columns)",
        *(["(the rows that differ between the columns first, then the rows alike; each in rulebook order)"] if len(columns) > 1 else []),
        "",
    ]
    body = []
    for heading, members in groups(rows, "rows", several=len(columns) > 1):
        body += [heading] if heading else []
        body += [line(for_terminal(_row_label(r)), [cell_text(c) for c in r["cells"]], _cut(for_terminal(r["case"]), 48)) for r in members]
    head = [line("row", [n for n, _ in heads], "case"), line("", [v for _, v in heads])]
    out += [*head, "-" * max(len(x) for x in [*head, *body]), *body]
    out += ["", line("verdict", totals, "(RFC/profile)"), ""]
    for i, c in enumerate(columns, 1):
        out.append(
            for_terminal(f"[{i}] {c['file']}: SUT {c['sut']} {_version(c)}, verdict {_verdict_text(c)}")
            + (" — a partial run has only the rows it ran" if c["partial"] else "")
        )
    out += _terminal_scenarios(data)
    if len(columns) > 1:
        out += ["", "what changed, column to column (fixed: RFC FAIL → pass; broke: pass → FAIL; changed: anything else):"]
        out += _terminal_changes(data)
    note = _harness_note(data)
    return "\n".join(out + (["", note] if note else [])) + "\n"


def groups(items: Sequence[dict[str, Any]], what: str, *, several: bool) -> list[tuple[str | None, list[dict[str, Any]]]]:
    """``items`` (in :func:`differing_first` order) as (heading, members): those that differ, then
    those alike; one group without a heading when there is one column (nothing to differ from)."""
    if not several:
        return [(None, list(items))]
    differ = [x for x in items if x["differs"]]
    alike = [x for x in items if not x["differs"]]
    return [(f"{what} that differ ({len(differ)})", differ), (f"{what} alike ({len(alike)})", alike)]


SCENARIO_WORD = {"pass": "pass", "fail": "FAIL", "skip": "skip", "divergence": "differs", "self-check": "self", "self-fail": "self-FAIL"}
TERMINAL_SCENARIOS_PER_ROW = 5  # differing scenarios the terminal lists a row; the rest are counted


def scenario_text(cell: dict[str, Any] | None) -> str:
    """A scenario cell in words: its status, or ``—`` when the verdict lacks the scenario."""
    return ABSENT if cell is None else SCENARIO_WORD.get(cell["status"], str(cell["status"]))


def scenario_label(x: dict[str, Any], *, example_first: bool = False) -> str:
    """A scenario as a reader finds it: ``feature:line name [example]`` (``example_first``:
    ``feature:line [example] name``, for a line cut short, where the example tells the outline's
    examples apart)."""
    params = f"[{x['params']}]" if x.get("params") else ""
    if example_first:
        return f"{x['feature']}:{x['line']} {params + ' ' if params else ''}{x['scenario']}"
    return f"{x['feature']}:{x['line']} {x['scenario']}{' ' + params if params else ''}"


def _terminal_scenarios(data: dict[str, Any]) -> list[str]:
    """The differing scenarios, at most :data:`TERMINAL_SCENARIOS_PER_ROW` a row (the others
    counted): the terminal verdict stays readable; every scenario is in the other forms."""
    scenarios = data.get("scenarios") or []
    if not scenarios or len(data["columns"]) < 2:
        return []
    differ = [x for x in scenarios if x["differs"]]
    out = ["", f"scenarios that differ ({len(differ)} of {len(scenarios)}; --html, --md and --json list every scenario):"]
    if not differ:
        return [*out, "  none: every scenario has one status in every column that ran it"]
    widths = [max(len(f"[{k + 1}]"), *(len(scenario_text(x["cells"][k])) for x in differ)) for k in range(len(data["columns"]))]
    out.append(("  row     " + "  ".join(f"{f'[{k + 1}]':<{w}}" for k, w in enumerate(widths)) + "  scenario").rstrip())
    by_row: dict[str, list[dict[str, Any]]] = {}
    for x in differ:
        by_row.setdefault(x["row"], []).append(x)
    for row, members in by_row.items():
        for x in members[:TERMINAL_SCENARIOS_PER_ROW]:
            cells = "  ".join(f"{scenario_text(c):<{w}}" for c, w in zip(x["cells"], widths, strict=True))
            out.append(for_terminal(f"  {_cut(row or '?', 7):<7} {cells}  {_cut(scenario_label(x, example_first=True), 100)}"))
        if len(members) > TERMINAL_SCENARIOS_PER_ROW:
            out.append(
                for_terminal(f"  {_cut(row or '?', 7):<7} … and {len(members) - TERMINAL_SCENARIOS_PER_ROW} more differing in {row or '?'}")
            )
    return out


def _terminal_changes(data: dict[str, Any]) -> list[str]:
    columns, out = data["columns"], []
    for step in column_changes(data):
        i = step["column"]
        out.append(for_terminal(f"[{i}] {column_name(columns[i - 1])} → [{i + 1}] {column_name(columns[i])}:"))
        for ch in step["changes"]:
            since = "" if ch["since"] == i - 1 else f" (since [{ch['since'] + 1}]: the columns between lack the row)"
            out.append(for_terminal(f"  {ch['kind']:<8} {ch['row']:<7} {change_text(ch['was'])} → {change_text(ch['now'])}{since}"))
        if not step["changes"]:
            out.append("  nothing")
    return out


def matrix_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def matrix_markdown(data: dict[str, Any]) -> str:
    columns = data["columns"]
    heads = [f"{for_markdown(c['sut'])}<br>{for_markdown(_version(c))}" for c in columns]
    out = [
        f"# pwh report — {len(columns)} verdicts, row × SUT",
        "",
        f"{_order_text(data).capitalize()}. Each cell: the row's RFC status / profile status; {ABSENT}: the verdict has no "
        f"such row; \\{MARK} after a row: its result changes between columns (listed below the table)."
        + (" The rows that differ between the columns come first, then the rows alike." if len(columns) > 1 else ""),
        "",
        "| row | " + " | ".join(heads) + " | case |",
        "|---|" + "---|" * len(columns) + "---|",
    ]
    blank = " |" * (len(columns) + 1)
    for heading, members in groups(data["rows"], "rows", several=len(columns) > 1):
        if heading:
            out.append(f"| **{heading}** |{blank}")
        for r in members:
            label = for_markdown(r["row"]) + (f" \\{MARK}" if r.get("changes") else "")
            out.append(f"| {label} | " + " | ".join(cell_text(c) for c in r["cells"]) + f" | {for_markdown(r['case'])} |")
    out.append("| **verdict** | " + " | ".join(f"**{_verdict_text(c)}**" for c in columns) + " | RFC/profile |")
    out += [
        "",
        *(
            f"{i}. `{for_markdown_code(c['file'])}`: SUT {for_markdown(c['sut'])} {for_markdown(_version(c))}"
            for i, c in enumerate(columns, 1)
        ),
    ]
    out += _markdown_scenarios(data, heads)
    if len(columns) > 1:
        out += ["", "## What changed, column to column", "", "fixed: RFC FAIL → pass; broke: pass → FAIL; changed: anything else.", ""]
        for step in column_changes(data):
            i = step["column"]
            out.append(
                f"- **{for_markdown(column_name(columns[i - 1]))} → {for_markdown(column_name(columns[i]))}**"
                + ("" if step["changes"] else ": nothing")
            )
            out += [
                f"  - {ch['kind']} {for_markdown(ch['row'])}: {change_text(ch['was'])} → {change_text(ch['now'])}" for ch in step["changes"]
            ]
    note = _harness_note(data)
    return "\n".join(out + (["", note[0].upper() + note[1:]] if note else [])) + "\n"


def _markdown_scenarios(data: dict[str, Any], heads: Sequence[str]) -> list[str]:
    scenarios = data.get("scenarios") or []
    if not scenarios:
        return []
    several = len(data["columns"]) > 1
    out = [
        "",
        "## Scenarios",
        "",
        f"Each cell: the scenario's status in that verdict; {ABSENT}: the verdict lacks it."
        + (" The scenarios that differ between the columns first." if several else ""),
        "",
        "| row | scenario | " + " | ".join(heads) + " |",
        "|---|---|" + "---|" * len(heads),
    ]
    for heading, members in groups(scenarios, "scenarios", several=several):
        if heading:
            out.append(f"| **{heading}** |" + " |" * (len(heads) + 1))
        for x in members:
            out.append(
                f"| {for_markdown(x['row'] or '?')} | {for_markdown(scenario_label(x))} | "
                + " | ".join(scenario_text(c) for c in x["cells"])
                + " |"
            )
    return out
