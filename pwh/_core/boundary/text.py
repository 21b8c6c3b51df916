"""Text normalisation for the public-boundary scanner (SPEC §2 INP, JNL-6, M13).

A private value must not get through by being spelled with look-alike characters. Before any rule
runs, a string that is not plain ASCII is reduced to the forms a reader would see:

1. **NFKC** (Unicode compatibility composition): full-width ``ＡＫＩＡ`` becomes ``AKIA``, ``ﬁ`` becomes
   ``fi``, super- and subscript digits become digits;
2. **invisible characters removed**: every format character (Unicode category ``Cf``: zero-width
   space, joiners, word joiner, BOM, bidi controls, soft hyphen), variation selectors, and the
   combining marks NFKC leaves detached;
3. **the confusable skeleton** (Unicode TR39 ``confusables.txt``, as packaged by
   ``confusable-homoglyphs``): each character that is confusable with an ASCII letter or digit is
   replaced by it, so a Cyrillic ``А`` or Greek ``Ο`` inside ``AKIA…`` or ``ghp_…`` reads as Latin.

The rules then run on every distinct form (the normalised text and its skeleton) and their
findings are united; ASCII text is returned as it is, so the hot path pays one ``str.isascii``.
The confusables table is loaded on first use only (it is about 0.9 MB of JSON).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from importlib import resources

__all__ = ["forms", "normalise", "skeleton"]

# Characters NFKC keeps that render as nothing (not all are category Cf).
_INVISIBLE_EXTRA = frozenset(
    "\u034f"  # combining grapheme joiner (Mn)
    "\u115f\u1160\u3164\uffa0"  # Hangul fillers (Lo)
    "\u180e"  # Mongolian vowel separator
    "\u2800"  # braille blank
)


def _invisible(ch: str) -> bool:
    if ch in _INVISIBLE_EXTRA:
        return True
    code = ord(ch)
    if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:  # variation selectors
        return True
    return unicodedata.category(ch) == "Cf"


def normalise(text: str) -> str:
    """NFKC, then every invisible character removed. ASCII text is returned unchanged.

    Each removal asks its question once per distinct character, not once per character: a long
    line with a few non-ASCII characters (a report's dashes) is then one ``set`` and one
    ``str.translate``, both in C."""
    if text.isascii():
        return text
    folded = unicodedata.normalize("NFKC", text)
    out = _without(folded, _invisible)
    if not out.isascii():
        # A combining mark on an ASCII letter ("a\u0301") hides the letter from ASCII rules; drop
        # the marks of a decomposition so the base letters stay visible.
        out = unicodedata.normalize("NFC", _without(unicodedata.normalize("NFD", out), unicodedata.combining))
    return out


def _without(text: str, drop: Callable[[str], object]) -> str:
    """``text`` without every character for which ``drop`` is true (ASCII characters are never dropped)."""
    gone = {ord(ch): None for ch in set(text) if not ch.isascii() and drop(ch)}
    return text.translate(gone) if gone else text


@lru_cache(maxsize=1)
def _ascii_confusables() -> dict[int, str]:
    """{code point: ASCII letter or digit it is confusable with}, from the packaged TR39 table."""
    data = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8"))
    table: dict[int, str] = {}
    for char, entries in data.items():
        if len(char) != 1 or char.isascii():
            continue
        for entry in entries:
            glyph = entry.get("c", "")
            if len(glyph) == 1 and glyph.isascii() and glyph.isalnum():
                table[ord(char)] = glyph
                break
    return table


def skeleton(text: str) -> str:
    """``text`` with every character confusable with an ASCII letter or digit replaced by it."""
    if text.isascii():
        return text
    return text.translate(_ascii_confusables())


def forms(text: str) -> tuple[str, ...]:
    """The distinct forms the rules must see: ``(text,)`` for ASCII, else the normalised text and
    (when it differs) its confusable skeleton."""
    if text.isascii():
        return (text,)
    norm = normalise(text)
    skel = skeleton(norm)
    return (norm,) if skel == norm else (norm, skel)
