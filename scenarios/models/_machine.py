"""The Hypothesis state machine: draws action steps, runs them on the SUT, judges every step.

One machine class serves every SUT and mode: :func:`run_model` makes a subclass carrying a
:class:`MachineConfig` (which SUT, simulated or real crashes, draw weights) and runs it with
``run_state_machine_as_test``. The machine stops at the first broken invariant and keeps the
run as a trace; the trace is then shrunk, by the bounded trace shrinker (``_shrink``: the CI
default) or by Hypothesis itself (whose last failing run is the shrunk one).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from ._catalog import CI_WEIGHTS, HOOK_IDS, PERIODIC_HOOK_ID, SIBLING, VERSIONED
from ._invariants import Judge, ModelViolation, Violation
from ._steps import (
    BAD_RECEIPTS,
    CORE_TIMEOUT_CAP,
    CRASH_ACTIONS,
    DUPLICATE,
    TURN_ACTIONS,
    bad_registration_flaws,
)
from ._system import CannotExpress, ModelSystem, Stats, open_sut
from ._trace import make_trace

SUT_ENV = "PWH_SUT"
CI_STEPS = 12  # steps per example in the CI profile


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

    def behaviours(self) -> st.SearchStrategy[str]:
        """Phrases drawn by weight; Hypothesis shrinks towards the first, the most ordinary one."""
        return st.sampled_from([p for p, w in self.weights.items() for _ in range(max(0, w))])


class ModelMachine(RuleBasedStateMachine):
    """Commit, replay, re-deliver, crash and restart, install hooks, move policies; judge each step."""

    config: ClassVar[MachineConfig]

    def __init__(self) -> None:
        super().__init__()
        cfg = self.config
        self.system = ModelSystem(cfg.sut, sut_options=cfg.sut_options, real_crashes=cfg.real_crashes, stats=cfg.stats)
        self.judge = Judge()
        self.versions: dict[str, int] = {}
        cfg.stats.examples += 1

    def _do(self, step: dict[str, Any]) -> None:
        try:
            record = self.system.apply(step)
        except CannotExpress:
            hypothesis.reject()  # this SUT cannot run the example at all: draw another
        violation = self.judge.check(self.system, record)
        cfg = self.config
        if cfg.progress is not None:
            cfg.progress()
        if violation is not None:
            cfg.stats.violations += 1
            cfg.failures.append(make_trace(cfg.seed, cfg.sut, cfg.sut_options, self.system.steps, violation))
            raise ModelViolation(violation)

    def teardown(self) -> None:
        self.system.close()

    # -- drawing helpers ---------------------------------------------------------------------

    def _free_ids(self) -> list[str]:
        return [h for h in HOOK_IDS if h not in self.system.hooks]

    def _sibling_ids(self) -> list[str]:
        """``<capability>.sibling`` for each installed scripted hook's capability not yet doubled."""
        caps = sorted({h.split(".", 1)[0] for h in self.system.hooks if h in HOOK_IDS})
        return [f"{c}.{SIBLING}" for c in caps if f"{c}.{SIBLING}" not in self.system.hooks]

    def _committed(self) -> int:
        return len(self.system.committed())

    # -- rules -------------------------------------------------------------------------------

    @initialize(data=st.data(), ceiling=st.sampled_from((None, 1, 2)), segment=st.sampled_from((3, 1, 2)))
    def setup(self, data: st.DataObject, ceiling: int | None, segment: int) -> None:
        self._do({"op": "setup", "ceiling": ceiling, "segment": segment})
        first = data.draw(st.lists(st.sampled_from(HOOK_IDS), max_size=3, unique=True), label="first hooks")
        for hook in first:
            self._do({"op": "install", "hook": hook, "behaviour": data.draw(self.config.behaviours(), label=hook)})

    @precondition(lambda self: bool(self._free_ids()) and "install" not in self.system.unsupported)
    @rule(data=st.data())
    def install(self, data: st.DataObject) -> None:
        hook = data.draw(st.sampled_from(self._free_ids()), label="hook")
        self._do({"op": "install", "hook": hook, "behaviour": data.draw(self.config.behaviours(), label="behaviour")})

    @precondition(lambda self: bool(self._free_ids()))
    @rule(data=st.data())
    def install_versioned(self, data: st.DataObject) -> None:
        hook = data.draw(st.sampled_from(self._free_ids()), label="hook")
        self.versions[hook] = 1
        self._do({"op": "install_versioned", "hook": hook, "version": "v1"})

    @precondition(lambda self: PERIODIC_HOOK_ID not in self.system.hooks)
    @rule()
    def install_periodic_report(self) -> None:
        self._do({"op": "install_periodic_report"})

    @precondition(lambda self: any(s.behaviour == VERSIONED for s in self.system.hooks.values()))
    @rule(data=st.data())
    def move_policy(self, data: st.DataObject) -> None:
        hook = data.draw(st.sampled_from(sorted(h for h, s in self.system.hooks.items() if s.behaviour == VERSIONED)))
        self.versions[hook] += 1
        self._do({"op": "policy", "hook": hook, "version": f"v{self.versions[hook]}"})

    @rule(action=st.sampled_from(TURN_ACTIONS))
    def turn(self, action: str) -> None:
        self._do({"op": "turn", "action": action})

    @precondition(lambda self: self._committed() > 0)
    @rule(data=st.data())
    def replay(self, data: st.DataObject) -> None:
        self._do({"op": "replay", "writeback": data.draw(st.integers(1, self._committed()), label="writeback")})

    @precondition(lambda self: self._committed() > 0 and "redeliver" not in self.system.unsupported)
    @rule(data=st.data())
    def redeliver(self, data: st.DataObject) -> None:
        self._do({"op": "redeliver", "writeback": data.draw(st.integers(1, self._committed()), label="writeback")})

    @precondition(lambda self: "crash" not in self.system.unsupported)
    @rule(data=st.data(), action=st.sampled_from(CRASH_ACTIONS))
    def crash(self, data: st.DataObject, action: str) -> None:
        point = data.draw(st.sampled_from(self.system.crash_points()), label="point")
        self._do({"op": "crash", "point": point, "action": action, "real": self.config.real_crashes})

    @precondition(lambda self: bool(self._sibling_ids()) and "install" not in self.system.unsupported)
    @rule(data=st.data())
    def install_sibling(self, data: st.DataObject) -> None:
        """A second hook of an installed hook's capability: its own identity, budget and records."""
        hook = data.draw(st.sampled_from(self._sibling_ids()), label="hook")
        self._do({"op": "install", "hook": hook, "behaviour": data.draw(self.config.behaviours(), label="behaviour")})

    @rule(flaw=st.sampled_from(BAD_RECEIPTS))
    def bad_receipt(self, flaw: str) -> None:
        self._do({"op": "bad_receipt", "flaw": flaw})

    @precondition(lambda self: "bad_register" not in self.system.unsupported)
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

    @precondition(lambda self: "profile" not in self.system.unsupported)
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

    @precondition(lambda self: "restart" not in self.system.unsupported)
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

    @property
    def found(self) -> bool:
        return self.violation is not None


def model_settings(*, max_examples: int | None = None, steps: int | None = None, shrink: bool = True) -> settings:
    """Settings for a model run; ``max_examples`` defaults to the loaded Hypothesis profile's."""
    phases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if shrink else [])
    loaded = settings.default
    assert loaded is not None  # Hypothesis always has a profile loaded
    return settings(
        max_examples=max_examples if max_examples is not None else loaded.max_examples,
        stateful_step_count=steps or CI_STEPS,
        deadline=None,
        database=None,
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
) -> ModelRun:
    """Run the model against ``sut`` (default ``$PWH_SUT`` or ``reference``) and, when it finds a
    counterexample, shrink it and write it (JSON trace and Gherkin) unless ``export`` is false.

    ``shrink``: ``"trace"`` (the bounded trace shrinker, ``shrink_budget_s`` seconds: the CI
    default), ``"hypothesis"`` (Hypothesis's own, thorough and slow: soaks) or ``"none"``.
    """
    if shrink not in ("trace", "hypothesis", "none"):
        raise ValueError("shrink must be 'trace', 'hypothesis' or 'none'")
    name = sut or os.environ.get(SUT_ENV) or "reference"
    seed = secrets.randbelow(2**32) if seed is None else seed
    options = dict(sut_options or {})
    _probe_sut(name, options, real_crashes)
    config = MachineConfig(name, options, real_crashes, dict(weights or CI_WEIGHTS), seed, stats or Stats(), progress)
    machine = hypothesis.seed(seed)(type("ModelMachineRun", (ModelMachine,), {"config": config}))
    run = ModelRun(name, seed, config.stats)
    try:
        run_state_machine_as_test(machine, settings=model_settings(max_examples=max_examples, steps=steps, shrink=shrink == "hypothesis"))
    except ModelViolation as exc:
        run.violation = exc.violation
    except Exception:
        if not config.failures:
            raise
        run.flaky = True  # the shrunk run did not fail again the same way (e.g. timing)
    if not config.failures:
        return run
    run.trace = config.failures[-1]
    if shrink == "trace":
        from ._shrink import shrink_trace

        run.trace = shrink_trace(run.trace, budget_s=shrink_budget_s)
    run.violation = Violation(**run.trace["violation"])
    if export:
        from ._trace import write_counterexample

        run.paths = write_counterexample(run.trace, directory, out=out)
    return run


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
