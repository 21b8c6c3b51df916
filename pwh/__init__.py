"""pwh: verification harness for the RFC 'Provider-Neutral Post-Writeback Capability Hooks v0'.

The public API: the reference dispatcher and its parts, the SUT seam, and the gate. Modules with
a leading underscore are private; import from here.
"""

import os as _os
import sys as _sys

from pwh._version import __version__

# ``python -m pwh`` puts the working directory first on sys.path, ahead of the standard library,
# before any of pwh runs: a stray random.py or json.py there would run as part of pwh. Unless pwh
# itself lives there (a source checkout run from its root), drop that entry; an adapter named
# with --sut is still found in the working directory, searched last (pwh._harness.gate.searchable_cwd).
if _sys.argv[:1] == ["-m"] and _sys.path and not _sys.flags.safe_path:
    _cwd = _os.path.realpath(_os.getcwd())
    if _os.path.realpath(_sys.path[0] or ".") == _cwd != _os.path.dirname(_os.path.dirname(_os.path.realpath(__file__))):
        del _sys.path[0]
    del _cwd

from pwh._core.boundary import BoundaryScanner, Finding
from pwh._core.canonical import CanonicalError, canonical_bytes, digest
from pwh._core.codes import DISPATCH_CODES, RFC_FAILURE_CODES, Rejection
from pwh._core.contracts import (
    admissibility,
    build_hook_input,
    validate_hook_input,
    validate_registration,
    validate_result,
    validate_source,
)
from pwh._core.crash import SIDECAR_CRASH_POINTS, CrashPlan, SimulatedCrash
from pwh._core.dispatcher import Dispatcher
from pwh._core.identity import dispatch_id, intent_id
from pwh._core.journal import Journal, JournalError, SQLiteJournal
from pwh._core.memory_journal import MemoryJournal, MemoryStore
from pwh._core.outcome import DispatchOutcome, HookOutcome
from pwh._core.profile import CORE_CEILINGS, Profile, ProfileRejected
from pwh._core.registry import IntentKindCatalog, Producer, RegistrationRejected, Registry
from pwh._core.schemas import SCHEMA_NAMES, load_schema
from pwh._harness.rules import RULE_IDS, RULES, Rule
from pwh._suts.reference import ReferenceSUT
from pwh._suts.seam import FAULTS, SUT, PrimaryAccess, SUTLoadError, Unsupported, load_sut
from pwh._suts.turn_seam import HostVerdict, ProviderAnswer, RequestView, TurnContracts, turn_contracts_of

__all__ = [
    "__version__",
    # identity and canonical form
    "CanonicalError",
    "canonical_bytes",
    "digest",
    "dispatch_id",
    "intent_id",
    # contracts
    "SCHEMA_NAMES",
    "load_schema",
    "Rejection",
    "RFC_FAILURE_CODES",
    "DISPATCH_CODES",
    "admissibility",
    "build_hook_input",
    "validate_hook_input",
    "validate_registration",
    "validate_result",
    "validate_source",
    # registry, profile, dispatcher
    "CORE_CEILINGS",
    "Profile",
    "ProfileRejected",
    "IntentKindCatalog",
    "Registry",
    "RegistrationRejected",
    "Producer",
    "Dispatcher",
    "DispatchOutcome",
    "HookOutcome",
    # journal and crashes
    "Journal",
    "JournalError",
    "SQLiteJournal",
    "MemoryJournal",
    "MemoryStore",
    "CrashPlan",
    "SimulatedCrash",
    "SIDECAR_CRASH_POINTS",
    # public boundary
    "BoundaryScanner",
    "Finding",
    # the SUT seam
    "SUT",
    "PrimaryAccess",
    "FAULTS",
    "Unsupported",
    # the turn seam (seed 003)
    "TurnContracts",
    "HostVerdict",
    "ProviderAnswer",
    "RequestView",
    "turn_contracts_of",
    "SUTLoadError",
    "load_sut",
    "ReferenceSUT",
    # rows and rules
    "Rule",
    "RULES",
    "RULE_IDS",
    # the gate and the packet (loaded on first use: `import pwh` stays light for adapters)
    "GateError",
    "GateRun",
    "run_gate",
    "build_packet",
    "verify_packet",
]

# Harness entry points, imported when first asked for (PEP 562): an adapter or a worker that only
# needs the dispatcher never loads the gate or the packet builder.
_LAZY = {
    "GateError": "pwh._harness.gate_error",
    "GateRun": "pwh._harness.gate",
    "run_gate": "pwh._harness.gate",
    "build_packet": "pwh._harness.packet.build",
    "verify_packet": "pwh._harness.packet.verify",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pwh' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
