"""JUnit XML for CI dashboards: one testsuite per row, one for the testbed self-checks."""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape as _xml_escape
from xml.sax.saxutils import quoteattr as _xml_quoteattr

from pwh._harness.report._common import difference_line, one_line, rules_in
from pwh._harness.safe_text import for_xml


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
    for rule in rules_in(verdict):
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
            out.append(f"      <failure message={quoteattr(one_line(x))}>{escape(x.get('failed_step', ''))}</failure>")
        elif x.get("outcome") == "skipped":
            out.append(f"      <skipped message={quoteattr(x.get('reason', 'skipped'))}/>")
        if x.get("divergences"):
            out.append('      <properties><property name="profile" value="divergence"/></properties>')
            text = "\n".join(
                f"profile divergence: expected {d['expected']}, saw {d['seen']} ({d['reading']})"
                + (f"; differs at {difference_line(d)}" if difference_line(d) else "")
                for d in x["divergences"]
            )
            out.append(f"      <system-out>{escape(text)}</system-out>")
        out.append("    </testcase>")
    if row is not None and row["scenarios"] == 0:
        out.append(
            f'    <testcase classname={quoteattr(name)} name="(no scenario)"><failure message="the row has no scenario"/></testcase>'
        )
    out.append("  </testsuite>")
    return out


def escape(text: Any) -> str:
    """XML character data: markup escaped, and nothing XML 1.0 forbids (a hostile verdict's
    control characters are shown escaped, so the JUnit file still parses)."""
    return _xml_escape(for_xml(text))


def quoteattr(text: Any) -> str:
    """An XML attribute value, quoted, with nothing XML 1.0 forbids."""
    return _xml_quoteattr(for_xml(text))
