"""Stateful crash/replay models of the post-writeback hooks, end to end (issue 5).

Hypothesis drives the fake orchestrator and the SUT seam through completions, replans, plain
progress, replays, second deliveries, crashes at every named point (simulated, or a real SIGKILL
of a child process) and restarts, installing hooks of every behaviour (several of one
capability, one that writes into its input), offering bad receipts and bad registrations,
changing the profile between dispatches and moving policy versions; after every step the
invariants of ``_invariants`` are judged, each declared RFC (with the clauses that require it) or
profile (pwh's reading). A broken RFC invariant fails the run, which is shrunk and written as a
JSON trace and a Gherkin scenario (``_trace``, ``_gherkin``); a broken profile invariant is a
profile divergence, counted apart and never a failure.

Public entry points: :func:`run_model`, :func:`replay_trace`, :func:`soak` and
:func:`add_model_commands` (the ``pwh soak`` and ``pwh replay`` commands). Core ``pwh`` never
imports this package; the CLI loads it by name. Names are resolved lazily so that the step
library, which imports ``_actions``, does not pay for Hypothesis.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS: dict[str, str] = {
    "run_model": "._machine",
    "ModelRun": "._machine",
    "model_settings": "._machine",
    "ModelViolation": "._invariants",
    "Violation": "._invariants",
    "Stats": "._system",
    "replay_trace": "._trace",
    "ReplayResult": "._trace",
    "TraceError": "._trace",
    "load_trace": "._trace",
    "write_counterexample": "._trace",
    "export_feature": "._gherkin",
    "soak": "._soak",
    "add_model_commands": "._commands",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module, __name__), name)
