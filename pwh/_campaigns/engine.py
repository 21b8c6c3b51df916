"""The one driver every campaign engine runs under: the budget (minutes and/or examples), rounds of
generated histories with seeds derived from the campaign's seed, one finding kept per kind (the
first shrunk and written, later ones counted) and the summary's common part.

An engine (:class:`Engine`) only says what a round is, how a finding is shrunk and written, and
what its summary adds; the models soak (:mod:`.soak`) and the differential soak
(:mod:`.differential`) are two engines, and local workers and a cluster run either through this
driver in each process they start.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pwh._campaigns.models.coverage import Coverage
from pwh._campaigns.models.system import Stats
from pwh._campaigns.observations import ObservationLog

__all__ = [
    "FIRST_GUESS_S",
    "PROGRESS_EVERY_S",
    "ROUND_EXAMPLES",
    "SHRINK_MAX_S",
    "SHRINK_MIN_S",
    "Engine",
    "Finding",
    "budget_left",
    "budget_words",
    "check_budget",
    "derive_seed",
    "drive",
    "round_examples",
    "shrink_budget",
]

PROGRESS_EVERY_S = 5.0
ROUND_EXAMPLES = 10
FIRST_GUESS_S = 0.5  # seconds per example before the campaign has measured its own
SHRINK_MIN_S, SHRINK_MAX_S = 5.0, 60.0  # a finding is shrunk within what is left of the budget, in these bounds


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


@dataclass
class Finding:
    """What one round found: its kind (one finding is kept per kind) and the trace that shows it."""

    key: Hashable
    trace: dict[str, Any]
    seed: int
    extra: dict[str, Any] = field(default_factory=dict)


class Engine(Protocol):
    """One kind of campaign, as the driver runs it."""

    name: str  # as the observations name it: "models" or "differential"

    def identity(self) -> dict[str, Any]:
        """What names a run of this engine besides its seed (the SUT, and what it is compared with)."""
        ...

    def opening(self, budget: str) -> list[str]:
        """The lines printed after the seed, before the first round."""
        ...

    def round(self, index: int, seed: int, examples: int, deadline: float | None, stats: Stats, coverage: Coverage) -> Finding | None:
        """Draw ``examples`` histories; the first finding, if any (other results it keeps itself)."""
        ...

    def keep(self, finding: Finding, round_index: int, shrink_s: float, out: Callable[[str], None]) -> tuple[dict[str, Any], list[Path]]:
        """Shrink and write a finding of a new kind: its summary record and the files written."""
        ...

    def summary(self, found: list[dict[str, Any]], stats: Stats) -> dict[str, Any]:
        """The engine's own part of the summary."""
        ...

    def closing(self, found: list[dict[str, Any]], coverage: Coverage, stats: Stats, paths: list[Path], done: str) -> list[str]:
        """The lines printed at the end; ``done`` is the driver's "done in … s: …" prefix."""
        ...


def drive(
    engine: Engine,
    minutes: float | None,
    examples: int | None,
    seed: int | None,
    *,
    out: Callable[[str], None] = print,
    coverage: Coverage | None = None,
    observations: str | Path | None = None,
    worker: int | None = None,
) -> dict[str, Any]:
    """Run ``engine`` in rounds until ``minutes`` or ``examples`` are spent (whichever first);
    return its summary. ``observations``: append what the run saw to that file, as JSON lines
    (:mod:`pwh._campaigns.observations`); ``worker`` names the run's worker in them."""
    check_budget(minutes, examples)
    seed = secrets.randbelow(2**32) if seed is None else seed
    run = {"engine": engine.name, **engine.identity(), "seed": seed, **({"worker": worker} if worker is not None else {})}
    log = ObservationLog(observations, run) if observations is not None else None
    try:
        return _drive(engine, minutes, examples, seed, out, coverage, log)
    finally:
        if log is not None:
            log.close()


def _drive(
    engine: Engine,
    minutes: float | None,
    examples: int | None,
    seed: int,
    out: Callable[[str], None],
    coverage: Coverage | None,
    log: ObservationLog | None,
) -> dict[str, Any]:
    def observe(record: str, **fields: Any) -> None:
        if log is not None:
            log(record, **fields)

    observe("start", budget={"minutes": minutes, "examples": examples})
    out(f"pwh soak: seed {seed}")
    for line in engine.opening(budget_words(minutes, examples)):
        out(line)
    started = time.monotonic()
    deadline = started + minutes * 60 if minutes is not None else None
    stats = Stats()
    coverage = Coverage() if coverage is None else coverage
    found: dict[Hashable, dict[str, Any]] = {}
    paths: list[Path] = []
    rounds = 0
    while budget_left(deadline, examples, stats):
        before = stats.examples
        round_seed = derive_seed(seed, rounds)
        finding = engine.round(rounds, round_seed, round_examples(started, deadline, stats, examples), deadline, stats, coverage)
        observe("round", index=rounds, seed=round_seed, examples=stats.examples, steps=stats.steps)
        rounds += 1
        if stats.examples == before and deadline is None:
            break  # a round that drew no example would not spend an examples budget
        if finding is None:
            continue
        if finding.key in found:
            found[finding.key]["times"] += 1
            observe("finding", key=_key_text(finding.key), round=rounds - 1, first=False)
            continue
        record, written = engine.keep(finding, rounds - 1, shrink_budget(deadline), out)
        found[finding.key] = {**record, "times": 1}
        paths += written
        observe("finding", key=_key_text(finding.key), round=rounds - 1, first=True, detail=record)
    elapsed = time.monotonic() - started
    kept = list(found.values())
    summary = {
        "seed": seed,
        "minutes": minutes,
        "max_examples": examples,
        "elapsed_s": round(elapsed, 1),
        "rounds": rounds,
        "examples": stats.examples,
        "steps": stats.steps,
        "counterexamples": [str(p) for p in paths],
        "coverage": coverage.to_json(),
        **engine.summary(kept, stats),
    }
    observe(
        "end",
        rounds=rounds,
        examples=stats.examples,
        steps=stats.steps,
        elapsed_s=round(elapsed, 1),
        findings=len(kept),
        counterexamples=[str(p) for p in paths],
    )
    done = f"pwh soak: done in {elapsed:.0f} s: {rounds} rounds, {stats.examples} examples, {stats.steps} steps, "
    for line in engine.closing(kept, coverage, stats, paths, done):
        out(line)
    return summary


def _key_text(key: Hashable) -> str:
    """A finding's kind as text: ``row invariant`` for the models, the divergence's own key otherwise."""
    return " ".join(map(str, key)) if isinstance(key, tuple) else str(key)
