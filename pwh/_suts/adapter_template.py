"""A starting point for an adapter of your own implementation (copy it: ``pwh smoke --template PATH``).

Every method below says what the harness hands it and what it expects back, in RFC terms, and
raises :class:`pwh.Unsupported` until you wire it: an ``Unsupported`` scenario is skipped (not
applicable to your implementation) with its reason, never counted as a pass or a failure. Wire one
method at a time and run ``pwh smoke --sut my_adapter:factory`` (seconds) after each; then ``pwh
gate --sut my_adapter:factory`` for the verdict. The protocol in full (every fault, crash point,
profile field and test intent kind, defined in RFC terms) is docs/seam.md in pwh's repository;
rule ids (M01..M13, PRV-1, ...) are listed in docs/rules.md. Worked examples:
``pwh/_suts/reference.py`` (pwh's own dispatcher, a few lines a method),
``pwh/_suts/loopx/adapter.py`` (a shipped implementation driven through its public API) and
``tests/broken_suts.py`` (adapters that break one rule each).

The gate calls the factory with no options. The crash/replay models (``pwh soak``) try
``workdir=DIR`` (a private directory the journal should live in, so that a restart, or a new
process after a real SIGKILL, finds it); a factory that refuses the option with ``TypeError`` is
run with simulated crashes only. Accept ``**options`` and ignore what you do not use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pwh import DispatchOutcome, Producer, Profile, Rejection, Unsupported  # pwh's public API: all an adapter needs


class AdapterTemplate:
    """Your implementation behind pwh's SUT seam (``pwh.SUT``)."""

    name = "my-implementation"  # shown in every report; keep it public (no host, user or path)
    version = "0.0.0"  # your implementation's version, recorded in the verdict (<= 64 printable chars)

    def __init__(self, **options: Any) -> None:
        self.options = options  # e.g. options.get("workdir"): where durable state may live

    def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> list[Rejection]:
        """Add ``kind`` with its payload JSON Schema (2020-12) to your intent catalog. Return ``[]``
        when registered, else one ``Rejection(code, path)`` per broken rule (M02). pwh's test kinds
        keep to a small subset (docs/seam.md, "Intent kinds"): the one every scenario registers,
        ``synthetic.follow_up``, is a closed object of string and integer fields. A kind your
        catalog cannot hold (a JSON ``number``, an open object, ``$ref``): raise ``Unsupported``
        with the reason, and only the scenarios needing it are not applicable."""
        raise Unsupported("register_intent_kind is not wired yet")

    def install(self, registration: Mapping[str, Any], producer: Producer) -> list[Rejection]:
        """Install one hook: ``registration`` is the RFC's registration object; ``producer`` is the
        provider to call with the hook input (a mapping) and that returns the hook result. Return
        ``[]`` when installed, else the rejections at the fields they break (M01, M02)."""
        raise Unsupported("install is not wired yet")

    def set_profile(self, profile: Profile) -> None:
        """Apply the deployment profile: phase switch, allowlist, per-dispatch ceilings, budget
        ceilings, retry bound (M01, M04, M08; each field defined in docs/seam.md, "The execution
        profile"). Every scenario sets one first, so this skeleton keeps it rather than refusing:
        hand it on to your implementation (until you do, the M01 rows fail, as they should). A
        value your implementation has no switch for: raise ``Unsupported`` naming it."""
        self.profile = profile

    def dispatch(self, source: Mapping[str, Any], *, primary: Any = None) -> DispatchOutcome:
        """Dispatch after a committed primary writeback: ``source`` is the committed receipt. Return
        a ``DispatchOutcome``: whether it was admitted (with a code when not), and one
        ``HookOutcome`` per installed hook with its intents or its isolated failure (M03–M13). A
        replay of the same receipt must return what was recorded without calling providers (M05).
        Hand each provider its RFC §7 input read-only as you like (``types.MappingProxyType``, a
        frozen mapping, tuples): pwh reads it through ``Mapping`` and ``Sequence``.
        ``primary`` lets a hostile test reach the primary store; most adapters ignore it."""
        raise Unsupported("dispatch is not wired yet")

    def redeliver(self, source: Mapping[str, Any]) -> DispatchOutcome:
        """The same dispatch delivered again by a racing second dispatcher: providers run again
        and a different result is an intent conflict (M06)."""
        raise Unsupported("redeliver is not wired yet")

    @property
    def crash_points(self) -> tuple[str, ...]:
        """The sidecar crash points ``arm_crash`` can place in your dispatcher (``()`` if none):
        ``sidecar.before_checkpoint``, ``sidecar.after_provider_returned``,
        ``sidecar.inside_record_transaction``, ``sidecar.after_record``."""
        return ()

    def arm_crash(self, point: str) -> None:
        """Make the next pass through ``point`` crash: raise ``pwh.SimulatedCrash(point)`` out of
        ``dispatch`` (or end the process) (M05). Each point is defined by what is durable when it
        fires, not by where the reference happens to have it (docs/seam.md, "Crash points"): e.g.
        ``sidecar.after_record`` is "every record of this dispatch durable, the dispatch not yet
        returned", after the last commit if you commit per hook. A point you cannot place: raise
        ``Unsupported`` with the reason."""
        raise Unsupported(f"crash point {point!r} cannot be placed yet")

    def restart(self) -> None:
        """Come back after a crash from durable storage alone (drop every in-memory dispatch
        state) (M05). Keep the composition (intent kinds, hooks, profile) as your host would
        re-install it at boot: pwh does not register or install again."""
        raise Unsupported("restart is not wired yet")

    def journal_records(self) -> list[dict[str, Any]]:
        """The sidecar receipts in record order, as RFC objects (M05–M08, M13)."""
        raise Unsupported("journal_records is not wired yet")

    def inject_fault(self, fault: str) -> None:
        """Break the sidecar storage on purpose: one of ``pwh.FAULTS`` (an unwritable journal, a
        corrupted or a tampered record, the journal's files changed under it), each defined by its
        effect in docs/seam.md, "Injected faults"; raise ``Unsupported`` with the reason for a
        fault you cannot produce (a journal with no files has no ``journal_file_*``) (M05, M07)."""
        raise Unsupported(f"fault {fault!r} cannot be produced")

    # Optional: your implementation's own identity recipes (RFC §9 fixes what an id digests, not its
    # bytes). With them, pwh's test producers propose ids your core accepts; without them they use
    # pwh's reference recipe (docs/seam.md, "Identity recipes"). Delete both if yours is pwh's.
    #
    # def intent_id(self, dispatch_id: str, intent_kind: str, policy_version: str, payload: Any) -> str:
    #     return my_implementation.intent_id(dispatch_id, intent_kind, policy_version, payload)
    #
    # def dispatch_id(self, receipt_id: str, hook_id: str, registration_schema_version: str, event_kind: str) -> str:
    #     return my_implementation.dispatch_id(receipt_id, hook_id, registration_schema_version, event_kind)

    def close(self) -> None:
        """Release everything: files, processes, connections. Called once, also after a failure."""


def factory(**options: Any) -> AdapterTemplate:
    """What ``--sut my_adapter:factory`` calls."""
    return AdapterTemplate(**options)
