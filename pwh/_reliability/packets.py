"""Bad-input generators for the reliability campaign: valid templates, schema-driven violations,
random mutations and Hypothesis strategies built from ``pwh/schemas/*.json``.

Every packet handed out is *known bad*: either a schema violation that an independent oracle
(jsonschema itself, never pwh's compiled check or rejection code) confirms, a non-JSON value, or a
named cross-field violation the schemas cannot express. So "pwh accepted it" is always a finding,
never a generator accident. Hypothesis is imported lazily: it is a test/gate extra, not a core dep.
"""

from __future__ import annotations

import copy
import math
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any

from pwh._core.contracts import REGISTRATION_SCHEMA_VERSION
from pwh._core.identity import dispatch_id
from pwh._core.schemas import load_schema
from pwh._harness.examples import example_intent, example_receipt, example_registration, example_result

STRICT_KIND = "campaign.follow_up"
OPEN_KIND = "campaign.open_note"
TOKEN = "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}(?!\\n)$"
STRICT_PAYLOAD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "note_ref": {"type": "string", "pattern": TOKEN},
        "n": {"type": "integer", "minimum": 0, "maximum": 1000000},
        "score": {"type": "number"},
        "detail": {"type": "string", "maxLength": 512},
    },
    "required": ["note_ref"],
    "additionalProperties": False,
}
# Only the intent schema's "type": "object" holds: the scanner is the one defence left.
OPEN_PAYLOAD_SCHEMA: dict[str, Any] = {"type": "object"}

HOOK = "a.campaign"
RESULT_BUDGET = 2048  # small enough that two intents with a long detail overrun it
INTENT_BUDGET = 1024


# --------------------------------------------------------------------------------------------
# Valid templates
# --------------------------------------------------------------------------------------------


def registration(hook_id: str = HOOK, **overrides: Any) -> dict[str, Any]:
    budget = {"max_result_bytes": RESULT_BUDGET, "timeout_ms": 2000, **overrides.pop("budget", {})}
    return example_registration(hook_id, intent_kinds=overrides.pop("intent_kinds", [STRICT_KIND]), budget=budget, **overrides)


def source(n: int, **overrides: Any) -> dict[str, Any]:
    """A committed, durable, admissible primary receipt numbered ``n``."""
    return example_receipt(n, width=6, **overrides)


def dispatch_of(src: dict[str, Any], hook_id: str = HOOK) -> str:
    return dispatch_id(src["receipt_id"], hook_id, REGISTRATION_SCHEMA_VERSION, src["event_kind"])


def intent(
    did: str,
    payload: dict[str, Any] | None = None,
    *,
    hook_id: str = HOOK,
    kind: str = STRICT_KIND,
    policy_version: str = "v0",
    **overrides: Any,
) -> dict[str, Any]:
    payload = payload if payload is not None else {"note_ref": "note_" + did[4:16]}
    out = example_intent(did, hook_id, payload, kind=kind, policy_version=policy_version, max_result_bytes=INTENT_BUDGET)
    out.update(overrides)
    return out


def proposed(*intents: dict[str, Any]) -> dict[str, Any]:
    return example_result("proposed", *intents)


def not_applicable() -> dict[str, Any]:
    return example_result("not_applicable")


# --------------------------------------------------------------------------------------------
# Effective schemas (refs inlined, the campaign's payload schema in place) and the oracle
# --------------------------------------------------------------------------------------------


def _inline(node: Any) -> Any:
    if isinstance(node, dict):
        if "$ref" in node and node["$ref"].startswith("urn:pwh:schema:"):
            return _inline(load_schema(node["$ref"].rsplit(":", 1)[1]))
        return {k: _inline(v) for k, v in node.items() if k not in ("$id", "$schema")}
    if isinstance(node, list):
        return [_inline(v) for v in node]
    return node


@cache
def effective_schema(kind: str) -> dict[str, Any]:
    """``registration``, ``source``, ``result`` or ``intent`` with every ref inlined and the
    campaign's strict payload schema standing in for the intent's open ``payload``."""
    if kind == "registration":
        return _inline(load_schema("registration"))
    if kind == "source":
        return _inline(load_schema("source_receipt"))
    intent_schema = _inline(load_schema("intent"))
    intent_schema["properties"]["payload"] = copy.deepcopy(STRICT_PAYLOAD_SCHEMA)
    if kind == "intent":
        return intent_schema
    result = _inline(load_schema("hook_result"))
    result["properties"]["intents"]["items"] = intent_schema
    return result


@cache
def _oracle(kind: str) -> Any:
    from jsonschema import Draft202012Validator  # the independent judge: not pwh's compiled check

    return Draft202012Validator(effective_schema(kind))


def is_json(value: Any, depth: int = 0) -> bool:
    """Plain, finite, 64-bit, UTF-8-encodable JSON built of exact built-in types (tuples count as arrays)."""
    if depth > 60:
        return False
    kind = type(value)
    if value is None or kind is bool:
        return True
    if kind is str:
        return _utf8(value)
    if kind is int:
        return value.bit_length() <= 64
    if kind is float:
        return math.isfinite(value)
    if kind is dict:
        return all(type(k) is str and _utf8(k) and is_json(v, depth + 1) for k, v in value.items())
    if kind is list or kind is tuple:
        return all(is_json(v, depth + 1) for v in value)
    return False


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def schema_bad(kind: str, value: Any) -> bool:
    """True when ``value`` is not JSON, or jsonschema says it breaks ``kind``'s schema."""
    return not is_json(value) or not _oracle(kind).is_valid(value)


# --------------------------------------------------------------------------------------------
# Violations: where a schema node can be broken, and how
# --------------------------------------------------------------------------------------------

Path = tuple[Any, ...]


@dataclass(frozen=True)
class Mutation:
    """One change to a packet: ``op`` is ``replace``, ``delete`` or ``add`` at ``path``."""

    label: str  # what kind of break, for the findings list (never a planted value)
    path: Path
    op: str
    value: Any = None
    key: str | None = None


class _Opaque:
    """A plain object that is no JSON value (and harmless: the hostile ones live elsewhere)."""


class _Str(str):
    pass


class _Dict(dict):
    pass


def non_json_values() -> list[tuple[str, Any]]:
    """Values no JSON packet may hold, each safe to create and compare."""
    return [
        ("nan", float("nan")),
        ("infinity", float("inf")),
        ("neg_infinity", float("-inf")),
        ("int_over_64_bits", 2**70),
        ("neg_int_over_64_bits", -(2**70)),
        ("set", {1, 2}),
        ("bytes", b"x"),
        ("opaque_object", _Opaque()),
        ("complex", 1j),
        ("decimal", Decimal("1.5")),
        ("int_key", {1: "a"}),
        ("tuple_key", {("t",): 1}),
        ("str_subclass", _Str("x")),
        ("dict_subclass", _Dict(a=1)),
        ("lone_surrogate", "x\ud800y"),
        ("surrogate_key", {"k\udfff": 1}),
        ("frozenset", frozenset()),
        ("range", range(3)),
        ("bytearray", bytearray(b"x")),
    ]


_PATTERN_BREAKERS = ("", " ", "a b", "x\n", "/abs/path", "Ünïcode", "A.B", "9", "_x", "x" * 300, "pwh_" + "g" * 64)


def _walk(schema: dict[str, Any], value: Any, path: Path) -> Iterator[tuple[Path, dict[str, Any], Any]]:
    yield path, schema, value
    if type(value) is dict:
        props = schema.get("properties", {})
        for key, child in value.items():
            if key in props:
                yield from _walk(props[key], child, path + (key,))
    elif type(value) is list and isinstance(schema.get("items"), dict):
        for i, child in enumerate(value):
            yield from _walk(schema["items"], child, path + (i,))


def candidates(schema: dict[str, Any], value: Any, path: Path) -> list[Mutation]:
    """Every way this one node can be broken against its own schema keywords."""
    out: list[Mutation] = []
    typ = schema.get("type")
    if "const" in schema:
        const = schema["const"]
        out.append(
            Mutation("const_changed", path, "replace", const + "_x" if type(const) is str else (not const if type(const) is bool else "x"))
        )
    if "enum" in schema:
        out += [Mutation("enum_unknown", path, "replace", "unknown_token"), Mutation("enum_wrong_type", path, "replace", 7)]
    if typ == "string":
        out += [Mutation("string_wrong_type", path, "replace", w) for w in _values(12, None, [], {})]
        if "pattern" in schema:
            rx = re.compile(schema["pattern"])
            out += [Mutation("pattern_broken", path, "replace", s) for s in _PATTERN_BREAKERS if not rx.search(s)]
        if "maxLength" in schema:
            out.append(Mutation("too_long", path, "replace", "x" * (schema["maxLength"] + 1)))
    elif typ == "integer":
        out += [Mutation("int_wrong_type", path, "replace", w) for w in ("1", 1.5, True, None)]
        if "minimum" in schema:
            out.append(Mutation("below_minimum", path, "replace", schema["minimum"] - 1))
        if "maximum" in schema:
            out.append(Mutation("over_maximum", path, "replace", schema["maximum"] + 1))
    elif typ == "number":
        out += [Mutation("number_wrong_type", path, "replace", w) for w in _values("1", None, True)]
    elif typ == "boolean":
        out += [Mutation("bool_wrong_type", path, "replace", w) for w in _values(1, "true", None)]
    elif typ == "array" and type(value) is list:
        out += [Mutation("array_wrong_type", path, "replace", w) for w in _values({}, "x")]
        if "maxItems" in schema:
            filler = value[0] if value else "x"
            out.append(Mutation("too_many_items", path, "replace", [copy.deepcopy(filler) for _ in range(schema["maxItems"] + 1)]))
        if schema.get("minItems", 0) > 0:
            out.append(Mutation("too_few_items", path, "replace", []))
        if schema.get("uniqueItems") and value:
            out.append(Mutation("duplicate_items", path, "replace", [value[0], copy.deepcopy(value[0])] + value[1:]))
    elif typ == "object" and type(value) is dict:
        out += [Mutation("object_wrong_type", path, "replace", w) for w in _values([], "x", None)]
        out += [Mutation("required_missing", path, "delete", key=k) for k in schema.get("required", []) if k in value]
        if schema.get("additionalProperties") is False:
            out.append(Mutation("unknown_field", path, "add", 1, key="unexpected_field"))
    out += [Mutation("non_json_" + name, path, "replace", junk) for name, junk in non_json_values()]
    return out


def _pick_pool(options: list[Mutation], percent: int) -> list[Mutation]:
    """Keyword breaks 70% of the time, non-JSON values 30% (there are many more of the latter)."""
    keyword = [m for m in options if not m.label.startswith("non_json_")]
    return keyword if keyword and percent < 70 else [m for m in options if m.label.startswith("non_json_")]


def apply(value: Any, m: Mutation) -> Any:
    """A copy of ``value`` with ``m`` applied (the template is never changed)."""
    out = copy.deepcopy(value)
    if not m.path and m.op == "replace":
        return m.value
    parent = out
    for part in m.path[:-1] if m.op == "replace" else m.path:
        parent = parent[part]
    if m.op == "replace":
        parent[m.path[-1]] = m.value
    elif m.op == "delete":
        del parent[m.key]
    else:
        parent[m.key] = m.value
    return out


# --------------------------------------------------------------------------------------------
# Cross-field ("semantic") violations: valid shapes the code must still refuse
# --------------------------------------------------------------------------------------------


def semantic_sources(n: int) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("effect_mismatch", source(n, plan_effect_id="effect_other")),
        ("step_prepared", source(n, step_status="prepared")),
        ("step_prose_only", source(n, step_status="prose_only")),
        ("not_durable", source(n, durable_checkpoint=False)),
        (
            "progress_event",
            source(n, event_kind="progress_recorded", event={"transition": "progressed", "segment_ref": "s", "fact_refs": []}),
        ),
        ("transition_mismatch", source(n, event={"transition": "replanned", "segment_ref": "s", "fact_refs": []})),
        ("empty_goal", source(n, goal_id="")),
        ("empty_turn", source(n, turn_instance_id="")),
        ("prose_identity", source(n, todo_id="Fix the login bug, then tell the team")),
        ("path_identity", source(n, agent_id="/srv/agents/a1")),
    ]


def semantic_registrations() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("unknown_intent_kind", registration("b.campaign", intent_kinds=["campaign.unknown_kind"])),
        ("duplicate_hook_id", registration(HOOK)),
        ("over_profile_timeout", registration("c.campaign", budget={"timeout_ms": 20000})),
        ("over_profile_bytes", registration("d.campaign", budget={"max_result_bytes": 40000})),
    ]


def semantic_results(did: str) -> list[tuple[str, Any]]:
    big = {"note_ref": "n1", "detail": "d" * 500}
    return [
        ("too_many_intents", proposed(*(intent(did, {"note_ref": f"n{i}"}) for i in range(3)))),
        ("duplicate_intent", proposed(intent(did), intent(did))),
        ("over_result_bytes", proposed(intent(did, big), intent(did, {**big, "note_ref": "n2"}))),
        ("na_with_intents", {**not_applicable(), "intents": [intent(did)]}),
        ("proposed_without_intents", proposed()),
        ("not_an_object", [proposed(intent(did))]),
    ]


def semantic_intents(did: str) -> list[tuple[str, dict[str, Any]]]:
    other = "pwh_" + "0" * 64
    tampered = intent(did)
    tampered["payload"] = {"note_ref": "tampered"}
    return [
        ("foreign_hook", intent(did, hook_id="z.other")),
        ("foreign_capability", intent(did, capability_id="other")),
        ("foreign_dispatch", intent(other)),
        ("unregistered_kind", intent(did, kind=OPEN_KIND, payload={"note": "x"})),
        ("uncatalogued_kind", intent(did, kind="campaign.nowhere")),
        ("intent_id_mismatch", tampered),
        ("intent_over_hook_budget", intent(did, budget={"max_attempts": 1, "max_result_bytes": RESULT_BUDGET + 1})),
        ("payload_extra_field", intent(did, {"note_ref": "n", "extra": 1})),
        ("payload_missing_field", intent(did, {"n": 1})),
        ("payload_bad_token", intent(did, {"note_ref": "has space"})),
    ]


# --------------------------------------------------------------------------------------------
# The random (mutation-based) generator
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BadPacket:
    kind: str  # registration / source / result / intent
    label: str  # how it was broken (generator vocabulary only)
    value: Any


def random_bad(kind: str, rnd: random.Random, n: int) -> BadPacket:
    """One known-bad packet of ``kind`` for packet number ``n``: a schema break (checked by the
    oracle), one to three stacked breaks, or a named cross-field violation."""
    while True:
        roll = rnd.random()
        if roll < 0.15:
            label, value = _semantic(kind, rnd, n)
            return BadPacket(kind, "semantic:" + label, value)
        value, labels = _renumber(kind, n), []
        for _ in range(1 if roll < 0.8 else rnd.randint(2, 3)):
            nodes = list(_walk(effective_schema(kind), value, ()))
            path, schema, node = nodes[rnd.randrange(len(nodes))]
            options = _pick_pool(candidates(schema, node, path), rnd.randrange(100))
            m = options[rnd.randrange(len(options))]
            value = apply(value, m)
            labels.append(m.label)
            if type(value) is not dict:
                break
        if labels and schema_bad(kind, value):
            return BadPacket(kind, "+".join(labels), value)


def _renumber(kind: str, n: int) -> Any:
    if kind == "source":
        return source(n)
    if kind == "registration":
        return registration()
    did = dispatch_of(source(n))
    return proposed(intent(did)) if kind == "result" else intent(did)


def _semantic(kind: str, rnd: random.Random, n: int) -> tuple[str, Any]:
    if kind == "source":
        options: list[tuple[str, Any]] = semantic_sources(n)
    elif kind == "registration":
        options = semantic_registrations()
    elif kind == "result":
        options = semantic_results(dispatch_of(source(n)))
    else:
        options = semantic_intents(dispatch_of(source(n)))
    return options[rnd.randrange(len(options))]


# --------------------------------------------------------------------------------------------
# Hypothesis: schema-derived strategies
# --------------------------------------------------------------------------------------------


def _pattern_strategy(pattern: str, st: Any) -> Any:
    """Strings matching one of the contracts' anchored token patterns, built from the pattern's
    own atoms (much cheaper than ``from_regex``); falls back to ``from_regex`` for other syntax."""
    body = pattern.removeprefix("^").removesuffix("(?!\\n)$").removesuffix("$")
    try:
        atoms, rest = _parse_seq(body, 0, st)
        if rest != len(body):
            raise ValueError
    except (ValueError, IndexError):
        return st.from_regex(pattern, fullmatch=True)
    return st.tuples(*atoms).map("".join)


def _parse_seq(text: str, i: int, st: Any) -> tuple[list[Any], int]:
    atoms: list[Any] = []
    while i < len(text) and text[i] != ")":
        if text[i] == "[":
            end = text.index("]", i + 1)
            atom = st.sampled_from(_expand_class(text[i + 1 : end]))
            i = end + 1
        elif text[i] == "(":
            inner, j = _parse_seq(text, i + 1, st)
            atom = st.tuples(*inner).map("".join)
            i = j + 1
        elif text[i] == "\\":
            atom, i = st.just(text[i + 1]), i + 2
        elif text[i] in "{}*+?|.^$":
            raise ValueError(text[i])
        else:
            atom, i = st.just(text[i]), i + 1
        if i < len(text) and text[i] == "{":
            end = text.index("}", i)
            lo, _, hi = text[i + 1 : end].partition(",")
            low = int(lo)
            high = int(hi) if hi else low
            atom = st.lists(atom, min_size=low, max_size=min(high, low + 6)).map("".join)
            i = end + 1
        atoms.append(atom)
    return atoms, i


def _expand_class(spec: str) -> list[str]:
    chars: list[str] = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            chars += [chr(c) for c in range(ord(spec[i]), ord(spec[i + 2]) + 1)]
            i += 3
        else:
            chars.append(spec[i])
            i += 1
    return chars


def strategy_for(schema: dict[str, Any]) -> Any:
    """A Hypothesis strategy for values valid against ``schema`` (the contracts' keyword subset;
    ``if``/``then``/``else`` is left to the oracle)."""
    from hypothesis import strategies as st

    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    typ = schema.get("type")
    if typ == "string":
        if "pattern" in schema:
            return _pattern_strategy(schema["pattern"], st)
        return st.text(max_size=min(schema.get("maxLength", 24), 24))
    if typ == "integer":
        return st.integers(schema.get("minimum", -(2**31)), schema.get("maximum", 2**31))
    if typ == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if typ == "boolean":
        return st.booleans()
    if typ == "array":
        items = strategy_for(schema["items"]) if isinstance(schema.get("items"), dict) else st.integers(-(2**31), 2**31)
        low = schema.get("minItems", 0)
        return st.lists(items, min_size=low, max_size=min(schema.get("maxItems", 3), low + 2), unique=bool(schema.get("uniqueItems")))
    if typ == "object":
        props = schema.get("properties", {})
        if not props:
            return st.dictionaries(st.sampled_from(["a", "b", "note"]), st.integers(0, 9), max_size=2)
        required = {k: strategy_for(v) for k, v in props.items() if k in schema.get("required", [])}
        optional = {k: strategy_for(v) for k, v in props.items() if k not in required}
        return st.fixed_dictionaries(required, optional=optional)
    return st.one_of(st.none(), st.integers(0, 9), st.text(max_size=4))


def hypothesis_bad(kind: str) -> Any:
    """Strategy for known-bad packets: a schema-valid base drawn from the schema, then one
    schema violation drawn from that base's own nodes (``None`` when the draw stayed valid)."""
    from hypothesis import strategies as st

    @st.composite
    def bad(draw: Any) -> BadPacket | None:
        base = draw(strategy_for(effective_schema(kind)))
        nodes = list(_walk(effective_schema(kind), base, ()))
        path, schema, node = nodes[draw(st.integers(0, len(nodes) - 1))]
        options = _pick_pool(candidates(schema, node, path), draw(st.integers(0, 99)))
        m = options[draw(st.integers(0, len(options) - 1))]
        value = apply(base, m)
        return BadPacket(kind, "hypothesis:" + m.label, value) if schema_bad(kind, value) else None

    return bad()


def _values(*values: Any) -> tuple[Any, ...]:
    """Wrong-typed values of mixed types, as one typed tuple."""
    return values
