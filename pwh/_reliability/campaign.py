"""``pwh soak --campaign reliability``: attack the dispatcher the way a careless or hostile
capability would, count what happens, publish the counts.

The dispatcher runs beside a primary transaction it must never disturb, and its providers are
untrusted. The campaign (each part in its own module) tries:

- bad input (:mod:`pwh._reliability.bad_input`): known-bad registrations, source receipts, hook
  results and intents, from random mutations of valid packets and from Hypothesis strategies
  built from ``pwh/schemas/*.json``, through the public validators and the reference dispatcher;
- hostile producers (:mod:`pwh._reliability.hostile`): exceptions of every kind, hangs, busy
  loops, huge and 10^5-deep values, NaN, non-string keys, objects with hostile dunders,
  generators, input mutation, network (under a loopback-only guard), environment and files;
- journal faults (:mod:`pwh._reliability.journal_faults`): full disk, read-only, corrupt records, a held
  lock, two processes on one receipt;
- leaks (:mod:`pwh._reliability.leaks`): seeded Faker values followed into the journal, the
  reports and the packet, and the scanner's false positives on the project's public files;
- the scanner's corpus (:mod:`pwh._reliability.corpus`): evasion per kind and false positives
  on the labelled corpus ``pwh/corpus/boundary.jsonl``, printed under the table and carried in
  the result's ``scanner_corpus``; an expressible kind that gets through, or more than 2 % of the
  legitimate opaque ids refused, fails the campaign.

Per category it counts ``tried``, ``isolated`` (ended exactly as the rules say), ``uncaught`` (an
exception escaped pwh), ``leaked`` (a planted value reached the journal, a report or a packet),
``primary_changed`` and ``false_positives``. Everything but ``tried`` and ``isolated`` must be 0.

Decision on ``SystemExit`` and ``KeyboardInterrupt`` raised by a provider: they are the
provider's failure, not the host's. They stay on the producer's worker thread and end as
``producer_failed`` like any exception (confirmed by the ``hostile_exception`` cases). A real
Ctrl-C is delivered to the main thread, where it interrupts the dispatcher's wait and stops the host.

Faker and Hypothesis are imported only inside the functions that use them (test/gate extras).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pwh._reliability.rig import KEYS, Tally

ORDER = tuple(
    """
    bad_registration bad_source bad_result bad_intent hostile_exception hostile_timeout hostile_value
    hostile_object hostile_mutation hostile_network hostile_environment hostile_file journal_disk_full
    journal_read_only journal_corrupt journal_lock journal_two_processes leak_source leak_projection
    leak_result leak_exception leak_packet scanner_false_positives scanner_corpus
    """.split()
)
MUST_BE_ZERO = ("uncaught", "leaked", "primary_changed", "false_positives")


@dataclass(frozen=True)
class Plan:
    """How much of each part to run. ``quick`` fits the test command; the full run tries
    10^5 bad packets and 10^4 private values."""

    mutations: int  # random known-bad packets per kind (4 kinds)
    hypothesis: int  # schema-derived known-bad packets per kind
    hostile_rounds: int
    journal_rounds: int
    leak_values: int
    leak_batch: int

    @classmethod
    def of(cls, quick: bool) -> Plan:
        if quick:
            return cls(mutations=150, hypothesis=4, hostile_rounds=1, journal_rounds=1, leak_values=72, leak_batch=72)
        return cls(mutations=25_000, hypothesis=250, hostile_rounds=20, journal_rounds=8, leak_values=10_000, leak_batch=500)


def run_campaign(*, quick: bool, seed: int = 0, out: Callable[[str], Any] = print) -> dict[str, Any]:
    """Run every part; print the table through ``out`` and return
    ``{"categories": {name: counts}, "total": counts, "notes": ..., "seconds": ..., "quick", "seed"}``."""
    from pwh._reliability.bad_input import run_bad_input
    from pwh._reliability.corpus import run_corpus
    from pwh._reliability.hostile import run_hostile
    from pwh._reliability.journal_faults import run_journal_faults
    from pwh._reliability.leaks import run_false_positives, run_leaks

    plan = Plan.of(quick)
    tallies: dict[str, Tally] = {}
    seconds: dict[str, float] = {}
    corpus: dict[str, Any] = {}
    parts: list[tuple[str, Callable[[], None]]] = [
        ("bad input", lambda: run_bad_input(tallies, mutations=plan.mutations, hypothesis=plan.hypothesis, seed=seed)),
        ("hostile producers", lambda: run_hostile(tallies, rounds=plan.hostile_rounds, seed=seed)),
        ("journal faults", lambda: run_journal_faults(tallies, rounds=plan.journal_rounds)),
        ("leaks", lambda: run_leaks(tallies, values=plan.leak_values, batch=plan.leak_batch, packets=True, seed=seed)),
        ("scanner false positives", lambda: run_false_positives(tallies)),
        ("scanner corpus", lambda: corpus.update(run_corpus(tallies))),
    ]
    out(f"pwh reliability campaign: {'quick' if quick else 'full'} run, seed {seed}")
    for name, part in parts:
        started = time.monotonic()
        part()
        seconds[name] = round(time.monotonic() - started, 2)
        out(f"  {name}: {seconds[name]:.1f}s")
    result = summarise(tallies, seconds, quick=quick, seed=seed)
    result["scanner_corpus"] = corpus
    out(render_table(result))
    return result


def summarise(tallies: dict[str, Tally], seconds: dict[str, float], *, quick: bool, seed: int) -> dict[str, Any]:
    names = [n for n in ORDER if n in tallies] + sorted(n for n in tallies if n not in ORDER)
    categories = {n: tallies[n].counts() for n in names}
    total = {k: sum(c[k] for c in categories.values()) for k in KEYS}
    notes = {n: list(tallies[n].notes) for n in names if tallies[n].notes}
    return {"categories": categories, "total": total, "notes": notes, "seconds": seconds, "quick": quick, "seed": seed}


def render_table(result: dict[str, Any]) -> str:
    header = f"{'category':<24}" + "".join(f"{k:>16}" for k in KEYS)
    lines = [header, "-" * len(header)]
    rows = list(result["categories"].items()) + [("total", result["total"])]
    for name, counts in rows:
        if name == "total":
            lines.append("-" * len(header))
        lines.append(f"{name:<24}" + "".join(f"{counts[k]:>16}" for k in KEYS))
    bad = [k for k in MUST_BE_ZERO if result["total"][k]]
    lines.append("verdict: " + ("PASS — nothing uncaught, leaked, changed or falsely flagged" if not bad else "FAIL — " + ", ".join(bad)))
    for name, notes in result.get("notes", {}).items():
        for note in notes:
            lines.append(f"  {name}: {note}")
    if "scanner_corpus" in result:
        from pwh._harness.boundary_corpus import render_corpus

        lines.extend(render_corpus(result["scanner_corpus"]))
    return "\n".join(lines)


def failed(result: dict[str, Any]) -> bool:
    """True when any must-be-zero count is not zero, or the scanner missed its corpus targets
    (the CLI's exit code 1)."""
    return any(result["total"][k] for k in MUST_BE_ZERO) or not result.get("scanner_corpus", {}).get("target_met", True)
