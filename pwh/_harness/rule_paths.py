"""Which RFC rule is judged on which path: the rule x path coverage table (``pwh rules --coverage``,
``docs/rule-paths.md``).

A wrong implementation rarely breaks a rule everywhere: it keeps it where it was first written and
forgets it elsewhere (on a replay, for replans, for the later hooks or intents, past a profile
change; see ``pwh/_suts/mutants/_semantic.py``). So a rule being judged somewhere says little; this
table says, for every RFC named rule of the rulebook, where it is judged: by entry path, event
kind, position and each side of each numeric limit the rule has. A cell is either covered, naming
the Gherkin scenarios (feature file and title, judged by ``pwh gate``) and the model invariants
(``pwh/_campaigns/models/invariants.py``, judged by ``pwh soak``) that judge that rule there, or it says
in one line why it is not applicable or not yet covered. A covered cell may carry a note saying
which part of the rule is judged there when it is not all of it.

Plain data only: the names here are strings, checked against the feature files, the declared
invariants and the rulebook by ``tests/harness/test_rule_paths.py``. Per-hook result bytes and
intent counts are RES's limits (§8 within budget); BUD holds the per-dispatch ceilings, the
invocation and time bounds and the retry bound.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "COVERED",
    "NOT_APPLICABLE",
    "NOT_YET_COVERED",
    "RULE_PATHS",
    "RULE_PATHS_SCHEMA_VERSION",
    "Cell",
    "RulePaths",
    "ScenarioRef",
    "paths_document",
    "paths_markdown",
    "paths_summary",
    "paths_text",
]

RULE_PATHS_SCHEMA_VERSION = "pwh_rule_paths_v1"

COVERED = "covered"
NOT_APPLICABLE = "not applicable"
NOT_YET_COVERED = "not yet covered"

ENTRY, KIND, POSITION, LIMIT = "entry path", "event kind", "position", "limit"
ENTRY_PATHS = ("first dispatch", "replay", "redelivery", "recovery", "profile or registry change")
EVENT_KINDS = ("todo_completed", "replan_recorded")
POSITIONS = ("first hook", "middle hook", "last hook", "first intent", "later intent")
SIDES = ("below", "at", "above")


@dataclass(frozen=True)
class ScenarioRef:
    """A scenario by its feature file (under the repository root) and its title as written."""

    feature: str
    title: str


@dataclass(frozen=True)
class Cell:
    """One rule on one path: covered (``scenarios`` and/or ``invariants``), or not applicable /
    not yet covered with its ``reason``. On a covered cell, ``reason`` is an optional note."""

    dimension: str
    value: str
    scenarios: tuple[ScenarioRef, ...] = ()
    invariants: tuple[str, ...] = ()
    reason: str = ""
    applicable: bool = True

    @property
    def status(self) -> str:
        if self.scenarios or self.invariants:
            return COVERED
        return NOT_YET_COVERED if self.applicable else NOT_APPLICABLE

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"dimension": self.dimension, "value": self.value, "status": self.status}
        if self.status == COVERED:
            found["scenarios"] = [{"feature": s.feature, "title": s.title} for s in self.scenarios]
            found["invariants"] = list(self.invariants)
            if self.reason:
                found["note"] = self.reason
        else:
            found["reason"] = self.reason
        return found


@dataclass(frozen=True)
class RulePaths:
    rule: str
    cells: tuple[Cell, ...]


def _s(feature: str, title: str) -> ScenarioRef:
    return ScenarioRef(f"features/{feature}.feature", title)


def _cov(dimension: str, value: str, *by: ScenarioRef | str, note: str = "") -> Cell:
    scenarios = tuple(b for b in by if isinstance(b, ScenarioRef))
    invariants = tuple(b for b in by if isinstance(b, str))
    return Cell(dimension, value, scenarios, invariants, note)


def _na(dimension: str, value: str, reason: str) -> Cell:
    return Cell(dimension, value, reason=reason, applicable=False)


def _gap(dimension: str, value: str, reason: str) -> Cell:
    return Cell(dimension, value, reason=reason)


def _limit(name: str, below: Cell, at: Cell, above: Cell) -> tuple[Cell, ...]:
    return tuple(
        Cell(LIMIT, f"{name}: {side}", c.scenarios, c.invariants, c.reason, c.applicable)
        for side, c in zip(SIDES, (below, at, above), strict=True)
    )


def _side(*by: ScenarioRef | str, note: str = "") -> Cell:
    return _cov(LIMIT, "", *by, note=note)


def _side_na(reason: str) -> Cell:
    return _na(LIMIT, "", reason)


def _side_gap(reason: str) -> Cell:
    return _gap(LIMIT, "", reason)


# -- the scenarios the table names -------------------------------------------------------------------

# ADM, M01, M03
PHASE_OFF = _s("m01_phase_and_installation", "with the phase disabled, a committed completion calls no provider")
PHASE_OFF_EITHER_KIND = _s(
    "m01_phase_and_installation", "with the phase disabled, a committed writeback of either event kind calls no provider"
)
NOT_COMMITTED = _s("m03_primary_failure", "a receipt whose step is not committed dispatches nothing")
NOT_DURABLE = _s("m03_primary_failure", "a receipt without a durable checkpoint dispatches nothing")
OTHER_EFFECT = _s("m03_primary_failure", "a receipt for another effect than the active plan's dispatches nothing")
EMPTY_IDENTITY = _s("m03_primary_failure", "a receipt with an empty settlement identity dispatches nothing")
EITHER_KIND_REFUSED = _s("m03_limits", "a receipt of either event kind that is not committed or not durable dispatches nothing")
REFUSED_AGAIN = _s("m03_limits", "a receipt refused once is refused again on every later delivery")
REPLAN_WRITEBACK_FAILS = _s("wb_primary_gate", "a replan whose writeback fails calls no provider")
ROLLOUT_LOST = _s("m04_committed_writeback", "a lost diagnostic rollout event changes nothing and no hook runs inside its append")
# REG, M02
BAD_REGISTRATION = _s("m02_registration", "a registration that breaks one rule is rejected at the field it breaks")
WELL_FORMED = _s("m02_registration", "a well-formed registration within budget is installed and used")
OVER_PROFILE_TIMEOUT = _s("m02_registration", "a timeout over the profile's own ceiling is rejected at installation")
CEILING_LOWERED = _s("m02_registration", "a profile that lowers its ceilings rejects an installed hook before calling it")
CEILINGS_DROP = _s("m02_survivors", "after the ceilings drop, the hook over them is refused and the hook within them still runs")
AT_PROFILE_TIMEOUT = _s("m02_limits", "a timeout exactly at the profile's own ceiling is accepted and the hook is used")
PAST_PROFILE_TIMEOUT = _s("m02_limits", "a timeout one past the profile's ceiling is rejected at installation, never called")
LOWERED_TO_EXACTLY = _s("m02_limits", "a profile ceiling lowered to exactly an installed hook's timeout still admits the hook")
LOWERED_BELOW = _s("m02_limits", "a profile ceiling lowered to one below an installed hook's timeout rejects it before any call")
PAST_CORE_CEILING = _s("m02_limits", "a budget one past its core ceiling, or zero, is rejected before any call")
INTENT_KINDS_BOUNDED = _s("m02_limits", "the intent-kind array is bounded on both sides")
REFUSED_FREES_SLOT = _s("m08_slots", "a hook refused before its call leaves its slot to the next hook")
CEILINGS_ANY_POSITION = _s(
    "m02_survivors", "after the ceilings drop, the hook over them is refused at any position and for either event kind"
)
# INP
RFC_INPUT = _s("m04_limits", "a hook is given exactly the RFC input, all six boundary flags false")
NOTHING_OF_EARLIER = _s("m08_limits", "no hook is given anything of an earlier hook's result")
OWN_COPY = _s("m08_several_hooks", "no hook sees another hook's result and each gets its own copy of the input")
UNPROVABLE = _s("m13_public_boundary", "an input whose boundary cannot be proven is never handed to the hook")
CLEAN_RUN = _s("m13_public_boundary", "a clean run records and reports nothing private")
UNPROVABLE_EVERY_HOOK = _s(
    "m13_public_boundary", "an input whose boundary cannot be proven reaches no hook, for either event kind and every hook"
)
CREDENTIAL_TODO = _s("m13_kept_out", "a credential as a receipt's Todo identity is never handed to a hook nor journaled")
SECOND_DISPATCHER_AFTER_CRASH = _s("m05_limits", "a second dispatcher handed the receipt a crash left retries the same dispatch")
PROFILE_CHANGED_AFTER_RECORD = _s(
    "m05_limits", "a profile changed between a crash and its recovery keeps the records made and one identity per hook"
)
PROFILE_CHANGED_BEFORE_RECOVERY = _s("m05_limits", "a profile changed before a crashed dispatch is recovered leaves one identity per hook")
SCOPE_LATER = _s("m09_write_scope", "a later intent's requested write scope is recorded as it was proposed")
LATER_INTENT_CONFLICT = _s("m06_conflict", "a second delivery whose later intent differs is an intent conflict")
# RES, ISO
MISBEHAVING = _s("m07_isolation", "a misbehaving hook is isolated and the primary writeback stands")
WELL_BEHAVED = _s("m07_isolation", "a well-behaved hook leaves the primary writeback exactly as without hooks")
RETRY_BOUND = _s("m07_isolation", "retries reuse the identity and stop at the profile's retry bound")
ONE_INVOCATION = _s("m07_isolation", "one invocation per dispatch, as in the RFC's own registration, still allows a retry")
LOOPS_FOREVER = _s("m07_isolation", "a hook that loops forever is given up on at its timeout")
NEVER_RETURNS_REPLAN = _s("m07_isolation", "a hook that never returns ends as timed out and its late answer is never recorded")
EXACT_BYTES = _s("m07_limits", "a result of exactly max_result_bytes, in multi-byte UTF-8, is accepted")
ONE_BYTE_OVER = _s("m07_limits", "a result one UTF-8 byte over max_result_bytes is rejected, though far fewer characters")
INTENT_COUNT = _s("m07_limits", "the intent count is bounded on both sides by the hook's own budget")
LATE_ANSWER = _s("m07_limits", "an answer that arrives after its timeout, while the run goes on, is never recorded")
FORGER = _s("m07_limits", "a provider that answers with a sidecar receipt of its own making is rejected, not recorded as it says")
SEAM_FAILING_HOOK = _s("wb_isolation", "a hook that <behaviour> leaves the primary receipt and the spend as with no hooks")
SEAM_SEVERAL = _s("wb_isolation", "several hooks run in hook_id order and one failing hook does not touch the others")
COPIER = _s("m08_several_hooks", "a hook that proposes another hook's intent identity cannot decide that hook's outcome")
FAILING_NO_SLOT = _s("m08_several_hooks", "a failing hook does not use up another hook's intent slot")
PAST_INTENT_CEILING = _s("m08_several_hooks", "past the profile's per-dispatch intent ceiling a hook gets dispatch_budget_exhausted")
PAST_HOOK_CEILING = _s("m08_several_hooks", "past the profile's hook ceiling the later hooks are not called")
HANGING_FIRST = _s("m08_several_hooks", "a hanging hook does not take the next hook's time")
LATER_FAILS = _s("m08_limits", "a later hook's failure leaves the earlier hook's record exactly as proposed")
AT_HOOK_CEILING = _s("m08_limits", "exactly at the profile's hook ceiling every hook runs; the next one is stopped")
BYTES_FILL = _s("m08_limits", "results filling the profile's per-dispatch byte ceiling exactly are all accepted")
BYTES_PAST = _s("m08_limits", "the result that would pass the per-dispatch byte ceiling by one byte is not accepted")
BYTES_EARLIER = _s("m08_limits", "the per-dispatch byte ceiling counts every earlier result, not only the last one")
INTENTS_EARLIER = _s("m08_limits", "the per-dispatch intent ceiling counts every earlier hook's intents, not only the last one's")
SLOT_LEFT = _s("m08_slots", "a hook that <fails> leaves its slot to the next hook")
SLOTS_TAKEN = _s("m08_slots", "with every slot taken by accepted results, the next hook is still stopped uncalled")
SECOND_DELIVERIES_BOUND = _s("m07_journal_files", "second deliveries stop at the profile's retry bound too")
REMOVED_JOURNAL = _s(
    "m07_journal_files", "a sidecar journal removed while open is put back, and every recorded dispatch survives a restart"
)
# JNL
REPLAYED = _s("m05_replay", "a replayed completion returns the stored receipt without calling the provider")
DRIFTER_REPLAYED = _s("m05_replay", "a hook whose answer changes per call still has one intent after replays")
CRASH_POINTS = _s("m05_replay", "a crash between the primary writeback and the sidecar recovers to one record")
CRASH_OF_THREE = _s(
    "m05_replay", "a crash after the first of three hooks returned, a slower one still answering, recovers every hook to one record"
)
RETRIED_ON_REPLAY = _s("m05_replay", "a failed hook is retried with the same identity on replay, the recorded one is not")
CORRUPTED = _s("m05_replay", "a corrupted sidecar record is reported, never rebuilt or re-run")
BEFORE_COMMIT = _s("m05_limits", "a crash before the sidecar commit leaves no record until recovery runs")
AFTER_COMMIT = _s("m05_limits", "a crash just after the sidecar commit leaves every record whole, and recovery keeps them")
SEAM_REPLAY = _s("wb_dispatch_identity", "replaying a committed completion returns the same dispatch receipt and no duplicate intent")
SEAM_KILLED = _s("wb_dispatch_identity", "a process killed <moment> recovers to one identity and one intent per hook")
CONFLICT = _s("m06_conflict", "a second delivery with a different result is an intent conflict")
SAME_RESULT = _s("m06_conflict", "a second delivery with the same result is a no-op returning the original")
KEY_ORDER = _s("m06_conflict", "a second delivery with the same result in another key order is a no-op, not a conflict")
CONFLICT_ONE_HOOK = _s("m06_conflict", "a conflict on one hook leaves the other hook's record alone")
POLICY_MOVED = _s("m04_limits", "a changed policy version gives new identities and keeps the earlier record as it was")
TWO_HOOKS_IDS = _s("m04_committed_writeback", "two admitted hooks each get one identity and one sidecar record")
REPLAN_CRASH = _s("m11_replan", "a crash after the replan's writeback recovers to one intent")
REPLAN_REPLAYED = _s("m11_replan", "a replayed replan still gives exactly one intent")
REPLAN_ONE_INTENT = _s("m11_replan", "a committed replan yields one intent and the reducer finds a report due")
CLOSING = _s("m10_completion_threshold", "the completion that closes a segment yields one typed trigger-evaluation intent")
CLOSING_REPLAYED = _s("m10_completion_threshold", "replaying the closing completion and consuming twice still executes one intent")
PROVIDER_ERROR = _s("m13_limits", "an error of the provider's own kind leaves nothing of itself in the journal or the outcome")
PRIVATE_INTENT = _s("m13_public_boundary", "an intent carrying a private value is rejected and nothing private is kept")
ANY_OF_THREE = _s("m13_mutants", "a private value in any one of three intents fails the whole result")

# -- the table -----------------------------------------------------------------------------------------

_NO_INTENT_YET = "decided before any hook answers: no intent exists yet"

RULE_PATHS: tuple[RulePaths, ...] = (
    RulePaths(
        "ADM",
        (
            _cov(
                ENTRY,
                "first dispatch",
                NOT_COMMITTED,
                NOT_DURABLE,
                OTHER_EFFECT,
                EMPTY_IDENTITY,
                PHASE_OFF,
                ROLLOUT_LOST,
                "bad_receipt_dispatches_nothing",
                "not_in_rollout_append",
            ),
            _cov(
                ENTRY,
                "replay",
                REFUSED_AGAIN,
                "bad_receipt_dispatches_nothing",
                note="the scenario re-offers a receipt that is not committed; the model replays a committed receipt of another plan's effect",
            ),
            _cov(
                ENTRY,
                "redelivery",
                "bad_receipt_dispatches_nothing",
                note="only the effect-identity clause: no second dispatcher is ever handed a receipt that is not committed or not durable",
            ),
            _cov(
                ENTRY,
                "recovery",
                "profile_governs_dispatch",
                note="only the phase switch (disabled before a crash); a recovered receipt is always committed and durable, so those checks are not judged there",
            ),
            _cov(
                ENTRY,
                "profile or registry change",
                "profile_governs_dispatch",
                note="the phase switched off and on between dispatches; no scenario changes it between two dispatches",
            ),
            _cov(KIND, "todo_completed", NOT_COMMITTED, NOT_DURABLE, OTHER_EFFECT, EMPTY_IDENTITY, "bad_receipt_dispatches_nothing"),
            _cov(
                KIND,
                "replan_recorded",
                EITHER_KIND_REFUSED,
                REPLAN_WRITEBACK_FAILS,
                PHASE_OFF_EITHER_KIND,
                note="committed, durable and the phase switch; an empty identity or another plan's effect is offered as a completion alone",
            ),
            _cov(POSITION, "first hook", NOT_COMMITTED, "bad_receipt_dispatches_nothing"),
            _cov(
                POSITION,
                "middle hook",
                "bad_receipt_dispatches_nothing",
                note="every M03 scenario installs one hook; only the model offers bad receipts with several installed",
            ),
            _cov(
                POSITION,
                "last hook",
                "bad_receipt_dispatches_nothing",
                note="every M03 scenario installs one hook; only the model offers bad receipts with several installed",
            ),
            _na(POSITION, "first intent", _NO_INTENT_YET),
            _na(POSITION, "later intent", _NO_INTENT_YET),
        ),
    ),
    RulePaths(
        "REG",
        (
            _cov(ENTRY, "first dispatch", BAD_REGISTRATION, WELL_FORMED, "bad_registration_rejected", "valid_registration_installs"),
            _cov(
                ENTRY, "replay", "bad_registration_rejected", note="the model replays writebacks after bad registrations; no scenario does"
            ),
            _cov(
                ENTRY,
                "redelivery",
                "bad_registration_rejected",
                note="the model re-delivers writebacks after bad registrations; no scenario does",
            ),
            _cov(
                ENTRY,
                "recovery",
                "bad_registration_rejected",
                note="the model crashes and restarts after bad registrations; no scenario does",
            ),
            _cov(ENTRY, "profile or registry change", CEILING_LOWERED, CEILINGS_DROP, LOWERED_BELOW, "profile_governs_dispatch"),
            _cov(KIND, "todo_completed", BAD_REGISTRATION, CEILING_LOWERED, "bad_registration_rejected"),
            _cov(
                KIND,
                "replan_recorded",
                CEILINGS_ANY_POSITION,
                "bad_registration_rejected",
                "profile_governs_dispatch",
                note="a lowered ceiling on a replan in the scenarios; a registration rejected at installation meets replans in the model alone",
            ),
            _cov(
                POSITION,
                "first hook",
                CEILINGS_DROP,
                REFUSED_FREES_SLOT,
                "profile_governs_dispatch",
                note="a registration re-checked against a lowered ceiling at dispatch",
            ),
            _cov(POSITION, "middle hook", CEILINGS_ANY_POSITION, "profile_governs_dispatch"),
            _cov(POSITION, "last hook", CEILINGS_ANY_POSITION, "profile_governs_dispatch"),
            _na(POSITION, "first intent", "a registration is judged before any result exists; an intent against its registration is RES's"),
            _na(POSITION, "later intent", "a registration is judged before any result exists; an intent against its registration is RES's"),
            *_limit(
                "hook timeout against the profile's ceiling",
                _side(REFUSED_FREES_SLOT, "valid_registration_installs"),
                _side(AT_PROFILE_TIMEOUT, LOWERED_TO_EXACTLY, CEILINGS_DROP),
                _side(
                    PAST_PROFILE_TIMEOUT,
                    OVER_PROFILE_TIMEOUT,
                    LOWERED_BELOW,
                    CEILING_LOWERED,
                    "profile_governs_dispatch",
                    note="that the registration is rejected is judged as profile; that it is never called is RFC",
                ),
            ),
            *_limit(
                "hook budgets against the core ceilings",
                _side(WELL_FORMED, "valid_registration_installs"),
                _side_na(
                    "the core ceilings' numbers, and whether a value at one is inside, are pwh's (P-ceilings): m02_limits judges it as profile"
                ),
                _side(
                    PAST_CORE_CEILING,
                    "bad_registration_rejected",
                    note="that it is rejected is pwh's reading (the numbers are profile); the RFC part judged is that a rejected registration is never called",
                ),
            ),
            *_limit(
                "intent-kind array length",
                _side(WELL_FORMED, note="one intent kind, as every registration of the scenarios"),
                _side_na("the bound's number (8) is pwh's (P-ceilings): m02_limits judges the registration at it as profile"),
                _side(
                    INTENT_KINDS_BOUNDED,
                    note="that 9 must be rejected is pwh's number (profile); once rejected, that its provider is never called is RFC",
                ),
            ),
        ),
    ),
    RulePaths(
        "INP",
        (
            _cov(ENTRY, "first dispatch", RFC_INPUT, UNPROVABLE, CREDENTIAL_TODO, "input_unchanged"),
            _cov(
                ENTRY,
                "replay",
                "input_unchanged",
                note="source identities only, for a failed hook called again; no scenario checks a retried hook's input",
            ),
            _cov(ENTRY, "redelivery", "input_unchanged", note="source identities only; no scenario checks the input of a second delivery"),
            _cov(
                ENTRY,
                "recovery",
                "input_unchanged",
                note="source identities only; no scenario checks the input a recovered dispatch hands a hook",
            ),
            _cov(ENTRY, "profile or registry change", "input_unchanged", note="source identities only"),
            _cov(KIND, "todo_completed", NOTHING_OF_EARLIER, OWN_COPY, UNPROVABLE, "input_unchanged"),
            _cov(KIND, "replan_recorded", RFC_INPUT, CLEAN_RUN, UNPROVABLE_EVERY_HOOK, "input_unchanged"),
            _cov(POSITION, "first hook", RFC_INPUT, UNPROVABLE, "input_unchanged"),
            _cov(POSITION, "middle hook", UNPROVABLE_EVERY_HOOK, "input_unchanged"),
            _cov(POSITION, "last hook", NOTHING_OF_EARLIER, OWN_COPY, UNPROVABLE_EVERY_HOOK, "input_unchanged"),
            _na(POSITION, "first intent", "the input is built before the hook answers; the intents are RES's"),
            _na(POSITION, "later intent", "the input is built before the hook answers; the intents are RES's"),
        ),
    ),
    RulePaths(
        "RES",
        (
            _cov(ENTRY, "first dispatch", MISBEHAVING, "isolated_failure", "no_authority_claim"),
            _cov(
                ENTRY,
                "replay",
                RETRIED_ON_REPLAY,
                "isolated_failure",
                note="the scenario accepts a valid retried result; only the model retries a hook whose result breaks its contract",
            ),
            _cov(
                ENTRY,
                "redelivery",
                "isolated_failure",
                "no_authority_claim",
                note="only the model re-delivers to a hook whose result breaks its contract",
            ),
            _cov(
                ENTRY,
                "recovery",
                "isolated_failure",
                "no_authority_claim",
                note="only the model recovers a dispatch whose hooks answer outside their contract",
            ),
            _cov(ENTRY, "profile or registry change", "isolated_failure", "no_authority_claim"),
            _cov(KIND, "todo_completed", MISBEHAVING, "isolated_failure"),
            _cov(
                KIND,
                "replan_recorded",
                SEAM_FAILING_HOOK,
                CONFLICT_ONE_HOOK,
                "isolated_failure",
                note="the intent's hook, dispatch, kind, schema and identity bindings are judged on replans by the model's few bad behaviours only",
            ),
            _cov(POSITION, "first hook", ONE_BYTE_OVER, COPIER, "isolated_failure"),
            _cov(POSITION, "middle hook", MISBEHAVING, "isolated_failure"),
            _cov(POSITION, "last hook", INTENT_COUNT, "isolated_failure"),
            _cov(POSITION, "first intent", MISBEHAVING, "isolated_failure"),
            _cov(
                POSITION,
                "later intent",
                MISBEHAVING,
                SCOPE_LATER,
                note="a duplicate identity, the result's byte budget and a requested scope in the second intent; no scenario breaks a later intent's schema, kind, hook or dispatch binding",
            ),
            *_limit(
                "result bytes against the hook's max_result_bytes",
                _side(BYTES_FILL, "isolated_failure"),
                _side(EXACT_BYTES),
                _side(ONE_BYTE_OVER, MISBEHAVING, "isolated_failure"),
            ),
            *_limit(
                "intents against the hook's own max_intents_per_dispatch",
                _side(WELL_BEHAVED, "isolated_failure"),
                _side(INTENT_COUNT, "isolated_failure"),
                _side(INTENT_COUNT, MISBEHAVING),
            ),
        ),
    ),
    RulePaths(
        "JNL-1",
        (
            _na(ENTRY, "first dispatch", "nothing is recorded yet: there is no receipt to return"),
            _cov(
                ENTRY, "replay", REPLAYED, SEAM_REPLAY, DRIFTER_REPLAYED, "replay_identical", "no_call_after_final", "record_byte_identical"
            ),
            _cov(ENTRY, "redelivery", SAME_RESULT, KEY_ORDER, "replay_identical"),
            _cov(ENTRY, "recovery", CRASH_POINTS, "record_byte_identical", "no_call_after_final"),
            _cov(
                ENTRY,
                "profile or registry change",
                "replay_identical",
                "record_byte_identical",
                note="the model replays earlier writebacks after a profile change; no scenario does",
            ),
            _cov(KIND, "todo_completed", REPLAYED, SEAM_REPLAY, "replay_identical"),
            _cov(KIND, "replan_recorded", DRIFTER_REPLAYED, REPLAN_REPLAYED, "replay_identical"),
            _cov(POSITION, "first hook", CRASH_OF_THREE, "no_call_after_final", "replay_identical"),
            _cov(POSITION, "middle hook", CRASH_OF_THREE, "no_call_after_final", "replay_identical"),
            _cov(POSITION, "last hook", RETRIED_ON_REPLAY, CRASH_OF_THREE, "no_call_after_final", "replay_identical"),
            _cov(POSITION, "first intent", REPLAYED, "replay_identical"),
            _cov(
                POSITION,
                "later intent",
                "replay_identical",
                note="the model's hooks proposing two intents; every replay scenario proposes one",
            ),
        ),
    ),
    RulePaths(
        "JNL-2",
        (
            _na(ENTRY, "first dispatch", "nothing is recorded yet: there is no first result to conflict with"),
            _cov(
                ENTRY,
                "replay",
                DRIFTER_REPLAYED,
                "history_kept",
                note="a replay calls no provider (JNL-1), so only that the original stays is judged",
            ),
            _cov(ENTRY, "redelivery", CONFLICT, CONFLICT_ONE_HOOK, "replay_identical", "history_kept"),
            _cov(ENTRY, "recovery", "history_kept", note="the model recovers hooks whose answer changes per call; no scenario does"),
            _cov(
                ENTRY,
                "profile or registry change",
                "history_kept",
                "replay_identical",
                note="the model re-delivers after profile changes; no scenario does",
            ),
            _cov(KIND, "todo_completed", CONFLICT, "replay_identical"),
            _cov(KIND, "replan_recorded", CONFLICT_ONE_HOOK, "replay_identical"),
            _cov(POSITION, "first hook", CONFLICT_ONE_HOOK, "replay_identical"),
            _cov(POSITION, "middle hook", "replay_identical", "history_kept", note="no scenario puts the conflicting hook after another"),
            _cov(POSITION, "last hook", "replay_identical", "history_kept", note="no scenario puts the conflicting hook after another"),
            _cov(POSITION, "first intent", CONFLICT, "replay_identical"),
            _cov(POSITION, "later intent", LATER_INTENT_CONFLICT),
        ),
    ),
    RulePaths(
        "JNL-3",
        (
            _cov(ENTRY, "first dispatch", POLICY_MOVED, "stable_identity"),
            _cov(
                ENTRY,
                "replay",
                "stable_identity",
                "history_kept",
                note="the model replays earlier writebacks after a policy move; no scenario does",
            ),
            _cov(
                ENTRY,
                "redelivery",
                "stable_identity",
                "history_kept",
                note="the model re-delivers earlier writebacks after a policy move; no scenario does",
            ),
            _cov(ENTRY, "recovery", AFTER_COMMIT, "stable_identity", "history_kept"),
            _cov(
                ENTRY,
                "profile or registry change",
                POLICY_MOVED,
                "stable_identity",
                "intent_once",
                note="the policy version and the source receipt move; no scenario or model step changes an installed hook's registration",
            ),
            _cov(KIND, "todo_completed", POLICY_MOVED, "stable_identity"),
            _cov(
                KIND, "replan_recorded", "stable_identity", note="the model moves policies around replans; the scenario commits completions"
            ),
            _cov(POSITION, "first hook", "stable_identity", "hooks_independent"),
            _cov(POSITION, "middle hook", "stable_identity", "hooks_independent"),
            _cov(POSITION, "last hook", "stable_identity", "hooks_independent"),
            _cov(POSITION, "first intent", POLICY_MOVED, "stable_identity"),
            _cov(
                POSITION,
                "later intent",
                "stable_identity",
                note="a changed source receipt only: every versioned hook proposes one intent, so a later intent's policy version is never moved",
            ),
        ),
    ),
    RulePaths(
        "JNL-4",
        (
            _na(ENTRY, "first dispatch", "no crash has happened yet"),
            _na(
                ENTRY,
                "replay",
                "after a crash the process restarts and its recovery queue retries the dispatch first; a replay then meets JNL-1",
            ),
            _cov(ENTRY, "redelivery", SECOND_DISPATCHER_AFTER_CRASH),
            _cov(ENTRY, "recovery", CRASH_POINTS, BEFORE_COMMIT, SEAM_KILLED, REPLAN_CRASH, "crash_point_reached", "one_outcome_per_hook"),
            _cov(
                ENTRY,
                "profile or registry change",
                PROFILE_CHANGED_AFTER_RECORD,
                PROFILE_CHANGED_BEFORE_RECOVERY,
                note="which profile governs the retry is left open; what holds under either reading is judged: the records made stay, one identity per hook",
            ),
            _cov(KIND, "todo_completed", CRASH_POINTS, BEFORE_COMMIT, "one_outcome_per_hook"),
            _cov(
                KIND,
                "replan_recorded",
                REPLAN_CRASH,
                "one_outcome_per_hook",
                note="one crash point in the scenarios (primary.after_writeback); the model crashes replans at every point",
            ),
            _cov(POSITION, "first hook", CRASH_OF_THREE, "one_outcome_per_hook"),
            _cov(POSITION, "middle hook", CRASH_OF_THREE, "one_outcome_per_hook"),
            _cov(POSITION, "last hook", CRASH_OF_THREE, "one_outcome_per_hook"),
            _cov(POSITION, "first intent", CRASH_POINTS, "intent_once"),
            _cov(
                POSITION, "later intent", "intent_once", note="the model's hooks proposing two intents; every crash scenario proposes one"
            ),
        ),
    ),
    RulePaths(
        "JNL-5",
        (
            _cov(ENTRY, "first dispatch", FORGER, note="a provider's own account of its receipt"),
            _cov(
                ENTRY,
                "replay",
                CORRUPTED,
                "record_byte_identical",
                note="that the replay is not re-run is RFC; the journal error reported and an altered record refused are profile",
            ),
            _cov(ENTRY, "redelivery", "record_byte_identical"),
            _cov(ENTRY, "recovery", "record_byte_identical"),
            _cov(ENTRY, "profile or registry change", "record_byte_identical"),
            _cov(KIND, "todo_completed", FORGER, CORRUPTED, "record_byte_identical"),
            _cov(KIND, "replan_recorded", "record_byte_identical"),
            _cov(POSITION, "first hook", FORGER, "record_byte_identical"),
            _cov(POSITION, "middle hook", "record_byte_identical"),
            _cov(POSITION, "last hook", "record_byte_identical"),
            _cov(POSITION, "first intent", "record_byte_identical"),
            _cov(POSITION, "later intent", "record_byte_identical"),
        ),
    ),
    RulePaths(
        "JNL-6",
        (
            _cov(ENTRY, "first dispatch", MISBEHAVING, PROVIDER_ERROR, PRIVATE_INTENT, "journal_public_safe", "journal_bounded"),
            _cov(ENTRY, "replay", "journal_public_safe", "journal_bounded", note="no scenario reads the journal a retry on replay leaves"),
            _cov(
                ENTRY, "redelivery", "journal_public_safe", "journal_bounded", note="no scenario reads the journal a second delivery leaves"
            ),
            _cov(ENTRY, "recovery", "journal_public_safe", "journal_bounded", note="no scenario reads the journal a recovery leaves"),
            _cov(ENTRY, "profile or registry change", "journal_public_safe", "journal_bounded"),
            _cov(KIND, "todo_completed", MISBEHAVING, PROVIDER_ERROR, "journal_public_safe"),
            _cov(KIND, "replan_recorded", CLEAN_RUN, "journal_public_safe"),
            _cov(POSITION, "first hook", PROVIDER_ERROR, "journal_public_safe"),
            _cov(POSITION, "middle hook", MISBEHAVING, "journal_public_safe"),
            _cov(POSITION, "last hook", INTENT_COUNT, "journal_public_safe"),
            _cov(POSITION, "first intent", PRIVATE_INTENT, ANY_OF_THREE),
            _cov(POSITION, "later intent", ANY_OF_THREE),
            *_limit(
                "intents held per record against the hook's max_result_bytes",
                _side("journal_bounded"),
                _side(EXACT_BYTES),
                _side(ONE_BYTE_OVER, "journal_bounded"),
            ),
        ),
    ),
    RulePaths(
        "JNL-7",
        (
            _cov(ENTRY, "first dispatch", CLOSING, REPLAN_ONE_INTENT, "intent_once"),
            _cov(ENTRY, "replay", CLOSING_REPLAYED, REPLAN_REPLAYED, "intent_once"),
            _cov(
                ENTRY,
                "redelivery",
                "intent_once",
                note="the model's scheduler consumes after every step; no scenario consumes after a second delivery",
            ),
            _cov(ENTRY, "recovery", REPLAN_CRASH, "intent_once"),
            _cov(ENTRY, "profile or registry change", "intent_once"),
            _cov(KIND, "todo_completed", CLOSING, CLOSING_REPLAYED, "intent_once"),
            _cov(KIND, "replan_recorded", REPLAN_ONE_INTENT, REPLAN_REPLAYED, REPLAN_CRASH, "intent_once"),
            _cov(POSITION, "first hook", CLOSING, "intent_once"),
            _cov(POSITION, "middle hook", "intent_once", note="the scenarios' executor meets one hook's intents"),
            _cov(POSITION, "last hook", "intent_once", note="the scenarios' executor meets one hook's intents"),
            _cov(POSITION, "first intent", CLOSING, "intent_once"),
            _cov(POSITION, "later intent", "intent_once", note="the model's hooks proposing two intents; the periodic report proposes one"),
        ),
    ),
    RulePaths(
        "ISO",
        (
            _cov(ENTRY, "first dispatch", MISBEHAVING, "primary_untouched", "no_sink_call", "no_escape", "hooks_independent"),
            _cov(ENTRY, "replay", RETRY_BOUND, REPLAYED, "primary_untouched"),
            _cov(ENTRY, "redelivery", SECOND_DELIVERIES_BOUND, "primary_untouched"),
            _cov(ENTRY, "recovery", CRASH_POINTS, SEAM_KILLED, REMOVED_JOURNAL, "primary_untouched"),
            _cov(
                ENTRY,
                "profile or registry change",
                "primary_untouched",
                "no_sink_call",
                note="no scenario changes the profile between two dispatches and then reads the primary",
            ),
            _cov(KIND, "todo_completed", MISBEHAVING, "primary_untouched"),
            _cov(KIND, "replan_recorded", SEAM_FAILING_HOOK, NEVER_RETURNS_REPLAN, "primary_untouched"),
            _cov(POSITION, "first hook", FAILING_NO_SLOT, SLOT_LEFT, SEAM_SEVERAL, "hooks_independent"),
            _cov(POSITION, "middle hook", MISBEHAVING, "hooks_independent"),
            _cov(POSITION, "last hook", LATER_FAILS, "hooks_independent"),
            _na(
                POSITION,
                "first intent",
                "isolation is per hook: a result that breaks its contract fails whole (RES), whichever intent breaks it",
            ),
            _na(
                POSITION,
                "later intent",
                "isolation is per hook: a result that breaks its contract fails whole (RES), whichever intent breaks it",
            ),
        ),
    ),
    RulePaths(
        "BUD",
        (
            _cov(ENTRY, "first dispatch", PAST_INTENT_CEILING, LOOPS_FOREVER, "independent_budgets", "timeout_enforced", "retry_bounded"),
            _cov(ENTRY, "replay", RETRY_BOUND, ONE_INVOCATION, RETRIED_ON_REPLAY, "retry_bounded"),
            _cov(ENTRY, "redelivery", SECOND_DELIVERIES_BOUND, "retry_bounded"),
            _cov(
                ENTRY,
                "recovery",
                "retry_bounded",
                "timeout_enforced",
                "independent_budgets",
                note="no scenario recovers a dispatch with a failing, hanging or budget-bound hook",
            ),
            _cov(
                ENTRY,
                "profile or registry change",
                "independent_budgets",
                note="the model moves the per-dispatch intent ceiling between dispatches; every scenario sets its ceilings before the first",
            ),
            _cov(KIND, "todo_completed", PAST_INTENT_CEILING, AT_HOOK_CEILING, "independent_budgets"),
            _cov(
                KIND,
                "replan_recorded",
                NEVER_RETURNS_REPLAN,
                "independent_budgets",
                "timeout_enforced",
                note="the per-dispatch ceilings are met on replans by the model alone",
            ),
            _cov(POSITION, "first hook", HANGING_FIRST, SLOT_LEFT, "independent_budgets"),
            _cov(POSITION, "middle hook", INTENTS_EARLIER, SLOTS_TAKEN, "independent_budgets"),
            _cov(POSITION, "last hook", AT_HOOK_CEILING, BYTES_EARLIER, "independent_budgets"),
            _cov(POSITION, "first intent", FAILING_NO_SLOT, "independent_budgets"),
            _cov(POSITION, "later intent", PAST_INTENT_CEILING, "independent_budgets"),
            *_limit(
                "hooks per dispatch (profile)",
                _side(SLOT_LEFT),
                _side(AT_HOOK_CEILING, SLOT_LEFT),
                _side(AT_HOOK_CEILING, PAST_HOOK_CEILING, SLOTS_TAKEN),
            ),
            *_limit(
                "intents per dispatch (profile)",
                _side(INTENTS_EARLIER, "independent_budgets"),
                _side(INTENTS_EARLIER, FAILING_NO_SLOT, "independent_budgets"),
                _side(INTENTS_EARLIER, PAST_INTENT_CEILING, "independent_budgets"),
            ),
            *_limit(
                "result bytes per dispatch (profile)",
                _side(BYTES_FILL),
                _side(BYTES_FILL),
                _side(BYTES_PAST, BYTES_EARLIER),
            ),
            *_limit(
                "invocations per hook per delivery",
                _side_na("a call below the bound is allowed, not required: §10 lets a failure be retried, it never asks for it"),
                _side_na("a call at the bound is allowed, not required: §10 lets a failure be retried, it never asks for it"),
                _side(ONE_INVOCATION, RETRY_BOUND, "retry_bounded"),
            ),
            *_limit(
                "wall time per hook",
                _side(WELL_BEHAVED, LATE_ANSWER, note="an answer well within its timeout is kept"),
                _side_na("wall time cannot be placed exactly at a bound; the slack past it is pwh's (the models' TIMEOUT_GRACE_MS)"),
                _side(LOOPS_FOREVER, LATE_ANSWER, NEVER_RETURNS_REPLAN, "timeout_enforced"),
            ),
            *_limit(
                "retry bound over deliveries (profile max_attempts)",
                _side_na("a retry below the bound is allowed, not required (§10 'may'); pwh's retry is judged as profile (P-retry-cap)"),
                _side_na("the bound's number is pwh's (P-retry-cap)"),
                _side_na(
                    "the RFC asks for a bounded policy but names no bound and no way to set one: from outside, a policy with no bound "
                    "cannot be told from one whose bound lies past the deliveries tried; past pwh's own number the hook stays failed "
                    "(RFC) and no further call is made (profile, P-retry-cap)"
                ),
            ),
        ),
    ),
)


# -- views ----------------------------------------------------------------------------------------------


def _cells() -> list[Cell]:
    return [c for r in RULE_PATHS for c in r.cells]


def paths_summary() -> dict[str, int]:
    """How many cells are covered, not applicable, not yet covered; and how many covered cells
    name model invariants only (judged by ``pwh soak``, not by ``pwh gate``)."""
    counts = Counter(c.status for c in _cells())
    return {
        "cells": len(_cells()),
        "covered": counts[COVERED],
        "not_applicable": counts[NOT_APPLICABLE],
        "not_yet_covered": counts[NOT_YET_COVERED],
        "covered_by_invariants_only": sum(1 for c in _cells() if c.status == COVERED and not c.scenarios),
    }


def _summary_line() -> str:
    s = paths_summary()
    return (
        f"{s['cells']} cells: {s['covered']} covered ({s['covered_by_invariants_only']} by model invariants only), "
        f"{s['not_applicable']} not applicable, {s['not_yet_covered']} not yet covered"
    )


def paths_document(says: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The table as data (``pwh rules --coverage --json``); ``says``: each rule's one line."""
    says = says or {}
    return {
        "schema_version": RULE_PATHS_SCHEMA_VERSION,
        "summary": paths_summary(),
        "rules": [
            {"rule": r.rule, **({"says": says[r.rule]} if r.rule in says else {}), "cells": [c.to_json() for c in r.cells]}
            for r in RULE_PATHS
        ],
    }


def _covered_by(cell: Cell) -> str:
    names = [f"{s.feature}: {s.title}" for s in cell.scenarios] + [f"invariant {i}" for i in cell.invariants]
    return "; ".join(names) + (f" (note: {cell.reason})" if cell.reason else "")


def paths_text(says: Mapping[str, str] | None = None) -> str:
    """What ``pwh rules --coverage`` prints: a block per rule, a line per cell."""
    says = says or {}
    out: list[str] = []
    for r in RULE_PATHS:
        out.append(f"{r.rule}  {says.get(r.rule, '')}".rstrip())
        for c in r.cells:
            said = _covered_by(c) if c.status == COVERED else f"{c.status}: {c.reason}"
            out.append(f"  {c.dimension:10} {c.value:60} {said}")
        out.append("")
    out.append(f"pwh rules --coverage: {_summary_line()}")
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def paths_markdown(says: Mapping[str, str] | None = None) -> str:
    """``docs/rule-paths.md`` (generated; ``tests/harness/test_rule_paths.py`` keeps it in step)."""
    says = says or {}
    out = [
        "# Which RFC rule is judged on which path",
        "",
        "Generated by `pwh rules --coverage --md`; do not edit by hand.",
        "",
        "For every RFC named rule (`pwh rules`), each entry path, event kind, position and side of a",
        "numeric limit the rule has: the scenarios (feature file and title; judged by `pwh gate`) and",
        "the model invariants (`pwh/_campaigns/models/invariants.py`; judged by `pwh soak`) that judge the",
        "rule there, or why the cell is not applicable or not yet covered. A note on a covered cell says",
        "which part of the rule is judged there when it is not all of it.",
        "",
        _summary_line() + ".",
    ]
    for r in RULE_PATHS:
        out += ["", f"## {r.rule}", ""]
        if r.rule in says:
            out += [says[r.rule], ""]
        out += ["| dimension | value | status | judged by, or why not |", "|---|---|---|---|"]
        for c in r.cells:
            if c.status == COVERED:
                names = [f"`{s.feature}`: {s.title}" for s in c.scenarios] + [f"invariant `{i}`" for i in c.invariants]
                said = "<br>".join(_md(n) for n in names) + (f"<br>*note:* {_md(c.reason)}" if c.reason else "")
            else:
                said = _md(c.reason)
            out.append(f"| {c.dimension} | {_md(c.value)} | {c.status} | {said} |")
    return "\n".join(out) + "\n"
