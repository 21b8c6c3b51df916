"""``pwh soak``: run the models against one SUT until its budget is spent.

The budget is a time (``minutes``), a number of generated histories (``examples``, ``pwh soak
--examples N``), or both (whichever is spent first). A soak given examples alone runs the same
histories from the same seed on any machine, however loaded: what it exercised does not depend
on how fast it ran (the tests soak that way).

Rounds of Hypothesis examples run one after another, each round with a seed derived from the
soak's seed (so a soak is reproducible from the seed it prints first). Every fourth round uses
real SIGKILL crashes when the SUT keeps its journal in a directory. Found counterexamples are
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
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis.database import DirectoryBasedExampleDatabase

from ._catalog import SOAK_WEIGHTS
from ._coverage import Coverage
from ._machine import run_model, with_swarm
from ._names import sut_slug
from ._profiles import DEFAULT_PROFILE, PROFILES
from ._shrink import shrink_trace
from ._system import Stats
from ._trace import counterexample_dir, write_counterexample

PROGRESS_EVERY_S = 5.0
ROUND_EXAMPLES = 10
FIRST_GUESS_S = 0.5  # seconds per example before the soak has measured its own
REAL_EVERY = 4  # every n-th round crashes a child process for real
SHRINK_MIN_S, SHRINK_MAX_S = 5.0, 60.0  # a finding is shrunk within what is left of the budget, in these bounds
DATABASE_DIR = "hypothesis-examples"  # under the counterexample directory, one sub-directory per SUT spec


def derive_seed(seed: int, round_index: int) -> int:
    """The seed of one round: stable for a given soak seed, different for every round."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{round_index}".encode()).digest()[:4], "big")


def check_budget(minutes: float | None, examples: int | None) -> None:
    """A soak needs a budget: ``minutes`` (positive), ``examples`` (at least 1), or both."""
    if minutes is None and examples is None:
        raise ValueError("a soak needs a budget: minutes, examples or both")
    if minutes is not None and minutes <= 0:
        raise ValueError("minutes must be positive")
    if examples is not None and examples < 1:
        raise ValueError("examples must be at least 1")


def budget_words(minutes: float | None, examples: int | None) -> str:
    """The budget as the soak's first lines say it: ``0.5 min``, ``40 examples``, or both."""
    words = [f"{examples} examples" if examples is not None else "", f"{minutes:g} min" if minutes is not None else ""]
    return " or ".join(w for w in words if w) + (", whichever is spent first" if minutes is not None and examples is not None else "")


def budget_left(deadline: float | None, examples: int | None, stats: Stats) -> bool:
    """Whether another round runs: neither the time (``deadline``) nor the ``examples`` is spent."""
    if deadline is not None and time.monotonic() >= deadline:
        return False
    return examples is None or stats.examples < examples


def round_examples(started: float, deadline: float | None, stats: Stats, examples: int | None = None) -> int:
    """How many examples the next round runs: at most ``ROUND_EXAMPLES`` and what is left of
    ``examples``; with a ``deadline``, smaller rounds near the end, from the time an example has
    taken so far, so the soak ends close to its time budget."""
    n = ROUND_EXAMPLES if examples is None else min(ROUND_EXAMPLES, examples - stats.examples)
    if deadline is not None:
        per_example = (time.monotonic() - started) / stats.examples if stats.examples else FIRST_GUESS_S
        n = min(n, int((deadline - time.monotonic()) / per_example))
    return max(1, n)


def shrink_budget(deadline: float | None) -> float:
    """Seconds to shrink a new finding in: what is left of the soak's time, within bounds (the
    upper bound when the soak has no time budget)."""
    if deadline is None:
        return SHRINK_MAX_S
    return max(SHRINK_MIN_S, min(SHRINK_MAX_S, deadline - time.monotonic()))


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
) -> dict[str, Any]:
    """Run model examples against ``sut`` for ``minutes`` (fractions allowed, or None) and/or
    ``examples`` generated histories, whichever is spent first; return a summary.

    ``campaign`` names the run: its counterexamples go to a sub-directory of that name.
    ``real_crashes``: ``None`` interleaves real-crash rounds, ``False`` never, ``True`` always.
    ``profile`` (``_profiles.PROFILES``) sets how many steps each generated history takes.
    ``swarm``: each example enables a random subset of actions, behaviours and crash points.
    ``database``: save failing examples to :func:`example_database_dir` and replay them first
    (``pwh soak`` turns it on unless ``--no-database``; off here, so that a call from the tests
    stays free of state left by earlier runs).
    ``coverage``: count into this report (``_workers`` merges its workers' reports); else a new one.
    """
    check_budget(minutes, examples)
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    round_steps = PROFILES[profile].soak_steps
    on_disk = _keeps_journal_on_disk(sut)  # also: a SUT that cannot load fails here, before any output
    can_kill = real_crashes is not False and on_disk
    seed = secrets.randbelow(2**32) if seed is None else seed
    out(f"pwh soak: seed {seed}")
    directory = counterexample_dir() / sut_slug(campaign) if campaign else None
    started = time.monotonic()
    deadline = started + minutes * 60 if minutes is not None else None
    stats = Stats()
    coverage = Coverage() if coverage is None else coverage
    ticker = _Ticker(started, stats, out)
    found: dict[tuple[str, str], dict[str, Any]] = {}  # one counterexample per broken RFC invariant
    diverged: dict[tuple[str, str], dict[str, Any]] = {}  # profile divergences: counted, never a counterexample
    paths: list[Path] = []
    rounds = 0
    out(
        f"pwh soak: SUT {sut!r} for {budget_words(minutes, examples)}, profile {profile} ({round_steps} steps a history); progress every {PROGRESS_EVERY_S:.0f} s"
    )
    if real_crashes and not can_kill:
        out("pwh soak: this SUT takes no journal directory: real crashes are skipped")
    if swarm:
        out("pwh soak: swarm testing: each example leaves out a random subset of actions, behaviours and crash points")
    db_dir = example_database_dir(sut) if database else None
    db = DirectoryBasedExampleDatabase(db_dir) if db_dir is not None else None
    if db_dir is not None:
        out(f"pwh soak: example database {db_dir} (failures found before are replayed first)")
    replayed: set[bool] = set()  # crash modes whose first round has replayed the stored failures
    while budget_left(deadline, examples, stats):
        real = can_kill and _real_round(rounds, real_crashes)
        before = stats.examples
        result = run_model(
            sut,
            seed=derive_seed(seed, rounds),
            max_examples=round_examples(started, deadline, stats, examples),
            steps=round_steps,
            shrink="none",
            real_crashes=real,
            weights=SOAK_WEIGHTS,
            stats=stats,
            progress=ticker.tick,
            export=False,
            swarm=swarm,
            coverage=coverage,
            database=db,
            reuse=real not in replayed,  # later rounds would only find the stored failure again
            stop_at=deadline,  # a round never runs past the soak's budget (only its last step finishes)
        )
        replayed.add(real)
        rounds += 1
        if stats.examples == before and deadline is None:
            break  # a round that drew no example would not spend an examples budget
        for key, seen in result.divergences.items():
            merge_divergence(diverged, key, seen, round=rounds - 1, seed=result.seed)
        if result.violation is not None and result.trace is not None:
            key = (result.violation.row, result.violation.invariant)
            if key in found:
                found[key]["times"] += 1
                continue
            shrunk = with_swarm(shrink_trace(result.trace, budget_s=shrink_budget(deadline)), result.trace)
            found[key] = {
                **shrunk["violation"],
                "round": rounds - 1,
                "seed": result.seed,
                "example": result.found_at_example,  # counted over the whole soak, from 1
                "swarm": shrunk.get("swarm"),
                "times": 1,
            }
            paths += write_counterexample(shrunk, directory, out=out)
    elapsed = time.monotonic() - started
    summary = {
        "seed": seed,
        "sut": sut,
        "campaign": campaign,
        "minutes": minutes,
        "max_examples": examples,
        "profile": profile,
        "elapsed_s": round(elapsed, 1),
        "rounds": rounds,
        "examples": stats.examples,
        "steps": stats.steps,
        "crashes": {"simulated": stats.crashes_simulated, "real": stats.crashes_real},
        "restarts": stats.restarts,
        "violations": list(found.values()),
        "profile_divergences": list(diverged.values()),
        "counterexamples": [str(p) for p in paths],
        "swarm": swarm,
        "example_database": str(db_dir) if db_dir is not None else None,
        "coverage": coverage.to_json(),
    }
    for line in coverage.lines():
        out(line)
    out(
        f"pwh soak: done in {elapsed:.0f} s: {rounds} rounds, {stats.examples} examples, {stats.steps} steps, "
        f"{stats.crashes_simulated} simulated + {stats.crashes_real} real crashes, {stats.restarts} restarts, "
        f"{len(found)} counterexample(s), {len(diverged)} kind(s) of profile divergence"
    )
    for line in divergence_lines(diverged.values()):
        out(line)
    for p in paths:
        out(f"  {p}")
    return summary


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

    from pwh._suts.seam import close_sut

    from ._system import ModelError, open_sut

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
