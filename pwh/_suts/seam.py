"""The SUT seam: the one interface scenarios and models use to reach an implementation.

Like Bowtie's harness protocol, but in-process: an adapter installs registrations and producers,
takes a profile, dispatches committed receipts, crashes and restarts on request, and reports
everything in RFC terms (statuses, the RFC §10 failure codes and pwh's dispatch codes, intents).
The reference dispatcher is one adapter; the shipped LoopX is another; ``module:factory`` loads any
third one. docs/seam.md is the protocol written out for adapter authors: every method, every
fault and crash point, every profile field, the intent kinds and their JSON Schema subset, and the
optional identity recipes.

An adapter that cannot express a case raises :class:`Unsupported` with the reason: the scenario
is then reported as skipped (not applicable to that SUT) with that reason, never as a pass and
never as a failure.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from pwh._core.codes import Rejection
from pwh._core.outcome import DispatchOutcome
from pwh._core.profile import Profile
from pwh._core.registry import Producer
from pwh._suts.errors import SUTLoadError, Unsupported  # noqa: F401  (adapters import both from the seam)
from pwh._suts.faults import (
    INJECTED_FAULT_NAMES,
    adapter_location,
    describe,
    is_user_interrupt,
    module_roots,
    sigint_count,
    track_user_interrupts,
)


@runtime_checkable
class PrimaryAccess(Protocol):
    """What a dispatcher wired into a host could reach of the primary Turn.

    The harness hands it to :meth:`SUT.dispatch` so that a badly wired implementation *can*
    disturb the primary writeback and the harness can see that it did. A conforming one never
    uses it.
    """

    def rollback_writeback(self) -> None: ...

    def amend_receipt(self, field: str, value: Any) -> None: ...

    def block_spend(self) -> None: ...


@runtime_checkable
class SUT(Protocol):
    """An implementation under test, as the harness drives it."""

    name: str

    def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> list[Rejection]:
        """Add an intent kind and its payload schema (JSON Schema 2020-12, of the subset
        docs/seam.md lists under "Intent kinds") to the catalog; ``[]`` when registered, else the
        rejections (M02). A catalog that cannot hold a kind (a typed one without a JSON ``number``,
        an open object or ``$ref``) raises :class:`Unsupported`: only the scenarios needing that
        kind are then not applicable. pwh registers each test kind once per scenario."""

    def install(self, registration: Mapping[str, Any], producer: Producer) -> list[Rejection]:
        """Install one hook; an empty list means installed, otherwise the rejections."""

    def set_profile(self, profile: Profile) -> None: ...

    def dispatch(self, source: Mapping[str, Any], *, primary: PrimaryAccess | None = None) -> DispatchOutcome:
        """Dispatch a committed receipt (again, for a replay)."""

    def redeliver(self, source: Mapping[str, Any]) -> DispatchOutcome:
        """Deliver the same dispatch as a racing second dispatcher would: providers run again."""

    @property
    def crash_points(self) -> tuple[str, ...]:
        """The sidecar crash points (``faults.CRASH_POINTS``) this implementation can place; the
        models draw from these, the gate arms the ones its scenarios name."""

    def arm_crash(self, point: str) -> None:
        """Make the next pass through ``point`` crash (raise ``SimulatedCrash(point)`` out of
        ``dispatch``). Each point is defined by what is durable when it fires
        (``faults.CRASH_POINTS``, docs/seam.md), not by the reference's layout; a point this
        implementation cannot place raises :class:`Unsupported` with the reason."""

    def restart(self) -> None:
        """Come back after a crash from durable storage alone. The composition (intent kinds,
        installed hooks, profile) is the adapter's to keep, as its host would re-install it at
        boot: pwh does not register or install again."""

    def journal_records(self) -> list[dict[str, Any]]:
        """The sidecar receipts, in record order, in RFC terms."""

    def inject_fault(self, fault: str) -> None:
        """Break the sidecar storage on purpose: one of :data:`FAULTS`, each defined by its effect
        in ``faults.INJECTED_FAULTS`` (docs/seam.md). Optional: a fault this implementation cannot
        produce raises :class:`Unsupported` with the reason."""

    def close(self) -> None: ...


class IdRecipes(Protocol):
    """Optional adapter methods: the implementation's own identity recipes (RFC §9 fixes what an
    identity digests, not its bytes). When an adapter has them, pwh's test producers compute the
    ids they propose with them instead of pwh's reference recipe (``pwh.intent_id``,
    ``pwh.dispatch_id``), so the adapter never has to translate ids. Pure functions of their
    arguments, returning a non-empty ``str``; ``payload`` is plain JSON. Either may be left out."""

    def intent_id(self, dispatch_id: str, intent_kind: str, policy_version: str, payload: Any) -> str: ...

    def dispatch_id(self, receipt_id: str, hook_id: str, registration_schema_version: str, event_kind: str) -> str: ...


# Every fault the gate injects, each defined by its effect in pwh._suts.faults.INJECTED_FAULTS.
FAULTS: tuple[str, ...] = INJECTED_FAULT_NAMES

BUILTIN_SUTS: dict[str, str] = {
    "reference": "pwh._suts.reference:ReferenceSUT",
    "reference-memory": "pwh._suts.reference:memory_sut",
    "loopx": "pwh._suts.loopx.adapter:LoopxSUT",
}
# ``mutant:NAME``: one of the mutant library's deliberately broken adapters (pwh._suts.mutants).
MUTANT_PREFIX = "mutant:"


def adapter_target(spec: str) -> str:
    """The ``module:factory`` a SUT name stands for: a built-in name or ``mutant:NAME`` mapped, any
    other spec as given."""
    if spec.startswith(MUTANT_PREFIX):
        return "pwh._suts.mutants:" + spec.removeprefix(MUTANT_PREFIX)
    return BUILTIN_SUTS.get(spec, spec)


def load_sut(spec: str, **options: Any) -> SUT:
    """Make an adapter from a built-in name or ``module:factory``.

    Whatever the adapter raises at import or construction, ``SystemExit`` and its own
    ``KeyboardInterrupt`` included, becomes a :class:`SUTLoadError` naming the exception and the
    adapter's file:line: an adapter must not end pwh quietly having judged nothing. The user's
    Ctrl-C stays a ``KeyboardInterrupt``. A factory that does not take ``options`` still raises
    ``TypeError`` (callers probe which options an adapter takes).
    """
    if spec.startswith("stdio:"):  # an implementation of any language behind the stdio protocol
        from pwh._suts.stdio.client import StdioSUT

        track_user_interrupts()
        return StdioSUT(spec.removeprefix("stdio:"), **{k: v for k, v in options.items() if k == "workdir"})
    target = _release_target(spec) or adapter_target(spec)
    if ":" not in target:
        known = ", ".join(sorted(BUILTIN_SUTS))
        raise SUTLoadError(f"unknown SUT {spec!r}: use one of {known}, loopx@VERSION, mutant:NAME, stdio:COMMAND or module:factory")
    module_name, _, attr = target.partition(":")
    track_user_interrupts()
    module = _import_adapter(spec, module_name)
    factory = getattr(module, attr, None)
    if factory is None or not callable(factory):
        raise SUTLoadError(f"{module_name!r} has no callable {attr!r}")
    sut = _construct(spec, module_name, factory, options)
    missing = [m for m in ("install", "dispatch", "journal_records", "close") if not hasattr(sut, m)]
    if missing:
        raise SUTLoadError(f"{spec!r} is not a SUT adapter: missing {', '.join(missing)}")
    return sut


def _release_target(spec: str) -> str | None:
    """``loopx@VERSION`` (:mod:`pwh._suts.loopx.releases`): the ``loopx`` adapter, with that LoopX
    release (installed once into its own cached venv) made the one ``import loopx`` reaches."""
    if not spec.startswith("loopx@"):
        return None
    from pwh._suts.loopx.releases import ReleaseError, activate, parse_spec

    try:
        version = parse_spec(spec)
        if version is not None:
            activate(version)
    except ReleaseError as exc:
        raise SUTLoadError(str(exc)) from None
    return BUILTIN_SUTS["loopx"]


def close_sut(sut: SUT, spec: str) -> None:
    """``sut.close()``, with anything it raises (``BaseException`` included) a :class:`SUTLoadError`."""
    since = sigint_count()
    try:
        sut.close()
    except BaseException as exc:
        if is_user_interrupt(exc, since):
            raise
        raise _fault(spec, "close", exc, adapter_target(spec).partition(":")[0]) from None


def _import_adapter(spec: str, module_name: str) -> Any:
    since = sigint_count()
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise SUTLoadError(f"cannot import {module_name!r} for SUT {spec!r} (ModuleNotFoundError)") from None
        raise _fault(spec, "import", exc, module_name) from None
    except BaseException as exc:
        if is_user_interrupt(exc, since):
            raise
        raise _fault(spec, "import", exc, module_name) from None


def _construct(spec: str, module_name: str, factory: Callable[..., Any], options: Mapping[str, Any]) -> Any:
    since = sigint_count()
    try:
        return factory(**options)
    except TypeError as exc:
        # No frame below this call: the arguments did not bind (the factory takes no such option).
        if options and exc.__traceback__ is not None and exc.__traceback__.tb_next is None:
            raise
        raise _fault(spec, "construction", exc, module_name) from None
    except BaseException as exc:
        if is_user_interrupt(exc, since):
            raise
        raise _fault(spec, "construction", exc, module_name) from None


def _fault(spec: str, when: str, exc: BaseException, module_name: str) -> SUTLoadError:
    where = adapter_location(exc, module_roots(module_name), module_name)
    return SUTLoadError(f"the SUT {spec!r} failed at {when}: {describe(exc, where)}")
