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
    ``covers``: a line saying what the verdict covers (left out of the stable copy docs/loopx.md keeps)."""
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
    coverage = []
    if "coverage" in verdict:
        coverage.append(f"branch coverage of the reference by the matrix alone: {verdict['coverage']['branch_percent']}%")
    if not failures:  # the stable copy a document keeps (pwh divergences --readme)
        return "\n".join([*lines, "", *summary, *coverage]) + "\n"
    # In a terminal the verdict is what must stay on screen: the failures (capped per row; every
    # one of them is in the --json and --report files) come first, the one-line verdict last.
    details = detail_lines(verdict, per_row=PER_ROW)
    lines += ["", *details] if details else []
    lines += ["", *coverage, *summary[1:], summary[0]]
    return "\n".join(lines) + "\n"


PER_ROW = 3  # lines of each kind (RFC failures, self-check failures, divergences) a row shows in a terminal


def detail_lines(verdict: dict[str, Any], *, per_row: int | None = None) -> list[str]:
    """Each RFC failure, testbed self-check failure and profile divergence by file:line, and the
    skips grouped by reason. ``per_row``: at most that many lines of each kind per row, then one
    line saying how many more (a whole run of a failing SUT is hundreds of lines otherwise)."""
    failed = [s for s in verdict["scenarios"] if s.get("outcome") == "failed"]
    rfc = [(s, f"  RFC FAIL  {_where(s)}: {one_line(s)}") for s in failed if s.get("counts_for", "sut") == "sut"]
    own = [(s, f"  SELF FAIL {_where(s)}: {one_line(s)}") for s in failed if s.get("counts_for", "sut") != "sut"]
    differs = [
        (x, f"  profile   {_where(x)}: RFC pass, profile divergence: expected {d['expected']}, saw {d['seen']}{_differs(d)}")
        for x in verdict["scenarios"]
        if x.get("profile") == "divergence"
        for d in x["divergences"]
    ]
    lines: list[str] = []
    for title, entries in (("RFC failures", rfc), ("testbed self-check failures", own), ("profile divergences", differs)):
        if entries:
            lines.append(f"{title} ({len(entries)}){_cap_note(per_row)}:")
            lines += _capped(entries, per_row)
    skipped = [s for s in verdict["scenarios"] if s.get("outcome") == "skipped"]
    if skipped:
        lines.append(f"skipped ({len(skipped)}), by reason:")
        by_reason: dict[str, list[dict[str, Any]]] = {}
        for s in skipped:
            by_reason.setdefault(str(s.get("reason", "skipped")), []).append(s)
        for reason, members in by_reason.items():
            if len(members) == 1:
                lines.append(f"  skip      {_where(members[0])}: {reason}")
            else:
                rows = sorted({t for s in members for t in s.get("tags", [])})
                lines.append(f"  skip      {len(members)} scenarios in {', '.join(rows)}: {reason}")
    return [for_terminal(line.replace("\n", " ")) for line in lines]  # names, expected/seen and reasons come from files


def _cap_note(per_row: int | None) -> str:
    return f"; at most {per_row} a row here, every one in --json and --report" if per_row is not None else ""


def _capped(entries: list[tuple[dict[str, Any], str]], per_row: int | None) -> list[str]:
    if per_row is None:
        return [line for _, line in entries]
    out: list[str] = []
    shown: dict[str, int] = {}
    hidden: dict[str, int] = {}
    for x, line in entries:
        row = ",".join(x.get("tags", [])) or "?"
        if shown.get(row, 0) < per_row:
            shown[row] = shown.get(row, 0) + 1
            out.append(line)
        else:
            hidden[row] = hidden.get(row, 0) + 1
    out += [f"  … {n} more in {row}" for row, n in hidden.items()]
    return out


def _where(x: dict[str, Any]) -> str:
    params = f" [{x['params']}]" if x.get("params") else ""
    return f"{','.join(x.get('tags', []))} {x.get('feature', '?')}:{x.get('line', '?')} {x.get('scenario', x['id'])}{params}"


def verdict_json(verdict: dict[str, Any]) -> str:
    return json.dumps(verdict, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _differs(d: dict[str, Any]) -> str:
    found = difference_line(d)
    return f"; differs at {found}" if found else ""
