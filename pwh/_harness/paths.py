"""Small path helpers the harness shares: how a path is shown to a user or in a report, and where
short-lived stores go. One copy each, so every message and report names a file the same way."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

__all__ = ["fast_tmp", "read_bounded", "read_json_file", "relative", "shown"]

MAX_DATA_BYTES = 64 * 1024 * 1024  # a data file pwh reads whole (a verdict of the full matrix is ~1 MiB)
MAX_JSON_DEPTH = 64  # a verdict is 6 levels deep; deeper input is refused before anything walks it


def shown(path: Path | str) -> str:
    """A path as the user may see it: relative to the working directory, else its last part (never
    an absolute path, which would name the machine's folders); control characters shown escaped."""
    from pwh._harness.safe_text import for_terminal

    try:
        return for_terminal(Path(os.path.abspath(path)).relative_to(Path.cwd()).as_posix() or ".")
    except (ValueError, OSError):
        return for_terminal(Path(path).name or str(path))


def read_bounded(path: str | Path, *, limit: int = MAX_DATA_BYTES, what: str = "file") -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``), or :class:`GateError` in one line
    naming it. The type is checked with ``os.stat`` before opening, and the open never blocks: a
    FIFO, device or directory is refused, never waited on."""
    from pwh._harness.gate_error import GateError

    name = shown(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        raise GateError(f"cannot read {name}: {exc.strerror or 'no such file'}") from None
    if stat.S_ISDIR(info.st_mode):
        raise GateError(f"{name} is a directory, not a {what}")
    if not stat.S_ISREG(info.st_mode):
        raise GateError(f"{name} is not a regular file (a FIFO, socket or device is never read)")
    if info.st_size > limit:
        raise GateError(f"{name} is {info.st_size} bytes, more than a {what} may be ({limit})")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise GateError(f"cannot read {name}: {exc.strerror or 'open failed'}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced between the stat and the open
            raise GateError(f"{name} is not a regular file (a FIFO, socket or device is never read)")
        chunks, total = [], 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > limit:
                raise GateError(f"{name} is more than {limit} bytes, more than a {what} may be")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise GateError(f"cannot read {name}: {exc.strerror or 'read failed'}") from None
    finally:
        os.close(fd)


def json_depth_exceeds(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether parsed JSON nests deeper than ``limit`` (an iterative walk: never a RecursionError)."""
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            todo.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return False


def read_json_file(path: str | Path, *, limit: int = MAX_DATA_BYTES, what: str = "file") -> Any:
    """A JSON file read with :func:`read_bounded`, then bounded in depth (:data:`MAX_JSON_DEPTH`),
    or :class:`GateError` in one line naming the file and what is wrong (exit 2)."""
    import json

    from pwh._harness.gate_error import GateError

    name = shown(path)
    try:
        text = read_bounded(path, limit=limit, what=what).decode("utf-8")
    except UnicodeDecodeError:
        raise GateError(f"{name} is not UTF-8 text") from None
    try:
        value = json.loads(text)
    except RecursionError:
        raise GateError(f"{name} is not a {what}: its JSON is nested too deeply") from None
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        raise GateError(f"{name} is not JSON" + (f" (line {line})" if line else "")) from None
    if json_depth_exceeds(value):
        raise GateError(f"{name} is not a {what}: its JSON is nested more than {MAX_JSON_DEPTH} levels deep")
    return value


def relative(path: Path, root: Path) -> str:
    """``path`` relative to ``root``, a symbolic link named where it is rather than where it points;
    its last part when it lies outside ``root`` or cannot be resolved."""
    try:
        return (path.parent.resolve() / path.name).relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return path.name


def fast_tmp() -> str | None:
    """A memory-backed temporary folder where the machine has one and it is writable: scenario
    stores are created and dropped by the hundred, and their fsyncs are not what is judged."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


INSTALLED_FEATURES = "pwh_features"  # the matrix as the wheel ships it (features/ in the source tree)


def feature_label(path: Path, feature_dir: Path) -> str:
    """How reports name a feature file: ``<dir>/<relative path>``, where the wheel's
    ``pwh_features`` reads as ``features``, so a verdict names the same files however pwh was installed."""
    name = "features" if feature_dir.name == INSTALLED_FEATURES else feature_dir.name
    return f"{name}/{relative(path, feature_dir)}"


def write_output(path: str | Path, text: str) -> None:
    """Write a report or verdict file (its folder made), or :class:`GateError` in one line naming it."""
    from pwh._harness.gate_error import GateError

    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, "utf-8")
    except OSError as exc:
        raise GateError(f"cannot write {shown(path)}: {exc.strerror or 'write failed'}") from None
