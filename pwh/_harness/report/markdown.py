"""The Markdown report to attach to the RFC: the verdicts, the row table, then each row's
scenarios with their failures, skips and profile divergences; every string from the verdict made
safe for Markdown."""

from __future__ import annotations

from typing import Any

from pwh._harness.report._common import STATUS_MARK, VERDICT_WORD, covers_lines, difference_line, ranges, rules_in
from pwh._harness.safe_text import for_markdown, for_markdown_code


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
        f"({s['passed']} {'row passes' if s['passed'] == 1 else 'rows pass'}, {s['failed']} fail, {s['skipped']} skipped, {s['self_check_rows']} testbed only; "
        f"{s['scenarios']} scenarios, {s['sut_scenarios']} of them judged the SUT, {s['divergences']} differ from pwh's reading only).",
        "",
        "The RFC verdict comes from checks a clause of the RFC or seed 003 requires; the profile verdict adds pwh's own "
        "readings where the documents are silent (exact code names, JSON paths, …). A scenario that only exercised pwh's "
        "fakes is a testbed self-check, listed apart and never counted as a pass of the SUT.",
        "",
        "| row | case | required outcome | seam | scenarios | passed | failed | skipped | self-checks | RFC | profile |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for rule in rules_in(verdict):
        r = verdict["rows"][rule.id]
        out.append(
            f"| [{rule.id}](#{rule.id.lower()}) | {_md(rule.case)} | {_md(rule.required)} | {_md(', '.join(r.get('seams', ())))} | {r['scenarios']} | "
            f"{r['passed']} | {r['failed']} | {r['skipped']} | {r['self_checks']['scenarios']} | {STATUS_MARK[r['rfc']]} | {STATUS_MARK[r['profile']]} |"
        )
    if "coverage" in verdict:
        out += ["", _coverage_md(verdict["coverage"])]
    for rule in rules_in(verdict):
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
                if difference_line(x):
                    out.append(f"  - differs at: {_md(difference_line(x))}")
            elif x.get("outcome") == "skipped":
                out.append(f"  - skipped: {_md(x.get('reason', ''))}")
            for d in x.get("divergences", []):
                out.append(f"  - profile divergence: expected {_md(d['expected'])}, saw {_md(d['seen'])} ({_md(d['reading'])})")
                if difference_line(d):
                    out.append(f"    - differs at: {_md(difference_line(d))}")
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
            f"| `{for_markdown_code(module)}` | {m['branches']} | {m['covered_branches']} | {m['branch_percent']} | {ranges(m['missing_lines']) or '—'} |"
        )
    if cov.get("outside_rfc"):
        lines += ["", "Uncovered branches outside the RFC (named, not scenario-tested):", ""]
        lines += [f"- `{for_markdown_code(k)}`: {_md(v)}" for k, v in sorted(cov["outside_rfc"].items())]
    return "\n".join(lines)


def _status(x: dict[str, Any]) -> str:
    return {"passed": "pass", "failed": "fail", "skipped": "skip"}.get(x.get("outcome", ""), "?")


def _md(text: Any) -> str:
    return for_markdown(text)
