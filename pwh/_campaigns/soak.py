"""``pwh soak``: run the models against one SUT until its budget is spent.

The budget is a time (``minutes``), a number of generated histories (``examples``, ``pwh soak
--examples N``), or both (whichever is spent first). A soak given examples alone runs the same
histories from the same seed on any machine, however loaded: what it exercised does not depend
on how fast it ran (the tests soak that way).

Rounds run one after another, each round with a seed derived from the soak's seed (so a soak is
reproducible from the seed it prints first). A round is the simulation engine's
(:mod:`.models.simulation`: histories drawn from the round's seed, providers in virtual time,
simulated crashes) unless ``simulate=False`` (``--real-time``), when it is Hypothesis's with
providers on the SUT's own runner in real time. Every fourth round is in real mode with real
SIGKILL crashes when the SUT keeps its journal in a directory. A finding made in simulation is
replayed in real mode before it is reported: one that real mode does not show again is counted
apart as *simulation-only* (never a counterexample, never the exit code). Found counterexamples are
shrunk within what is left of the time budget (or, with no time budget, up to
``SHRINK_MAX_S``) and written out (the first of each broken RFC invariant);
the soak goes on looking for others. A broken profile invariant (pwh's reading where the
documents are silent, ``_invariants``) is a *profile divergence*: counted apart under
``"profile_divergences"`` with its first example history, never shrunk, never written as a
counterexample and never the soak's exit code.

Swarm testing is on unless ``swarm=False`` (``--no-swarm``): each example leaves out a random
subset of the actions, behaviours and crash points (``_machine.Swarm``), and a counterexample's
trace names the configuration that found it. What the soak exercised is counted
(``_coverage.Coverage``): printed as a few lines at the end and returned under ``"coverage"``.
With ``database=True`` (``pwh soak`` unless ``--no-database``) failing examples are saved to a
Hypothesis example database, one per SUT spec under the counterexample directory
(:func:`example_database_dir`); the first round of each crash mode replays the stored ones first, so a
failure found once is tried first the next time (a soak with a database is reproducible from
its seed and that database; without one, from its seed alone).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis.database import DirectoryBasedExampleDatabase

from pwh._campaigns.counterexamples.shrink import shrink_trace
from pwh._campaigns.counterexamples.trace import counterexample_dir, write_counterexample
from pwh._campaigns.engine import PROGRESS_EVERY_S, Finding, check_budget, drive
from pwh._campaigns.models.catalog import SOAK_WEIGHTS
from pwh._campaigns.models.coverage import Coverage
from pwh._campaigns.models.machine import run_model, with_swarm
from pwh._campaigns.models.names import sut_slug
from pwh._campaigns.models.profiles import DEFAULT_PROFILE, PROFILES
from pwh._campaigns.models.simulation import confirm_in_real_mode, run_simulation
from pwh._campaigns.models.system import Stats

REAL_EVERY = 4  # every n-th round crashes a child process for real
DATABASE_DIR = "hypothesis-examples"  # under the counterexample directory, one sub-directory per SUT spec
__all__ = ["ModelsEngine", "example_database_dir", "soak"]


def example_database_dir(sut: str) -> Path:
    """Where ``pwh soak`` keeps the failing examples it found against ``sut``: one directory per
    exact SUT spec (a readable slug and a digest of the spec) under the counterexample directory."""
    tag = hashlib.sha256(sut.encode()).hexdigest()[:8]
    return counterexample_dir() / DATABASE_DIR / f"{sut_slug(sut)}-{tag}"


def soak(
    minutes: float | None,
    sut: str,
    seed: int | None,
    *,
    examples: int | None = None,
    campaign: str | None = None,
    out: Callable[[str], None] = print,
    real_crashes: bool | None = None,
    profile: str = DEFAULT_PROFILE,
    swarm: bool = True,
    database: bool = False,
    coverage: Coverage | None = None,
    observations: str | Path | None = None,
    worker: int | None = None,
    simulate: bool = True,
) -> dict[str, Any]:
    """Run model examples against ``sut`` for ``minutes`` (fractions allowed, or None) and/or
    ``examples`` generated histories, whichever is spent first; return a summary.

    ``campaign`` names the run: its counterexamples go to a sub-directory of that name.
    ``real_crashes``: ``None`` interleaves real-crash rounds, ``False`` never, ``True`` always.
    ``profile`` (``models.profiles.PROFILES``) sets how many steps each generated history takes.
    ``swarm``: each example enables a random subset of actions, behaviours and crash points.
    ``database``: save failing examples to :func:`example_database_dir` and replay them first
    (``pwh soak`` turns it on unless ``--no-database``; off here, so that a call from the tests
    stays free of state left by earlier runs).
    ``coverage``: count into this report (the workers merge their reports); else a new one.
    ``observations``: append what the soak saw to that file as JSON lines (``worker`` names it).
    ``simulate``: rounds without real crashes run in simulation (the default); else in real time.
    """
    check_budget(minutes, examples)
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    engine = ModelsEngine(sut, campaign, real_crashes, profile, swarm, database, out, simulate)
    return drive(engine, minutes, examples, seed, out=out, coverage=coverage, observations=observations, worker=worker)


class ModelsEngine:
    """The models against one SUT: each round a Hypothesis run of the state machine, a broken RFC
    invariant the finding (one per row and invariant), profile divergences counted apart."""

    name = "models"

    def __init__(
        self,
        sut: str,
        campaign: str | None,
        real_crashes: bool | None,
        profile: str,
        swarm: bool,
        database: bool,
        out: Callable[[str], None],
        simulate: bool = True,
    ) -> None:
        self.sut, self.campaign, self.real_crashes, self.profile, self.swarm, self.out = sut, campaign, real_crashes, profile, swarm, out
        self.simulate = simulate
        self.confirmed: set[tuple[str, str]] = set()  # kinds of finding real mode has shown again
        self.simulation_only: dict[tuple[str, str], dict[str, Any]] = {}  # found in simulation, not shown in real mode
        self.round_steps = PROFILES[profile].soak_steps
        on_disk = _keeps_journal_on_disk(sut)  # also: a SUT that cannot load fails here, before any output
        self.can_kill = real_crashes is not False and on_disk
        self.directory = counterexample_dir() / sut_slug(campaign) if campaign else None
        self.db_dir = example_database_dir(sut) if database else None
        self.db = DirectoryBasedExampleDatabase(self.db_dir) if self.db_dir is not None else None
        self.diverged: dict[tuple[str, str], dict[str, Any]] = {}  # profile divergences: counted, never a counterexample
        self.replayed: set[bool] = set()  # crash modes whose first round has replayed the stored failures
        self.ticker: _Ticker | None = None

    def identity(self) -> dict[str, Any]:
        return {"sut": self.sut}

    def opening(self, budget: str) -> list[str]:
        lines = [
            f"pwh soak: SUT {self.sut!r} for {budget}, profile {self.profile} ({self.round_steps} steps a history); progress every {PROGRESS_EVERY_S:.0f} s"
        ]
        if self.real_crashes and not self.can_kill:
            lines.append("pwh soak: this SUT takes no journal directory: real crashes are skipped")
        if self.simulate:
            lines.append(
                "pwh soak: simulation: histories drawn from each round's seed, providers in virtual time; "
                "a finding is replayed in real mode before it is reported"
                + ("; every 4th round in real mode with real crashes" if self.can_kill and self.real_crashes is None else "")
            )
        if self.swarm:
            lines.append("pwh soak: swarm testing: each example leaves out a random subset of actions, behaviours and crash points")
        if self.db_dir is not None:
            lines.append(f"pwh soak: example database {self.db_dir} (failures found before are replayed first)")
        return lines

    def round(self, index: int, seed: int, examples: int, deadline: float | None, stats: Stats, coverage: Coverage) -> Finding | None:
        if self.ticker is None:
            self.ticker = _Ticker(time.monotonic(), stats, self.out)
        real = self.can_kill and _real_round(index, self.real_crashes)
        if self.simulate and not real:
            return self._simulated_round(index, seed, examples, deadline, stats, coverage)
        result = run_model(
            self.sut,
            seed=seed,
            max_examples=examples,
            steps=self.round_steps,
            shrink="none",
            real_crashes=real,
            weights=SOAK_WEIGHTS,
            stats=stats,
            progress=self.ticker.tick,
            export=False,
            swarm=self.swarm,
            coverage=coverage,
            database=self.db,
            reuse=real not in self.replayed,  # later rounds would only find the stored failure again
            stop_at=deadline,  # a round never runs past the soak's budget (only its last step finishes)
        )
        self.replayed.add(real)
        for key, seen in result.divergences.items():
            merge_divergence(self.diverged, key, seen, round=index, seed=result.seed)
        if result.violation is None or result.trace is None:
            return None
        key = (result.violation.row, result.violation.invariant)
        return Finding(key, result.trace, result.seed, {"example": result.found_at_example})

    def _simulated_round(
        self, index: int, seed: int, examples: int, deadline: float | None, stats: Stats, coverage: Coverage
    ) -> Finding | None:
        assert self.ticker is not None
        result = run_simulation(
            self.sut,
            seed=seed,
            max_examples=examples,
            steps=self.round_steps,
            weights=SOAK_WEIGHTS,
            stats=stats,
            progress=self.ticker.tick,
            swarm=self.swarm,
            coverage=coverage,
            stop_at=deadline,
            shrink_budget_s=None,  # shrunk when kept (a kind already found is only counted)
            probe=False,
        )
        for key, seen in result.divergences.items():
            merge_divergence(self.diverged, key, seen, round=index, seed=result.seed)
        if result.violation is None or result.trace is None:
            return None
        key = (result.violation.row, result.violation.invariant)
        if key not in self.confirmed:
            if confirm_in_real_mode(result.trace) is None:  # real mode does not show it: not a finding
                kept = self.simulation_only.setdefault(key, {**result.violation.to_json(), "round": index, "seed": seed, "times": 0})
                kept["times"] += 1
                return None
            self.confirmed.add(key)
        return Finding(key, result.trace, result.seed, {"example": result.found_at_example})

    def keep(self, finding: Finding, round_index: int, shrink_s: float, out: Callable[[str], None]) -> tuple[dict[str, Any], list[Path]]:
        shrunk = with_swarm(shrink_trace(finding.trace, budget_s=shrink_s), finding.trace)
        if shrunk.get("simulated") and shrunk is not finding.trace and confirm_in_real_mode(shrunk) is None:
            shrunk = finding.trace  # the shrunk history does not break it in real mode: the one found does
        if shrunk.get("simulated"):
            shrunk["confirmed_in_real_mode"] = True
        record = {
            **shrunk["violation"],
            "round": round_index,
            "seed": finding.seed,
            "example": finding.extra["example"],  # counted over the whole soak, from 1
            "swarm": shrunk.get("swarm"),
        }
        return record, write_counterexample(shrunk, self.directory, out=out)

    def summary(self, found: list[dict[str, Any]], stats: Stats) -> dict[str, Any]:
        return {
            "sut": self.sut,
            "campaign": self.campaign,
            "profile": self.profile,
            "crashes": {"simulated": stats.crashes_simulated, "real": stats.crashes_real},
            "restarts": stats.restarts,
            "violations": found,
            "profile_divergences": list(self.diverged.values()),
            "simulation": self.simulate,
            "simulation_only": list(self.simulation_only.values()),
            "swarm": self.swarm,
            "example_database": str(self.db_dir) if self.db_dir is not None else None,
        }

    def closing(self, found: list[dict[str, Any]], coverage: Coverage, stats: Stats, paths: list[Path], done: str) -> list[str]:
        return [
            *coverage.lines(),
            done + f"{stats.crashes_simulated} simulated + {stats.crashes_real} real crashes, {stats.restarts} restarts, "
            f"{len(found)} counterexample(s), {len(self.diverged)} kind(s) of profile divergence",
            *divergence_lines(self.diverged.values()),
            *(
                f"  found in simulation only (real mode did not show it again; never a failure): {d['row']} {d['invariant']}: {d['times']} time(s)"
                for d in self.simulation_only.values()
            ),
            *(f"  {p}" for p in paths),
        ]


def merge_divergence(into: dict[tuple[str, str], dict[str, Any]], key: tuple[str, str], seen: dict[str, Any], **first: Any) -> None:
    """Add one run's count of a profile divergence to ``into``; the first sighting (with ``first``:
    where it was, e.g. its round and seed) is kept, later ones only counted."""
    kept = into.get(key)
    if kept is None:
        into[key] = {**seen, **first}
    else:
        kept["times"] += seen["times"]


def divergence_lines(divergences: Any, by: str = "") -> list[str]:
    """One line per kind of profile divergence: what pwh reads, how often, and the first message."""
    return [
        f"  profile divergence (never a failure): {d['row']} {d['invariant']}: {d['times']} time(s)"
        + (f", first by {by}{d['worker']}" if by and "worker" in d else "")
        + f"; first: {d['message']} (pwh's reading: {d.get('reading', '')})"
        for d in divergences
    ]


def _keeps_journal_on_disk(sut: str) -> bool:
    """Whether the adapter's factory takes a journal directory (real crashes need one)."""
    import shutil
    import tempfile

    from pwh._campaigns.models.system import ModelError, open_sut
    from pwh._suts.seam import close_sut

    tmp = Path(tempfile.mkdtemp(prefix="pwh-soak-probe-"))
    try:
        close_sut(open_sut(sut, tmp, {}, need_workdir=True), sut)
    except ModelError:
        close_sut(open_sut(sut, tmp, {}, need_workdir=False), sut)
        return False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return True


def _real_round(index: int, real_crashes: bool | None) -> bool:
    if real_crashes is None:
        return index % REAL_EVERY == REAL_EVERY - 1
    return real_crashes


class _Ticker:
    """Prints one progress line every few seconds, from inside the running machine."""

    def __init__(self, started: float, stats: Stats, out: Callable[[str], None]) -> None:
        self.started = started
        self.last = started
        self.stats = stats
        self.out = out

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last >= PROGRESS_EVERY_S:
            self.last = now
            s = self.stats
            self.out(
                f"  {now - self.started:6.0f} s  examples {s.examples}  steps {s.steps}  crashes "
                f"{s.crashes_simulated} simulated + {s.crashes_real} real  restarts {s.restarts}"
            )
