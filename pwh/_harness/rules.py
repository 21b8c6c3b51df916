"""The rows and rules a gate verdict covers, with their stable IDs and the clauses that require them.

Every scenario carries exactly one of these IDs as its tag; every ID needs scenarios. The clause
ids name entries of pwh's clause table (:mod:`pwh._harness.clauses`); ``pwh rules`` prints both.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    id: str
    group: str
    case: str
    required: str
    clauses: tuple[str, ...] = ()


RULES: tuple[Rule, ...] = (
    Rule("M01", "matrix", "phase disabled, or capability not installed", "zero provider calls, no sidecar intent"),
    Rule("M02", "matrix", "registration invalid or over budget", "rejected before any provider call"),
    Rule("M03", "matrix", "primary validation or writeback fails", "zero post-writeback calls"),
    Rule("M04", "matrix", "committed writeback", "exactly one dispatch identity per admitted hook"),
    Rule("M05", "matrix", "primary writeback replayed", "same dispatch receipt returned, no duplicate intent"),
    Rule("M06", "matrix", "same identity, different payload", "conflict rejected, original receipt kept"),
    Rule(
        "M07",
        "matrix",
        "provider raises, times out or returns an invalid result",
        "compact isolated failure; primary receipt and spend eligibility unchanged",
    ),
    Rule("M08", "matrix", "several hooks", "stable order, independent budgets, failure isolation"),
    Rule("M09", "matrix", "intent requests a write scope", "recorded as a proposal only; no authority granted, no effect executed"),
    Rule("M10", "matrix", "periodic-report completion threshold", "one typed trigger-evaluation intent, via the fake scheduler"),
    Rule("M11", "matrix", "periodic-report replan transition", "one typed trigger-evaluation intent, via the fake scheduler"),
    Rule("M12", "matrix", "external-write assertion", "no network or sink call before separate governed admission"),
    Rule("M13", "matrix", "public-boundary scan", "no private names, URLs, paths, credentials, transcripts, raw logs or provider payloads"),
    Rule(
        "PRV-1",
        "seed-003",
        "provider lifecycle declared → installed → enabled → ready",
        "invalid combinations rejected at registration time (experiment A)",
    ),
    Rule(
        "HST-1",
        "seed-003",
        "host request",
        "only host_execute and typed_result; route, Todo, gate, scope, schema, evidence, stop/resume; no private write entry (experiment B)",
    ),
    Rule("HST-2", "seed-003", "completed phases", "a host cannot claim validation, writeback or spend"),
    Rule("HST-3", "seed-003", "validated completion", "needs a lifecycle adapter and a follow-up intent; never downgraded (experiment C)"),
    Rule("HST-4", "seed-003", "non-material result", "carries no evidence, path delta or progress observation"),
    Rule(
        "HST-5",
        "seed-003",
        "host output size",
        "12,000-byte read cap; over it a diagnosable failure, never half-parsed JSON (experiment D)",
    ),
    Rule("HST-6", "seed-003", "result binding", "bound to the same turn_key and effect_ref; another Turn's result is rejected"),
    Rule("REC-1", "seed-003", "provider crashed after an external effect", "recovered by readback/journal first, never by blind retry"),
    Rule("FT-1", "seed-003 failure table", "provider not installed", "install and re-probe; the Turn is not run"),
    Rule("FT-2", "seed-003 failure table", "provider not ready", "repair dependencies through the capability gate; the Turn is not run"),
    Rule("FT-3", "seed-003 failure table", "host overclaims phases", "validation rejects; the primary journal is kept"),
    Rule(
        "FT-4", "seed-003 failure table", "completion without lifecycle", "rejected until a legal progress or a complete follow-up contract"
    ),
    Rule("FT-5", "seed-003 failure table", "non-material result with evidence", "rejected; the host must re-issue a typed result"),
    Rule(
        "FT-6",
        "seed-003 failure table",
        "host output too large",
        "diagnosable failure; the host must shrink its output or save a reference",
    ),
    Rule("FT-7", "seed-003 failure table", "crash after the provider call", "read back first; never repeat the side effect blindly"),
)

# The clauses each row restates (the seed-003 rows quote the chapter; §12 quotes the matrix itself).
_ROW_CLAUSES: dict[str, tuple[str, ...]] = {
    "M01": ("§12.M01", "§5.1.enabled", "§10.profile-gates"),
    "M02": ("§12.M02", "§6.validated-before-call"),
    "M03": ("§12.M03", "§5.1.identity", "§5.1.same-effect", "§5.1.committed", "§5.1.durable"),
    "M04": ("§12.M04", "§9.dispatch-id", "§1.journaled"),
    "M05": ("§12.M05", "§9.replay-noop", "§9.crash-retry", "§14.atomic-dedupe"),
    "M06": ("§12.M06", "§9.conflict"),
    "M07": ("§12.M07", "§10.failure-codes", "§10.failure-never", "§8.within-budget"),
    "M08": ("§12.M08", "§6.stable-order", "§10.independent", "§6.no-hook-dependency"),
    "M09": ("§12.M09", "§6.scope-is-request", "§8.scope-declared"),
    "M10": ("§12.M10", "§12.e2e", "§8.reducer-decides"),
    "M11": ("§12.M11", "§12.e2e", "§8.reducer-decides"),
    "M12": ("§12.M12", "§1.no-effect", "§13.no-direct-sink"),
    "M13": ("§12.M13", "§7.input-excludes", "§9.journal-contents"),
    "PRV-1": ("seed003.lifecycle", "seed003.experiment-a"),
    "HST-1": ("seed003.host-request", "seed003.request-contract"),
    "HST-2": ("seed003.completed-phases",),
    "HST-3": ("seed003.completion-lifecycle", "seed003.experiment-c"),
    "HST-4": ("seed003.non-material",),
    "HST-5": ("seed003.read-cap", "seed003.experiment-d"),
    "HST-6": ("seed003.binding",),
    "REC-1": ("seed003.readback-first",),
    "FT-1": ("seed003.FT-1",),
    "FT-2": ("seed003.FT-2",),
    "FT-3": ("seed003.FT-3",),
    "FT-4": ("seed003.FT-4",),
    "FT-5": ("seed003.FT-5",),
    "FT-6": ("seed003.FT-6",),
    "FT-7": ("seed003.FT-7",),
}
RULES = tuple(Rule(r.id, r.group, r.case, r.required, _ROW_CLAUSES[r.id]) for r in RULES)

RULE_IDS: tuple[str, ...] = tuple(r.id for r in RULES)
RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}
