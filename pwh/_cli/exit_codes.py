"""The exit codes of every ``pwh`` command: one enum, the numbers users see (the README's and each
command's ``--help`` epilog). The engines return results or raise errors; the CLI maps them here.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode"]


class ExitCode(IntEnum):
    OK = 0
    """Success: the verdict passes, nothing was found, the file was written."""
    FAILED = 1
    """The judged implementation failed: a row failed, a check found problems, a trace still fails."""
    ERROR = 2
    """The command could not run: bad arguments, missing files, an unloadable SUT."""
    INCOMPLETE = 3
    """Nothing failed, but not all was judged: a gate row skipped (``pwh gate``)."""
    UNWIRED = 3
    """``pwh smoke``: nothing failed, but ``dispatch`` never answered (the same number as INCOMPLETE)."""
    INTERRUPTED = 130
    """A real Ctrl-C (a SIGTERM ends with 143, a SIGHUP with 129: 128 + the signal's number)."""
