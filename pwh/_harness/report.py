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
from xml.sax.saxutils import escape, quoteattr

from pwh._harness.rules import RULES

STATUS_MARK = {"pass": "pass", "fail": "FAIL", "skip": "skip", "self-check": "self", "divergence": "differs", "incomplete": "INCOMPLETE"}
VERDICT_WORD = {"pass": "PASS", "fail": "FAIL", "incomplete": "INCOMPLETE", "divergence": "DIVERGENCE"}


def covers_lines(verdict: dict[str, Any]) -> list[str]:
    """What a verdict covers, in words: its rows, the features' digest, pwh's version and commit,
    the SUT's version, when it ran; and, first, PARTIAL when it does not cover the whole matrix."""
    run = verdict.get("run")
    if not isinstance(run, dict):
        return []
    rows = "all rows" if run.get("rows") == "all" else "rows " + ", ".join(run.get("rows") or [])
    commit = f" @ {run['pwh_commit'][:12]}" if run.get("pwh_commit") else ""
    digest = run.get("features_digest") or "?"
    sut = verdict["sut"] + (f" {run['sut_version']}" if run.get("sut_version") else "")
    when = f" · {run['generated_at']}" if run.get("generated_at") else ""
    lines = [f"covers: {rows} · features {digest[:19]}… · pwh {run.get('pwh_version')}{commit} · SUT {sut}{when}"]
    if run.get("partial"):
        selection = run.get("selection") or {}
        picked = [
            *([f"-k {selection['keyword']!r}"] if selection.get("keyword") else []),
            *([f"-m {selection['tags']!r}"] if selection.get("tags") else []),
            *selection.get("scenarios", [])[:3],
            *(["…"] if len(selection.get("scenarios", [])) > 3 else []),
        ]
        why = (
            "stopped at the first failing scenario"
            if verdict.get("stopped_at_first_failure")
            else f"a scenario selection: {' '.join(picked)}"
            if picked
            else "a row filter"
        )
        lines.insert(0, f"PARTIAL verdict ({why}): it says nothing about the rows or scenarios that did not run")
    return lines


def verdict_table(verdict: dict[str, Any], *, failures: bool = True, rows: Sequence[str] | None = None, covers: bool = True) -> str:
    """The terminal table: row · scenarios · passed · failed · skipped · self-checks · RFC ·
    profile (then, unless ``failures`` is false, each RFC failure and each profile divergence).
    ``rows``: the run was limited to these rows, and the table says so in its title and summary.
    ``covers``: a line saying what the verdict covers (left out of the README's stable copy)."""
    only = f" (rows {', '.join(rows)} only)" if rows else ""
    lines = [f"pwh gate — SUT: {verdict['sut']}{only}", *(covers_lines(verdict) if covers else []), ""]
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
    return lines


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
    through_turn = [rule.id for rule in RULES if "turn" in verdict["rows"].get(rule.id, {}).get("seams", ())]
    if through_turn:
        lines.append(f"judged through the SUT's own turn seam (seed 003's primary-Turn code): {', '.join(through_turn)}")
    return lines


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
    return f"expected {s.get('expected', '?')}; seen {s.get('seen', '?')}{clause}".replace("\n", " ")


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
        for step in steps.get(x["id"], []):
            result: dict[str, Any] = {"status": step["status"]}
            if skipped and step["status"] != "passed":
                result["status"] = "skipped"
                if step["status"] == "failed":
                    result["error_message"] = x.get("reason", "skipped")
            elif step["status"] == "failed":
                result["error_message"] = _one_line(x)
            element_steps.append({"keyword": step["keyword"] + " ", "name": step["name"], "line": step["line"], "result": result})
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
        f"# pwh gate report — {verdict['sut']}",
        "",
        f"RFC *Provider-Neutral Post-Writeback Capability Hooks v0*, Slice 2 validation matrix and seed-003 rules. "
        f"pwh {verdict['pwh_version']}.{selected}",
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
            f"| [{rule.id}](#{rule.id.lower()}) | {_md(rule.case)} | {_md(rule.required)} | {', '.join(r.get('seams', ()))} | {r['scenarios']} | "
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
            where = f"`{x.get('feature', '?')}:{x.get('line', '?')}`"
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
            f"| `{module}` | {m['branches']} | {m['covered_branches']} | {m['branch_percent']} | {_ranges(m['missing_lines']) or '—'} |"
        )
    if cov.get("outside_rfc"):
        lines += ["", "Uncovered branches outside the RFC (named, not scenario-tested):", ""]
        lines += [f"- `{k}`: {_md(v)}" for k, v in sorted(cov["outside_rfc"].items())]
    return "\n".join(lines)


def html_report(verdict: dict[str, Any]) -> str:
    """The Markdown report's content as one self-contained HTML page (no external assets)."""
    body: list[str] = []
    table: list[str] = []
    for line in markdown_report(verdict).splitlines():
        if line.startswith("|"):
            if not line.startswith("|---"):
                cells = [c.strip().replace("\\|", "|") for c in line.strip().strip("|").split(" | ")]
                tag = "th" if not table else "td"
                table.append("<tr>" + "".join(f"<{tag}>{_inline(c)}</{tag}>" for c in cells) + "</tr>")
            continue
        if table:
            body.append("<table>" + "".join(table) + "</table>")
            table = []
        body.append(_md_line_to_html(line))
    if table:
        body.append("<table>" + "".join(table) + "</table>")
    css = (
        "body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem;vertical-align:top}"
        "code{background:#f4f4f4}ul{margin:.2rem 0}"
    )
    title = html.escape(f"pwh gate report — {verdict['sut']}")
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{css}</style></head><body>\n" + "\n".join(b for b in body if b) + "\n</body></html>\n"
    )


def _inline(text: str) -> str:
    """Markdown links, code and emphasis in a cell or line, as HTML."""
    import re

    esc = html.escape(text)
    esc = re.sub(r"\[([^\]]+)\]\(#([^)]+)\)", r'<a href="#\2">\1</a>', esc)
    esc = re.sub(r"`([^`]+)`", r"<code>\1</code>", esc)
    esc = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", esc)
    return re.sub(r"\*([^*]+)\*", r"<em>\1</em>", esc)


def _md_line_to_html(line: str) -> str:
    if line.startswith("## "):
        ident = line[3:].split(" ")[0].lower().rstrip(":")
        return f'<h2 id="{html.escape(ident)}">{_inline(line[3:])}</h2>'
    if line.startswith("# "):
        return f"<h1>{_inline(line[2:])}</h1>"
    if line.startswith("  - "):
        return f"<ul><ul><li>{_inline(line[4:])}</li></ul></ul>"
    if line.startswith("- "):
        return f"<ul><li>{_inline(line[2:])}</li></ul>"
    return f"<p>{_inline(line)}</p>" if line else ""


def _status(x: dict[str, Any]) -> str:
    return {"passed": "pass", "failed": "fail", "skipped": "skip"}.get(x.get("outcome", ""), "?")


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


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
