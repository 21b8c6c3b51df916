"""PRV-1 and the capability catalog: seed 003 experiment A and the §7 provider rows."""

from __future__ import annotations

import itertools
import pickle

import pytest

from fakes._errors import FakeRejected, json_path
from fakes._providers import (
    LIFECYCLE_FLAGS,
    CapabilityCatalog,
    CapabilityRecord,
    CatalogRejected,
    LifecycleRejected,
    ProviderRegistry,
    ProviderState,
)

CAP = "periodic_report"
PROV = "report_provider"


def _registry(**flags: bool) -> ProviderRegistry:
    registry = ProviderRegistry()
    registry.register(PROV, CAP, ProviderState(**flags))
    return registry


def _catalog() -> CapabilityCatalog:
    return CapabilityCatalog(
        [
            CapabilityRecord(
                capability_id=CAP,
                provider_id=PROV,
                success_condition="report_trigger_evaluated",
                evidence_kinds=("receipt_ref",),
                transitions=("progress", "completion"),
            )
        ]
    )


def _rejects(exc_type: type[FakeRejected], code: str, path: str, call, *args, **kwargs) -> FakeRejected:
    with pytest.raises(exc_type) as info:
        call(*args, **kwargs)
    assert (info.value.code, info.value.path) == (code, path)
    return info.value


# --- experiment A: lifecycle order is enforced at registration -------------------------------


def test_experiment_a_enabled_without_installed_rejected_at_registration() -> None:
    registry = ProviderRegistry()
    for state in (
        {"enabled": True, "installed": False},
        {"declared": True, "installed": False, "enabled": True},
        ProviderState(declared=True, enabled=True),
    ):
        _rejects(LifecycleRejected, "provider_lifecycle_rejected", "$.enabled", registry.register, PROV, CAP, state)
    assert registry.records() == ()  # refused before anything was stored


def test_experiment_a_installed_without_declared_rejected_at_registration() -> None:
    registry = ProviderRegistry()
    _rejects(
        LifecycleRejected,
        "provider_lifecycle_rejected",
        "$.installed",
        registry.register,
        PROV,
        CAP,
        {"installed": True, "declared": False},
    )
    assert PROV not in registry


def test_experiment_a_ready_without_enabled_rejected_at_registration() -> None:
    registry = ProviderRegistry()
    _rejects(
        LifecycleRejected,
        "provider_lifecycle_rejected",
        "$.ready",
        registry.register,
        PROV,
        CAP,
        ProviderState(declared=True, installed=True, ready=True),
    )
    assert registry.get(PROV) is None


@pytest.mark.parametrize("flags", list(itertools.product((False, True), repeat=4)))
def test_every_flag_combination_is_accepted_iff_each_flag_implies_the_previous(flags: tuple[bool, ...]) -> None:
    state = dict(zip(LIFECYCLE_FLAGS, flags, strict=True))
    valid = flags[0] and all(earlier or not later for earlier, later in itertools.pairwise(flags))
    registry = ProviderRegistry()
    if valid:
        record = registry.register(PROV, CAP, state)
        assert record.state.to_json() == state
        assert registry.stage(PROV) == [f for f in LIFECYCLE_FLAGS if state[f]][-1]
    else:
        error = _rejects(LifecycleRejected, "provider_lifecycle_rejected", error_path(flags), registry.register, PROV, CAP, state)
        assert error.path.removeprefix("$.") in LIFECYCLE_FLAGS


def error_path(flags: tuple[bool, ...]) -> str:
    """The first flag set without its predecessor; else the undeclared provider itself."""
    for index in range(1, 4):
        if flags[index] and not flags[index - 1]:
            return f"$.{LIFECYCLE_FLAGS[index]}"
    return "$.declared"


@pytest.mark.parametrize("bad", [1, "true", None])
def test_lifecycle_flags_must_be_booleans(bad: object) -> None:
    _rejects(
        LifecycleRejected,
        "provider_lifecycle_rejected",
        "$.installed",
        ProviderRegistry().register,
        PROV,
        CAP,
        {"declared": True, "installed": bad},
    )


def test_unknown_lifecycle_flag_is_rejected() -> None:
    _rejects(
        LifecycleRejected,
        "provider_lifecycle_rejected",
        "$.healthy",
        ProviderRegistry().register,
        PROV,
        CAP,
        {"declared": True, "healthy": True},
    )


def test_duplicate_provider_is_rejected_and_the_original_kept() -> None:
    registry = _registry(declared=True, installed=True)
    _rejects(
        LifecycleRejected,
        "provider_duplicate",
        "$.provider_id",
        registry.register,
        PROV,
        CAP,
        ProviderState(declared=True),
    )
    assert registry.stage(PROV) == "installed"


@pytest.mark.parametrize("field,args", [("provider_id", ("a/b", CAP)), ("capability_id", (PROV, "")), ("provider_id", (7, CAP))])
def test_provider_ids_must_be_tokens(field: str, args: tuple) -> None:
    _rejects(
        LifecycleRejected,
        "provider_record_rejected",
        f"$.{field}",
        ProviderRegistry().register,
        *args,
        {"declared": True},
    )


# --- transitions move one step; stage() shows where a provider is stuck (seed §5) -------------


def test_transitions_walk_the_lifecycle_one_step_at_a_time() -> None:
    registry = _registry(declared=True)
    seen = [registry.stage(PROV)]
    for step in (registry.install, registry.enable, registry.mark_ready):
        record = step(PROV)
        assert record.state.violation() is None
        seen.append(registry.stage(PROV))
    assert seen == ["declared", "installed", "enabled", "ready"]
    assert registry.mark_unready(PROV).stage == "enabled"
    assert registry.disable(PROV).stage == "installed"
    assert registry.uninstall(PROV).stage == "declared"


@pytest.mark.parametrize(
    "start,step,path",
    [
        ({"declared": True}, "enable", "$.enabled"),
        ({"declared": True}, "mark_ready", "$.ready"),
        ({"declared": True, "installed": True}, "mark_ready", "$.ready"),
        ({"declared": True, "installed": True, "enabled": True}, "uninstall", "$.enabled"),
    ],
)
def test_transitions_refuse_skipping_a_step(start: dict, step: str, path: str) -> None:
    registry = _registry(**start)
    before = registry.get(PROV)
    _rejects(LifecycleRejected, "provider_transition_skipped", path, getattr(registry, step), PROV)
    assert registry.get(PROV) == before


@pytest.mark.parametrize(
    "start,step,path",
    [
        ({"declared": True, "installed": True}, "install", "$.installed"),
        ({"declared": True, "installed": True, "enabled": True}, "enable", "$.enabled"),
        ({"declared": True, "installed": True, "enabled": True, "ready": True}, "mark_ready", "$.ready"),
        ({"declared": True, "installed": True}, "disable", "$.enabled"),
        ({"declared": True, "installed": True, "enabled": True}, "mark_unready", "$.ready"),
        ({"declared": True}, "uninstall", "$.installed"),
    ],
)
def test_transitions_refuse_a_step_already_taken(start: dict, step: str, path: str) -> None:
    registry = _registry(**start)
    _rejects(LifecycleRejected, "provider_transition_redundant", path, getattr(registry, step), PROV)


def test_disabling_a_ready_provider_also_drops_readiness() -> None:
    registry = _registry(declared=True, installed=True, enabled=True, ready=True)
    record = registry.disable(PROV)
    assert record.state == ProviderState(declared=True, installed=True)


@pytest.mark.parametrize("step", ["install", "enable", "mark_ready", "mark_unready", "disable", "uninstall", "stage"])
def test_unknown_provider_is_reported_not_guessed(step: str) -> None:
    _rejects(LifecycleRejected, "provider_unknown", "$.provider_id", getattr(ProviderRegistry(), step), "ghost")


# --- seed §7 rows: provider not installed / not ready -----------------------------------------


def test_failure_table_provider_not_installed() -> None:
    resolution = _catalog().resolve(CAP, _registry(declared=True))
    assert not resolution.ok
    assert resolution.status == "provider_not_installed"
    assert resolution.recovery == "install_and_reprobe"
    assert (resolution.provider_id, resolution.stage) == (PROV, "declared")


def test_failure_table_provider_not_installed_when_never_registered() -> None:
    resolution = _catalog().resolve(CAP, ProviderRegistry())
    assert (resolution.status, resolution.recovery, resolution.stage) == (
        "provider_not_installed",
        "install_and_reprobe",
        None,
    )


def test_provider_declared_for_another_capability_does_not_serve_this_one() -> None:
    registry = ProviderRegistry()
    registry.register(PROV, "other_capability", {"declared": True, "installed": True, "enabled": True, "ready": True})
    assert _catalog().resolve(CAP, registry).status == "provider_not_installed"


def test_failure_table_provider_not_ready() -> None:
    resolution = _catalog().resolve(CAP, _registry(declared=True, installed=True, enabled=True))
    assert resolution.status == "provider_not_ready"
    assert resolution.recovery == "repair_dependencies_via_capability_gate"
    assert resolution.stage == "enabled"


def test_installed_but_not_enabled_is_disabled_not_merely_unavailable() -> None:
    resolution = _catalog().resolve(CAP, _registry(declared=True, installed=True))
    assert (resolution.status, resolution.stage, resolution.recovery) == (
        "provider_disabled",
        "installed",
        "enable_via_policy",
    )


def test_ready_provider_resolves_and_resolution_follows_the_live_registry() -> None:
    catalog, registry = _catalog(), _registry(declared=True, installed=True, enabled=True, ready=True)
    ready = catalog.resolve(CAP, registry)
    assert ready.ok and ready.status == "ready" and ready.recovery is None and ready.stage == "ready"
    registry.mark_unready(PROV)
    assert catalog.resolve(CAP, registry).status == "provider_not_ready"


def test_unknown_capability_resolves_to_a_stable_status() -> None:
    resolution = _catalog().resolve("no/such capability", ProviderRegistry())
    assert (resolution.status, resolution.capability_id) == ("capability_unknown", "?")


# --- capability records ----------------------------------------------------------------------


def _record(**changes: object) -> dict:
    record = {
        "capability_id": CAP,
        "provider_id": PROV,
        "success_condition": "report_trigger_evaluated",
        "evidence_kinds": ["receipt_ref"],
        "transitions": ["progress", "completion", "repair"],
    }
    record.update(changes)
    return record


def test_capability_record_from_mapping_is_frozen_into_tuples() -> None:
    record = CapabilityCatalog().add(_record())
    assert record.transitions == ("progress", "completion", "repair")
    assert record.allows("repair") and not record.allows("replan")
    assert record.to_json() == _record()


@pytest.mark.parametrize(
    "changes,path",
    [
        ({"transitions": ["progress", "complete"]}, "$.transitions[1]"),
        ({"transitions": ["progress", "progress"]}, "$.transitions[1]"),
        ({"transitions": []}, "$.transitions"),
        ({"evidence_kinds": ["/var/secret"]}, "$.evidence_kinds[0]"),
        ({"evidence_kinds": "receipt_ref"}, "$.evidence_kinds"),
        ({"provider_id": None}, "$.provider_id"),
        ({"success_condition": "i think it is done"}, "$.success_condition"),
        ({"command": "rm"}, "$.command"),
    ],
)
def test_capability_record_is_validated(changes: dict, path: str) -> None:
    _rejects(CatalogRejected, "capability_record_rejected", path, CapabilityCatalog().add, _record(**changes))


def test_duplicate_capability_is_rejected() -> None:
    catalog = _catalog()
    _rejects(CatalogRejected, "capability_duplicate", "$.capability_id", catalog.add, _record())


# --- the shared rejection shape --------------------------------------------------------------


def test_rejections_share_one_shape_and_survive_pickling() -> None:
    error = _rejects(
        LifecycleRejected, "provider_lifecycle_rejected", "$.enabled", ProviderRegistry().register, PROV, CAP, {"enabled": True}
    )
    assert isinstance(error, FakeRejected)
    assert set(error.to_json()) == {"code", "path", "reason"}
    assert str(error).startswith("provider_lifecycle_rejected at $.enabled: ")
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.to_json()) == (LifecycleRejected, error.to_json())


def test_json_path_never_echoes_a_key_that_is_not_a_token() -> None:
    assert json_path("a", 0, "b_c") == "$.a[0].b_c"
    assert json_path("a.b") == "$['a.b']"
    assert json_path("/home/alice/.ssh") == "$[?]"
