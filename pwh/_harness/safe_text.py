"""Strings from files, made safe for the medium they are written to. One copy each, used by every
output path: whatever a verdict, trace, packet or feature file holds, it reaches

- a terminal with its control characters shown escaped (C0 but tab, DEL, C1, ESC, the bidi
  overrides and isolates): :func:`for_terminal` (``lines=True`` keeps newlines, for a text already
  made of lines pwh wrote);
- an XML document without the characters XML 1.0 forbids (a JUnit file CI must parse), control
  characters shown escaped: :func:`for_xml` (markup is still the serializer's to escape);
- Markdown as text, never live HTML or table syntax: :func:`for_markdown`, and
  :func:`for_markdown_code` for text inside a code span.

The escaped form is Python's (``\\x1b``, ``\\u202e``): visible, one line, and the same everywhere.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["for_markdown", "for_markdown_code", "for_terminal", "for_xml"]

# C0 (tab and newline handled by the callers' choice), DEL, C1, and the bidirectional overrides,
# embeddings and isolates (text that reorders what a reader sees).
_UNSAFE = "\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_TERMINAL = re.compile(f"[{_UNSAFE}]")
_TERMINAL_LINES = re.compile(f"[{_UNSAFE.replace(chr(0x0A) + '-', chr(0x0B) + '-')}]")
# What XML 1.0 does not allow at all, plus the controls a terminal would act on when CI prints it.
_XML = re.compile(f"[{_UNSAFE}\ud800-\udfff\ufffe\uffff]")


def _escaped(match: re.Match[str]) -> str:
    ch = match.group()
    return f"\\x{ord(ch):02x}" if ord(ch) <= 0xFF else f"\\u{ord(ch):04x}"


def for_terminal(text: Any, *, lines: bool = False) -> str:
    """``text`` as a terminal may show it: every control character escaped, so nothing in it moves
    the cursor, erases, retitles the window or starts a new line (unless ``lines``: newlines kept)."""
    return (_TERMINAL_LINES if lines else _TERMINAL).sub(_escaped, str(text))


def for_xml(text: Any) -> str:
    """``text`` with what XML 1.0 cannot hold (and control characters) shown escaped; a newline is
    kept (it is legal, and the body of a ``<system-out>`` is lines)."""
    return _XML.sub(lambda m: "\n" if m.group() == "\n" else _escaped(m), str(text))


def for_markdown(text: Any) -> str:
    """``text`` as one Markdown table cell or list item: ``&``, ``<`` and ``>`` as entities (no
    live HTML), ``|`` escaped, a newline a space, and control characters escaped."""
    out = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|").replace("\n", " ")
    return for_terminal(out)


def for_markdown_code(text: Any) -> str:
    """``text`` inside a Markdown code span (where entities are not decoded, and markup is shown
    as text): no backtick to close the span, no newline, control characters escaped."""
    return for_terminal(str(text).replace("`", "'").replace("\n", " "))
