"""Credentials split into pieces for the public-boundary scanner (SPEC §2 INP, JNL-6, M13).

A token of a known format must not get through by being cut in two: ``["AKIAIOSF", "ODNN7EXAMPLE"]``
or ``{"AKIAIOSF": "ODNN7EXAMPLE"}`` carries an AWS key id as surely as the whole string. A piece
that begins a known format (one of the token shapes' literal prefixes, e.g. ``AKIA``, ``ghp_``,
``sk_live_``, ``xoxb-``, ``glpat-``) is joined with the pieces after it (a list's next
items, a key's value), and the joined text is read for a known format only: a run of random ids
joined would look random, so the high-entropy rule is not applied to it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from pwh._core.boundary.secrets import _FAST_ID, _LOWER_PREFIXES, _OWN_HINTS, OWN_SHAPES, _hints, could_hold_token, has_known_format
from pwh._core.boundary.text import forms

__all__ = ["could_start_token", "token_across"]

_MAX_JOINED = 4  # a piece is joined with at most this many pieces after it
_MAX_PIECE = 256
_MIN_HINT = 3  # shorter literal hints ("AC", "SK", "-") start too many ordinary words
_LOWER = [p for p in _LOWER_PREFIXES.pattern.split("|") if p not in ("bearer", "sig=")]
_LOWER_START = re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(_LOWER) + ")")


@lru_cache(maxsize=1)
def _token_start() -> re.Pattern[str]:
    """A known format's literal prefix at the start of a piece or after a non-alphanumeric
    character: pwh's own shapes' case-sensitive hints of 3 characters or more and the lower-case
    prefixes of secrets._LOWER_PREFIXES. pwh's own shapes cover every prefix the library's do;
    reading only them keeps the library unloaded on the hot path. Words that head an assignment
    rather than a token (``authorization``, ``bearer``, ``sig=``) are left out: a secret-named key
    covers them."""
    hints: set[str] = set()
    for name, source in OWN_SHAPES:
        if "(?i" in source:
            continue
        for hint in _OWN_HINTS.get(name) or _hints(re.compile(source)):
            if len(hint) >= _MIN_HINT and any(c.isalnum() for c in hint):
                hints.add(re.escape(hint))
    return re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join([*sorted(hints), *_LOWER]) + ")")


def could_start_token(piece: str) -> bool:
    """True when ``piece`` (a key or a list item, exact ``str``) begins a known token format, or
    holds one's start after a separator (see _token_start)."""
    if not 2 <= len(piece) <= _MAX_PIECE:
        return False
    if piece.isascii():  # the usual piece: one form, and a lower-case id needs only the lower-case prefixes
        if _FAST_ID.fullmatch(piece):
            return _LOWER_START.search(piece) is not None
        return _token_start().search(piece) is not None
    start = _token_start()
    return any(start.search(form) is not None for form in forms(piece))


def token_across(pieces: Sequence[str], starts: Callable[[str], bool] = could_start_token) -> bool:
    """True when a known token format appears once a piece that could start one is joined with
    the pieces after it (``pieces``: consecutive strings, exact ``str``; ``starts``:
    :func:`could_start_token` or a memoised copy of it)."""
    for i, piece in enumerate(pieces):
        if i + 1 >= len(pieces) or not starts(piece):
            continue
        joined = piece
        for nxt in pieces[i + 1 : i + 1 + _MAX_JOINED]:
            if len(nxt) > _MAX_PIECE:
                break
            joined += nxt
            for form in forms(joined):
                if could_hold_token(form) and has_known_format(form):
                    return True
    return False
