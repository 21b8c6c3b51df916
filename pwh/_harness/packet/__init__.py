"""``pwh packet``: build the public test packet, and let anyone re-verify one.

:mod:`.build` runs the gate and writes the packet (its README from ``consumer_readme.md.tmpl``),
:mod:`.verify` checks a packet directory without importing the gate, :mod:`.commands` wires
``pwh packet build|verify`` into the CLI, :mod:`._common` holds what they share. This package
re-exports their public names; the build and command names load on first use (PEP 562), so
``import pwh._harness.packet.verify`` never loads the gate. Patch a name (``run_gate``,
``tar_bytes``, ``CHUNK``) in the module that looks it up, not here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from pwh._harness.packet.build import (
        RULES_SCHEMA_VERSION,
        TAR_ROOT,
        BuildResult,
        build_packet,
        consumer_readme,
        result_dir_name,
        rules_document,
        source_state,
        tar_bytes,
    )
    from pwh._harness.packet.commands import REFERENCE_SUTS, add_packet_commands

__all__ = [
    "BuildResult",
    "EXIT_NOT_A_PACKET",
    "EXIT_PROBLEMS",
    "EXIT_VERIFIED",
    "MANIFEST",
    "MANIFEST_SCHEMA_VERSION",
    "PacketError",
    "PacketLeak",
    "REFERENCE_SUTS",
    "RULES_SCHEMA_VERSION",
    "TAR_ROOT",
    "VerifyReport",
    "add_packet_commands",
    "build_packet",
    "consumer_readme",
    "result_dir_name",
    "rules_document",
    "source_state",
    "tar_bytes",
    "verify_packet",
]

# Names whose modules import the gate: loaded when first asked for.
_LAZY = {
    "BuildResult": "pwh._harness.packet.build",
    "RULES_SCHEMA_VERSION": "pwh._harness.packet.build",
    "TAR_ROOT": "pwh._harness.packet.build",
    "build_packet": "pwh._harness.packet.build",
    "consumer_readme": "pwh._harness.packet.build",
    "result_dir_name": "pwh._harness.packet.build",
    "rules_document": "pwh._harness.packet.build",
    "source_state": "pwh._harness.packet.build",
    "tar_bytes": "pwh._harness.packet.build",
    "REFERENCE_SUTS": "pwh._harness.packet.commands",
    "add_packet_commands": "pwh._harness.packet.commands",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pwh._harness.packet' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
