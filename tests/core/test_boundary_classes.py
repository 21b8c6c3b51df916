"""The public-boundary scanner class by class (SPEC §2 INP, JNL-6, M13; RFC §7 keeps credential and
environment values, private names, paths, host names, addresses, transcripts and raw logs out of a
hook's input and the journal).

For each class of private value (key formats, token formats, credential shapes, look-alike spellings,
encodings, addresses, host names, paths, transcripts, logs, tokens cut in pieces) the scanner refuses
every spelling below, and for each class of public value that resembles one (versions, namespaced
ids, pagination cursors, scores and ratios, prose with slashes, upper-case codes, dotted ids under
a key naming an id, configuration, words after an auth scheme, readable encodings, field labels,
log settings) it lets every one through. A finding names the kind and where, never the value. The
classes come from the reliability repros r05 (private values that reached the journal) and r06
(legitimate values refused), written here in the project's terms; the shipped corpus measures each
class with examples of its own (pwh/corpus/boundary_classes.jsonl).
"""

from __future__ import annotations

import base64
import json
import time
from collections import Counter
from typing import Any

import pytest

from pwh import BoundaryScanner, Dispatcher, IntentKindCatalog, MemoryJournal, Profile, Registry, intent_id
from pwh._harness.boundary_corpus import load_corpus
from pwh._harness.examples import example_receipt, example_registration
from pwh._harness.text_scan import scan_text


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# --------------------------------------------------------------------------------------------
# Private values, by class: each is refused wherever a payload holds it
# --------------------------------------------------------------------------------------------

PRIVATE: dict[str, list[Any]] = {
    "a key that names a secret": [
        {"accessToken": "abcd1234efgh5678"},
        {"privateKey": "abcd1234efgh5678"},
        {"secretKey": "abcd1234efgh5678"},
        {"aws_session_token": "FwoGZXIvYXdzEBYaDexample"},
        {"credentials": "alice:hunter2"},
        {"password": ["hunter2"]},
        {"password": 48151623},
        {"Passwort": "geheim99"},
        {"contraseña": "clave2026"},
        {"mot_de_passe": "soleil7"},
        {"pincode": "4711"},
        {"token": "abcdef"},  # a lone word under a bare token key has a password's shape
        {"token": "x7Kp2mQ9vL"},
        {"token": 482913},  # a one-time code
        {"tokens": ["Zx81QmPa0Lr5"]},
        "token=abc123",
        '"token": "abcdef"',
        "pwd=hunter2 pass=hunter2",
    ],
    "a token of a known format": [
        {"v": "sk_live_4eC39HqLyjWDarjtT1zdp7dc"},
        {"v": "glpat-1a2b3c4d5e6f7g8h9i0j"},
        {"v": "ya29.a0AfH6SMBx7Qf1zK9example_token_value_123"},
        {"v": "GOCSPX-1a2B3c4D5e6F7g8H9i0JkLmNoPq"},
        {"v": "xapp-1-A0123456789-1234567890123-abcdef0123456789"},
        {"v": "npm_1234567890abcdefghijklmnopqrstuvwxyz"},
        {"v": "pypi-AgEIcHlwaS5vcmcCJGE0ZjM5YzA0LTQ1MzUtNDU3Yy1hYjVh"},
        {"v": "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"},
        {"v": "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"},
        {"v": "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"},
        {"v": "DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey=abc123+/def456=="},
        {"v": "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF"},
        {"v": "eyJhbGciOiJIUzI1NiJ9.eyAic3ViIjogIjEyMzQiIH0.abcdefgh"},
        {"v": "ASIA6LRZQOWIWS3COUHF"},  # a session key id: base32 after its prefix
    ],
    "a credential without its prefix or header": [
        {"v": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},  # an AWS secret access key: one digit
        "aws_secret_access_key " + "q9ZbXrTmWkLpHsNdYfVcJgQaEtRuIoPzKxBn/Mwx",
        {"v": "Basic YWxpY2U6aHVudGVyMg=="},
        "send it with basic " + _b64("svc_mirror:pa55word") + " please",
        {"v": "Bearer abcdefghijklmnopqrstuvwxyzABCDEF"},
        "use bearer GhTyUiOpLkJhGfDsAzXcVbNmQwErTy-_Pz for the mirror",
        "Token wXyZaBcDeFgHiJkLmNoPqRsTuV",
    ],
    "a look-alike spelling of a token": [
        {"v": "AKIA\u200bIOSFODNN7EXAMPLE"},
        {"v": "\u0410KIAIOSFODNN7EXAMPLE"},
        {"v": "ghp\u200b_1234567890abcdefghijklmnopqrstuvwxyz"},
        {"v": "https\u200b://intranet.acme.corp/wiki"},
    ],
    "an encoded private value": [
        {"v": "cGFzc3dvcmQ9aHVudGVyMg=="},  # base64 of a password assignment
        {"v": base64.urlsafe_b64encode(b"api_key=Zk29xLmq7").decode().rstrip("=")},
        {"v": "70617373776f72643d68756e746572733432"},  # hex of a password assignment
        {"v": _b64("/home/bob/.aws/credentials")},
        {"v": _b64("10.12.0.7")},
        {"v": "%2Fhome%2Falice%2F.ssh%2Fid_rsa"},
        {"v": "%252Fhome%252Fcarol%252Fnotes"},  # encoded twice
        {"v": "C%3A%5CUsers%5Cbob%5Cdesktop"},
        {"v": "open \\/var\\/lib\\/acme\\/db.sqlite"},  # JSON-escaped slashes
        {"v": "\\u002Fhome\\u002Fjane\\u002F.bashrc"},
    ],
    "an address": [
        {"v": "ip10.20.30.40"},
        {"v": "host192.168.7.31"},
        {"v": "srv10.8.0.1 is primary"},
        {"v": "ip-10-0-3-17"},
        {"v": "node-10.1.2.3"},
        {"v": "ip_172.31.0.9"},
        {"v": "peer=10.9.8.7"},
        {"v": "from 192.168.100.3 over vpn"},
        {"v": "fd00:1234::42"},
    ],
    "a host name": [
        {"v": "jump/bastion.acme.com"},
        {"v": "mirror/pkgs.globex.io"},
        {"v": "postgres.payments.svc"},
        {"v": "web.service.consul"},
        {"v": "root@db01"},
        {"v": "build01.acme.hk"},
        {"v": "vpn.acme.top"},
        {"ref": "build01.quillmoor.hk"},  # under a key naming a reference: still three labels
        {"ref": "db.globex.com"},  # still an original gTLD
    ],
    "a path": [
        {"v": "//fileserver01/share/alice/notes.txt"},
        {"v": "cfg;/etc/corp/secret.conf"},
        {"v": "dump>/var/lib/corp/db.sql"},
        {"v": "\uff0fhome\uff0falice\uff0f.ssh"},
        {"v": "saved to /srv"},
        {"v": "/.env"},
        {"v": "~bob/.netrc"},
    ],
    "a transcript": [
        {"v": "user: what is my password\nassistant: hunter2"},
        {"v": "human: hi there\nai: hello, how can I help?"},
        {"v": "### User:\nlist the servers\n### Assistant:\nhere they are"},
        {"v": "[user] what's the key?\n[assistant] it's in vault"},
        {"v": "<|user|>\nsummarise this<|end|>\n<|assistant|>"},
        {"v": "<start_of_turn>user\nhi<end_of_turn>"},
    ],
    "a raw log": [
        {"v": '{"level":"error","msg":"db down","ts":1}'},
        {"v": 'level=error msg="conn refused" ts=2026-03-01T10:00:00Z'},
        {"v": "Mar  1 10:00:01 buildbox sshd[2211]: Accepted publickey for deploy"},
        {"v": '- - [01/Mar/2026:10:00:00 +0000] "GET /admin HTTP/1.1" 403 512'},
        {"v": "ERROR:root:payment failed"},
        {"v": "E0301 10:00:00.123456    42 server.go:88] shard down"},
        {"v": "2026-03-01 10:00:00 error cache miss storm"},
        {"v": "2026/03/01 10:00:00 [error] 123#0: upstream timed out"},
        {"v": "panic: runtime error\n\ngoroutine 1 [running]:"},
        {"v": "closed\n\tat com.acme.Pool.get(Pool.java:42)"},
    ],
    "a token cut in pieces": [
        {"v": ["AKIAIOSF", "ODNN7EXAMPLE"]},
        {"AKIAIOSF": "ODNN7EXAMPLE"},
        {"v": ["xoxb-2847", "-39102-", "Qz8mLk3TnVb7WxYp1RsHd0Fg"]},
        {"v": ["sk_live_", "51HkT9aQ2bZ8xLm4Vn"]},
        {"glpat-": "Hk7Lm2Nq9Rs4Tv6Wx8Yz"},
    ],
}

# Receipt identities the receipt's grammar admits that carry a private value (refused at the source).
PRIVATE_RECEIPT_IDS = [
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "build01.acme.hk",
    "ip10.20.30.40",
    "postgres.payments.svc",
    "glpat-1a2b3c4d5e6f7g8h9i0j",
]

# --------------------------------------------------------------------------------------------
# Public values that look like private ones, by class: each passes
# --------------------------------------------------------------------------------------------

PUBLIC: dict[str, list[Any]] = {
    "a dotted id under a key naming an id": [
        {"ref": "tenant.us"},
        {"ref": "region.eu"},
        {"ref": "notify.app"},
        {"ref": "weekly.info"},
        {"ref": "stage.dev"},
        {"source_ref": "digest.app"},
        {"parentId": "sync.online"},
        {"refs": ["alpha.app", "beta.info"]},
    ],
    "a version": [
        {"ref": "release-1.2.3.4"},
        "firmware 2.4.1.7",
        "pkg==1.2.3.4",
        "v3.2.1.0",
        "1.2.3.4-beta",
        "app-2.3.4.5",
        "section 2.1.3.4 of the spec",
        "OID 1.3.6.1.4.1.311",
    ],
    "a namespaced id": [{"ref": "batch_7::2"}, "run_3::7", "grid-3::5", "tenant_4::shard_2", "std::vector<int>"],
    "a pagination cursor": [
        {"token": "page_2"},
        {"token": "cursor-41"},
        {"token": "END_OF_STREAM"},
        {"token": 7},
        {"token": "eyJwYWdlIjoyfQ"},  # base64 of {"page":2}
        {"tokens": ["page_1", "page_2"]},
        "token=page_5",
        "--token cursor_9",
        "next page: eyJvZmZzZXQiOjIwMH0sInNvcnQiOiJkZXNjIiwiZmlsdGVyIjoiYWN0aXZlIn0=",
    ],
    "a score or a ratio": [{"detail": "score ~3/5"}, "~7/10", "rated ~4/5 by reviewers", "ratio ~1:4"],
    "prose with a slash": [{"detail": "10 requests /s"}, {"detail": "pass and /or fail"}, "use /help for commands", "costs 5 USD /month"],
    "an upper-case code": [{"ref": "ASIAPACIFIC2026Q1REG"}, "ACCAEXAMSESSION2026B", "AIDAFESTIVAL2019ROME"],
    "configuration": [{"MAX_RETRIES": "3"}, {"detail": "MAX_RETRIES=3"}, {"tokens_per_second": 41.5}, {"tokenizer": "cl100k_base"}],
    "words after an auth scheme": ["Bearer tokens are refused", "Basic usage is described below", "Bearer AuthenticationScheme"],
    "a readable encoding": [_b64("weekly digest sent"), "hello%20world", "50% done", "da39a3ee5e6b4b0d3255bfef95601890afd80709"],
    "a field label or a role named in prose": [
        "user: anonymous\nrole: viewer",
        "users: 3, assistants: 2",
        "the assistant manager approved it",
    ],
    "a log setting": ['{"level": "info"}', "log level=info", "ERROR budget is fine"],
    "a token prefix named in prose": [["AKIA", "is an AWS prefix"], {"AKIA": "prefix"}, ["ASIA", "EUROPE", "AFRICA"]],
}

PUBLIC_RECEIPT_IDS = ["tenant.us", "notify.app", "release-1.2.3.4"]


def _cases(table: dict[str, list[Any]]) -> list[Any]:
    return [pytest.param(value, id=f"{cls}-{i}") for cls, values in table.items() for i, value in enumerate(values)]


def _texts(value: Any) -> list[str]:
    """The strings of ``value`` no finding may spell: every string value, and every key that is not
    a field name (a piece of a token: ``AKIAIOSF``, ``glpat-``); a key naming a secret
    (``accessToken``) is a field's name and shows in the path."""
    if isinstance(value, str):
        return [value] if len(value) >= 4 else []
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in ([] if k.isidentifier() and not k.isupper() else _texts(k)) + _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


@pytest.mark.parametrize("value", _cases(PRIVATE))
def test_a_private_value_is_refused_and_the_finding_names_its_kind_never_the_value(value: Any) -> None:
    findings = BoundaryScanner().scan_value(value)
    assert findings, value
    published = json.dumps([f.to_json() for f in findings], ensure_ascii=False)
    leaked = [t for t in _texts(value) if t in published]
    assert not leaked, leaked


@pytest.mark.parametrize("value", _cases(PUBLIC))
def test_a_public_value_that_looks_private_passes(value: Any) -> None:
    assert BoundaryScanner().scan_value(value) == []


def test_the_corpus_measures_every_class_with_examples_of_its_own() -> None:
    """The shipped corpus holds private and public examples of each class, three or more of each."""
    corpus = load_corpus()
    private_kinds = """key_format token_key_generated aws_secret_key auth_scheme_credential encoded_secret encoded_path
        ip_address_variant host_under_id_key hostname_variant path_variant transcript_variant raw_log_variant split_token""".split()
    public_kinds = """token_key_ordinary auth_scheme_prose encoding_public version_string_variant namespaced_id score_ratio
        prose_slash upper_case_code dotted_ref transcript_lookalike log_lookalike split_lookalike""".split()
    counts = Counter((e["label"], e["kind"]) for e in corpus)
    assert all(counts["private", k] >= 3 for k in private_kinds), counts
    assert all(counts["legitimate", k] >= 3 for k in public_kinds), counts


def test_new_rules_stay_linear_on_hostile_input() -> None:
    """Inputs built to make the class rules backtrack (decoding, addresses, transcripts, logs, split
    pieces, values under a token key): each scans promptly."""
    hostile = [
        "%2" * 30_000,
        "ip" + "1." * 20_000,
        "release-" + "1.2.3." * 10_000,
        "a::" * 20_000,
        "user: x\n" * 10_000,
        "[user] " * 20_000,
        '{"level":"info",' * 5_000,
        "level=info " * 10_000,
        "  at x(" * 10_000,
        "Basic " + "QUJD" * 20_000,
        "Bearer " + "aB" * 30_000,
        "~" * 50_000 + "/",
        "/a" * 30_000,
        "A" * 60_000 + "==",
        "\\u002f" * 10_000,
    ]
    started = time.monotonic()
    for text in hostile:
        BoundaryScanner().scan_value(text)
        scan_text(text)
    BoundaryScanner().scan_value({"token": "aB1-" * 10_000, "v": ["AKIA"] * 2_000})
    assert time.monotonic() - started < 20


# --------------------------------------------------------------------------------------------
# Through the dispatcher: what the repros did (one value of each class)
# --------------------------------------------------------------------------------------------

KIND = "x.note"


def _dispatcher() -> tuple[Registry, Dispatcher]:
    catalog = IntentKindCatalog()
    catalog.register(KIND, {"type": "object"})  # an open payload: only the boundary scan stands in the way
    registry = Registry(catalog)
    return registry, Dispatcher(registry, MemoryJournal(), Profile(phase_enabled=True))


def _proposing(payload: Any, operation: str = "note") -> Any:
    def provider(hook_input: Any) -> dict[str, Any]:
        did = hook_input["dispatch_id"]
        intent = {
            "schema_version": "loopx_post_writeback_intent_v0",
            "intent_id": intent_id(did, KIND, "v0", payload),
            "hook_id": hook_input["hook_id"],
            "capability_id": hook_input["capability_id"],
            "source_dispatch_id": did,
            "intent_kind": KIND,
            "operation": operation,
            "policy_version": "v0",
            "payload": payload,
            "budget": {"max_attempts": 1, "max_result_bytes": 1024},
            "requested_write_scope": [],
            "failure_policy": "isolate",
            "grants_new_action_authority": False,
            "external_write_performed": False,
        }
        return {"schema_version": "loopx_post_writeback_hook_result_v0", "status": "proposed", "intents": [intent]}

    return provider


def _one_per_class(table: dict[str, list[Any]]) -> list[Any]:
    """The first value of each class, as a payload (a bare value under a neutral key)."""
    return [pytest.param(values[0] if isinstance(values[0], dict) else {"detail": values[0]}, id=cls) for cls, values in table.items()]


@pytest.mark.parametrize("payload", _one_per_class(PRIVATE))
def test_a_private_payload_fails_its_hook_and_never_reaches_the_journal(payload: dict[str, Any]) -> None:
    registry, dispatcher = _dispatcher()
    try:
        registry.install(example_registration("a.hook", intent_kinds=[KIND]), _proposing(payload))
        hook = dispatcher.dispatch(example_receipt(1)).hooks[0]
        stored = json.dumps(dispatcher.journal.records(), ensure_ascii=False)
    finally:
        dispatcher.close()
    assert (hook.status, hook.failure_code) == ("failed", "result_contract_rejected")
    assert not [t for t in _texts(payload) if t in stored or t in str(hook.rejection)]


@pytest.mark.parametrize("payload", _one_per_class(PUBLIC))
def test_a_public_payload_is_recorded(payload: dict[str, Any]) -> None:
    registry, dispatcher = _dispatcher()
    try:
        registry.install(example_registration("a.hook", intent_kinds=[KIND]), _proposing(payload))
        hook = dispatcher.dispatch(example_receipt(1)).hooks[0]
    finally:
        dispatcher.close()
    assert hook.status == "proposed", hook.rejection


@pytest.mark.parametrize("receipt_id", PRIVATE_RECEIPT_IDS)
def test_a_receipt_whose_id_carries_a_private_value_is_refused_at_the_source(receipt_id: str) -> None:
    registry, dispatcher = _dispatcher()
    try:
        registry.install(example_registration("a.hook", intent_kinds=[KIND]), _proposing({"n": 1}))
        outcome = dispatcher.dispatch(example_receipt(1, receipt_id=receipt_id))
        records = dispatcher.journal.records()
    finally:
        dispatcher.close()
    assert not outcome.admitted and outcome.code == "source_rejected"
    assert receipt_id not in json.dumps(records)


@pytest.mark.parametrize("receipt_id", PUBLIC_RECEIPT_IDS)
def test_a_receipt_id_shaped_like_a_version_or_a_dotted_id_is_dispatched(receipt_id: str) -> None:
    registry, dispatcher = _dispatcher()
    try:
        registry.install(example_registration("a.hook", intent_kinds=[KIND]), _proposing({"n": 1}, operation="notify.app"))
        outcome = dispatcher.dispatch(example_receipt(1, receipt_id=receipt_id))
    finally:
        dispatcher.close()
    assert outcome.admitted and outcome.hooks[0].status == "proposed", outcome.hooks[0].rejection
