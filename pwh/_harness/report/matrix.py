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

The rows are the rulebook's, in its order, then any other row a verdict names. Rendered for the
terminal, as JSON data, as Markdown and as one HTML page; everything taken from a file is escaped
for where it is shown (a SUT name is whatever the gate was given).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from typing import Any

from pwh._harness.report._common import STATUS_MARK, VERDICT_WORD
from pwh._harness.rules import RULES

__all__ = [
    "MATRIX_SCHEMA_VERSION",
    "column_changes",
    "matrix",
    "matrix_html",
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


def matrix(verdicts: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
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
        rows.append({"row": row, "case": cases.get(row, ""), "cells": cells, "changes": changes(cells)})
    return {
        "schema_version": MATRIX_SCHEMA_VERSION,
        "order": "version" if order is not None else "given",
        "harness_differs": harness_differs(columns),
        "columns": columns,
        "rows": rows,
    }


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
        "",
    ]
    body = [line(for_terminal(_row_label(r)), [cell_text(c) for c in r["cells"]], _cut(for_terminal(r["case"]), 48)) for r in rows]
    head = [line("row", [n for n, _ in heads], "case"), line("", [v for _, v in heads])]
    out += [*head, "-" * max(len(x) for x in [*head, *body]), *body]
    out += ["", line("verdict", totals, "(RFC/profile)"), ""]
    for i, c in enumerate(columns, 1):
        out.append(
            for_terminal(f"[{i}] {c['file']}: SUT {c['sut']} {_version(c)}, verdict {_verdict_text(c)}")
            + (" — a partial run has only the rows it ran" if c["partial"] else "")
        )
    if len(columns) > 1:
        out += ["", "what changed, column to column (fixed: RFC FAIL → pass; broke: pass → FAIL; changed: anything else):"]
        out += _terminal_changes(data)
    note = _harness_note(data)
    return "\n".join(out + (["", note] if note else [])) + "\n"


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
        f"such row; \\{MARK} after a row: its result changes between columns (listed below the table).",
        "",
        "| row | " + " | ".join(heads) + " | case |",
        "|---|" + "---|" * len(columns) + "---|",
    ]
    for r in data["rows"]:
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


_CSS = (
    "body{font:14px/1.4 system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}"
    "th small,td small{font-weight:normal;color:#555}.pass{background:#e6f4e6}.fail{background:#fbe3e3}"
    ".skip,.self-check{background:#f1f1f1}.divergence{background:#fff4d6}.absent{color:#888}"
    "td.moved{outline:2px solid #333;outline-offset:-2px}tr.changes>th:first-child::after{content:' *'}"
    ".fixed{color:#1a6b1a}.broke{color:#a11}"
)


def _h(value: Any) -> str:
    """Markup escaped, and control characters shown escaped (nothing a browser or a terminal
    showing the page's source would act on)."""
    return html.escape(for_terminal(value), quote=True)


def _html_cell(cell: dict[str, Any] | None, was: dict[str, Any] | None, since: dict[str, Any] | None) -> str:
    kind = "absent" if cell is None else (cell["profile"] if cell["rfc"] == "pass" else cell["rfc"])
    moved = " moved" if was is not None else ""
    title = f' title="was {_h(change_text(was))} in {_h(column_name(since))}"' if was is not None and since is not None else ""
    counts = change_text(cell).partition(" (")[2].rstrip(")")
    count = f"<br><small>{_h(counts)}</small>" if counts else ""
    return f'<td class="{_h(kind)}{moved}"{title}>{_h(cell_text(cell))}{count}</td>'


def _html_row(r: dict[str, Any], columns: Sequence[dict[str, Any]]) -> str:
    moved = {ch["column"]: ch["since"] for ch in r.get("changes", [])}
    cells = "".join(
        _html_cell(c, r["cells"][moved[i]] if i in moved else None, columns[moved[i]] if i in moved else None)
        for i, c in enumerate(r["cells"])
    )
    marked = ' class="changes"' if moved else ""
    return f"<tr{marked}><th>{_h(r['row'])}</th>{cells}<td>{_h(r['case'])}</td></tr>"


def _html_changes(data: dict[str, Any]) -> str:
    columns, items = data["columns"], []
    for step in column_changes(data):
        i = step["column"]
        found = "".join(
            f'<li><span class="{_h(ch["kind"])}">{_h(ch["kind"])}</span> <strong>{_h(ch["row"])}</strong>: '
            f"{_h(change_text(ch['was']))} → {_h(change_text(ch['now']))}</li>"
            for ch in step["changes"]
        )
        items.append(
            f"<li>{_h(column_name(columns[i - 1]))} → {_h(column_name(columns[i]))}"
            + (f"<ul>{found}</ul>" if found else ": nothing")
            + "</li>"
        )
    return (
        "<h2>What changed, column to column</h2>\n<p>fixed: RFC FAIL → pass; broke: pass → FAIL; changed: anything else.</p>\n"
        f"<ul>{''.join(items)}</ul>\n"
    )


def matrix_html(data: dict[str, Any]) -> str:
    """One self-contained page; every string from a verdict file is escaped."""
    columns = data["columns"]
    head = "".join(f"<th>{_h(c['sut'])}<br><small>{_h(_version(c))}</small></th>" for c in columns)
    body = [_html_row(r, columns) for r in data["rows"]]
    totals = "".join(f"<td><strong>{_h(_verdict_text(c))}</strong></td>" for c in columns)
    legend = "".join(f"<li><code>{_h(c['file'])}</code>: SUT {_h(c['sut'])} {_h(_version(c))}</li>" for c in columns)
    title = f"pwh report — {len(columns)} verdicts, row × SUT"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{_h(title)}</title>'
        f"<style>{_CSS}</style></head><body>\n<h1>{_h(title)}</h1>\n"
        f"<p>{_h(_order_text(data).capitalize())}. Each cell: the row's RFC status / profile status; {ABSENT}: the verdict "
        f"has no such row; {MARK} after a row: its result changes between columns (an outlined cell: it differs from the "
        "column before; hover for what it was).</p>\n"
        f"<table><thead><tr><th>row</th>{head}<th>case</th></tr></thead>\n<tbody>\n"
        + "\n".join(body)
        + f"\n<tr><th>verdict</th>{totals}<td>RFC/profile</td></tr>\n</tbody></table>\n<ol>{legend}</ol>\n"
        + (_html_changes(data) if len(columns) > 1 else "")
        + (f"<p><strong>{_h(note)}</strong></p>\n" if (note := _harness_note(data)) else "")
        + "</body></html>\n"
    )
