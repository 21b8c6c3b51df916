"""The terminal verdict table (``pwh gate``, ``pwh report``), its failure lines, and the verdict
as JSON (what ``pwh gate --json`` writes, and every other format can be rendered from again)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pwh._harness.report._common import STATUS_MARK, covers_lines, difference_line, one_line, rules_in, summary_lines
from pwh._harness.safe_text import for_terminal


def verdict_table(verdict: dict[str, Any], *, failures: bool = True, rows: Sequence[str] | None = None, covers: bool = True) -> str:
    """The terminal table: row · scenarios · passed · failed · skipped · self-checks · RFC ·
    profile (then, unless ``failures`` is false, each RFC failure and each profile divergence).
    ``rows``: the run was limited to these rows, and the table says so in its title and summary.
    ``covers``: a line saying what the verdict covers (left out of the README's stable copy)."""
    only = f" (rows {', '.join(rows)} only)" if rows else ""
    lines = [f"pwh gate — SUT: {for_terminal(verdict['sut'])}{only}", *(covers_lines(verdict) if covers else []), ""]
    header = f"{'row':<6} {'scenarios':>9} {'passed':>6} {'failed':>6} {'skipped':>7} {'self':>4}  {'RFC':<6}  {'profile':<7}  case"
    lines += [header, "-" * len(header)]
    for rule in rules_in(verdict):
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
    for failed in (s for s in verdict["scenarios"] if s.get("outcome") == "failed"):
        kind = "RFC FAIL " if failed.get("counts_for", "sut") == "sut" else "SELF FAIL"
        lines.append(f"  {kind} {_where(failed)}: {one_line(failed)}")
    for x in (s for s in verdict["scenarios"] if s.get("profile") == "divergence"):
        for d in x["divergences"]:
            lines.append(
                f"  profile   {_where(x)}: RFC pass, profile divergence: expected {d['expected']}, saw {d['seen']}{_differs(d)}".replace(
                    "\n", " "
                )
            )
    for x in (s for s in verdict["scenarios"] if s.get("outcome") == "skipped"):
        lines.append(f"  skip      {_where(x)}: {x.get('reason', 'skipped')}")
    return [for_terminal(line) for line in lines]  # names, expected/seen and reasons come from files


def _where(x: dict[str, Any]) -> str:
    params = f" [{x['params']}]" if x.get("params") else ""
    return f"{','.join(x.get('tags', []))} {x.get('feature', '?')}:{x.get('line', '?')} {x.get('scenario', x['id'])}{params}"


def verdict_json(verdict: dict[str, Any]) -> str:
    return json.dumps(verdict, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _differs(d: dict[str, Any]) -> str:
    found = difference_line(d)
    return f"; differs at {found}" if found else ""
