"""What every report format shares: the status and verdict words, what a verdict covers (its
rows, versions, digest, and whether it is partial), the summary in words, the rows a verdict
covers, one failure on one line, and line numbers as ranges. All of it reads the verdict alone."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pwh._harness.rules import RULES
from pwh._harness.safe_text import for_terminal

STATUS_MARK = {"pass": "pass", "fail": "FAIL", "skip": "skip", "self-check": "self", "divergence": "differs", "incomplete": "INCOMPLETE"}
VERDICT_WORD = {"pass": "PASS", "fail": "FAIL", "incomplete": "INCOMPLETE", "divergence": "DIVERGENCE"}
PARTIAL_TAIL = "it says nothing about the rows or scenarios that did not run"


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


def summary_lines(verdict: dict[str, Any]) -> list[str]:
    """The two verdicts and the self-checks, in words."""
    s = verdict["summary"]
    own = s["self_checks"]
    lines = [
        f"{_rows_pass(s['passed'])}, {s['failed']} fail, {s['skipped']} skipped, {s['self_check_rows']} testbed only — "
        f"verdict: {VERDICT_WORD[s['verdict']]} (RFC); profile: {VERDICT_WORD[s['profile']]}"
        + (f" ({s['divergences']} scenario(s) differ from pwh's reading only)" if s["divergences"] else ""),
        f"testbed self-checks (pwh's own fakes; never a pass of the SUT): {own['scenarios']} scenario(s), "
        f"{own['passed']} passed, {own['failed']} failed",
    ]
    through_turn = turn_judged_rows(verdict)
    if through_turn:
        lines.append(f"judged through the SUT's own turn seam (seed 003's primary-Turn code): {', '.join(through_turn)}")
    return lines


def _rows_pass(n: int) -> str:
    return "1 row passes" if n == 1 else f"{n} rows pass"


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


def rules_in(verdict: dict[str, Any]) -> list[Any]:
    """The rows this verdict covers (all of them, unless the gate was limited with --rows)."""
    return [r for r in RULES if r.id in verdict["rows"]]


def one_line(s: dict[str, Any]) -> str:
    """A failed scenario's expected, seen, where they differ and clause, on one terminal-safe line."""
    clause = f" [{s['clause']}]" if s.get("clause") else ""
    differs = difference_line(s)
    where = f"; differs at {differs}" if differs else ""
    return for_terminal(f"expected {s.get('expected', '?')}; seen {s.get('seen', '?')}{where}{clause}".replace("\n", " "))


def difference_line(x: Any) -> str:
    """Where a failure's or a divergence's two values part (``$.path: expected A, seen B``), or ""
    when the check compared no two values."""
    d = x.get("difference") if isinstance(x, dict) else None
    if not isinstance(d, dict):
        return ""
    more = f" (and {d['others']} more)" if isinstance(d.get("others"), int) and d["others"] > 0 else ""
    return f"{d.get('path', '$')}: expected {d.get('expected', '?')}, seen {d.get('seen', '?')}{more}"


def ranges(lines: Iterable[int]) -> str:
    """Line numbers as ranges: ``1-3, 7, 9-10``."""
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
