"""The one rejection shape every fake raises, plus the token rule the fakes share.

A fake refuses bad input the way the real thing must: a stable ``code`` a test can assert on,
the JSON ``path`` at fault, and a short ``reason`` written by the fake itself. The reason and
path never repeat the offending value, so a rejected secret or private path cannot leak into a
test report or a journal.
"""

from __future__ import annotations

import re
from typing import Any

from pwh._core.codes import json_path as _render

# Opaque identifiers and evidence items: no slashes, spaces or control characters, so a local
# path, a URL or prose cannot pass as a token (seed 003 §4: no private paths in evidence).
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")


def is_token(value: object) -> bool:
    """True for an exact ``str`` matching :data:`TOKEN_PATTERN` (subclasses are refused)."""
    return type(value) is str and TOKEN_PATTERN.fullmatch(value) is not None


def json_path(*parts: str | int) -> str:
    """``$.a.b[0]``, rendered by pwh's one JSON-path renderer (:func:`pwh._core.codes.json_path`): a
    key that is not a plain field name shows as ``['a.b']`` or, when it could be private, ``[?]``."""
    return _render(parts)


class FakeRejected(Exception):
    """Base of every fake's refusal: ``code`` is stable, ``path`` is JSON-path, ``reason`` is ours."""

    def __init__(self, code: str, path: str, reason: str) -> None:
        # All three go to Exception so the exception pickles and compares by its args.
        super().__init__(code, path, reason)
        self.code = code
        self.path = path
        self.reason = reason

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "path": self.path, "reason": self.reason}

    def __str__(self) -> str:
        return f"{self.code} at {self.path}: {self.reason}"
