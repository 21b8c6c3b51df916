"""``pwh report A.json B.json ...``: several saved verdicts as one row × implementation table.

Each column is one verdict, in the order given, headed by the SUT it names and the version its
adapter stated (``run.sut_version``); each cell is that row's RFC status and profile status
(``pass/pass``, ``pass/differs``, ``FAIL/FAIL``, ``skip/skip``, ``self/self``), or ``—`` when
the verdict has no such row (a partial run). The rows are the rulebook's, in its order, then any
other row a verdict names. Rendered for the terminal, as JSON data, as Markdown and as one HTML
page; everything taken from a file is escaped for where it is shown (a SUT name is whatever the
gate was given).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from typing import Any

from pwh._harness.report import STATUS_MARK, VERDICT_WORD
from pwh._harness.rules import RULES

__all__ = ["MATRIX_SCHEMA_VERSION", "matrix", "matrix_html", "matrix_json", "matrix_markdown", "matrix_table"]

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
    """The table as data: ``verdicts`` are (file label, loaded verdict) in column order."""
    columns = []
    for label, v in verdicts:
        stated = v.get("run")
        run: dict[str, Any] = stated if isinstance(stated, dict) else {}
        partial = bool(run.get("partial")) or "selected_rows" in v or bool(v.get("stopped_at_first_failure"))
        columns.append(
            {
                "file": label,
                "sut": v["sut"],
                "sut_version": run.get("sut_version") or None,
                "verdict": v["summary"]["verdict"],
                "profile": v["summary"]["profile"],
                "partial": partial,
            }
        )
    order = [r.id for r in RULES]
    cases = {r.id: r.case for r in RULES}
    named = {row for _, v in verdicts for row in v["rows"]}
    row_ids = [r for r in order if r in named] + sorted(named - set(order))
    rows = []
    for row in row_ids:
        cells = []
        for _, v in verdicts:
            x = v["rows"].get(row)
            cells.append({"rfc": x["rfc"], "profile": x["profile"]} if x else None)
        rows.append({"row": row, "case": cases.get(row, ""), "cells": cells})
    return {"schema_version": MATRIX_SCHEMA_VERSION, "columns": columns, "rows": rows}


def cell_text(cell: dict[str, str] | None) -> str:
    """``RFC/profile`` in the terminal table's words, or ``—`` for a row the verdict lacks."""
    if cell is None:
        return ABSENT
    return f"{STATUS_MARK.get(cell['rfc'], cell['rfc'])}/{STATUS_MARK.get(cell['profile'], cell['profile'])}"


def _version(column: dict[str, Any]) -> str:
    return column["sut_version"] or "(version not stated)"


def _verdict_text(column: dict[str, Any]) -> str:
    text = f"{VERDICT_WORD.get(column['verdict'], column['verdict'])}/{VERDICT_WORD.get(column['profile'], column['profile'])}"
    return text + (" PARTIAL" if column["partial"] else "")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def matrix_table(data: dict[str, Any]) -> str:
    """The terminal table: one line per row, a column per verdict, then a legend of the files."""
    columns, rows = data["columns"], data["rows"]
    heads = [(_cut(for_terminal(c["sut"]), _HEADER_WIDTH), _cut(for_terminal(_version(c)), _HEADER_WIDTH)) for c in columns]
    totals = [_verdict_text(c) for c in columns]
    widths = [
        max(len(name), len(version), len(total), *(len(cell_text(r["cells"][i])) for r in rows))
        for i, ((name, version), total) in enumerate(zip(heads, totals, strict=True))
    ]

    def line(first: str, values: Sequence[str], last: str = "") -> str:
        return (f"{first:<8}" + "  ".join(f"{value:<{w}}" for value, w in zip(values, widths, strict=True)) + f"  {last}").rstrip()

    out = [f"pwh report — {len(columns)} verdicts, row × SUT (each cell: RFC/profile status; {ABSENT}: row not run)", ""]
    body = [line(r["row"], [cell_text(c) for c in r["cells"]], _cut(for_terminal(r["case"]), 48)) for r in rows]
    head = [line("row", [n for n, _ in heads], "case"), line("", [v for _, v in heads])]
    out += [*head, "-" * max(len(x) for x in [*head, *body]), *body]
    out += ["", line("verdict", totals, "(RFC/profile)"), ""]
    for i, c in enumerate(columns, 1):
        out.append(
            for_terminal(f"[{i}] {c['file']}: SUT {c['sut']} {_version(c)}, verdict {_verdict_text(c)}")
            + (" — a partial run has only the rows it ran" if c["partial"] else "")
        )
    return "\n".join(out) + "\n"


def matrix_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def matrix_markdown(data: dict[str, Any]) -> str:
    columns = data["columns"]
    heads = [f"{for_markdown(c['sut'])}<br>{for_markdown(_version(c))}" for c in columns]
    out = [
        f"# pwh report — {len(columns)} verdicts, row × SUT",
        "",
        f"Each cell: the row's RFC status / profile status; {ABSENT}: the verdict has no such row.",
        "",
        "| row | " + " | ".join(heads) + " | case |",
        "|---|" + "---|" * len(columns) + "---|",
    ]
    for r in data["rows"]:
        out.append(f"| {for_markdown(r['row'])} | " + " | ".join(cell_text(c) for c in r["cells"]) + f" | {for_markdown(r['case'])} |")
    out.append("| **verdict** | " + " | ".join(f"**{_verdict_text(c)}**" for c in columns) + " | RFC/profile |")
    out += [
        "",
        *(
            f"{i}. `{for_markdown_code(c['file'])}`: SUT {for_markdown(c['sut'])} {for_markdown(_version(c))}"
            for i, c in enumerate(columns, 1)
        ),
    ]
    return "\n".join(out) + "\n"


_CSS = (
    "body{font:14px/1.4 system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}"
    "th small{font-weight:normal;color:#555}.pass{background:#e6f4e6}.fail{background:#fbe3e3}"
    ".skip,.self-check{background:#f1f1f1}.divergence{background:#fff4d6}.absent{color:#888}"
)


def _h(value: Any) -> str:
    """Markup escaped, and control characters shown escaped (nothing a browser or a terminal
    showing the page's source would act on)."""
    return html.escape(for_terminal(value), quote=True)


def matrix_html(data: dict[str, Any]) -> str:
    """One self-contained page; every string from a verdict file is escaped."""
    columns = data["columns"]
    head = "".join(f"<th>{_h(c['sut'])}<br><small>{_h(_version(c))}</small></th>" for c in columns)
    body = []
    for r in data["rows"]:
        cells = []
        for c in r["cells"]:
            kind = "absent" if c is None else (c["profile"] if c["rfc"] == "pass" else c["rfc"])
            cells.append(f'<td class="{_h(kind)}">{_h(cell_text(c))}</td>')
        body.append(f"<tr><th>{_h(r['row'])}</th>{''.join(cells)}<td>{_h(r['case'])}</td></tr>")
    totals = "".join(f"<td><strong>{_h(_verdict_text(c))}</strong></td>" for c in columns)
    legend = "".join(f"<li><code>{_h(c['file'])}</code>: SUT {_h(c['sut'])} {_h(_version(c))}</li>" for c in columns)
    title = f"pwh report — {len(columns)} verdicts, row × SUT"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{_h(title)}</title>'
        f"<style>{_CSS}</style></head><body>\n<h1>{_h(title)}</h1>\n"
        f"<p>Each cell: the row's RFC status / profile status; {ABSENT}: the verdict has no such row.</p>\n"
        f"<table><thead><tr><th>row</th>{head}<th>case</th></tr></thead>\n<tbody>\n"
        + "\n".join(body)
        + f"\n<tr><th>verdict</th>{totals}<td>RFC/profile</td></tr>\n</tbody></table>\n<ol>{legend}</ol>\n</body></html>\n"
    )
