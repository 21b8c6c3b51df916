"""The stateful crash/replay models (issue 5): they keep quiet on the reference, find every broken
adapter that concerns replay, conflict, crash recovery, ordering or isolation, write findings
that paste into ``features/`` as is, replay traces, crash children for real, and soak."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pwh._dispatcher import Dispatcher
from pwh._reference import ReferenceSUT
from pwh._scenarios_check import check, load_step_modules, step_definitions
from scenarios.models import replay_trace, run_model, soak
from scenarios.models._catalog import HANG_WEIGHTS
from scenarios.models._commands import add_model_commands
from scenarios.models._system import ModelSystem
from scenarios.models._trace import TraceError, load_trace, run_steps
from tests.broken_suts import BROKEN

ROOT = Path(__file__).resolve().parent.parent

# Each broken adapter, the invariant that must catch it, and a seed (runs are deterministic
# given a seed; each of these finds its bug within the CI profile's first examples).
CAUGHT_BY: dict[str, tuple[str, int]] = {
    "replay_calls_provider": ("no_call_after_final", 1),
    "conflict_overwrites": ("history_kept", 3),
    "out_of_order": ("hook_order", 1),
    "shared_budget": ("independent_budgets", 1),
    "rolls_back_primary": ("primary_untouched", 1),
    "blocks_spend": ("primary_untouched", 1),
    "no_timeout": ("timeout_enforced", 7),
    "calls_sink": ("no_sink_call", 1),
    "accepts_external_write": ("no_authority_claim", 1),
}

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


def test_the_reference_keeps_every_invariant() -> None:
    sut = os.environ.get("PWH_SUT") or "reference"
    run = run_model(sut)  # a finding is written to $PWH_COUNTEREXAMPLES (or the temp dir) and named here
    assert not run.found, f"{sut} breaks {run.violation} (seed {run.seed}); written to {[str(p) for p in run.paths]}"
    assert run.stats.steps > 100 and run.stats.crashes_simulated > 0 and run.stats.restarts > 0


class _Finds:
    """Each broken adapter's model run, made once per module (the export test reuses one)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runs: dict[str, object] = {}

    def __call__(self, name: str):  # type: ignore[no-untyped-def]
        if name not in self.runs:
            invariant, seed = CAUGHT_BY[name]
            if name == "no_timeout":  # every hung call costs the adapter's 1.5 s: find it, no more
                self.runs[name] = run_model(f"tests.broken_suts:{name}", seed=seed, weights=HANG_WEIGHTS, steps=3,
                                            shrink="none", export=False)
            else:
                self.runs[name] = run_model(f"tests.broken_suts:{name}", seed=seed, directory=self.root / name)
        return self.runs[name]


@pytest.fixture(scope="module")
def finds(tmp_path_factory: pytest.TempPathFactory) -> _Finds:
    return _Finds(tmp_path_factory.mktemp("counterexamples"))


@pytest.mark.parametrize("name", sorted(CAUGHT_BY))
def test_the_model_finds_each_broken_adapter(name: str, finds: _Finds) -> None:
    run = finds(name)
    invariant = CAUGHT_BY[name][0]
    assert run.found, f"{name} was not found"
    assert (run.violation.row, run.violation.invariant) == (BROKEN[name], invariant), run.violation
    if name == "no_timeout":
        return
    trace_file, feature_file = run.paths
    feature = feature_file.read_text()
    assert f"  @{BROKEN[name]}\n" in feature and "Not portable" not in feature, feature
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
            [sys.executable, "-m", "pwh", "gate", "--quiet", "--features", str(features), "--sut", sut, "--rows", "M06", "--json", str(out)],
            cwd=ROOT, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
        )
        return proc.returncode, json.loads(out.read_text())

    with ThreadPoolExecutor(max_workers=2) as pool:
        (broken_rc, broken), (ref_rc, ref) = pool.map(gate, ["tests.broken_suts:conflict_overwrites", "reference"])
    mine = lambda verdict: [s["outcome"] for s in verdict["scenarios"] if s["feature"].endswith(feature.name)]  # noqa: E731
    assert broken_rc == 1 and broken["rows"]["M06"]["status"] == "fail" and mine(broken) == ["failed"]
    assert ref_rc == 0 and ref["rows"]["M06"]["status"] == "pass" and mine(ref) == ["passed"]


def test_a_trace_replays_and_the_cli_exit_codes_follow_it(tmp_path: Path, finds: _Finds, capsys: pytest.CaptureFixture[str]) -> None:
    trace_file = finds("replay_calls_provider").paths[0]
    again = replay_trace(trace_file)
    assert again.failed and again.same_as_recorded
    assert not replay_trace(trace_file, "reference").failed

    parser = argparse.ArgumentParser(prog="pwh")
    add_model_commands(parser.add_subparsers())

    def cli(*argv: str) -> int:
        args = parser.parse_args(list(argv))
        return args.handler(args)

    assert cli("replay", str(trace_file)) == 1
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
    run = run_model("reference", seed=9, real_crashes=True, max_examples=2, steps=5, export=False)
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
    assert run_steps("reference", [SETUP, {"op": "install_versioned", "hook": "a.alpha", "version": "v1"},
                                   {"op": "turn", "action": "complete_todo"}, {"op": "policy", "hook": "a.alpha", "version": "v2"},
                                   {"op": "redeliver", "writeback": 1}, {"op": "replay", "writeback": 1}])[1] is None


def test_a_hung_hook_costs_only_its_timeout_on_the_reference() -> None:
    steps = [SETUP, {"op": "install", "hook": "a.alpha", "behaviour": "does not return within its timeout"},
             {"op": "install", "hook": "b.bravo", "behaviour": "proposes one intent"},
             {"op": "turn", "action": "complete_todo"}, {"op": "replay", "writeback": 1}]
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
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({**base, "steps": [SETUP, {"op": "replay", "writeback": 4}]}))
    from scenarios.models._system import StepNotApplicable

    with pytest.raises(StepNotApplicable):
        replay_trace(path)


# -- the invariants no adapter of tests/broken_suts.py breaks get mutants of their own ----------


class _ForgetsLastHook(Dispatcher):
    def _admitted_hooks(self, event_kind):  # type: ignore[no-untyped-def]
        return super()._admitted_hooks(event_kind)[:-1]


class _ReplayNotMarked(Dispatcher):
    def _prepare_hook(self, hook, did, source, prior, tally):  # type: ignore[no-untyped-def]
        step = super()._prepare_hook(hook, did, source, prior, tally)
        if type(step) is tuple:
            return dataclasses.replace(step[0], replayed=False), step[1]
        return step


class _LeaksProviderText(Dispatcher):
    def _receipt(self, hook, did, source, status, code, intents, result_digest, attempts):  # type: ignore[no-untyped-def]
        receipt = Dispatcher._receipt(hook, did, source, status, code, intents, result_digest, attempts)
        if code:
            receipt["failure_code"] = f"{code} while reading /srv/private/state.db"
        return receipt


class _NewIdentityAfterRestart(Dispatcher):
    restarts = 0

    def _prepare_hook(self, hook, did, source, prior, tally):  # type: ignore[no-untyped-def]
        salted = did[:-1] + format((int(did[-1], 16) + self.restarts) % 16, "x")  # still a well-formed id
        return super()._prepare_hook(hook, salted, source, prior, tally)


class _SaltsOnRestart(ReferenceSUT):
    dispatcher_class = _NewIdentityAfterRestart
    restarts = 0

    def restart(self) -> None:
        super().restart()
        self.restarts += 1
        self.dispatcher.restarts = self.restarts


class _ReportsARecordTwice(ReferenceSUT):
    def journal_records(self):  # type: ignore[no-untyped-def]
        records = super().journal_records()
        return records + records[-1:]


def forgets_last_hook(**kw):  # type: ignore[no-untyped-def]
    return type("ForgetsLastHook", (ReferenceSUT,), {"dispatcher_class": _ForgetsLastHook})(**kw)


def replay_not_marked(**kw):  # type: ignore[no-untyped-def]
    return type("ReplayNotMarked", (ReferenceSUT,), {"dispatcher_class": _ReplayNotMarked})(**kw)


def leaks_provider_text(**kw):  # type: ignore[no-untyped-def]
    return type("LeaksProviderText", (ReferenceSUT,), {"dispatcher_class": _LeaksProviderText})(**kw)


def new_identity_after_restart(**kw):  # type: ignore[no-untyped-def]
    return _SaltsOnRestart(**kw)


def reports_a_record_twice(**kw):  # type: ignore[no-untyped-def]
    return _ReportsARecordTwice(**kw)


TWO_HOOKS = [SETUP, {"op": "install", "hook": "a.alpha", "behaviour": "proposes one intent"},
             {"op": "install", "hook": "b.bravo", "behaviour": "raises an error"}]


@pytest.mark.parametrize("mutant, steps, caught", [
    ("forgets_last_hook", TWO_HOOKS + [{"op": "turn", "action": "complete_todo"}], ("M04", "one_outcome_per_hook")),
    ("replay_not_marked", TWO_HOOKS + [{"op": "turn", "action": "replan"}, {"op": "replay", "writeback": 1}], ("M05", "replay_identical")),
    ("leaks_provider_text", TWO_HOOKS + [{"op": "turn", "action": "complete_todo"}], ("M13", "journal_public_safe")),
    ("new_identity_after_restart", TWO_HOOKS + [{"op": "restart"}, {"op": "turn", "action": "complete_todo"}, {"op": "restart"}],
     ("M04", "stable_identity")),
    ("reports_a_record_twice", TWO_HOOKS + [{"op": "turn", "action": "complete_todo"}], ("M04", "one_record_per_dispatch")),
])
def test_each_remaining_invariant_fails_when_its_rule_is_broken(mutant: str, steps: list, caught: tuple[str, str]) -> None:  # type: ignore[type-arg]
    assert run_steps("reference", steps)[1] is None
    _, violation = run_steps(f"tests.test_models:{mutant}", steps)
    assert violation is not None and (violation.row, violation.invariant) == caught, violation


def test_a_short_soak_reports_its_seed_progress_and_counts() -> None:
    lines: list[str] = []
    summary = soak(0.01, "reference", 5, out=lines.append)
    assert lines[0] == "pwh soak: seed 5"
    assert summary["violations"] == [] and summary["counterexamples"] == []
    assert summary["examples"] > 0 and summary["steps"] > 0 and summary["rounds"] >= 1
    assert set(summary["crashes"]) == {"simulated", "real"} and "restarts" in summary
    assert lines[-1].startswith("pwh soak: done in")
