"""The stateful crash/replay models (issue 5): they keep quiet on the reference, find every broken
adapter that concerns replay, conflict, crash recovery, ordering or isolation, write findings
that paste into ``features/`` as is, replay traces, crash children for real, and soak."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from pwh import Dispatcher, ReferenceSUT
from pwh._campaigns.counterexamples.reader import ReplayError
from pwh._campaigns.counterexamples.trace import TraceError, load_trace, replay_trace, run_steps, write_counterexample
from pwh._campaigns.models.catalog import HANG, SOAK_WEIGHTS
from pwh._campaigns.models.machine import run_model
from pwh._campaigns.models.simulation import run_simulation
from pwh._campaigns.models.system import ModelSystem, StepNotApplicable
from pwh._campaigns.soak import soak
from pwh._cli.campaigns import add_model_commands
from pwh._core.runner import ThreadRunner
from pwh._harness.scenarios_check import check, load_step_modules, step_definitions
from pwh._suts.mutants import MUTANTS, caught_by

ROOT = Path(__file__).resolve().parents[2]

# Each mutant of the library (pwh/_suts/mutants) the models must catch, the RFC invariant that must
# catch it, and a seed: each is found by the simulation engine (seeded histories, virtual time)
# within SEARCH's examples from that seed, the same on any machine under any load.
# test_caught_by_is_the_registry holds this table to the registry: a mutant registered for the
# models with no entry here fails, and so does an entry for a mutant the registry does not give to
# the models. A mutant that breaks only a profile invariant is the registry's ("profile",) and
# tests/campaigns/test_invariant_kinds.py's.
CAUGHT_BY: dict[str, tuple[str, int]] = {
    "replay_calls_provider": ("no_call_after_final", 1),
    "conflict_overwrites": ("history_kept", 1),
    "out_of_order": ("hook_order", 1),
    "shared_budget": ("independent_budgets", 1),
    "rolls_back_primary": ("primary_untouched", 1),
    "blocks_spend": ("primary_untouched", 1),
    "no_timeout": ("timeout_enforced", 1),
    "calls_sink": ("no_sink_call", 1),
    "accepts_external_write": ("no_authority_claim", 1),
    "forgets_last_hook": ("one_outcome_per_hook", 1),
    "leaks_provider_text": ("journal_public_safe", 1),
    "new_identity_after_restart": ("stable_identity", 1),
    "reports_a_record_twice": ("one_record_per_dispatch", 1),
    "admits_uncommitted": ("bad_receipt_dispatches_nothing", 1),
    "registry_replaces_duplicates": ("bad_registration_rejected", 1),
    "phase_stays_on": ("profile_governs_dispatch", 1),
    "shares_mutable_input": ("input_unchanged", 1),
    "identity_by_capability": ("hooks_independent", 1),
    "replay_rewrites_record": ("record_byte_identical", 1),
    "raised_is_timed_out": ("isolated_failure", 1),
    "lets_provider_errors_out": ("no_escape", 1),
    "one_hook_only": ("valid_registration_installs", 1),
    "ignores_crash_points": ("crash_point_reached", 1),
    "replay_under_new_profile": ("replay_identical", 1),
    "recorded_slots_not_held": ("independent_budgets", 1),
}
# Whose counterexample is shrunk and exported too, its .feature checked (each export runs the
# scenario's lines twice in-process; the rest are found, not written, to keep the profile quick).
EXPORTED = frozenset(
    {
        "replay_calls_provider",
        "conflict_overwrites",
        "out_of_order",
        "shared_budget",
        "rolls_back_primary",
        "blocks_spend",
        "calls_sink",
        "accepts_external_write",
        "admits_uncommitted",
    }
)

SETUP = {"op": "setup", "ceiling": None, "segment": 3}


def _children() -> set[int]:
    """This process's live child processes (Linux), to prove none is left behind."""
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").glob("*"):
        try:
            found |= {int(p) for p in (task / "children").read_text().split()}
        except OSError:
            continue
    return found


# The reference in each of its own configurations: its default (SQLite journal, process runner),
# the in-memory journal (``reference-memory``) and the thread runner (``PWH_RUNNER=thread``), so the
# quick models (and the mutation campaign that runs them) reach every journal and runner of core.
# The thread-runner variant found a real defect the day it was added: closing a batch waited for
# one running call only, while the worker could be a call further on, so a provider ran on after
# its dispatch ended (tests/core/test_isolation.py holds the fix).
# The CI weights draw no hanging hook (each costs its real 200 ms on every call, replay and
# recovery), so the thread runner's timeout paths get a short run of their own: two examples in
# which a quarter of the hooks hang past their timeout, on a fixed seed whose run meets hangs in
# dispatches, replays and recoveries (about 2 s here; seeds 1 and 3 meet none).
HANGING_RUN = {"weights": {"proposes one intent": 2, "raises an error": 1, HANG: 1}, "max_examples": 2, "steps": 20, "seed": 2}
# The simulation engine on the reference: hung hooks drawn as often as a soak draws them and more,
# every one timed out on the virtual clock, so the timeout paths run at full speed.
SIMULATION_RUN = {"weights": {**SOAK_WEIGHTS, HANG: 4}, "max_examples": 40, "steps": 20, "seed": 1, "swarm": True}
# variant -> (SUT, PWH_RUNNER or None, run_model options: none for the quick profile as it is)
REFERENCE_VARIANTS: dict[str, tuple[str, str | None, dict[str, Any]]] = {
    "default": ("reference", None, {}),
    "memory journal": ("reference-memory", None, {}),
    "thread runner": ("reference", "thread", {}),
    "thread runner, hooks that hang": ("reference", "thread", HANGING_RUN),
    "simulation": ("reference-memory", None, SIMULATION_RUN),
}


# `extended`: the in-memory journal in real time (CI runs it after the test command); the default
# variant holds every invariant on the SQLite journal, and the simulation variant on the in-memory one.
EXTENDED_VARIANTS = ("memory journal",)


@pytest.mark.parametrize(
    "variant", [pytest.param(v, marks=pytest.mark.extended) if v in EXTENDED_VARIANTS else v for v in REFERENCE_VARIANTS]
)
def test_the_reference_keeps_every_invariant(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = os.environ.get("PWH_SUT") or "reference"
    if chosen == "reference":
        sut, runner, options = REFERENCE_VARIANTS[variant]
    elif variant == "default":
        sut, runner, options = chosen, None, {}
    else:
        pytest.skip("a configuration of the reference; PWH_SUT names another implementation")
    if runner is not None:
        monkeypatch.setenv("PWH_RUNNER", runner)
    hanging = options is HANGING_RUN
    if options is SIMULATION_RUN:
        run = run_simulation(sut, **options)
        assert not run.found, f"{sut} breaks {run.violation} (seed {run.seed}) in simulation: {run.trace}"
        assert run.stats.steps > 800 and run.stats.hooks_timed_out > 20 and run.stats.crashes_simulated > 20
        return
    run = run_model(sut, **options)  # a finding is written to $PWH_COUNTEREXAMPLES (or the temp dir) and named here
    assert not run.found, f"{sut} breaks {run.violation} (seed {run.seed}); written to {[str(p) for p in run.paths]}"
    if hanging:
        assert run.stats.steps > 30 and run.stats.hooks_timed_out > 0 and run.stats.crashes_simulated > 0
    else:
        assert run.stats.steps > 100 and run.stats.crashes_simulated > 0 and run.stats.restarts > 0


# The simulation engine's search for each mutant: histories of the soak's length and draw weights.
SEARCH: dict[str, Any] = {"max_examples": 40, "steps": 20, "weights": SOAK_WEIGHTS}


class _Finds:
    """Each broken adapter's search in simulation, made once per module (the export test reuses
    one); an exported finding is shrunk (in simulation) and written as JSON and Gherkin."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runs: dict[str, object] = {}

    def __call__(self, name: str):  # type: ignore[no-untyped-def]
        if name not in self.runs:
            _invariant, seed = CAUGHT_BY[name]
            exported = name in EXPORTED
            run = run_simulation(f"mutant:{name}", seed=seed, shrink_budget_s=8.0 if exported else None, **SEARCH)
            if exported and run.trace is not None:
                run.paths = write_counterexample(run.trace, self.root / name)
            self.runs[name] = run
        return self.runs[name]


@pytest.fixture(scope="module")
def finds(tmp_path_factory: pytest.TempPathFactory) -> _Finds:
    return _Finds(tmp_path_factory.mktemp("counterexamples"))


def test_caught_by_is_the_registry() -> None:
    """Every mutant the registry gives to the models has a model test naming its invariant, and
    every model test's mutant is one the registry gives to the models."""
    assert set(CAUGHT_BY) == set(caught_by("models")), sorted(set(CAUGHT_BY) ^ set(caught_by("models")))
    assert EXPORTED <= set(CAUGHT_BY) and set(EXPLICIT) <= set(CAUGHT_BY)


@pytest.mark.parametrize("name", sorted(CAUGHT_BY))
def test_the_model_finds_each_mutant(name: str, finds: _Finds) -> None:
    run = finds(name)
    invariant = CAUGHT_BY[name][0]
    assert run.found, f"{name} was not found"
    assert (run.violation.row, run.violation.invariant) == (MUTANTS[name].row, invariant), run.violation
    if name not in EXPORTED:
        return
    trace_file, feature_file = run.paths
    feature = feature_file.read_text()
    assert f"  @{MUTANTS[name].row}\n" in feature and "Not portable" not in feature, feature
    assert json.loads(trace_file.read_text())["violation"]["invariant"] == invariant


def test_an_exported_scenario_fails_on_its_adapter_and_passes_on_the_reference(tmp_path: Path, finds: _Finds) -> None:
    feature = finds("conflict_overwrites").paths[1]
    features = tmp_path / "features"
    shutil.copytree(ROOT / "features", features)
    shutil.copy(feature, features / feature.name)
    problems, _ = check(features, step_definitions(load_step_modules("scenarios")))
    assert problems == [], problems

    def gate(sut: str) -> tuple[int, dict]:  # type: ignore[type-arg]
        out = tmp_path / f"{sut.replace(':', '_')}.json"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pwh",
                "gate",
                "--quiet",
                "--features",
                str(features),
                "--sut",
                sut,
                "--rows",
                "M06",
                "--json",
                str(out),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
        return proc.returncode, json.loads(out.read_text())

    with ThreadPoolExecutor(max_workers=2) as pool:
        (broken_rc, broken), (ref_rc, ref) = pool.map(gate, ["mutant:conflict_overwrites", "reference"])
    mine = lambda verdict: [s["outcome"] for s in verdict["scenarios"] if s["feature"].endswith(feature.name)]  # noqa: E731
    assert broken_rc == 1 and broken["rows"]["M06"]["status"] == "fail" and mine(broken) == ["failed"]
    assert ref_rc == 0 and ref["rows"]["M06"]["status"] == "pass" and mine(ref) == ["passed"]


def test_a_trace_replays_and_the_cli_exit_codes_follow_it(tmp_path: Path, finds: _Finds, capsys: pytest.CaptureFixture[str]) -> None:
    trace_file = finds("replay_calls_provider").paths[0]
    with pytest.raises(ReplayError, match="never chooses code"):
        replay_trace(trace_file)  # the trace names a mutant adapter: only its caller may choose it
    again = replay_trace(trace_file, json.loads(Path(trace_file).read_text())["sut"])
    assert again.failed and again.same_as_recorded
    assert not replay_trace(trace_file, "reference").failed

    parser = argparse.ArgumentParser(prog="pwh")
    add_model_commands(parser.add_subparsers())

    def cli(*argv: str) -> int:
        args = parser.parse_args(list(argv))
        return args.handler(args)

    mutant = json.loads(Path(trace_file).read_text())["sut"]
    assert cli("replay", str(trace_file)) == 2  # the trace names code: it is refused, never run
    assert cli("replay", str(trace_file), "--sut", mutant) == 1
    assert cli("replay", str(trace_file), "--sut", "reference") == 0
    assert cli("replay", str(tmp_path / "missing.json")) == 2
    (tmp_path / "bad.json").write_text('{"schema_version": "pwh_model_trace_v0", "sut": "reference", "steps": [{"op": "jump"}]}')
    assert cli("replay", str(tmp_path / "bad.json")) == 2
    assert cli("replay", str(trace_file), "--sut", "no_such_module_xyz:f") == 2
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err and "pwh: error:" in out.err


def test_real_sigkill_crashes_recover_from_the_same_directory() -> None:
    before = _children()
    steps = [
        SETUP,
        {"op": "install", "hook": "a.alpha", "behaviour": "proposes one intent"},
        {"op": "install", "hook": "b.bravo", "behaviour": "fails on its first call only"},
        {"op": "crash", "point": "sidecar.after_provider_returned", "action": "replan", "real": True},
        {"op": "crash", "point": "primary.inside_writeback", "action": "complete_todo", "real": True},
        {"op": "crash", "point": "sidecar.inside_record_transaction", "action": "complete_todo", "real": True},
        {"op": "turn", "action": "complete_todo"},
        {"op": "replay", "writeback": 2},
    ]
    assert run_steps("reference", steps) == (len(steps), None)
    # The child is composed under the profile the run's steps left, not the one it began with.
    steps = steps[:3] + [
        {"op": "profile", "setting": "allowlist", "value": "b.bravo"},
        {"op": "profile", "setting": "timeout_cap", "value": 100},
        {"op": "profile", "setting": "timeout_cap", "value": 30000},
        {"op": "crash", "point": "sidecar.after_provider_returned", "action": "replan", "real": True},
        {"op": "profile", "setting": "allowlist", "value": None},
        {"op": "crash", "point": "sidecar.inside_record_transaction", "action": "complete_todo", "real": True},
        {"op": "replay", "writeback": 1},
    ]
    assert run_steps("reference", steps) == (len(steps), None)
    run = run_model("reference", seed=2, real_crashes=True, max_examples=2, steps=5, export=False)
    assert not run.found, run.violation
    assert run.stats.crashes_real > 0 and run.stats.crashes_simulated == 0
    assert _children() <= before


def test_a_policy_version_change_is_a_new_identity_and_never_rewrites_history() -> None:
    system = ModelSystem("reference")
    try:
        for step in (
            SETUP,
            {"op": "install_versioned", "hook": "a.alpha", "version": "v1"},
            {"op": "turn", "action": "complete_todo"},
            {"op": "policy", "hook": "a.alpha", "version": "v2"},
            {"op": "redeliver", "writeback": 1},
            {"op": "replay", "writeback": 1},
            {"op": "turn", "action": "replan"},
        ):
            system.apply(step)
        records = system.journal()
        versions = [i["policy_version"] for r in records for i in r["intents"]]
        assert versions == ["v1", "v2"] and len({i["intent_id"] for r in records for i in r["intents"]}) == 2
        conflict = system.episodes[1].outcome.hooks[0]
        assert conflict.failure_code == "intent_conflict" and conflict.intents[0]["policy_version"] == "v1"
    finally:
        system.close()
    assert (
        run_steps(
            "reference",
            [
                SETUP,
                {"op": "install_versioned", "hook": "a.alpha", "version": "v1"},
                {"op": "turn", "action": "complete_todo"},
                {"op": "policy", "hook": "a.alpha", "version": "v2"},
                {"op": "redeliver", "writeback": 1},
                {"op": "replay", "writeback": 1},
            ],
        )[1]
        is None
    )


def test_a_hung_hook_costs_only_its_timeout_on_the_reference() -> None:
    steps = [
        SETUP,
        {"op": "install", "hook": "a.alpha", "behaviour": "does not return within its timeout"},
        {"op": "install", "hook": "b.bravo", "behaviour": "proposes one intent"},
        {"op": "turn", "action": "complete_todo"},
        {"op": "replay", "writeback": 1},
    ]
    assert run_steps("reference", steps) == (len(steps), None)


def test_traces_are_checked_before_they_run(tmp_path: Path) -> None:
    def bad(trace: object) -> str:
        path = tmp_path / "t.json"
        path.write_text(json.dumps(trace))
        with pytest.raises(TraceError) as caught:
            load_trace(path)
        return str(caught.value)

    base = {"schema_version": "pwh_model_trace_v0", "seed": 1, "sut": "reference"}
    assert "not a pwh_model_trace_v0" in bad({"steps": []})
    assert "first step" in bad({**base, "steps": [{"op": "restart"}]})
    assert "hook id" in bad({**base, "steps": [SETUP, {"op": "install", "hook": "../x", "behaviour": "raises an error"}]})
    assert "behaviour" in bad({**base, "steps": [SETUP, {"op": "install", "hook": "a.alpha", "behaviour": "deletes the disk"}]})
    assert "receipt flaw" in bad({**base, "steps": [SETUP, {"op": "bad_receipt", "flaw": "half_committed"}]})
    assert "registration flaw" in bad({**base, "steps": [SETUP, {"op": "bad_register", "hook": "a.alpha", "flaw": "a bad mood"}]})
    assert "profile step" in bad({**base, "steps": [SETUP, {"op": "profile", "setting": "phase", "value": "off"}]})
    assert "profile step" in bad({**base, "steps": [SETUP, {"op": "profile", "setting": "allowlist", "value": ["a.alpha"]}]})
    assert "profile step" in bad({**base, "steps": [SETUP, {"op": "profile", "setting": "ceiling", "value": 0}]})
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({**base, "steps": [SETUP, {"op": "bad_register", "hook": "a.alpha", "flaw": "registered a second time"}]}))
    with pytest.raises(StepNotApplicable):
        replay_trace(path)  # a second registration of a hook that was never installed
    path.write_text(json.dumps({**base, "steps": [SETUP, {"op": "replay", "writeback": 4}]}))
    with pytest.raises(StepNotApplicable):
        replay_trace(path)


# -- each invariant, broken by its own mutant in a few explicit steps ---------------------------

T_DONE = {"op": "turn", "action": "complete_todo"}
TWO_HOOKS = [
    SETUP,
    {"op": "install", "hook": "a.alpha", "behaviour": "proposes one intent"},
    {"op": "install", "hook": "b.bravo", "behaviour": "raises an error"},
]
REPLAY_1 = {"op": "replay", "writeback": 1}

# mutant -> steps on which the reference keeps every invariant and the mutant breaks exactly the
# one CAUGHT_BY names (deterministic: no Hypothesis, a fraction of a second each).
EXPLICIT: dict[str, list[dict]] = {  # type: ignore[type-arg]
    "forgets_last_hook": TWO_HOOKS + [T_DONE],
    "leaks_provider_text": TWO_HOOKS + [T_DONE],
    "new_identity_after_restart": TWO_HOOKS + [{"op": "restart"}, T_DONE, {"op": "restart"}],
    "reports_a_record_twice": TWO_HOOKS + [T_DONE],
    "admits_uncommitted": TWO_HOOKS
    + [
        T_DONE,
        {"op": "bad_receipt", "flaw": "not_durable"},
        {"op": "bad_receipt", "flaw": "effect_mismatch"},
        {"op": "bad_receipt", "flaw": "prepared"},
    ],
    "registry_replaces_duplicates": TWO_HOOKS
    + [
        {"op": "bad_register", "hook": "c.charlie", "flaw": "a command field"},
        {"op": "bad_register", "hook": "a.alpha", "flaw": "registered a second time"},
    ],
    "phase_stays_on": TWO_HOOKS + [T_DONE, {"op": "profile", "setting": "phase", "value": False}, T_DONE],
    "shares_mutable_input": [
        SETUP,
        {"op": "install", "hook": "a.alpha", "behaviour": "tries to change its input"},
        {"op": "install", "hook": "b.bravo", "behaviour": "proposes one intent"},
        T_DONE,
    ],
    "identity_by_capability": TWO_HOOKS
    + [T_DONE, {"op": "install", "hook": "a.sibling", "behaviour": "proposes one intent"}, {"op": "turn", "action": "replan"}],
    "replay_rewrites_record": TWO_HOOKS + [T_DONE, REPLAY_1],
    "raised_is_timed_out": TWO_HOOKS + [T_DONE],
    "lets_provider_errors_out": TWO_HOOKS + [T_DONE],
    "one_hook_only": TWO_HOOKS,
    "ignores_crash_points": TWO_HOOKS + [{"op": "crash", "point": "sidecar.after_record", "action": "replan", "real": False}],
    "replay_under_new_profile": [
        SETUP,
        {"op": "install", "hook": "a.alpha", "behaviour": "proposes two intents"},
        T_DONE,
        {"op": "profile", "setting": "ceiling", "value": 1},
        REPLAY_1,
        {"op": "restart"},
        REPLAY_1,
    ],
}


@pytest.mark.parametrize("name", sorted(EXPLICIT))
@pytest.mark.parametrize("simulated", [False, True], ids=["real mode", "simulation"])
def test_each_invariant_fails_when_its_rule_is_broken(name: str, simulated: bool) -> None:
    steps = EXPLICIT[name]
    assert run_steps("reference", steps, simulated=simulated) == (len(steps), None)
    _, violation = run_steps(f"mutant:{name}", steps, simulated=simulated)
    assert violation is not None and (violation.row, violation.invariant) == (MUTANTS[name].row, CAUGHT_BY[name][0]), violation


class _SlowMachineDispatcher(Dispatcher):
    """Every provider is 0.6 s late in real time, as on a machine too busy to run it within its
    0.5 s limit: started late (``late_start``) or answering late. The real runner times it out,
    after waiting that long."""

    late_start = True

    def _call_spec(self, hook, hook_input):  # type: ignore[no-untyped-def]
        producer, *rest = super()._call_spec(hook, hook_input)
        late_start = self.late_start

        def slow(given):  # type: ignore[no-untyped-def]
            if late_start:
                time.sleep(0.6)
            answer = producer(given)
            time.sleep(0 if late_start else 0.6)
            return answer

        return (slow, *rest)


class _AnswersLate(_SlowMachineDispatcher):
    late_start = False


def slow_machine_sut(**kw: Any) -> ReferenceSUT:
    return type("SlowMachine", (ReferenceSUT,), {"dispatcher_class": _SlowMachineDispatcher})(journal="memory", runner=ThreadRunner())


def late_answer_sut(**kw: Any) -> ReferenceSUT:
    return type("LateAnswers", (ReferenceSUT,), {"dispatcher_class": _AnswersLate})(journal="memory", runner=ThreadRunner())


@pytest.mark.parametrize("factory", ["slow_machine_sut", "late_answer_sut"])
def test_a_timeout_the_machine_caused_is_not_the_suts_in_real_mode(factory: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """In real mode an ordinary provider timed out by a dispatch that did wait its limit (started
    late, or answering late) is the machine's doing (the runner must hold it to its limit), never a
    finding; one timed out sooner is the SUT's (``raised_is_timed_out`` above, in both modes).
    Without the excuse, the same run is a finding."""
    from pwh._campaigns.models import invariants

    steps, sut = [*TWO_HOOKS, T_DONE], f"tests.campaigns.test_models:{factory}"
    assert run_steps(sut, steps) == (len(steps), None)
    monkeypatch.setattr(invariants, "_slow_machine", lambda *a: False)
    _, violation = run_steps(sut, steps)
    assert violation is not None and violation.invariant == "isolated_failure", violation


def test_profile_changes_govern_later_dispatches_and_leave_history_alone() -> None:
    """Phase off, allowlist, lowered intent ceiling and timeout cap, retry cap: each governs the
    dispatches after it; replays of what was recorded before still return it byte for byte."""
    steps = TWO_HOOKS + [
        T_DONE,
        {"op": "profile", "setting": "phase", "value": False},
        T_DONE,
        REPLAY_1,
        {"op": "profile", "setting": "phase", "value": True},
        {"op": "replay", "writeback": 2},
        {"op": "profile", "setting": "allowlist", "value": "b.bravo"},
        {"op": "turn", "action": "replan"},
        REPLAY_1,
        {"op": "profile", "setting": "allowlist", "value": None},
        {"op": "profile", "setting": "ceiling", "value": 1},
        {"op": "install", "hook": "c.charlie", "behaviour": "proposes two intents"},
        T_DONE,
        REPLAY_1,
        {"op": "profile", "setting": "timeout_cap", "value": 100},
        {"op": "turn", "action": "replan"},
        {"op": "install", "hook": "d.delta", "behaviour": "proposes one intent"},
        {"op": "profile", "setting": "timeout_cap", "value": 30000},
        {"op": "profile", "setting": "attempts", "value": 1},
        {"op": "replay", "writeback": 3},
        {"op": "restart"},
        {"op": "replay", "writeback": 1},
    ]
    system = ModelSystem("reference")
    try:
        from pwh._campaigns.models.invariants import Judge

        judge = Judge()
        seen: list[dict[tuple[str, str], tuple[str, str | None]]] = []  # after each step: (receipt, hook) -> status, code
        for step in steps:
            assert judge.check(system, system.apply(step)) is None, step
            seen.append({(r["source_receipt_id"], r["hook_id"]): (r["status"], r["failure_code"]) for r in system.journal()})
        receipts = [r["receipt_id"] for r in system.committed()]
        of = lambda i, n: {h: v for (rid, h), v in seen[i].items() if rid == receipts[n]}  # noqa: E731
        assert of(5, 1) == {} and of(6, 1) == {}  # phase off: nothing dispatched, not even on a replay
        assert set(of(8, 1)) == {"a.alpha", "b.bravo"}  # dispatched on its replay once the phase was back on
        assert set(of(10, 2)) == {"b.bravo"}  # the allowlist admitted b.bravo alone
        assert of(15, 3)["c.charlie"] == ("failed", "dispatch_budget_exhausted")  # over the new ceiling of 1
        assert of(18, 4)["a.alpha"] == ("failed", "registration_rejected")  # over the 100 ms timeout cap
        assert system.bad_calls == []  # d.delta, offered over the cap, was rejected and never called
    finally:
        system.close()


def test_a_hook_that_changes_its_input_changes_nothing_another_hook_sees() -> None:
    steps = [
        SETUP,
        {"op": "install", "hook": "a.alpha", "behaviour": "tries to change its input"},
        {"op": "install", "hook": "a.sibling", "behaviour": "proposes one intent"},
        {"op": "install", "hook": "b.bravo", "behaviour": "proposes one intent"},
        T_DONE,
        {"op": "restart"},
        REPLAY_1,
    ]
    system = ModelSystem("reference")
    try:
        for step in steps:
            system.apply(step)
        todo = system.committed()[0]["todo_id"]
        assert {c.hook_id: json.loads(c.source_seen)["todo_id"] for c in system.calls} == dict.fromkeys(
            ["a.alpha", "a.sibling", "b.bravo"], todo
        )
        ids = {r["hook_id"]: r["dispatch_id"] for r in system.journal()}
        assert len(set(ids.values())) == 3 and ids["a.alpha"] != ids["a.sibling"]  # one capability, two identities
    finally:
        system.close()
    assert run_steps("reference", steps) == (len(steps), None)


@pytest.mark.parametrize(
    "extra",
    [
        [{"op": "redeliver", "writeback": 1}] * 4,
        [{"op": "replay", "writeback": 1}] * 2 + [{"op": "redeliver", "writeback": 1}] + [{"op": "replay", "writeback": 1}] * 2,
        [{"op": "crash", "point": "sidecar.after_provider_returned", "action": "complete_todo", "real": False}]
        + [{"op": "replay", "writeback": 2}] * 3,
    ],
    ids=["redeliveries", "redelivery-between-replays", "crash-between-call-and-record"],
)
def test_the_retry_cap_holds_across_redeliveries_and_crashes(extra: list) -> None:  # type: ignore[type-arg]
    """The full SPEC bound: provider calls per dispatch identity never exceed max_attempts,
    whatever mix of replays, second deliveries and restarts reaches it."""
    system = ModelSystem("reference")
    try:
        for step in [SETUP, {"op": "install", "hook": "a.alpha", "behaviour": "raises an error"}, T_DONE, *extra]:
            system.apply(step)
        calls: dict[str, int] = {}
        for call in system.calls:
            calls[call.dispatch_id] = calls.get(call.dispatch_id, 0) + 1
        assert max(calls.values()) <= system.max_attempts, calls
    finally:
        system.close()


def test_a_counterexample_with_the_new_actions_exports_and_replays(tmp_path: Path) -> None:
    """Bad receipts, bad registrations, profile changes and sibling hooks write as Gherkin lines
    the step library knows, and the JSON trace re-runs."""
    from pwh._campaigns.counterexamples.trace import make_trace, write_counterexample

    steps = EXPLICIT["admits_uncommitted"][:3] + [
        {"op": "install", "hook": "a.sibling", "behaviour": "tries to change its input"},
        {"op": "bad_register", "hook": "c.charlie", "flaw": "duplicate event kinds"},
        {"op": "bad_register", "hook": "b.bravo", "flaw": "registered a second time"},
        {"op": "profile", "setting": "allowlist", "value": "a.alpha"},
        {"op": "profile", "setting": "allowlist", "value": None},
        {"op": "profile", "setting": "phase", "value": False},
        {"op": "profile", "setting": "phase", "value": True},
        {"op": "profile", "setting": "ceiling", "value": 2},
        {"op": "profile", "setting": "attempts", "value": 2},
        {"op": "profile", "setting": "timeout_cap", "value": 100},
        *({"op": "bad_receipt", "flaw": f} for f in ("not_durable", "effect_mismatch", "empty_todo_id", "inferred")),
    ]
    n, violation = run_steps("mutant:admits_uncommitted", steps)
    assert violation is not None and violation.invariant == "bad_receipt_dispatches_nothing" and n == len(steps)
    trace = make_trace(0, "mutant:admits_uncommitted", {}, steps, violation)
    trace_file, feature_file = write_counterexample(trace, tmp_path / "out")
    features = tmp_path / "features"
    shutil.copytree(ROOT / "features", features)
    shutil.copy(feature_file, features / feature_file.name)
    problems, _ = check(features, step_definitions(load_step_modules("scenarios")))
    assert problems == [], problems
    text = feature_file.read_text()
    assert "  @M03\n" in text and "the profile admits every installed hook" in text and "is registered a second time" in text
    with pytest.raises(ReplayError, match="never chooses code"):
        replay_trace(trace_file)  # the trace names a mutant adapter: only its caller may choose it
    again = replay_trace(trace_file, json.loads(Path(trace_file).read_text())["sut"])
    assert again.failed and again.same_as_recorded
    assert not replay_trace(trace_file, "reference").failed


def test_a_soak_never_kills_a_sut_whose_journal_lives_in_memory() -> None:
    """A real crash of reference-memory loses its journal by design; killing it for real once made
    a false M08 finding. It takes no journal directory, so its real-crash rounds are skipped."""
    lines: list[str] = []
    summary = soak(None, "reference-memory", 3, examples=2, out=lines.append, real_crashes=True)  # every round would kill
    assert "pwh soak: this SUT takes no journal directory: real crashes are skipped" in lines
    assert summary["crashes"]["real"] == 0 and summary["violations"] == []
    assert summary["steps"] > 0  # it soaked all the same


def test_a_short_soak_reports_its_seed_progress_and_counts() -> None:
    lines: list[str] = []
    summary = soak(None, "reference", 5, examples=2, out=lines.append)
    assert lines[0] == "pwh soak: seed 5" and "pwh soak: SUT 'reference' for 2 examples, profile ci" in lines[1]
    assert summary["violations"] == [] and summary["counterexamples"] == []
    assert summary["examples"] >= 2 and summary["steps"] > 0 and summary["rounds"] >= 1
    assert (summary["minutes"], summary["max_examples"]) == (None, 2)
    assert set(summary["crashes"]) == {"simulated", "real"} and "restarts" in summary
    assert lines[-1].startswith("pwh soak: done in")


def _soaked(summary: dict[str, Any]) -> tuple[Any, ...]:
    """What a soak ran, apart from how long it took."""
    return summary["examples"], summary["steps"], summary["rounds"], summary["crashes"], summary["coverage"]


def test_a_soak_given_examples_runs_the_same_histories_however_fast_it_runs() -> None:
    """``--examples N``: a soak ends when N histories are drawn, so one seed runs the same histories
    on a quiet or a loaded machine (what it exercised is the same); given minutes too, whichever
    budget is spent first ends it."""
    from pwh._campaigns.engine import ROUND_EXAMPLES

    quiet = lambda line: None  # noqa: E731
    # Three examples long before a minute: the examples end it (a soak that ignored them would run
    # the minute, many rounds: so this one comes first, the soaks with no time budget after it).
    either = soak(1, "reference-memory", 6, examples=3, real_crashes=False, out=quiet)
    assert either["rounds"] == 1 and 3 <= either["examples"] < ROUND_EXAMPLES and either["steps"] > 0  # not a whole round
    once = soak(None, "reference-memory", 6, examples=3, real_crashes=False, out=quiet)
    again = soak(None, "reference-memory", 6, examples=3, real_crashes=False, out=quiet)
    assert _soaked(once) == _soaked(again) == _soaked(either) and (either["minutes"], either["max_examples"]) == (1, 3)
    # A time budget of a few milliseconds ends the soak after the round it started, whatever its examples.
    timed = soak(0.0001, "reference-memory", 6, examples=30, real_crashes=False, out=quiet)
    assert timed["rounds"] == 1 and timed["examples"] < 30
    with pytest.raises(ValueError, match="needs a budget"):
        soak(None, "reference-memory", 6, out=quiet)
    with pytest.raises(ValueError, match="examples must be at least 1"):
        soak(None, "reference-memory", 6, examples=0, out=quiet)


def test_pwh_soak_profile_sets_how_long_each_history_is() -> None:
    """``pwh soak --profile``: the tests' profile names, read from one table; ``dev`` histories are
    50 steps where ``ci``'s are 20, so a dev soak averages more than 20 steps an example (three
    examples from seed 4: 156 steps)."""
    from pwh._campaigns.models.profiles import PROFILES

    done = subprocess.run(
        [sys.executable, "-m", "pwh", "soak", "--examples", "3", "--profile", "dev", "--no-real-crashes", "--no-database", "--seed", "4"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"profile dev ({PROFILES['dev'].soak_steps} steps a history)" in done.stdout
    examples, steps = (int(n) for n in re.search(r"(\d+) examples, (\d+) steps", done.stdout).groups())  # type: ignore[union-attr]
    assert steps / examples > PROFILES["ci"].soak_steps, done.stdout
    from hypothesis import settings

    assert settings.get_profile("dev").max_examples == PROFILES["dev"].max_examples  # the tests' profiles are the same table


# -- swarm testing, the coverage report and the example database (issue 20) --------------------


def _swarm_coverage(seed: int) -> dict[str, Any]:
    from pwh._campaigns.models.coverage import Coverage

    coverage = Coverage()
    run = run_model("reference-memory", seed=seed, max_examples=6, steps=10, swarm=True, coverage=coverage, shrink="none", export=False)
    assert not run.found, run.violation
    return coverage.to_json()


def test_swarm_examples_leave_out_a_subset_and_what_is_left_out_never_runs() -> None:
    from pwh._campaigns.models.machine import SWARM_RULES, ModelMachine

    assert {r.function.__name__ for r in ModelMachine.setup_state().rules} == {"turn", *SWARM_RULES}  # every rule but turn
    first, again, other = _swarm_coverage(1), _swarm_coverage(1), _swarm_coverage(2)
    swarm = first["swarm"]
    assert swarm["examples"] == first["examples"] > 1 and swarm["configurations"] > 1
    assert first == again  # one seed, the same configurations (and so the same counts)
    assert swarm["disabled"]["actions"] != other["swarm"]["disabled"]["actions"]  # another seed, other subsets
    assert all(sum(swarm["disabled"][kind].values()) > 0 for kind in ("actions", "behaviours", "crash_points")), swarm
    assert "turn" not in swarm["disabled"]["actions"] and first["actions"]["turn"] > 0
    # Counted as each step runs, apart from the preconditions: whatever an example left out never ran in it.
    assert swarm["ran_while_disabled"] == {"actions": {}, "behaviours": {}, "crash_points": {}}, swarm["ran_while_disabled"]


def test_a_soak_reports_what_it_exercised(tmp_path: Path) -> None:
    from pwh._campaigns.models.coverage import Coverage
    from pwh._campaigns.models.machine import SWARM_RULES

    path = tmp_path / "soak.json"
    done = subprocess.run(
        # six histories from seed 6 install, turn, restart, change the profile and crash (an examples
        # budget: the same histories on any machine, however loaded), and leave some actions,
        # behaviours and crash points never exercised, which the report must then name
        [sys.executable, "-m", "pwh", "soak", "--examples", "6", "--no-real-crashes", "--sut", "reference-memory", "--seed", "6"]
        + ["--json", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PWH_COUNTEREXAMPLES": str(tmp_path / "found")},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    report = [line for line in lines if line.startswith("pwh soak: coverage: ")]
    assert len(report) == 5 and lines[-2].startswith("pwh soak: done in"), done.stdout
    assert lines[-1] == "wrote soak.json", done.stdout  # the summary file, said last
    summary = json.loads(path.read_text())
    cov = summary["coverage"]
    assert summary["swarm"] is True and cov["schema"] == "pwh_model_coverage_v1"
    assert summary["example_database"].startswith(str(tmp_path / "found" / "hypothesis-examples"))  # pwh soak's default
    assert set(cov) == {
        "schema",
        "examples",
        "steps",
        "actions",
        "behaviours",
        "crash_points",
        "invariants",
        "invariants_counted",
        "profile_divergences",
        "swarm",
        "never_exercised",
    }
    assert (cov["examples"], cov["steps"]) == (summary["examples"], summary["steps"]) and cov["invariants_counted"]
    assert set(cov["actions"]) == {"setup", "turn", *SWARM_RULES}
    assert all(cov["actions"][a] > 0 for a in ("setup", "turn", "install", "profile", "restart")), cov["actions"]
    from pwh._campaigns.models.invariants import INVARIANTS

    # Every RFC invariant has a mutant the models catch but these (retry_bounded's and
    # progress_dispatches_nothing's: tests/campaigns/test_invariant_kinds.py plants adapters for them).
    no_mutant = {"intent_once", "journal_bounded", "not_in_rollout_append", "retry_bounded", "progress_dispatches_nothing"}
    assert {i for i, _ in CAUGHT_BY.values()} | no_mutant == {i for i, d in INVARIANTS.items() if d.kind == "rfc"}
    assert set(INVARIANTS) == set(cov["invariants"])  # every invariant reported, with its kind
    for name, declared in INVARIANTS.items():
        assert {k: cov["invariants"][name][k] for k in declared.to_json()} == declared.to_json(), name
    assert cov["profile_divergences"] == {} and summary["profile_divergences"] == []  # the reference is pwh's reading
    kinds = "\n".join(line for line in lines if line.startswith(("pwh soak: RFC invariants", "pwh soak: profile invariants")))
    assert all(declared.shown() in kinds for declared in INVARIANTS.values()), kinds  # each with its clauses or reading
    for name in ("primary_untouched", "history_kept", "stable_identity", "journal_public_safe", "one_outcome_per_hook"):
        assert cov["invariants"][name]["checked"] >= cov["steps"] > 0, name
    assert all(c["held"] == c["checked"] and c["broken"] == 0 for c in cov["invariants"].values())  # the reference
    reached = {p: sum(c["reached"].values()) for p, c in cov["crash_points"].items()}
    assert sum(c["reached"]["simulated"] for c in cov["crash_points"].values()) == summary["crashes"]["simulated"] > 0
    assert all(all(c["armed"][m] >= c["reached"][m] for m in ("simulated", "real")) for c in cov["crash_points"].values())
    assert set(cov["swarm"]) == {"examples", "configurations", "disabled", "ran_while_disabled"} and cov["swarm"]["examples"] > 0
    never = cov["never_exercised"]
    assert never["actions"] == sorted(a for a, n in cov["actions"].items() if not n)
    assert never["behaviours"] == sorted(b for b, n in cov["behaviours"].items() if not n)
    assert never["crash_points"] == sorted(p for p, n in reached.items() if not n) and never["crash_points_real"] == []
    assert never["invariants"] == []
    for kind, names in never.items():
        assert not names or any(", ".join(names) in line for line in report), (kind, report)
    # Whatever could have run and did not is named as such.
    empty = Coverage()
    empty.begin_example(["setup", "turn"], ["proposes one intent", "raises an error"], ["primary.after_spend"], False)
    empty.rule("turn", None)
    text = "\n".join(empty.lines())
    assert "never exercised: setup" in text and "never installed: proposes one intent, raises an error" in text
    assert "never reached: primary.after_spend" in text and "never checked: attempts_counted, bad_receipt_dispatches_nothing" in text
    assert "swarm off" in text


def test_a_soak_remembers_its_failures_and_tries_them_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure a soak found is in the example database, and the next soak of that SUT, from another
    seed, finds it at its very first example; the same soak without the database does not."""
    from pwh._campaigns.soak import example_database_dir

    monkeypatch.setenv("PWH_COUNTEREXAMPLES", str(tmp_path))
    sut, quiet = "mutant:out_of_order", lambda line: None
    database = example_database_dir(sut)

    def hook_order(summary: dict[str, Any]) -> dict[str, Any]:
        return next(v for v in summary["violations"] if v["invariant"] == "hook_order")

    # The example database is Hypothesis's: these soaks run in real time (simulate=False).
    first = soak(None, sut, 2, examples=2, real_crashes=False, out=quiet, database=True, simulate=False)  # seed 2: at the second example
    assert first["example_database"] == str(database) and hook_order(first)["example"] > 1
    assert any(p.is_file() for p in database.rglob("*")), "nothing was saved to the example database"
    without = soak(None, sut, 1, examples=2, real_crashes=False, out=quiet, simulate=False)  # the library's default: no database
    assert without["example_database"] is None
    assert without["violations"] == [] and without["examples"] >= 2  # seed 1 alone does not find it in its first examples
    again = soak(None, sut, 1, examples=2, real_crashes=False, out=quiet, database=True, simulate=False)
    refound = hook_order(again)
    assert (refound["round"], refound["example"]) == (0, 1), refound
    # Its trace names the swarm configuration that found it, and replays from its steps alone.
    trace_file = next(Path(p) for p in again["counterexamples"] if p.endswith(".json") and "hook_order" in p)
    trace = json.loads(trace_file.read_text())
    assert trace["swarm"] == refound["swarm"] and set(trace["swarm"]) == {"rules_off", "behaviours_off", "points_off"}
    replayed = replay_trace(trace_file, sut)
    assert replayed.failed and replayed.same_as_recorded
    assert not replay_trace(trace_file, "reference").failed


def test_pwh_soak_benchmark_quick_reports_each_figure_beside_its_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``pwh soak --benchmark --quick --json PATH`` (a few seconds): steps/s in the three modes and
    each quick mutant's time to find, every target on the terminal with met or MISSED, and JSON of
    the same; options that choose what a soak runs are refused (exit 2) before anything runs."""
    from pwh._campaigns.search_bench import MODES, QUICK_MUTANTS, SCHEMA

    out = tmp_path / "bench" / "models.json"
    done = subprocess.run(
        [sys.executable, "-m", "pwh", "soak", "--benchmark", "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["schema_version"] == SCHEMA and result["quick"] is True and result["reference_violations"] == []
    assert set(result["modes"]) == {m.name for m in MODES}
    for mode in MODES:
        figure = result["modes"][mode.name]
        assert (figure["sut"], figure["real_crashes"], figure["target"]) == (mode.sut, mode.real_crashes, mode.target)
        assert figure["steps"] > 0 and figure["seconds"] > 0
        assert figure["steps_per_s"] == round(figure["steps"] / figure["seconds"], 1)
    assert result["modes"]["simulation"]["target"] == 1000 and result["modes"]["simulation"]["simulated"] is True
    assert [m.name for m in MODES if m.target is not None] == ["simulation"]  # the real-time modes are measured, with no target
    assert set(result["mutants"]) == set(QUICK_MUTANTS)
    for name in QUICK_MUTANTS:
        m = result["mutants"][name]
        assert m["row"] == MUTANTS[name].row and m["found"] and [r["seed"] for r in m["runs"]] == [1]
        # found in the search's first round, which runs whole however long it takes (its cap is checked between rounds)
        assert m["runs"][0]["invariant"] == CAUGHT_BY[name][0] and 0 < m["median_s"] == m["max_s"] < float("inf")
    assert result["summary"]["found"] == result["summary"]["mutants"] == len(QUICK_MUTANTS)
    names = [t["name"] for t in result["targets"]]
    assert names[0].startswith("steps/s, simulation, in-memory journal") and len(names) == 6, names
    # each quick mutant's finding in simulation was replayed in real mode and shown again there
    assert result["summary"]["confirmed"] == result["summary"]["confirm_tried"] == len(QUICK_MUTANTS)
    assert [m["confirmed_in_real_mode"] for m in result["mutants"].values()] == [True] * len(QUICK_MUTANTS)
    assert re.search(r"^  findings shown again in real mode +2/2  all: met$", done.stdout, re.M), done.stdout
    assert result["scaling"] is None and result["targets"][1]["met"] is None  # the 2-worker scaling: the full run only
    for target in result["targets"]:
        if target["met"] is None:
            assert re.search(rf"^  {re.escape(target['name'])} .*: not measured$", done.stdout, re.M), done.stdout
            continue
        verdict = "met" if target["met"] else "MISSED"
        assert re.search(rf"^  {re.escape(target['name'])} .*{re.escape(target['target'])}: {verdict}$", done.stdout, re.M), done.stdout
    assert re.search(r"^simulation, in-memory journal, virtual time .* >= 1000: (met|MISSED)$", done.stdout, re.M), done.stdout

    from pwh._cli import main

    for refused in (["--campaign", "reliability"], ["--minutes", "1"], ["--sut", "reference"], ["--no-real-crashes"]):
        assert main(["soak", "--benchmark", *refused]) == 2, refused
        said = capsys.readouterr()
        assert f"drop {refused[0]}" in said.err and said.out == "", (refused, said)


def test_the_benchmark_reports_missed_when_a_target_is_not_met() -> None:
    """The benchmark's target check can fail: a mutant not found within its cap is "not found" and
    misses every mutant target; a mode below its rate misses its target, one at it meets it."""
    from pwh._campaigns.search_bench import evaluate_targets, render_table, run_benchmark, to_json

    lines: list[str] = []
    result = run_benchmark(modes=[], mutants=["replay_under_new_profile"], seeds=[1], cap_s=0.001, warm_up=False, out=lines.append)
    run = result["mutants"]["replay_under_new_profile"]["runs"][0]
    assert not run["found"] and run["seconds"] == float("inf") and run["rounds"] <= 1  # none at all if the cap passed before the first
    assert [t["met"] for t in result["targets"]] == [None, False, False, False, None]  # scaling and real mode: not measured
    table = render_table(result)
    assert "not found" in table and table.count(": MISSED") == 3, table
    assert json.loads(json.dumps(to_json(result), allow_nan=False))["summary"]["max_s"] is None  # strict JSON

    def rate(steps_per_s: float) -> list[object]:
        mode = {"label": "in-memory journal, simulated crashes", "steps_per_s": steps_per_s, "target": 1000.0}
        return [t["met"] for t in evaluate_targets({"modes": {"memory_simulated": mode}, "summary": result["summary"]})][:1]

    assert rate(999.9) == [False] and rate(1000.0) == [True]

    def scaled(by: float) -> object:
        targets = evaluate_targets({"modes": {}, "scaling": {"scaling": by}, "summary": result["summary"]})
        return next(t["met"] for t in targets if t["name"].startswith("steps/s, 2 workers"))

    assert scaled(1.79) is False and scaled(1.8) is True


# -- pwh soak --workers: the cores of one machine (issue 20) ------------------------------------


def _soak_workers(tmp_path: Path, sut: str, *extra: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    path = tmp_path / "soak.json"
    done = subprocess.run(
        [sys.executable, "-m", "pwh", "soak", "--examples", "3", "--workers", "2", "--no-real-crashes", "--sut", sut]
        + ["--seed", "6", "--json", str(path), *extra],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PWH_COUNTEREXAMPLES": str(tmp_path / "found")},
    )
    assert path.is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    return done, json.loads(path.read_text())


def _observations_agree(path: Path, summary: dict[str, Any]) -> None:
    """The workers' observations (concatenated into one file, every line under the schema) merge to
    the same totals and findings as the summary the parent merged in memory."""
    from pwh._campaigns.observations import merge, read_observations

    records = read_observations([path])
    merged = merge(records)
    assert sorted(r["run"]["worker"] for r in records if r["record"] == "start") == [1, 2]
    for key in ("steps", "examples", "rounds"):
        assert merged[key] == summary[key], key
    assert merged["ended"] == 2
    found = {f["key"]: f["times"] for f in merged["findings"]}
    assert found == {f"{v['row']} {v['invariant']}": v["times"] for v in summary["violations"]}
    shown = subprocess.run([sys.executable, "-m", "pwh", "report", str(path), str(path)], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 1 and "2 run(s)" in shown.stdout and "M05 no_call_after_final" in shown.stdout, shown.stdout + shown.stderr


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/status").is_file() and "zombie" in Path(f"/proc/{pid}/status").read_text()


def test_pwh_soak_workers_runs_soaks_at_once_and_merges_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--workers 2`` on a mutant both workers find (three examples each, from seed 6): two worker
    seeds derived from the one seed, the counts the sum of the workers' own, a merged coverage
    report, the bug listed once with the times found summed, every worker's counterexample listed,
    lines prefixed by worker, and no worker left."""
    observed = tmp_path / "observations.jsonl"
    done, summary = _soak_workers(tmp_path, "mutant:replay_calls_provider", "--no-database", "--observations", str(observed))
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    _observations_agree(observed, summary)
    assert summary["workers"] == 2 and summary["seed"] == 6 and summary["max_examples"] == 3
    seeds = summary["worker_seeds"]
    assert len(set(seeds)) == 2 and seeds == [w["seed"] for w in summary["per_worker"]]
    for key in ("steps", "examples", "rounds"):
        assert summary[key] == sum(w[key] for w in summary["per_worker"]) > 0, key
    coverage = summary["coverage"]
    assert coverage["steps"] == summary["steps"] and coverage["examples"] == summary["examples"]
    assert sum(coverage["actions"].values()) > 0 and any(i["checked"] for i in coverage["invariants"].values())
    keys = [(v["row"], v["invariant"]) for v in summary["violations"]]
    assert len(keys) == len(set(keys)) and ("M05", "no_call_after_final") in keys, keys
    assert all("M05 no_call_after_final" in w["violations"] for w in summary["per_worker"])  # each worker found it
    for v in summary["violations"]:
        key = f"{v['row']} {v['invariant']}"
        assert v["times"] == sum(w["violations"].get(key, 0) for w in summary["per_worker"]) >= 1
    assert all(Path(p).is_file() for p in summary["counterexamples"])
    assert len(summary["counterexamples"]) >= sum(len(w["violations"]) for w in summary["per_worker"])  # a trace each, at least
    assert "[w1] pwh soak: seed" in done.stdout and "[w2] pwh soak: seed" in done.stdout
    assert "Traceback" not in done.stderr
    pids = [w["pid"] for w in summary["per_worker"]]
    assert len(set(pids)) == 2 and all(_gone(pid) for pid in pids), pids
    from pwh._cli import main

    assert main(["soak", "--examples", "3", "--workers", "0"]) == 2  # refused before any work
    bad = capsys.readouterr().err
    assert bad.strip().count("\n") == 0 and "--workers must be at least 1" in bad, bad


def test_ctrl_c_stops_every_soak_worker_without_a_traceback() -> None:
    """A SIGINT to ``pwh soak --workers 2`` ends it with 130 and one line: the workers (which ignore
    SIGINT) are stopped by the parent, none prints a traceback and none is left running."""
    import signal
    import time

    argv = [sys.executable, "-m", "pwh", "soak", "--minutes", "10", "--workers", "2", "--no-real-crashes", "--sut", "reference-memory"]
    with subprocess.Popen(
        [*argv, "--no-database"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL
    ) as pwh:
        try:
            assert pwh.stdout is not None
            started: set[str] = set()
            while len(started) < 2:  # both workers are soaking
                line = pwh.stdout.readline()
                assert line, "pwh soak ended before its workers started"
                if " pwh soak: SUT " in line:
                    started.add(line.split()[0])
            children = [int(p) for p in Path(f"/proc/{pwh.pid}/task/{pwh.pid}/children").read_text().split()]
            pwh.send_signal(signal.SIGINT)
            out, err = pwh.communicate(timeout=30)
        finally:
            if pwh.poll() is None:
                pwh.kill()
    assert pwh.returncode == 130 and "Traceback" not in err + out and err.strip() == "pwh: interrupted", err
    deadline = time.monotonic() + 5
    while not all(_gone(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert children and all(_gone(pid) for pid in children), children


def test_the_scaling_figure_compares_two_workers_with_the_same_histories_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each worker's seed is soaked alone, then both at once: only the same histories compare (a
    worker's speed is its histories'), and the figure is the two rates' ratio, each over the time
    the soaks were stepping: a worker's start-up (spawn, imports, warm-up) is reported apart."""
    import pwh._campaigns.soak as _soak
    from pwh._campaigns import search_bench as _benchmark
    from pwh._campaigns.distribute import workers as _workers

    seen: list[tuple[str, int]] = []

    def alone(minutes: float, sut: str, seed: int, **kw: Any) -> dict[str, Any]:
        seen.append(("alone", seed))
        return {"seed": seed, "steps": 1000 + seed % 7, "elapsed_s": 10.0}

    def together(minutes: float, sut: str, seeds: list[int], options: dict[str, Any]) -> list[dict[str, Any]]:
        seen.extend(("together", s) for s in seeds)
        return [{"seed": s, "steps": 950 + s % 7, "elapsed_s": 10.0 + i, "startup_s": 3.0 + i} for i, s in enumerate(seeds)]

    monkeypatch.setattr(_soak, "soak", alone)
    monkeypatch.setattr(_benchmark, "soak_together", together)
    figure = _benchmark.measure_scaling(0.1)
    assert sorted(s for kind, s in seen if kind == "alone") == sorted(s for kind, s in seen if kind == "together")
    assert {s for kind, s in seen} == {_workers.worker_seed(_benchmark.MODE_SEED, i) for i in range(2)}
    alone_rate = sum(a["steps"] for a in figure["alone"]) / 20.0
    together_rate = sum(t["steps"] for t in figure["together"]) / 11.0  # the soaks start at once: the longer one's seconds
    assert figure["scaling"] == round(together_rate / alone_rate, 2) and figure["target"] == 1.8
    assert figure["startup_s"] == 4.0 and "start-up apart" in figure["measured"]


def test_two_soaks_at_once_start_stepping_together_after_their_start_up() -> None:
    """The together half of the scaling figure, for real and short: one spawned worker per seed,
    each soak's own seconds and steps, and the start-up before it, which the rate never counts."""
    from pwh._campaigns.search_bench import soak_together

    done = soak_together(0.02, "reference-memory", [11, 12], {"real_crashes": False, "database": False})
    assert [d["seed"] for d in done] == [11, 12]
    assert all(d["steps"] > 0 and 0 < d["elapsed_s"] < 30 and d["startup_s"] > 0 for d in done)
