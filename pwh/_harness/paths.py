"""Small path helpers the harness shares: how a path is shown to a user or in a report, and where
short-lived stores go. One copy each, so every message and report names a file the same way."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["fast_tmp", "relative", "shown"]


def shown(path: Path | str) -> str:
    """A path as the user may see it: relative to the working directory, else its last part (never
    an absolute path, which would name the machine's folders)."""
    try:
        return Path(os.path.abspath(path)).relative_to(Path.cwd()).as_posix() or "."
    except ValueError:
        return Path(path).name or str(path)


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
