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

import hashlib
import json
import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

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

from pwh._campaigns.models.catalog import CI_WEIGHTS
from pwh._campaigns.models.coverage import Coverage
from pwh._campaigns.models.driver import ALL_RULES, SWARM_RULES, MachineConfig, ModelDriver, Swarm, note_divergence
from pwh._campaigns.models.invariants import ModelViolation, Violation
from pwh._campaigns.models.system import CannotExpress, Stats, open_sut

__all__ = ["ALL_RULES", "SWARM_RULES", "MachineConfig", "ModelMachine", "ModelRun", "Swarm", "note_divergence", "run_model"]

SUT_ENV = "PWH_SUT"
CI_STEPS = 12  # steps per example in the CI profile


class HypothesisChooser:
    """A rule's choices drawn from Hypothesis's ``st.data()``: shrinkable, stored in the example
    database, each labelled as the trace's reader would name it."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def sample(self, options: Any, label: str) -> Any:
        return self.data.draw(st.sampled_from(options), label=label)

    def integer(self, low: int, high: int, label: str) -> int:
        return self.data.draw(st.integers(low, high), label=label)

    def boolean(self, label: str) -> bool:
        return self.data.draw(st.booleans(), label=label)

    def unique_list(self, options: Any, max_size: int, label: str) -> list[Any]:
        return self.data.draw(st.lists(st.sampled_from(options), max_size=max_size, unique=True), label=label)


class ModelMachine(ModelDriver, RuleBasedStateMachine):
    """Commit, replay, re-deliver, crash and restart, install hooks, move policies; judge each step.

    The rules are the driver's (:mod:`.driver`); each one here only hands Hypothesis's data over."""

    def __init__(self) -> None:
        super().__init__()
        self.start_example()

    def _do(self, step: dict[str, Any]) -> None:
        try:
            super()._do(step)
        except CannotExpress:
            hypothesis.reject()  # this SUT cannot run the example at all: draw another

    def teardown(self) -> None:
        self.end_example()

    @initialize(data=st.data())
    def setup(self, data: st.DataObject) -> None:
        self.do_setup(HypothesisChooser(data))

    @precondition(lambda self: self.enabled("install"))
    @rule(data=st.data())
    def install(self, data: st.DataObject) -> None:
        self.do("install", HypothesisChooser(data))

    @precondition(lambda self: self.enabled("install_versioned"))
    @rule(data=st.data())
    def install_versioned(self, data: st.DataObject) -> None:
        self.do("install_versioned", HypothesisChooser(data))

    @precondition(lambda self: self.enabled("install_periodic_report"))
    @rule(data=st.data())
    def install_periodic_report(self, data: st.DataObject) -> None:
        self.do("install_periodic_report", HypothesisChooser(data))

    @precondition(lambda self: self.enabled("move_policy"))
    @rule(data=st.data())
    def move_policy(self, data: st.DataObject) -> None:
        self.do("move_policy", HypothesisChooser(data))

    @rule(data=st.data())
    def turn(self, data: st.DataObject) -> None:
        self.do("turn", HypothesisChooser(data))

    @precondition(lambda self: self.enabled("replay"))
    @rule(data=st.data())
    def replay(self, data: st.DataObject) -> None:
        self.do("replay", HypothesisChooser(data))

    @precondition(lambda self: self.enabled("redeliver"))
    @rule(data=st.data())
    def redeliver(self, data: st.DataObject) -> None:
        self.do("redeliver", HypothesisChooser(data))

    @precondition(lambda self: self.enabled("crash"))
    @rule(data=st.data())
    def crash(self, data: st.DataObject) -> None:
        self.do("crash", HypothesisChooser(data))

    @precondition(lambda self: self.enabled("install_sibling"))
    @rule(data=st.data())
    def install_sibling(self, data: st.DataObject) -> None:
        self.do("install_sibling", HypothesisChooser(data))

    @precondition(lambda self: self.enabled("bad_receipt"))
    @rule(data=st.data())
    def bad_receipt(self, data: st.DataObject) -> None:
        self.do("bad_receipt", HypothesisChooser(data))

    @precondition(lambda self: self.enabled("bad_register"))
    @rule(data=st.data())
    def bad_register(self, data: st.DataObject) -> None:
        self.do("bad_register", HypothesisChooser(data))

    @precondition(lambda self: self.enabled("profile"))
    @rule(data=st.data())
    def profile(self, data: st.DataObject) -> None:
        self.do("profile", HypothesisChooser(data))

    @precondition(lambda self: self.enabled("restart"))
    @rule(data=st.data())
    def restart(self, data: st.DataObject) -> None:
        self.do("restart", HypothesisChooser(data))


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
    simulated: bool = False,
) -> ModelRun:
    """Run the model against ``sut`` (default ``$PWH_SUT`` or ``reference``) and, when it finds a
    counterexample, shrink it and write it (JSON trace and Gherkin) unless ``export`` is false.

    ``shrink``: ``"trace"`` (the bounded trace shrinker, ``shrink_budget_s`` seconds: the CI
    default), ``"hypothesis"`` (Hypothesis's own, thorough and slow: soaks) or ``"none"``.
    ``swarm``: each example draws a :class:`Swarm` first. ``coverage``: counts what the run
    exercised into it. ``stop_at``: past this ``time.monotonic()`` every step is a no-op, so the
    run ends soon after (a soak's budget). ``database``: save failures there and (``reuse``) replay stored ones first;
    the machine class is then named for the SUT and mode, the key Hypothesis stores them under.
    ``simulated``: providers run in virtual time (:class:`pwh._core.simulated_runner.SimulatedRunner`)
    where the SUT takes a runner; a trace then says so, and is shrunk in simulation too.
    """
    if shrink not in ("trace", "hypothesis", "none"):
        raise ValueError("shrink must be 'trace', 'hypothesis' or 'none'")
    name = sut or os.environ.get(SUT_ENV) or "reference"
    seed = secrets.randbelow(2**32) if seed is None else seed
    options = dict(sut_options or {})
    _probe_sut(name, options, real_crashes)
    config = MachineConfig(name, options, real_crashes, dict(weights or CI_WEIGHTS), seed, stats or Stats(), progress)
    config.swarm, config.coverage, config.stop_at = swarm, coverage, stop_at
    config.simulated = simulated and not real_crashes
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


def machine_key(sut: str, options: Mapping[str, Any], real: bool, weights: Mapping[str, int], swarm: bool, steps: int) -> str:
    """The machine class's name for a run with an example database, stable across processes.

    Hypothesis keys stored examples by the test's digest, which for a state machine is its class's
    source or, for a class made at run time (no source), its name: so the name carries every input
    that gives a stored choice sequence its meaning (the SUT, crash mode, weights, swarm, steps
    per history). A run that differs in any of them neither replays nor deletes the others."""
    key = json.dumps([sut, dict(options), real, dict(weights), swarm, steps], sort_keys=True, default=str)
    return "ModelMachineRun_" + hashlib.sha256(key.encode()).hexdigest()[:16]


def with_swarm(shrunk: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """The shrunk trace keeps the swarm configuration of the run that found it, and its mode."""
    for key in ("swarm", "simulated"):
        if key in found:
            shrunk[key] = found[key]
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
