"""The SUT seam: the one interface scenarios and models use to reach an implementation.

Like Bowtie's harness protocol, but in-process: an adapter installs registrations and producers,
takes a profile, dispatches committed receipts, crashes and restarts on request, and reports
everything in RFC terms (statuses, the SPEC's stable codes, intents). The reference dispatcher is
one adapter; the shipped LoopX is another; ``module:factory`` loads any third one.

An adapter that cannot express a case raises :class:`Unsupported` with the reason: the scenario
is then reported as skipped with that reason, never as a pass.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from pwh._core.codes import Rejection
from pwh._core.outcome import DispatchOutcome
from pwh._core.profile import Profile
from pwh._core.registry import Producer
from pwh._suts.faults import adapter_location, describe, is_user_interrupt, module_roots, sigint_count, track_user_interrupts


class Unsupported(Exception):
    """The implementation under test cannot express this case; ``reason`` says what is missing."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SUTLoadError(Exception):
    """``--sut`` named something that is not an adapter."""


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
        """Add an intent kind and its payload schema to the catalog; rejections as for install."""

    def install(self, registration: Mapping[str, Any], producer: Producer) -> list[Rejection]:
        """Install one hook; an empty list means installed, otherwise the rejections."""

    def set_profile(self, profile: Profile) -> None: ...

    def dispatch(self, source: Mapping[str, Any], *, primary: PrimaryAccess | None = None) -> DispatchOutcome:
        """Dispatch a committed receipt (again, for a replay)."""

    def redeliver(self, source: Mapping[str, Any]) -> DispatchOutcome:
        """Deliver the same dispatch as a racing second dispatcher would: providers run again."""

    @property
    def crash_points(self) -> tuple[str, ...]: ...

    def arm_crash(self, point: str) -> None: ...

    def restart(self) -> None:
        """Come back after a crash from durable storage alone."""

    def journal_records(self) -> list[dict[str, Any]]:
        """The sidecar receipts, in record order, in RFC terms."""

    def inject_fault(self, fault: str) -> None:
        """Break the sidecar storage on purpose: one of :data:`FAULTS`. Optional: an adapter that
        cannot raises :class:`Unsupported`."""

    def close(self) -> None: ...


FAULTS: tuple[str, ...] = (
    "journal_unwritable",  # every later sidecar write fails (read-only or full file system)
    "journal_record_corrupted",  # the newest sidecar record no longer matches its checksum
    "journal_record_tampered",  # a payload value of the newest record changed in storage, still well-formed
)

BUILTIN_SUTS: dict[str, str] = {
    "reference": "pwh._suts.reference:ReferenceSUT",
    "reference-memory": "pwh._suts.reference:memory_sut",
    "loopx": "pwh._suts.loopx.adapter:LoopxSUT",
}


def load_sut(spec: str, **options: Any) -> SUT:
    """Make an adapter from a built-in name or ``module:factory``.

    Whatever the adapter raises at import or construction, ``SystemExit`` and its own
    ``KeyboardInterrupt`` included, becomes a :class:`SUTLoadError` naming the exception and the
    adapter's file:line: an adapter must not end pwh quietly having judged nothing. The user's
    Ctrl-C stays a ``KeyboardInterrupt``. A factory that does not take ``options`` still raises
    ``TypeError`` (callers probe which options an adapter takes).
    """
    target = BUILTIN_SUTS.get(spec, spec)
    if ":" not in target:
        known = ", ".join(sorted(BUILTIN_SUTS))
        raise SUTLoadError(f"unknown SUT {spec!r}: use one of {known}, or module:factory")
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


def close_sut(sut: SUT, spec: str) -> None:
    """``sut.close()``, with anything it raises (``BaseException`` included) a :class:`SUTLoadError`."""
    since = sigint_count()
    try:
        sut.close()
    except BaseException as exc:
        if is_user_interrupt(exc, since):
            raise
        raise _fault(spec, "close", exc, BUILTIN_SUTS.get(spec, spec).partition(":")[0]) from None


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
