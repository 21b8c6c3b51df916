"""Portable counterexamples: the JSON trace of a failing run, writing it, and replaying it.

A trace is the run's steps in the action language plus what broke; ``replay_trace`` runs the
steps again through the same interpreter and invariants, without Hypothesis, so anyone can
reproduce a finding from the file alone (``pwh replay TRACE.json [--sut ...]``).
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pwh._campaigns.models.language import StepError, check_step
from pwh._campaigns.models.names import sut_slug

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
    sut: str,
    steps: list[dict[str, Any]],
    sut_options: Mapping[str, Any] | None = None,
    *,
    divergences: list[Any] | None = None,
    simulated: bool = False,
) -> tuple[int, Any]:
    """Run steps through the model's interpreter and invariants; (steps run, first RFC violation).
    The profile divergences met on the way are appended to ``divergences`` when given (they are
    never a violation: the run goes on past them). ``simulated``: providers in virtual time
    (real mode, the default, is what a finding is confirmed in)."""
    from pwh._campaigns.models.invariants import Judge
    from pwh._campaigns.models.system import ModelSystem

    real = any(s["op"] == "crash" and s["real"] for s in steps)
    system = ModelSystem(sut, sut_options=sut_options, real_crashes=real, simulated=simulated)
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
    code (raises :class:`pwh._campaigns.counterexamples.reader.ReplayError`)."""
    from pwh._campaigns.counterexamples.reader import choose_sut, parse_trace, read_trace_bytes

    checked = parse_trace(read_trace_bytes(path), Path(path).name)
    name = choose_sut(checked, sut)
    run, violation = run_steps(name, checked.steps, {})
    return ReplayResult(name, run, violation, checked.violation)


# The temp dir as it was when the models were imported: the LoopX adapter points TMPDIR at a private
# folder while its runtime lives and removes that folder after, which would take the findings with it.
_TEMP_AT_START = Path(tempfile.gettempdir())


def counterexample_dir(directory: str | Path | None = None) -> Path:
    """``directory``, else ``$PWH_COUNTEREXAMPLES``, else this user's private folder in the temp dir
    (the one in force when the models were imported, never an adapter's private one):
    :func:`private_temp_folder`."""
    chosen = directory or os.environ.get(COUNTEREXAMPLES_ENV)
    if not chosen:
        return private_temp_folder(_TEMP_AT_START, DEFAULT_FOLDER)
    path = Path(chosen)
    path.mkdir(parents=True, exist_ok=True)
    return path


DEFAULT_FOLDER = "pwh-counterexamples"


def private_temp_folder(temp: Path, name: str) -> Path:
    """``temp/name-UID``, made mode 0700 if it is not there; one that is there is used only if it
    is a real folder (not a link: ``lstat``), owned by this user and open to no one else. The temp
    dir is shared: another user could make the folder first, or plant links in it, so anything
    else is refused (a :class:`PermissionError`, which the soak reports in one line)."""
    path = temp / f"{name}-{os.getuid()}"
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise PermissionError(
            errno.EACCES,
            f"{path.name} in the temp dir is not this user's private folder (a link, another owner, or open to others); "
            f"remove it or set ${COUNTEREXAMPLES_ENV}",
        )
    return path


def _create(path: Path, text: str) -> None:
    """Write a new file: never one already there, never through a link (O_EXCL | O_NOFOLLOW)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with open(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


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
    base = f"{violation['row']}-{violation['invariant']}-{sut_slug(trace['sut'])}-seed{trace['seed']}"
    text = json.dumps(trace, indent=2, sort_keys=True) + "\n"
    while True:  # the first name free for both files; each made new (O_EXCL), never through a link
        stem = _unique(target, base)
        json_path = target / f"{stem}.json"
        try:
            _create(json_path, text)
            break
        except FileExistsError:  # made meanwhile (another worker): the next free name
            continue
    paths = [json_path]
    if gherkin:
        from pwh._campaigns.counterexamples.gherkin import export_feature

        feature = export_feature(trace, trace_name=json_path.name)
        feature_path = target / f"{stem}.feature"
        _create(feature_path, feature.text)
        paths.append(feature_path)
    if out is not None:
        out(f"pwh model: counterexample ({violation['row']} {violation['invariant']}) written to {target}")
        for p in paths:
            out(f"  {p.name}")
    return paths


def _unique(directory: Path, stem: str) -> str:
    """The first ``stem``, ``stem-2``... with neither a ``.json`` nor a ``.feature`` there (a link
    counts, dangling or not)."""
    candidate, n = stem, 1
    while any(os.path.lexists(directory / f"{candidate}{ext}") for ext in (".json", ".feature")):
        n += 1
        candidate = f"{stem}-{n}"
    return candidate
