"""``pwh soak`` and ``pwh replay``: the models on the command line.

The CLI adds these with :func:`add_model_commands`. Handlers return exit codes and print one
clear line on error, never a traceback: 0 nothing found (``soak``) or the trace passes
(``replay``); 1 a counterexample was found or the trace still fails; 2 the command could not run.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ._profiles import DEFAULT_PROFILE, PROFILES

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


def add_model_commands(subparsers: Any) -> None:
    """Register ``soak`` and ``replay`` on the CLI's sub-command parsers."""
    soak = subparsers.add_parser("soak", help="run the stateful crash/replay models against a SUT for a while")
    soak.add_argument("--minutes", type=float, required=True, help="time budget (fractions allowed, e.g. 0.5)")
    soak.add_argument("--sut", default=None, help="built-in name or module:factory (default: $PWH_SUT or reference)")
    soak.add_argument("--seed", type=int, default=None, help="reproduce a soak (default: a fresh seed, printed first)")
    soak.add_argument("--campaign", default=None, help="name the run; its counterexamples go to a sub-directory of that name")
    soak.add_argument("--no-real-crashes", action="store_true", help="simulated crashes only (no child process is killed)")
    soak.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        default=None,
        help="how long each generated history is: "
        + "; ".join(f"{p.name}, {p.soak_steps} steps" for p in PROFILES.values())
        + f" (default {DEFAULT_PROFILE}; the same names as the tests' Hypothesis profiles)",
    )
    soak.set_defaults(handler=soak_command)

    replay = subparsers.add_parser("replay", help="re-run a model counterexample trace (exit 1 while it still fails)")
    replay.add_argument("trace", metavar="TRACE.json", help="a trace written by a model run")
    replay.add_argument("--sut", default=None, help="judge this SUT instead of the one the trace was found with")
    replay.set_defaults(handler=replay_command)


def soak_command(args: argparse.Namespace) -> int:
    from pwh import SUTLoadError

    from ._soak import soak
    from ._system import ModelError

    if args.minutes <= 0:
        return _error("--minutes must be positive")
    _importable_cwd()
    sut = args.sut or os.environ.get("PWH_SUT") or "reference"
    try:
        summary = soak(
            args.minutes,
            sut,
            args.seed,
            campaign=args.campaign,
            real_crashes=False if args.no_real_crashes else None,
            out=_print,
            profile=args.profile or DEFAULT_PROFILE,
        )
    except (SUTLoadError, ModelError) as exc:
        return _error(str(exc))
    except OSError as exc:
        return _error(f"cannot write counterexamples: {exc.strerror or 'write failed'}")
    return EXIT_FAILED if summary["violations"] else EXIT_OK


def replay_command(args: argparse.Namespace) -> int:
    """``pwh replay``: pwh's own handler, which reads the trace as data (it never chooses code)."""
    from pwh._harness.replay import replay_command as replay

    return replay(args)


def _importable_cwd() -> None:
    """``--sut module:factory`` names modules relative to where pwh is run, as ``python -m`` does,
    but the working directory is searched last: a stray ``random.py`` there never shadows a module."""
    from pwh._harness.gate import searchable_cwd

    searchable_cwd()


def _print(line: str) -> None:
    print(line, flush=True)


def _error(message: str) -> int:
    print(f"pwh: error: {message}", file=sys.stderr)
    return EXIT_ERROR
