"""Saved verdicts: ``pwh report`` renders one again (several: one row × SUT table,
:mod:`pwh._harness.report.matrix`), ``pwh compare`` shows where two differ.

A verdict file is read as data and checked against ``gate_verdict.json`` before anything uses it,
so a truncated or hand-edited file gets one line naming the file and the field, never a traceback.
The comparison follows Bowtie's ``summary``: the rows whose RFC or profile status differ, then
each scenario whose statuses differ or that only one run has, keyed by feature, scenario and
example (not by line, which moves when a feature file is edited).
"""

from __future__ import annotations

from typing import Any

from pwh._core.schemas import schema_rejections, validator
from pwh._harness.gate_error import GateError
from pwh._harness.paths import read_json_file, shown
from pwh._harness.rules import RULES
from pwh._harness.safe_text import for_terminal

__all__ = ["COMPARISON_SCHEMA_VERSION", "compare", "comparison_lines", "load_verdict"]

COMPARISON_SCHEMA_VERSION = "pwh_verdict_comparison_v1"


def load_verdict(path: str) -> dict[str, Any]:
    """The verdict in ``path``, valid against its schema, or :class:`GateError` saying why not:
    read bounded in size and depth, never a FIFO or device (:func:`pwh._harness.paths.read_json_file`)."""
    verdict = read_json_file(path, what="pwh gate verdict")
    try:
        bad = [str(r) for r in schema_rejections(validator("gate_verdict"), verdict, "invalid")]
    except RecursionError:
        bad = ["nested too deeply to check"]
    if bad:
        raise GateError(f"{shown(path)} is not a pwh gate verdict: {for_terminal(bad[0])}")
    return verdict


def _scenario_key(s: dict[str, Any]) -> str:
    params = f" [{s['params']}]" if s.get("params") else ""
    return f"{s.get('feature', '?')}: {s.get('scenario', s['id'])}{params}"


def _statuses(x: dict[str, Any]) -> dict[str, str]:
    """A row's statuses; a scenario's in the rows' words (a pass of pwh's own fakes is a self-check)."""
    if x.get("counts_for") == "testbed" and x.get("rfc") == "pass":
        return {"rfc": "self-check", "profile": "self-check"}
    return {"rfc": x["rfc"], "profile": x["profile"]}


def _side(v: dict[str, Any]) -> dict[str, Any]:
    partial = bool((v.get("run") or {}).get("partial")) or "selected_rows" in v or bool(v.get("stopped_at_first_failure"))
    return {"sut": v["sut"], "rfc": v["summary"]["verdict"], "profile": v["summary"]["profile"], "partial": partial, "run": v.get("run")}


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Where verdict ``b`` differs from ``a``: rows, then scenarios (``None``: absent from a run)."""
    order = [r.id for r in RULES]
    row_ids = sorted(set(a["rows"]) | set(b["rows"]), key=lambda r: (order.index(r) if r in order else len(order), r))
    rows = []
    for row in row_ids:
        x, y = a["rows"].get(row), b["rows"].get(row)
        sx, sy = (_statuses(x) if x else None), (_statuses(y) if y else None)
        if sx != sy:
            rows.append({"row": row, "a": sx, "b": sy})
    by_a = {_scenario_key(s): s for s in a["scenarios"]}
    by_b = {_scenario_key(s): s for s in b["scenarios"]}
    scenarios = []
    for key in sorted(set(by_a) | set(by_b)):
        x, y = by_a.get(key), by_b.get(key)
        sx, sy = (_statuses(x) if x else None), (_statuses(y) if y else None)
        if sx != sy:
            tags = (x or y or {}).get("tags", [])
            at = y or x or {}
            where = f"{at.get('feature', '?')}:{at.get('line', '?')}"  # B's line (A's when B lacks it)
            scenarios.append({"scenario": key, "where": where, "rows": list(tags), "a": sx, "b": sy})
    return {
        "schema_version": COMPARISON_SCHEMA_VERSION,
        "a": _side(a),
        "b": _side(b),
        "same": not rows and not scenarios,
        "rows": rows,
        "scenarios": scenarios,
    }


def _pair(s: dict[str, str] | None) -> str:
    return "absent" if s is None else (s["rfc"] if s["rfc"] == s["profile"] else f"{s['rfc']}/{s['profile']}")


def comparison_lines(result: dict[str, Any], a_name: str, b_name: str) -> list[str]:
    a, b = result["a"], result["b"]
    lines = [
        f"{side}: {for_terminal(name)} — SUT {for_terminal(v['sut'])}, verdict {v['rfc']} (profile {v['profile']})"
        + (" — PARTIAL run" if v["partial"] else "")
        for side, name, v in (("A", a_name, a), ("B", b_name, b))
    ]
    if a["partial"] or b["partial"]:
        lines.append("a partial run has only the rows it ran: the others show as absent")
    if result["same"]:
        return [*lines, "", "no difference: every row and scenario has the same RFC and profile status"]
    lines += ["", f"rows that differ ({len(result['rows'])}), as RFC/profile A → B:"]
    lines += [f"  {r['row']:<6} {_pair(r['a'])} → {_pair(r['b'])}" for r in result["rows"]] or ["  (none)"]
    lines += ["", f"scenarios that differ ({len(result['scenarios'])}):"]
    transitions: dict[str, int] = {}
    for s in result["scenarios"]:
        name = s["scenario"].partition(": ")[2] or s["scenario"]
        where = s.get("where") or s["scenario"].partition(": ")[0]
        change = f"{_pair(s['a'])} → {_pair(s['b'])}"
        transitions[change] = transitions.get(change, 0) + 1
        lines.append(for_terminal(f"  {','.join(s['rows']) or '-'} {where} {name}: {change}"))
    counted = ", ".join(f"{n} {change}" for change, n in sorted(transitions.items(), key=lambda kv: (-kv[1], kv[0])))
    lines += ["", f"{len(result['rows'])} row(s) and {len(result['scenarios'])} scenario(s) differ: {counted or 'none'}"]
    return lines
