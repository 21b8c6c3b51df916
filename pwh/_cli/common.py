"""What every verb module of the CLI shares: the usage error, and writing what the user asked for."""

from __future__ import annotations

import argparse
from pathlib import Path

from pwh._harness.gate_error import GateError
from pwh._harness.paths import shown, write_output

__all__ = ["UsageError", "check_outputs", "say", "write"]


class UsageError(Exception):
    """A problem with what the user asked for; shown as one line, exit 2."""


def say(line: str) -> None:
    """A progress line, flushed at once."""
    print(line, flush=True)


def write(path: str | None, text: str) -> None:
    if path:
        try:
            write_output(path, text)
        except GateError as exc:  # what the user asked for cannot be written: a usage error
            raise UsageError(str(exc)) from None


def check_outputs(args: argparse.Namespace, *options: str) -> None:
    """Before a long run: an output path that names a directory is refused at once, not after it."""
    for option in options:
        path = getattr(args, option, None)
        if path and Path(path).is_dir():
            raise UsageError(f"--{option} {shown(path)} is a directory; name a file")
