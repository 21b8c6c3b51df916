"""The public-boundary scanner (SPEC §2 INP, JNL-6, M13): what it must find, what it must leave alone,
and that it can be pointed at anything, hostile objects included, without raising."""

from __future__ import annotations

import json
import string
import types
from typing import Any

import pytest
from faker import Faker
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pwh import BoundaryScanner, Finding
from pwh._core.boundary import CATEGORIES, MAX_DEPTH, CredentialValue, credential_values, is_clean, scan_value
from pwh._core.boundary.secrets import CERTAIN_KINDS, certain_credential
from pwh._core.boundary.text import _invisible, forms, normalise
from pwh._harness.boundary_corpus import load_corpus
from pwh._harness.text_scan import scan_text

HEX64 = "7f3a9c" * 10 + "0a1b"
PRIVATE = BoundaryScanner(private_names=["Acme Corp", "Zeta", "Øster"])


def categories(findings: list[Finding]) -> set[str]:
    return {f.category for f in findings}


# --------------------------------------------------------------------------------------------
# Each category: what it finds ...
# --------------------------------------------------------------------------------------------

POSITIVE: list[tuple[str, str]] = [
    # url
    ("url", "see https://wiki.acme.dev/page?id=3 for details"),
    ("url", "ftp://files.corp/pub/x"),
    ("url", "file:///etc/passwd"),
    ("url", "ssh://deploy@bastion/repo"),
    ("url", "s3://bucket-name/key"),
    ("url", "ws://10.0.0.1:8080/socket"),
    ("url", "custom+scheme://anything-at-all"),
    ("url", "visit www.acme-corp.com today"),
    ("url", "https://example.com/docs"),  # a reserved host is still a URL
    # email
    ("email", "contact alice.smith+tag@corp.example.io please"),
    ("email", "bob@example.com"),
    ("email", "Mail: a_b@sub.domain.org."),
    ("email", "git@github.com:org/repo.git"),
    # absolute_path
    ("absolute_path", "/usr/local/bin/python3"),
    ("absolute_path", "wrote /tmp/pwh-run/journal.jsonl"),
    ("absolute_path", 'path="/var/log/app"'),
    ("absolute_path", "cwd:/opt/app"),
    ("absolute_path", "(/etc/hosts)"),
    ("absolute_path", "C:\\Program Files\\App\\app.exe"),
    ("absolute_path", "D:/data/export.csv"),
    ("absolute_path", "\\\\fileserver\\share\\report.docx"),
    # home_dir
    ("home_dir", "~/projects/pwh"),
    ("home_dir", "see ~alice/notes.txt"),
    ("home_dir", "/home/alice/src"),
    ("home_dir", "/Users/bob/Library/Caches"),
    ("home_dir", "C:\\Users\\carol\\Desktop"),
    ("home_dir", "/root/.ssh/id_ed25519"),
    # credential
    ("credential", "AKIAIOSFODNN7EXAMPLE"),
    ("credential", "key id AKIAIOSFODNN7EXAMPLE in a sentence"),
    ("credential", "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6"),
    ("credential", "gho_" + "abcdefghijklmnopqrstuvwxyz0123456789"),  # all lowercase
    ("credential", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"),
    ("credential", "xoxb-123456789012-1234567890123-abcdefghijklmnop"),
    ("credential", "sk-proj-abc123DEF456ghi789JKL012mno345"),
    ("credential", "AIzaSyA-1234567890abcdefghijklmnopqrstu"),
    ("credential", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("credential", "-----BEGIN RSA PRIVATE KEY-----"),
    ("credential", "-----BEGIN OPENSSH PRIVATE KEY-----"),
    ("credential", "Authorization: Bearer abcdefghijklmnop"),
    ("credential", '"Authorization": "Basic dXNlcjpwYXNz"'),
    ("credential", "curl -H 'bearer 0123456789abcdef'"),
    ("credential", "password=hunter2"),
    ("credential", "api_key: 12345abcde"),
    ("credential", "secret=s3cr3t-value"),
    ("credential", "token=abc123"),
    ("credential", "DB_PASSWORD=correct-horse"),
    ("credential", '"client_secret": "xyz987"'),
    ("credential", '{"password": "correcthorsebatterystaple"}'),
    ("credential", "token: s3cr3t"),
    # ip_address
    ("ip_address", "10.0.0.1"),
    ("ip_address", "host 192.168.1.254 is down."),
    ("ip_address", "255.255.255.255"),
    ("ip_address", "bind 0.0.0.0:8080"),
    ("ip_address", "::1"),
    ("ip_address", "fe80::1ff:fe23:4567:890a%eth0"),
    ("ip_address", "2001:0db8:85a3:0000:0000:8a2e:0370:7334"),
    ("ip_address", "[2001:db8::1]:443"),
    ("ip_address", "::ffff:192.0.2.128"),
    # transcript
    ("transcript", "User: please fix the build"),
    ("transcript", "Assistant: Sure, here is the patch."),
    ("transcript", "System: You are a helpful assistant."),
    ("transcript", "Human: hi\nAI: hello"),
    ("transcript", "previous turn\n> User: quoted"),
    ("transcript", "<|im_start|>user\nhello<|im_end|>"),
    ("transcript", "[INST] summarise this [/INST]"),
    ("transcript", '{"role": "user", "content": "hi"}'),
    # raw_log
    ("raw_log", "Traceback (most recent call last):"),
    ("raw_log", '  File "app/main.py", line 12, in main'),
    ("raw_log", "2026-01-01 12:00:00,123 ERROR pwh.dispatch failed"),
    ("raw_log", "2026-08-26T00:00:00Z WARNING slow producer"),
    ("raw_log", "[2026-01-01 12:00:00] [INFO] started"),
    ("raw_log", "[ERROR] boom"),
    ("raw_log", "$ make test"),
    ("raw_log", "root@build-box:~# ls -la"),
    ("raw_log", "dev@host:/srv$ ./run"),
    ("raw_log", ">>> import os"),
    ("raw_log", "ValueError: invalid literal for int() with base 10"),
    ("raw_log", "producer failed with KeyError: 'x'"),
    # hostname
    ("hostname", "api.acme.io"),
    ("hostname", "db01.prod.internal"),
    ("hostname", "reach build.local over ssh"),
    ("hostname", "svc.corp"),
    ("hostname", "my-host.lan"),
    ("hostname", "OpenAI.com"),
    ("hostname", "ci.acme.cloud"),
    ("hostname", "www2.corp.co.uk"),
    # environment_value
    ("environment_value", "HOME=/root"),
    ("environment_value", "AWS_SECRET_ACCESS_KEY=abc"),
    ("environment_value", "export PWH_PRIVATE_NAMES=acme"),
    ("environment_value", "${HOME}/x"),
    ("environment_value", "cd $HOME"),
    ("environment_value", "%USERPROFILE%\\x"),
    ("environment_value", "PATH=/usr/bin:/bin"),
    ("environment_value", "${DB_HOST:-localhost}"),
]


@pytest.mark.parametrize(("category", "text"), POSITIVE)
def test_each_category_is_found(category: str, text: str) -> None:
    assert category in categories(scan_value(text)), text
    assert category in categories(scan_text(text)), text


@pytest.mark.parametrize(
    "text",
    [
        "Report for ACME corp, week 3",
        "acme   Corp",
        "zeta_goal_1",
        "owner: Zeta.",
        "ZETA",
        "øster-team",
        "bezeta and zeta",
    ],
)
def test_private_names_are_found_case_insensitively_as_whole_words(text: str) -> None:
    assert "private_name" in categories(PRIVATE.scan_value(text))
    assert "private_name" in categories(scan_text(text, PRIVATE))


# ... and the near misses each category must leave alone.
NEGATIVE: list[tuple[str, str]] = [
    ("url", "urn:pwh:schema:registration"),
    ("url", "https://json-schema.org/draft/2020-12/schema"),
    ("url", "http://json-schema.org/draft-07/schema#"),
    ("url", "the scheme:// prefix alone"),
    ("email", "loopx@2.1.1"),
    ("email", "@scope/package"),
    ("email", "user at example dot com"),
    ("absolute_path", "$.a/b"),
    ("absolute_path", "#/$defs/budget"),
    ("absolute_path", "1/2"),
    ("absolute_path", "and/or"),
    ("absolute_path", "read/write"),
    ("absolute_path", "./relative/path"),
    ("absolute_path", "src/pwh/_core/boundary/__init__.py"),
    ("absolute_path", "N/A"),
    ("absolute_path", "</div>"),
    ("absolute_path", "^[a-z]+/[a-z]+$"),
    ("home_dir", "~5 ms"),
    ("home_dir", "home directory"),
    ("home_dir", "Users guide"),
    ("credential", "pwh_" + HEX64),
    ("credential", "pwi_" + HEX64),
    ("credential", "sha256:" + HEX64),
    ("credential", HEX64),
    ("credential", "credential_values_recorded"),
    ("credential", "no credentials are recorded"),
    ("credential", "Bearer tokens are never stored"),
    ("credential", "token_budget"),
    ("credential", "the password policy"),
    ("credential", "password: null"),
    ("credential", "secret=***"),
    ("credential", "api_key: <redacted>"),
    ("credential", "risk-assessment-of-the-whole-pipeline-2026"),
    ("credential", "Authorization: granted separately by the executor"),
    ("credential", "Dict keys that name a secret: any real string value"),
    ("credential", "token: opaque"),
    ("ip_address", "2.1.1"),
    ("ip_address", "version 10.2.3"),
    ("ip_address", "1.2.3.4.5"),
    ("ip_address", "256.1.1.1"),
    ("ip_address", "12:00:00"),
    ("ip_address", "2026-08-26T00:00:00Z"),
    ("ip_address", "std::io::Result"),
    ("ip_address", "a::b"),
    ("transcript", "User stories"),
    ("transcript", "the user: someone"),
    ("transcript", "system prompt"),
    ("transcript", '"role": "reporter"'),
    ("raw_log", "error handling"),
    ("raw_log", "an ERROR code"),
    ("raw_log", "INFO"),
    ("raw_log", "Error: the step failed"),
    ("raw_log", "$.budget.timeout_ms"),
    ("raw_log", "cost is $ 5"),
    ("raw_log", "except BaseException:  # isolating the producer is the point"),
    ("hostname", "README.md"),
    ("hostname", "schema.json"),
    ("hostname", "run.py"),
    ("hostname", "loopx-2.1.1.md"),
    ("hostname", "pwh._core.boundary"),
    ("hostname", "periodic_report.runtime_trigger"),
    ("hostname", "a.reporter"),
    ("hostname", "example.com"),
    ("hostname", "docs.example.org"),
    ("hostname", "svc.test"),
    ("hostname", "x.invalid"),
    ("hostname", "host.example"),
    ("hostname", "e.g. this, i.e. that"),
    ("hostname", "logger.info('x') returns typing.IO[str]"),
    ("environment_value", "$schema"),
    ("environment_value", "$defs"),
    ("environment_value", "$.x"),
    ("environment_value", "M13"),
    ("environment_value", "x_y=1"),
    ("environment_value", "a == b"),
]


@pytest.mark.parametrize(("category", "text"), NEGATIVE)
def test_near_misses_are_not_flagged(category: str, text: str) -> None:
    assert category not in categories(scan_value(text)), text
    assert category not in categories(scan_text(text)), text


@pytest.mark.parametrize(
    "text", ["acme-corp", "acme_corp", "acme.corp", "AcmeCorp", "acmecorp", "team acme-corp-eu", "https://acmecorp.example/x"]
)
def test_a_declared_name_of_several_words_is_found_however_an_id_or_host_joins_them(text: str) -> None:
    """The separators ids and host names put between words (-, _, ., or none) hide no declared name."""
    assert "private_name" in categories(PRIVATE.scan_value({"customer": text}))
    assert "private_name" in categories(scan_text(text, PRIVATE))


@pytest.mark.parametrize("text", ["zetabyte", "bezeta", "Zetas", "acme", "corp", "oster", "acme corporation", "bigacme-corp"])
def test_private_names_do_not_match_inside_other_words(text: str) -> None:
    assert PRIVATE.scan_value(text) == []


def test_every_category_has_positive_and_negative_cases() -> None:
    listed = {c for c, _ in POSITIVE} | {"private_name"}
    assert listed == set(CATEGORIES) - {"unscannable"}
    assert {c for c, _ in NEGATIVE} | {"private_name"} == listed


# --------------------------------------------------------------------------------------------
# Zero false positives on the project's own public material.
# --------------------------------------------------------------------------------------------

PUBLIC_STRINGS = [
    "periodic_report.runtime_trigger",
    "periodic_report.trigger_evaluation",
    "loopx_post_writeback_hook_input_v0",
    "loopx_post_writeback_capability_hook_registration_v0",
    "pwh_post_writeback_sidecar_receipt_v0",
    "receipt_7f3a9c",
    "pwh_" + HEX64,
    "pwi_" + HEX64,
    "sha256:" + HEX64,
    "2026-08-26T00:00:00Z",
    "2026-08-26T00:00:00.123+02:00",
    "2.1.1",
    "loopx==2.1.1",
    "$.budget.timeout_ms",
    "$.intents[0].payload.segment_ref",
    "#/$defs/budget",
    "urn:pwh:schema:registration",
    "https://json-schema.org/draft/2020-12/schema",
    "^[a-z][a-z0-9_]*$",
    "^pwh_[0-9a-f]{64}$",
    "^sha256:[0-9a-f]{64}$",
    "^(?:[a-z0-9_]+\\.)*[a-z0-9_]+$",
    "input_boundary_rejected",
    "producer_timed_out",
    "pwh._core.boundary",
    "README.md",
    "features/m13_public_boundary.feature",
    "The dispatcher MUST NOT call a sink before separate governed admission.",
    "Hooks run in hook_id order; no hook sees another's result.",
    "A failed hook does not use up another hook's slot.",
    "Input must exclude task prose, prompts, logs, trajectories, transcripts, credentials, "
    "environment values, local paths and repository content.",
    "The journal stores bounded typed packets and compact failure codes only: no raw exception text.",
    "Budgets: per hook (invocations, intents, bytes, wall time) and per dispatch (profile ceilings).",
    "Retries reuse the dispatch identity; a bounded retry policy caps attempts at 3 of 5.",
    "no credentials",
    "Scenario Outline: a hook that times out is isolated",
    'Given hook "a.reporter" is installed and proposes one intent',
    'When the fake orchestrator commits a "todo_completed" writeback for Todo "todo_1"',
    "Then exactly 1 dispatch identity exists per admitted hook",
    "And the fake sink has 0 calls",
    "| hook_id          | outcome                 |",
    "| a.reporter       | producer_timed_out      |",
    "Feature: M13 public-boundary scan",
    "# language: en",
    "Background:",
    '"""',
    "ratio 1/2 and/or read/write; N/A",
    "Python 3.11, pytest 8.3, jsonschema 4.20 (version 10.2.3)",
    "timeout_ms: 250 (0.25 s), committed at 12:00:00",
]

REGISTRATION_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "urn:pwh:schema:registration",
    "title": "loopx_post_writeback_capability_hook_registration_v0",
    "description": "A hook registration: exact field set, bounded budget, isolate failure policy.",
    "type": "object",
    "additionalProperties": False,
    "required": ["schema_version", "hook_id", "capability_id", "phase", "budget", "failure_policy"],
    "properties": {
        "schema_version": {"const": "loopx_post_writeback_capability_hook_registration_v0"},
        "hook_id": {"type": "string", "pattern": "^[a-z][a-z0-9_]*(?:\\.[a-z][a-z0-9_]*)*$", "maxLength": 128},
        "capability_id": {"$ref": "#/$defs/token"},
        "phase": {"const": "post_writeback"},
        "event_kinds": {
            "type": "array",
            "items": {"enum": ["todo_completed", "replan_recorded"]},
            "minItems": 1,
            "uniqueItems": True,
        },
        "requested_read_scope": {"items": {"enum": ["settlement_identity", "bounded_event_projection"]}},
        "budget": {
            "type": "object",
            "properties": {
                "timeout_ms": {"type": "integer", "minimum": 1, "maximum": 60000},
                "max_result_bytes": {"type": "integer", "exclusiveMinimum": 0},
            },
        },
        "failure_policy": {"const": "isolate"},
        "password": {"type": "string", "description": "not a field, but a schema may name one"},
        "token": {"$ref": "#/$defs/token"},
        "committed_at": {"type": "string", "format": "date-time", "examples": ["2026-08-26T00:00:00Z"]},
    },
    "$defs": {"token": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"}},
    "$comment": "Draft 2020-12; see #/$defs/token for the id grammar.",
}

HOOK_INPUT: dict[str, Any] = {
    "schema_version": "loopx_post_writeback_hook_input_v0",
    "dispatch_id": "pwh_" + HEX64,
    "hook_id": "periodic_report.runtime_trigger",
    "capability_id": "periodic_report",
    "source": {
        "receipt_id": "receipt_7f3a9c",
        "effect_id": "effect_opaque",
        "step_kind": "durable_writeback",
        "goal_id": "goal_opaque",
        "agent_id": "agent_opaque",
        "todo_id": "todo_opaque",
        "turn_instance_id": "turn_opaque",
        "event_kind": "todo_completed",
        "state_revision": "revision_opaque",
        "committed_at": "2026-08-26T00:00:00Z",
    },
    "projection": {
        "schema_version": "loopx_post_writeback_event_projection_v0",
        "transition": "segment_completed",
        "fact_refs": ["fact_opaque"],
    },
    "boundary": {
        "raw_task_text_recorded": False,
        "raw_logs_recorded": False,
        "raw_trajectory_recorded": False,
        "raw_session_transcript_recorded": False,
        "credential_values_recorded": False,
        "absolute_paths_recorded": False,
    },
}


@pytest.mark.parametrize("text", PUBLIC_STRINGS)
def test_public_strings_are_clean(text: str) -> None:
    assert scan_value(text) == []
    assert scan_text(text) == []
    assert PRIVATE.scan_value(text) == []


def test_public_documents_are_clean() -> None:
    assert scan_value(REGISTRATION_SCHEMA) == []
    assert scan_value(HOOK_INPUT) == []
    assert is_clean(HOOK_INPUT)
    assert scan_text(json.dumps(REGISTRATION_SCHEMA, indent=2)) == []
    assert scan_text(json.dumps(HOOK_INPUT, indent=2)) == []
    assert scan_text("\n".join(PUBLIC_STRINGS)) == []


def test_frozen_hook_input_is_scanned_through_its_proxy() -> None:
    frozen = types.MappingProxyType({**HOOK_INPUT, "source": types.MappingProxyType({"goal_id": "bob@corp.io"})})
    assert scan_value(frozen) == [Finding("email", "$.source.goal_id")]
    assert scan_value(types.MappingProxyType(HOOK_INPUT)) == []


# --------------------------------------------------------------------------------------------
# Faker-made private values, embedded in prose and in nested JSON, are found at the right path.
# --------------------------------------------------------------------------------------------


@pytest.fixture
def fake() -> Faker:
    faker = Faker("en_US")
    faker.seed_instance(20260826)
    return faker


def _token(fake: Faker, prefix: str, alphabet: str, length: int) -> str:
    return prefix + "".join(fake.random.choice(alphabet) for _ in range(length))


def _fake_values(fake: Faker) -> list[tuple[str, str]]:
    """(category, private value) pairs, 12 of each kind."""
    alnum = string.ascii_letters + string.digits
    out: list[tuple[str, str]] = []
    for _ in range(12):
        user = fake.user_name()
        out += [
            ("email", fake.email()),
            ("url", fake.url()),
            ("ip_address", fake.ipv4()),
            ("ip_address", fake.ipv6()),
            ("absolute_path", fake.file_path(depth=fake.random_int(1, 4), absolute=True)),
            ("home_dir", f"/home/{user}/work"),
            ("home_dir", f"~{user}/notes.txt"),
            ("home_dir", f"C:\\Users\\{user}\\Desktop"),
            ("credential", _token(fake, "AKIA", string.ascii_uppercase + string.digits, 16)),
            ("credential", _token(fake, "ghp_", alnum, 36)),
            ("hostname", f"{fake.domain_word()}.{fake.random_element(['corp', 'internal', 'io', 'dev'])}"),
        ]
    return out


def test_faker_values_are_found_in_sentences_and_nested_json(fake: Faker) -> None:
    for category, value in _fake_values(fake):
        sentence = f"During the run ({value}) the hook proposed one intent."
        assert category in categories(scan_value(sentence)), value
        packet = {"intents": [{"payload": {"note": sentence, "segment_ref": "segment_opaque"}}], "ok": True}
        findings = scan_value(packet)
        assert Finding(category, "$.intents[0].payload.note") in findings, value
        assert {f.path for f in findings} == {"$.intents[0].payload.note"}, value
        lines = scan_text(f"Feature: x\n\n  Scenario: y\n    Given {sentence}\n")
        assert Finding(category, "line 4") in lines, value
        assert {f.path for f in lines} == {"line 4"}, value


def test_faker_names_are_found_when_declared_private(fake: Faker) -> None:
    names = [fake.name() for _ in range(20)]
    scanner = BoundaryScanner(private_names=names)
    for name in names:
        value = {"source": {"goal_id": "goal_opaque", "note": f"Prepared by {name}, reviewed."}}
        assert scanner.scan_value(value) == [Finding("private_name", "$.source.note")], name
        assert scanner.scan_value({"source": {"note": name.upper()}}) == [Finding("private_name", "$.source.note")]
    assert scan_value(f"Prepared by {names[0]}.") == []  # the default scanner has no deny-list


# --------------------------------------------------------------------------------------------
# Findings never repeat what they found; paths, ordering and the allow-list.
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("category", "value"), POSITIVE)
def test_findings_never_contain_the_offending_value(category: str, value: str) -> None:
    for packet in ({"note": value}, {value: "x"}, {"a": [{value: value}]}, [value]):
        findings = scan_value(packet)
        assert category in categories(findings)
        shown = repr(findings) + json.dumps([f.to_json() for f in findings])
        assert value not in shown


def test_findings_with_faker_values_never_contain_them(fake: Faker) -> None:
    for _, value in _fake_values(fake):
        findings = scan_value({value: {"nested": [value]}, "k": f"text {value} text"})
        assert findings
        assert value not in repr(findings)


def test_private_dict_keys_are_shown_as_a_placeholder() -> None:
    value = {"source": {"alice@corp.io": {"note": "ok"}, "Zeta": 1}}
    assert scan_value(value) == [Finding("email", "$.source[?]")]
    assert PRIVATE.scan_value(value) == [Finding("email", "$.source[?]"), Finding("private_name", "$.source[?]")]
    assert scan_value({"$schema": "x", "a b": "/etc/passwd"}) == [Finding("absolute_path", "$[?]")]
    assert scan_value({"$id": {"k": "/etc/passwd"}}) == [Finding("absolute_path", "$['$id'].k")]


def test_keys_that_name_secrets_or_environment_variables_flag_their_value() -> None:
    packet = {
        "password": "hunter2",
        "db_password": "x1",
        "Authorization": "opaque",
        "token": "abc",
        "HOME": "/root",
        "PWH_MODE": "fast",
        "secret": "",
        "api_key": "<redacted>",
        "access_token": None,
    }
    assert scan_value(packet) == [
        Finding("credential", "$.Authorization"),
        Finding("absolute_path", "$.HOME"),
        Finding("environment_value", "$.HOME"),
        Finding("home_dir", "$.HOME"),
        Finding("environment_value", "$.PWH_MODE"),
        Finding("credential", "$.db_password"),
        Finding("credential", "$.password"),
        Finding("credential", "$.token"),
    ]


def test_transcript_shaped_objects_are_found() -> None:
    messages = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"text": "x"}]}]}
    assert scan_value(messages) == [Finding("transcript", "$.messages[0]"), Finding("transcript", "$.messages[1]")]
    assert scan_value({"role": "reporter", "content": "x"}) == []
    assert scan_value({"role": "user"}) == []


def test_findings_are_deduplicated_and_sorted() -> None:
    value = {"b": ["10.0.0.1 and 10.0.0.2", "x"], "a": {"z": "bob@corp.io /etc/x", "y": "~/x"}}
    findings = scan_value(value)
    assert findings == [
        Finding("home_dir", "$.a.y"),
        Finding("absolute_path", "$.a.z"),
        Finding("email", "$.a.z"),
        Finding("ip_address", "$.b[0]"),
    ]
    assert findings == sorted(set(findings), key=lambda f: (f.path, f.category))
    assert scan_value(value) == findings  # deterministic, memo or not
    assert BoundaryScanner().scan_value(value) == findings


def test_the_memo_never_keeps_private_strings() -> None:
    scanner = BoundaryScanner()
    value = {"bob@corp.io": "10.0.0.1", "note": "segment_opaque.v2"}
    assert scanner.scan_value(value) == scanner.scan_value(value) == BoundaryScanner().scan_value(value)
    assert "bob@corp.io" not in scanner._memo and "bob@corp.io" not in scanner._key_memo
    assert "10.0.0.1" not in scanner._memo
    assert "segment_opaque.v2" in scanner._memo  # clean strings are what it is for


def test_text_paths_are_one_based_lines_and_crlf_safe() -> None:
    text = "Feature: x\r\n\r\n  Given a hook\r\nUser: hello\r\n/etc/passwd\n" + "\n" * 6 + "root@box:~# id"
    assert scan_text(text) == [
        Finding("email", "line 12"),  # root@box: an account on a machine, even without a dot
        Finding("raw_log", "line 12"),
        Finding("transcript", "line 4"),
        Finding("absolute_path", "line 5"),
    ]  # sorted by (path, category) as strings, like every finding list


def test_allow_list_exempts_exact_public_strings_only() -> None:
    scanner = BoundaryScanner(allow=["https://loopx.dev/rfc", "maintainers@loopx.dev", "/usr/bin/env"])
    assert scanner.scan_value("https://loopx.dev/rfc") == []
    assert scanner.scan_value("see https://loopx.dev/rfc.") == []
    assert scanner.scan_value({"contact": "maintainers@loopx.dev", "shebang": "#!/usr/bin/env python"}) == []
    assert "url" in categories(scanner.scan_value("https://loopx.dev/rfc/private-draft"))
    assert "email" in categories(scanner.scan_value("other@loopx.dev"))
    assert "hostname" in categories(scanner.scan_value("evil-loopx.dev"))
    assert "url" in categories(scan_value("https://loopx.dev/rfc"))  # only that scanner allows it


def test_finding_is_a_small_frozen_record() -> None:
    finding = Finding("email", "$.a")
    assert finding.to_json() == {"category": "email", "path": "$.a"}
    with pytest.raises(AttributeError):
        finding.path = "$.b"  # type: ignore[misc]
    assert set(CATEGORIES) >= {"unscannable"} and len(set(CATEGORIES)) == len(CATEGORIES)


def test_the_environment_deny_list_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PWH_PRIVATE_NAMES", "Zeta")
    assert scan_value("owner: Zeta") == []
    assert BoundaryScanner().scan_value("owner: Zeta") == []


# --------------------------------------------------------------------------------------------
# Never raises: arbitrary input, hostile objects, cycles and depth.
# --------------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_scan_value_never_raises_on_arbitrary_json(value: Any) -> None:
    findings = scan_value(value)
    assert all(f.category in CATEGORIES and f.path.startswith("$") for f in findings)
    assert findings == sorted(set(findings), key=lambda f: (f.path, f.category))
    assert PRIVATE.scan_value(value) is not None


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_scan_text_never_raises_on_arbitrary_text(text: str) -> None:
    findings = scan_text(text)
    lines = text.count("\n") + 1
    assert all(f.category in CATEGORIES and 1 <= int(f.path.split()[1]) <= lines for f in findings)
    assert scan_text(text, PRIVATE) is not None


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=string.printable, max_size=300))
def test_printable_noise_never_raises_and_findings_hide_it(text: str) -> None:
    findings = scan_value({"k": text})
    assert all(f.path == "$.k" for f in findings)


class Hostile:
    """Every dunder a scanner might touch records the call and raises."""

    calls: list[str] = []
    armed = False

    def _trip(self, name: str) -> Any:
        Hostile.calls.append(name)
        raise RuntimeError(f"hostile {name}")

    def __str__(self) -> str:
        return self._trip("__str__")

    def __repr__(self) -> str:
        return self._trip("__repr__")

    def __format__(self, spec: str) -> str:
        return self._trip("__format__")

    def __eq__(self, other: object) -> bool:
        return self._trip("__eq__")

    def __hash__(self) -> int:
        if Hostile.armed:
            return self._trip("__hash__")
        return 42

    def __len__(self) -> int:
        return self._trip("__len__")

    def __iter__(self) -> Any:
        return self._trip("__iter__")

    def __bool__(self) -> bool:
        return self._trip("__bool__")

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return self._trip("__class__")


class HostileDict(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        return Hostile()._trip("dict.items")

    def keys(self) -> Any:
        return Hostile()._trip("dict.keys")

    def __iter__(self) -> Any:
        return Hostile()._trip("dict.__iter__")

    def __getitem__(self, key: Any) -> Any:
        return Hostile()._trip("dict.__getitem__")


class HostileList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        return Hostile()._trip("list.__iter__")

    def __len__(self) -> int:
        return Hostile()._trip("list.__len__")

    def __getitem__(self, index: Any) -> Any:
        return Hostile()._trip("list.__getitem__")


class HostileStr(str):
    def __str__(self) -> str:
        return Hostile()._trip("str.__str__")

    def __hash__(self) -> int:
        if Hostile.armed:
            return Hostile()._trip("str.__hash__")
        return str.__hash__(self)

    def __eq__(self, other: object) -> bool:
        if Hostile.armed:
            return Hostile()._trip("str.__eq__")
        return str.__eq__(self, other)

    def lower(self) -> str:  # type: ignore[override]
        return Hostile()._trip("str.lower")


def test_hostile_objects_are_never_called() -> None:
    Hostile.calls.clear()
    Hostile.armed = False
    key = Hostile()
    value = {
        "a": Hostile(),
        "b": [Hostile(), {"c": Hostile()}],
        key: "bob@corp.io",  # inserted while hashing still works
        "d": HostileDict(note="/etc/passwd"),
        "e": HostileList(["10.0.0.1"]),
        "f": HostileStr("alice@corp.io"),
        HostileStr("role"): "user",
        "content": b"bytes are skipped",
        "g": (Hostile(), frozenset({"carol@corp.io"})),  # sets are not JSON: skipped unread
        "h": types.MappingProxyType({"i": "~/x"}),
    }
    Hostile.armed = True
    try:
        findings = scan_value(value)
        assert is_clean([Hostile(), Hostile()])
        assert PRIVATE.scan_value(value) == findings
        assert scan_text(Hostile()) == [Finding("unscannable", "line 0")]  # type: ignore[arg-type]
        odd_config: list[Any] = [Hostile(), "Zeta"]
        assert BoundaryScanner(private_names=odd_config, allow=odd_config[:1]).scan_value("Zeta") == [Finding("private_name", "$")]
    finally:
        Hostile.armed = False
    assert Hostile.calls == []
    assert findings == [
        Finding("transcript", "$"),
        Finding("absolute_path", "$.d.note"),
        Finding("ip_address", "$.e[0]"),
        Finding("email", "$.f"),
        Finding("home_dir", "$.h.i"),
        Finding("email", "$[?]"),
    ]


class HostileMeta(type):
    def __hash__(cls) -> int:
        return Hostile()._trip("meta.__hash__")

    def __eq__(cls, other: object) -> bool:
        return Hostile()._trip("meta.__eq__")

    def __instancecheck__(cls, instance: object) -> bool:
        return Hostile()._trip("meta.__instancecheck__")

    def __subclasscheck__(cls, subclass: type) -> bool:
        return Hostile()._trip("meta.__subclasscheck__")


class HostileByType(metaclass=HostileMeta):
    pass


def test_hostile_metaclasses_are_never_called() -> None:
    Hostile.calls.clear()
    value = {"a": HostileByType(), "b": [HostileByType(), "10.0.0.1"], "c": (HostileByType,)}
    assert scan_value(value) == [Finding("ip_address", "$.b[1]")]
    assert Hostile.calls == []


def test_cycles_are_reported_once_as_unscannable() -> None:
    loop: list[Any] = ["fine"]
    loop.append(loop)
    assert scan_value(loop) == [Finding("unscannable", "$[1]")]
    node: dict[str, Any] = {"x": "bob@corp.io"}
    node["self"] = node
    node["again"] = {"back": node}
    findings = scan_value(node)
    assert Finding("email", "$.x") in findings
    assert [f for f in findings if f.category == "unscannable"] in (
        [Finding("unscannable", "$.self")],
        [Finding("unscannable", "$.again.back")],
    )  # which back edge is met first is the walk's business; that there is exactly one is the contract


def test_shared_subtrees_are_not_cycles() -> None:
    shared = {"note": "segment_opaque"}
    assert scan_value({"a": shared, "b": [shared, shared]}) == []


def test_depth_is_bounded_without_recursion_errors() -> None:
    deep: Any = "bob@corp.io"
    for _ in range(MAX_DEPTH - 1):
        deep = [deep]
    assert scan_value(deep) == [Finding("email", "$" + "[0]" * (MAX_DEPTH - 1))]
    too_deep: Any = "x"
    for _ in range(50_000):
        too_deep = {"k": too_deep}
    findings = scan_value(too_deep)
    assert findings == [Finding("unscannable", "$" + ".k" * MAX_DEPTH)]


def test_long_hostile_strings_stay_fast() -> None:
    # Inputs built to make a careless regex backtrack quadratically; each must scan promptly.
    for text in ("a" * 20_000 + "@", "a." * 10_000, "/" * 20_000, ":" * 20_000, "1." * 10_000, "A_" * 10_000 + "="):
        scan_value(text)
        scan_text(text)


# The quick check (no paths, memoised) may only say "clean" where the full scan finds nothing.
_quick_texts = st.sampled_from(
    [
        "receipt_7f3a9c",
        "bob@example.com",
        "/home/alice/notes.md",
        "https://corp.example.com/x",
        "ghp_" + "a" * 36,
        "Quillmoor",
        "db01.internal.corp",
        "10.1.2.3",
        "report.publish",
        "user",
        "hello world",
        "",
        "x" * 300,
    ]
) | st.text(max_size=12)
_quick_keys = st.sampled_from(["note_ref", "token", "password", "role", "content", "HOME", "api_key", "a b", "Quillmoor", "x"]) | st.text(
    max_size=6
)
_quick_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _quick_texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_quick_keys, inner, max_size=3) | st.lists(inner, max_size=2).map(tuple),
    max_leaves=10,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_quick_values)
def test_the_quick_check_says_clean_only_where_the_full_scan_finds_nothing(value: Any) -> None:
    scanner = BoundaryScanner(private_names=["Quillmoor"])
    if scanner.quickly_clean(value):
        assert scanner.scan_value(value) == []


def test_the_quick_check_leaves_unusual_shapes_to_the_full_scan() -> None:
    scanner = BoundaryScanner()
    assert scanner.quickly_clean({"a": ["b", 1, None, {"c": 2.5}]})
    assert not scanner.quickly_clean({1: "x"})
    assert not scanner.quickly_clean(types.MappingProxyType({"a": "b"}))
    assert not scanner.quickly_clean({"role": "user", "content": "hi"})
    deep: Any = "x"
    for _ in range(40):
        deep = [deep]
    assert not scanner.quickly_clean(deep) and scanner.is_clean(deep)


def test_a_fine_grained_github_token_is_a_credential_in_any_text() -> None:
    """'github_pat_' holds no 'gh': the token-shape pre-check once missed it inside prose."""
    from pwh import BoundaryScanner

    token = "github_pat_11ABCDEFX0123456789_abcdefxyzklmnopqrstuvw0123456789ABCDEFIJKLMNOP"  # no "gh" in it
    scanner = BoundaryScanner()
    for text in (token, token.lower(), f"token {token} here", f"see {token.lower()}", f"a.{token.lower()}.b"):
        assert "credential" in [f.to_json()["category"] for f in scanner.scan_value(text)], text


# --------------------------------------------------------------------------------------------
# Certain credentials: the part of the scan an RFC check judges (§7, §9, §12 M13)
# --------------------------------------------------------------------------------------------

# Corpus kinds every value of which is a credential of a certain format, and the ones whose values
# are certain only where they spell the credential out (the rest of their values is a reading).
CERTAIN_CORPUS_KINDS = """
    age_secret_key atlassian_token aws_access_key azure_connection_string databricks_token
    digitalocean_token discord_bot_token github_token gitlab_token google_api_key google_oauth groq_key
    huggingface_token jwt linear_key mailchimp_key newrelic_key npm_token openai_key pypi_token
    sendgrid_key shopify_token slack_app_token slack_token square_token stripe_key telegram_bot_token
    token_format_variant token_in_text vault_token zero_width_in_token
""".split()
PARTLY_CERTAIN_CORPUS_KINDS = {"confusable_in_token", "fullwidth_token", "pgp_private_key", "private_key", "secret_assignment"}


def _certain(text: str) -> str | None:
    return next((k for k in map(certain_credential, forms(text)) if k is not None), None)


@pytest.mark.parametrize("kind", CERTAIN_CORPUS_KINDS)
def test_every_corpus_value_of_a_token_format_is_a_certain_credential(kind: str) -> None:
    values = [e["value"] for e in load_corpus() if e["kind"] == kind]
    assert values and all(_certain(v) for v in values), [v[:12] for v in values if not _certain(v)]


def test_only_the_corpus_credentials_are_certain() -> None:
    for e in load_corpus():
        value = e["value"]
        certain = _certain(value) if isinstance(value, str) else None
        if e["label"] == "legitimate" or e["kind"] not in set(CERTAIN_CORPUS_KINDS) | PARTLY_CERTAIN_CORPUS_KINDS:
            assert certain is None, (e["kind"], e["label"])
        if certain is not None:  # never a reading of its own: the scanner finds it as a credential too
            assert certain in CERTAIN_KINDS
            assert "credential" in categories(scan_value(value)), e["kind"]


CERTAIN_TEXTS: list[tuple[str, str]] = [
    ("azure_connection_string", "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + "Ab1+" * 22 + ";"),
    ("azure_sas_signature", "https://x.blob.core.windows.net/c?sv=2022-11-02&ss=b&sig=" + "Ab1%2B" * 6),
    ("age_secret_key", "AGE-SECRET-KEY-1" + "QX" * 29),
    ("atlassian_token", "ATATT3" + "xFf1" * 12),
    ("databricks_token", "dapi" + "0a1b" * 8),
    ("discord_bot_token", "M" + "a1B2" * 6 + ".d-Zc5U." + "Zz9" * 9),
    ("github_token", "use ghp_" + "a1B2" * 9 + " now"),
    ("aws_access_key_id", "AKIAJPJOMKEFOIUC3LGT"),
    ("private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq+abcdefgh\n-----END RSA PRIVATE KEY-----"),
    ("private_key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: x\n\nlQOYBFLxzJG2zYmKN1psY\n"),
    ("authorization_header", "Authorization: Basic dXNlcjpwYXNz"),
    ("bearer", "AUTHORIZATION: Bearer abc123def456ghi"),
    ("url_password", "postgres://svc:S3cret@db.example/main"),
    ("connection_string_password", "Server=db;User Id=sa;Password=Xy12!;"),
    ("stripe_secret_key", "rk_live_" + "a1B2" * 6),
]

# What the scanner flags as a credential but carries none, or carries one only by a reading.
NOT_CERTAIN_TEXTS = [
    "Authorization: Basic",
    "AUTHORIZATION: Bearer",
    "Authorization: Bearer <token>",
    "Authorization: Basic ${BASIC_AUTH}",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY----- follows",
    "password=hunter2",
    "api_key: 12345abcde",
    '"token": "abcdef"',
    "postgres://svc:${PG_PASSWORD}@db/main",
    "postgres://svc:***@db/main",
    "pk_live_" + "a1B2" * 6,  # Stripe's publishable key: public by design
    "AC" + "0a1b" * 8,  # a Twilio account id
    "key-" + "0a1b" * 8,  # a cache key as much as a Mailgun key
    "FDkSYTjp6jFBatLXtvTlXTvVruHLd7jcCgDYm1hh",  # random-looking, no format
    "sig=" + "Ab1%2B" * 6,  # a signature parameter of anything
]


@pytest.mark.parametrize(("kind", "text"), CERTAIN_TEXTS)
def test_a_certain_credential_is_named_by_its_format(kind: str, text: str) -> None:
    assert _certain(text) == kind
    assert credential_values({"note": text}) == [CredentialValue(kind, "$.note")]
    assert "credential" in categories(scan_value(text))


@pytest.mark.parametrize("text", NOT_CERTAIN_TEXTS)
def test_what_only_looks_like_a_credential_is_left_to_the_scanner(text: str) -> None:
    assert _certain(text) is None and credential_values([text]) == []
    assert "credential" in categories(scan_value(text))


def test_credential_values_walks_keys_lists_and_read_only_views_and_never_spells_a_value() -> None:
    token = "ghp_" + "a1B2" * 9
    value = {
        "a": ["fine", {"b": token}],
        token: "x",
        "db.acme.internal": ("AKIA" + "Q1W2E3R4T5Y6U7I8",),
        "c": types.MappingProxyType({"d": "Authorization: Basic dXNlcjpwYXNz"}),
        "e": {"f": "\u200b".join("AKIAJPJOMKEFOIUC3LGT")},  # invisible characters between its letters
        1: "xoxb-418697783992-2227493392513-rrnD5lucLyA6Iv9wRd843wq8",
    }
    found = credential_values(value)
    assert [c.to_json() for c in found] == [
        {"kind": "github_token", "path": "$.a[1].b"},
        {"kind": "authorization_header", "path": "$.c.d"},
        {"kind": "aws_access_key_id", "path": "$.e.f"},
        {"kind": "github_token", "path": "$[?]"},
        {"kind": "slack_token", "path": "$[?]"},
        {"kind": "aws_access_key_id", "path": "$[?][0]"},  # a private host as a key is withheld too
    ]
    published = json.dumps([c.to_json() for c in found])
    assert token not in published and "acme" not in published and "AKIA" not in published


def test_credential_values_never_calls_a_hostile_object_and_survives_cycles() -> None:
    Hostile.calls.clear()
    Hostile.armed = False
    loop: list[Any] = ["AKIAJPJOMKEFOIUC3LGT"]
    loop.append(loop)
    value = {"a": Hostile(), "b": HostileDict(t="AKIAJPJOMKEFOIUC3LGT"), "c": HostileStr("AKIAJPJOMKEFOIUC3LGT"), "d": loop}
    Hostile.armed = True
    try:
        found = credential_values(value)
    finally:
        Hostile.armed = False
    assert Hostile.calls == []
    assert [c.path for c in found] == ["$.b.t", "$.c", "$.d[0]"]


def test_placeholders_and_references_are_no_credential() -> None:
    for text in ("Server=db;Password=<redacted>;", "Server=db;Password=${DB_PASSWORD};", "redis://u:%REDIS_PASS%@cache/0"):
        assert _certain(text) is None, text


_credential_leaves = st.sampled_from([t for _k, t in CERTAIN_TEXTS] + NOT_CERTAIN_TEXTS)
_values_with_credentials = st.recursive(
    st.none() | st.integers() | st.text(max_size=20) | _credential_leaves,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8) | _credential_leaves, children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_values_with_credentials)
def test_a_certain_credential_is_always_a_scanner_finding_too(value: Any) -> None:
    """The RFC part of the scan never goes beyond the scan, so the reference, which refuses what its
    scanner finds, never journals what an RFC check forbids."""
    flagged = {f.path for f in scan_value(value) if f.category == "credential"}
    for found in credential_values(value):
        assert found.kind in CERTAIN_KINDS
        assert found.path in flagged or ("[?]" in found.path and flagged), (found, flagged)


def _normalised_char_by_char(text: str) -> str:
    """normalise() as its docstring defines it, one character at a time."""
    import unicodedata

    if text.isascii():
        return text
    out = "".join(ch for ch in unicodedata.normalize("NFKC", text) if not _invisible(ch))
    if not out.isascii():
        out = unicodedata.normalize("NFC", "".join(ch for ch in unicodedata.normalize("NFD", out) if not unicodedata.combining(ch)))
    return out


@settings(max_examples=400, deadline=None)
@given(st.text() | st.text(st.sampled_from("aA0-_ \u200b\u00ad\ufe0f\u0301\u034f\u2800\uff21\u0410\u00e9e\u202e")))
def test_normalise_removes_what_the_per_character_rule_removes(text: str) -> None:
    """normalise() asks once per distinct character; it must remove exactly what asking per character does."""
    assert normalise(text) == _normalised_char_by_char(text)
