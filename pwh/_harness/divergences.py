"""Known divergences: every scenario an implementation failed, could not express, or passed with
a difference from pwh's own reading, from a gate run.

``observed_divergences(verdict)`` turns a ``pwh gate --json`` verdict into one entry per such
scenario: its row, the rule the row stands for (``pwh._harness.rules``), the scenario, the status —
``fail`` (an RFC check failed: a real divergence from the documents), ``profile`` (every RFC check
passed; only pwh's reading where the RFC is silent differs) or ``skip`` (not expressible) — and
what the implementation did (the gate's "seen" text, the skip reason, or each profile divergence). The
entries carry no timestamps, paths or line numbers and are sorted by row, scenario and
parameters, so the same run always renders the same bytes: a committed file then shows, in a
plain diff, what a new release of the implementation fixed or broke.

Regenerate a committed file from a verdict with::

    pwh gate --sut loopx --json verdict.json
    pwh divergences verdict.json pwh/divergences/loopx-2.1.1.json
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pwh._harness.rules import RULE_IDS, RULES_BY_ID

SCHEMA_VERSION = "pwh_known_divergences_v1"
_STATUS = {"failed": "fail", "skipped": "skip"}


def observed_divergences(verdict: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per failed or skipped scenario of ``verdict``, in a stable order."""
    entries = []
    for scenario in verdict.get("scenarios", []):
        if scenario.get("counts_for", "sut") != "sut":
            continue  # a testbed self-check says nothing about the implementation
        status = _STATUS.get(scenario.get("outcome", ""))
        if status is None and scenario.get("profile") == "divergence":
            status = "profile"
        if status is None:
            continue
        row = next((t for t in scenario.get("tags", []) if t in RULES_BY_ID), "untagged")
        rule = RULES_BY_ID.get(row)
        entry: dict[str, Any] = {
            "row": row,
            "rule": f"{rule.case}: {rule.required}" if rule else "",
            "scenario": {"name": scenario.get("scenario", scenario.get("id", "")), "params": scenario.get("params", "")},
            "status": status,
        }
        if status == "fail":
            entry["clause"] = scenario.get("clause", "")
            entry["expected"] = scenario.get("expected", "")
            entry["loopx"] = scenario.get("seen", "")
        elif status == "profile":
            entry["loopx"] = "; ".join(f"expected {d['expected']}, saw {d['seen']}" for d in scenario.get("divergences", []))
            entry["readings"] = sorted({d["reading"] for d in scenario.get("divergences", [])})
        else:
            entry["loopx"] = scenario.get("reason", "")
        entries.append(entry)
    return sorted(entries, key=_order)


_TEXT_FIELDS = ("id", "scenario", "params", "outcome", "profile", "counts_for", "clause", "expected", "seen", "reason")


def shape_problem(verdict: Any) -> str | None:
    """What in a verdict's shape :func:`observed_divergences` cannot read (the field), or None."""
    if not isinstance(verdict, dict) or not isinstance(verdict.get("scenarios"), list):
        return "scenarios is not a list"
    for i, s in enumerate(verdict["scenarios"]):
        if not isinstance(s, dict):
            return f"scenarios[{i}] is not an object"
        bad = next((f for f in _TEXT_FIELDS if f in s and not isinstance(s[f], str)), None)
        if bad:
            return f"scenarios[{i}].{bad} is not a string"
        if not isinstance(s.get("tags", []), list) or not all(isinstance(t, str) for t in s.get("tags", [])):
            return f"scenarios[{i}].tags is not a list of strings"
        found = s.get("divergences", [])
        if not isinstance(found, list) or not all(
            isinstance(d, dict) and all(isinstance(d.get(k), str) for k in ("expected", "seen", "reading")) for d in found
        ):
            return f"scenarios[{i}].divergences is not a list of expected/seen/reading objects"
    return None


def _order(entry: Mapping[str, Any]) -> tuple[int, str, str]:
    row = entry["row"]
    return (RULE_IDS.index(row) if row in RULE_IDS else len(RULE_IDS), entry["scenario"]["name"], entry["scenario"]["params"])


def render(divergences: Sequence[Mapping[str, Any]], *, sut: str, sut_version: str) -> str:
    """The committed file's text: deterministic JSON, one trailing newline."""
    counts = {s: sum(1 for d in divergences if d["status"] == s) for s in ("fail", "profile", "skip")}
    document = {
        "schema_version": SCHEMA_VERSION,
        "sut": sut,
        "sut_version": sut_version,
        "generated_by": f"pwh gate --sut {sut} --json VERDICT; pwh divergences VERDICT OUT",
        "summary": {"scenarios": len(divergences), **counts},
        "divergences": list(divergences),
    }
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"  # insertion order is fixed above


README_BEGIN = "<!-- verdict-table:{sut}:begin (generated by pwh divergences VERDICT OUT --readme FILE.md) -->"
README_END = "<!-- verdict-table:{sut}:end -->"


def readme_block(verdict: Mapping[str, Any]) -> str:
    """The verdict table as a Markdown page shows it (LoopX's: docs/loopx.md), between its generated-block markers."""
    from pwh._harness.report import verdict_table

    sut = str(verdict.get("sut", ""))
    table = verdict_table(dict(verdict), failures=False, covers=False)
    return f"{README_BEGIN.format(sut=sut)}\n```\n{table}```\n{README_END.format(sut=sut)}"


def replace_readme_block(text: str, verdict: Mapping[str, Any]) -> str:
    """``text`` with its generated block for this SUT replaced (the markers must exist)."""
    sut = str(verdict.get("sut", ""))
    begin, end = README_BEGIN.format(sut=sut), README_END.format(sut=sut)
    head, found, rest = text.partition(begin)
    if not found or end not in rest:
        raise ValueError(f"no generated verdict-table block for {sut!r} in the Markdown file")
    return head + readme_block(verdict) + rest.partition(end)[2]
