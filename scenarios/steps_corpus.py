"""Steps that put pwh's labelled boundary corpus (``pwh/corpus/boundary.jsonl``) through real
dispatches, and the M13 steps that say which of its judgements the RFC requires.

The corpus (up to PER_KIND values of each kind): one hook, one receipt per value, and for the n-th
receipt an intent whose payload carries the n-th value where the corpus places it (under its
``field``, else under a neutral key). One dispatch per value keeps every implementation's own
ceilings out of the way and judges each value alone. What is private, kind by kind, is pwh's
reading of §7, so the corpus's own checks are profile: §7 names the families (names, URLs, paths,
credentials, transcripts, logs), the corpus's labels are pwh's. One family needs no reading: a
credential of a certain format (``pwh._core.boundary.credential_values``) is never handed to a hook
nor journaled (§7, §9, §12 M13), judged as RFC by the M13 check the corpus scenarios end with.
Values a rule cannot express (``"expressible": false``) are left out: the reliability campaign
reports them, and no implementation is held to them.

The credential steps plant one credential of a named format, taken from the corpus, where an
implementation must keep it out: in an open payload (the journal's side) or as a receipt's Todo
identity (the hook input's side). The judged steps ("as the RFC requires" / "by pwh's reading")
run one of the matrix's outcome checks as RFC or as profile, row by row, for outlines that mix
samples the RFC names with samples it does not (an auth scheme with no credential, the loopback
name, an environment variable's name). The bound steps say what any bounded implementation must do
(record a value or fail the hook with a compact code, the primary receipt untouched) apart from
pwh's own numbers and readings (a nesting depth of 60, what it keeps as public)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from pytest_bdd import given, parsers, then, when

from fakes._packets import intent_for, proposed, registration, source
from fakes._world import World
from pwh._core.boundary.secrets import certain_credential
from pwh._core.boundary.text import forms
from pwh._harness.boundary_corpus import load_corpus
from pwh._harness.expect import expect

from .steps_checks import ends_with_code as _rfc_ends_with_code
from .steps_checks import hook_never_called as _rfc_never_called
from .steps_checks import journal_no_intent as _rfc_no_intent
from .steps_checks import primary_unchanged as _rfc_primary_unchanged

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


# -- credentials of a certain format: the RFC part of M13 ---------------------------------------------

# Each named credential: the first value of a corpus kind that certainly is one of a format
# (pwh._core.boundary.secrets.certain_credential), read from the corpus so no feature file spells it out.
CREDENTIALS: dict[str, tuple[str, str]] = {
    "an Azure storage connection string": ("azure_connection_string", "azure_connection_string"),
    "an Azure shared access signature": ("azure_connection_string", "azure_sas_signature"),
    "an age secret key": ("age_secret_key", "age_secret_key"),
    "an Atlassian API token": ("atlassian_token", "atlassian_token"),
    "a Databricks token": ("databricks_token", "databricks_token"),
    "a Discord bot token": ("discord_bot_token", "discord_bot_token"),
    "a DigitalOcean token": ("digitalocean_token", "digitalocean_token"),
    "a Mailchimp key": ("mailchimp_key", "mailchimp_key"),
    "a Vault token": ("vault_token", "vault_token"),
    "an AWS access key": ("aws_access_key", "aws_access_key_id"),
    "a GitHub token": ("github_token", "github_token"),
    "a GitLab token": ("gitlab_token", "gitlab_token"),
    "a Slack token": ("slack_token", "slack_token"),
    "a Stripe secret key": ("stripe_key", "stripe_secret_key"),
    "an OpenAI key": ("openai_key", "openai_style_key"),
    "a Google API key": ("google_api_key", "google_api_key"),
    "a JSON web token": ("jwt", "jwt"),
    "a PyPI token": ("pypi_token", "pypi_token"),
    "an npm token": ("npm_token", "npm_token"),
    "a Hugging Face token": ("huggingface_token", "huggingface_token"),
    "a SendGrid key": ("sendgrid_key", "sendgrid_key"),
    "a Telegram bot token": ("telegram_bot_token", "telegram_bot_token"),
    "a private key with its key material": ("private_key", "private_key"),
    "a PGP private key with its key material": ("pgp_private_key", "private_key"),
    "a database URL with its password": ("secret_assignment", "url_password"),
    "a connection string with a password": ("secret_assignment", "connection_string_password"),
    "a Basic authorization header with its credentials": ("secret_assignment", "authorization_header"),
    "a bearer token": ("secret_assignment", "bearer"),
    "a GitHub token spelled with look-alike letters": ("confusable_in_token", "github_token"),
    "an AWS access key in full-width letters": ("fullwidth_token", "aws_access_key_id"),
    "an AWS access key with invisible characters": ("zero_width_in_token", "aws_access_key_id"),
}
_CREDENTIAL_RE = "|".join(map(re.escape, CREDENTIALS))
_CREDENTIAL_NOTE = "note"  # a key that names no secret: only the value's own format can give it away


def _certain(text: str) -> str | None:
    return next((k for k in map(certain_credential, forms(text)) if k is not None), None)


# A source identity's bound in pwh's receipt contract (pwh/schemas/source_receipt.json): a longer
# Todo identity is refused with the receipt, before any hook could be handed it.
IDENTITY_MAX = 128


@functools.cache
def credential_value(name: str, longest: int | None = None) -> str:
    """The first corpus value (of at most ``longest`` characters) the credential ``name`` stands
    for; KeyError when the corpus has none."""
    kind, certain = CREDENTIALS[name]
    for e in load_corpus():
        value = e["value"]
        if e["label"] != "private" or e["kind"] != kind or not isinstance(value, str):
            continue
        if (longest is None or len(value) <= longest) and _certain(value) == certain:
            return value
    raise KeyError(f"pwh's corpus has no {kind} value that is certainly a {certain}")


@given(
    parsers.re(
        rf'hook "(?P<hook_id>[a-z0-9_.]+)" is installed for an intent kind whose payload takes any JSON,'
        rf" and proposes (?P<name>{_CREDENTIAL_RE}) under a plain key"
    )
)
def open_payload_credential(world: World, hook_id: str, name: str) -> None:
    payload = {_CREDENTIAL_NOTE: credential_value(name)}
    world.sut.register_intent_kind(CORPUS_KIND, CORPUS_SCHEMA)
    rejections = world.install_body(
        hook_id,
        "proposes an intent of an open kind holding a credential",
        lambda i, _c: proposed(intent_for(i, payload, kind=CORPUS_KIND)),
        registration(hook_id, intent_kinds=[CORPUS_KIND]),
    )
    expect(
        not rejections,
        f"hook {hook_id} to install",
        f"rejected: {rejections[:1]}",
        rfc=("§4.composition-root", "§6.validated-before-call"),
    )


@when(parsers.re(rf"a committed receipt whose Todo identity is (?P<name>{_CREDENTIAL_RE}) is dispatched"))
def todo_identity_credential(world: World, name: str) -> None:
    world.dispatch_direct(source(1, todo_id=credential_value(name, IDENTITY_MAX)))


# -- RFC or pwh's reading, row by row ------------------------------------------------------------------
#
# An outline whose rows mix samples the RFC names (a credential, a path, a log line...) with samples
# only pwh reads as private (an auth scheme with no credential, the loopback name, an environment
# variable's name) says, in a column, how each row's outcome is judged: "as the RFC requires" runs
# the matrix's own RFC check, "by pwh's reading" the same check as profile.

_JUDGED = r"(?P<judged>as the RFC requires|by pwh's reading)"
_BY_READING = "by pwh's reading"
_READING = (
    "pwh refuses this value, which carries none of what the RFC names (a credential, an environment variable's"
    " value, a path, a URL, a private name, a transcript, a log), or this depth, past pwh's bound (§10 names no"
    " number): the refusal is pwh's reading"
)
_COMPACT_CODE = re.compile(r"[a-z][a-z0-9_]{0,63}")


def _last_outcome(world: World, hook_id: str) -> Any:
    found = world.hook_outcomes(hook_id)
    return found[-1] if found else None


def _recorded_intents(world: World, hook_id: str) -> list[Any]:
    return [i for r in world.records_for(hook_id) if r.get("status") == "proposed" for i in r.get("intents") or ()]


@then(parsers.re(rf'{_JUDGED}, hook "(?P<hook_id>[a-z0-9_.]+)" ends with failure code "(?P<code>[a-z_]+)"'))
def judged_failure(world: World, judged: str, hook_id: str, code: str) -> None:
    if judged != _BY_READING:
        _rfc_ends_with_code(world, hook_id, code)
        return
    outcome = _last_outcome(world, hook_id)
    seen = (getattr(outcome, "status", None), getattr(outcome, "failure_code", None))
    expect(seen == ("failed", code), f"hook {hook_id} refused with {code}", f"status {seen[0]}, failure code {seen[1]!r}", profile=_READING)


@then(parsers.re(rf'{_JUDGED}, hook "(?P<hook_id>[a-z0-9_.]+)" was never called'))
def judged_never_called(world: World, judged: str, hook_id: str) -> None:
    if judged != _BY_READING:
        _rfc_never_called(world, hook_id)
        return
    probe = world.hooks.get(hook_id)
    calls = probe.calls if probe else 0
    expect(calls == 0, f"hook {hook_id} never called", f"{calls} calls", profile=_READING)


@then(parsers.re(rf"{_JUDGED}, the sidecar journal holds no intent"))
def judged_no_intent(world: World, judged: str) -> None:
    if judged != _BY_READING:
        _rfc_no_intent(world)
        return
    intents = [i for r in world.journal() for i in r.get("intents") or ()]
    expect(not intents, "no intent in the sidecar journal", f"{len(intents)} intent(s)", profile=_READING)


# -- bounds and public values: what must hold whatever an implementation's reading -------------------


@then(parsers.parse('hook "{hook_id}" ends with its intent recorded or in a compact isolated failure'))
def accepted_or_isolated(world: World, hook_id: str) -> None:
    """Whatever an implementation's bounds or reading: a value it takes is recorded, a value it
    refuses ends the hook in a compact failure code with nothing recorded. An exception into the
    host would have failed the step before."""
    outcome = _last_outcome(world, hook_id)
    expect(
        outcome is not None,
        f"an outcome for hook {hook_id}",
        "the hook is absent from every dispatch outcome",
        rfc="§12.M04",
    )
    status, code = getattr(outcome, "status", None), getattr(outcome, "failure_code", None)
    intents = _recorded_intents(world, hook_id)
    taken = status == "proposed" and len(intents) == 1
    isolated = status == "failed" and isinstance(code, str) and _COMPACT_CODE.fullmatch(code) is not None and not intents
    expect(
        taken or isolated,
        f"hook {hook_id} recorded with its one intent, or failed with a compact code and nothing recorded",
        f"status {status}, failure code {code!r}, {len(intents)} recorded intent(s)",
        rfc=("§10.limits", "§10.failure-codes", "§12.M07"),
    )


@then(parsers.parse('hook "{hook_id}" ends with its intent recorded or in a compact isolated failure, the primary receipt unchanged'))
def bounded_and_isolated(world: World, hook_id: str) -> None:
    """§10 bounds what core takes without a number: at any bound, a deep value is recorded or fails
    the hook compactly, and the primary receipt and spend eligibility do not move (§12 M07)."""
    accepted_or_isolated(world, hook_id)
    _rfc_primary_unchanged(world)


@then(parsers.parse('by pwh\'s reading, hook "{hook_id}" ends with status "proposed", its one intent recorded'))
def kept_by_reading(world: World, hook_id: str) -> None:
    outcome = _last_outcome(world, hook_id)
    status = getattr(outcome, "status", None)
    intents = _recorded_intents(world, hook_id)
    expect(
        status == "proposed" and len(intents) == 1,
        f"hook {hook_id} proposed, its one intent recorded",
        f"status {status} ({getattr(outcome, 'failure_code', None)}), {len(intents)} recorded intent(s)",
        profile="pwh reads this value as public and this depth as within its bounds; an implementation that cannot"
        " prove it safe may refuse it (§7: 无法证明…安全，则不调用) and may bound depth lower (§10 names no number)",
    )
