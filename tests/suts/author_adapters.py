"""Adapters as a clean-room implementer writes them from docs/seam.md alone, each with a trait the
reference does not have: its hook input frozen its own way, its own intent-id recipe, a typed
intent catalog (closed objects, no floating point), a journal without files and one crash point it
cannot place. They wrap pwh's
reference dispatcher (so every answer is a correct one) and translate at the seam what the
implementation would do differently; every fault and crash point asked of them is noted in the
file ``ASKED_ENV`` names, so a test can hold the gate's names against the documented ones.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from pwh import DispatchOutcome, HookOutcome, Producer, Rejection, Unsupported, intent_id
from pwh._suts.reference import ReferenceSUT

ASKED_ENV = "PWH_TEST_ASKED_LOG"


class FrozenMap(Mapping[str, Any]):
    """A read-only mapping of an implementation's own: a ``collections.abc.Mapping``, not a dict."""

    def __init__(self, items: Mapping[str, Any]) -> None:
        self._items = dict(items)

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


def frozen(value: Any) -> Any:
    """Objects as read-only proxies of :class:`FrozenMap` (not of a dict), arrays as tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType(FrozenMap({k: frozen(v) for k, v in value.items()}))
    if isinstance(value, (list, tuple)):
        return tuple(frozen(v) for v in value)
    return value


def own_intent_id(dispatch_id: str, intent_kind: str, policy_version: str, payload: Any) -> str:
    """Another stable digest of the same four semantic inputs (RFC §9), with other bytes."""
    body = json.dumps([dispatch_id, intent_kind, policy_version, payload], sort_keys=True, separators=(",", ":"))
    return "own_" + hashlib.sha256(body.encode("utf-8")).hexdigest()  # as long as pwh's: the same result bytes


def _fields(intent: Mapping[str, Any]) -> tuple[Any, Any, Any, Any]:
    return intent.get("source_dispatch_id"), intent.get("intent_kind"), intent.get("policy_version"), intent.get("payload")


def _inward(result: Any) -> Any:
    """A provider's result as the wrapped reference checks it: an id by the implementation's own
    recipe becomes the reference's; one by the reference's recipe is wrong here, so it stays wrong."""
    if not isinstance(result, dict) or not isinstance(result.get("intents"), list):
        return result
    out = []
    for intent in result["intents"]:
        if isinstance(intent, dict):
            try:
                fields = _fields(intent)
                if intent.get("intent_id") == own_intent_id(*fields):
                    intent = {**intent, "intent_id": intent_id(*fields)}
                elif intent.get("intent_id") == intent_id(*fields):
                    intent = {**intent, "intent_id": "not_" + own_intent_id(*fields)}
            except (TypeError, ValueError):
                pass
        out.append(intent)
    return {**result, "intents": out}


def _outward_intent(intent: Any) -> Any:
    if isinstance(intent, Mapping) and intent.get("intent_id") == intent_id(*_fields(intent)):
        return {**intent, "intent_id": own_intent_id(*_fields(intent))}
    return intent


def _outward(outcome: DispatchOutcome) -> DispatchOutcome:
    hooks = tuple(
        HookOutcome(
            h.hook_id,
            h.dispatch_id,
            h.status,
            h.failure_code,
            tuple(_outward_intent(i) for i in h.intents),
            h.replayed,
            h.attempts,
            h.recorded,
            h.rejection,
        )
        for h in outcome.hooks
    )
    return DispatchOutcome(
        outcome.receipt_id,
        outcome.event_kind,
        outcome.admitted,
        outcome.code,
        outcome.rejection,
        hooks,
        outcome.journal_error,
        outcome.notes,
    )


def _uses(schema: Any, what: str) -> bool:
    """Whether a payload schema uses ``what`` anywhere (a type, or a keyword)."""
    if isinstance(schema, Mapping):
        if what in schema or schema.get("type") == what:
            return True
        return any(_uses(v, what) for v in schema.values())
    if isinstance(schema, list):
        return any(_uses(v, what) for v in schema)
    return False


def _note(kind: str, name: str) -> None:
    path = os.environ.get(ASKED_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps([kind, name]) + "\n")


class AuthorSUT(ReferenceSUT):
    """The reference, seen through a clean-room adapter's traits (the module docstring)."""

    name = "clean-room"
    # The crash point this implementation cannot place, and why (it says so, as docs/seam.md asks).
    CANNOT_PLACE = {"sidecar.inside_record_transaction": "its records are written by one rename: no moment inside the write to stop at"}

    def intent_id(self, dispatch_id: str, intent_kind: str, policy_version: str, payload: Any) -> str:
        return own_intent_id(dispatch_id, intent_kind, policy_version, payload)

    def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> list[Rejection]:
        # A typed catalog: closed objects of strings, integers and arrays, no floating point.
        if _uses(payload_schema, "number"):
            raise Unsupported("the typed intent catalog has no floating-point field type")
        if payload_schema.get("additionalProperties") is not False:
            raise Unsupported("the typed intent catalog holds closed objects only")
        return super().register_intent_kind(kind, payload_schema)

    def install(self, registration: Mapping[str, Any], producer: Producer) -> list[Rejection]:
        if not callable(producer):
            return super().install(registration, producer)

        def provider(hook_input: Mapping[str, Any], _inner: Producer = producer) -> Any:
            return _inward(_inner(frozen(hook_input)))

        return super().install(registration, provider)

    def dispatch(self, source: Mapping[str, Any], *, primary: Any = None) -> DispatchOutcome:
        return _outward(super().dispatch(source, primary=primary))

    def redeliver(self, source: Mapping[str, Any]) -> DispatchOutcome:
        return _outward(super().redeliver(source))

    def journal_records(self) -> list[dict[str, Any]]:
        return [{**r, "intents": [_outward_intent(i) for i in r.get("intents", [])]} for r in super().journal_records()]

    @property
    def crash_points(self) -> tuple[str, ...]:
        return tuple(p for p in super().crash_points if p not in self.CANNOT_PLACE)

    def arm_crash(self, point: str) -> None:
        _note("crash", point)
        if point in self.CANNOT_PLACE:
            raise Unsupported(f"crash point {point} cannot be placed: {self.CANNOT_PLACE[point]}")
        super().arm_crash(point)

    def inject_fault(self, fault: str) -> None:
        _note("fault", fault)
        if fault.startswith("journal_file_"):
            raise Unsupported(f"fault {fault}: the journal keeps no files of its own")
        super().inject_fault(fault)


class ReadOnlyInputSUT(ReferenceSUT):
    """The reference, handing each provider its input as proxies of a non-dict mapping and tuples."""

    name = "read-only-input"

    def install(self, registration: Mapping[str, Any], producer: Producer) -> list[Rejection]:
        if not callable(producer):
            return super().install(registration, producer)

        def provider(hook_input: Mapping[str, Any], _inner: Producer = producer) -> Any:
            return _inner(frozen(hook_input))

        return super().install(registration, provider)


def author(**options: Any) -> AuthorSUT:
    return AuthorSUT(**options)


def read_only_input(**options: Any) -> ReadOnlyInputSUT:
    return ReadOnlyInputSUT(**options)


def non_json_input(**options: Any) -> ReferenceSUT:
    """Hands each provider an input with a value that is not JSON (bytes): pwh must say where."""

    class NonJson(ReferenceSUT):
        name = "non-json-input"

        def install(self, registration: Mapping[str, Any], producer: Producer) -> list[Rejection]:
            if not callable(producer):
                return super().install(registration, producer)

            def provider(hook_input: Mapping[str, Any], _inner: Producer = producer) -> Any:
                changed = {**hook_input, "source": {**hook_input["source"], "receipt_id": b"receipt"}}
                return _inner(frozen(changed))

            return super().install(registration, provider)

    return NonJson(**options)
