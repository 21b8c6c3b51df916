"""The rows and rules a gate verdict covers, with their stable IDs (SPEC §5, §6).

Every scenario carries exactly one of these IDs as its tag; every ID needs scenarios.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    id: str
    group: str
    case: str
    required: str


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

RULE_IDS: tuple[str, ...] = tuple(r.id for r in RULES)
RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}
