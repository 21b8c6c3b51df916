"""The capability-owned trigger reducer, policy ``weekly_v0`` (RFC §8: it keeps promotion judgement).

It turns admitted trigger-evaluation intents into report-due decisions and stops there: no
renderer, no sink, no I/O. It is idempotent per ``intent_id`` because recording an intent and
executing it are separate transactions (JNL-7): a redelivered intent must not count twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pwh._core.canonical import CanonicalError, to_plain
from pwh._core.codes import Rejection
from pwh._core.identity import intent_id as compute_intent_id

from ._registration import (
    CAPABILITY_ID,
    INTENT_KIND,
    INTENT_SCHEMA_VERSION,
    OPERATION,
    POLICY_VERSION,
    REPLANNED,
    is_opaque_token,
    payload_problem,
)

DECISION_SCHEMA_VERSION: Final = "periodic_report_trigger_decision_v0"
STATE_SCHEMA_VERSION: Final = "periodic_report_trigger_reducer_state_v0"

TRIGGER_INTENT_REJECTED: Final = "trigger_intent_rejected"
TRIGGER_SNAPSHOT_REJECTED: Final = "trigger_snapshot_rejected"

REASON_THRESHOLD: Final = "completion_threshold_reached"
REASON_REPLAN: Final = "replan_transition"
REASON_BELOW: Final = "below_threshold"
REASONS: Final = (REASON_THRESHOLD, REASON_REPLAN, REASON_BELOW)

MAX_THRESHOLD: Final = 10_000


class TriggerRejected(ValueError):
    """The reducer refused an intent or a snapshot; ``rejection`` carries the stable code.

    The only exception :meth:`TriggerReducer.reduce` and :meth:`TriggerReducer.restore` raise,
    so a caller (the scheduler) can record a compact code instead of raw exception text.
    """

    def __init__(self, code: str, path: str, reason: str) -> None:
        super().__init__(f"{code} at {path}: {reason}")
        self.rejection = Rejection(code, path, reason)

    @property
    def code(self) -> str:
        return self.rejection.code


@dataclass(frozen=True, slots=True)
class TriggerDecision:
    """Whether a report is due after one intent, and why."""

    intent_id: str
    report_due: bool
    reason: str
    completed_segments: int
    policy_version: str = POLICY_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": DECISION_SCHEMA_VERSION,
            "intent_id": self.intent_id,
            "policy_version": self.policy_version,
            "report_due": self.report_due,
            "reason": self.reason,
            "completed_segments": self.completed_segments,
        }


class TriggerReducer:
    """Counts closed segments since the last due report; due at the threshold or on a replan."""

    def __init__(self, completion_threshold: int = 2) -> None:
        if type(completion_threshold) is not int or not 1 <= completion_threshold <= MAX_THRESHOLD:
            raise ValueError(f"completion_threshold must be an int in 1..{MAX_THRESHOLD}")
        self._threshold = completion_threshold
        self._completed = 0
        self._decisions: dict[str, TriggerDecision] = {}

    @property
    def completion_threshold(self) -> int:
        return self._threshold

    @property
    def completed_segments(self) -> int:
        """Closed segments counted since the last due report."""
        return self._completed

    def reduce(self, intent: Mapping[str, Any]) -> TriggerDecision:
        """Decide for one intent; the same ``intent_id`` again returns the first decision unchanged."""
        plain = _checked_intent(intent)
        key = plain["intent_id"]
        if key in self._decisions:
            return self._decisions[key]
        if plain["payload"]["transition"] == REPLANNED:
            decision = TriggerDecision(key, True, REASON_REPLAN, self._completed)
            self._completed = 0
        else:
            count = self._completed + 1
            if count >= self._threshold:
                decision = TriggerDecision(key, True, REASON_THRESHOLD, count)
                self._completed = 0
            else:
                decision = TriggerDecision(key, False, REASON_BELOW, count)
                self._completed = count
        self._decisions[key] = decision
        return decision

    def decisions(self) -> list[TriggerDecision]:
        """Every decision taken, in the order the intents were first reduced."""
        return list(self._decisions.values())

    def snapshot(self) -> dict[str, Any]:
        """The whole state as plain JSON, enough to resume with identical future decisions."""
        return {
            "schema_version": STATE_SCHEMA_VERSION,
            "policy_version": POLICY_VERSION,
            "completion_threshold": self._threshold,
            "completed_segments": self._completed,
            "decisions": [d.to_json() for d in self._decisions.values()],
        }

    @classmethod
    def restore(cls, snapshot: Mapping[str, Any]) -> TriggerReducer:
        """Rebuild a reducer from :meth:`snapshot`; a malformed snapshot is ``trigger_snapshot_rejected``."""
        try:
            plain = to_plain(snapshot)
        except CanonicalError as exc:
            raise TriggerRejected(TRIGGER_SNAPSHOT_REJECTED, exc.path, "snapshot is not plain JSON") from None
        except Exception:  # a hostile Mapping whose keys() or __getitem__ misbehaves
            raise TriggerRejected(TRIGGER_SNAPSHOT_REJECTED, "$", "snapshot could not be read") from None
        _expect_fields(
            plain,
            ("schema_version", "policy_version", "completion_threshold", "completed_segments", "decisions"),
            TRIGGER_SNAPSHOT_REJECTED,
        )
        _expect(plain["schema_version"] == STATE_SCHEMA_VERSION, "$.schema_version", "unknown snapshot schema")
        _expect(plain["policy_version"] == POLICY_VERSION, "$.policy_version", "snapshot of another policy")
        threshold = plain["completion_threshold"]
        _expect(
            type(threshold) is int and 1 <= threshold <= MAX_THRESHOLD,
            "$.completion_threshold",
            "threshold out of range",
        )
        completed = plain["completed_segments"]
        _expect(
            type(completed) is int and 0 <= completed < threshold,
            "$.completed_segments",
            "count must be below the threshold",
        )
        _expect(type(plain["decisions"]) is list, "$.decisions", "decisions must be an array")
        reducer = cls(threshold)
        reducer._completed = completed
        for i, item in enumerate(plain["decisions"]):
            decision = _decision_from_json(item, f"$.decisions[{i}]")
            _expect(decision.intent_id not in reducer._decisions, f"$.decisions[{i}]", "duplicate intent_id")
            reducer._decisions[decision.intent_id] = decision
        return reducer


def _checked_intent(intent: Any) -> dict[str, Any]:
    """A plain copy of ``intent`` if it is a well-formed ``weekly_v0`` trigger intent."""
    try:
        plain = to_plain(intent)
    except CanonicalError as exc:
        raise _reject_intent(exc.path, "intent is not plain JSON") from None
    except Exception:  # a hostile Mapping whose keys() or __getitem__ misbehaves
        raise _reject_intent("$", "intent could not be read") from None
    _expect_fields(
        plain,
        (
            "schema_version",
            "intent_id",
            "capability_id",
            "source_dispatch_id",
            "intent_kind",
            "operation",
            "policy_version",
            "payload",
            "grants_new_action_authority",
            "external_write_performed",
        ),
        TRIGGER_INTENT_REJECTED,
        exact=False,
    )
    checks = (
        (plain["schema_version"] == INTENT_SCHEMA_VERSION, "$.schema_version", "not an intent packet"),
        (plain["intent_kind"] == INTENT_KIND, "$.intent_kind", "intent kind is not trigger evaluation"),
        (plain["policy_version"] == POLICY_VERSION, "$.policy_version", "intent of another policy version"),
        (plain["operation"] == OPERATION, "$.operation", "operation is not evaluate_runtime_trigger"),
        (plain["capability_id"] == CAPABILITY_ID, "$.capability_id", "intent of another capability"),
        (plain["grants_new_action_authority"] is False, "$.grants_new_action_authority", "claims authority"),
        (plain["external_write_performed"] is False, "$.external_write_performed", "claims an external write"),
        (type(plain["intent_id"]) is str, "$.intent_id", "intent_id must be a string"),
        (type(plain["source_dispatch_id"]) is str, "$.source_dispatch_id", "dispatch id must be a string"),
    )
    for ok, path, reason in checks:
        if not ok:
            raise _reject_intent(path, reason)
    problem = payload_problem(plain["payload"])
    if problem is not None:
        raise _reject_intent("$.payload" + problem[0][1:], problem[1])
    expected = compute_intent_id(plain["source_dispatch_id"], INTENT_KIND, POLICY_VERSION, plain["payload"])
    if plain["intent_id"] != expected:
        raise _reject_intent("$.intent_id", "intent_id does not match its semantic inputs")
    return plain


def _decision_from_json(item: Any, path: str) -> TriggerDecision:
    _expect(type(item) is dict, path, "decision must be an object")
    _expect_fields(
        item,
        ("schema_version", "intent_id", "policy_version", "report_due", "reason", "completed_segments"),
        TRIGGER_SNAPSHOT_REJECTED,
        path=path,
    )
    _expect(item["schema_version"] == DECISION_SCHEMA_VERSION, path, "unknown decision schema")
    _expect(item["policy_version"] == POLICY_VERSION, path, "decision of another policy")
    _expect(is_opaque_token(item["intent_id"]), path, "intent_id is not an opaque token")
    _expect(type(item["report_due"]) is bool, path, "report_due must be a boolean")
    _expect(type(item["reason"]) is str and item["reason"] in REASONS, path, "unknown reason")
    _expect((item["reason"] != REASON_BELOW) == item["report_due"], path, "reason contradicts report_due")
    count = item["completed_segments"]
    _expect(type(count) is int and 0 <= count <= MAX_THRESHOLD, path, "count out of range")
    return TriggerDecision(item["intent_id"], item["report_due"], item["reason"], count)


def _expect_fields(plain: Any, fields: tuple[str, ...], code: str, *, exact: bool = True, path: str = "$") -> None:
    if type(plain) is not dict:
        raise TriggerRejected(code, path, "must be an object")
    for name in fields:
        if name not in plain:
            raise TriggerRejected(code, f"{path}.{name}", "required field is missing")
    if exact and set(plain) != set(fields):
        raise TriggerRejected(code, path, "unexpected fields")


def _expect(ok: bool, path: str, reason: str) -> None:
    """A snapshot check: ``trigger_snapshot_rejected`` when ``ok`` is false."""
    if not ok:
        raise TriggerRejected(TRIGGER_SNAPSHOT_REJECTED, path, reason)


def _reject_intent(path: str, reason: str) -> TriggerRejected:
    return TriggerRejected(TRIGGER_INTENT_REJECTED, path, reason)
