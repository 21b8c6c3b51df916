"""The HTML report: one self-contained page a maintainer triages from. What the verdict covers,
the rows, then every failure (RFC first, then testbed self-checks, then profile divergences) and
every skip; passing scenarios wait in collapsed <details>, one per row. No script, no external
asset (the stylesheet, ``report.css`` beside this module, is inlined); the same verdict gives the
same bytes."""

from __future__ import annotations

import html
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import quote

from pwh._harness.report._common import PARTIAL_TAIL, VERDICT_WORD, covers_facts, difference_line, ranges, rules_in, summary_lines
from pwh._harness.rules import RULES


@cache
def stylesheet() -> str:
    """The page's stylesheet: ``report.css``, one rule (or a run of rules) a line, the lines joined
    without their newlines (so the page carries it on one line)."""
    text = resources.files(__package__).joinpath("report.css").read_text(encoding="utf-8")
    return "".join(text.splitlines())


_KIND_WORD = {
    "pass": "pass",
    "fail": "FAIL",
    "skip": "skip",
    "self-check": "self-check",
    "divergence": "differs",
    "incomplete": "INCOMPLETE",
}
_STEP_WORD = {"passed": "passed", "failed": "FAILED", "skipped": "skipped", "not run": "not run"}


def html_report(verdict: dict[str, Any], *, features_href: str | None = None) -> str:
    """The verdict as one self-contained HTML page to triage from (see the section comment).

    ``features_href``: a relative URL prefix that reaches the features directory from where the
    page is written; with it, every ``features/x.feature:LINE`` links to ``{prefix}x.feature#LLINE``.
    Without it nothing links to a file (a report must not guess where the features are)."""
    page = _HtmlPage(verdict, features_href)
    title = f"pwh gate report — {verdict['sut']}" + (" (PARTIAL)" if _partial(verdict) else "")
    body = [
        *page.header(),
        *page.rows_table(),
        *page.failures(),
        *page.skips(),
        *page.passing(),
        *(_coverage_html(verdict["coverage"]) if "coverage" in verdict else []),
    ]
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{_h(title)}</title>'
        f"<style>{stylesheet()}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def _h(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _partial(verdict: dict[str, Any]) -> str | None:
    facts = covers_facts(verdict)
    return facts["partial"] if facts else None


def _badge(kind: str, word: str | None = None) -> str:
    return f'<span class="status {_h(kind)}">{_h(word if word is not None else _KIND_WORD.get(kind, kind))}</span>'


def _scenario_kind(x: dict[str, Any]) -> tuple[str, str]:
    """A scenario's status class and word: fail, self-fail, divergence, skip, self-check, pass."""
    if x.get("counts_for") == "testbed":
        return ("self-fail", "self-check FAIL") if x.get("rfc") == "fail" else ("self-check", "self-check")
    if x.get("rfc") == "fail":
        return "fail", "FAIL"
    if x.get("rfc") == "skip":
        return "skip", "skip"
    if x.get("profile") == "divergence":
        return "divergence", "differs"
    return "pass", "pass"


def _row_of(x: dict[str, Any]) -> str:
    tags = [t for t in RULE_ORDER if t in x.get("tags", [])]
    return tags[0] if tags else ""


RULE_ORDER = [r.id for r in RULES]


class _HtmlPage:
    def __init__(self, verdict: dict[str, Any], features_href: str | None) -> None:
        self.v = verdict
        self.href = features_href
        self.indexed = list(enumerate(verdict["scenarios"]))
        self.places: dict[tuple[str, str, Any], int] = {}
        for _, x in self.indexed:
            key = (_row_of(x), x.get("feature", "?"), x.get("line", "?"))
            self.places[key] = self.places.get(key, 0) + 1
        self.first_failure: dict[str, str] = {}  # row -> the anchor of its first RFC failure group
        for row, members in self.groups([(i, x) for i, x in self.indexed if _scenario_kind(x)[0] == "fail"]):
            self.first_failure.setdefault(row, f"f-{members[0][0]}")

    # -- pieces ---------------------------------------------------------------------------

    def where(self, feature: Any, line: Any) -> str:
        label = f"{feature}:{line}"
        if self.href is None or not isinstance(feature, str) or "/" not in feature or not isinstance(line, int):
            return f'<code class="where">{_h(label)}</code>'
        url = self.href + quote(feature.split("/", 1)[1]) + f"#L{line}"
        return f'<a class="where" href="{_h(url)}"><code>{_h(label)}</code></a>'

    def steps(self, x: dict[str, Any], *, open_: bool, label: str = "steps", head: str = "") -> str:
        """A scenario's steps in a <details> (open or not), the step that failed or skipped marked,
        the steps that never ran folded away; its summary says where it stopped. ``head``: HTML
        put first in the summary (a one-line scenario, whose summary is then brief)."""
        steps = x.get("steps")
        if not isinstance(steps, list) or not steps:
            return f'<p class="note steps-missing">{_h(label)}: not recorded in this verdict</p>'
        stop = next((n for n, s in enumerate(steps) if s.get("status") in ("failed", "skipped")), None)
        parts = [f"{len(steps)} step{'s' if len(steps) != 1 else ''}"]
        if stop is not None:
            parts.append(f"{'failed' if steps[stop]['status'] == 'failed' else 'skipped'} at step {stop + 1}")
        elif all(s.get("status") == "passed" for s in steps):
            parts.append("all passed")
        never = sum(1 for s in steps if s.get("status") == "not run")
        if never:
            parts.append(f"{never} not run")
        # Shown: the step that stopped the scenario and the few just before it; folded (one click
        # away): earlier passed steps, and the steps after it that never ran.
        head_n = stop - _STEPS_BEFORE if stop is not None and stop - _STEPS_BEFORE >= 2 else 0
        tail = len(steps)
        while tail > 0 and steps[tail - 1].get("status") == "not run":
            tail -= 1
        if len(steps) - tail < 2:  # fold only two or more steps
            tail = len(steps)
        shown = ""
        if head_n:
            shown += _folded(f"{head_n} earlier steps, passed", steps[:head_n], 1)
        shown += f'<ol class="steps" start="{head_n + 1}">{"".join(_step_html(s) for s in steps[head_n:tail])}</ol>'
        if tail < len(steps):
            shown += _folded(f"{len(steps) - tail} more steps, not run", steps[tail:], tail + 1)
        summary = f'{head} <span class="muted">({len(steps)} steps)</span>' if head else f"{_h(label)}: {_h(' · '.join(parts))}"
        return f'<details class="steps"{" open" if open_ else ""}><summary>{summary}</summary>{shown}</details>'

    def title(self, row: str, x: dict[str, Any], kind: str, word: str, n: int) -> str:
        total = self.places.get((row, x.get("feature", "?"), x.get("line", "?")), n)
        examples = f' <span class="muted">({n} of {total} examples)</span>' if total > 1 else ""
        row_link = f'<a class="row-id" href="#{_h(row.lower())}">{_h(row)}</a> ' if row else ""
        return (
            f'<h4>{_badge(kind, word)} {row_link}<span class="name">{_h(x.get("scenario", x["id"]))}</span> '
            f"{self.where(x.get('feature', '?'), x.get('line', '?'))}{examples}</h4>"
        )

    def groups(self, chosen: list[tuple[int, dict[str, Any]]]) -> list[tuple[str, list[tuple[int, dict[str, Any]]]]]:
        """Scenarios by row (matrix order), then place (feature:line: one outline's examples together)."""
        out: dict[tuple[str, str, Any], list[tuple[int, dict[str, Any]]]] = {}
        order = {r: n for n, r in enumerate(RULE_ORDER)}
        for i, x in sorted(chosen, key=lambda ix: (order.get(_row_of(ix[1]), len(order)), ix[0])):
            out.setdefault((_row_of(x), x.get("feature", "?"), x.get("line", "?")), []).append((i, x))
        return [(key[0], members) for key, members in out.items()]

    # -- sections -------------------------------------------------------------------------

    def header(self) -> list[str]:
        v, s = self.v, self.v["summary"]
        facts = covers_facts(v)
        out = [f"<header><h1>pwh gate report — {_h(v['sut'])}</h1>"]
        if facts and facts["partial"]:
            out.append(
                f'<p class="banner partial" id="partial"><strong>PARTIAL verdict</strong> ({_h(facts["partial"])}): {_h(PARTIAL_TAIL)}.</p>'
            )
        out.append(
            f'<p class="verdict">RFC verdict: {_badge(s["verdict"], VERDICT_WORD[s["verdict"]])} · '
            f"profile: {_badge(s['profile'], VERDICT_WORD[s['profile']])}</p>"
        )
        rows = facts["rows"] if facts else ("rows " + ", ".join(v["selected_rows"]) if v.get("selected_rows") else "all rows")
        commit = f" @ {facts['pwh_commit']}" if facts and facts["pwh_commit"] else ""
        items = [
            ("SUT", facts["sut"] if facts else v["sut"]),
            ("rows covered", f"{rows} ({len(v['rows'])} in this verdict)"),
            ("pwh", f"{facts['pwh_version'] if facts else v['pwh_version']}{commit}"),
            ("features digest", (facts or {}).get("features_digest") or "not recorded"),
            ("generated at", (facts or {}).get("generated_at") or "not recorded"),
        ]
        out.append('<dl class="covers">' + "".join(f"<dt>{_h(k)}</dt><dd>{_h(val)}</dd>" for k, val in items) + "</dl>")
        if v.get("stopped_at_first_failure"):
            out.append('<p class="note">Stopped at the first failing scenario (-x): the scenarios after it never ran.</p>')
        out += [f"<p>{_h(line)}</p>" for line in summary_lines(v)]
        out.append(
            f'<p class="note">{s["scenarios"]} scenarios, {s["sut_scenarios"]} of them judged the SUT. The RFC verdict comes from '
            "checks a clause of the RFC or seed 003 requires; the profile verdict adds pwh's own readings where the documents are "
            "silent (exact code names, JSON paths, …). A scenario that only exercised pwh's fakes is a testbed self-check, "
            "listed apart and never counted as a pass of the SUT.</p></header>"
        )
        return out

    def rows_table(self) -> list[str]:
        head = (
            "<tr><th>row</th><th>case</th><th>required outcome</th><th>seam</th>"
            + "".join(f'<th class="num">{c}</th>' for c in ("scenarios", "passed", "failed", "skipped", "differ", "self-checks"))
            + "<th>RFC</th><th>profile</th></tr>"
        )
        body = []
        for rule in rules_in(self.v):
            r = self.v["rows"][rule.id]
            failed = str(r["failed"])
            if r["failed"] and rule.id in self.first_failure:
                failed = f'<a href="#{self.first_failure[rule.id]}">{failed}</a>'
            nums = [str(r["scenarios"]), str(r["passed"]), failed, str(r["skipped"]), str(r.get("divergences", 0))]
            nums.append(str(r["self_checks"]["scenarios"]))
            body.append(
                f'<tr class="row {_h(r["rfc"])}"><td><a href="#{_h(rule.id.lower())}">{_h(rule.id)}</a></td>'
                f'<td>{_h(rule.case)}</td><td>{_h(rule.required)}</td><td class="seam">{_h(", ".join(r.get("seams", ())))}</td>'
                + "".join(f'<td class="num">{n}</td>' for n in nums)
                + f"<td>{_badge(r['rfc'])}</td><td>{_badge(r['profile'])}</td></tr>"
            )
        return ['<section id="rows"><h2>Rows</h2>', f"<table><thead>{head}</thead><tbody>", *body, "</tbody></table></section>"]

    def failures(self) -> list[str]:
        fails = [(i, x) for i, x in self.indexed if _scenario_kind(x)[0] == "fail"]
        own = [(i, x) for i, x in self.indexed if _scenario_kind(x)[0] == "self-fail"]
        differs = [(i, x) for i, x in self.indexed if _scenario_kind(x)[0] == "divergence"]
        empty = [rule.id for rule in rules_in(self.v) if self.v["rows"][rule.id]["scenarios"] == 0]
        errors = self.v.get("collection_errors") or []
        out = ['<section id="failures"><h2>Failures</h2>']
        counts = [
            f"{len(fails)} RFC failure(s)",
            *([f"{len(own)} testbed self-check failure(s)"] if own else []),
            f"{len(differs)} profile divergence(s)",
        ]
        out.append(f'<p class="muted">{_h(" · ".join(counts))}</p>')
        if not (fails or own or differs or empty or errors):
            out.append(f"<p>{_badge('pass', 'none')}: no RFC failure, no testbed self-check failure, no profile divergence.</p>")
        for row in empty:
            out.append(
                f'<div class="group fail" id="f-{_h(row.lower())}"><h4>{_badge("fail")} {_h(row)}: no scenario (the row fails)</h4></div>'
            )
        if errors:
            items = "".join(f"<li><code>{_h(e)}</code></li>" for e in errors)
            out.append(
                f'<div class="group fail"><h4>{_badge("fail")} collection errors: scenario modules that could not load</h4><ul>{items}</ul></div>'
            )
        if fails:
            out.append('<h3 id="rfc-failures">RFC failures</h3>')
            out += self.failure_groups(fails, "fail")
        if own:
            out.append('<h3 id="self-check-failures">Testbed self-check failures (pwh\'s own fakes: no verdict can be trusted)</h3>')
            out += self.failure_groups(own, "self-fail")
        if differs:
            out.append('<h3 id="divergences">Profile divergences (RFC pass; pwh\'s reading differs)</h3>')
            out += self.divergence_groups(differs)
        out.append("</section>")
        return out

    def failure_groups(self, chosen: list[tuple[int, dict[str, Any]]], kind: str) -> list[str]:
        out = []
        for row, members in self.groups(chosen):
            first = members[0][1]
            word = _scenario_kind(first)[1]
            entries = [
                (
                    f"sc-{i}",
                    x.get("params", ""),
                    {c: str(x.get(c, "?" if c != "clause" else "")) for c in ("expected", "seen", "clause")}
                    | {"difference": difference_line(x)},
                )
                for i, x in members
            ]
            label = f"steps of [{first['params']}]" if first.get("params") else "steps"
            facts = _facts(entries, ("expected", "seen", "difference", "clause"), kind, word)
            parts = [
                f'<div class="group {kind}{_split(facts)}" id="f-{members[0][0]}">',
                self.title(row, first, kind, word, len(members)),
                facts,
                self.steps(first, open_=True, label=label),
            ]
            if len(members) > 1:
                parts.append(self.other_steps(members[1:], "steps of the other failing examples"))
            parts.append("</div>")
            out.append("".join(parts))
        return out

    def other_steps(self, members: list[tuple[int, dict[str, Any]]], label: str) -> str:
        inner = "".join(
            f'<div class="example-steps"><h5>[{_h(x.get("params", ""))}]</h5>{self.steps(x, open_=True)}</div>' for _, x in members
        )
        return f'<details class="steps others"><summary>{_h(label)} ({len(members)})</summary>{inner}</details>'

    def divergence_groups(self, chosen: list[tuple[int, dict[str, Any]]]) -> list[str]:
        out = []
        for row, members in self.groups(chosen):
            first = members[0][1]
            entries = [
                (
                    f"sc-{i}" if n == 0 else "",
                    x.get("params", ""),
                    {c: str(d.get(c, "")) for c in ("expected", "seen", "reading")} | {"difference": difference_line(d)},
                )
                for i, x in members
                for n, d in enumerate(x.get("divergences", []) or [{}])
            ]
            steps = self.steps(first, open_=False) if len(members) == 1 else self.other_steps(members, "steps of each example")
            facts = _facts(entries, ("expected", "seen", "difference", "reading"), "divergence", "differs", wide=True)
            out.append(
                f'<div class="group divergence" id="f-{members[0][0]}">'
                f"{self.title(row, first, 'divergence', 'differs', len(members))}{facts}{steps}</div>"
            )
        return out

    def skips(self) -> list[str]:
        skipped = [(i, x) for i, x in self.indexed if _scenario_kind(x)[0] == "skip"]
        out = ['<section id="skipped"><h2>Skipped</h2>']
        if not skipped:
            out.append('<p class="muted">No scenario was skipped.</p></section>')
            return out
        out.append(f'<p class="muted">{len(skipped)} scenario(s) the SUT could not express, by reason</p>')
        by_reason: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        order = {r: n for n, r in enumerate(RULE_ORDER)}
        for i, x in sorted(skipped, key=lambda ix: (order.get(_row_of(ix[1]), len(order)), ix[0])):
            by_reason.setdefault(str(x.get("reason", "skipped")), []).append((i, x))
        for reason, members in by_reason.items():
            items = "".join(f'<li id="sc-{i}">{self.line_item(x)}</li>' for i, x in members)
            out.append(
                f'<div class="group skip"><h4>{_badge("skip")} {_h(reason)} <span class="muted">({len(members)})</span></h4>'
                f'<ul class="scenarios">{items}</ul></div>'
            )
        out.append("</section>")
        return out

    def line_item(self, x: dict[str, Any]) -> str:
        """One scenario on one line (its status, row, name, example, place), its steps behind it."""
        kind, word = _scenario_kind(x)
        row = _row_of(x)
        params = f' <span class="params">[{_h(x["params"])}]</span>' if x.get("params") else ""
        head = (
            f'{_badge(kind, word)} {_h(row)} <span class="name">{_h(x.get("scenario", x["id"]))}</span>{params} '
            f"{self.where(x.get('feature', '?'), x.get('line', '?'))}"
        )
        steps = x.get("steps")
        if not isinstance(steps, list) or not steps:
            return head + ' <span class="note">(steps not recorded)</span>'
        return self.steps(x, open_=False, head=head)

    def passing(self) -> list[str]:
        out = ['<section id="by-row"><h2>Passing scenarios, by row</h2><div class="rows">']
        for rule in rules_in(self.v):
            mine = [(i, x) for i, x in self.indexed if _row_of(x) == rule.id]
            shown = [(i, x) for i, x in mine if _scenario_kind(x)[0] in ("pass", "self-check")]
            passed = sum(1 for _, x in shown if _scenario_kind(x)[0] == "pass")
            own = len(shown) - passed
            elsewhere = len(mine) - len(shown)
            counts = [f"{passed} passing"] + ([f"{own} testbed self-check(s)"] if own else [])
            if elsewhere:
                counts.append(f"{elsewhere} listed above")
            r = self.v["rows"][rule.id]
            summary = (
                f'{_badge(r["rfc"])} <strong>{_h(rule.id)}</strong> {_h(rule.case)} — <span class="muted">{_h(", ".join(counts))}</span>'
            )
            items = "".join(f'<li id="sc-{i}">{self.line_item(x)}</li>' for i, x in shown)
            out.append(
                f'<details class="row passing" id="{_h(rule.id.lower())}"><summary>{summary}</summary>'
                + (f'<ul class="scenarios">{items}</ul>' if items else '<p class="note">none</p>')
                + "</details>"
            )
        out.append("</div></section>")
        return out


_LABELS = {"expected": "expected", "seen": "seen", "difference": "differs at", "clause": "clause", "reading": "pwh's reading"}
_LONG = 240  # characters of a value shown before the rest waits behind a click


def _text(value: str, column: str = "") -> str:
    """A value as HTML; a long one shows its start, the whole of it one click away. A clause is
    never folded, nor where two values differ: the words a failure rests on are what a reader
    weighs it by."""
    if len(value) <= _LONG or column in ("clause", "difference"):
        return _h(value)
    return f'<details class="long"><summary>{_h(value[:200])}…</summary>{_h(value)}</details>'


_STEPS_BEFORE = 3  # passed steps shown before the one that failed or skipped; earlier ones fold


def _folded(label: str, steps: list[dict[str, Any]], start: int) -> str:
    items = "".join(_step_html(s) for s in steps)
    return f'<details class="folded"><summary>{_h(label)}</summary><ol class="steps" start="{start}">{items}</ol></details>'


def _step_html(s: dict[str, Any]) -> str:
    status = str(s.get("status", "not run"))
    line = f' <span class="line">L{s["line"]}</span>' if isinstance(s.get("line"), int) else ""
    return (
        f'<li class="step {_h(status.replace(" ", "-"))}"><span class="state">{_h(_STEP_WORD.get(status, status))}</span> '
        f'<span class="kw">{_h(s.get("keyword", ""))}</span> {_h(s.get("text", ""))}{line}</li>'
    )


def _id_attr(ident: str) -> str:
    return f' id="{_h(ident)}"' if ident else ""


def _split(facts: str) -> str:
    """A failure whose facts are narrow (a list, or a table of the example and one value) sits
    beside its open steps, in two columns; a wider table takes the whole width, above them."""
    return "" if facts.count("<th>") > 2 else " split"


def _facts(entries: list[tuple[str, str, dict[str, str]]], columns: tuple[str, ...], kind: str, word: str, *, wide: bool = False) -> str:
    """What one failing scenario (or each example of an outline) expected and saw. ``entries``:
    (the scenario's anchor, or "" for its second and later divergences; its example; its values).
    A value every entry shares is said once; the rest go in a table, a line per entry. ``wide``:
    the facts take the page's width (their pairs side by side), not a column beside the steps."""
    examples = sum(1 for ident, _, _ in entries if ident)
    if len(entries) == 1:
        ident, params, values = entries[0]
        items = ([("example", _h(params))] if params else []) + [(_LABELS[c], _text(values[c], c)) for c in columns if values[c]]
        body = "".join(f"<dt>{_h(k)}</dt><dd>{v}</dd>" for k, v in items)
        return f'<dl class="why scenario {kind}{" inline" if wide else ""}"{_id_attr(ident)}>{body}</dl>'
    shared = [c for c in columns if len({e[2][c] for e in entries}) == 1]
    varying = [c for c in columns if c not in shared]
    every = " (every example)" if examples > 1 else ""
    said = [(_LABELS[c] + every, entries[0][2][c], c) for c in shared if entries[0][2][c]]
    with_params = any(params for _, params, _ in entries)
    narrow = not wide and (with_params + len(varying)) <= 2  # it will sit in the column beside the steps
    out = ""
    if said:
        out = (
            f'<dl class="why{"" if narrow else " inline"}">'
            + "".join(f"<dt>{_h(k)}</dt><dd>{_text(v, c)}</dd>" for k, v, c in said)
            + "</dl>"
        )
    if not varying:
        lis = "".join(
            f'<li class="scenario {kind}"{_id_attr(ident)}>{_badge(kind, word)} {_h(params or "(no example)")}</li>'
            for ident, params, _ in entries
            if ident
        )
        return f'<div class="facts">{out}<ul class="examples">{lis}</ul></div>'
    head = ("<th>example</th>" if with_params else "") + "".join(f"<th>{_h(_LABELS[c])}</th>" for c in varying)
    rows = "".join(
        f'<tr class="scenario {kind}"{_id_attr(ident)}>'
        + (f'<td class="ex">{_badge(kind, word) + " " + _h(params) if ident else ""}</td>' if with_params else "")
        + "".join(f"<td>{_text(values[c], c)}</td>" for c in varying)
        + "</tr>"
        for ident, params, values in entries
    )
    return f'<div class="facts">{out}<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'


def _coverage_html(cov: dict[str, Any]) -> list[str]:
    rows = "".join(
        f'<tr><td><code>{_h(module)}</code></td><td class="num">{m["branches"]}</td><td class="num">{m["covered_branches"]}</td>'
        f'<td class="num">{_h(m["branch_percent"])}</td><td>{_h(ranges(m["missing_lines"]) or "—")}</td></tr>'
        for module, m in sorted(cov["modules"].items())
    )
    out = [
        f'<section id="coverage"><h2>Coverage of the reference by the matrix alone: {_h(cov["branch_percent"])}% of branches</h2>',
        '<table><thead><tr><th>module</th><th class="num">branches</th><th class="num">covered</th><th class="num">%</th>'
        f"<th>uncovered lines</th></tr></thead><tbody>{rows}</tbody></table>",
    ]
    if cov.get("outside_rfc"):
        items = "".join(f"<li><code>{_h(k)}</code>: {_h(v)}</li>" for k, v in sorted(cov["outside_rfc"].items()))
        out.append(f"<details><summary>Uncovered branches outside the RFC (named, not scenario-tested)</summary><ul>{items}</ul></details>")
    out.append("</section>")
    return out
