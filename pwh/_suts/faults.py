"""What an adapter raised, said in one public-safe line, and the user's Ctrl-C told apart from it.

An adapter is someone else's code: at import, at construction, at close or in the middle of a
scenario it may raise anything, ``SystemExit(0)`` and ``KeyboardInterrupt`` included. Left alone,
those end pwh (or the gate's child pytest) quietly, often with exit 0, having judged nothing. So
every place that calls into an adapter turns a ``BaseException`` into an ordinary error naming the
exception's type, its message (withheld when the boundary scanner finds a private value in it) and
the adapter's own file:line — never an absolute path, never a traceback.

Only a real Ctrl-C stays a ``KeyboardInterrupt``: :func:`track_user_interrupts` puts a SIGINT
handler in place that counts the signals it turns into ``KeyboardInterrupt``, so one the adapter
raised itself (no signal counted) can be told from the user's.
"""

from __future__ import annotations

import importlib.util
import signal
import threading
from collections.abc import Iterator
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import FrameType, TracebackType

from pwh._core.boundary import BoundaryScanner

_sigints = 0  # real SIGINTs seen since the handler was put in place
_tracking = False


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    """Python's default behaviour (raise KeyboardInterrupt), counting the signal first."""
    global _sigints
    _sigints += 1
    raise KeyboardInterrupt


def track_user_interrupts() -> None:
    """Count real SIGINTs from now on. Only over Python's own default handler and only from the
    main thread (where signal handlers live); elsewhere the count stays unknown."""
    global _tracking
    if _tracking or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
        _tracking = True
    elif signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        _tracking = True  # no Ctrl-C can arrive: every KeyboardInterrupt is raised by code


def sigint_count() -> int:
    return _sigints


def is_user_interrupt(exc: BaseException, since: int) -> bool:
    """Whether ``exc`` is the user's Ctrl-C (a SIGINT arrived after the count ``since``). When
    SIGINT could not be tracked, a KeyboardInterrupt is taken as the user's: a Ctrl-C must never
    be reported as the adapter's fault."""
    if not isinstance(exc, KeyboardInterrupt):
        return False
    return _sigints > since or not _tracking


def module_roots(module_name: str) -> list[Path]:
    """Where an adapter module's own code lives: its file and, for a module inside a package, the
    top-level package's directory (frames in any of its modules are the adapter's)."""
    top = module_name.partition(".")[0]
    roots: list[Path] = []
    for name in dict.fromkeys((module_name, top)):
        spec = _find_spec(name)
        if spec is None:
            continue
        if spec.submodule_search_locations:
            roots += [Path(p).resolve() for p in spec.submodule_search_locations]
        elif spec.origin and spec.origin not in ("built-in", "frozen"):
            roots.append(Path(spec.origin).resolve())
    return roots


def _find_spec(name: str) -> ModuleSpec | None:
    """The module's spec without running it, or ``None``; finding a submodule imports its parent
    package, whose code may raise anything."""
    try:
        return importlib.util.find_spec(name)
    except BaseException:
        return None


def adapter_location(exc: BaseException, roots: list[Path], module_name: str) -> str | None:
    """``file:line`` of the innermost traceback frame inside the adapter's own code (for a
    SyntaxError, where the parser stopped), shown relative to the current directory or to the
    adapter's import root — never absolute. ``None`` when no frame is the adapter's."""
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        candidate = Path(exc.filename).resolve()
        if _inside(candidate, roots):
            return f"{_shown(candidate, roots, module_name)}:{exc.lineno}"
    found: tuple[Path, int] | None = None
    for path, line in _frames(exc.__traceback__):
        if _inside(path, roots):
            found = (path, line)
    return f"{_shown(found[0], roots, module_name)}:{found[1]}" if found else None


def describe(exc: BaseException, location: str | None) -> str:
    """``Type: message (at file:line)`` in one line; the message is cut to one line of 200
    characters and withheld when it would carry a private value (a path, a host, a secret)."""
    text = _first_line(exc)
    if text and BoundaryScanner().scan_value(text):
        text = "(message withheld: it would carry a private value)"
    what = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return f"{what} (at {location})" if location else what


def _first_line(exc: BaseException) -> str:
    """The message's first line, or nothing when the exception cannot even say it (a ``__str__``
    that raises is the adapter's too)."""
    try:
        text = str(exc).strip()
    except BaseException:
        return ""
    return text.splitlines()[0][:200] if text else ""


def _frames(tb: TracebackType | None) -> Iterator[tuple[Path, int]]:
    while tb is not None:
        yield Path(tb.tb_frame.f_code.co_filename).resolve(), tb.tb_lineno
        tb = tb.tb_next


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def _shown(path: Path, roots: list[Path], module_name: str) -> str:
    try:
        return path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        pass
    for root in roots:  # the import root: the directory holding the top-level module or package
        base = root.parent
        if path == root or root in path.parents:
            return path.relative_to(base).as_posix()
    return path.name
