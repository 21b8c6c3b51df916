"""pwh: verification harness for the RFC 'Provider-Neutral Post-Writeback Capability Hooks v0'.

The public API: the reference dispatcher and its parts, the SUT seam, and the gate. Modules with
a leading underscore are private; import from here.
"""

import os as _os
import sys as _sys

__version__ = "0.1.0"

# ``python -m pwh`` puts the working directory first on sys.path, ahead of the standard library,
# before any of pwh runs: a stray random.py or json.py there would run as part of pwh. Unless pwh
# itself lives there (a source checkout run from its root), drop that entry; an adapter named
# with --sut is still found in the working directory, searched last (pwh._gate.searchable_cwd).
if _sys.argv[:1] == ["-m"] and _sys.path and not _sys.flags.safe_path:
    _cwd = _os.path.realpath(_os.getcwd())
    if _os.path.realpath(_sys.path[0] or ".") == _cwd != _os.path.dirname(_os.path.dirname(_os.path.realpath(__file__))):
        del _sys.path[0]
    del _cwd

from ._boundary import BoundaryScanner, Finding
from ._canonical import CanonicalError, canonical_bytes, digest
from ._codes import DISPATCH_CODES, RFC_FAILURE_CODES, Rejection
from ._contracts import (
    admissibility,
    build_hook_input,
    validate_hook_input,
    validate_registration,
    validate_result,
    validate_source,
)
from ._crash import SIDECAR_CRASH_POINTS, CrashPlan, SimulatedCrash
from ._dispatcher import Dispatcher
from ._identity import dispatch_id, intent_id
from ._journal import Journal, JournalError, SQLiteJournal
from ._memory_journal import MemoryJournal, MemoryStore
from ._outcome import DispatchOutcome, HookOutcome
from ._profile import CORE_CEILINGS, Profile, ProfileRejected
from ._reference import ReferenceSUT
from ._registry import IntentKindCatalog, Producer, RegistrationRejected, Registry
from ._rules import RULE_IDS, RULES, Rule
from ._schemas import SCHEMA_NAMES, load_schema
from ._sut import FAULTS, SUT, PrimaryAccess, SUTLoadError, Unsupported, load_sut

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
    "GateError": "._gate_error",
    "GateRun": "._gate",
    "run_gate": "._gate",
    "build_packet": "._packet",
    "verify_packet": "._packet",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pwh' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
