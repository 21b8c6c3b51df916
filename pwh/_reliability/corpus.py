"""The reliability campaign's scanner part: the public-boundary scanner measured on its labelled
corpus (:mod:`pwh._harness.boundary_corpus`, ``pwh/corpus/boundary.jsonl``).

Counted as the ``scanner_corpus`` category: ``tried`` is every entry a rule can judge (private
values of an expressible kind and legitimate values), ``isolated`` those judged right, ``leaked``
the expressible private values that got through, and ``false_positives`` the legitimate opaque ids
refused when more than :data:`pwh._harness.boundary_corpus.FP_TARGET` of them are. The rates themselves
(evasion per kind, false positives on opaque ids and on free data) go to the result's
``scanner_corpus`` and are printed under the table.
"""

from __future__ import annotations

from typing import Any

from pwh._core.boundary import BoundaryScanner
from pwh._harness.boundary_corpus import FP_TARGET, load_corpus, measure
from pwh._reliability.rig import Tally

__all__ = ["run_corpus"]


def run_corpus(tallies: dict[str, Tally], entries: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    tally = tallies.setdefault("scanner_corpus", Tally())
    rows = load_corpus() if entries is None else entries
    try:
        rates = measure(BoundaryScanner(), rows)
    except Exception as exc:
        tally.tried += 1
        tally.uncaught += 1
        tally.note(f"corpus: {type(exc).__name__} escaped")
        return {"target_met": False}
    private = rates["private"]
    expressible = sum(r["total"] for r in private.values() if r["expressible"])
    legit = rates["opaque_ids"]["total"] + rates["free_data"]["total"]
    wrong = rates["evaded_expressible"] + rates["opaque_ids"]["refused"] + rates["free_data"]["refused"]
    tally.tried += expressible + legit
    tally.isolated += expressible + legit - wrong
    tally.leaked += rates["evaded_expressible"]
    if rates["opaque_ids"]["rate"] > FP_TARGET:
        tally.false_positives += rates["opaque_ids"]["refused"]
    for kind, row in private.items():
        if row["expressible"] and row["evaded"]:
            tally.note(f"{kind}: {row['evaded']} of {row['total']} got through")
    for group in ("opaque_ids", "free_data"):
        for kind, n in rates[group]["kinds"].items():
            tally.note(f"{group} {kind}: {n} refused")
    return rates
