"""Small naming helpers the models' trace and Gherkin writers share (one place, no cycle)."""

from __future__ import annotations

import re

__all__ = ["sut_slug"]


def sut_slug(text: str) -> str:
    """A SUT name as a file-name-safe slug."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48] or "sut"
