"""The gate's preflight: a matrix ``pwh scenarios check`` would reject is never run.

A scenario the gate cannot attribute to exactly one row (untagged, ``@M99``, ``@m04``, two row
tags) runs but counts for no row, so a failing one left the verdict PASS; a feature that does not
parse failed every row without naming the file; an undefined step failed its scenario as if the
SUT had. Before any scenario runs, every check of ``pwh scenarios check`` is applied to the whole
matrix (also under ``--rows``: a quick look at some rows must not hide a broken matrix), and the
gate refuses with exit 2, one line per problem, ``features/x.feature:LINE: message``.

The check runs in the gate's child pytest (the gate plugin calls :func:`matrix_problems` once the
scenarios are collected and deselects them all when it finds any), where the step library is
imported anyway: the gate's own process never imports it, which kept ~0.45 s off every run.
"""

from __future__ import annotations

from pathlib import Path

from pwh._harness.scenarios_check import check, load_step_modules, step_definitions

STEP_LIBRARY = "scenarios"  # the package whose STEP_MODULES the matrix's bindings load


def matrix_problems(features_dir: Path, steps_package: str = STEP_LIBRARY) -> list[str]:
    """Everything ``pwh scenarios check`` finds in ``features_dir``, one ``file:line: message``
    line each, paths relative to its parent."""
    try:
        modules = load_step_modules(steps_package)
    except Exception as exc:
        return [f"cannot import the step library {steps_package!r} ({type(exc).__name__})"]
    problems, _ = check(features_dir, step_definitions(modules))
    return [str(p) for p in problems]


def matrix_refusal(problems: list[str]) -> str:
    """The gate's exit-2 message for a matrix with ``problems``."""
    lines = "\n".join(problems)
    return f"the matrix has {len(problems)} problem(s) (see `pwh scenarios check`); no scenario was run:\n{lines}"
