"""An adapter author needs no pwh source: docs/seam.md defines every seam method, fault, crash
point, profile field and test intent kind, and an implementation that differs from the reference
where the RFC leaves it free (its own frozen input, its own identity recipe, a typed catalog, a
journal without files, a crash point it cannot place) is judged on the RFC, with what it cannot
express reported as not applicable, never as failed (tests/suts/author_adapters.py)."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from fakes._orchestrator import PRIMARY_CRASH_POINTS
from fakes._packets import (
    GENERIC_INTENT_KIND,
    GENERIC_PAYLOAD_SCHEMA,
    NUMBER_INTENT_KIND,
    REFERENCE_RECIPES,
    TEST_INTENT_KINDS,
    RecipeError,
    dispatch_id_for,
    id_recipes_of,
    intent_for,
    reference_keyed,
    rekeyed,
    using_id_recipes,
)
from fakes._world import _plain_input, input_as_json, json_view
from pwh import FAULTS, SIDECAR_CRASH_POINTS, CanonicalError, Profile, Unsupported, build_hook_input, dispatch_id, intent_id
from pwh._suts.faults import CRASH_POINTS, INJECTED_FAULTS, SUT_CRASH_POINTS
from pwh._suts.reference import ReferenceSUT
from pwh._suts.seam import SUT
from tests.suts.author_adapters import ASKED_ENV, FrozenMap, frozen, own_intent_id

ROOT = Path(__file__).resolve().parents[2]
SEAM_DOC = ROOT / "docs" / "seam.md"
AUTHOR = "tests.suts.author_adapters:author"

# Every feature that injects a fault or arms a crash point (held below against the feature files),
# the three whose checks read the hook input, and those whose hooks propose ids the SUT checks.
FAULT_FEATURES = (
    "m05_limits",
    "m05_replay",
    "m05_survivors",
    "m07_isolation",
    "m07_journal_files",
    "m07_survivors",
    "m11_replan",
)
SELECTION = (
    *FAULT_FEATURES,
    "m04_limits",
    "m04_committed_writeback",
    "m06_conflict",
    "m08_several_hooks",
    "m08_limits",
    "m10_completion_threshold",
)
# Steps that reach SUT.inject_fault or SUT.arm_crash (scenarios/steps_*.py).
FAULT_PHRASES = re.compile(r'crashes at "|journal cannot be written|can no longer be written|in storage|journal\'s file is')
# The scenarios whose checks read what a hook was handed (the friction this file was written for).
INPUT_SCENARIOS = {("features/m04_limits.feature", 21), ("features/m08_several_hooks.feature", 56), ("features/m08_limits.feature", 42)}


def _input() -> dict[str, Any]:
    from fakes._packets import registration, source

    return build_hook_input(source(1), registration("a.reporter"), "pwh_" + "0" * 64)


def _gate(sut: str, *targets: str, env: dict[str, str] | None = None, out: Path) -> dict[str, Any]:
    import os

    done = subprocess.run(
        [sys.executable, "-m", "pwh", "gate", "--sut", sut, *targets, "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    assert out.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(out.read_text("utf-8"))


# -- B8: a read-only input is read through Mapping and Sequence ---------------------------------------


def test_a_read_only_input_of_any_mapping_and_sequence_reads_as_plain_json() -> None:
    plain = _input()
    handed = frozen(plain)
    assert type(handed) is MappingProxyType and type(handed["projection"]["fact_refs"]) is tuple
    assert input_as_json(handed) == plain
    assert _plain_input(handed) == (plain, None)
    assert json_view(FrozenMap({"a": ("x", FrozenMap({"b": (1, 2.5, None, True)}))})) == {"a": ["x", {"b": [1, 2.5, None, True]}]}
    assert json_view({"text": "abc", "raw": b"ab"}) == {"text": "abc", "raw": b"ab"}  # text and bytes are never arrays


def test_an_input_that_is_not_json_is_recorded_with_its_path_not_as_missing_fields() -> None:
    handed = frozen({**_input(), "source": {"receipt_id": b"receipt_0001"}})
    with pytest.raises(CanonicalError) as caught:
        input_as_json(handed)
    assert caught.value.path == "$.source.receipt_id"
    seen, why = _plain_input(handed)
    assert seen == {} and why is not None and why.startswith("$.source.receipt_id:")

    class Hostile(Mapping[str, Any]):
        def __getitem__(self, key: str) -> Any:
            raise RuntimeError("no")

        def __iter__(self) -> Any:
            return iter(["a"])

        def __len__(self) -> int:
            return 1

    assert _plain_input(Hostile()) == ({}, "$: reading it raised RuntimeError")


def test_a_self_nesting_mapping_is_refused_without_unbounded_recursion() -> None:
    loop: dict[str, Any] = {}
    loop["again"] = MappingProxyType(loop)
    seen, why = _plain_input(MappingProxyType(loop))
    assert seen == {} and why is not None and "deeper" in why


# -- identity recipes ---------------------------------------------------------------------------------


class _OwnRecipes:
    def intent_id(self, dispatch: str, kind: str, version: str, payload: Any) -> str:
        return own_intent_id(dispatch, kind, version, payload)

    def dispatch_id(self, receipt_id: str, hook_id: str, schema_version: str, event_kind: str) -> str:
        return f"own_{receipt_id}_{hook_id}"


def test_test_producers_use_the_sut_recipe_when_it_offers_one_and_pwh_s_otherwise() -> None:
    i = _input()
    fields = (i["dispatch_id"], GENERIC_INTENT_KIND, "v0", {"note_ref": "note_" + i["source"]["receipt_id"]})
    assert id_recipes_of(object()) == REFERENCE_RECIPES
    assert intent_for(i)["intent_id"] == intent_id(*fields)
    with using_id_recipes(id_recipes_of(_OwnRecipes())):
        assert intent_for(i)["intent_id"] == own_intent_id(*fields)
        assert intent_for(i, intent_id="forged")["intent_id"] == "forged"  # a deliberate id stays as given
        assert dispatch_id_for("receipt_1", "b.reporter", "v0", "todo_completed") == "own_receipt_1_b.reporter"
    assert intent_for(i)["intent_id"] == intent_id(*fields)  # put back after the call
    assert dispatch_id_for("receipt_1", "b.reporter", "v0", "todo_completed") == dispatch_id(
        "receipt_1", "b.reporter", "v0", "todo_completed"
    )


def test_the_forged_identity_of_another_hook_is_forged_with_the_sut_recipes() -> None:
    import threading

    from fakes._behaviours import BEHAVIOURS, CallContext
    from pwh._core.contracts import REGISTRATION_SCHEMA_VERSION

    i = _input()
    receipt_id, event_kind = i["source"]["receipt_id"], i["source"]["event_kind"]
    context = CallContext(1, threading.Event(), committed_receipt_ids=lambda: [receipt_id])
    with using_id_recipes(id_recipes_of(_OwnRecipes())):
        [forged] = BEHAVIOURS["proposes an intent under b.reporter's intent identity"].body(i, context)["intents"]
    theirs = _OwnRecipes().dispatch_id(receipt_id, "b.reporter", REGISTRATION_SCHEMA_VERSION, event_kind)
    assert forged["intent_id"] == own_intent_id(theirs, GENERIC_INTENT_KIND, "v0", {"note_ref": "note_" + receipt_id})


def test_a_broken_recipe_is_reported_when_the_scenario_starts() -> None:
    class Raises:
        def intent_id(self, *args: Any) -> str:
            raise ValueError("x")

    class Answers:
        def dispatch_id(self, *args: Any) -> Any:
            return 7

    class Refuses:
        def __getattr__(self, name: str) -> Any:
            raise Unsupported(f"{name} is not offered")

    assert id_recipes_of(Refuses()) == REFERENCE_RECIPES
    with pytest.raises(RecipeError, match="intent_id recipe raised ValueError"):
        id_recipes_of(Raises())
    with pytest.raises(RecipeError, match="must return a non-empty str, not int"):
        id_recipes_of(Answers())


def test_a_shipped_capability_s_ids_are_rekeyed_to_the_sut_recipe_and_back_for_its_reducer() -> None:
    from fakes._packets import source
    from pwh.capabilities.periodic_report import REGISTRATION, produce

    hook_input = build_hook_input(source(1, event_kind="replan_recorded"), REGISTRATION, "pwh_" + "0" * 64)
    result = produce(hook_input)
    [mine] = result["intents"]
    recipes = id_recipes_of(_OwnRecipes())
    with using_id_recipes(recipes):
        [theirs] = rekeyed(result)["intents"]
        assert rekeyed({"intents": [{**mine, "intent_id": "wrong"}]})["intents"][0]["intent_id"] == "wrong"
    assert theirs["intent_id"] == own_intent_id(mine["source_dispatch_id"], mine["intent_kind"], mine["policy_version"], mine["payload"])
    assert reference_keyed(theirs, recipes) == mine
    assert rekeyed(result) == result  # under pwh's own recipe nothing changes


# -- intent kinds -------------------------------------------------------------------------------------

SUBSET_KEYWORDS = {"$schema", "type", "properties", "required", "additionalProperties", "pattern", "maxLength", "minimum", "maximum"}


def _keywords(schema: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            if key == "properties":
                for sub in value.values():
                    found |= _keywords(sub)
            elif isinstance(value, dict):
                found |= _keywords(value)
    return found


def _types(schema: Any) -> set[str]:
    if not isinstance(schema, dict):
        return set()
    own = {schema["type"]} if isinstance(schema.get("type"), str) else set()
    return own.union(*(_types(v) for v in (schema.get("properties") or {}).values()))


def test_the_general_intent_kind_keeps_to_the_subset_a_typed_catalog_holds() -> None:
    assert TEST_INTENT_KINDS[GENERIC_INTENT_KIND] is GENERIC_PAYLOAD_SCHEMA
    assert _keywords(GENERIC_PAYLOAD_SCHEMA) <= SUBSET_KEYWORDS, _keywords(GENERIC_PAYLOAD_SCHEMA) - SUBSET_KEYWORDS
    assert _types(GENERIC_PAYLOAD_SCHEMA) == {"object", "string", "integer"}  # no JSON number
    assert GENERIC_PAYLOAD_SCHEMA["additionalProperties"] is False
    patterns = [p["pattern"] for p in GENERIC_PAYLOAD_SCHEMA["properties"].values() if "pattern" in p]
    assert patterns and not any("(?" in p for p in patterns)  # no lookaround
    assert "number" in _types(TEST_INTENT_KINDS[NUMBER_INTENT_KIND])  # the fraction lives in its own kind
    schema_block = re.search(r"The general kind, exactly:\n\n```json\n(.*?)```", SEAM_DOC.read_text("utf-8"), re.S)
    assert schema_block is not None and json.loads(schema_block.group(1)) == GENERIC_PAYLOAD_SCHEMA


def test_the_world_registers_each_test_kind_once_and_a_copy() -> None:
    from fakes._world import World

    seen: list[tuple[str, Any]] = []

    class Catalog(ReferenceSUT):
        def register_intent_kind(self, kind: str, payload_schema: Mapping[str, Any]) -> list[Any]:
            seen.append((kind, payload_schema))
            return super().register_intent_kind(kind, payload_schema)

    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        world = World(Catalog(journal="memory"), Path(tmp))
        try:
            world.install_hook("a.reporter", "proposes one intent")
            world.install_hook("b.reporter", "proposes one intent")
            world.install_hook("c.scorer", "proposes an intent with a fractional score")
        finally:
            world.close()
    assert [k for k, _ in seen] == [GENERIC_INTENT_KIND, NUMBER_INTENT_KIND]
    assert all(schema == TEST_INTENT_KINDS[k] and schema is not TEST_INTENT_KINDS[k] for k, schema in seen)
    assert world.install_rejections == {"a.reporter": [], "b.reporter": [], "c.scorer": []}


# -- faults, crash points, profile fields, methods: each one documented -----------------------------


def _doc_rows() -> set[str]:
    """The first cell of every table row in docs/seam.md: ``| `name` | ...``."""
    return set(re.findall(r"^\| `([^`]+)`", SEAM_DOC.read_text("utf-8"), re.M))


def test_every_fault_and_crash_point_is_defined_by_its_effect() -> None:
    assert FAULTS == tuple(f.name for f in INJECTED_FAULTS) and len(set(FAULTS)) == len(FAULTS) == 9
    assert SUT_CRASH_POINTS == SIDECAR_CRASH_POINTS
    assert tuple(c.name for c in CRASH_POINTS if c.placed_by == "pwh") == PRIMARY_CRASH_POINTS
    assert all(n.effect and n.judged and n.used_by for n in (*INJECTED_FAULTS, *CRASH_POINTS))
    documented = _doc_rows()
    missing = [n.name for n in (*INJECTED_FAULTS, *CRASH_POINTS) if n.name not in documented]
    assert missing == [], f"docs/seam.md has no row for {missing}"
    named = set(re.findall(r'crashes at "([a-z_.]+)"|\| ((?:sidecar|primary)\.[a-z_]+) +\|', _features_text()))
    used = {a or b for a, b in named}
    assert used and used <= {c.name for c in CRASH_POINTS}, used - {c.name for c in CRASH_POINTS}


def _features_text() -> str:
    return "\n".join(p.read_text("utf-8") for p in sorted((ROOT / "features").glob("*.feature")))


def test_the_gate_run_below_covers_every_feature_that_injects_a_fault_or_arms_a_crash() -> None:
    using = {p.stem for p in (ROOT / "features").glob("*.feature") if FAULT_PHRASES.search(p.read_text("utf-8"))}
    assert using and using <= set(FAULT_FEATURES), using - set(FAULT_FEATURES)


def test_every_profile_field_is_defined() -> None:
    fields = [f.name for f in dataclasses.fields(Profile)]
    missing = [f for f in fields if f not in _doc_rows()]
    assert missing == [], f"docs/seam.md defines no {missing}"
    doc = Profile.__doc__ or ""
    assert all(f"``{f}``" in doc for f in fields), [f for f in fields if f"``{f}``" not in doc]


def test_every_seam_method_is_documented() -> None:
    methods = {m for m in vars(SUT) if not m.startswith("_")} - {"name"}
    documented = {row.split("(")[0] for row in _doc_rows()}
    assert methods and methods <= documented, methods - documented
    assert {"intent_id", "dispatch_id", "turn_contracts"} <= documented


def test_the_reference_answers_unsupported_for_a_crash_point_it_has_not() -> None:
    sut = ReferenceSUT(journal="memory")
    try:
        with pytest.raises(Unsupported, match="no crash point 'sidecar.nowhere'"):
            sut.arm_crash("sidecar.nowhere")
    finally:
        sut.close()


# Files whose user-facing text an adapter author reads; nothing there may point outside the repository.
AUTHOR_FACING = (
    "docs/seam.md",
    "pwh/_suts/seam.py",
    "pwh/_suts/faults.py",
    "pwh/_suts/adapter_template.py",
    "pwh/_suts/reference.py",
    "pwh/_core/profile.py",
    "fakes/_packets.py",
)


def test_author_facing_text_points_only_inside_the_repository() -> None:
    guide = (ROOT / "docs" / "adapters.md").read_text("utf-8")
    texts = {name: (ROOT / name).read_text("utf-8") for name in AUTHOR_FACING} | {"docs/adapters.md": guide}
    outside = {name: m for name, text in texts.items() if (m := re.findall(r"\.\./|shared/|SPEC\.md|SPEC §|SPEC's", text))}
    assert outside == {}
    assert "](seam.md)" in guide  # the guide links the seam's whole protocol
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", SEAM_DOC.read_text("utf-8")):
        assert (SEAM_DOC.parent / target).exists(), target


# -- the gate, against an adapter written from docs/seam.md -------------------------------------------


@pytest.fixture(scope="module")
def author_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[list[str]]]:
    tmp = tmp_path_factory.mktemp("author")
    asked = tmp / "asked.jsonl"
    verdict = _gate(AUTHOR, *(f"features/{f}.feature" for f in SELECTION), env={ASKED_ENV: str(asked)}, out=tmp / "author.json")
    lines = [json.loads(line) for line in asked.read_text("utf-8").splitlines()] if asked.exists() else []
    return verdict, lines


def test_an_adapter_written_from_the_doc_fails_no_rfc_check(author_run: tuple[dict[str, Any], list[list[str]]]) -> None:
    verdict, _ = author_run
    failed = [f"{s['feature']}:{s['line']} {s['scenario']}" for s in verdict["scenarios"] if s["rfc"] == "fail"]
    assert failed == []
    passed = {(s["feature"], s["line"]) for s in verdict["scenarios"] if s["rfc"] == "pass" and s["counts_for"] == "sut"}
    assert INPUT_SCENARIOS <= passed, INPUT_SCENARIOS - passed  # its read-only input is read as the RFC input
    rows = verdict["rows"]
    assert all(rows[r]["rfc"] == "pass" for r in ("M06", "M08", "M10", "M11")), {r: rows[r]["rfc"] for r in rows}


def test_what_it_cannot_express_is_not_applicable_never_failed(author_run: tuple[dict[str, Any], list[list[str]]]) -> None:
    verdict, _ = author_run
    skipped = {
        (s["feature"].rsplit("/", 1)[1], s.get("params", "")): s.get("reason", "") for s in verdict["scenarios"] if s["rfc"] == "skip"
    }
    assert all(reason.startswith("unsupported by the SUT: ") for reason in skipped.values()), skipped
    by_feature: dict[str, int] = {}
    for feature, _params in skipped:
        by_feature[feature] = by_feature.get(feature, 0) + 1
    # a number field (1), a crash point it cannot place (1 + 1), a journal without files (6)
    assert by_feature == {
        "m04_committed_writeback.feature": 1,
        "m05_limits.feature": 1,
        "m05_replay.feature": 1,
        "m07_journal_files.feature": 6,
    }
    assert verdict["summary"]["rfc"] == "incomplete" and verdict["rows"]["M07"]["rfc"] == "skip"


def test_the_gate_asks_only_for_documented_faults_and_crash_points(author_run: tuple[dict[str, Any], list[list[str]]]) -> None:
    _, asked = author_run
    faults = {name for kind, name in asked if kind == "fault"}
    points = {name for kind, name in asked if kind == "crash"}
    assert faults == set(FAULTS)  # every fault the gate sends, and no other
    assert points == set(SUT_CRASH_POINTS)


def test_an_input_that_is_not_json_fails_under_section_7_naming_where(tmp_path: Path) -> None:
    verdict = _gate("tests.suts.author_adapters:non_json_input", "features/m04_limits.feature:21", out=tmp_path / "v.json")
    [scenario] = verdict["scenarios"]
    assert scenario["rfc"] == "fail" and scenario["counts_for"] == "sut"
    message = json.dumps(scenario, ensure_ascii=False)
    assert "not JSON at $.source.receipt_id" in message and "§7" in message and "None" not in scenario.get("seen", "")
