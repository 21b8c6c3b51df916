"""The gate's preflight: a matrix ``pwh scenarios check`` would reject is never run.

A scenario the gate cannot attribute to exactly one row (untagged, ``@M99``, ``@m04``, two row
tags) runs but counts for no row, so a failing one left the verdict PASS; a feature that does not
parse failed every row without naming the file; an undefined step failed its scenario as if the
SUT had. Before any scenario runs, every check of ``pwh scenarios check`` is applied to the whole
matrix (also under ``--rows``: a quick look at some rows must not hide a broken matrix), and the
gate refuses with exit 2, one line per problem, ``features/x.feature:LINE: message``.
"""

from __future__ import annotations

from pathlib import Path

from pwh._harness.gate_error import GateError
from pwh._harness.scenarios_check import Problem, check, load_step_modules, step_definitions

STEP_LIBRARY = "scenarios"  # the package whose STEP_MODULES the matrix's bindings load


def matrix_problems(features_dir: Path, steps_package: str = STEP_LIBRARY) -> list[Problem]:
    """Everything ``pwh scenarios check`` finds in ``features_dir``, paths relative to its parent."""
    try:
        modules = load_step_modules(steps_package)
    except Exception as exc:
        raise GateError(f"cannot import the step library {steps_package!r} ({type(exc).__name__})") from None
    problems, _ = check(features_dir, step_definitions(modules))
    return problems


def refuse_bad_matrix(features_dir: Path, steps_package: str = STEP_LIBRARY) -> None:
    """Raise ``GateError`` (exit 2) listing every problem of the matrix, before anything runs."""
    problems = matrix_problems(features_dir, steps_package)
    if problems:
        lines = "\n".join(str(p) for p in problems)
        raise GateError(f"the matrix has {len(problems)} problem(s) (see `pwh scenarios check`); no scenario was run:\n{lines}")
