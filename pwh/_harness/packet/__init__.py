"""``pwh packet``: build the public test packet, and let anyone re-verify one.

:mod:`.build` runs the gate and writes the packet (its README from ``consumer_readme.md.tmpl``),
:mod:`.verify` checks a packet directory without importing the gate, :mod:`._common` holds what
they share; ``pwh packet build|verify`` is wired in ``pwh/_cli/packet.py``. This package exports
only what verifying needs, so importing it never loads the gate; the build's names are imported
from :mod:`.build`.
"""

from __future__ import annotations

from pwh._harness.packet._common import (
    EXIT_NOT_A_PACKET,
    EXIT_PROBLEMS,
    EXIT_VERIFIED,
    MANIFEST,
    MANIFEST_SCHEMA_VERSION,
    PacketError,
    PacketLeak,
)
from pwh._harness.packet.verify import VerifyReport, verify_packet

__all__ = [
    "EXIT_NOT_A_PACKET",
    "EXIT_PROBLEMS",
    "EXIT_VERIFIED",
    "MANIFEST",
    "MANIFEST_SCHEMA_VERSION",
    "PacketError",
    "PacketLeak",
    "VerifyReport",
    "verify_packet",
]
