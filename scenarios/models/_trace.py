"""Portable counterexamples: the JSON trace of a failing run, writing it, and replaying it.

A trace is the run's steps in the action language plus what broke; ``replay_trace`` runs the
steps again through the same interpreter and invariants, without Hypothesis, so anyone can
reproduce a finding from the file alone (``pwh replay TRACE.json [--sut ...]``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._names import sut_slug
from ._steps import StepError, check_step

TRACE_SCHEMA_VERSION = "pwh_model_trace_v0"
COUNTEREXAMPLES_ENV = "PWH_COUNTEREXAMPLES"


class TraceError(ValueError):
    """A file that is not a readable model trace."""


def make_trace(seed: int, sut: str, sut_options: Mapping[str, Any], steps: list[dict[str, Any]], violation: Any) -> dict[str, Any]:
    trace: dict[str, Any] = {
        "schema_version": TRACE_SCHEMA_VERSION,
        "seed": seed,
        "sut": sut,
        "steps": [dict(s) for s in steps],
        "violation": violation.to_json() if hasattr(violation, "to_json") else violation,
    }
    if sut_options:
        trace["sut_options"] = dict(sut_options)
    return trace


def load_trace(path: str | Path) -> dict[str, Any]:
    """Read and check a trace file; :class:`TraceError` says what is wrong, in one line."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except OSError as exc:
        raise TraceError(f"cannot read {Path(path).name}: {exc.strerror or 'read failed'}") from None
    except ValueError:
        raise TraceError(f"{Path(path).name} is not JSON") from None
    if not isinstance(data, dict) or data.get("schema_version") != TRACE_SCHEMA_VERSION:
        raise TraceError(f"{Path(path).name} is not a {TRACE_SCHEMA_VERSION} trace")
    if not isinstance(data.get("sut"), str) or not isinstance(data.get("steps"), list) or not data["steps"]:
        raise TraceError("a trace needs a 'sut' name and a non-empty 'steps' list")
    try:
        data["steps"] = [check_step(s, i) for i, s in enumerate(data["steps"])]
    except StepError as exc:
        raise TraceError(str(exc)) from None
    if data["steps"][0]["op"] != "setup":
        raise TraceError("the first step of a trace must be 'setup'")
    if not isinstance(data.get("sut_options", {}), dict):
        raise TraceError("'sut_options' must be an object")
    return data


@dataclass
class ReplayResult:
    """What replaying a trace showed."""

    sut: str
    steps_run: int
    violation: Any = None  # a Violation, or None when every step kept every invariant
    recorded: dict[str, Any] | None = None  # the violation the trace was written with

    @property
    def failed(self) -> bool:
        return self.violation is not None

    @property
    def same_as_recorded(self) -> bool:
        return bool(self.violation and self.recorded and self.violation.invariant == self.recorded.get("invariant"))


def run_steps(
    sut: str, steps: list[dict[str, Any]], sut_options: Mapping[str, Any] | None = None, *, divergences: list[Any] | None = None
) -> tuple[int, Any]:
    """Run steps through the model's interpreter and invariants; (steps run, first RFC violation).
    The profile divergences met on the way are appended to ``divergences`` when given (they are
    never a violation: the run goes on past them)."""
    from ._invariants import Judge
    from ._system import ModelSystem

    real = any(s["op"] == "crash" and s["real"] for s in steps)
    system = ModelSystem(sut, sut_options=sut_options, real_crashes=real)
    judge = Judge()
    try:
        for i, step in enumerate(steps):
            violation = judge.check(system, system.apply(step))
            if divergences is not None:
                divergences += judge.take_divergences()
            if violation is not None:
                return i + 1, violation
        return len(steps), None
    finally:
        system.close()


def replay_trace(path: str | Path, sut: str | None = None) -> ReplayResult:
    """Re-run a trace against ``sut`` (default: the SUT it was found with, which must be built in).

    As ``pwh replay`` does: a trace never chooses code to run (a ``module:factory`` it names runs
    only when the caller names it as ``sut``), and its ``sut_options`` never become arguments to
    code (raises :class:`pwh._harness.replay.ReplayError`)."""
    from pwh._harness.replay import choose_sut, parse_trace, read_trace_bytes

    checked = parse_trace(read_trace_bytes(path), Path(path).name)
    name = choose_sut(checked, sut)
    run, violation = run_steps(name, checked.steps, {})
    return ReplayResult(name, run, violation, checked.violation)


# The temp dir as it was when the models were imported: the LoopX adapter points TMPDIR at a private
# folder while its runtime lives and removes that folder after, which would take the findings with it.
_TEMP_AT_START = Path(tempfile.gettempdir())


def counterexample_dir(directory: str | Path | None = None) -> Path:
    """``directory``, else ``$PWH_COUNTEREXAMPLES``, else a fixed folder in the temp dir (the one
    in force when the models were imported, never an adapter's private one)."""
    chosen = directory or os.environ.get(COUNTEREXAMPLES_ENV) or _TEMP_AT_START / "pwh-counterexamples"
    path = Path(chosen)
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_counterexample(
    trace: dict[str, Any],
    directory: str | Path | None = None,
    *,
    out: Callable[[str], None] | None = None,
    gherkin: bool = True,
) -> list[Path]:
    """Write the trace as JSON and, when it can be expressed, as a Gherkin scenario; print where."""
    target = counterexample_dir(directory)
    violation = trace["violation"]
    stem = _unique(target, f"{violation['row']}-{violation['invariant']}-{sut_slug(trace['sut'])}-seed{trace['seed']}")
    json_path = target / f"{stem}.json"
    json_path.write_text(json.dumps(trace, indent=2, sort_keys=True) + "\n", "utf-8")
    paths = [json_path]
    if gherkin:
        from ._gherkin import export_feature

        feature = export_feature(trace, trace_name=json_path.name)
        feature_path = target / f"{stem}.feature"
        feature_path.write_text(feature.text, "utf-8")
        paths.append(feature_path)
    if out is not None:
        out(f"pwh model: counterexample ({violation['row']} {violation['invariant']}) written to {target}")
        for p in paths:
            out(f"  {p.name}")
    return paths


def _unique(directory: Path, stem: str) -> str:
    candidate, n = stem, 1
    while (directory / f"{candidate}.json").exists():
        n += 1
        candidate = f"{stem}-{n}"
    return candidate
