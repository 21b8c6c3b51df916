"""The models' simulation engine: histories drawn from one seed, run in virtual time.

Hypothesis is the right engine to shrink and to keep an example database, and costs a quarter of
a step. A search wants steps: here every choice (the rule, its arguments, the swarm
configuration) comes from a ``random.Random`` seeded per example from the run's seed, providers
run on the virtual-time runner (:mod:`pwh._core.simulated_runner`) and crashes are the
in-process simulated ones, so one seed makes the same histories, the same verdicts and the same
trace, byte for byte, on any machine under any load. A failing history is shrunk by the trace
shrinker (in simulation too) and then replayed in real mode (:func:`confirm_in_real_mode`):
providers on the reference's real runner with real limits. Only a finding that real mode shows
again is reported as one.
"""

from __future__ import annotations

import hashlib
import random
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

from pwh._campaigns.models.catalog import CI_WEIGHTS
from pwh._campaigns.models.coverage import Coverage
from pwh._campaigns.models.driver import STEP_RULES, MachineConfig, ModelDriver, SeededChooser
from pwh._campaigns.models.errors import CannotExpress
from pwh._campaigns.models.invariants import ModelViolation, Violation
from pwh._campaigns.models.machine import CI_STEPS, ModelRun, _probe_sut, with_swarm
from pwh._campaigns.models.system import Stats

__all__ = ["CONFIRM_ATTEMPTS", "confirm_in_real_mode", "example_seed", "run_simulation"]


def example_seed(seed: int, example: int) -> int:
    """The seed of a run's ``example``-th history (from 0): a digest, so neighbouring runs' seeds
    never share histories."""
    return int.from_bytes(hashlib.sha256(f"pwh-simulation:{seed}:{example}".encode()).digest()[:8], "big")


def run_simulation(
    sut: str | None = None,
    *,
    seed: int | None = None,
    max_examples: int = 10,
    steps: int | None = None,
    weights: Mapping[str, int] | None = None,
    sut_options: Mapping[str, Any] | None = None,
    stats: Stats | None = None,
    progress: Callable[[], None] | None = None,
    swarm: bool = False,
    coverage: Coverage | None = None,
    stop_at: float | None = None,
    shrink_budget_s: float | None = 8.0,
    probe: bool = True,
    transcript: list[bytes] | None = None,
) -> ModelRun:
    """Run ``max_examples`` seeded histories of ``steps`` steps against ``sut`` in simulation;
    stop at the first broken RFC invariant, shrink its trace (``shrink_budget_s`` seconds, or not
    at all when None) and return it. Nothing is written and nothing is confirmed here: the caller
    replays the trace in real mode (:func:`confirm_in_real_mode`) before reporting it.
    ``transcript``: a list that gets one line per step run (``driver.transcript_line``)."""
    name = sut or "reference"
    seed = secrets.randbelow(2**32) if seed is None else seed
    options = dict(sut_options or {})
    if probe:
        _probe_sut(name, options, False)
    config = MachineConfig(name, options, False, dict(weights or CI_WEIGHTS), seed, stats or Stats(), progress)
    config.swarm, config.coverage, config.stop_at, config.simulated = swarm, coverage, stop_at, True
    config.transcript = transcript
    run = ModelRun(name, seed, config.stats, divergences=config.divergences)
    length = steps or CI_STEPS
    example_class = type("SimulatedExample", (ModelDriver,), {"config": config})
    for example in range(max_examples):
        if stop_at is not None and time.monotonic() > stop_at:
            break
        rng = random.Random(example_seed(seed, example))
        driver = example_class()
        driver.start_example()
        choose = SeededChooser(rng)
        try:
            driver.do_setup(choose)
            for _ in range(length):
                driver.do(rng.choice([r for r in STEP_RULES if driver.enabled(r)]), choose)
        except ModelViolation as exc:
            run.violation = exc.violation
            break
        except CannotExpress:
            continue  # this SUT cannot run this history at all: the next one
        finally:
            driver.end_example()
    if not config.failures:
        return run
    run.found_at_example = config.found_at_example
    run.trace = config.failures[-1]
    if shrink_budget_s is not None:
        from pwh._campaigns.counterexamples.shrink import shrink_trace

        run.trace = with_swarm(shrink_trace(run.trace, budget_s=shrink_budget_s), run.trace)
    run.violation = Violation.from_json(run.trace["violation"])
    return run


CONFIRM_ATTEMPTS = 3  # real-mode replays of one history before it is called simulation-only


def confirm_in_real_mode(trace: dict[str, Any], *, attempts: int = CONFIRM_ATTEMPTS) -> Violation | None:
    """Replay a trace found in simulation with real providers (the SUT's own runner, real limits):
    the violation real mode shows, if it is the same invariant; else None (a simulation-only one).

    Real mode runs on real time: on a machine busy enough that an ordinary provider misses its
    limit, a replay can break another invariant first (a timed-out answer) and hide the one found.
    So the history is replayed up to ``attempts`` times; one replay showing it again confirms it."""
    from pwh._campaigns.counterexamples.trace import run_steps
    from pwh._campaigns.models.errors import ModelError

    for _ in range(max(1, attempts)):
        try:
            _ran, found = run_steps(trace["sut"], trace["steps"], trace.get("sut_options", {}), simulated=False)
        except ModelError:
            return None
        if found is not None and found.invariant == trace["violation"]["invariant"]:
            return found
    return None
