"""The Hypothesis state machine: draws action steps, runs them on the SUT, judges every step.

One machine class serves every SUT and mode: :func:`run_model` makes a subclass carrying a
:class:`MachineConfig` (which SUT, simulated or real crashes, draw weights) and runs it with
``run_state_machine_as_test``. The machine stops at the first broken RFC invariant and keeps the
run as a trace (a broken profile invariant is a profile divergence: counted in
:attr:`MachineConfig.divergences` with its first example history, never a failure, and the run
goes on); the trace is then shrunk, by the bounded trace shrinker (``_shrink``: the CI
default) or by Hypothesis itself (whose last failing run is the shrunk one).

Swarm testing (Groce et al., ISSTA 2012), on for ``pwh soak`` and off in the tests: each example
first draws a :class:`Swarm`, a random subset of the optional actions, of the hook behaviours and
of the crash points to leave out, and a left-out one never fires (preconditions read it). It is
drawn per example, from the example's own data, not once per round: Groce's unit is the test
case, a round of ten examples then tries ten configurations, and the configuration is part of
the example's choice sequence, so the example database replays a stored failure under exactly the
configuration that found it, and Hypothesis's shrinker opens it up (every flag shrinks to "on").
Hypothesis itself already leaves out a random subset of the *rules* per example (its
``FeatureFlags``); this adds behaviours and crash points, which are rule arguments it cannot
reach, and makes the whole configuration visible in the coverage report and the trace.

With an example database (``pwh soak``: one per SUT under the counterexample directory) the
machine class gets a name stable for the SUT and mode, which is what Hypothesis keys its stored
examples by, so the next run replays a stored failure first.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from fakes._orchestrator import PRIMARY_CRASH_POINTS
from pwh._campaigns.counterexamples.trace import make_trace
from pwh._campaigns.models.catalog import CI_WEIGHTS, HOOK_IDS, PERIODIC, PERIODIC_HOOK_ID, SIBLING, VERSIONED
from pwh._campaigns.models.coverage import Coverage
from pwh._campaigns.models.invariants import Judge, ModelViolation, Violation
from pwh._campaigns.models.language import (
    BAD_RECEIPTS,
    CORE_TIMEOUT_CAP,
    CRASH_ACTIONS,
    DUPLICATE,
    TURN_ACTIONS,
    bad_registration_flaws,
)
from pwh._campaigns.models.system import CannotExpress, ModelSystem, Stats, open_sut

SUT_ENV = "PWH_SUT"
CI_STEPS = 12  # steps per example in the CI profile

# The rules swarm testing may leave out: every rule but ``turn``, which commits the writebacks
# everything else acts on (and the ``setup`` initializer, which always runs).
SWARM_RULES: tuple[str, ...] = (
    "install",
    "install_versioned",
    "install_periodic_report",
    "move_policy",
    "replay",
    "redeliver",
    "crash",
    "install_sibling",
    "bad_receipt",
    "bad_register",
    "profile",
    "restart",
)
ALL_RULES: tuple[str, ...] = ("setup", "turn", *SWARM_RULES)
_RULE_OF_OP = {"policy": "move_policy"}  # a step's op -> the rule that draws it, where they differ


@dataclass(frozen=True)
class Swarm:
    """One example's swarm configuration: what it leaves out (an empty one leaves out nothing)."""

    rules_off: frozenset[str] = frozenset()
    behaviours_off: frozenset[str] = frozenset()
    points_off: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, list[str]]:
        return {"rules_off": sorted(self.rules_off), "behaviours_off": sorted(self.behaviours_off), "points_off": sorted(self.points_off)}


def draw_swarm(data: st.DataObject, behaviours: list[str], points: list[str]) -> Swarm:
    """Leave each optional rule, behaviour and crash point out with probability 1/2 (Groce et al.),
    drawn from the example's data: reproducible from its seed, replayed exactly from the example
    database, and shrinking towards leaving nothing out. At least one behaviour stays (the first,
    most ordinary one, if the draw left out all)."""

    def off(names: list[str], label: str) -> frozenset[str]:
        return frozenset(n for n in names if data.draw(st.booleans(), label=f"swarm: {label} {n} off"))

    rules = off(list(SWARM_RULES), "rule")
    left_out = off(behaviours, "behaviour")
    if behaviours and left_out >= set(behaviours):
        left_out -= {behaviours[0]}
    return Swarm(rules, left_out, off(points, "crash point"))


@dataclass
class MachineConfig:
    """What one model run judges and how; shared by every example of the run."""

    sut: str
    sut_options: dict[str, Any]
    real_crashes: bool
    weights: Mapping[str, int]
    seed: int
    stats: Stats
    progress: Callable[[], None] | None = None
    failures: list[dict[str, Any]] = field(default_factory=list)  # traces of failing examples, in order
    swarm: bool = False  # each example draws a Swarm first (pwh soak)
    coverage: Coverage | None = None  # what the run exercised, when someone reads it
    found_at_example: int | None = None  # stats.examples when the first failure was recorded
    stop_at: float | None = None  # time.monotonic() past which the run's remaining steps do nothing (a soak's budget)
    # (row, invariant) -> a profile divergence's first sighting and how often it was seen (never a failure)
    divergences: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def behaviours(self, left_out: frozenset[str] = frozenset()) -> st.SearchStrategy[str]:
        """Phrases drawn by weight; Hypothesis shrinks towards the first, the most ordinary one."""
        return st.sampled_from([p for p, w in self.weights.items() if p not in left_out for _ in range(max(0, w))])

    def drawable(self) -> list[str]:
        """The behaviours a hook may be installed with (weight above zero), first the most ordinary."""
        return [p for p, w in self.weights.items() if w > 0]


class ModelMachine(RuleBasedStateMachine):
    """Commit, replay, re-deliver, crash and restart, install hooks, move policies; judge each step."""

    config: ClassVar[MachineConfig]

    def __init__(self) -> None:
        super().__init__()
        cfg = self.config
        self.system = ModelSystem(cfg.sut, sut_options=cfg.sut_options, real_crashes=cfg.real_crashes, stats=cfg.stats)
        self.judge = Judge()
        self.versions: dict[str, int] = {}
        self.swarm: Swarm | None = None  # drawn by setup when the run is a swarm run
        self._in_setup = False
        cfg.stats.examples += 1
        if cfg.coverage is not None:
            cfg.coverage.instrument(self.judge)
            points = [*PRIMARY_CRASH_POINTS, *self.system.sut.crash_points]
            cfg.coverage.begin_example(ALL_RULES, [*cfg.drawable(), VERSIONED, PERIODIC], points, cfg.real_crashes)

    def _do(self, step: dict[str, Any]) -> None:
        cfg = self.config
        if cfg.stop_at is not None and time.monotonic() > cfg.stop_at:
            return  # the soak's time is up: what is left of this round's examples runs as no-ops
        if cfg.coverage is not None and not (self._in_setup and step["op"] != "setup"):
            cfg.coverage.rule(self._rule_of(step), self.swarm)
        try:
            record = self.system.apply(step)
        except CannotExpress:
            hypothesis.reject()  # this SUT cannot run the example at all: draw another
        if cfg.coverage is not None:
            cfg.coverage.step(step, record, self.system.hooks.__contains__, self.swarm)
        violation = self.judge.check(self.system, record)
        for found in self.judge.take_divergences():
            note_divergence(
                cfg.divergences, found, functools.partial(make_trace, cfg.seed, cfg.sut, cfg.sut_options, self.system.steps, found)
            )
        if cfg.progress is not None:
            cfg.progress()
        if violation is not None:
            cfg.stats.violations += 1
            trace = make_trace(cfg.seed, cfg.sut, cfg.sut_options, self.system.steps, violation)
            if self.swarm is not None:
                trace["swarm"] = self.swarm.to_json()  # which configuration found it (replay reads only the steps)
            if not cfg.failures:
                cfg.found_at_example = cfg.stats.examples
            cfg.failures.append(trace)
            raise ModelViolation(violation)

    @staticmethod
    def _rule_of(step: dict[str, Any]) -> str:
        op = step["op"]
        if op == "install" and step["hook"].split(".", 1)[-1] == SIBLING:
            return "install_sibling"
        return _RULE_OF_OP.get(op, op)

    def _on(self, rule: str) -> bool:
        """Whether this example's swarm configuration lets ``rule`` fire (always, outside swarm runs)."""
        return self.swarm is None or rule not in self.swarm.rules_off

    def _behaviours(self) -> st.SearchStrategy[str]:
        return self.config.behaviours(self.swarm.behaviours_off if self.swarm is not None else frozenset())

    def _crash_points(self) -> list[str]:
        points = self.system.crash_points()
        if self.swarm is None:
            return points
        return [p for p in points if p not in self.swarm.points_off]

    def teardown(self) -> None:
        self.system.close()

    # -- drawing helpers ---------------------------------------------------------------------

    def _free_ids(self) -> list[str]:
        return [h for h in HOOK_IDS if h not in self.system.hooks and h not in self.system.foreign]

    def _sibling_ids(self) -> list[str]:
        """``<capability>.sibling`` for each installed scripted hook's capability not yet doubled."""
        caps = sorted({h.split(".", 1)[0] for h in self.system.hooks if h in HOOK_IDS})
        return [f"{c}.{SIBLING}" for c in caps if f"{c}.{SIBLING}" not in self.system.hooks]

    def _committed(self) -> int:
        return len(self.system.committed())

    # -- rules -------------------------------------------------------------------------------

    @initialize(data=st.data(), ceiling=st.sampled_from((None, 1, 2)), segment=st.sampled_from((3, 1, 2)))
    def setup(self, data: st.DataObject, ceiling: int | None, segment: int) -> None:
        cfg = self.config
        if cfg.swarm:
            self.swarm = draw_swarm(data, cfg.drawable(), [*PRIMARY_CRASH_POINTS, *self.system.sut.crash_points])
            if cfg.coverage is not None:
                cfg.coverage.note_swarm(self.swarm)
        self._in_setup = True
        self._do({"op": "setup", "ceiling": ceiling, "segment": segment})
        first = data.draw(st.lists(st.sampled_from(HOOK_IDS), max_size=3, unique=True), label="first hooks")
        for hook in first:
            self._do({"op": "install", "hook": hook, "behaviour": data.draw(self._behaviours(), label=hook)})
        self._in_setup = False

    @precondition(lambda self: self._on("install") and bool(self._free_ids()) and "install" not in self.system.unsupported)
    @rule(data=st.data())
    def install(self, data: st.DataObject) -> None:
        hook = data.draw(st.sampled_from(self._free_ids()), label="hook")
        self._do({"op": "install", "hook": hook, "behaviour": data.draw(self._behaviours(), label="behaviour")})

    @precondition(lambda self: self._on("install_versioned") and bool(self._free_ids()))
    @rule(data=st.data())
    def install_versioned(self, data: st.DataObject) -> None:
        hook = data.draw(st.sampled_from(self._free_ids()), label="hook")
        self.versions[hook] = 1
        self._do({"op": "install_versioned", "hook": hook, "version": "v1"})

    @precondition(lambda self: self._on("install_periodic_report") and PERIODIC_HOOK_ID not in self.system.hooks)
    @rule()
    def install_periodic_report(self) -> None:
        self._do({"op": "install_periodic_report"})

    @precondition(lambda self: self._on("move_policy") and any(s.behaviour == VERSIONED for s in self.system.hooks.values()))
    @rule(data=st.data())
    def move_policy(self, data: st.DataObject) -> None:
        hook = data.draw(st.sampled_from(sorted(h for h, s in self.system.hooks.items() if s.behaviour == VERSIONED)))
        self.versions[hook] += 1
        self._do({"op": "policy", "hook": hook, "version": f"v{self.versions[hook]}"})

    @rule(action=st.sampled_from(TURN_ACTIONS))
    def turn(self, action: str) -> None:
        self._do({"op": "turn", "action": action})

    @precondition(lambda self: self._on("replay") and self._committed() > 0)
    @rule(data=st.data())
    def replay(self, data: st.DataObject) -> None:
        self._do({"op": "replay", "writeback": data.draw(st.integers(1, self._committed()), label="writeback")})

    @precondition(lambda self: self._on("redeliver") and self._committed() > 0 and "redeliver" not in self.system.unsupported)
    @rule(data=st.data())
    def redeliver(self, data: st.DataObject) -> None:
        self._do({"op": "redeliver", "writeback": data.draw(st.integers(1, self._committed()), label="writeback")})

    @precondition(lambda self: self._on("crash") and "crash" not in self.system.unsupported and bool(self._crash_points()))
    @rule(data=st.data(), action=st.sampled_from(CRASH_ACTIONS))
    def crash(self, data: st.DataObject, action: str) -> None:
        point = data.draw(st.sampled_from(self._crash_points()), label="point")
        self._do({"op": "crash", "point": point, "action": action, "real": self.config.real_crashes})

    @precondition(lambda self: self._on("install_sibling") and bool(self._sibling_ids()) and "install" not in self.system.unsupported)
    @rule(data=st.data())
    def install_sibling(self, data: st.DataObject) -> None:
        """A second hook of an installed hook's capability: its own identity, budget and records."""
        hook = data.draw(st.sampled_from(self._sibling_ids()), label="hook")
        self._do({"op": "install", "hook": hook, "behaviour": data.draw(self._behaviours(), label="behaviour")})

    @precondition(lambda self: self._on("bad_receipt"))
    @rule(flaw=st.sampled_from(BAD_RECEIPTS))
    def bad_receipt(self, flaw: str) -> None:
        self._do({"op": "bad_receipt", "flaw": flaw})

    @precondition(
        lambda self: (
            self._on("bad_register") and "bad_register" not in self.system.unsupported and bool(self.system.hooks or self._free_ids())
        )
    )
    @rule(data=st.data())
    def bad_register(self, data: st.DataObject) -> None:
        flaws = list(bad_registration_flaws())
        if not self.system.hooks:
            flaws.remove(DUPLICATE)
        if not self._free_ids():
            flaws = [DUPLICATE]
        flaw = data.draw(st.sampled_from(flaws), label="flaw")
        pool = sorted(self.system.hooks) if flaw == DUPLICATE else self._free_ids()
        self._do({"op": "bad_register", "hook": data.draw(st.sampled_from(pool), label="hook"), "flaw": flaw})

    @precondition(lambda self: self._on("profile") and "profile" not in self.system.unsupported)
    @rule(data=st.data(), setting=st.sampled_from(("phase", "allowlist", "ceiling", "attempts", "timeout_cap")))
    def profile(self, data: st.DataObject, setting: str) -> None:
        """Change the execution profile between dispatches: it governs what comes after only."""
        values: dict[str, st.SearchStrategy[Any]] = {
            "phase": st.booleans(),
            "allowlist": st.sampled_from([None, *sorted(self.system.hooks), *HOOK_IDS]),
            "ceiling": st.sampled_from((1, 2, 32)),
            "attempts": st.sampled_from((3, 1, 2)),
            "timeout_cap": st.sampled_from((CORE_TIMEOUT_CAP, 100)),
        }
        self._do({"op": "profile", "setting": setting, "value": data.draw(values[setting], label=setting)})

    @precondition(lambda self: self._on("restart") and "restart" not in self.system.unsupported)
    @rule()
    def restart(self) -> None:
        self._do({"op": "restart"})


@dataclass
class ModelRun:
    """The result of one model run: what was found (if anything) and where it was written."""

    sut: str
    seed: int
    stats: Stats
    violation: Violation | None = None
    trace: dict[str, Any] | None = None
    paths: list[Path] = field(default_factory=list)
    flaky: bool = False
    found_at_example: int | None = None  # the example (counted on ``stats``) that first failed
    # (row, invariant) -> each profile divergence seen: counted apart, never a failure (``note_divergence``)
    divergences: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return self.violation is not None


def model_settings(
    *,
    max_examples: int | None = None,
    steps: int | None = None,
    shrink: bool = True,
    database: ExampleDatabase | None = None,
    reuse: bool = True,
) -> settings:
    """Settings for a model run; ``max_examples`` defaults to the loaded Hypothesis profile's.

    No example database unless one is given (the tests run without one: deterministic from their
    seeds); with one, failures are saved to it and, if ``reuse``, its stored ones replayed first."""
    phases = [Phase.explicit] + ([Phase.reuse] if database is not None and reuse else []) + [Phase.generate]
    phases += [Phase.shrink] if shrink else []
    loaded = settings.default
    assert loaded is not None  # Hypothesis always has a profile loaded
    return settings(
        max_examples=max_examples if max_examples is not None else loaded.max_examples,
        stateful_step_count=steps or CI_STEPS,
        deadline=None,
        database=database,
        phases=phases,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
    )


def run_model(
    sut: str | None = None,
    *,
    seed: int | None = None,
    max_examples: int | None = None,
    steps: int | None = None,
    shrink: Literal["trace", "hypothesis", "none"] = "trace",
    shrink_budget_s: float = 8.0,
    real_crashes: bool = False,
    weights: Mapping[str, int] | None = None,
    sut_options: Mapping[str, Any] | None = None,
    stats: Stats | None = None,
    progress: Callable[[], None] | None = None,
    export: bool = True,
    directory: str | Path | None = None,
    out: Callable[[str], None] | None = print,
    swarm: bool = False,
    coverage: Coverage | None = None,
    database: ExampleDatabase | None = None,
    reuse: bool = True,
    stop_at: float | None = None,
) -> ModelRun:
    """Run the model against ``sut`` (default ``$PWH_SUT`` or ``reference``) and, when it finds a
    counterexample, shrink it and write it (JSON trace and Gherkin) unless ``export`` is false.

    ``shrink``: ``"trace"`` (the bounded trace shrinker, ``shrink_budget_s`` seconds: the CI
    default), ``"hypothesis"`` (Hypothesis's own, thorough and slow: soaks) or ``"none"``.
    ``swarm``: each example draws a :class:`Swarm` first. ``coverage``: counts what the run
    exercised into it. ``stop_at``: past this ``time.monotonic()`` every step is a no-op, so the
    run ends soon after (a soak's budget). ``database``: save failures there and (``reuse``) replay stored ones first;
    the machine class is then named for the SUT and mode, the key Hypothesis stores them under.
    """
    if shrink not in ("trace", "hypothesis", "none"):
        raise ValueError("shrink must be 'trace', 'hypothesis' or 'none'")
    name = sut or os.environ.get(SUT_ENV) or "reference"
    seed = secrets.randbelow(2**32) if seed is None else seed
    options = dict(sut_options or {})
    _probe_sut(name, options, real_crashes)
    config = MachineConfig(name, options, real_crashes, dict(weights or CI_WEIGHTS), seed, stats or Stats(), progress)
    config.swarm, config.coverage, config.stop_at = swarm, coverage, stop_at
    class_name = (
        "ModelMachineRun" if database is None else machine_key(name, options, real_crashes, config.weights, swarm, steps or CI_STEPS)
    )
    machine = hypothesis.seed(seed)(type(class_name, (ModelMachine,), {"config": config, "__qualname__": class_name}))
    run = ModelRun(name, seed, config.stats, divergences=config.divergences)
    chosen = model_settings(max_examples=max_examples, steps=steps, shrink=shrink == "hypothesis", database=database, reuse=reuse)
    try:
        run_state_machine_as_test(machine, settings=chosen)
    except ModelViolation as exc:
        run.violation = exc.violation
    except Exception:
        if not config.failures:
            raise
        run.flaky = True  # the shrunk run did not fail again the same way (e.g. timing)
    if not config.failures:
        return run
    run.found_at_example = config.found_at_example
    run.trace = config.failures[-1]
    if shrink == "trace":
        from pwh._campaigns.counterexamples.shrink import shrink_trace

        run.trace = with_swarm(shrink_trace(run.trace, budget_s=shrink_budget_s), run.trace)
    run.violation = Violation.from_json(run.trace["violation"])
    if export:
        from pwh._campaigns.counterexamples.trace import write_counterexample

        run.paths = write_counterexample(run.trace, directory, out=out)
    return run


def note_divergence(book: dict[tuple[str, str], dict[str, Any]], found: Violation, example: Callable[[], dict[str, Any]]) -> None:
    """Count a profile divergence into ``book``: the first of each (row, invariant) is kept with
    its example history (``example()``, made only then: the steps up to it, never written out as a
    counterexample), later ones only counted."""
    key = (found.row, found.invariant)
    kept = book.get(key)
    if kept is None:
        trace = example()
        trace["divergence"] = trace.pop("violation")
        book[key] = kept = {**found.to_json(), "times": 0, "example": trace}
    kept["times"] += 1


def machine_key(sut: str, options: Mapping[str, Any], real: bool, weights: Mapping[str, int], swarm: bool, steps: int) -> str:
    """The machine class's name for a run with an example database, stable across processes.

    Hypothesis keys stored examples by the test's digest, which for a state machine is its class's
    source or, for a class made at run time (no source), its name: so the name carries every input
    that gives a stored choice sequence its meaning (the SUT, crash mode, weights, swarm, steps
    per history). A run that differs in any of them neither replays nor deletes the others."""
    key = json.dumps([sut, dict(options), real, dict(weights), swarm, steps], sort_keys=True, default=str)
    return "ModelMachineRun_" + hashlib.sha256(key.encode()).hexdigest()[:16]


def with_swarm(shrunk: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """The shrunk trace keeps the swarm configuration of the run that found it."""
    if "swarm" in found:
        shrunk["swarm"] = found["swarm"]
    return shrunk


def _probe_sut(name: str, options: Mapping[str, Any], need_workdir: bool) -> None:
    """Fail early with the loader's own clear error rather than inside Hypothesis."""
    import shutil
    import tempfile

    from pwh._suts.seam import close_sut

    tmp = Path(tempfile.mkdtemp(prefix="pwh-model-probe-"))
    try:
        close_sut(open_sut(name, tmp, options, need_workdir=need_workdir), name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
