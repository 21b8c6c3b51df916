"""What a campaign saw, as JSON lines under a schema (``pwh/schemas/campaign_observation.json``).

The driver (:func:`pwh._campaigns.engine.drive`) writes one record when a run starts, one per
round, one per finding and one when it ends. Records carry their run's identity (engine, SUT, seed
and, under ``--workers``, the worker), so files from several runs -- workers, machines, days --
merge by concatenation, and ``pwh report OBS.jsonl ...`` renders the merged totals. A file is data:
every line is checked against the schema before anything reads it, and a line that does not fit is
one error naming the file and the line.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

__all__ = [
    "SCHEMA_VERSION",
    "ObservationError",
    "ObservationLog",
    "is_observation_file",
    "merge",
    "merged_lines",
    "read_observations",
]

SCHEMA_VERSION = "pwh_campaign_observation_v0"
MAX_LINE_BYTES = 4 * 1024 * 1024
MAX_FILE_BYTES = 1024 * 1024 * 1024  # a long soak's rounds are a few hundred bytes each


class ObservationError(Exception):
    """A file that is not campaign observations: one line naming the file and the line at fault."""


class ObservationLog:
    """Appends records, one JSON object per line, each flushed as written (a run that is killed
    leaves every record it finished)."""

    def __init__(self, path: str | Path, run: Mapping[str, Any]) -> None:
        self.path = Path(path)
        self.run = dict(run)
        self._file: IO[str] | None = self.path.open("a", encoding="utf-8")

    def __call__(self, record: str, **fields: Any) -> None:
        if self._file is None:
            return
        line = {"schema_version": SCHEMA_VERSION, "record": record, "run": self.run, **fields}
        self._file.write(json.dumps(line, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def is_observation_file(path: str | Path) -> bool:
    """Whether ``path`` is a regular file whose first line is a campaign observation (what ``pwh
    report`` renders it as). Never blocks: a FIFO, device or directory is not one, and is not opened."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced between the stat and the open
            return False
        first = os.read(fd, MAX_LINE_BYTES).split(b"\n", 1)[0]
    except OSError:
        return False
    finally:
        os.close(fd)
    try:
        value = json.loads(first)
    except (ValueError, RecursionError):  # not JSON, or nested past what Python parses: not ours
        return False
    return isinstance(value, dict) and value.get("schema_version") == SCHEMA_VERSION


def read_observations(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Every record of every file, in order, each checked against the schema. A file is read as
    data, bounded, and only when it is a regular file (never waited on)."""
    import jsonschema

    from pwh._core.schemas import load_schema
    from pwh._harness.gate_error import GateError
    from pwh._harness.paths import read_bounded, shown

    validator = jsonschema.Draft202012Validator(load_schema("campaign_observation"))
    records: list[dict[str, Any]] = []
    for path in paths:
        try:
            data = read_bounded(path, limit=MAX_FILE_BYTES, what="campaign observations file")
        except GateError as exc:
            raise ObservationError(str(exc)) from None
        records += _records(data.splitlines(keepends=True), shown(path), validator)
    if not records:
        raise ObservationError("no observations in the files given")
    return records


def _records(lines: list[bytes], name: str, validator: Any) -> list[dict[str, Any]]:
    import jsonschema

    records: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, 1):
        if len(raw) > MAX_LINE_BYTES:
            raise ObservationError(f"{name}:{number}: a line over {MAX_LINE_BYTES} bytes")
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            raise ObservationError(f"{name}:{number}: not JSON") from None
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        if error is not None:
            where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
            raise ObservationError(f"{name}:{number}: not a {SCHEMA_VERSION} record at {where}: {error.message[:160]}")
        records.append(value)
    return records


def _run_key(run: Mapping[str, Any]) -> str:
    return json.dumps(run, sort_keys=True)


def merge(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The merged totals: each run's last counts (rounds, examples, steps) summed, and one entry
    per kind of finding with how often it was found and the run that found it first."""
    runs: dict[str, dict[str, Any]] = {}
    findings: dict[str, dict[str, Any]] = {}
    for r in records:
        run = runs.setdefault(_run_key(r["run"]), {"run": r["run"], "rounds": 0, "examples": 0, "steps": 0, "ended": False})
        if r["record"] == "round":
            run.update(rounds=r["index"] + 1, examples=r["examples"], steps=r["steps"])
        elif r["record"] == "end":
            run.update(rounds=r["rounds"], examples=r["examples"], steps=r["steps"], ended=True)
        elif r["record"] == "finding":
            kept = findings.get(r["key"])
            if kept is None:
                findings[r["key"]] = {"key": r["key"], "times": 1, "first": r["run"], "round": r["round"], **r.get("detail", {})}
            else:
                kept["times"] += 1
    listed = list(runs.values())
    return {
        "runs": listed,
        "ended": sum(1 for run in listed if run["ended"]),
        "rounds": sum(run["rounds"] for run in listed),
        "examples": sum(run["examples"] for run in listed),
        "steps": sum(run["steps"] for run in listed),
        "findings": sorted(findings.values(), key=lambda f: f["key"]),
    }


def _who(run: Mapping[str, Any]) -> str:
    worker = f" worker {run['worker']}" if "worker" in run else ""
    against = f" against {run['against']!r}" if "against" in run else ""
    return f"{run['engine']} {run['sut']!r}{against} seed {run['seed']}{worker}"


def merged_lines(merged: Mapping[str, Any]) -> list[str]:
    """The merged totals as the terminal shows them; every string from a file made safe for it."""
    from pwh._harness.safe_text import for_terminal

    runs = merged["runs"]
    lines = [
        f"pwh report: {len(runs)} run(s), {merged['ended']} ended: {merged['rounds']} rounds, {merged['examples']} examples, "
        f"{merged['steps']} steps, {len(merged['findings'])} kind(s) of finding"
    ]
    lines += [f"  run {_who(run['run'])}: {run['examples']} examples, {run['steps']} steps" for run in runs]
    lines += [f"  found: {f['key']}: {f['times']} time(s), first by {_who(f['first'])} in round {f['round']}" for f in merged["findings"]]
    return [for_terminal(line) for line in lines]
