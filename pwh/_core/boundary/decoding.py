"""Encoded text for the public-boundary scanner (SPEC §2 INP, JNL-6, M13).

A private value must not get through by being encoded: ``%2Fhome%2Falice`` is a home directory,
``cGFzc3dvcmQ9aHVudGVyMg==`` is ``password=hunter2``. :func:`decoded_forms` gives the texts a
string decodes to, and the scanner runs its rules on them too (one level deep: a decoded text is
not decoded again, but percent-encoding is undone twice, for a doubly encoded URL parameter):

- percent-encoding (``%2F``, ``%252F``), when the text holds an escape;
- JSON and C escapes (``\\/``, ``\\u002f``, ``\\x2f``);
- base64 (standard or URL-safe, padded or not) and hex runs of 12 characters or more, when they
  decode to printable UTF-8 text. Random ids, digests and keys decode to binary noise, so they
  give nothing: only text someone encoded on purpose comes back.
"""

from __future__ import annotations

import base64
import binascii
import re
from itertools import islice
from urllib.parse import unquote

__all__ = ["decoded_forms", "encodes_text"]

_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|x([0-9A-Fa-f]{2})|(/))")
_RUN = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{12,8192}={0,2}(?![A-Za-z0-9+/_\-=])")
_HEX = re.compile(r"(?:[0-9A-Fa-f]{2})+")
_MAX_RUNS = 16  # a string with more candidate runs is judged on its first ones
_MIN_DECODED = 6


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1) or match.group(2)
    return chr(int(code, 16)) if code else "/"


def _printable(data: bytes) -> str | None:
    """``data`` as text when it is UTF-8 of printable characters (tabs and newlines allowed)."""
    if len(data) < _MIN_DECODED:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if all(c.isprintable() or c in "\t\n\r" for c in text) else None


def _decode_run(run: str) -> str | None:
    """The text a base64 or hex run encodes, or None when it encodes no printable text."""
    if len(run) % 2 == 0 and _HEX.fullmatch(run) and any(c.isdigit() for c in run) and any(c.isalpha() for c in run):
        return _printable(binascii.unhexlify(run))
    body = run.rstrip("=")
    if len(body) % 4 == 1 or (("-" in body or "_" in body) and ("+" in body or "/" in body)):
        return None
    altchars = b"-_" if "-" in body or "_" in body else None
    try:
        data = base64.b64decode(body + "=" * (-len(body) % 4), altchars=altchars, validate=True)
    except (binascii.Error, ValueError):
        return None
    return _printable(data)


def encodes_text(run: str) -> bool:
    """True when ``run`` (one base64 or hex run) decodes to printable text: an encoded cursor or
    state (``eyJwYWdlIjoyfQ`` is ``{"page":2}``), read through what it decodes to, not a random key."""
    return len(run) >= 12 and _decode_run(run) is not None


def decoded_forms(text: str) -> tuple[str, ...]:
    """The texts ``text`` decodes to (see the module docstring), without ``text`` itself; ``()``
    for the usual string, which holds no escape and no long run."""
    out: list[str] = []
    if "%" in text and _PERCENT.search(text):
        decoded = unquote(text)
        if _PERCENT.search(decoded):
            decoded = unquote(decoded)
        if decoded != text:
            out.append(decoded)
    if "\\" in text and _ESCAPE.search(text):
        out.append(_ESCAPE.sub(_unescape, text))
    if len(text) >= 12:
        for match in islice(_RUN.finditer(text), _MAX_RUNS):
            decoded_run = _decode_run(match.group())
            if decoded_run is not None:
                out.append(decoded_run)
    return tuple(out)
