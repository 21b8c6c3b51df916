"""From scenario results to a verdict: whom each scenario counts for, each row's RFC and profile
status, and the summary. Pure functions over plain data, kept apart from the gate so that
``pwh packet verify`` can recompute a published verdict's rows and summary from its own
scenarios without loading the gate.
"""

from __future__ import annotations

from typing import Any

from pwh._harness.rules import RULES, RULES_BY_ID

__all__ = ["SUT_GROUPS", "judge_scenario", "rows_of", "summarize"]


# The row groups whose rules an implementation must be judged on; seed-003 rows count for an
# implementation only where a scenario reached its code (docs/rules.md).
SUT_GROUPS = ("matrix",)


def judge_scenario(s: dict[str, Any]) -> dict[str, Any]:
    """One scenario's RFC and profile status, and whether it counts for the SUT or is a testbed
    self-check.

    A passed scenario counts for the SUT only when the SUT answered a seam call and a check read
    its answer; a failed one counts for the SUT unless the check that failed was about pwh's own
    fakes (or the SUT was never reached); a skip is the SUT's ("unsupported")."""
    j = s.get("judgement") or {}
    outcome = s.get("outcome", "passed")
    divergences = j.get("divergences", [])
    primary_turn = not any(RULES_BY_ID[t].group in SUT_GROUPS for t in s.get("tags", []) if t in RULES_BY_ID)
    if outcome == "skipped":
        counts_for = "sut"
    elif outcome == "failed":
        about = s.get("failed_about")
        counts_for = "testbed" if about == "testbed" or (about is None and not j.get("reached")) else "sut"
    elif primary_turn:
        # A seed-003 rule judges the primary Turn's contracts: its pass counts for the SUT only
        # when the SUT's own turn seam answered and a check read that answer.
        counts_for = "sut" if j.get("turn_judged") else "testbed"
    else:
        counts_for = "sut" if j.get("judged_sut") else "testbed"
    rfc = {"passed": "pass", "failed": "fail", "skipped": "skip"}.get(outcome, "fail")
    profile = "divergence" if rfc == "pass" and divergences else rfc
    seam = "testbed" if counts_for == "testbed" else ("turn" if primary_turn else _matrix_seam(j))
    return {**s, "rfc": rfc, "profile": profile, "counts_for": counts_for, "seam": seam, "divergences": divergences}


def _matrix_seam(judgement: dict[str, Any]) -> str:
    """The seam a matrix scenario went through: ``writeback`` when it drove the implementation's
    own committed-writeback boundary (an operation ``writeback.*``; pwh/_suts/writeback_seam.py),
    else the dispatcher seam."""
    operations = judgement.get("operations", [])
    return "writeback" if any(str(op).startswith("writeback.") for op in operations) else "dispatcher"


def rows_of(judged: list[dict[str, Any]], selected: list[str] | None) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for rule in RULES:
        if selected is not None and rule.id not in selected:
            continue
        mine = [s for s in judged if rule.id in s.get("tags", [])]
        sut = [s for s in mine if s["counts_for"] == "sut"]
        own = [s for s in mine if s["counts_for"] == "testbed"]
        counts = {k: sum(1 for s in sut if s["rfc"] == v) for k, v in (("passed", "pass"), ("failed", "fail"), ("skipped", "skip"))}
        divergent = sum(1 for s in sut if s["profile"] == "divergence")
        if not mine or counts["failed"]:
            status = "fail"
        elif not sut:
            status = "self-check" if rule.group not in SUT_GROUPS else "skip"
        elif counts["skipped"] or not counts["passed"]:
            status = "skip"
        else:
            status = "pass"
        profile = "divergence" if status == "pass" and divergent else status
        self_failed = sum(1 for s in own if s["rfc"] == "fail")
        rows[rule.id] = {
            "status": status,
            "rfc": status,
            "profile": profile,
            "scenarios": len(mine),
            **counts,
            "divergences": divergent,
            "seams": sorted({s["seam"] for s in sut}) or ["testbed"],
            "self_checks": {"scenarios": len(own), "passed": len(own) - self_failed, "failed": self_failed},
        }
    return rows


def summarize(rows: dict[str, dict[str, Any]], judged: list[dict[str, Any]], collection_errors: bool) -> dict[str, Any]:
    """The RFC verdict decides: ``fail`` if any row fails, ``incomplete`` if some row the SUT
    must be judged on was not fully expressed (or none passed), else ``pass``. The profile
    verdict adds ``divergence`` where the SUT differs from pwh's reading only."""
    statuses = [r["status"] for r in rows.values()]
    judged_rows = [s for s in statuses if s != "self-check"]
    if "fail" in statuses or collection_errors:
        verdict = "fail"
    elif "skip" in judged_rows or "pass" not in judged_rows:
        verdict = "incomplete"
    else:
        verdict = "pass"
    profile = "divergence" if verdict == "pass" and any(r["profile"] == "divergence" for r in rows.values()) else verdict
    own = [s for s in judged if s["counts_for"] == "testbed"]
    return {
        "rows": len(rows),
        "passed": statuses.count("pass"),
        "failed": statuses.count("fail"),
        "skipped": statuses.count("skip"),
        "self_check_rows": statuses.count("self-check"),
        "scenarios": len(judged),
        "sut_scenarios": len(judged) - len(own),
        "verdict": verdict,
        "rfc": verdict,
        "profile": profile,
        "divergences": sum(1 for s in judged if s["counts_for"] == "sut" and s["profile"] == "divergence"),
        "self_checks": {
            "scenarios": len(own),
            "passed": sum(1 for s in own if s["rfc"] == "pass"),
            "failed": sum(1 for s in own if s["rfc"] == "fail"),
        },
    }
