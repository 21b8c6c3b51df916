"""Known divergences: every scenario an implementation failed or could not express, from a gate run.

``observed_divergences(verdict)`` turns a ``pwh gate --json`` verdict into one entry per failed
or skipped scenario: its row, the rule the row stands for (``pwh._rules``), the scenario, the
status, and what the implementation did (the gate's "seen" text, or the skip reason). The
entries carry no timestamps, paths or line numbers and are sorted by row, scenario and
parameters, so the same run always renders the same bytes: a committed file then shows, in a
plain diff, what a new release of the implementation fixed or broke.

Regenerate a committed file from a verdict with::

    pwh gate --sut loopx --json verdict.json
    python -m pwh._divergences verdict.json pwh/divergences/loopx-2.1.1.json
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._rules import RULE_IDS, RULES_BY_ID

SCHEMA_VERSION = "pwh_known_divergences_v0"
_STATUS = {"failed": "fail", "skipped": "skip"}


def observed_divergences(verdict: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per failed or skipped scenario of ``verdict``, in a stable order."""
    entries = []
    for scenario in verdict.get("scenarios", []):
        status = _STATUS.get(scenario.get("outcome", ""))
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
            entry["expected"] = scenario.get("expected", "")
            entry["loopx"] = scenario.get("seen", "")
        else:
            entry["loopx"] = scenario.get("reason", "")
        entries.append(entry)
    return sorted(entries, key=_order)


def _order(entry: Mapping[str, Any]) -> tuple[int, str, str]:
    row = entry["row"]
    return (RULE_IDS.index(row) if row in RULE_IDS else len(RULE_IDS), entry["scenario"]["name"], entry["scenario"]["params"])


def render(divergences: Sequence[Mapping[str, Any]], *, sut: str, sut_version: str) -> str:
    """The committed file's text: deterministic JSON, one trailing newline."""
    counts = {s: sum(1 for d in divergences if d["status"] == s) for s in ("fail", "skip")}
    document = {
        "schema_version": SCHEMA_VERSION,
        "sut": sut,
        "sut_version": sut_version,
        "generated_by": f"pwh gate --sut {sut} --json VERDICT; python -m pwh._divergences VERDICT OUT",
        "summary": {"scenarios": len(divergences), **counts},
        "divergences": list(divergences),
    }
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"  # insertion order is fixed above


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pwh._divergences VERDICT.json [OUT.json]``: render the divergences of a verdict."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) not in (1, 2):
        print("usage: python -m pwh._divergences VERDICT.json [OUT.json]", file=sys.stderr)
        return 2
    verdict = json.loads(Path(args[0]).read_text("utf-8"))
    sut = str(verdict.get("sut", ""))
    version = _version_of(sut)
    text = render(observed_divergences(verdict), sut=sut, sut_version=version)
    if len(args) == 2:
        Path(args[1]).parent.mkdir(parents=True, exist_ok=True)
        Path(args[1]).write_text(text, "utf-8")
    else:
        sys.stdout.write(text)
    return 0


def _version_of(sut: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(sut)
    except (metadata.PackageNotFoundError, ValueError):
        return ""


if __name__ == "__main__":
    raise SystemExit(main())
