"""A model trace read as data, never letting it choose code to run (what ``pwh replay`` reads).

A trace is a file someone shared. It may name the SUT it was found with, but only a built-in one
(:data:`pwh._suts.seam.BUILTIN_SUTS`) is run on the trace's word; a trace naming ``module:factory`` is
refused unless the user names an adapter on the command line (``--sut``). The trace's
``sut_options`` are never passed to any factory: they would be keyword arguments chosen by a data
file. What the trace carries is read in bounded memory (a size cap, then ``json.loads``), and
anything that is not a trace — too big, too deep, not UTF-8, not JSON, a directory, a device —
is one line naming the file and what is wrong with it, exit 2.

"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pwh._core.boundary import BoundaryScanner
from pwh._suts.seam import BUILTIN_SUTS

TRACE_SCHEMA_VERSION = "pwh_model_trace_v0"
MAX_TRACE_BYTES = 16 * 1024 * 1024  # a shrunk counterexample is a few KB; far above any real one
MAX_STEPS = 100_000
_SUT_SPEC = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*")
_PLAIN_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")


class ReplayError(Exception):
    """The trace cannot be replayed; the message is one public-safe line (exit 2)."""


@dataclass(frozen=True)
class Trace:
    """What ``pwh replay`` keeps of a trace file: checked steps and the recorded violation."""

    sut: str
    steps: list[dict[str, Any]]
    violation: dict[str, Any] | None
    had_options: bool


def shown_file(path: str | Path) -> str:
    """The trace's name as the user may see it: its last part, if that is a plain name."""
    name = Path(path).name
    return name if _PLAIN_NAME.fullmatch(name) and not BoundaryScanner().scan_value(name) else "the trace file"


def shown_sut(spec: str) -> str:
    """A SUT spec read from a file, quoted only when it is a plain ``module:factory`` and clean."""
    if spec in BUILTIN_SUTS or (len(spec) <= 200 and _SUT_SPEC.fullmatch(spec) and not BoundaryScanner().scan_value(spec)):
        return repr(spec)
    return "(a name withheld: not a plain module:factory)"


def read_trace_bytes(path: str | Path) -> bytes:
    """The file's bytes, or :class:`ReplayError`: only a regular file of at most
    :data:`MAX_TRACE_BYTES` is read (never a directory, FIFO or device; nothing is read unbounded)."""
    name = shown_file(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise ReplayError(f"{name} is a directory, not a trace file") from None
    except FileNotFoundError:
        raise ReplayError(f"cannot read {name}: no such file") from None
    except OSError as exc:
        raise ReplayError(f"cannot read {name}: {exc.strerror or 'open failed'}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ReplayError(f"{name} is a directory, not a trace file")
        if not stat.S_ISREG(info.st_mode):
            raise ReplayError(f"{name} is not a regular file")
        if info.st_size > MAX_TRACE_BYTES:
            raise ReplayError(f"{name} is {info.st_size} bytes, more than a trace may be ({MAX_TRACE_BYTES})")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_TRACE_BYTES:  # it grew while being read
                raise ReplayError(f"{name} is more than {MAX_TRACE_BYTES} bytes, more than a trace may be")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise ReplayError(f"cannot read {name}: {exc.strerror or 'read failed'}") from None
    finally:
        os.close(fd)


def parse_trace(data: bytes, name: str = "the trace file") -> Trace:
    """Check a trace's bytes; :class:`ReplayError` says in one line what is wrong."""
    import json

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReplayError(f"{name} is not JSON (not UTF-8 text)") from None

    def no_constant(token: str) -> Any:
        raise ValueError(token)

    try:
        value = json.loads(text, parse_constant=no_constant)
    except RecursionError:
        raise ReplayError(f"{name} is not a trace: its JSON is nested too deeply") from None
    except ValueError:
        raise ReplayError(f"{name} is not JSON") from None
    if not isinstance(value, dict) or value.get("schema_version") != TRACE_SCHEMA_VERSION:
        raise ReplayError(f"{name} is not a {TRACE_SCHEMA_VERSION} trace")
    sut, steps = value.get("sut"), value.get("steps")
    if not isinstance(sut, str) or not sut or not isinstance(steps, list) or not steps:
        raise ReplayError(f"{name}: a trace needs a 'sut' name and a non-empty 'steps' list")
    if len(steps) > MAX_STEPS:
        raise ReplayError(f"{name}: 'steps' has {len(steps)} entries, more than a trace may have ({MAX_STEPS})")
    from pwh._campaigns.models.language import StepError, check_step

    checked: list[dict[str, Any]] = []
    for i, step in enumerate(steps):
        try:
            checked.append(check_step(step, i))
        except StepError as exc:
            raise ReplayError(f"{name}: {exc}") from None
        except (RecursionError, TypeError, ValueError):  # a value the step checker cannot even compare
            raise ReplayError(f"{name}: step {i} is not a step of the action language") from None
    if checked[0]["op"] != "setup":
        raise ReplayError(f"{name}: the first step of a trace must be 'setup'")
    options = value.get("sut_options", {})
    if not isinstance(options, dict):
        raise ReplayError(f"{name}: 'sut_options' must be an object")
    return Trace(sut, checked, _violation(value.get("violation")), bool(options))


def _violation(value: Any) -> dict[str, Any] | None:
    """The recorded violation, kept only as the plain fields replay compares (never printed)."""
    if not isinstance(value, dict):
        return None
    return {k: v for k, v in value.items() if k in ("row", "invariant", "step") and isinstance(v, (str, int))}


def choose_sut(trace: Trace, cli_sut: str | None) -> str:
    """The SUT to run: ``--sut`` when given (the user's own choice), else the trace's, which must be
    built in. A trace naming code is refused: the user must name it (``--sut``) to run it."""
    if cli_sut:
        return cli_sut
    if trace.sut in BUILTIN_SUTS:
        return trace.sut
    shown = shown_sut(trace.sut)
    hint = f": name it yourself with --sut {trace.sut}" if shown.startswith("'") else " (give --sut NAME|module:factory)"
    raise ReplayError(
        f"the trace names SUT {shown}, which is not built in ({', '.join(sorted(BUILTIN_SUTS))}); a trace never chooses code to run{hint}"
    )
