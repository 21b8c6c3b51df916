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

The faults the harness asks an adapter to *cause* are named here too: :data:`INJECTED_FAULTS`
(``SUT.inject_fault``) and :data:`CRASH_POINTS` (``SUT.arm_crash``, and the fake orchestrator's own
points), each by its effect in RFC terms, so that an implementation laid out differently from the
reference can place each one where that effect holds, or answer ``Unsupported`` with its reason
(the scenario is then reported as not applicable to it, never as failed). docs/seam.md gives the
same tables for adapter authors.
"""

from __future__ import annotations

import importlib.util
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import FrameType, TracebackType

from pwh._core.boundary import BoundaryScanner


@dataclass(frozen=True)
class Named:
    """A fault or crash point the gate asks for by name: what must hold when it takes effect (in
    RFC terms, so any layout can place it), which clauses the scenarios then judge, and where the
    scenarios use it. ``placed_by`` is ``"sut"`` (the adapter causes it) or ``"pwh"`` (pwh's fake
    orchestrator does: the adapter only has to come back from it through ``restart``)."""

    name: str
    effect: str
    judged: str
    used_by: str
    placed_by: str = "sut"


INJECTED_FAULTS: tuple[Named, ...] = (
    Named(
        "journal_unwritable",
        "From now on every sidecar write fails, as on a read-only or full file system; reads still work.",
        "§5.2/§10: the primary receipt, its quota spend and the Todo state stay unchanged. pwh's reading: the dispatch "
        "outcome reports journal_error journal_write_failed, and a hook whose attempt cannot be counted is not called "
        "(0 attempts, not recorded).",
        "m07_isolation, m07_survivors",
    ),
    Named(
        "journal_record_corrupted",
        "The newest sidecar record no longer passes the journal's own integrity check (one flipped byte, a torn write).",
        "§9: a completed sidecar receipt is never rebuilt from log text, so a replay does not return it as recorded and "
        "does not call the provider again. pwh's reading: journal_error journal_record_corrupt, the receipt and event "
        "kind still named.",
        "m05_replay, m05_survivors",
    ),
    Named(
        "journal_record_tampered",
        "One payload value of the newest sidecar record's intent is changed in storage; the record is still well-formed "
        "(valid JSON, valid schema), only its content differs from what was recorded.",
        "pwh's reading (the RFC names no integrity check): a replay never returns the altered intent as the recorded "
        "one and reports journal_record_corrupt; the provider is not called again.",
        "m05_replay",
    ),
    Named(
        "journal_file_removed",
        "The journal's storage is deleted by someone else (an operator's rm, a temp cleaner) while the dispatcher has it "
        "open. A journal that is not a file answers Unsupported.",
        "§9/§14: what was recorded survives: every recorded dispatch is still there after a restart, and a dispatch made "
        "meanwhile is recorded, not lost. pwh's reading: the reference puts the file back from the open connection.",
        "m07_journal_files",
    ),
    Named(
        "journal_file_replaced",
        "Another, empty journal is moved onto the journal's path while it is open (a restore, a sync tool). A journal "
        "that is not a file answers Unsupported.",
        "§10: never a primary failure. pwh's reading: the next dispatch reports journal_write_failed with its hooks "
        "uncalled and unrecorded, later reads report journal_read_failed, and nothing is acknowledged that is not durable.",
        "m07_journal_files",
    ),
    Named(
        "journal_file_wal_truncated",
        "The journal's write-ahead log is cut to zero bytes while open. Specific to a journal with a write-ahead log "
        "(SQLite WAL): any other answers Unsupported.",
        "As journal_file_replaced.",
        "m07_journal_files",
    ),
    Named(
        "journal_file_wal_removed",
        "The journal's write-ahead log alone is deleted while open (write-ahead-log journals only; else Unsupported).",
        "As journal_file_replaced.",
        "m07_journal_files",
    ),
    Named(
        "journal_file_wal_replaced",
        "The journal's write-ahead log is replaced by a byte-identical copy under another inode while open "
        "(write-ahead-log journals only; else Unsupported).",
        "As journal_file_replaced.",
        "m07_journal_files",
    ),
    Named(
        "journal_file_wal_shortened",
        "The last byte of the journal's write-ahead log is cut while open, a torn copy (write-ahead-log journals only; else Unsupported).",
        "As journal_file_replaced.",
        "m07_journal_files",
    ),
)

CRASH_POINTS: tuple[Named, ...] = (
    Named(
        "sidecar.before_checkpoint",
        "The host has handed the committed receipt to the dispatcher and nothing of this dispatch is durable yet: no "
        "attempt counted, no provider called, no sidecar record.",
        "§5.2/§9 (JNL-4): after restart the recovery dispatches the receipt again; before it the journal holds no record "
        "of it; after it each admitted hook has exactly one dispatch identity and one record, and the quota is spent once.",
        "m05_limits, m05_replay",
    ),
    Named(
        "sidecar.after_provider_returned",
        "The first provider called in this dispatch has returned its answer and nothing of that answer is durable yet "
        "(other providers may still be running).",
        "§9: the retry reuses the dispatch identity; no record before recovery, one record per hook after it.",
        "m05_limits, m05_replay",
    ),
    Named(
        "sidecar.inside_record_transaction",
        "The dispatch's sidecar records are being written and none of them is durable yet. A journal that commits each "
        "hook's record on its own places it during the first record's write.",
        "§9/§14 (atomic per-dispatch dedupe): no record before recovery; after it, one record per hook.",
        "m05_limits, m05_replay",
    ),
    Named(
        "sidecar.after_record",
        "Every sidecar record of this dispatch is durable and the dispatch has not yet returned its outcome to the host. "
        "A journal that commits each hook's record on its own places it after the last hook's commit.",
        "§9: before recovery every record is there; the recovery's dispatch is a replay that returns them unchanged "
        "without calling a provider.",
        "m05_limits, m05_replay",
    ),
    Named(
        "primary.before_writeback",
        "pwh's fake orchestrator stops before its primary writeback transaction: no receipt, nothing to dispatch.",
        "§5.1/§12: no committed receipt, zero provider calls.",
        "pwh soak",
        "pwh",
    ),
    Named(
        "primary.inside_writeback",
        "pwh's fake orchestrator stops inside its primary writeback transaction, which is rolled back: no committed receipt.",
        "§5.1/§12: zero post-writeback calls for a writeback that did not commit.",
        "pwh soak",
        "pwh",
    ),
    Named(
        "primary.after_writeback",
        "pwh's fake orchestrator stops right after its primary receipt is committed, before it calls dispatch.",
        "§5.2/§9 (JNL-4): after restart its recovery queue dispatches the receipt; exactly one dispatch identity and one "
        "record per hook, the quota spent once.",
        "m05_limits, m05_replay, m11_replan",
        "pwh",
    ),
    Named(
        "primary.after_dispatch",
        "pwh's fake orchestrator stops after dispatch returned, before the quota spend.",
        "§9: the recovery's dispatch is a replay: the recorded receipts, no provider called again; the quota spent once.",
        "m05_replay",
        "pwh",
    ),
    Named(
        "primary.after_spend",
        "pwh's fake orchestrator stops after the quota spend, before the Turn's result is returned.",
        "§9: the recovery replays; the spend is not repeated.",
        "pwh soak",
        "pwh",
    ),
)

INJECTED_FAULT_NAMES: tuple[str, ...] = tuple(f.name for f in INJECTED_FAULTS)
SUT_CRASH_POINTS: tuple[str, ...] = tuple(c.name for c in CRASH_POINTS if c.placed_by == "sut")


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
