"""The ``pwh`` command line: argparse, no tracebacks for a user. This package is only the face:
each verb group is a module (:mod:`.gate`, :mod:`.campaigns`, :mod:`.packet`, :mod:`.verdicts`)
that adds its parsers with ``add_commands(sub)`` and turns arguments into calls of the engines;
here is :func:`main`, which runs the chosen handler and turns every way it can end into an exit
code (:class:`~pwh._cli.exit_codes.ExitCode`).

Exit codes: 0 success; 1 the judged implementation failed (a row failed, a check found problems);
2 the command could not run (bad arguments, missing files, an unloadable SUT); 3 an incomplete
gate verdict (``pwh smoke``: dispatch never answered); 130 a real Ctrl-C, 143 a SIGTERM, 129 a
SIGHUP (every process pwh started is stopped first: ``pwh._harness.interrupt``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from pwh._cli.common import UsageError
from pwh._cli.exit_codes import ExitCode
from pwh._harness import interrupt as ctrl_c
from pwh._harness.gate_error import GateError
from pwh._suts.faults import is_user_interrupt, sigint_count, track_user_interrupts
from pwh._version import __version__

__all__ = ["ExitCode", "UsageError", "main"]

# The verbs in the order ``pwh --help`` lists them (each group module adds its own; ``soak`` adds
# ``replay`` after it, ``report`` adds ``compare``).
COMMAND_ORDER = ("gate", "scenarios", "bench", "vectors", "packet", "soak", "mutate", "divergences", "corpus", "report", "smoke", "rules")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # reported by the sub-command's own parser, so its usage (not pwh's) is shown
        getattr(args, "_command_parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "handler", None):  # `pwh`, `pwh packet`, `pwh scenarios`: that command's own help
        getattr(args, "_command_parser", parser).print_help(sys.stderr)
        return ExitCode.ERROR
    track_user_interrupts()
    since = sigint_count()
    if argv is None:  # run as the program: orphaned descendants come back to pwh to be stopped
        ctrl_c.become_subreaper()
    restore = ctrl_c.install()  # a SIGINT stops every process pwh started, by PID (pwh._harness.interrupt)
    code = _run(args, since, restore)
    if argv is None:
        ctrl_c.exit_now_if_interrupted(code)
    return code


def _run(args: argparse.Namespace, since: int, restore: Callable[[], None]) -> int:
    """The command's handler, with every way it can end turned into an exit code."""
    try:
        return int(args.handler(args))
    except (UsageError, GateError) as exc:
        print(f"pwh: error: {exc}", file=sys.stderr)
        return ExitCode.ERROR
    except KeyboardInterrupt as exc:
        if ctrl_c.terminated():  # SIGTERM, SIGHUP: ended as a Ctrl-C ends it
            return _interrupted()
        if not is_user_interrupt(exc, since):  # raised by code pwh ran (an adapter), not a Ctrl-C
            return _ended_by(exc)
        return _interrupted()
    except (SystemExit, GeneratorExit) as exc:  # pwh's handlers return codes: this came from an adapter
        return _ended_by(exc)
    except Exception as exc:  # a bug in pwh: one line for the user, the traceback on request
        if os.environ.get("PWH_DEBUG"):
            raise
        if ctrl_c.interrupted():  # a clean-up that failed as the Ctrl-C unwound it
            return _interrupted()
        print(f"pwh: internal error ({type(exc).__name__}); rerun with PWH_DEBUG=1 to see where", file=sys.stderr)
        return ExitCode.ERROR
    finally:
        restore()


def _interrupted() -> int:
    """A real Ctrl-C (or SIGTERM, SIGHUP): whatever pwh started is stopped, one line, exit 130 (143, 129)."""
    ctrl_c.stop_descendants()
    print(ctrl_c.message(), file=sys.stderr)
    return ctrl_c.exit_code()  # ExitCode.INTERRUPTED for a Ctrl-C; 128 + the signal's number for the others


def _ended_by(exc: BaseException) -> int:
    """An adapter's SystemExit/KeyboardInterrupt must not end pwh quietly (exit 0) or pass for a
    Ctrl-C (130): exit 2, naming the exception (where it was raised is named by the loaders)."""
    print(f"pwh: error: the run was ended by {type(exc).__name__} raised inside it (by the SUT?); nothing more was judged", file=sys.stderr)
    return ExitCode.ERROR


def _parser() -> argparse.ArgumentParser:
    from pwh._cli import campaigns, gate, packet, verdicts

    p = argparse.ArgumentParser(prog="pwh", description="Verification harness for the post-writeback capability hooks RFC.")
    p.add_argument("--version", action="version", version=f"pwh {__version__}")
    sub = p.add_subparsers(title="commands")
    verbs = {**gate.VERBS, **campaigns.VERBS, **packet.VERBS, **verdicts.VERBS}
    assert sorted(verbs) == sorted(COMMAND_ORDER), sorted(verbs)
    for name in COMMAND_ORDER:
        verbs[name](sub)
    _tag_command_parsers(p)
    return p


def _tag_command_parsers(parser: argparse.ArgumentParser) -> None:
    """Each command's parser knows itself: a usage error shows its own usage (each states its exit
    codes in its epilog)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                command.set_defaults(_command_parser=command)
                _tag_command_parsers(command)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
