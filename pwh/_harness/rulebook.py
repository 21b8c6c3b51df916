"""The rules pwh judges by, as one document: what ``pwh rules`` prints, ``docs/rules.md`` holds and
every packet carries as ``rules.json``.

Three parts: the clause table (the source's own words), the rows every scenario is tagged with
(each naming the clauses it restates), and the named rules and profile readings that reports and
comments refer to. A named rule is RFC only where it names clauses; a profile reading names none,
and no verdict ever fails an implementation on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pwh._harness.clauses import CLAUSES, CLAUSES_BY_ID, citation_ids
from pwh._harness.rules import RULES

__all__ = ["NAMED_RULES", "PROFILE_READINGS", "RULES_SCHEMA_VERSION", "NamedRule", "rules_document", "rules_markdown", "rules_text"]

RULES_SCHEMA_VERSION = "pwh_rules_v1"


@dataclass(frozen=True)
class NamedRule:
    id: str
    says: str
    clauses: tuple[str, ...] = ()  # empty: a profile reading

    @property
    def kind(self) -> str:
        return "rfc" if self.clauses else "profile"


NAMED_RULES: tuple[NamedRule, ...] = (
    NamedRule(
        "ADM",
        "A dispatch is admissible only from a committed, durably checkpointed writeback receipt with non-empty goal, agent, "
        "Todo, Turn and effect identities, the plan's effect identity, and the phase enabled; where the profile keeps an "
        "allowlist, only the hooks it names are admitted; a diagnostic rollout event is never the authority.",
        (
            "§5.1.identity",
            "§5.1.same-effect",
            "§5.1.committed",
            "§5.1.durable",
            "§5.1.enabled",
            "§10.profile-gates",
            "§5.1.rollout-not-authority",
        ),
    ),
    NamedRule(
        "REG",
        "A registration is checked before any provider call: exact fields, bounded token arrays, known event and intent "
        "kinds, no duplicate hook_id, bounded budgets, failure_policy isolate, no command, import string, callback or write scope.",
        ("§6.validated-before-call", "§6.no-command-no-scope", "§3.2.no-shell-hooks"),
    ),
    NamedRule(
        "INP",
        "Each admitted hook gets an immutable input with opaque source identities, a bounded projection per event kind and "
        "six false boundary flags; nothing private; an input that cannot be proven safe is not handed over.",
        ("§7.immutable-input", "§7.opaque-source", "§7.bounded-projection", "§7.input-excludes", "§7.unproven-boundary"),
    ),
    NamedRule(
        "RES",
        "A result is not_applicable or proposed; an intent is accepted only if it matches the admitted registration and "
        "dispatch, fits the budget, uses its kind's schema, has a matching identity and claims no effect or authority.",
        (
            "§8.result-shape",
            "§8.intent-matches",
            "§8.within-budget",
            "§8.known-schema",
            "§8.identity-matches",
            "§8.no-claimed-effect",
            "§8.scope-declared",
        ),
    ),
    NamedRule(
        "JNL-1", "Replaying a dispatch with the same canonical result is a no-op that returns the original receipt.", ("§9.replay-noop",)
    ),
    NamedRule("JNL-2", "A different result under the same dispatch identity is a conflict; the original receipt stays.", ("§9.conflict",)),
    NamedRule(
        "JNL-3", "A changed registration, policy version or source receipt gives a new identity; history is kept.", ("§9.new-identity",)
    ),
    NamedRule(
        "JNL-4",
        "After a crash between the primary writeback and the sidecar checkpoint, the same dispatch is retried.",
        ("§9.crash-retry", "§5.2.crash-replay"),
    ),
    NamedRule("JNL-5", "A completed sidecar receipt is never rebuilt from log text or a provider's own account.", ("§9.no-rebuild",)),
    NamedRule("JNL-6", "The journal keeps bounded typed packets and compact failure codes only.", ("§9.journal-contents",)),
    NamedRule("JNL-7", "An executor deduplicates again on intent_id.", ("§9.executor-dedupe",)),
    NamedRule(
        "ISO",
        "Whatever a hook does, the primary receipt, quota-spend eligibility, Todo state and other hooks' slots are untouched, "
        "and no sink is called.",
        ("§1.failure-contained", "§5.2.spend", "§5.2.receipt-kept", "§10.failure-never", "§10.independent"),
    ),
    NamedRule(
        "BUD",
        "Core bounds invocations, intents, bytes and wall time per hook and per dispatch; a failure may be retried under a bounded policy with the same identity.",
        ("§10.limits", "§10.observable-retry"),
    ),
)

# pwh's readings where the documents are silent: reported as profile divergences, never failures.
PROFILE_READINGS: tuple[NamedRule, ...] = (
    NamedRule(
        "P-identity-bytes",
        "The digest recipe of dispatch_id and intent_id (canonical JSON, sha256, pwh_/pwi_ prefixes): stability is RFC, the bytes are pwh's profile, published as test vectors.",
    ),
    NamedRule(
        "P-code-names",
        "Failure code names beyond the classes §10 lists, and dispatch-level codes the RFC never names (source_not_committed, journal_write_failed, ...).",
    ),
    NamedRule("P-rejection-path", "The JSON path a rejection names, and the rejection's object shape."),
    NamedRule(
        "P-retry-cap",
        "The number of attempts the retry bound allows (a bound must exist and hold; its number is pwh's), and the code a hook ends with past it.",
    ),
    NamedRule(
        "P-ceilings",
        "The numbers of core and profile ceilings (timeouts, result bytes, hooks per dispatch, bytes per dispatch), and whether a value exactly at one is inside.",
    ),
    NamedRule(
        "P-input-mutation", "How a provider's write to its immutable input surfaces (that it reaches neither core nor another hook is RFC)."
    ),
    NamedRule(
        "P-record-layout",
        "The sidecar record's field set, its attempt counter, and whether all hooks of one receipt land in one commit or one per dispatch identity.",
    ),
    NamedRule("P-intent-order", "The order of intents within a record."),
    NamedRule(
        "P-refusal-shape",
        "An inadmissible source refused as one dispatch-level outcome with no per-hook outcome and no sidecar record (that no provider is called and no intent is recorded is RFC; refusing it hook by hook meets that too).",
    ),
    NamedRule(
        "P-open-deliveries",
        "How often a provider runs on a delivery the RFC leaves open: a second delivery of a dispatch already answered, or a new identity while the journal cannot be read; and whether a failed hook is retried at all.",
    ),
    NamedRule("P-executor-budget", "An intent asking its executor for more result bytes than the hook's own result budget."),
    NamedRule("P-json-range", "Integers beyond 64 bits, nesting depth limits and other bounds of the JSON pwh accepts."),
    NamedRule(
        "P-boundary-findings",
        "What pwh's public-boundary scanner flags beyond credential values: private names, host names, paths, environment-variable names, ambiguous token shapes.",
    ),
    NamedRule(
        "P-source-passthrough",
        "That the receipt id, state revision and commit time reach a hook unchanged (§7 asks only for opaque identifiers).",
    ),
)


def _check() -> None:
    for clauses in [r.clauses for r in RULES] + [n.clauses for n in NAMED_RULES]:
        citation_ids(clauses)


_check()


def rules_document() -> dict[str, Any]:
    """The whole rulebook as data (``rules.json``)."""
    return {
        "schema_version": RULES_SCHEMA_VERSION,
        "judging": (
            "A check is RFC when a clause below requires it; only RFC checks decide a verdict. Where the documents are "
            "silent, a check is profile: pwh's reading, reported as a divergence, never a failure of the implementation."
        ),
        "clauses": [c.to_json() for c in CLAUSES],
        "rules": [
            {"id": r.id, "group": r.group, "case": r.case, "required_outcome": r.required, "clauses": list(r.clauses)} for r in RULES
        ],
        "named_rules": [
            {"id": n.id, "kind": n.kind, "says": n.says, "clauses": list(n.clauses)} for n in (*NAMED_RULES, *PROFILE_READINGS)
        ],
    }


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rules_markdown() -> str:
    """``docs/rules.md``: the rulebook for people (generated; ``tests/harness/test_rulebook.py`` keeps it in step)."""
    doc = rules_document()
    out = [
        "# The rules pwh judges by",
        "",
        "Generated by `pwh rules --md`; do not edit by hand.",
        "",
        doc["judging"],
        "",
        "The two source documents are the LoopX RFC *Provider-Neutral Post-Writeback Capability Hooks v0* and",
        "seed 003, a course chapter on Capability, Provider and Host (both in Chinese). The quotes below are",
        'their own words (" | " separates the cells of one table row, "……" marks words left out); the gloss is',
        "pwh's translation, and where the two differ, the quote decides.",
        "",
        "## Rows",
        "",
        "Every scenario is tagged with exactly one row id.",
        "",
        "| id | case | required outcome | clauses |",
        "|---|---|---|---|",
    ]
    out += [f"| {r.id} | {_cell(r.case)} | {_cell(r.required)} | {', '.join(r.clauses)} |" for r in RULES]
    out += ["", "## Named rules", "", "| id | kind | says | clauses |", "|---|---|---|---|"]
    out += [
        f"| {n.id} | {n.kind} | {_cell(n.says)} | {', '.join(n.clauses) or 'none: pwh' + chr(39) + 's reading'} |"
        for n in (*NAMED_RULES, *PROFILE_READINGS)
    ]
    out += ["", "## Clauses", ""]
    for c in CLAUSES:
        out += [f"### {c.id}", "", f"{c.document}, {c.section}", "", f"> {c.quote}", "", c.gloss, ""]
    return "\n".join(out).rstrip("\n") + "\n"


def rules_text() -> str:
    """What ``pwh rules`` prints: every id, its kind, its clauses and, for each clause, its quote."""
    out = []
    for r in RULES:
        out.append(f"{r.id:7} rfc      {r.case}: {r.required}")
        out += [f"          {c}  {CLAUSES_BY_ID[c].quote}" for c in r.clauses]
    for n in (*NAMED_RULES, *PROFILE_READINGS):
        out.append(f"{n.id:7} {n.kind:8} {n.says}")
        out += [f"          {c}  {CLAUSES_BY_ID[c].quote}" for c in n.clauses]
    out.append("")
    out.append(f"{len(CLAUSES)} clauses; `pwh rules --md` for the whole table with glosses, `--json` for data.")
    return "\n".join(out) + "\n"
