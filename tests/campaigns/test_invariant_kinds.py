"""The models' invariants are RFC or profile, as the Gherkin checks are (pwh/_harness/expect.py).

Every invariant of ``pwh/_campaigns/models/invariants.py`` is declared once, next to its check, with its
kind: RFC, citing the clauses of pwh's clause table that require it, or profile, with pwh's reading.
A broken RFC invariant is a counterexample and fails the soak; a broken profile invariant is a
profile divergence: counted and reported apart, never a counterexample, never the soak's exit code.
The soaks here run in-process against adapters planted below, each breaking a known rule.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import json
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from pwh import DispatchOutcome, ReferenceSUT
from pwh._campaigns.counterexamples.trace import run_steps
from pwh._campaigns.distribute.workers import merge_summaries
from pwh._campaigns.models.coverage import Coverage
from pwh._campaigns.models.invariants import (
    CHECKS,
    DECLARED,
    INVARIANTS,
    PROFILE,
    RFC,
    SOURCE_IDENTITY,
    InvariantTableError,
    Judge,
    UndeclaredInvariant,
    Violation,
    index_declarations,
    profile,
    registration_clauses,
    rfc,
)
from pwh._campaigns.models.language import DUPLICATE, bad_registration_flaws
from pwh._cli.campaigns import add_model_commands
from pwh._harness.clauses import CLAUSES_BY_ID, UnknownClause, citation_ids
from pwh._suts.mutants import MUTANTS
from pwh._suts.mutants._one_method import _ReplayCallsProvider

HERE = "tests.campaigns.test_invariant_kinds"
SETUP: dict[str, Any] = {"op": "setup", "ceiling": None, "segment": 3}
T_DONE: dict[str, Any] = {"op": "turn", "action": "complete_todo"}
REPLAY_1: dict[str, Any] = {"op": "replay", "writeback": 1}
TWO_HOOKS: list[dict[str, Any]] = [
    SETUP,
    {"op": "install", "hook": "a.alpha", "behaviour": "proposes one intent"},
    {"op": "install", "hook": "b.bravo", "behaviour": "raises an error"},
]


# -- planted adapters ------------------------------------------------------------------------------


def _reversed(outcome: DispatchOutcome) -> DispatchOutcome:
    return dataclasses.replace(outcome, hooks=tuple(reversed(outcome.hooks)))


class ReportsInReverse(ReferenceSUT):
    """The reference, listing a dispatch's hook outcomes in reverse hook_id order: it calls them in
    order and records them as the reference does, so only pwh's reading ``report_order`` breaks."""

    name = "planted:reports_in_reverse"

    def dispatch(self, source: Mapping[str, Any], *, primary: Any = None) -> DispatchOutcome:
        return _reversed(super().dispatch(source, primary=primary))

    def redeliver(self, source: Mapping[str, Any]) -> DispatchOutcome:
        return _reversed(super().redeliver(source))


class ReportsInReverseAndReplaysCalls(ReportsInReverse):
    """The same, and a replay calls the provider again (§9 replay-noop: an RFC rule)."""

    name = "planted:reports_in_reverse_and_replays_calls"
    dispatcher_class = _ReplayCallsProvider


class DispatchesProgress(ReferenceSUT):
    """A plain progress writeback is handed to the dispatcher as a completion, so every hook is
    called for it: the RFC part of what admits_progress (now profile) broke."""

    name = "planted:dispatches_progress"

    def dispatch(self, source: Mapping[str, Any], *, primary: Any = None) -> DispatchOutcome:
        if source.get("event_kind") == "progress_recorded":
            event = {**source["event"], "transition": "segment_progressed"}
            source = {**source, "event_kind": "todo_completed", "event": event}
        return super().dispatch(source, primary=primary)


class CallsTwicePerDelivery(ReferenceSUT):
    """Each dispatch delivers the receipt twice, so every hook is called twice in one delivery:
    past a max_invocations_per_dispatch of 1 (the periodic report's), the RFC part of the retry
    bound that attempts_not_counted (now profile) no longer stands for."""

    name = "planted:calls_twice_per_delivery"

    def dispatch(self, source: Mapping[str, Any], *, primary: Any = None) -> DispatchOutcome:
        outcome = super().dispatch(source, primary=primary)
        super().redeliver(source)
        return outcome


class AcceptsAZeroInvocationBudget(ReferenceSUT):
    """Installs a registration with a zero invocation budget (rejected by pwh's rules only, not by
    a clause) as if it asked for one invocation; the hook then runs like any other."""

    name = "planted:accepts_a_zero_invocation_budget"

    def install(self, registration: Mapping[str, Any], producer: Any) -> list[Any]:
        if registration.get("budget", {}).get("max_invocations_per_dispatch") == 0:
            registration = {**registration, "budget": {**registration["budget"], "max_invocations_per_dispatch": 1}}
        return super().install(registration, producer)


def accepts_a_zero_invocation_budget(**kw: Any) -> ReferenceSUT:
    return AcceptsAZeroInvocationBudget(**kw)


def dispatches_progress(**kw: Any) -> ReferenceSUT:
    return DispatchesProgress(**kw)


def calls_twice_per_delivery(**kw: Any) -> ReferenceSUT:
    return CallsTwicePerDelivery(**kw)


def reports_in_reverse(**kw: Any) -> ReferenceSUT:
    return ReportsInReverse(**kw)


def reports_in_reverse_and_replays_calls(**kw: Any) -> ReferenceSUT:
    return ReportsInReverseAndReplaysCalls(**kw)


def _soak_cli(tmp_path: Path, sut: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict[str, Any]]:
    """``pwh soak`` through its own handler, in this process: (exit code, the --json summary)."""
    monkeypatch.setenv("PWH_COUNTEREXAMPLES", str(tmp_path / "found"))
    parser = argparse.ArgumentParser(prog="pwh")
    add_model_commands(parser.add_subparsers())
    # three histories (an examples budget: the same ones on any machine): seed 4's show the planted
    # reading at once, seed 6's the RFC rule too
    args = parser.parse_args(["soak", "--examples", "3", "--sut", sut, "--seed", str(seed), "--no-real-crashes"])
    args.json = str(tmp_path / "soak.json")  # pwh's CLI adds --json; the handler reads it
    code = args.handler(args)
    return code, json.loads((tmp_path / "soak.json").read_text())


def _written(tmp_path: Path) -> list[Path]:
    """Counterexample files and example-database entries left under ``tmp_path / "found"``."""
    return sorted(p for p in (tmp_path / "found").rglob("*") if p.is_file())


# -- the declarations ------------------------------------------------------------------------------


def _finding_names(method: Any) -> Iterator[str]:
    """The invariant names a check method's source spells in a finding tuple (read here only, to
    hold the declarations to what the checks can report; the judge never reads its source)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(method)))
    for node in ast.walk(tree):
        value = node.value if isinstance(node, (ast.Return, ast.Yield)) else None
        if isinstance(value, ast.Tuple) and len(value.elts) == 3:
            first = value.elts[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield first.value


def test_every_invariant_is_declared_exactly_once_with_a_kind() -> None:
    names = [i.name for i in DECLARED]
    assert len(names) == len(set(names)) == len(INVARIANTS), sorted(n for n in names if names.count(n) > 1)
    assert {i.kind for i in DECLARED} == {RFC, PROFILE}
    for declared in DECLARED:
        if declared.kind == RFC:
            assert declared.clauses and not declared.reading, declared
        else:
            assert not declared.clauses and declared.reading.strip(), declared
    reported = {n for reports in CHECKS.values() for n in reports}
    assert reported == set(INVARIANTS)  # nothing declared that no check reports, nothing reported undeclared
    for method_name, reports in CHECKS.items():
        spelled = set(_finding_names(getattr(Judge, method_name)))
        assert spelled == set(reports), (method_name, spelled ^ set(reports))  # each check declares exactly what it reports
    unmarked = [n for n, m in vars(Judge).items() if n.startswith("_") and not n.startswith("__") and callable(m) and n not in CHECKS]
    assert set(unmarked) <= {"_findings"}, unmarked  # every check method carries its declaration


def test_the_declarations_refuse_a_name_twice_an_undeclared_one_and_a_clause_not_in_the_table() -> None:
    once = rfc("x_invariant", "§12.M05", "a rule")
    with pytest.raises(InvariantTableError, match="declared twice"):
        index_declarations([once, profile("x_invariant", "a reading")])
    with pytest.raises(InvariantTableError, match="declared nowhere"):
        index_declarations([once], ["x_invariant", "y_invariant"])
    with pytest.raises(UnknownClause):
        rfc("x_invariant", "JNL-5", "a pwh rule id is not a clause")
    with pytest.raises(UnknownClause):
        rfc("x_invariant", (), "no clause at all")
    with pytest.raises(InvariantTableError, match="reading"):
        profile("x_invariant", " ")
    judge = Judge()
    judge._findings = lambda system, record: iter([("made_up", "M01", "a finding no declaration names")])  # type: ignore[method-assign]
    with pytest.raises(UndeclaredInvariant):
        judge.check(None, type("R", (), {"index": 0})())  # type: ignore[arg-type]


def test_rfc_invariants_cite_table_clauses_and_profile_ones_say_their_reading() -> None:
    for name, declared in INVARIANTS.items():
        if declared.kind == RFC:
            assert citation_ids(declared.clauses) == declared.clauses and set(declared.clauses) <= set(CLAUSES_BY_ID), name
            assert declared.to_json() == {"kind": RFC, "clauses": list(declared.clauses), "rule": declared.rule}
        else:
            assert declared.to_json() == {"kind": PROFILE, "reading": declared.reading}
    # The readings the brief names are profile; the rules the RFC states stay RFC.
    assert {
        "retry_cap",
        "attempts_counted",
        "failure_retried",
        "intent_order",
        "report_order",
        "failure_code_name",
        "source_passed_through",
    } <= {n for n, d in INVARIANTS.items() if d.kind == PROFILE}
    assert {"retry_bounded", "independent_budgets", "hooks_independent", "one_record_per_dispatch", "hook_order"} <= {
        n for n, d in INVARIANTS.items() if d.kind == RFC
    }
    # A bad registration is judged as the step library's table of flaws declares it: a flaw with a
    # clause is RFC (and that clause is one bad_registration_rejected cites), one without is profile.
    cited = set(INVARIANTS["bad_registration_rejected"].clauses)
    for flaw in bad_registration_flaws():
        clauses = registration_clauses(flaw)
        assert set(clauses) <= cited, (flaw, clauses)
    assert registration_clauses(DUPLICATE) and not registration_clauses("a zero invocation budget")
    # The source fields judged as RFC are the matrix's: the opaque rest is pwh's reading there too.
    from scenarios import steps_checks

    assert SOURCE_IDENTITY == steps_checks.SOURCE_IDENTITY


def test_a_violation_says_its_kind_and_its_clauses_or_reading() -> None:
    broken = Violation("retry_bounded", "M08", 3, "called twice in one attempt")
    assert broken.to_json()["kind"] == RFC and broken.to_json()["clauses"] == list(INVARIANTS["retry_bounded"].clauses)
    diverged = Violation("retry_cap", "M08", 3, "called a fourth time", PROFILE)
    assert diverged.to_json()["reading"] == INVARIANTS["retry_cap"].reading and "clauses" not in diverged.to_json()
    assert Violation.from_json(diverged.to_json()) == diverged and Violation.from_json(broken.to_json()) == broken
    assert Violation.from_json({"invariant": "hook_order", "row": "M08", "step": 1, "message": "m"}).kind == RFC  # an older trace


def test_judging_goes_on_past_a_profile_finding_to_the_rfc_one() -> None:
    judge = Judge()
    findings = [None, ("report_order", "M08", "listed in reverse"), ("hook_order", "M08", "called in reverse")]
    judge._findings = lambda system, record: iter(findings)  # type: ignore[method-assign]
    found = judge.check(None, type("R", (), {"index": 4})())  # type: ignore[arg-type]
    assert found == Violation("hook_order", "M08", 4, "called in reverse", RFC)
    assert judge.take_divergences() == [Violation("report_order", "M08", 4, "listed in reverse", PROFILE)]
    assert judge.take_divergences() == []
    findings[2] = None
    assert judge.check(None, type("R", (), {"index": 5})()) is None and len(judge.divergences) == 1  # type: ignore[arg-type]


# -- the registry's profile-only mutants, on a few explicit steps ---------------------------------

# mutant -> (the profile invariant it breaks, steps on which the reference keeps every invariant)
PROFILE_MUTANTS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "admits_progress": ("progress_not_admitted", TWO_HOOKS + [{"op": "turn", "action": "progress"}]),
    "attempts_not_counted": ("attempts_counted", TWO_HOOKS + [T_DONE, REPLAY_1, REPLAY_1]),
    "replay_not_marked": ("replay_marked", TWO_HOOKS + [{"op": "turn", "action": "replan"}, REPLAY_1]),
}


def test_every_profile_mutant_of_the_models_is_here() -> None:
    from pwh._suts.mutants import _invariants as _models

    ours = {name for name, m in MUTANTS.items() if m.caught_by == ("profile",) and m.factory.__module__ == _models.__name__}
    assert ours == set(PROFILE_MUTANTS)


@pytest.mark.parametrize("name", sorted(PROFILE_MUTANTS))
def test_a_profile_mutant_breaks_its_reading_and_no_rfc_invariant(name: str) -> None:
    invariant, steps = PROFILE_MUTANTS[name]
    seen: list[Violation] = []
    assert run_steps("reference", steps, divergences=seen) == (len(steps), None) and seen == []
    ran, violation = run_steps(f"mutant:{name}", steps, divergences=seen)
    assert (ran, violation) == (len(steps), None), violation
    assert seen and {d.invariant for d in seen} == {invariant} and all(d.kind == PROFILE for d in seen), seen


def test_a_hook_installed_against_pwhs_rules_only_is_a_divergence_and_nothing_after_it_fails() -> None:
    """The SUT installs what only pwh's rules reject and then runs it: one profile divergence, and
    the model, which cannot predict that hook, judges the rest of the run by the RFC alone."""
    steps = TWO_HOOKS + [
        {"op": "bad_register", "hook": "c.charlie", "flaw": "a zero invocation budget"},
        T_DONE,
        REPLAY_1,
        {"op": "restart"},
        {"op": "redeliver", "writeback": 1},
        {"op": "turn", "action": "replan"},
    ]
    seen: list[Violation] = []
    assert run_steps("reference", steps, divergences=seen) == (len(steps), None) and seen == []
    ran, violation = run_steps(f"{HERE}:accepts_a_zero_invocation_budget", steps, divergences=seen)
    assert (ran, violation) == (len(steps), None), violation
    assert [(d.invariant, d.step) for d in seen] == [("registration_rules", 3)], seen
    # A registration breaking a clause, accepted, is still an RFC violation.
    command = [*TWO_HOOKS, {"op": "bad_register", "hook": "c.charlie", "flaw": "a command field"}]
    _, violation = run_steps(
        "mutant:registry_replaces_duplicates", [*TWO_HOOKS, {"op": "bad_register", "hook": "a.alpha", "flaw": DUPLICATE}]
    )
    assert violation is not None and violation.invariant == "bad_registration_rejected" and violation.kind == RFC
    assert run_steps("reference", command) == (len(command), None)


# The RFC invariants whose registry mutant became profile-only still fail when their RFC rule does.
RFC_PLANTED: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "dispatches_progress": ("progress_dispatches_nothing", TWO_HOOKS + [{"op": "turn", "action": "progress"}]),
    "calls_twice_per_delivery": ("retry_bounded", [SETUP, {"op": "install_periodic_report"}, T_DONE]),
}


@pytest.mark.parametrize("name", sorted(RFC_PLANTED))
def test_the_rfc_part_of_a_split_invariant_still_fails_when_its_rule_is_broken(name: str) -> None:
    invariant, steps = RFC_PLANTED[name]
    assert run_steps("reference", steps) == (len(steps), None)
    ran, violation = run_steps(f"{HERE}:{name}", steps)
    assert violation is not None and (violation.invariant, violation.kind) == (invariant, RFC), violation


# -- soaks -----------------------------------------------------------------------------------------


def test_a_profile_divergence_neither_fails_the_soak_nor_writes_a_counterexample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted adapter breaking only pwh's reading of the outcome's order: the soak exits 0, with
    no violation and nothing written, and reports the divergence apart, with its reading, a count
    and the history that first showed it."""
    code, summary = _soak_cli(tmp_path, f"{HERE}:reports_in_reverse", 4, monkeypatch)
    assert code == 0 and summary["violations"] == [] and summary["counterexamples"] == []
    assert _written(tmp_path) == [], _written(tmp_path)  # no trace, no feature, no example-database entry
    [diverged] = summary["profile_divergences"]
    assert (diverged["invariant"], diverged["row"], diverged["kind"]) == ("report_order", "M08", PROFILE)
    assert diverged["reading"] == INVARIANTS["report_order"].reading and diverged["times"] >= 1
    example = diverged["example"]
    assert example["divergence"]["invariant"] == "report_order" and example["steps"][0]["op"] == "setup"
    assert run_steps(f"{HERE}:reports_in_reverse", example["steps"]) == (len(example["steps"]), None)  # replays clean (RFC)
    coverage = summary["coverage"]
    assert coverage["profile_divergences"] == {"report_order": coverage["invariants"]["report_order"]["broken"]} != {}
    assert coverage["invariants"]["report_order"]["kind"] == PROFILE and coverage["invariants"]["hook_order"]["kind"] == RFC
    assert all(c["broken"] == 0 for i, c in coverage["invariants"].items() if c["kind"] == RFC)


def test_an_rfc_violation_still_fails_the_soak_past_a_profile_divergence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted adapter breaking pwh's reading and an RFC rule: the RFC one is the counterexample
    (exit 1, trace and feature written, the clauses named), the reading is counted apart."""
    code, summary = _soak_cli(tmp_path, f"{HERE}:reports_in_reverse_and_replays_calls", 6, monkeypatch)
    assert code == 1
    found = {v["invariant"]: v for v in summary["violations"]}
    assert "no_call_after_final" in found and all(v["kind"] == RFC for v in found.values()), summary["violations"]
    assert found["no_call_after_final"]["clauses"] == list(INVARIANTS["no_call_after_final"].clauses)
    assert {d["invariant"] for d in summary["profile_divergences"]} == {"report_order"}
    files = [Path(p) for p in summary["counterexamples"]]
    assert files and all(p.is_file() for p in files) and {p.suffix for p in files} == {".json", ".feature"}
    trace = json.loads(next(p for p in files if p.suffix == ".json" and "no_call_after_final" in p.name).read_text())
    assert trace["violation"]["invariant"] == "no_call_after_final" and trace["violation"]["kind"] == RFC
    feature = next(p for p in files if p.suffix == ".feature" and "no_call_after_final" in p.name).read_text()
    assert f"# An RFC invariant, required by {', '.join(INVARIANTS['no_call_after_final'].clauses)}" in feature


def test_workers_merge_profile_divergences_apart_from_violations() -> None:
    def worker(times: int) -> dict[str, Any]:
        diverged = {"invariant": "report_order", "row": "M08", "kind": PROFILE, "reading": "r", "message": "m", "step": 2, "times": times}
        return {
            "sut": "reference",
            "campaign": None,
            "minutes": 0.1,
            "profile": "ci",
            "swarm": True,
            "example_database": None,
            "seed": times,
            "pid": times,
            "elapsed_s": 1.0,
            "rounds": 1,
            "examples": 1,
            "steps": 1,
            "crashes": {"simulated": 0, "real": 0},
            "restarts": 0,
            "violations": [],
            "profile_divergences": [diverged],
            "counterexamples": [],
        }

    merged = merge_summaries(7, [worker(2), worker(3)], Coverage())
    assert merged["violations"] == [] and len(merged["profile_divergences"]) == 1
    assert merged["profile_divergences"][0]["times"] == 5 and merged["profile_divergences"][0]["worker"] == 1
    assert [w["profile_divergences"] for w in merged["per_worker"]] == [{"M08 report_order": 2}, {"M08 report_order": 3}]
