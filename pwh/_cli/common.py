"""What every verb module of the CLI shares: the usage error, and writing what the user asked for."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from pwh._harness.gate_error import GateError
from pwh._harness.paths import shown, write_output

__all__ = ["UsageError", "check_outputs", "say", "unwritable", "unwritable_folder", "write"]


class UsageError(Exception):
    """A problem with what the user asked for; shown as one line, exit 2."""


def say(line: str) -> None:
    """A progress line, flushed at once."""
    print(line, flush=True)


def write(path: str | None, text: str) -> None:
    """Write what the user asked for and say so (``wrote PATH``), or one usage-error line."""
    if path:
        try:
            write_output(path, text)
        except GateError as exc:  # what the user asked for cannot be written: a usage error
            raise UsageError(str(exc)) from None
        print(f"wrote {shown(path)}", flush=True)


def check_outputs(args: argparse.Namespace, *options: str) -> None:
    """Before a long run: an output path that cannot be written (a directory, a folder that is
    a file, a file or folder without write permission) is refused at once, not after the run."""
    for option in options:
        path = getattr(args, option, None)
        if path:
            problem = unwritable(Path(path))
            if problem is not None:
                raise UsageError(f"--{option} {shown(path)} {problem}")


def unwritable_folder(path: Path) -> str | None:
    """Why a folder could not be made (or replaced) at ``path``: an existing file there, or no
    permission to write where it would go (nothing is made or changed to find out)."""
    try:
        if path.exists() and not path.is_dir():
            return "is a file; name a folder"
        folder = path if path.is_dir() else path.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir():
            return f"cannot be written: {shown(folder)} is not a folder"
        if not os.access(folder, os.W_OK | os.X_OK) or (path.is_dir() and not os.access(path.parent, os.W_OK | os.X_OK)):
            return f"cannot be written: no permission to write in {shown(folder)}"
    except OSError as exc:
        return f"cannot be written: {exc.strerror or 'not reachable'}"
    return None


def unwritable(path: Path) -> str | None:
    """Why ``path`` could not be written as a file (nothing is made or changed to find out)."""
    try:
        if path.is_dir():
            return "is a directory; name a file"
        if path.exists() or path.is_symlink():
            return None if os.access(path, os.W_OK) else "cannot be written: the file is read-only"
        folder = path.parent
        while not folder.exists() and folder != folder.parent:
            if folder.is_symlink():
                return "cannot be written: its folder is a broken link"
            folder = folder.parent
        if not folder.is_dir():
            return f"cannot be written: {shown(folder)} is not a folder"
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"cannot be written: no permission to write in {shown(folder)}"
    except OSError as exc:
        return f"cannot be written: {exc.strerror or 'not reachable'}"
    return None
