"""The scanner measured on its labelled corpus (``pwh/corpus/boundary*.jsonl``, rule M13): how many
private values of each kind get through (evasion) and how many legitimate values are refused
(false positives), for the reliability campaign and the tests.

An entry is ``{"value", "label": "private"|"legitimate", "kind", "field"?, "expressible"?}``. The
scan sees ``{field: value}`` when a field is given (the key is part of what makes a value private
or an opaque id), else the value alone; any finding counts as refused. ``expressible: false``
marks a private value no rule can tell from public text (reported, not held to the target).
Legitimate entries are *opaque ids* when their field is one the contracts type as an opaque id
(:data:`pwh._core.boundary.OPAQUE_FIELDS`), else *free data*.

Targets (issue 16): no private value of an expressible kind gets through; at most 2 % of the
legitimate opaque ids are refused. The corpus holds synthetic values only and is kept out of
the public-file scans on purpose (it is full of credential-shaped strings). It ships as two files:
``boundary.jsonl``, generated (``tests/boundary_corpus_make.py``), and ``boundary_classes.jsonl``,
written by hand, class by class (key formats, credential shapes, encodings, addresses and
versions, ids, scores, paths, host names, transcripts, logs, split tokens), private and public.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib import resources
from typing import Any, Protocol

__all__ = ["CORPUS_FILES", "FP_TARGET", "load_corpus", "measure", "misses", "render_corpus"]

FP_TARGET = 0.02  # at most 2 % of legitimate opaque ids refused


class _Scanner(Protocol):
    def scan_value(self, value: Any, path: str = "$") -> list[Any]: ...


CORPUS_FILES = ("boundary.jsonl", "boundary_classes.jsonl")


def load_corpus(name: str | None = None) -> list[dict[str, Any]]:
    """The corpus shipped in the package (package data, so an installed pwh can measure itself):
    every file of :data:`CORPUS_FILES`, or the one named."""
    out: list[dict[str, Any]] = []
    for file in CORPUS_FILES if name is None else (name,):
        try:
            text = resources.files("pwh").joinpath("corpus", file).read_text("utf-8")
        except FileNotFoundError:  # the wheel a packet carries leaves the credential corpus out
            from pwh._harness.gate_error import GateError

            raise GateError(
                f"this pwh has no labelled corpus ({file}): it was installed from a packet's wheel; give one: pwh corpus FILE"
            ) from None
        out.extend(json.loads(line) for line in text.splitlines() if line.strip())
    return out


def _refused(scanner: _Scanner, entry: dict[str, Any]) -> bool:
    field = entry.get("field")
    value = {field: entry["value"]} if isinstance(field, str) else entry["value"]
    return bool(scanner.scan_value(value))


def _opaque_fields() -> frozenset[str]:
    from pwh._core.boundary import OPAQUE_FIELDS

    return frozenset(OPAQUE_FIELDS)


def measure(
    scanner: _Scanner, entries: Iterable[dict[str, Any]] | None = None, opaque_fields: Iterable[str] | None = None
) -> dict[str, Any]:
    """Rates over ``entries`` (default: the shipped corpus):
    ``{"private": {kind: {"total", "evaded", "rate", "expressible"}}, "evaded", "evaded_expressible",
    "private_total", "opaque_ids": {"total", "refused", "rate"}, "free_data": {...}, "target_met"}``."""
    rows = load_corpus() if entries is None else list(entries)
    fields = _opaque_fields() if opaque_fields is None else frozenset(opaque_fields)
    kinds: dict[str, dict[str, Any]] = {}
    legit: dict[str, dict[str, Any]] = {
        "opaque_ids": {"total": 0, "refused": 0, "kinds": {}},
        "free_data": {"total": 0, "refused": 0, "kinds": {}},
    }
    for entry in rows:
        refused = _refused(scanner, entry)
        if entry["label"] == "private":
            row = kinds.setdefault(entry["kind"], {"total": 0, "evaded": 0, "expressible": entry.get("expressible", True)})
            row["total"] += 1
            row["evaded"] += not refused
        else:
            group = legit["opaque_ids" if entry.get("field") in fields else "free_data"]
            group["total"] += 1
            group["refused"] += refused
            if refused:
                group["kinds"][entry["kind"]] = group["kinds"].get(entry["kind"], 0) + 1
    for row in kinds.values():
        row["rate"] = round(row["evaded"] / row["total"], 4) if row["total"] else 0.0
    for group in legit.values():
        group["rate"] = round(group["refused"] / group["total"], 4) if group["total"] else 0.0
    evaded_expressible = sum(r["evaded"] for r in kinds.values() if r["expressible"])
    return {
        "private": dict(sorted(kinds.items())),
        "private_total": sum(r["total"] for r in kinds.values()),
        "evaded": sum(r["evaded"] for r in kinds.values()),
        "evaded_expressible": evaded_expressible,
        "private_expressible": sum(r["total"] for r in kinds.values() if r["expressible"]),
        **legit,
        "target_met": evaded_expressible == 0 and legit["opaque_ids"]["rate"] <= FP_TARGET,
    }


def misses(scanner: _Scanner, entries: Iterable[dict[str, Any]] | None = None) -> list[tuple[str, str, str]]:
    """(label, kind, field) of every entry the scanner judged wrong, never the value (for tests)."""
    rows = load_corpus() if entries is None else list(entries)
    out = []
    for entry in rows:
        refused = _refused(scanner, entry)
        if refused != (entry["label"] == "private") and entry.get("expressible", True):
            out.append((entry["label"], entry["kind"], str(entry.get("field", ""))))
    return out


def render_corpus(rates: dict[str, Any]) -> list[str]:
    """The rates as printed under the campaign's table."""
    if "private" not in rates:
        return ["scanner corpus: not measured"]
    opaque, free = rates["opaque_ids"], rates["free_data"]
    head = (
        f"scanner corpus: {rates['private_total']} private values, {rates['evaded']} got through "
        f"({rates['evaded_expressible']} of {rates['private_expressible']} of a kind a rule can express); "
        f"{opaque['total'] + free['total']} legitimate values"
    )
    fps = (
        f"  false positives: opaque ids {opaque['refused']}/{opaque['total']} ({opaque['rate']:.1%}, "
        f"target ≤ {FP_TARGET:.0%}), free data {free['refused']}/{free['total']} ({free['rate']:.1%})"
    )
    lines = [head, fps, "  evasion by kind (evaded/total):"]
    cells = [f"{kind}{'' if row['expressible'] else '*'} {row['evaded']}/{row['total']}" for kind, row in rates["private"].items()]
    width = max((len(c) for c in cells), default=0) + 2
    for i in range(0, len(cells), 3):
        lines.append("    " + "".join(c.ljust(width) for c in cells[i : i + 3]).rstrip())
    lines.append("    (* no rule can express this kind: reported, not held to 0)")
    lines.append(
        "  corpus verdict: "
        + ("PASS" if rates["target_met"] else "FAIL — an expressible kind got through or too many opaque ids were refused")
    )
    return lines


def load_entries(path: str) -> list[dict[str, Any]]:
    """A corpus file's entries: one JSON object a line, each with ``value``, ``label`` and ``kind``.
    Raises ValueError naming the line at fault (never quoting it: the corpus holds private values)."""
    import os
    import stat

    from pwh._harness.paths import MAX_JSON_DEPTH, json_depth_exceeds, read_bounded

    if not stat.S_ISREG(os.stat(path).st_mode):  # checked before opening: a FIFO is never waited on
        raise ValueError("not a regular file (a FIFO, socket, device or directory is never read)")
    entries: list[dict[str, Any]] = []
    text = read_bounded(path, what="corpus").decode("utf-8")  # bounded in size
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except RecursionError:
            raise ValueError(f"line {number} is nested too deeply") from None
        except ValueError:
            raise ValueError(f"line {number} is not JSON") from None
        if json_depth_exceeds(entry, MAX_JSON_DEPTH):
            raise ValueError(f"line {number} is nested more than {MAX_JSON_DEPTH} levels deep")
        if isinstance(entry, dict) and "field" in entry and not isinstance(entry["field"], str):
            raise ValueError(f"line {number}: field, when given, is a string")
        if not isinstance(entry, dict) or not isinstance(entry.get("value"), str) or entry.get("label") not in ("private", "legitimate"):
            raise ValueError(f"line {number}: each entry needs a string value and a label, private or legitimate")
        if not isinstance(entry.get("kind"), str):
            raise ValueError(f"line {number}: each entry needs a kind")
        entries.append(entry)
    return entries
