"""The differential soak: two SUTs, the same histories, their answers compared in RFC and profile terms."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pwh._campaigns.answers import EpisodeAnswer, HookAnswer, StepAnswer, compare
from pwh._campaigns.counterexamples.gherkin import StepLibrary
from pwh._campaigns.differential import (
    DIFF_TRACE_SCHEMA,
    diff_steps,
    run_differential,
    shrink_divergence,
    write_divergence,
)

ROOT = Path(__file__).resolve().parents[2]
UNCOMMITTED = "tests.broken_suts:admits_uncommitted"  # dispatches a receipt whose step is not committed (M03)


def _hook(code: str | None = None, *, status: str = "failed", intents: int = 0, calls: int = 1, ids: tuple[str, ...] = ()) -> HookAnswer:
    return HookAnswer("a.alpha", status, code, intents, calls, 1, ids)


def _step(*hooks: HookAnswer, admitted: bool = True, code: str | None = None) -> StepAnswer:
    return StepAnswer(False, None, None, (), 1, (EpisodeAnswer("dispatch", False, admitted, code, None, hooks),), (), 0)


def test_two_rfc_failure_classes_part_in_rfc_terms() -> None:
    diff = compare(_step(_hook("producer_failed")), _step(_hook("producer_timed_out")))
    assert diff is not None and diff.rfc == ("§10 failure class (a.alpha)",) and diff.profile == ()


def test_a_code_the_adapter_could_not_map_is_judged_by_the_outcome_alone() -> None:
    diff = compare(_step(_hook("producer_failed")), _step(_hook("loopx_own_error_name")))
    assert diff is not None and diff.rfc == () and diff.profile == ("failure code name beyond the §10 classes",)


def test_status_intents_and_provider_calls_are_rfc_facts() -> None:
    diff = compare(_step(_hook(status="proposed", intents=2)), _step(_hook("result_contract_rejected", calls=2)))
    assert diff is not None
    assert diff.rfc == ("hook status (a.alpha)", "intents held (a.alpha)", "provider calls (a.alpha)")
    assert diff.key == "hook status"  # the kind: the first fact that parts, without the hook
    two = HookAnswer("a.alpha", "proposed", None, 2, 1, 1, (), behaviour="proposes two intents")
    rejected = HookAnswer("a.alpha", "failed", "result_contract_rejected", 0, 1, 1, (), behaviour="proposes two intents")
    assert compare(_step(two), _step(rejected)).key == "hook status (proposes two intents)"  # type: ignore[union-attr]
    other = compare(_step(_hook("result_contract_rejected", calls=2)), _step(_hook(status="proposed", intents=2)))
    assert other is not None and other.key == diff.key


def test_nothing_reaching_any_hook_is_alike_however_each_says_so() -> None:
    refused = _step(admitted=False, code="not_a_post_writeback_event")
    admitted_with_no_hook = _step(admitted=True)
    diff = compare(refused, admitted_with_no_hook)
    assert diff is not None and diff.rfc == ()
    assert diff.profile == ("how a source no hook is called for is reported", "dispatch-level code")
    dispatched = _step(_hook(status="proposed", intents=1))
    assert compare(refused, dispatched).rfc == ("source dispatched or refused",)  # type: ignore[union-attr]
    refused_before_any_call = _step(_hook("registration_or_input_rejected", calls=0))  # LoopX's way for a bad source
    diff = compare(refused, refused_before_any_call)
    assert diff is not None and diff.rfc == () and "how a source no hook is called for is reported" in diff.profile


def test_a_reading_spec_section_0_leaves_open_is_profile_only() -> None:
    """A hook that writes into its input: failing it (the reference) or its answering not_applicable
    (LoopX) are both accepted; only how the attempt surfaces differs."""
    readings = frozenset({("failed", "producer_failed"), ("not_applicable", None)})
    mutating = HookAnswer("a.alpha", "failed", "producer_failed", 0, 1, 1, (), readings)
    shrugged = HookAnswer("a.alpha", "not_applicable", None, 0, 1, 1, (), readings)
    diff = compare(_step(mutating), _step(shrugged))
    assert diff is not None and diff.rfc == () and diff.profile == ("how a mutation attempt surfaces",)
    first_fails = frozenset({("failed", "producer_failed"), ("proposed", None)})
    failed_again = HookAnswer("a.alpha", "failed", "producer_failed", 0, 1, 1, (), first_fails, behaviour="fails on its first call only")
    proposed = HookAnswer("a.alpha", "proposed", None, 0, 1, 1, (), first_fails, behaviour="fails on its first call only")
    diff = compare(_step(failed_again), _step(proposed))
    assert diff is not None and diff.rfc == () and diff.profile == ("which call of a provider is its first",)
    plain = HookAnswer("a.alpha", "failed", "producer_failed", 0, 1, 1, ())
    assert compare(_step(plain), _step(HookAnswer("a.alpha", "not_applicable", None, 0, 1, 1, ()))).rfc == ("hook status (a.alpha)",)  # type: ignore[union-attr]


def test_a_record_kept_only_by_an_open_reading_stays_profile_on_later_steps() -> None:
    readings = frozenset({("failed", "producer_failed"), ("not_applicable", None)})
    failed = HookAnswer("a.alpha", "failed", "producer_failed", 0, 1, 1, (), readings)
    shrugged = HookAnswer("a.alpha", "not_applicable", None, 0, 1, 1, (), readings)
    first_a = StepAnswer(False, None, None, (), 1, (EpisodeAnswer("dispatch", False, True, None, None, (failed,)),), (), 1)
    first_b = StepAnswer(
        False, None, None, (), 1, (EpisodeAnswer("dispatch", False, True, None, None, (shrugged,)),), (("a.alpha", "not_applicable", 0),), 1
    )
    later_a = StepAnswer(False, None, None, (), 2, (), (), 1)
    later_b = StepAnswer(False, None, None, (), 2, (), (("a.alpha", "not_applicable", 0),), 1)
    excused: set[str] = set()
    assert compare(first_a, first_b, excused).rfc == ()  # type: ignore[union-attr]
    later = compare(later_a, later_b, excused)
    assert (
        excused == {"a.alpha"}
        and later is not None
        and later.rfc == ()
        and later.profile == ("records of a hook parted by an open reading",)
    )
    assert compare(later_a, later_b).rfc == ("final journal records",)  # type: ignore[union-attr]  # without the history: a difference


def test_stopping_at_a_retry_cap_the_other_has_not_reached_is_profile() -> None:
    """SPEC section 0: that retries are bounded is normative, the bound's number is profile. The
    reference stops after 3 attempts; LoopX's bound is 10,000."""
    stopped = HookAnswer("a.alpha", "failed", "dispatch_budget_exhausted", 0, 0, 3, (), frozenset(), True)
    called_again = HookAnswer("a.alpha", "failed", "producer_failed", 0, 1, 4, ())
    diff = compare(_step(stopped), _step(called_again))
    assert diff is not None and diff.rfc == () and "the retry cap's number" in diff.profile
    not_capped = HookAnswer("a.alpha", "failed", "dispatch_budget_exhausted", 0, 0, 3, ())
    assert compare(_step(not_capped), _step(called_again)).rfc  # type: ignore[union-attr]


def test_identity_digest_bytes_are_profile() -> None:
    a = _step(_hook(status="proposed", intents=1, ids=("pwi_1",)))
    b = _step(_hook(status="proposed", intents=1, ids=("loopx_9",)))
    diff = compare(a, b)
    assert diff is not None and diff.rfc == () and diff.profile == ("identity digest bytes",)
    assert compare(a, a) is None


def test_two_suts_that_answer_alike_never_part() -> None:
    """The reference with its SQLite journal and with its memory journal: every step alike, even
    the identity bytes (the two systems' fakes are deterministic, so a difference is the SUT's)."""
    run = run_differential("reference", "reference-memory", seed=3, max_examples=6, steps=15, swarm=True)
    assert run.trace is None and run.profile_only == {}
    assert run.compared > 40 and run.not_compared == 0


def test_an_rfc_divergence_is_found_shrunk_and_written_with_both_answers(tmp_path: Path) -> None:
    run = run_differential("reference", UNCOMMITTED, seed=1, max_examples=40, steps=15, swarm=True)
    assert run.trace is not None, "the run never parted from a SUT that dispatches uncommitted receipts"
    assert "source dispatched or refused" in run.trace["divergence"]["rfc"]
    shrunk = shrink_divergence(run.trace, budget_s=20)
    assert len(shrunk["steps"]) <= len(run.trace["steps"])
    assert shrunk["divergence"]["key"] == run.trace["divergence"]["key"]
    ran, again = diff_steps("reference", UNCOMMITTED, shrunk["steps"])  # the written history reproduces it
    assert again is not None and again["rfc"] == shrunk["divergence"]["rfc"] and ran == len(shrunk["steps"])
    json_path, feature_path = write_divergence(shrunk, tmp_path)
    written = json.loads(json_path.read_text())
    assert written["schema_version"] == DIFF_TRACE_SCHEMA and written["against"] == UNCOMMITTED
    feature = feature_path.read_text()
    assert '# "reference" answered:' in feature and f'# "{UNCOMMITTED}" answered:' in feature
    assert "nothing dispatched" in feature  # the reference's answer, beside the SUT's
    scenario = [line.strip() for line in feature.splitlines() if line.startswith("    ")]
    assert scenario[0] == "Given the post-writeback phase is enabled" and any(line.startswith(("Then", "And")) for line in scenario)
    library = StepLibrary()
    keyword = ""
    for line in scenario:  # every line is a step of the library: the scenario can be pasted into features/
        word, text = line.split(" ", 1)
        keyword = keyword if word == "And" else word
        assert library.matches(keyword, text), line


def test_a_step_one_sut_refuses_is_never_compared() -> None:
    """LoopX has no hook allowlist: after it refuses one, the two states part, so such a history is
    not comparable (and the differential machine leaves that kind of step out from then on). In a
    child process: the LoopX adapter moves this process's TMPDIR while its runtime lives."""
    script = textwrap.dedent(
        """
        import json
        from pwh._campaigns.differential import NotComparable, diff_steps, run_differential
        steps = [{"op": "setup", "ceiling": None, "segment": 3}, {"op": "profile", "setting": "allowlist", "value": "a.alpha"}]
        try:
            diff_steps("reference", "loopx", steps)
            said = None
        except NotComparable as exc:
            said = str(exc)
        run = run_differential("reference", "loopx", seed=1, max_examples=8, steps=12, swarm=False)
        print(json.dumps({"said": said, "refused": sorted(run.refused)}))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["said"] is not None and "refused by one of the two SUTs only" in seen["said"]
    assert "profile allowlist" in seen["refused"]


def _pwh(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pwh", *args], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env, timeout=300
    )


def test_pwh_soak_against_exits_1_on_an_rfc_divergence_and_writes_it(tmp_path: Path) -> None:
    env = {**os.environ, "PWH_COUNTEREXAMPLES": str(tmp_path / "found")}
    done = _pwh(
        "soak",
        "--sut",
        "reference",
        "--against",
        UNCOMMITTED,
        "--examples",  # seed 2 parts in its third history: the same ones on any machine, however loaded
        "3",
        "--seed",
        "2",
        "--json",
        str(tmp_path / "d.json"),
        env=env,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    summary = json.loads((tmp_path / "d.json").read_text())
    assert summary["against"] == UNCOMMITTED and summary["divergences"] and summary["max_examples"] == 3
    assert summary["steps_compared"] > 0
    assert "coverage: invariants" not in done.stdout  # compared here, not judged
    written = sorted(p.name for p in (tmp_path / "found").iterdir() if p.is_file())
    assert len(written) == 2 * len(summary["divergences"]) and {Path(n).suffix for n in written} == {".json", ".feature"}
    assert sorted(Path(p).name for p in summary["counterexamples"]) == written


@pytest.mark.parametrize(
    "extra, message",
    [
        (("--against", "reference"), "another SUT"),
        (("--against", "loopx", "--cluster", "127.0.0.1:1"), "--cluster does not apply to a differential soak"),
        (("--against", "loopx", "--no-database"), "--no-database does not apply"),
        (("--against", "loopx", "--benchmark"), "drop --against"),
        (("--against", "loopx", "--campaign", "reliability"), "--against applies to the models"),
    ],
)
def test_pwh_soak_against_refuses_what_does_not_apply(extra: tuple[str, ...], message: str) -> None:
    fixed = "--benchmark" in extra or "reliability" in extra  # they take no --sut and no --minutes
    args = ("soak", *extra) if fixed else ("soak", "--sut", "reference", *extra, "--minutes", "0.1")
    done = _pwh(*args)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_findings_never_go_to_an_adapters_private_temp_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The LoopX adapter points TMPDIR at a folder it removes once its runtime stops: findings
    written there by default would be lost with it."""
    import tempfile

    from pwh._campaigns.counterexamples.trace import counterexample_dir

    monkeypatch.delenv("PWH_COUNTEREXAMPLES", raising=False)
    before = counterexample_dir()
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert counterexample_dir() == before and tmp_path not in counterexample_dir().parents


# `extended` (CI runs it after the test command): two soak workers; one worker's differential soak,
# its findings and its file are held in the test command by the tests above.
@pytest.mark.extended
def test_the_differential_soak_runs_on_workers_and_merges_their_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers run any engine under the one driver: two differential soaks at once, one summary."""
    from pwh._campaigns.distribute.workers import soak_workers

    monkeypatch.setenv("PWH_COUNTEREXAMPLES", str(tmp_path))
    lines: list[str] = []
    # 8 examples each (one round): seed 1 finds the divergence in its first round; every example is
    # two SUTs driven side by side through real hook calls, so a round costs seconds.
    merged = soak_workers(None, "reference", 1, 2, against=UNCOMMITTED, examples=8, out=lines.append, swarm=True)
    assert merged["workers"] == 2 and len(merged["per_worker"]) == 2 and merged["against"] == UNCOMMITTED
    assert merged["examples"] == sum(w["examples"] for w in merged["per_worker"]) >= 16  # each worker spends its 8
    assert merged["divergences"], "neither worker parted from a SUT that dispatches uncommitted receipts"
    assert all(d["worker"] in (1, 2) and d["times"] >= 1 for d in merged["divergences"])
    assert any(line.startswith("pwh soak: 2 workers done in") for line in lines)
    assert all(str(tmp_path) in p for p in merged["counterexamples"])
