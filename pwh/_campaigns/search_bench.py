"""``pwh soak --benchmark``: how fast the models search, measured from one command.

Two kinds of figure, each printed beside its target (met / MISSED) and written as JSON, both
measured with :func:`search`, which runs the rounds ``pwh soak`` runs (:mod:`._soak`: each
round's seed derived from the search's, ten examples a round, the default profile's history
length, the soak's draw weights) and keeps the soak's :class:`._system.Stats`, so a figure also
says how many hook calls hung (each costs its registered timeout in real time: a floor no
speed-up lowers):

- **Model steps per second** in three modes, each a search of the reference from a fixed seed
  for a fixed number of steps in whole rounds (so two runs, before and after a change, run the
  very same examples): the in-memory journal with simulated crashes (``reference-memory``, the
  mode with a target), the SQLite journal with simulated crashes, and the SQLite journal with a
  real SIGKILL crash in every round.
- **Time to find each mutant the models are meant to catch** (the registry's mutants with
  ``models`` among their ``caught_by``, as ``tests/campaigns/test_models.py`` takes them): for
  every seed of a fixed set, a search of the mutant (simulated crashes) until a violation of the
  mutant's own row or a cap; per mutant the median over seeds, overall the median of those and the
  slowest single search. A search that reaches the cap is "not found", which misses the target
  that every mutant is found.

Targets are reported, never enforced (as ``pwh bench`` does): the command's exit code says whether
it measured, and whether the reference broke an invariant while it did (a finding, not a figure).
A warm-up run comes first, so no figure pays for imports. The machine is shared and its speed
drifts: read a figure with the load averages the report gives beside it.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

SCHEMA = "pwh_model_benchmark_v0"

STEPS_PER_S_TARGET = 1000.0  # the in-memory mode, simulated crashes
MEDIAN_FIND_TARGET_S = 1.0  # in simulation
MAX_FIND_TARGET_S = 60.0

MODE_SEED = 1
MUTANT_SEEDS: tuple[int, ...] = (1, 2, 3)
FULL_MODE_STEPS = {"simulation": 10000, "memory_simulated": 3000, "sqlite_simulated": 3000, "sqlite_real": 800}  # about 20 s each here
FULL_CAP_S = 60.0  # a search that has not found its mutant by then: "not found"
SCALING_TARGET = 1.8  # steps/s of two workers over one, on the same histories
SCALING_MINUTES = 10 / 60  # each of the three soaks it takes (the full run only)
QUICK_MODE_STEPS = 40  # one round of two examples a mode (the first of a round is the simplest history)
QUICK_CAP_S = 10.0
QUICK_SEEDS: tuple[int, ...] = (1,)
QUICK_MUTANTS: tuple[str, ...] = ("replay_calls_provider", "calls_sink")  # each found in its first round
QUICK_ROUND_EXAMPLES = 2


@dataclass(frozen=True)
class Mode:
    name: str
    sut: str
    real_crashes: bool
    label: str
    target: float | None  # steps per second, or None: measured, no target
    simulated: bool = False  # the simulation engine (seeded histories, virtual time) rather than Hypothesis in real time


MODES: tuple[Mode, ...] = (
    Mode("simulation", "reference-memory", False, "simulation, in-memory journal, virtual time", STEPS_PER_S_TARGET, True),
    Mode("memory_simulated", "reference-memory", False, "in-memory journal, simulated crashes", None),
    Mode("sqlite_simulated", "reference", False, "SQLite journal, simulated crashes", None),
    Mode("sqlite_real", "reference", True, "SQLite journal, real crashes (every round)", None),
)


def models_mutants() -> dict[str, str]:
    """The mutants the models are meant to catch: name -> the row whose rule each breaks."""
    from pwh._suts.mutants import caught_by

    return caught_by("models")


def run_benchmark(
    *,
    quick: bool = False,
    out: Callable[[str], None] = print,
    mode_steps: int | None = None,
    cap_s: float | None = None,
    seeds: Sequence[int] | None = None,
    mutants: Sequence[str] | None = None,
    modes: Sequence[str] | None = None,
    warm_up: bool = True,
) -> dict[str, Any]:
    """Measure every mode and every mutant's time to find; return the result (see :data:`SCHEMA`).

    ``quick`` measures one round of two examples per mode and two mutants on one seed (the smoke
    test's run: its figures are a sample, not the benchmark). The
    keyword overrides exist for tests, e.g. a cap so low that no mutant is found (``warm_up=False``
    then spares the warm-up run).
    """
    known = models_mutants()
    chosen = list(mutants) if mutants is not None else (list(QUICK_MUTANTS) if quick else sorted(known))
    unknown = [m for m in chosen if m not in known]
    if unknown:
        raise ValueError(f"not a mutant the models are meant to catch: {', '.join(unknown)}")
    budgets = {m.name: mode_steps or (QUICK_MODE_STEPS if quick else FULL_MODE_STEPS[m.name]) for m in MODES}
    cap = cap_s if cap_s is not None else (QUICK_CAP_S if quick else FULL_CAP_S)
    seed_set = tuple(seeds) if seeds is not None else (QUICK_SEEDS if quick else MUTANT_SEEDS)
    selected = [m for m in MODES if modes is None or m.name in modes]
    result: dict[str, Any] = {
        "schema_version": SCHEMA,
        "quick": quick,
        "machine": _machine(),
        "settings": {
            "mode_steps": {m.name: budgets[m.name] for m in selected},
            "mode_seed": MODE_SEED,
            "cap_s": cap,
            "seeds": list(seed_set),
            **_round_settings(QUICK_ROUND_EXAMPLES if quick else None),
        },
        "modes": {},
        "mutants": {},
        "reference_violations": [],
    }
    out(
        f"pwh soak --benchmark: {'quick' if quick else 'full'} run: {len(selected)} modes "
        f"({', '.join(str(budgets[m.name]) for m in selected) or 'none'} steps), "
        f"{len(chosen)} mutants x {len(seed_set)} seed(s) (cap {cap:g} s each); load {_load()}"
    )
    if warm_up:
        _warm_up()
    for mode in selected:
        figure = measure_mode(mode, budgets[mode.name], round_examples=QUICK_ROUND_EXAMPLES if quick else None)
        result["modes"][mode.name] = figure
        result["reference_violations"] += [{"mode": mode.name, **v} for v in figure.pop("violations")]
        out(
            f"  {mode.label}: {figure['steps']} steps in {figure['seconds']:.1f} s = {figure['steps_per_s']:.0f} steps/s "
            f"({figure['hooks_timed_out']} hung hook calls)"
        )
    result["scaling"] = None if quick or modes is not None else measure_scaling(SCALING_MINUTES)
    if result["scaling"] is not None:
        sc = result["scaling"]
        out(
            f"  2 workers: {sc['together_steps_per_s']:.0f} steps/s against {sc['alone_steps_per_s']:.0f} for one = {sc['scaling']:.2f}x "
            f"(steps over the time the soaks were stepping; each worker's start-up, up to {sc['startup_s']:.1f} s, apart)"
        )
    for name in chosen:
        runs = [time_to_find(name, known[name], seed, cap, confirm=i == 0) for i, seed in enumerate(seed_set)]
        result["mutants"][name] = _mutant_summary(known[name], runs)
        m = result["mutants"][name]
        out(f"  {name}: {_seconds(m['median_s'])} (median of {len(runs)}), {m['median_steps']} steps")
    result["machine"]["load_after"] = list(os.getloadavg())
    result["summary"] = _summary(result["mutants"])
    result["targets"] = evaluate_targets(result)
    return result


def measure_scaling(minutes: float) -> dict[str, Any]:
    """Steps per second of two soaks at once, each in its own process as ``pwh soak --workers 2``
    runs them, over one soak's, on the same histories: each worker's seed soaked alone, one after
    the other, then both at once (:func:`soak_together`); a worker's histories decide its speed (a
    hung hook waits out its timeout), so only the same seeds compare. In-memory journal, simulated
    crashes, no example database.

    Each rate is steps over the time the soaks were stepping: a soak's own clock, which starts at
    its first round. The soaks alone run in this process, warmed up; so each worker first starts
    (spawn, imports) and warms up the same way, then all start stepping together, and that
    start-up is reported apart (``startup_s``), never counted in the rate."""
    from pwh._campaigns.distribute.workers import worker_seed
    from pwh._campaigns.soak import soak

    options: dict[str, Any] = {"real_crashes": False, "database": False}
    seeds = [worker_seed(MODE_SEED, i) for i in range(2)]
    alone = [soak(minutes, "reference-memory", s, out=lambda line: None, **options) for s in seeds]
    together = soak_together(minutes, "reference-memory", seeds, options)
    alone_rate = sum(r["steps"] for r in alone) / sum(r["elapsed_s"] for r in alone)
    together_rate = sum(w["steps"] for w in together) / max(w["elapsed_s"] for w in together)  # they start at once
    return {
        "minutes": minutes,
        "measured": "steps over the time the soaks were stepping (each soak's own clock); workers' start-up apart",
        "alone": [{"seed": r["seed"], "steps": r["steps"], "seconds": r["elapsed_s"]} for r in alone],
        "together": [{"seed": w["seed"], "steps": w["steps"], "seconds": w["elapsed_s"], "startup_s": w["startup_s"]} for w in together],
        "startup_s": max(w["startup_s"] for w in together),
        "alone_steps_per_s": round(alone_rate, 1),
        "together_steps_per_s": round(together_rate, 1),
        "scaling": round(together_rate / alone_rate, 2),
        "target": SCALING_TARGET,
    }


def soak_together(minutes: float, sut: str, seeds: Sequence[int], options: dict[str, Any]) -> list[dict[str, Any]]:
    """One soak per seed, at once, each in a process of its own started as ``pwh soak --workers``
    starts its workers (``spawn``, the same initializer: the run's temporary folder, death with
    this process). Each worker warms up (:func:`_warm_up`, as this process did), then waits for the
    others, so all start stepping together. Per worker: its seed, steps and soak seconds, and
    ``startup_s``, the seconds from the start of the pool to the start of its soak."""
    import multiprocessing
    import shutil
    import tempfile

    from pwh._campaigns.distribute.workers import START_METHOD
    from pwh._harness.paths import fast_tmp

    context: Any = multiprocessing.get_context(START_METHOD)
    ready = context.Barrier(len(seeds))
    results = context.Queue()
    run_dir = tempfile.mkdtemp(prefix="pwh-scaling-", dir=fast_tmp())
    started = time.monotonic()
    processes = [
        context.Process(target=_scaling_worker, args=(os.getpid(), run_dir, ready, results, minutes, sut, seed, options), daemon=True)
        for seed in seeds
    ]
    try:
        for process in processes:
            process.start()
        done = [results.get(timeout=minutes * 60 + 600) for _ in processes]
        for process in processes:
            process.join(timeout=60)
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
                process.join()
        shutil.rmtree(run_dir, ignore_errors=True)
    failed = [d["error"] for d in done if "error" in d]
    if failed:
        raise RuntimeError(f"a scaling worker failed: {failed[0]}")
    by_seed = {d["seed"]: d for d in done}
    return [{**by_seed[s], "startup_s": round(by_seed[s]["stepping_from"] - started, 2)} for s in seeds]


def _scaling_worker(
    parent: int, run_dir: str, ready: Any, results: Any, minutes: float, sut: str, seed: int, options: dict[str, Any]
) -> None:
    """In a worker of :func:`soak_together`: warm up, wait for the others, soak, report."""
    from pwh._campaigns.distribute.workers import _init_worker

    try:
        _init_worker(parent, run_dir)
        _warm_up()
        ready.wait(timeout=600)
        from pwh._campaigns.soak import soak

        stepping_from = time.monotonic()
        summary = soak(minutes, sut, seed, out=lambda line: None, **options)
        results.put({"seed": seed, "steps": summary["steps"], "elapsed_s": summary["elapsed_s"], "stepping_from": stepping_from})
    except BaseException as exc:  # reported to the parent, which raises it; the others stop waiting
        ready.abort()
        results.put({"seed": seed, "error": f"{type(exc).__name__}: {exc}"})


def measure_mode(mode: Mode, steps: int, *, round_examples: int | None = None) -> dict[str, Any]:
    """One search of ``mode``'s SUT from the fixed seed, in whole rounds until ``steps`` steps: steps per second."""
    done = search(mode.sut, MODE_SEED, real_crashes=mode.real_crashes, steps=steps, round_examples=round_examples, simulated=mode.simulated)
    hung_s = 0.0 if mode.simulated else done["hooks_timed_out"] * _hang_timeout_s()  # virtual time waits for nothing
    return {
        "label": mode.label,
        "sut": mode.sut,
        "real_crashes": mode.real_crashes,
        "simulated": mode.simulated,
        "seed": MODE_SEED,
        **{k: done[k] for k in ("seconds", "steps", "examples", "rounds", "crashes", "restarts", "hooks_timed_out")},
        "steps_per_s": round(done["steps"] / done["seconds"], 1) if done["seconds"] > 0 else 0.0,
        # what the hung hooks' own timeouts took (at least), and the rate over the rest of the time
        "hung_s": round(hung_s, 3),
        "steps_per_s_outside_hangs": round(done["steps"] / (done["seconds"] - hung_s), 1) if done["seconds"] > hung_s else None,
        "target": mode.target,
        "violations": done["violations"],
    }


def time_to_find(name: str, row: str, seed: int, cap_s: float, *, confirm: bool = False) -> dict[str, Any]:
    """The search of mutant ``name`` from ``seed``, in simulation, until a violation of ``row`` or
    ``cap_s`` seconds; with ``confirm``, the history found is then replayed in real mode (the
    mutant's own runner, real limits), as ``pwh soak`` does before it reports a finding."""
    done = search(f"mutant:{name}", seed, real_crashes=False, seconds=cap_s, until_row=row, simulated=True)
    found = done["found"] is not None
    confirmed: dict[str, Any] = {}
    if found and confirm and done["trace"] is not None:
        from pwh._campaigns.models.simulation import confirm_in_real_mode

        started = time.monotonic()
        again = confirm_in_real_mode(done["trace"])
        confirmed = {"confirmed_in_real_mode": again is not None, "confirm_s": round(time.monotonic() - started, 3)}
    return {
        **confirmed,
        "seed": seed,
        "found": found,
        "seconds": done["seconds"] if found else math.inf,
        "searched_s": done["seconds"],
        "steps": done["steps"],
        "examples": done["examples"],
        "rounds": done["rounds"],
        "invariant": done["found"]["invariant"] if found else None,
        "other_violations": done["violations"],
    }


def search(
    sut: str,
    seed: int,
    *,
    real_crashes: bool,
    seconds: float | None = None,
    steps: int | None = None,
    until_row: str | None = None,
    round_examples: int | None = None,
    simulated: bool = False,
) -> dict[str, Any]:
    """Run the soak's rounds against ``sut`` from ``seed`` for ``seconds`` (rounds shrink near the
    end, as a soak's do) or in whole rounds until ``steps`` steps, stopping early at a violation of
    ``until_row`` (then ``found`` names it; other violations are listed and the search goes on).
    ``round_examples`` makes the rounds smaller (a quick run). ``simulated``: each round is the
    simulation engine's (seeded histories, virtual time), not Hypothesis's in real time."""
    if (seconds is None) == (steps is None):
        raise ValueError("give seconds or steps")
    from pwh._campaigns.engine import FIRST_GUESS_S, derive_seed
    from pwh._campaigns.models.machine import run_model
    from pwh._campaigns.models.simulation import run_simulation
    from pwh._campaigns.models.system import Stats

    shape = _round_settings(round_examples)
    weights = _weights()
    stats = Stats()
    violations: list[dict[str, Any]] = []
    found: dict[str, Any] | None = None
    trace: dict[str, Any] | None = None
    started = time.monotonic()
    rounds = 0
    while True:
        examples = shape["examples_per_round"]
        if steps is not None:
            if stats.steps >= steps:
                break
        elif seconds is not None:
            spent = time.monotonic() - started
            if spent >= seconds:
                break
            per_example = spent / stats.examples if stats.examples else FIRST_GUESS_S
            examples = max(1, min(examples, int((seconds - spent) / per_example)))
        round_seed = derive_seed(seed, rounds)
        before = stats.steps
        if simulated:
            run = run_simulation(
                sut,
                seed=round_seed,
                max_examples=examples,
                steps=shape["steps_per_example"],
                weights=weights,
                stats=stats,
                shrink_budget_s=None,
                probe=rounds == 0,
            )
        else:
            run = run_model(
                sut,
                seed=round_seed,
                max_examples=examples,
                steps=shape["steps_per_example"],
                shrink="none",
                real_crashes=real_crashes,
                weights=weights,
                stats=stats,
                export=False,
                out=None,
            )
        rounds += 1
        if stats.steps == before and steps is not None:
            break  # a round that ran no step (every example refused): more of them would not either
        if run.violation is None:
            continue
        seen = {"row": run.violation.row, "invariant": run.violation.invariant, "round_seed": round_seed}
        if until_row is not None and run.violation.row == until_row:
            found = seen
            trace = run.trace
            break
        violations.append(seen)
    return {
        "seconds": round(time.monotonic() - started, 3),
        "steps": stats.steps,
        "examples": stats.examples,
        "rounds": rounds,
        "crashes": {"simulated": stats.crashes_simulated, "real": stats.crashes_real},
        "restarts": stats.restarts,
        "hooks_timed_out": stats.hooks_timed_out,
        "found": found,
        "trace": trace,  # the found violation's history, unshrunk (not part of the report)
        "violations": violations,
    }


def evaluate_targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Each figure that has a target, beside it: ``met`` is true, false, or None (not measured)."""
    targets: list[dict[str, Any]] = []
    for figure in result["modes"].values():
        if figure["target"] is not None:
            targets.append(
                {
                    "name": f"steps/s, {figure['label']}",
                    "figure": figure["steps_per_s"],
                    "target": f">= {figure['target']:g}",
                    "met": figure["steps_per_s"] >= figure["target"],
                }
            )
    scaling = result.get("scaling")
    targets.append(
        {
            "name": "steps/s, 2 workers over 1 (same histories)",
            "figure": scaling["scaling"] if scaling else "-",
            "target": f">= {SCALING_TARGET:g}",
            "met": scaling["scaling"] >= SCALING_TARGET if scaling else None,
        }
    )
    summary = result["summary"]
    measured = summary["mutants"] > 0
    targets += [
        {
            "name": "mutants found (every seed)",
            "figure": f"{summary['found']}/{summary['mutants']}",
            "target": "all",
            "met": summary["found"] == summary["mutants"] if measured else None,
        },
        {
            "name": "median time to find, s",
            "figure": summary["median_s"],
            "target": f"<= {MEDIAN_FIND_TARGET_S:g}",
            "met": summary["median_s"] <= MEDIAN_FIND_TARGET_S if measured else None,
        },
        {
            "name": "max time to find, s",
            "figure": summary["max_s"],
            "target": f"<= {MAX_FIND_TARGET_S:g}",
            "met": summary["max_s"] <= MAX_FIND_TARGET_S if measured else None,
        },
        {
            "name": "findings shown again in real mode",
            "figure": f"{summary.get('confirmed', 0)}/{summary.get('confirm_tried', 0)}",
            "target": "all",
            "met": summary.get("confirmed") == summary.get("confirm_tried") if summary.get("confirm_tried") else None,
        },
    ]
    return targets


def render_table(result: dict[str, Any]) -> str:
    """The report: modes, then mutants, then every target with met / MISSED."""
    lines = [f"{'mode':<44} {'steps':>6} {'s':>6} {'steps/s':>8} {'hung':>11} {'rest/s':>7}  target"] if result["modes"] else []
    for figure in result["modes"].values():
        target = "-" if figure["target"] is None else f">= {figure['target']:g}: {_verdict(figure['steps_per_s'] >= figure['target'])}"
        hung = f"{figure['hooks_timed_out']} = {figure['hung_s']:.1f} s"
        rest = "-" if figure["steps_per_s_outside_hangs"] is None else f"{figure['steps_per_s_outside_hangs']:.0f}"
        lines.append(
            f"{figure['label']:<44} {figure['steps']:>6} {figure['seconds']:>6.1f} {figure['steps_per_s']:>8.0f} {hung:>11} {rest:>7}  {target}"
        )
    if result["modes"]:
        lines.append("  (hung: calls of hooks that hang, each waited out for its real timeout; rest/s: steps/s over the rest of the time)")
    if result["mutants"]:
        lines += [""] if lines else []
        lines += [f"{'mutant':<30} {'row':<5} {'found':>5} {'median s':>9} {'max s':>7} {'steps':>6} {'real':>5}  caught by"]
        for name, m in result["mutants"].items():
            found = f"{m['found_runs']}/{len(m['runs'])}"
            invariants = ", ".join(sorted({r["invariant"] for r in m["runs"] if r["invariant"]})) or "not found"
            real = {True: "yes", False: "NO", None: "-"}[m.get("confirmed_in_real_mode")]
            lines.append(
                f"{name:<30} {m['row']:<5} {found:>5} {_seconds(m['median_s']):>9} {_seconds(m['max_s']):>7} {m['median_steps']:>6} {real:>5}  {invariants}"
            )
        lines.append("  (found in simulation; real: the first seed's finding replayed in real mode shows it again)")
    lines += ["", "targets:"]
    for t in result["targets"]:
        figure = _seconds(t["figure"]) if isinstance(t["figure"], float) and "time" in t["name"] else t["figure"]
        lines.append(f"  {t['name']:<48} {figure!s:>10}  {t['target']}: {_verdict(t['met'])}")
    for v in result["reference_violations"]:
        lines.append(
            f"the reference broke {v['row']} {v['invariant']} while {v['mode']} was measured, in the round of seed {v['round_seed']} "
            "(a finding: run the models with that seed to see it)"
        )
    m = result["machine"]
    lines.append(
        f"machine: {m['cpus']} cores, load {' '.join(f'{x:.2f}' for x in m['load_before'])} before, {' '.join(f'{x:.2f}' for x in m.get('load_after', ()))} after"
    )
    return "\n".join(lines) + "\n"


def to_json(result: dict[str, Any]) -> dict[str, Any]:
    """The result with infinities (a mutant not found) as null: strict JSON."""

    def clean(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    cleaned: dict[str, Any] = clean(result)
    return cleaned


# -- internals -----------------------------------------------------------------------------------


def _round_settings(round_examples: int | None = None) -> dict[str, int]:
    """A soak round's shape: examples per round (``round_examples`` for a quick run) and steps per
    generated history (the default profile's)."""
    from pwh._campaigns.engine import ROUND_EXAMPLES
    from pwh._campaigns.models.profiles import DEFAULT_PROFILE, PROFILES

    return {"examples_per_round": round_examples or ROUND_EXAMPLES, "steps_per_example": PROFILES[DEFAULT_PROFILE].soak_steps}


def _weights() -> dict[str, int]:
    from pwh._campaigns.models.catalog import SOAK_WEIGHTS

    return dict(SOAK_WEIGHTS)


def _hang_timeout_s() -> float:
    """The registered timeout of the hook that hangs (what each of its calls costs in real time)."""
    from fakes._behaviours import BEHAVIOURS
    from pwh._campaigns.models.catalog import HANG

    return float(BEHAVIOURS[HANG].budget.get("timeout_ms", 0)) / 1000


def _warm_up() -> None:
    """Load what a first run would otherwise pay for inside a figure (Hypothesis, the step library,
    the boundary scanner's tables, the reference)."""
    from pwh._campaigns.models.language import bad_registration_flaws
    from pwh._campaigns.models.machine import run_model

    bad_registration_flaws()
    run_model("reference-memory", seed=0, max_examples=2, steps=10, shrink="none", weights=_weights(), export=False, out=None)
    from pwh._campaigns.models.simulation import run_simulation

    run_simulation("reference-memory", seed=0, max_examples=2, steps=10, weights=_weights(), shrink_budget_s=None)


def _mutant_summary(row: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    times = [r["seconds"] for r in runs]
    return {
        "row": row,
        "runs": runs,
        "found_runs": sum(1 for r in runs if r["found"]),
        "found": all(r["found"] for r in runs),
        "median_s": statistics.median(times),
        "max_s": max(times),
        "median_steps": int(statistics.median(r["steps"] for r in runs)),
        # the first seed's finding, replayed in real mode: shown again (True), not (False), not tried (None)
        "confirmed_in_real_mode": runs[0].get("confirmed_in_real_mode") if runs else None,
    }


def _summary(mutants: dict[str, dict[str, Any]]) -> dict[str, Any]:
    medians = [m["median_s"] for m in mutants.values()]
    every = [r["seconds"] for m in mutants.values() for r in m["runs"]]
    return {
        "mutants": len(mutants),
        "found": sum(1 for m in mutants.values() if m["found"]),
        "not_found": sorted(n for n, m in mutants.items() if not m["found"]),
        "confirm_tried": sum(1 for m in mutants.values() if m.get("confirmed_in_real_mode") is not None),
        "confirmed": sum(1 for m in mutants.values() if m.get("confirmed_in_real_mode")),
        "median_s": statistics.median(medians) if medians else math.nan,
        "max_s": max(every) if every else math.nan,
    }


def _machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(terse=True),
        "python": platform.python_version(),
        "load_before": list(os.getloadavg()),
    }


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _seconds(value: Any) -> str:
    if not isinstance(value, float | int):
        return str(value)
    if math.isinf(value):
        return "not found"
    if math.isnan(value):
        return "-"
    return f"{value:.2f}"


def _verdict(met: bool | None) -> str:
    return "not measured" if met is None else "met" if met else "MISSED"
