"""The row × implementation matrix (:mod:`pwh._harness.report.matrix`) as one self-contained HTML
page: the rows that differ first, then every scenario × SUT, each failing, differing or skipped cell
linking to its failure card, the cards of every verdict embedded below the tables
(:mod:`pwh._harness.report.matrix_cards`); everything taken from a file is escaped for HTML."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from pwh._harness.report.html import stylesheet
from pwh._harness.report.matrix import (
    ABSENT,
    MARK,
    _harness_note,
    _order_text,
    _verdict_text,
    _version,
    cell_text,
    change_text,
    column_changes,
    column_name,
    for_terminal,
    groups,
    scenario_text,
)
from pwh._harness.report.matrix_cards import CARD_KINDS, Cards, column_anchor, column_cards, row_targets

__all__ = ["matrix_html", "row_anchor"]


def _h(value: Any) -> str:
    """Markup escaped, and control characters shown escaped (nothing a browser or a terminal
    showing the page's source would act on)."""
    return html.escape(for_terminal(value), quote=True)


def row_anchor(row: str) -> str:
    """The matrix row's anchor on the page (``row-M03``)."""
    return "row-" + re.sub(r"[^A-Za-z0-9_.-]", "_", str(row))


def _link(text: str, target: str | None) -> str:
    return f'<a href="#{_h(target)}">{text}</a>' if target else text


def _html_cell(cell: dict[str, Any] | None, was: dict[str, Any] | None, since: dict[str, Any] | None, target: str | None) -> str:
    kind = "absent" if cell is None else (cell["profile"] if cell["rfc"] == "pass" else cell["rfc"])
    moved = " moved" if was is not None else ""
    title = f' title="was {_h(change_text(was))} in {_h(column_name(since))}"' if was is not None and since is not None else ""
    counts = change_text(cell).partition(" (")[2].rstrip(")")
    count = f"<br><small>{_h(counts)}</small>" if counts else ""
    return f'<td class="{_h(kind)}{moved}"{title}>{_link(_h(cell_text(cell)), target)}{count}</td>'


def _html_row(r: dict[str, Any], columns: Sequence[dict[str, Any]], targets: Sequence[dict[str, str]]) -> str:
    moved = {ch["column"]: ch["since"] for ch in r.get("changes", [])}
    cells = "".join(
        _html_cell(
            c,
            r["cells"][moved[i]] if i in moved else None,
            columns[moved[i]] if i in moved else None,
            targets[i].get(r["row"]) if i < len(targets) else None,
        )
        for i, c in enumerate(r["cells"])
    )
    marked = ' class="changes"' if moved else ""
    return f'<tr{marked} id="{_h(row_anchor(r["row"]))}"><th>{_h(r["row"])}</th>{cells}<td>{_h(r["case"])}</td></tr>'


def _group_row(heading: str, width: int) -> str:
    return f'<tr class="group"><th colspan="{width}">{_h(heading)}</th></tr>'


def _where(feature: Any, line: Any, features_href: str | None) -> str:
    """``feature:line``, linked to the features' copy when ``features_href`` says where it is (as
    the single report links it)."""
    label = f"<code>{_h(f'{feature}:{line}')}</code>"
    if features_href is None or not isinstance(feature, str) or "/" not in feature or not isinstance(line, int):
        return label
    return f'<a class="where" href="{_h(features_href + quote(feature.split("/", 1)[1]) + f"#L{line}")}">{label}</a>'


def _html_scenario(x: dict[str, Any], all_cards: Sequence[Cards | None], features_href: str | None) -> str:
    cells = []
    for k, c in enumerate(x["cells"]):
        cards = all_cards[k] if k < len(all_cards) else None
        target = cards.scenario(k, c["index"]) if cards is not None and c is not None and c["status"] in CARD_KINDS else None
        kind = "absent" if c is None else c["status"]
        cells.append(f'<td class="{_h(kind)}">{_link(_h(scenario_text(c)), target)}</td>')
    params = f' <span class="params">[{_h(x["params"])}]</span>' if x.get("params") else ""
    row = f'<a href="#{_h(row_anchor(x["row"]))}">{_h(x["row"])}</a>' if x.get("row") else "?"
    name = f'<span class="name">{_h(x["scenario"])}</span>{params} {_where(x["feature"], x["line"], features_href)}'
    return f'<tr class="scenario"><th>{row}</th><td>{name}</td>{"".join(cells)}</tr>'


def _html_scenarios(data: dict[str, Any], head: str, all_cards: Sequence[Cards | None], features_href: str | None) -> str:
    scenarios = data.get("scenarios") or []
    if not scenarios:
        return ""
    several = len(data["columns"]) > 1
    thead = f"<thead><tr><th>row</th><th>scenario</th>{head}</tr></thead>"
    parts = [
        '<section id="scenarios"><h2>Scenarios</h2>\n'
        f"<p>Each cell: the scenario's status in that verdict ({ABSENT}: the verdict lacks it); a failing, differing or "
        "skipped one links to its card below."
        + (" The scenarios that differ between the columns first; those alike in every column are folded below them." if several else "")
        + "</p>\n"
    ]
    for heading, members in groups(scenarios, "scenarios", several=several):
        body = "\n".join(_html_scenario(x, all_cards, features_href) for x in members)
        table = f'<table class="matrix scenarios">{thead}<tbody>\n{body}\n</tbody></table>' if members else '<p class="note">none</p>'
        if heading is None:
            parts.append(table)
        elif heading.startswith("scenarios alike"):
            parts.append(f'<details class="alike" id="scenarios-alike"><summary>{_h(heading)}</summary>{table}</details>')
        else:
            parts.append(f'<h3 id="scenarios-differ">{_h(heading)}</h3>{table}')
    return "\n".join(parts) + "\n</section>\n"


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


def matrix_html(
    data: dict[str, Any],
    verdicts: Sequence[dict[str, Any]] | None = None,
    *,
    features_href: str | None = None,
    report_hrefs: Mapping[str, str] | None = None,
) -> str:
    """One self-contained page; every string from a verdict file is escaped.

    ``verdicts``: the loaded verdicts in column order (default: those :func:`matrix` kept); with
    them each verdict's failure cards are on the page and every failing, differing or skipped cell
    links to its card; without them (data read back from JSON) the cells link nowhere.
    ``features_href``: a relative URL prefix reaching the features (``feature:line`` then links, as
    in the single report). ``report_hrefs``: a column's file label → a relative URL of its own
    report, linked from its header (the packet's ``results/<sut>/report.html``)."""
    columns = data["columns"]
    verdicts = verdicts if verdicts is not None else getattr(data, "verdicts", None)
    if verdicts is not None and len(verdicts) != len(columns):
        raise ValueError("one verdict per column")
    rows_by_anchor = {str(r["row"]).lower(): row_anchor(r["row"]) for r in data["rows"]}
    all_cards: list[Cards | None] = []
    targets: list[dict[str, str]] = []
    for k, v in enumerate(verdicts or []):
        c = columns[k]
        heading = f"[{k + 1}] {_h(c['sut'])} {_h(_version(c))} — {_h(_verdict_text(c))}: failures, divergences and skips"
        cards = column_cards(k, v, heading, rows_by_anchor, features_href)
        all_cards.append(cards)
        targets.append(row_targets(k, v, cards))
    head = "".join(_html_head(k, c, bool(all_cards), report_hrefs or {}) for k, c in enumerate(columns))
    width = len(columns) + 2
    body = []
    for group, members in groups(data["rows"], "rows", several=len(columns) > 1):
        body += [_group_row(group, width)] if group else []
        body += [_html_row(r, columns, targets) for r in members]
    totals = "".join(f"<td><strong>{_h(_verdict_text(c))}</strong></td>" for c in columns)
    legend = "".join(f"<li><code>{_h(c['file'])}</code>: SUT {_h(c['sut'])} {_h(_version(c))}</li>" for c in columns)
    title = f"pwh report — {len(columns)} verdicts, row × SUT"
    several = len(columns) > 1
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{_h(title)}</title>'
        f'<style>{stylesheet()}</style></head><body class="matrix-page">\n<header><h1>{_h(title)}</h1>\n'
        f"<p>{_h(_order_text(data).capitalize())}. Each cell: the row's RFC status / profile status; {ABSENT}: the verdict "
        f"has no such row; {MARK} after a row: its result changes between columns (an outlined cell: it differs from the "
        "column before; hover for what it was)."
        + (" The rows that differ between the columns come first, then the rows alike." if several else "")
        + (" A failing, differing or skipped cell links to its verdict's card, below the tables." if all_cards else "")
        + "</p></header>\n"
        f'<section id="rows"><table class="matrix"><thead><tr><th>row</th>{head}<th>case</th></tr></thead>\n<tbody>\n'
        + "\n".join(body)
        + f"\n<tr><th>verdict</th>{totals}<td>RFC/profile</td></tr>\n</tbody></table>\n<ol>{legend}</ol></section>\n"
        + _html_scenarios(data, head, all_cards, features_href)
        + (_html_changes(data) if several else "")
        + (f"<p><strong>{_h(note)}</strong></p>\n" if (note := _harness_note(data)) else "")
        + (
            '<section id="cards"><h2>Failure cards, by verdict</h2>\n' + "\n".join(c.html for c in all_cards if c) + "\n</section>\n"
            if all_cards
            else ""
        )
        + "</body></html>\n"
    )


def _html_head(k: int, c: dict[str, Any], cards: bool, report_hrefs: Mapping[str, str]) -> str:
    name = f'<a href="#{column_anchor(k)}">{_h(c["sut"])}</a>' if cards else _h(c["sut"])
    report = report_hrefs.get(c["file"])
    link = f' <a href="{_h(report)}">report</a>' if report else ""
    return f"<th>{name}<br><small>{_h(_version(c))}{link}</small></th>"
