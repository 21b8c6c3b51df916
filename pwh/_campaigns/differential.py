"""``pwh soak --sut A --against B``: the same generated histories against two SUTs, compared.

The plain models judge one SUT by the invariants; two implementations can both keep every
invariant and still answer the same history differently, and one of them is then wrong, or the RFC
is ambiguous there. So each generated step runs on ``A`` and then on ``B`` (two systems with their
own fakes, fed the same steps: the fakes are deterministic), and their answers are compared
(:mod:`._answers`). The first step where they part *in RFC terms* ends the example; it is shrunk
(the bounded trace shrinker, keeping a candidate only if the same facts still part first) and
written as a ``pwh_differential_trace_v0`` trace and a Gherkin scenario whose Then lines hold on
``A`` and fail on ``B``, with both answers in its comments. Differences in profile terms only are
counted apart (one example history kept for each kind) and the example goes on.

Crashes are simulated only (a real SIGKILL would kill one SUT's history and not the other's at the
same instant), at the crash points both SUTs have; a step either SUT refuses is not compared. The
invariants are not judged here: ``pwh soak --sut A`` does that.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import hypothesis
from hypothesis.stateful import run_state_machine_as_test

from pwh._campaigns.answers import Difference, StepAnswer, answer_of, compare
from pwh._campaigns.counterexamples.shrink import shrink_steps
from pwh._campaigns.counterexamples.trace import counterexample_dir
from pwh._campaigns.engine import ROUND_EXAMPLES, Finding, check_budget, drive
from pwh._campaigns.models.catalog import SOAK_WEIGHTS
from pwh._campaigns.models.coverage import Coverage
from pwh._campaigns.models.machine import MachineConfig, ModelMachine, _probe_sut, model_settings, with_swarm
from pwh._campaigns.models.names import sut_slug
from pwh._campaigns.models.profiles import DEFAULT_PROFILE, PROFILES
from pwh._campaigns.models.system import CannotExpress, ModelError, ModelSystem, Stats

DIFF_TRACE_SCHEMA = "pwh_differential_trace_v0"
COVERAGE_INVARIANTS = "pwh soak: coverage: invariants"


class NotComparable(ModelError):
    """One SUT took a step the other refused: what follows would not compare like with like."""


class Diverged(Exception):
    """Two SUTs answered one step differently in RFC terms (ends the example)."""

    def __init__(self, trace: dict[str, Any]) -> None:
        super().__init__(trace["divergence"]["key"])
        self.trace = trace


@dataclass
class DifferentialConfig(MachineConfig):
    """A model run's configuration, with the second SUT and what the run has found so far."""

    against: str = "reference"
    found: list[dict[str, Any]] = field(default_factory=list)  # RFC divergences' traces, in order
    profile_only: dict[str, dict[str, Any]] = field(default_factory=dict)  # kind -> {"times", "trace"}
    compared: int = 0  # steps both SUTs answered and were compared on
    not_compared: int = 0  # steps one of them refused
    refused: set[str] = field(default_factory=set)  # kinds of step (:func:`step_kind`) one SUT refuses


def step_kind(step: dict[str, Any]) -> str:
    """What an adapter accepts or refuses as a whole: the op, and for a profile change its setting."""
    return f"profile {step['setting']}" if step["op"] == "profile" else str(step["op"])


def divergence(step_index: int, diff: Difference, a: StepAnswer, b: StepAnswer) -> dict[str, Any]:
    return {
        "step": step_index,
        "key": diff.key,
        "rfc": list(diff.rfc),
        "profile": list(diff.profile),
        "sut_answer": a.shown(),
        "against_answer": b.shown(),
    }


def make_diff_trace(seed: int, sut: str, against: str, steps: list[dict[str, Any]], found: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema_version": DIFF_TRACE_SCHEMA,
        "seed": seed,
        "sut": sut,
        "against": against,
        "steps": [dict(s) for s in steps],
        "divergence": found,
    }


class DifferentialMachine(ModelMachine):
    """The model machine with a second system that every step also runs on."""

    config: ClassVar[DifferentialConfig]

    def __init__(self) -> None:
        super().__init__()
        try:
            self.other = ModelSystem(self.config.against, real_crashes=False)
            self.excused: set[str] = set()  # hooks parted only as SPEC section 0 allows (``compare``)
        except BaseException:
            self.system.close()
            raise

    def teardown(self) -> None:
        try:
            self.other.close()
        finally:
            super().teardown()

    def _crash_points(self) -> list[str]:
        both = set(self.other.crash_points())
        return [p for p in super()._crash_points() if p in both]

    def _do(self, step: dict[str, Any]) -> None:
        cfg = self.config
        if cfg.coverage is not None and not (self._in_setup and step["op"] != "setup"):
            cfg.coverage.rule(self._rule_of(step), self.swarm)
        kind = step_kind(step)
        if kind in cfg.refused and step["op"] != "setup":
            return  # one of the two refuses this kind of step: it is left out of the history, on both
        try:
            record = self.system.apply(step)
            other = self.other.apply(step)
        except CannotExpress:
            hypothesis.reject()  # one of them cannot run the example at all: draw another
        if (record.unsupported is None) != (other.unsupported is None):
            # One of them took the step and the other did not: their states part here, and nothing
            # after it would compare like with like. Never again in this run; this example is void.
            if step["op"] != "setup":  # (every history has one: only this example is lost)
                cfg.refused.add(kind)
            cfg.not_compared += 1
            hypothesis.reject()
        if cfg.coverage is not None:
            cfg.coverage.step(step, record, self.system.hooks.__contains__, self.swarm)
        a, b = answer_of(self.system, record), answer_of(self.other, other)
        diff = compare(a, b, self.excused)
        if record.unsupported is not None:
            cfg.not_compared += 1
        else:
            cfg.compared += 1
        if cfg.progress is not None:
            cfg.progress()
        if diff is None:
            return
        trace = make_diff_trace(cfg.seed, cfg.sut, cfg.against, self.system.steps, divergence(record.index, diff, a, b))
        if self.swarm is not None:
            trace["swarm"] = self.swarm.to_json()
        if diff.rfc:
            cfg.found.append(trace)
            raise Diverged(trace)
        for kind in diff.profile_kinds:  # counted per fact: one step may part on several
            kept = cfg.profile_only.setdefault(kind, {"times": 0, "trace": trace})
            kept["times"] += 1


@dataclass
class DifferentialRun:
    """One differential model run: the first RFC divergence (if any) and the profile-only ones."""

    seed: int
    stats: Stats
    trace: dict[str, Any] | None = None
    profile_only: dict[str, dict[str, Any]] = field(default_factory=dict)
    compared: int = 0
    not_compared: int = 0
    refused: set[str] = field(default_factory=set)


def run_differential(
    sut: str,
    against: str,
    *,
    seed: int | None = None,
    max_examples: int = ROUND_EXAMPLES,
    steps: int | None = None,
    swarm: bool = False,
    stats: Stats | None = None,
    coverage: Coverage | None = None,
    progress: Callable[[], None] | None = None,
    refused: set[str] | None = None,
    probe: bool = True,
) -> DifferentialRun:
    """Run ``max_examples`` generated histories on both SUTs; stop at the first RFC divergence.
    ``refused``: kinds of step already known to be refused by one of them (updated in place).
    ``probe``: load each SUT once first, for a clear error (a soak does that once, not every round)."""
    seed = secrets.randbelow(2**32) if seed is None else seed
    for name in (sut, against) if probe else ():
        _probe_sut(name, {}, False)
    config = DifferentialConfig(sut, {}, False, dict(SOAK_WEIGHTS), seed, stats or Stats(), progress, against=against)
    config.swarm, config.coverage = swarm, coverage
    if refused is not None:
        config.refused = refused
    machine = hypothesis.seed(seed)(type("DifferentialMachineRun", (DifferentialMachine,), {"config": config}))
    run = DifferentialRun(seed, config.stats)
    try:
        run_state_machine_as_test(machine, settings=model_settings(max_examples=max_examples, steps=steps, shrink=False))
    except Diverged:
        pass
    except Exception:
        if not config.found:
            raise
    run.trace = config.found[-1] if config.found else None
    run.profile_only, run.compared, run.not_compared = config.profile_only, config.compared, config.not_compared
    run.refused = config.refused
    return run


def diff_steps(sut: str, against: str, steps: list[dict[str, Any]]) -> tuple[int, dict[str, Any] | None]:
    """Run ``steps`` on both SUTs without Hypothesis: (steps run, the first RFC divergence)."""
    a, b = ModelSystem(sut), None
    excused: set[str] = set()
    try:
        b = ModelSystem(against)
        for i, step in enumerate(steps):
            ra, rb = a.apply(step), b.apply(step)
            if (ra.unsupported is None) != (rb.unsupported is None):
                raise NotComparable(f"step {i} ({step_kind(step)}) is refused by one of the two SUTs only")
            answer_a, answer_b = answer_of(a, ra), answer_of(b, rb)
            diff = compare(answer_a, answer_b, excused)
            if diff is not None and diff.rfc:
                return i + 1, divergence(i, diff, answer_a, answer_b)
        return len(steps), None
    finally:
        a.close()
        if b is not None:
            b.close()


def shrink_divergence(trace: dict[str, Any], *, budget_s: float = 8.0) -> dict[str, Any]:
    """A shorter, plainer history on which the same kind of fact parts first (``trace`` if none)."""
    target = trace["divergence"]["key"]

    def reproduces(candidate: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Any] | None:
        try:
            ran, found = diff_steps(trace["sut"], trace["against"], candidate)
        except ModelError:
            return None
        if found is None or found["key"] != target:
            return None
        return candidate[:ran], found

    best, found = shrink_steps(list(trace["steps"]), trace["divergence"], reproduces, budget_s=budget_s)
    return with_swarm(make_diff_trace(trace["seed"], trace["sut"], trace["against"], best, found), trace)


def write_divergence(trace: dict[str, Any], directory: str | Path | None = None, *, out: Callable[[str], None] | None = None) -> list[Path]:
    """Write the trace as JSON and as a Gherkin scenario (:func:`export_divergence`); print where."""
    from pwh._campaigns.counterexamples.gherkin import export_divergence

    target = counterexample_dir(directory)
    stem = f"diff-{sut_slug(trace['sut'])}-vs-{sut_slug(trace['against'])}-seed{trace['seed']}"
    n, candidate = 1, stem
    while (target / f"{candidate}.json").exists():
        n += 1
        candidate = f"{stem}-{n}"
    json_path, feature_path = target / f"{candidate}.json", target / f"{candidate}.feature"
    json_path.write_text(json.dumps(trace, indent=2, sort_keys=True) + "\n", "utf-8")
    feature_path.write_text(export_divergence(trace, trace_name=json_path.name), "utf-8")
    if out is not None:
        out(f"pwh soak: divergence ({trace['divergence']['key']}) written to {target}")
        for p in (json_path, feature_path):
            out(f"  {p.name}")
    return [json_path, feature_path]


def differential_soak(
    minutes: float | None,
    sut: str,
    against: str,
    seed: int | None,
    *,
    examples: int | None = None,
    out: Callable[[str], None] = print,
    profile: str = DEFAULT_PROFILE,
    swarm: bool = True,
    directory: str | Path | None = None,
    coverage: Coverage | None = None,
    observations: str | Path | None = None,
    worker: int | None = None,
) -> dict[str, Any]:
    """Rounds of :func:`run_differential` for ``minutes`` and/or ``examples`` histories (whichever
    is spent first, under :func:`~pwh._campaigns.engine.drive`); each RFC divergence found (one per
    kind) is shrunk and written; profile-only differences are counted. Returns a summary."""
    check_budget(minutes, examples)
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    if sut == against:
        raise ValueError("--against must name another SUT than --sut")
    for name in (sut, against):
        _probe_sut(name, {}, False)
    engine = DifferentialEngine(sut, against, profile, swarm, directory)
    return drive(engine, minutes, examples, seed, out=out, coverage=coverage, observations=observations, worker=worker)


class DifferentialEngine:
    """Two SUTs on the same histories, compared after every step: an RFC divergence the finding
    (one per kind), profile-only differences and steps one SUT refused counted apart."""

    name = "differential"

    def __init__(self, sut: str, against: str, profile: str, swarm: bool, directory: str | Path | None) -> None:
        self.sut, self.against, self.profile, self.swarm, self.directory = sut, against, profile, swarm, directory
        self.profile_only: dict[str, dict[str, Any]] = {}
        self.compared = self.not_compared = 0
        self.refused: set[str] = set()

    def identity(self) -> dict[str, Any]:
        return {"sut": self.sut, "against": self.against}

    def opening(self, budget: str) -> list[str]:
        return [
            f"pwh soak: {self.sut!r} against {self.against!r} for {budget}, profile {self.profile}: "
            "the same histories on both, compared after every step"
        ]

    def round(self, index: int, seed: int, examples: int, deadline: float | None, stats: Stats, coverage: Coverage) -> Finding | None:
        run = run_differential(
            self.sut,
            self.against,
            seed=seed,
            max_examples=examples,
            steps=PROFILES[self.profile].soak_steps,
            swarm=self.swarm,
            stats=stats,
            coverage=coverage,
            refused=self.refused,
            probe=False,  # probed once, before the first round
        )
        self.compared, self.not_compared = self.compared + run.compared, self.not_compared + run.not_compared
        for key, kept in run.profile_only.items():
            mine = self.profile_only.setdefault(key, {"times": 0, "trace": kept["trace"]})
            mine["times"] += kept["times"]
        if run.trace is None:
            return None
        return Finding(run.trace["divergence"]["key"], run.trace, run.seed)

    def keep(self, finding: Finding, round_index: int, shrink_s: float, out: Callable[[str], None]) -> tuple[dict[str, Any], list[Path]]:
        shrunk = shrink_divergence(finding.trace, budget_s=shrink_s)
        record = {**shrunk["divergence"], "steps": shrunk["steps"], "seed": finding.seed, "round": round_index}
        return record, write_divergence(shrunk, self.directory, out=out)

    def summary(self, found: list[dict[str, Any]], stats: Stats) -> dict[str, Any]:
        return {
            "sut": self.sut,
            "against": self.against,
            "profile": self.profile,
            "swarm": self.swarm,
            "steps_compared": self.compared,
            "steps_not_compared": self.not_compared,
            "divergences": found,
            "profile_only": {k: {"times": v["times"], "example": v["trace"]} for k, v in sorted(self.profile_only.items())},
        }

    def closing(self, found: list[dict[str, Any]], coverage: Coverage, stats: Stats, paths: list[Path], done: str) -> list[str]:
        return [
            *coverage.lines(invariants=False),  # compared here, not judged: the plain soak judges them
            done + f"{self.compared} compared ({self.not_compared} refused by one SUT), {len(found)} RFC divergence(s), "
            f"{len(self.profile_only)} kind(s) of profile-only difference",
            *_summary_lines(found, self.profile_only),
        ]


def _summary_lines(found: list[dict[str, Any]], profile_only: dict[str, dict[str, Any]]) -> Iterator[str]:
    for d in found:
        key = d["key"]
        yield f"  RFC: {key}: found {d['times']} time(s), first at step {d['step']} of a {d['step'] + 1}-step history"
    for key, kept in sorted(profile_only.items()):
        yield f"  profile only: {key}: {kept['times']} step(s)"
