"""HTTP authentication credentials without their header (SPEC §2 INP, JNL-6, M13).

``Authorization: Basic …`` is found by its header (:mod:`.secrets`); a credential copied without
the header is one too, when what follows the scheme is a credential and not prose:

- ``Basic <base64>`` when the base64 decodes to ``user:password`` (printable, a colon, a password):
  ``Basic usage`` and ``Basic plan`` decode to nothing of the kind;
- ``Bearer <token>`` or ``Token <token>`` when the token is 16 characters or more and looks
  generated (:func:`.values.looks_generated`): ``Bearer tokens are refused`` and
  ``Bearer AuthenticationScheme`` are words.
"""

from __future__ import annotations

import base64
import binascii
import re

from pwh._core.boundary.values import looks_generated

__all__ = ["has_scheme_credential"]

_BASIC = re.compile(r"(?<![A-Za-z0-9_\-])(?i:basic)[ \t]+(?P<v>[A-Za-z0-9+/]{8,4096}={0,2})(?![A-Za-z0-9+/=])")
_BEARER = re.compile(r"(?<![A-Za-z0-9_\-])(?i:bearer|token)[ \t]+(?P<v>[A-Za-z0-9._~+/\-]{16,4096}=*)(?![A-Za-z0-9._~+/=\-])")
_USER_PASSWORD = re.compile(r"[^:\s]{1,256}:\S{1,256}")


def _is_user_password(encoded: str) -> bool:
    try:
        decoded = base64.b64decode(encoded + "=" * (-len(encoded.rstrip("=")) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
        return False
    return _USER_PASSWORD.fullmatch(decoded) is not None


def has_scheme_credential(text: str, low: str) -> bool:
    """True when ``text`` holds a Basic or Bearer/Token credential without its header (see above);
    ``low``: ``text.lower()``."""
    if "basic" in low and any(_is_user_password(m.group("v").rstrip("=")) for m in _BASIC.finditer(text)):
        return True
    return ("bearer" in low or "token" in low) and any(looks_generated(m.group("v")) for m in _BEARER.finditer(text))
