"""What the packet's builder, verifier and commands share: the manifest's name and schema version,
the exit codes, the error types, the canonical JSON bytes and the paths as a user may see them.

Its own module so that :mod:`.verify` can use them without importing :mod:`.build` (and, through
it, the gate): checking a published packet needs none of what makes one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pwh._core.boundary import BoundaryScanner

MANIFEST = "manifest.json"
MANIFEST_SCHEMA_VERSION = "pwh_packet_manifest_v0"
EXIT_VERIFIED, EXIT_PROBLEMS, EXIT_NOT_A_PACKET = 0, 1, 2
WITHHELD = "<withheld>"

Problem = tuple[str, str, str]  # (file, kind, detail)


class PacketError(Exception):
    """The packet could not be built, or the directory is not a packet (exit 2)."""


class PacketLeak(PacketError):
    """A file would carry private data across the public boundary; nothing was written.

    ``findings`` holds (file, "line N", category) triples; the message names them, never the value.
    """

    def __init__(self, findings: Sequence[tuple[str, str, str]]) -> None:
        self.findings = tuple(findings)
        self.file, self.line, self.category = self.findings[0]
        shown = "; ".join(f"{f} {line}: {cat}" for f, line, cat in self.findings[:10])
        more = f" (and {len(self.findings) - 10} more)" if len(self.findings) > 10 else ""
        super().__init__(f"the packet would leak private data — {shown}{more}; nothing was written")


def json_bytes(value: Any) -> bytes:
    """The packet's one JSON form (sorted keys, 2-space indent, final newline): what a build writes
    and what verify requires of the manifest."""
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def shown_rel(rel: str, scanner: BoundaryScanner) -> str:
    """``rel`` with every segment the scanner flags (or that is not a plain name) withheld."""
    return "/".join(
        seg if re.fullmatch(r"[A-Za-z0-9._-]{1,100}", seg) and not scanner.scan_value(seg) else WITHHELD for seg in rel.split("/")
    )
