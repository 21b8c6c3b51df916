"""Builders for well-formed packets, so tests and steps state only what they change.

The intent kinds pwh's scenarios register, and the JSON Schema each payload schema uses, are listed
in docs/seam.md ("Intent kinds"): every scenario that installs a hook registers
:data:`GENERIC_INTENT_KIND`, so its schema keeps to the smallest subset (an object of named string
and integer fields); a kind a typed catalog may not hold (a JSON ``number``, an open object, ``$ref``)
is registered only by the few scenarios that need it.

The test producers compute ``intent_id`` (and, for one forged identity, another hook's
``dispatch_id``) with the SUT's own recipe when its adapter offers one (``intent_id`` /
``dispatch_id`` methods, docs/seam.md "Identity recipes"), else with pwh's reference recipe
(:mod:`pwh._core.identity`): the RFC (§9) fixes what an identity digests, not its bytes.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

from pwh._core.identity import dispatch_id as reference_dispatch_id
from pwh._core.identity import intent_id as reference_intent_id
from pwh._harness.examples import (
    example_intent,
    example_receipt,
    example_registration,
    example_result,
)

# The general test intent kind: every scenario that installs a hook registers it. Strings and
# integers only (no JSON ``number``), a closed object, ECMA-262 patterns without lookaround.
GENERIC_INTENT_KIND = "synthetic.follow_up"
GENERIC_PAYLOAD_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "note_ref": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"},
        "n": {"type": "integer", "minimum": 0, "maximum": 1000000},
        "score": {"type": "integer"},
        "filler": {"type": "string", "maxLength": 70000},
        "detail": {"type": "string", "maxLength": 512},
    },
    "required": ["note_ref"],
    "additionalProperties": False,
}

# A kind whose payload carries a JSON number (a fraction): registered only by the scenario whose
# hook proposes one, so a catalog that cannot hold a number field loses that scenario alone.
NUMBER_INTENT_KIND = "synthetic.measurement"
NUMBER_PAYLOAD_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "note_ref": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"},
        "score": {"type": "number"},
    },
    "required": ["note_ref", "score"],
    "additionalProperties": False,
}

# The schema of each test intent kind a scenario may register by name alone.
TEST_INTENT_KINDS: Mapping[str, Mapping[str, Any]] = {
    GENERIC_INTENT_KIND: GENERIC_PAYLOAD_SCHEMA,
    NUMBER_INTENT_KIND: NUMBER_PAYLOAD_SCHEMA,
}

IntentIdRecipe = Callable[[str, str, str, Any], str]  # (dispatch_id, intent_kind, policy_version, payload)
DispatchIdRecipe = Callable[[str, str, str, str], str]  # (receipt_id, hook_id, registration schema_version, event_kind)
Recipes = Mapping[str, Callable[..., str]]

REFERENCE_RECIPES: Recipes = MappingProxyType({"intent_id": reference_intent_id, "dispatch_id": reference_dispatch_id})

# The recipes the test producers use now (a world puts its SUT's in place around each provider
# call, in whatever process runs it: a worker forked from the scenario's process has this too).
_recipes: dict[str, Callable[..., str]] = dict(REFERENCE_RECIPES)

_SAMPLES: dict[str, tuple[Any, ...]] = {
    "intent_id": ("pwh_" + "0" * 64, GENERIC_INTENT_KIND, "v0", {"note_ref": "note_0001"}),
    "dispatch_id": ("receipt_0001", "a.reporter", "loopx_post_writeback_capability_hook_registration_v0", "todo_completed"),
}


class RecipeError(TypeError):
    """An adapter's identity recipe is not a function of the documented arguments returning text."""


def id_recipes_of(sut: Any) -> Recipes:
    """The identity recipes the test producers use against ``sut``: its own ``intent_id`` and
    ``dispatch_id`` methods where it has them (docs/seam.md, "Identity recipes"), pwh's reference
    recipe otherwise. Each one offered is called once here on a sample, so a recipe that raises or
    answers anything but a non-empty string is reported at once (:class:`RecipeError`), not as a
    producer failure in the middle of a dispatch."""
    recipes = dict(REFERENCE_RECIPES)
    for name in REFERENCE_RECIPES:
        try:
            recipe = getattr(sut, name, None)
        except Exception:  # an adapter answering every attribute (Unsupported, say) offers no recipe
            recipe = None
        if recipe is None:
            continue
        if not callable(recipe):
            raise RecipeError(f"the SUT's {name} is not callable (docs/seam.md, 'Identity recipes')")
        try:
            answer = recipe(*_SAMPLES[name])
        except Exception as exc:
            raise RecipeError(
                f"the SUT's {name} recipe raised {type(exc).__name__} on a sample (docs/seam.md, 'Identity recipes')"
            ) from None
        if type(answer) is not str or not answer:
            raise RecipeError(f"the SUT's {name} recipe must return a non-empty str, not {type(answer).__name__}")
        recipes[name] = recipe
    return MappingProxyType(recipes)


@contextmanager
def using_id_recipes(recipes: Recipes) -> Iterator[None]:
    """Compute identities with ``recipes`` inside the block (a provider call), then put back what
    was in use before."""
    before = dict(_recipes)
    _recipes.update(recipes)
    try:
        yield
    finally:
        _recipes.clear()
        _recipes.update(before)


def intent_id_for(dispatch: str, intent_kind: str, policy_version: str, payload: Any) -> str:
    """The ``intent_id`` of these semantic inputs (RFC §9), by the recipe in use."""
    return _recipes["intent_id"](dispatch, intent_kind, policy_version, copy.deepcopy(payload))


def dispatch_id_for(receipt_id: str, hook_id: str, registration_schema_version: str, event_kind: str) -> str:
    """The ``dispatch_id`` of these semantic inputs (RFC §9), by the recipe in use."""
    return _recipes["dispatch_id"](receipt_id, hook_id, registration_schema_version, event_kind)


def _rekey(intent: Any, recipe_from: Callable[..., str], recipe_to: Callable[..., str]) -> Any:
    """``intent`` with its ``intent_id`` recomputed by ``recipe_to`` where it is ``recipe_from``'s
    digest of the intent's own fields; anything else (a deliberately wrong id) as it is."""
    if recipe_from is recipe_to or not isinstance(intent, Mapping):
        return intent
    try:
        fields = (intent["source_dispatch_id"], intent["intent_kind"], intent["policy_version"], intent["payload"])
        if intent.get("intent_id") == recipe_from(*fields):
            return {**intent, "intent_id": recipe_to(*fields[:3], copy.deepcopy(fields[3]))}
    except (KeyError, TypeError, ValueError):
        pass
    return intent


def rekeyed(result: Any) -> Any:
    """``result`` with the ``intent_id`` of each intent recomputed by the recipe in use, where it is
    pwh's reference digest of that intent's own fields: a capability pwh ships (the periodic
    report) computes its ids with pwh's recipe, and under the SUT's own recipe must carry the
    SUT's, as it would if it used the implementation's identity library."""
    if _recipes["intent_id"] is reference_intent_id or not isinstance(result, dict) or not isinstance(result.get("intents"), list):
        return result
    return {**result, "intents": [_rekey(i, reference_intent_id, _recipes["intent_id"]) for i in result["intents"]]}


def reference_keyed(intent: Any, recipes: Recipes) -> Any:
    """The way back, for the periodic report's own reducer (an executor that checks each id with
    pwh's recipe): an intent whose ``intent_id`` is ``recipes``' digest of its fields, with pwh's."""
    return _rekey(intent, recipes["intent_id"], reference_intent_id)


def registration(hook_id: str = "a.reporter", **overrides: Any) -> dict[str, Any]:
    """A valid registration for ``hook_id`` proposing the generic intent kind."""
    return example_registration(hook_id, intent_kinds=overrides.pop("intent_kinds", [GENERIC_INTENT_KIND]), **overrides)


def source(n: int = 1, **overrides: Any) -> dict[str, Any]:
    """A committed, durable primary receipt numbered ``n``."""
    return example_receipt(n, **overrides)


def intent_for(
    hook_input: Mapping[str, Any],
    payload: Mapping[str, Any] | None = None,
    *,
    kind: str = GENERIC_INTENT_KIND,
    policy_version: str = "v0",
    **overrides: Any,
) -> dict[str, Any]:
    """An intent bound to ``hook_input``'s dispatch with a correct ``intent_id`` (by the recipe in
    use: the SUT's own when its adapter offers one)."""
    payload = dict(payload) if payload is not None else {"note_ref": "note_" + hook_input["source"]["receipt_id"]}
    intent = example_intent(
        hook_input["dispatch_id"],
        hook_input["hook_id"],
        payload,
        kind=kind,
        capability_id=hook_input["capability_id"],
        policy_version=policy_version,
    )
    if _recipes["intent_id"] is not reference_intent_id:
        intent["intent_id"] = intent_id_for(hook_input["dispatch_id"], kind, policy_version, payload)
    intent.update(copy.deepcopy(overrides))
    return intent


def proposed(*intents: Mapping[str, Any]) -> dict[str, Any]:
    return example_result("proposed", *intents)


def not_applicable() -> dict[str, Any]:
    return example_result("not_applicable")


# Registrations that break one REG rule each: the JSON path the rejection must name (profile),
# and the clause that makes the rejection itself required (None: only pwh's reading forbids it).
BAD_REGISTRATIONS: dict[str, tuple[dict, str, str | tuple[str, ...] | None]] = {
    "an unknown event kind": ({"event_kinds": ["progress_recorded"]}, "$.event_kinds[0]", "§6.validated-before-call"),
    "an unknown intent kind": ({"intent_kinds": ["nobody.knows"]}, "$.intent_kinds[0]", "§6.validated-before-call"),
    "a phase other than post_writeback": (
        {"phase": "interaction_projection"},
        "$.phase",
        "§6.validated-before-call",
    ),
    "a command field": ({"command": "make report"}, "$.command", ("§3.2.no-shell-hooks", "§6.no-command-no-scope")),
    "an import string": ({"import_string": "reports.hooks:run"}, "$.import_string", ("§3.2.no-shell-hooks", "§6.validated-before-call")),
    "a callback name": ({"callback": "on_written"}, "$.callback", ("§3.2.no-shell-hooks", "§6.validated-before-call")),
    "a write scope": ({"write_scope": ["report.publish"]}, "$.write_scope", "§6.no-command-no-scope"),
    "a failure policy other than isolate": ({"failure_policy": "retry"}, "$.failure_policy", "§6.validated-before-call"),
    "a timeout over the core ceiling": ({"budget": {"timeout_ms": 60000}}, "$.budget.timeout_ms", None),
    "a result budget over the core ceiling": ({"budget": {"max_result_bytes": 10_000_000}}, "$.budget.max_result_bytes", None),
    "a zero invocation budget": ({"budget": {"max_invocations_per_dispatch": 0}}, "$.budget.max_invocations_per_dispatch", None),
    "a read scope for the full writeback payload": (
        {"requested_read_scope": ["full_writeback_payload"]},
        "$.requested_read_scope[0]",
        "§7.bounded-projection",
    ),
    "an unknown field": ({"notes": "set by hand"}, "$.notes", "§6.validated-before-call"),
    "an unknown budget field": ({"budget": {"max_cost_usd": 1}}, "$.budget.max_cost_usd", "§6.validated-before-call"),
    "duplicate event kinds": ({"event_kinds": ["todo_completed", "todo_completed"]}, "$.event_kinds", None),
    "no event kinds": ({"event_kinds": []}, "$.event_kinds", None),
}
# Not a flaw of the registration itself: a second registration of an installed hook_id.
DUPLICATE = "registered a second time"
