"""Steps that put pwh's labelled boundary corpus (``pwh/corpus/boundary.jsonl``) through real
dispatches (up to PER_KIND values of each kind): one hook, one receipt per value, and for the n-th
receipt an intent whose payload
carries the n-th value where the corpus places it (under its ``field``, else under a neutral key).
One dispatch per value keeps every implementation's own ceilings out of the way and judges each
value alone. What is private, kind by kind, is pwh's reading of §7, so every check here is a
profile check: §7 names the families (names, URLs, paths, credentials, transcripts, logs), the
corpus's labels are pwh's. Values a rule cannot express (``"expressible": false``)
are left out: the reliability campaign reports them, and no implementation is held to them."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from pytest_bdd import given, parsers, then, when

from fakes._packets import intent_for, proposed, registration, source
from pwh._harness.boundary_corpus import load_corpus

from ._expect import expect
from ._world import World

HOOK_ID = "c.corpus"
CORPUS_KIND = "corpus.note"
CORPUS_SCHEMA: dict[str, Any] = {"type": "object"}
_NEUTRAL_KEY = "detail"
_FIRST = 1  # the first value goes with receipt number _FIRST, the next with _FIRST + 1, ...


# The first few values of each kind, in corpus order: every kind (each a rule of the scan) is
# judged on every implementation, at a cost the gate can pay on each run; the whole corpus, value
# by value, is the reliability campaign's (`pwh soak --campaign reliability`, category scanner_corpus).
PER_KIND = 4


@functools.cache
def _entries(label: str) -> tuple[dict[str, Any], ...]:
    """The corpus values a scenario of ``label`` proposes, read once per process (treat as read-only)."""
    taken: dict[str, int] = {}
    out = []
    for e in load_corpus():
        if e["label"] == label and e.get("expressible", True) and taken.get(e["kind"], 0) < PER_KIND:
            taken[e["kind"]] = taken.get(e["kind"], 0) + 1
            out.append(e)
    return tuple(out)


def _payload(entry: Mapping[str, Any]) -> dict[str, Any]:
    field = entry.get("field")
    return {field if isinstance(field, str) else _NEUTRAL_KEY: entry["value"]}


def _index(hook_input: Mapping[str, Any]) -> int:
    """Which value the n-th receipt carries, read from its Todo's number (an implementation may give
    the receipt an id of its own; the Todo is the primary Turn's)."""
    return int(str(hook_input["source"]["todo_id"]).rsplit("_", 1)[-1]) - _FIRST


@given(
    parsers.re(
        r'hook "c.corpus" proposes, for the n-th receipt, an intent carrying the n-th (?P<label>private|legitimate) value of pwh\'s boundary corpus'
    )
)
def corpus_hook(world: World, label: str) -> None:
    payloads = [_payload(e) for e in _entries(label)]
    world.sut.register_intent_kind(CORPUS_KIND, CORPUS_SCHEMA)
    rejections = world.install_body(
        HOOK_ID,
        f"proposes the n-th {label} value of the corpus",
        lambda i, _c: proposed(intent_for(i, payloads[_index(i)], kind=CORPUS_KIND)),
        registration(HOOK_ID, intent_kinds=[CORPUS_KIND]),
    )
    expect(
        not rejections,
        f"hook {HOOK_ID} to install",
        f"rejected: {rejections[:1]}",
        rfc=("§4.composition-root", "§6.validated-before-call"),
    )
    world.share("corpus_label", label)


@when("a committed receipt is dispatched for each of those values")
def dispatch_each(world: World) -> None:
    world.share("corpus_first_outcome", len(world.outcomes))
    for n in range(len(_entries(world.shared("corpus_label")))):
        world.dispatch_direct(source(_FIRST + n), snapshot=False)
    world.snapshot_journal()


def _done(world: World) -> list[tuple[str, Any]]:
    """(kind, outcome) of each corpus dispatch, in order."""
    first = world.shared("corpus_first_outcome")
    if first is None:
        return []
    kinds = [e["kind"] for e in _entries(world.shared("corpus_label"))]
    return list(zip(kinds, world.outcomes[first:], strict=False))  # outcomes beyond the corpus are not its


def _hook_of(outcome: Any) -> Any:
    return next((h for h in getattr(outcome, "hooks", ()) or () if h.hook_id == HOOK_ID), None)


@then(parsers.parse('each of those dispatches ends hook "c.corpus" with failure code "{code}"'))
def corpus_private_refused(world: World, code: str) -> None:
    done = _done(world)
    through = sorted({kind for kind, outcome in done if getattr(_hook_of(outcome), "failure_code", None) != code})
    expect(
        bool(done) and not through,
        f"each of {len(done)} private values refused ({code})",
        f"kinds let through: {', '.join(through[:8])}",
        profile="what is private, kind by kind, is pwh's reading of §7 (its labelled corpus); each such value fails its hook",
    )


@then('no intent of hook "c.corpus" is recorded')
def corpus_nothing_recorded(world: World) -> None:
    intents = [i for r in world.records_for(HOOK_ID) for i in r.get("intents") or ()]
    expect(
        bool(_done(world)) and not intents,
        "no private value of the corpus recorded",
        f"{len(intents)} intent(s) recorded",
        profile="a value pwh's corpus labels private is never journaled (§7 names the families; the labels are pwh's)",
    )


@then('each of those dispatches records the intent hook "c.corpus" proposed')
def corpus_legitimate_kept(world: World) -> None:
    done = _done(world)
    refused = sorted({kind for kind, outcome in done if getattr(_hook_of(outcome), "status", None) != "proposed"})
    intents = [i for r in world.records_for(HOOK_ID) if r.get("status") == "proposed" for i in r.get("intents") or ()]
    expect(
        bool(done) and not refused and len(intents) == len(done),
        f"each of {len(done)} legitimate values kept, one recorded intent each",
        f"kinds refused: {', '.join(refused[:8])}; {len(intents)} intents recorded",
        profile="an opaque id of the contract's grammar, a version or plain prose is not private (pwh's corpus);"
        " refusing it fails a right provider",
    )
