"""The deterministic hook registry and the intent-kind catalog, filled by a composition root.

Core never imports a capability: whoever composes the system (the CLI, a test fixture, a host)
installs registrations and their producers here. Every check runs at install time, before any
provider could be called (REG, M02).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pwh._core import codes
from pwh._core.boundary import BoundaryScanner
from pwh._core.canonical import dumps_plain, to_plain
from pwh._core.codes import Rejection, json_path
from pwh._core.contracts import validate_registration
from pwh._core.profile import CORE_CEILINGS
from pwh._core.schemas import UnresolvableReference, compile_schema

Producer = Callable[[Mapping[str, Any]], Any]


class RegistrationRejected(ValueError):
    """An install was refused; ``rejections`` say where and why."""

    def __init__(self, rejections: list[Rejection]) -> None:
        super().__init__("; ".join(str(r) for r in rejections))
        self.rejections = rejections


@dataclass(frozen=True)
class InstalledHook:
    registration: dict[str, Any]
    producer: Producer

    @property
    def hook_id(self) -> str:
        return self.registration["hook_id"]


class IntentKindCatalog:
    """Known intent kinds and the payload schema each was registered with."""

    def __init__(self) -> None:
        self._validators: dict[str, Any] = {}
        self._schemas: dict[str, dict[str, Any]] = {}

    def register(self, kind: str, payload_schema: Mapping[str, Any]) -> None:
        schema = to_plain(payload_schema)
        if kind in self._schemas and self._schemas[kind] != schema:
            raise RegistrationRejected([Rejection(codes.REGISTRATION_REJECTED, "$.intent_kind", "kind already has another schema")])
        try:
            self._validators[kind] = _compiled(schema)
        except UnresolvableReference:
            raise RegistrationRejected(
                [
                    Rejection(
                        codes.REGISTRATION_REJECTED,
                        "$.payload_schema",
                        "a $ref cannot be resolved (only local pointers and pwh's own schemas do)",
                    )
                ]
            ) from None
        except Exception:
            raise RegistrationRejected([Rejection(codes.REGISTRATION_REJECTED, "$.payload_schema", "not a valid JSON Schema")]) from None
        self._schemas[kind] = schema

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(self._schemas)

    @property
    def validators(self) -> Mapping[str, Any]:
        return self._validators


_COMPILED: dict[bytes, Any] = {}  # canonical bytes of a payload schema -> its validator
_COMPILED_MAX = 128


def _compiled(schema: dict[str, Any]) -> Any:
    """The validator of a plain payload schema (``to_plain``'s copy), compiled once per content:
    checking a schema against the meta-schema costs milliseconds, and every fresh catalog (each
    restart of a host, each scenario) registers the same kinds again. A validator is immutable
    and is built over a private copy of the schema; a schema that does not compile is refused
    afresh each time (only validators are kept)."""
    key = dumps_plain(schema)
    found = _COMPILED.get(key)
    if found is None:
        found = compile_schema(json.loads(key))
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.pop(next(iter(_COMPILED)))
        _COMPILED[key] = found
    return found


def private_id_rejections(scanner: BoundaryScanner, registration: Mapping[str, Any]) -> list[Rejection]:
    """The registration's hook and capability ids that ``scanner`` flags: every sidecar record of
    the hook carries both (JNL-6). Used at install and again by the dispatcher before a call."""
    out = []
    for key in ("hook_id", "capability_id"):
        value = registration[key]
        found = scanner.scan_value(value, json_path((key,)))
        if found:
            reason = f"the id would carry a {found[0].category.replace('_', ' ')} into every sidecar record"
            out.append(Rejection(codes.REGISTRATION_REJECTED, json_path((key,)), reason))
    return out


class Registry:
    """Installed hooks, always listed in ``hook_id`` order whatever order they were installed in."""

    def __init__(self, catalog: IntentKindCatalog | None = None, *, scanner: BoundaryScanner | None = None) -> None:
        """``scanner``: refuse at install a hook or capability id it flags (a host name, a
        declared private name), since every sidecar record carries both. Without one, the
        dispatcher still refuses such a hook before its call, with its own scanner."""
        self.catalog = catalog or IntentKindCatalog()
        self.scanner = scanner
        self._hooks: dict[str, InstalledHook] = {}
        self._ordered: tuple[InstalledHook, ...] = ()

    def install(
        self,
        registration: Mapping[str, Any],
        producer: Producer,
        *,
        ceilings: Mapping[str, int] = CORE_CEILINGS,
    ) -> InstalledHook:
        """Validate and install one hook, or raise :class:`RegistrationRejected`."""
        found = validate_registration(registration, known_intent_kinds=self.catalog.kinds, ceilings=ceilings)
        if not callable(producer):
            found.append(Rejection(codes.REGISTRATION_REJECTED, "$", "the provider is not callable"))
        if not found and self.scanner is not None:
            found = private_id_rejections(self.scanner, registration)
        if found:
            raise RegistrationRejected(found)
        plain = to_plain(registration)
        if plain["hook_id"] in self._hooks:
            raise RegistrationRejected([Rejection(codes.REGISTRATION_REJECTED, json_path(("hook_id",)), "duplicate hook_id")])
        hook = InstalledHook(plain, producer)
        self._hooks[hook.hook_id] = hook
        self._ordered = tuple(self._hooks[k] for k in sorted(self._hooks))
        return hook

    def hooks(self) -> tuple[InstalledHook, ...]:
        return self._ordered
