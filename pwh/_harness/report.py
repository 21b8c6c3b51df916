"""Everything a gate run is shown as: the terminal verdict table, JUnit XML and Cucumber JSON for
CI dashboards, and a Markdown or single-file HTML report to attach to the RFC.

All of it is built from the verdict alone, deterministically: no times, no absolute paths, no
host names, sorted where order is not meaningful.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import quote
from xml.sax.saxutils import escape as _xml_escape
from xml.sax.saxutils import quoteattr as _xml_quoteattr

from pwh._harness.rules import RULES
from pwh._harness.safe_text import for_markdown, for_markdown_code, for_terminal, for_xml

STATUS_MARK = {"pass": "pass", "fail": "FAIL", "skip": "skip", "self-check": "self", "divergence": "differs", "incomplete": "INCOMPLETE"}
VERDICT_WORD = {"pass": "PASS", "fail": "FAIL", "incomplete": "INCOMPLETE", "divergence": "DIVERGENCE"}


def covers_facts(verdict: dict[str, Any]) -> dict[str, Any] | None:
    """What a verdict covers, as fields (``None`` for a verdict written before it said so): the
    rows run, the SUT and its version, pwh's version and commit, the features' digest, when it ran,
    and ``partial``: why it does not cover the whole matrix (``None`` when it does)."""
    run = verdict.get("run")
    if not isinstance(run, dict):
        return None
    partial = None
    if run.get("partial"):
        selection = run.get("selection") or {}
        picked = [
            *([f"-k {selection['keyword']!r}"] if selection.get("keyword") else []),
            *([f"-m {selection['tags']!r}"] if selection.get("tags") else []),
            *selection.get("scenarios", [])[:3],
            *(["…"] if len(selection.get("scenarios", [])) > 3 else []),
        ]
        partial = (
            "stopped at the first failing scenario"
            if verdict.get("stopped_at_first_failure")
            else f"a scenario selection: {' '.join(picked)}"
            if picked
            else "a row filter"
        )
    return {
        "rows": "all rows" if run.get("rows") == "all" else "rows " + ", ".join(run.get("rows") or []),
        "sut": verdict["sut"] + (f" {run['sut_version']}" if run.get("sut_version") else ""),
        "pwh_version": run.get("pwh_version"),
        "pwh_commit": run.get("pwh_commit"),
        "features_digest": run.get("features_digest"),
        "generated_at": run.get("generated_at"),
        "partial": partial,
    }


PARTIAL_TAIL = "it says nothing about the rows or scenarios that did not run"


def covers_lines(verdict: dict[str, Any]) -> list[str]:
    """What a verdict covers, in words: its rows, the features' digest, pwh's version and commit,
    the SUT's version, when it ran; and, first, PARTIAL when it does not cover the whole matrix."""
    facts = covers_facts(verdict)
    if facts is None:
        return []
    commit = f" @ {facts['pwh_commit'][:12]}" if facts["pwh_commit"] else ""
    digest = facts["features_digest"] or "?"
    when = f" · {facts['generated_at']}" if facts["generated_at"] else ""
    lines = [f"covers: {facts['rows']} · features {digest[:19]}… · pwh {facts['pwh_version']}{commit} · SUT {facts['sut']}{when}"]
    if facts["partial"]:
        lines.insert(0, f"PARTIAL verdict ({facts['partial']}): {PARTIAL_TAIL}")
    return [for_terminal(line) for line in lines]  # every fact comes from the verdict file


def verdict_table(verdict: dict[str, Any], *, failures: bool = True, rows: Sequence[str] | None = None, covers: bool = True) -> str:
    """The terminal table: row · scenarios · passed · failed · skipped · self-checks · RFC ·
    profile (then, unless ``failures`` is false, each RFC failure and each profile divergence).
    ``rows``: the run was limited to these rows, and the table says so in its title and summary.
    ``covers``: a line saying what the verdict covers (left out of the README's stable copy)."""
    only = f" (rows {', '.join(rows)} only)" if rows else ""
    lines = [f"pwh gate — SUT: {for_terminal(verdict['sut'])}{only}", *(covers_lines(verdict) if covers else []), ""]
    header = f"{'row':<6} {'scenarios':>9} {'passed':>6} {'failed':>6} {'skipped':>7} {'self':>4}  {'RFC':<6}  {'profile':<7}  case"
    lines += [header, "-" * len(header)]
    for rule in _rules(verdict):
        row = verdict["rows"][rule.id]
        lines.append(
            f"{rule.id:<6} {row['scenarios']:>9} {row['passed']:>6} {row['failed']:>6} {row['skipped']:>7} "
            f"{row['self_checks']['scenarios']:>4}  {STATUS_MARK[row['rfc']]:<6}  {STATUS_MARK[row['profile']]:<7}  {rule.case[:56]}"
        )
    summary = summary_lines(verdict)
    if rows:
        summary[0] = "these rows only: " + summary[0]
    lines += ["", *summary]
    if "coverage" in verdict:
        lines.append(f"branch coverage of the reference by the matrix alone: {verdict['coverage']['branch_percent']}%")
    if failures:
        lines += detail_lines(verdict)
    return "\n".join(lines) + "\n"


def detail_lines(verdict: dict[str, Any]) -> list[str]:
    """Each RFC failure, testbed self-check failure, profile divergence and skip, by file:line."""
    lines = []
    for failed in _failures(verdict):
        kind = "RFC FAIL " if failed.get("counts_for", "sut") == "sut" else "SELF FAIL"
        lines.append(f"  {kind} {_where(failed)}: {_one_line(failed)}")
    for x in _divergent(verdict):
        for d in x["divergences"]:
            lines.append(
                f"  profile   {_where(x)}: RFC pass, profile divergence: expected {d['expected']}, saw {d['seen']}".replace("\n", " ")
            )
    for x in _skipped(verdict):
        lines.append(f"  skip      {_where(x)}: {x.get('reason', 'skipped')}")
    return [for_terminal(line) for line in lines]  # names, expected/seen and reasons come from files


def summary_lines(verdict: dict[str, Any]) -> list[str]:
    """The two verdicts and the self-checks, in words."""
    s = verdict["summary"]
    own = s["self_checks"]
    lines = [
        f"{s['passed']} rows pass, {s['failed']} fail, {s['skipped']} skipped, {s['self_check_rows']} testbed only — "
        f"verdict: {VERDICT_WORD[s['verdict']]} (RFC); profile: {VERDICT_WORD[s['profile']]}"
        + (f" ({s['divergences']} scenario(s) differ from pwh's reading only)" if s["divergences"] else ""),
        f"testbed self-checks (pwh's own fakes; never a pass of the SUT): {own['scenarios']} scenario(s), "
        f"{own['passed']} passed, {own['failed']} failed",
    ]
    through_turn = turn_judged_rows(verdict)
    if through_turn:
        lines.append(f"judged through the SUT's own turn seam (seed 003's primary-Turn code): {', '.join(through_turn)}")
    return lines


def turn_judged_rows(verdict: dict[str, Any]) -> list[str]:
    """The rows a check judged through the SUT's own turn seam: a scenario of the row counted for
    the SUT, went through that seam (the gate names it only when the adapter offers one and the
    scenario called it) and passed or failed there. A skip judged nothing, so it names no row."""
    judged = {
        tag
        for s in verdict["scenarios"]
        if s.get("counts_for") == "sut" and s.get("seam") == "turn" and s.get("rfc") in ("pass", "fail")
        for tag in s.get("tags", [])
    }
    return [rule.id for rule in RULES if rule.id in verdict["rows"] and rule.id in judged]


def _where(x: dict[str, Any]) -> str:
    params = f" [{x['params']}]" if x.get("params") else ""
    return f"{','.join(x.get('tags', []))} {x.get('feature', '?')}:{x.get('line', '?')} {x.get('scenario', x['id'])}{params}"


def _divergent(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in verdict["scenarios"] if s.get("profile") == "divergence"]


def _skipped(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in verdict["scenarios"] if s.get("outcome") == "skipped"]


def _rules(verdict: dict[str, Any]) -> list[Any]:
    """The rows this verdict covers (all of them, unless the gate was limited with --rows)."""
    return [r for r in RULES if r.id in verdict["rows"]]


def _failures(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in verdict["scenarios"] if s.get("outcome") == "failed"]


def _one_line(s: dict[str, Any]) -> str:
    clause = f" [{s['clause']}]" if s.get("clause") else ""
    return for_terminal(f"expected {s.get('expected', '?')}; seen {s.get('seen', '?')}{clause}".replace("\n", " "))


def verdict_json(verdict: dict[str, Any]) -> str:
    return json.dumps(verdict, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def junit_xml(verdict: dict[str, Any]) -> str:
    """One testsuite per row with the scenarios that counted for the SUT (classname = row id),
    and one ``testbed self-checks`` suite for those that judged pwh's fakes only. A testcase
    fails on an RFC failure; a profile divergence is a property and a line of system-out."""
    out = ['<?xml version="1.0" encoding="utf-8"?>']
    s = verdict["summary"]
    sut = [x for x in verdict["scenarios"] if x.get("counts_for", "sut") == "sut"]
    own = [x for x in verdict["scenarios"] if x.get("counts_for") == "testbed"]
    failures = sum(1 for x in verdict["scenarios"] if x.get("outcome") == "failed")
    skipped = sum(1 for x in verdict["scenarios"] if x.get("outcome") == "skipped")
    out.append(
        f'<testsuites name={quoteattr("pwh gate: " + verdict["sut"])} tests="{s["scenarios"]}" '
        f'failures="{failures}" skipped="{skipped}" errors="0">'
    )
    out.append("  <properties>")
    out.append(f'    <property name="rfc" value={quoteattr(s["verdict"])}/>')
    out.append(f'    <property name="profile" value={quoteattr(s["profile"])}/>')
    out.append("  </properties>")
    for rule in _rules(verdict):
        mine = [x for x in sut if rule.id in x.get("tags", [])]
        row = verdict["rows"][rule.id]
        out += _junit_suite(rule.id, mine, row)
    if own:
        out += _junit_suite("testbed self-checks", own, None)
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


def _junit_suite(name: str, cases: list[dict[str, Any]], row: dict[str, Any] | None) -> list[str]:
    f = sum(1 for x in cases if x.get("outcome") == "failed")
    k = sum(1 for x in cases if x.get("outcome") == "skipped")
    out = [f'  <testsuite name={quoteattr(name)} tests="{len(cases)}" failures="{f}" skipped="{k}" errors="0">']
    if row is not None:
        out += [
            "    <properties>",
            f'      <property name="rfc" value={quoteattr(row["rfc"])}/>',
            f'      <property name="profile" value={quoteattr(row["profile"])}/>',
            "    </properties>",
        ]
    for x in cases:
        classname = name if row is not None else ",".join(x.get("tags", [])) + ".self-check"
        title = x.get("scenario", x["id"]) + (f" [{x['params']}]" if x.get("params") else "")
        out.append(
            f'    <testcase classname={quoteattr(classname)} name={quoteattr(title)} file={quoteattr(x.get("feature", ""))} line="{x.get("line", 0)}">'
        )
        if x.get("outcome") == "failed":
            out.append(f"      <failure message={quoteattr(_one_line(x))}>{escape(x.get('failed_step', ''))}</failure>")
        elif x.get("outcome") == "skipped":
            out.append(f"      <skipped message={quoteattr(x.get('reason', 'skipped'))}/>")
        if x.get("divergences"):
            out.append('      <properties><property name="profile" value="divergence"/></properties>')
            text = "\n".join(f"profile divergence: expected {d['expected']}, saw {d['seen']} ({d['reading']})" for d in x["divergences"])
            out.append(f"      <system-out>{escape(text)}</system-out>")
        out.append("    </testcase>")
    if row is not None and row["scenarios"] == 0:
        out.append(
            f'    <testcase classname={quoteattr(name)} name="(no scenario)"><failure message="the row has no scenario"/></testcase>'
        )
    out.append("  </testsuite>")
    return out


def cucumber_json(verdict: dict[str, Any], steps: dict[str, list[dict[str, Any]]]) -> str:
    """Cucumber JSON (the format CI dashboards read): features → scenarios → steps, with tags. A
    skipped scenario's steps are ``skipped`` (the step that found the case inexpressible carries
    the reason); the two verdicts and any profile divergence are in the scenario's description."""
    features: dict[str, dict[str, Any]] = {}
    for x in verdict["scenarios"]:
        uri = x.get("feature", "unknown.feature")
        feature = features.setdefault(
            uri,
            {
                "uri": uri,
                "id": uri.rsplit("/", 1)[-1].removesuffix(".feature"),
                "keyword": "Feature",
                "name": x.get("feature_name", uri),
                "line": 1,
                "description": "",
                "tags": [],
                "elements": [],
            },
        )
        skipped = x.get("outcome") == "skipped"
        element_steps = []
        for step in steps.get(x["id"], x.get("steps", [])):
            # Cucumber has no "not run": a step after a failure or a skip is skipped there.
            result: dict[str, Any] = {"status": "skipped" if step["status"] == "not run" else step["status"]}
            if skipped and step["status"] != "passed":
                result["status"] = "skipped"
                if step["status"] in ("skipped", "failed"):  # the step that found the case inexpressible
                    result["error_message"] = x.get("reason", "skipped")
            elif step["status"] == "failed":
                result["error_message"] = _one_line(x)
            element_steps.append({"keyword": step["keyword"] + " ", "name": step["text"], "line": step.get("line", 0), "result": result})
        description = x.get("params", "")
        judged = f"RFC {x.get('rfc', '?')}, profile {x.get('profile', '?')}, counts for {x.get('counts_for', 'sut')}"
        notes = [judged] + [f"profile divergence: expected {d['expected']}, saw {d['seen']}" for d in x.get("divergences", [])]
        if skipped:
            notes.append(f"skipped: {x.get('reason', '')}")
        feature["elements"].append(
            {
                "keyword": "Scenario",
                "id": x["id"],
                "name": x.get("scenario", x["id"]),
                "line": x.get("line", 0),
                "description": "\n".join(filter(None, [description, *notes])),
                "type": "scenario",
                "tags": [{"name": "@" + t, "line": max(0, x.get("line", 1) - 1)} for t in x.get("tags", [])],
                "steps": element_steps,
            }
        )
    return json.dumps([features[k] for k in sorted(features)], indent=2, ensure_ascii=False) + "\n"


def markdown_report(verdict: dict[str, Any]) -> str:
    s = verdict["summary"]
    selected = f" Rows run: {', '.join(verdict['selected_rows'])} only." if verdict.get("selected_rows") else ""
    if verdict.get("stopped_at_first_failure"):
        selected += " Stopped at the first failing scenario (-x): the scenarios after it never ran."
    out = [
        f"# pwh gate report — {_md(verdict['sut'])}",
        "",
        f"RFC *Provider-Neutral Post-Writeback Capability Hooks v0*, Slice 2 validation matrix and seed-003 rules. "
        f"pwh {_md(verdict['pwh_version'])}.{_md(selected)}",
        "",
        *[f"*{_md(line)}*" if not line.startswith("PARTIAL") else f"**{_md(line)}**" for line in covers_lines(verdict)],
        "",
        f"**RFC verdict: {VERDICT_WORD[s['verdict']]}** · profile: {VERDICT_WORD[s['profile']]} "
        f"({s['passed']} rows pass, {s['failed']} fail, {s['skipped']} skipped, {s['self_check_rows']} testbed only; "
        f"{s['scenarios']} scenarios, {s['sut_scenarios']} of them judged the SUT, {s['divergences']} differ from pwh's reading only).",
        "",
        "The RFC verdict comes from checks a clause of the RFC or seed 003 requires; the profile verdict adds pwh's own "
        "readings where the documents are silent (exact code names, JSON paths, …). A scenario that only exercised pwh's "
        "fakes is a testbed self-check, listed apart and never counted as a pass of the SUT.",
        "",
        "| row | case | required outcome | seam | scenarios | passed | failed | skipped | self-checks | RFC | profile |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for rule in _rules(verdict):
        r = verdict["rows"][rule.id]
        out.append(
            f"| [{rule.id}](#{rule.id.lower()}) | {_md(rule.case)} | {_md(rule.required)} | {_md(', '.join(r.get('seams', ())))} | {r['scenarios']} | "
            f"{r['passed']} | {r['failed']} | {r['skipped']} | {r['self_checks']['scenarios']} | {STATUS_MARK[r['rfc']]} | {STATUS_MARK[r['profile']]} |"
        )
    if "coverage" in verdict:
        out += ["", _coverage_md(verdict["coverage"])]
    for rule in _rules(verdict):
        out += ["", f"## {rule.id}", "", f"*{_md(rule.case)}* — {_md(rule.required)}", ""]
        mine = [x for x in verdict["scenarios"] if rule.id in x.get("tags", [])]
        if not mine:
            out.append("- **no scenario** (the row fails)")
        for x in mine:
            where = f"`{for_markdown_code(x.get('feature', '?'))}:{x.get('line', '?')}`"
            params = f" [{_md(x['params'])}]" if x.get("params") else ""
            mark = _scenario_mark(x)
            out.append(f"- {mark} — {_md(x.get('scenario', x['id']))}{params} ({where})")
            if x.get("outcome") == "failed":
                out.append(f"  - at: {_md(x.get('failed_step', '?'))}")
                if x.get("clause"):
                    out.append(f"  - clause: {_md(x['clause'])}")
                out.append(f"  - expected: {_md(x.get('expected', '?'))}")
                out.append(f"  - seen: {_md(x.get('seen', '?'))}")
            elif x.get("outcome") == "skipped":
                out.append(f"  - skipped: {_md(x.get('reason', ''))}")
            for d in x.get("divergences", []):
                out.append(f"  - profile divergence: expected {_md(d['expected'])}, saw {_md(d['seen'])} ({_md(d['reading'])})")
    return "\n".join(out) + "\n"


def _scenario_mark(x: dict[str, Any]) -> str:
    if x.get("counts_for") == "testbed":
        return "self-check " + {"pass": "pass", "fail": "FAIL", "skip": "skip"}.get(x.get("rfc", ""), "?")
    if x.get("profile") == "divergence":
        return "RFC pass, profile divergence"
    return STATUS_MARK.get(_status(x), "?")


def _coverage_md(cov: dict[str, Any]) -> str:
    lines = [
        f"## Coverage of the reference by the matrix alone: {cov['branch_percent']}% of branches",
        "",
        "| module | branches | covered | % | uncovered lines |",
        "|---|---:|---:|---:|---|",
    ]
    for module, m in sorted(cov["modules"].items()):
        lines.append(
            f"| `{for_markdown_code(module)}` | {m['branches']} | {m['covered_branches']} | {m['branch_percent']} | {_ranges(m['missing_lines']) or '—'} |"
        )
    if cov.get("outside_rfc"):
        lines += ["", "Uncovered branches outside the RFC (named, not scenario-tested):", ""]
        lines += [f"- `{for_markdown_code(k)}`: {_md(v)}" for k, v in sorted(cov["outside_rfc"].items())]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The HTML report: one self-contained page a maintainer triages from. What the verdict covers,
# the rows, then every failure (RFC first, then testbed self-checks, then profile divergences)
# and every skip; passing scenarios wait in collapsed <details>, one per row. No script, no
# external asset; the same verdict gives the same bytes.
# --------------------------------------------------------------------------------------------

_CSS = (
    "body{font:14px/1.4 system-ui,sans-serif;color:#1f2328;background:#fff;max-width:90rem;margin:1rem auto;padding:0 1rem}"
    "h1{font-size:1.45rem;margin:.2rem 0 .4rem}h2{font-size:1.15rem;margin:1.1rem 0 .4rem;padding-bottom:.1rem;"
    "border-bottom:1px solid #d0d7de}h3{font-size:1rem;margin:.7rem 0 .3rem}h4{font-size:14px;font-weight:600;margin:0 0 .2rem}"
    "p{margin:.25rem 0}a{color:#0550ae}code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}"
    "table{border-collapse:collapse;font-size:12.5px;margin:.2rem 0}"
    "th,td{border:1px solid #d0d7de;padding:1px 6px;text-align:left;vertical-align:top}th{background:#f6f8fa}"
    ".num{text-align:right;font-variant-numeric:tabular-nums}"
    ".status{font-weight:600;white-space:nowrap}"
    ".status.fail{color:#b3001b;font-weight:800}"
    ".status.divergence{color:#9a6700;font-weight:700}"
    ".status.skip{color:#6e7781;font-weight:400}"
    ".status.pass{color:#1a7f37;font-weight:600}"
    ".status.self-check{color:#7a7fa8;font-weight:400;font-style:italic}"
    ".status.self-fail{color:#6639ba;font-weight:800;font-style:italic}"
    ".status.incomplete{color:#57606a;font-weight:800}"
    ".banner{padding:.45rem .8rem;margin:.5rem 0;font-size:15px;border:2px solid}"
    ".banner.partial{background:#fff8c5;border-color:#9a6700;color:#4d2d00}"
    ".verdict{font-size:16px}dl.covers{display:grid;grid-template-columns:max-content 1fr;gap:0 1rem;margin:.3rem 0}"
    "dl.covers dt{font-weight:600;color:#57606a}dl.covers dd{margin:0}"
    ".muted,.note{color:#57606a}.note{font-size:13px}"
    ".group{border-left:4px solid #d0d7de;padding:.1rem .6rem;margin:.3rem 0}"
    ".group.fail{border-color:#b3001b}.group.self-fail{border-color:#6639ba}"
    ".group.divergence{border-color:#d4a72c}.group.skip{border-color:#afb8c1}"
    ".group.split{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);grid-template-rows:auto 1fr;column-gap:1.2rem;"
    "align-items:start}.group.split>h4{grid-area:1/1}.group.split>:nth-child(2){grid-area:2/1}"
    ".group.split>:nth-child(3){grid-area:1/2/3/3}.group.split>:nth-child(4){grid-column:1/-1}"
    ".group table{width:100%}.group td.ex{max-width:18rem}.group td,.group dd{overflow-wrap:anywhere}#rows td:first-child,#rows td.seam{white-space:nowrap}"
    "dl.why{display:grid;grid-template-columns:max-content 1fr;gap:0 .8rem;margin:.1rem 0;font-size:13px}"
    "dl.why.inline{grid-template-columns:repeat(3,max-content minmax(0,1fr))}"
    "dl.why dt{color:#57606a}dl.why dd{margin:0}details.long{display:inline}details.long>summary{display:inline}"
    "ul.examples{list-style:none;padding:0;margin:.1rem 0;display:flex;flex-wrap:wrap;gap:0 1rem;font-size:13px}"
    "details>summary{cursor:pointer}details.steps>summary{font-size:12px;color:#57606a}"
    "ol.steps{margin:.05rem 0 .1rem;padding-left:2.2rem;font-size:12px;line-height:1.25}"
    "details.folded>summary{font-size:11px;color:#8c959f;padding-left:2.2rem}details.folded ol.steps{margin:0}"
    ".step .kw{font-weight:600}.step .state{display:inline-block;min-width:4.2em;font-size:11px;color:#57606a}"
    ".step.passed .state{color:#1a7f37}.step.failed{background:#ffebe9;font-weight:700}"
    ".step.failed .state{color:#b3001b;font-weight:800}.step.skipped{background:#eaeef2}"
    ".step.not-run{color:#8c959f}.step .line{font-size:11px;color:#8c959f}"
    "ul.scenarios{list-style:none;margin:.1rem 0 .3rem;padding-left:1rem;font-size:12.5px}ul.scenarios>li{margin:0}"
    "#by-row .rows{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));column-gap:1.5rem}#by-row details[open]{grid-column:1/-1}"
    "details.row{margin:.1rem 0}details.row>summary{padding:1px 0}.example-steps h5{font-size:12px;margin:.3rem 0 0}"
)

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
        f"<style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
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
        for rule in _rules(self.v):
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
        empty = [rule.id for rule in _rules(self.v) if self.v["rows"][rule.id]["scenarios"] == 0]
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
                (f"sc-{i}", x.get("params", ""), {c: str(x.get(c, "?" if c != "clause" else "")) for c in ("expected", "seen", "clause")})
                for i, x in members
            ]
            label = f"steps of [{first['params']}]" if first.get("params") else "steps"
            facts = _facts(entries, ("expected", "seen", "clause"), kind, word)
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
                (f"sc-{i}" if n == 0 else "", x.get("params", ""), {c: str(d.get(c, "")) for c in ("expected", "seen", "reading")})
                for i, x in members
                for n, d in enumerate(x.get("divergences", []) or [{}])
            ]
            steps = self.steps(first, open_=False) if len(members) == 1 else self.other_steps(members, "steps of each example")
            facts = _facts(entries, ("expected", "seen", "reading"), "divergence", "differs", wide=True)
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
        for rule in _rules(self.v):
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


_LABELS = {"expected": "expected", "seen": "seen", "clause": "clause", "reading": "pwh's reading"}
_LONG = 240  # characters of a value shown before the rest waits behind a click


def _text(value: str, column: str = "") -> str:
    """A value as HTML; a long one shows its start, the whole of it one click away. A clause is
    never folded: the words a failure rests on are what a reader weighs it by."""
    if len(value) <= _LONG or column == "clause":
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
        f'<td class="num">{_h(m["branch_percent"])}</td><td>{_h(_ranges(m["missing_lines"]) or "—")}</td></tr>'
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


def _status(x: dict[str, Any]) -> str:
    return {"passed": "pass", "failed": "fail", "skipped": "skip"}.get(x.get("outcome", ""), "?")


def _md(text: Any) -> str:
    return for_markdown(text)


def escape(text: Any) -> str:
    """XML character data: markup escaped, and nothing XML 1.0 forbids (a hostile verdict's
    control characters are shown escaped, so the JUnit file still parses)."""
    return _xml_escape(for_xml(text))


def quoteattr(text: Any) -> str:
    """An XML attribute value, quoted, with nothing XML 1.0 forbids."""
    return _xml_quoteattr(for_xml(text))


def _ranges(lines: Iterable[int]) -> str:
    items = sorted(lines)
    out: list[str] = []
    start: int | None = None
    prev = 0
    for n in items:
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = n
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(out)
