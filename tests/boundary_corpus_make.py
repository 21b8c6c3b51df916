"""Writes pwh/corpus/boundary.jsonl: the labelled corpus the reliability campaign measures the
public-boundary scanner on (``python tests/boundary_corpus_make.py``; deterministic).

Every value is synthetic: credentials are random strings of each format's shape (never real
ones), hosts are under invented names, people and paths are made up. Each entry is
``{"value", "label": "private"|"legitimate", "kind", "field"?, "expressible"?}``: ``field`` is the
key the value sits under (the scan sees ``{field: value}``); ``expressible: false`` marks a private
value no rule can tell from public text without refusing it too (reported, not held to 0 %).
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

R = random.Random(20261201)
UP, LO, DG = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UP + LO + DG
URLSAFE = ALNUM + "-_"
HEXL = "0123456789abcdef"
ORGS = ["acme", "zorgcorp", "quillmoor", "initech", "globex", "vandelay", "hooli", "soylent", "tyrell", "cyberdyne"]
USERS = ["alice", "bob", "carol", "dmitri", "eve", "farah", "gunnar", "hiro", "svc_backup", "deploy", "jenkins"]


def rs(alphabet: str, n: int) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def mixed(n: int) -> str:
    """n characters of upper, lower and digits, at least two of each (what real tokens look like)."""
    while True:
        s = rs(ALNUM, n)
        if sum(c.isupper() for c in s) >= 2 and sum(c.islower() for c in s) >= 2 and sum(c.isdigit() for c in s) >= 2:
            return s


out: list[dict] = []


def private(kind: str, value, field: str | None = None, expressible: bool = True) -> None:
    e = {"value": value, "label": "private", "kind": kind}
    if field is not None:
        e["field"] = field
    if not expressible:
        e["expressible"] = False
    out.append(e)


def legit(kind: str, value, field: str | None = None) -> None:
    e = {"value": value, "label": "legitimate", "kind": kind}
    if field is not None:
        e["field"] = field
    out.append(e)


# ---------------------------------------------------------------- token formats
_BASE32 = str.maketrans({"0": "Q", "1": "R", "8": "W", "9": "X"})

TOKENS: dict[str, list[str]] = {
    # AWS key ids are base32 (A-Z, 2-7) after the prefix; an ASIA... id with a 0, 1, 8 or 9 is a word, not a key.
    "aws_access_key": ["AKIA" + rs(UP + DG, 16) for _ in range(3)] + ["ASIA" + rs(UP + DG, 16).translate(_BASE32)],
    "github_token": [p + mixed(36) for p in ("ghp_", "gho_", "ghs_", "ghu_")] + ["github_pat_11" + rs(UP + DG, 20) + "_" + mixed(59)],
    "gitlab_token": ["glpat-" + rs(URLSAFE, 20) for _ in range(3)] + ["gldt-" + mixed(20), "glrt-" + mixed(20)],
    "slack_token": [
        f"xoxb-{rs(DG, 12)}-{rs(DG, 13)}-{mixed(24)}",
        f"xoxp-{rs(DG, 12)}-{rs(DG, 12)}-{rs(DG, 13)}-{rs(HEXL, 32)}",
        f"xoxa-2-{rs(DG, 12)}-{mixed(24)}",
    ],
    "slack_app_token": [f"xapp-1-A{rs(UP + DG, 10)}-{rs(DG, 13)}-{rs(HEXL, 64)}" for _ in range(3)],
    "stripe_key": ["sk_live_" + mixed(24), "sk_test_" + mixed(24), "rk_live_" + mixed(24), "sk_live_" + mixed(99), "whsec_" + mixed(32)],
    "google_api_key": ["AIza" + rs(URLSAFE, 35) for _ in range(3)],
    "google_oauth": [
        "GOCSPX-" + rs(URLSAFE, 28),
        "GOCSPX-" + rs(URLSAFE, 28),
        "ya29." + rs(URLSAFE, 120),
        "ya29.a0" + rs(URLSAFE, 80),
        "1//0" + rs(URLSAFE, 99),
    ],
    "npm_token": ["npm_" + mixed(36) for _ in range(4)],
    "pypi_token": ["pypi-AgEIcHlwaS5vcmc" + rs(URLSAFE, 120), "pypi-AgENdGVzdC5weXBpLm9yZw" + rs(URLSAFE, 90), "pypi-" + rs(URLSAFE, 80)],
    "huggingface_token": ["hf_" + rs(UP + LO, 34), "hf_" + mixed(34), "hf_" + mixed(37), "api_org_" + mixed(34)],
    "sendgrid_key": ["SG." + rs(URLSAFE, 22) + "." + rs(URLSAFE, 43) for _ in range(3)],
    "telegram_bot_token": [f"{rs(DG, 10)}:AA{rs(URLSAFE, 33)}", f"{rs(DG, 9)}:AA{rs(URLSAFE, 33)}", f"{rs(DG, 8)}:AA{rs(URLSAFE, 33)}"],
    "azure_connection_string": [
        f"DefaultEndpointsProtocol=https;AccountName={R.choice(ORGS)}store;AccountKey={rs(ALNUM + '+/', 86)}==;EndpointSuffix=core.windows.net",
        f"Endpoint=sb://{R.choice(ORGS)}-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={rs(ALNUM + '+/', 43)}=",
        f"AccountName={R.choice(ORGS)}data;AccountKey={rs(ALNUM + '+/', 86)}==",
        f"BlobEndpoint=https://x.blob;SharedAccessSignature=sv=2022-11-02&ss=b&srt=sco&sp=rl&sig={rs(ALNUM, 43)}%3D",
    ],
    "pgp_private_key": [
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF" + rs(ALNUM + "+/", 60) + "\n-----END PGP PRIVATE KEY BLOCK-----",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----",
        "key material follows: -----BEGIN PGP PRIVATE KEY BLOCK----- Version: x",
    ],
    "private_key": [
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + rs(ALNUM + "+/", 60),
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "-----BEGIN EC PRIVATE KEY-----",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----",
    ],
    "jwt": ["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI" + rs(URLSAFE, 30) + "." + rs(URLSAFE, 43) for _ in range(3)],
    "openai_key": ["sk-proj-" + rs(URLSAFE, 48) + "T3BlbkFJ" + mixed(20), "sk-" + mixed(48), "sk-ant-api03-" + rs(URLSAFE, 93) + "AA"],
    "twilio_key": ["SK" + rs(HEXL, 32), "AC" + rs(HEXL, 32)],
    "mailchimp_key": [rs(HEXL, 32) + "-us" + str(R.randint(1, 20)) for _ in range(2)],
    "discord_bot_token": [
        "M" + rs(URLSAFE, 23) + "." + rs(URLSAFE, 6) + "." + rs(URLSAFE, 27),
        "N" + rs(URLSAFE, 25) + "." + rs(URLSAFE, 6) + "." + rs(URLSAFE, 27),
    ],
    "square_token": ["sq0csp-" + rs(URLSAFE, 43), "sq0atp-" + rs(URLSAFE, 22), "EAAA" + "-" + rs(URLSAFE, 60)],
    "digitalocean_token": ["dop_v1_" + rs(HEXL, 64), "doo_v1_" + rs(HEXL, 64)],
    "shopify_token": ["shpat_" + rs(HEXL, 32), "shpss_" + rs(HEXL, 32)],
    "atlassian_token": ["ATATT3xFfGF0" + rs(URLSAFE, 180)],
    "mailgun_key": ["key-" + rs(HEXL, 32)],
    "vault_token": ["hvs." + rs(URLSAFE, 90), "hvs." + mixed(24)],
    "databricks_token": ["dapi" + rs(HEXL, 32)],
    "age_secret_key": ["AGE-SECRET-KEY-1" + rs(UP + DG, 58)],
    "linear_key": ["lin_api_" + mixed(40)],
    "groq_key": ["gsk_" + mixed(52)],
    "newrelic_key": ["NRAK-" + rs(UP + DG, 27)],
    "unprefixed_random_secret": [mixed(40), mixed(48), rs(ALNUM + "+/", 43) + "=", mixed(64)],
}
for kind, values in TOKENS.items():
    for v in values:
        private(kind, v)
# ... and each inside text.
for kind in (
    "aws_access_key",
    "github_token",
    "slack_token",
    "stripe_key",
    "npm_token",
    "huggingface_token",
    "sendgrid_key",
    "google_oauth",
    "gitlab_token",
    "telegram_bot_token",
    "pypi_token",
    "jwt",
):
    v = TOKENS[kind][0]
    private("token_in_text", R.choice([f"the hook used {v} to call out", f"credential={v}", f"({v})", f'"{v}"', f"key: {v}."]))

# evasion by spelling: zero-width, format characters, confusables, full width
ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
CONF = {
    "A": "\u0410",
    "K": "\u039a",
    "I": "\u0406",
    "o": "\u043e",
    "p": "\u0440",
    "a": "\u0430",
    "e": "\u0435",
    "c": "\u0441",
    "x": "\u0445",
    "S": "\u0405",
    "T": "\u0422",
    "y": "\u0443",
    "i": "\u0456",
    "O": "\u041e",
    "E": "\u0395",
    "H": "\u041d",
}
for base in (
    TOKENS["aws_access_key"][0],
    TOKENS["github_token"][0],
    TOKENS["slack_token"][0],
    TOKENS["stripe_key"][0],
    TOKENS["npm_token"][0],
    TOKENS["huggingface_token"][0],
    TOKENS["google_api_key"][0],
    TOKENS["sendgrid_key"][0],
):
    k = R.randint(2, 6)
    private("zero_width_in_token", base[:k] + R.choice(ZW) + base[k:])
    private("zero_width_in_token", "".join(c + (R.choice(ZW) if i % 5 == 4 else "") for i, c in enumerate(base)))
    idx = [i for i, c in enumerate(base) if c in CONF][:2]
    conf = "".join(CONF[c] if i in idx else c for i, c in enumerate(base))
    if conf != base:
        private("confusable_in_token", conf)
for base in (TOKENS["aws_access_key"][1], TOKENS["github_token"][1], "password=" + mixed(12)):
    private("fullwidth_token", "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in base))
private("confusable_in_token", "-----BEGIN RSA PRIV\u0410TE KEY-----")
private("confusable_in_token", "xo\u0445b-" + rs(DG, 12) + "-" + rs(DG, 13) + "-" + mixed(24))

# ---------------------------------------------------------------- secrets under secret-named keys
KEYS = [
    "stripeKey",
    "githubToken",
    "csrf_token",
    "API-KEY",
    "x-api-key",
    "X-Api-Key",
    "clientSecret",
    "ClientSecret",
    "client_secret",
    "passwd",
    "pwd",
    "private_key",
    "privateKey",
    "auth_token",
    "authToken",
    "AUTH_TOKEN",
    "bearer",
    "session_id",
    "sessionToken",
    "password",
    "Password",
    "DB_PASSWORD",
    "dbPass",
    "db_pass",
    "secretAccessKey",
    "aws_secret_access_key",
    "accessToken",
    "refresh_token",
    "id_token",
    "X-Auth-Token",
    "Proxy-Authorization",
    "connectionString",
    "conn_str",
    "signingKey",
    "encryption_key",
    "master_key",
    "webhookSecret",
    "appSecret",
    "oauth_token",
    "cookie",
    "Set-Cookie",
    "credentials",
    "passphrase",
    "otp",
    "pin",
    "jwt",
    "apikey",
    "SECRET",
    "privKey",
    "ssh_key",
    "api.key",
    "Api Key",
    "user_password",
    "adminPassword",
    "mysqlRootPassword",
    "gpg_passphrase",
    "sasToken",
    "dsn",
    "license_key",
    "recovery_codes",
]
for key in KEYS:
    private(
        "secret_key_spelling",
        R.choice([rs(LO, 10), rs(LO + DG, 14), "hunter" + rs(DG, 2), mixed(20), "correct-horse-" + rs(LO, 5)]),
        field=key,
    )
private("secret_key_spelling", "s3cr3t", field="p\u0430ssword")  # confusable in the key
private("secret_key_spelling", "s3cr3t", field="pass\u200bword")  # zero width in the key
private("secret_number", 482913, field="pin")
private("secret_number", 20261201, field="password")
private("secret_number", 31415926535, field="apiKey")
private("secret_number", 0.5772156649, field="client_secret")
private("secret_list", ["k1" + mixed(12), "k2" + mixed(12)], field="api_keys")
private("secret_list", [rs(LO, 8), rs(LO, 8)], field="recoveryCodes")
private("secret_list", [123456, 654321], field="backup_codes")
private("secret_list", ["hunter2"], field="passwords")
private("secret_nested", {"user": "svc", "secret": rs(LO, 10)}, field="credentials")
private("secret_nested", {"primary": {"value": mixed(16)}}, field="apiKey")
private("secret_nested", {"db": [rs(LO, 9)]}, field="secrets")
private("secret_nested", {"value": 9981}, field="otp")

# ---------------------------------------------------------------- secret assignments in text
for text in [
    f"password={mixed(10)}",
    f"apiKey: '{mixed(16)}'",
    f'"client_secret": "{rs(LO, 12)}"',
    f"--token {mixed(18)}",
    f"--password={rs(LO, 8)}9",
    f"X-Api-Key: {mixed(20)}",
    f"export GITHUB_TOKEN={mixed(30)}",
    f"DB_PASS={rs(LO, 6)}1",
    f"Server=db;User Id=sa;Password={rs(LO, 8)}!1;",
    f"auth_token => '{mixed(14)}'",
    f"PWD := {rs(LO, 9)}7",
    f"Authorization: Bearer {mixed(30)}",
    f"authorization: Basic {rs(ALNUM, 20)}=",
    f"curl -H 'X-Auth-Token: {mixed(24)}'",
    f"mysql://root:{rs(LO, 8)}@db/app",
    f"postgres://svc:{mixed(12)}@10.1.2.3:5432/main",
    f"sessionId={rs(HEXL, 32)}",
    f"Cookie: session={mixed(24)}",
    f"clientSecret={mixed(16)}",
]:
    private("secret_assignment", text)

# ---------------------------------------------------------------- paths
for v in [
    "/etc/passwd",
    "/var/lib/acme/db.sqlite",
    "wrote /tmp/pwh-run/x.jsonl",
    "see (/opt/app/bin)",
    "path='/srv/data'",
    "/usr/local/bin/python3",
]:
    private("absolute_path", v)
for v in [
    "cat</etc/shadow",
    "out>/var/log/acme/run.log",
    "cd;/opt/quillmoor/bin",
    "moved \u2192/srv/backup/2026",
    "\u00ab/etc/hosts\u00bb",
    "x&/usr/share/acme",
    "loaded^/opt/app/conf",
    "\u201c/var/tmp/dump\u201d",
]:
    private("mid_text_path", v)
for v in ["C:\\Program Files\\Acme\\acme.exe", "D:/builds/release/out.zip", "e:\\data\\export.csv", "saved to C:\\Windows\\Temp\\x.log"]:
    private("windows_path", v)
for v in [
    "\\\\fileserver\\share\\report.docx",
    "\\\\nas01\\backups",
    "//fileserver/share/report.docx",
    "\\\\?\\C:\\very\\long\\path",
    "\\\\.\\pipe\\acme_ipc",
    "see \\\\\\\\srv01\\\\share\\\\x (escaped)",
    "open \\\\corp-fs\\home$\\alice",
    "\\Windows\\System32\\drivers",
]:
    private("unc_path", v)
for v in [
    "~/projects/acme",
    "~alice/notes.txt",
    "/home/dmitri/src",
    "/Users/farah/Library/Caches",
    "C:\\Users\\hiro\\Desktop",
    "/root/.ssh/id_ed25519",
]:
    private("home_dir", v)

# ---------------------------------------------------------------- hosts
for v in [
    f"ci.{R.choice(ORGS)}.systems",
    f"build.{R.choice(ORGS)}.engineering",
    f"vault.{R.choice(ORGS)}.tools",
    f"grafana.{R.choice(ORGS)}.zone",
    f"db01.prod.{R.choice(ORGS)}.software",
    f"api.{R.choice(ORGS)}.network",
    f"jira.{R.choice(ORGS)}.works",
    f"git.{R.choice(ORGS)}.host",
    f"mx.{R.choice(ORGS)}.email",
    f"{R.choice(ORGS)}-corp.systems",
    f"{R.choice(ORGS)}.de",
    f"{R.choice(ORGS)}.co.jp",
    f"{R.choice(ORGS)}.com.au",
    f"runner-7.{R.choice(ORGS)}.xyz",
    f"metrics.{R.choice(ORGS)}.online",
    f"sso.{R.choice(ORGS)}.digital",
    f"reach ci.{R.choice(ORGS)}.services today",
    f"build.{R.choice(ORGS)}.com",
    f"{R.choice(ORGS)}.com",
    f"CI.{R.choice(ORGS).upper()}.NET",
    "db01.tyrell.com.",
    f"xn--{rs(LO, 5)}-{rs(LO, 3)}.xn--p1ai",
]:
    private("hostname_psl", v)
for v in [
    "alerts.internal",
    "db01.prod.internal",
    "printer.local",
    "build.lan",
    "svc.corp",
    "nas.home.arpa",
    "wiki.intranet",
    "router.localdomain",
    "localhost",
    "http_server on localhost:8080",
    "LOCALHOST",
]:
    private("hostname_private_use", v)
for v in ["deploy@buildbox", "root@ci-runner-3", "alice@laptop", "svc_backup@nas01", "ssh jenkins@bastion", "git@forge:acme/app"]:
    private("user_at_host", v)
for v in ["alice.smith@quillmoor.io", "bob+tag@hooli.xyz", "ops@acme.internal", "contact: eve@globex.systems"]:
    private("email", v)
for v in [
    "https://wiki.acme.systems/page?id=3",
    "ftp://files.quillmoor.corp/pub",
    "s3://acme-private/dump.sql",
    "ssh://deploy@bastion/repo",
    "visit www.hooli.online",
]:
    private("url", v)
for v in [
    "10.0.0.1",
    "host 192.168.1.254 is down",
    "scan 10.0.0.1-10.0.0.9",
    "fe80::1ff:fe23:4567:890a%eth0",
    "2001:db8:85a3::8a2e:370:7334",
    "[::1]:8443",
]:
    private("ip_address", v)
for v in [
    "HOME=/root",
    "export PWH_PRIVATE_NAMES=acme",
    "PATH=/usr/bin:/bin",
    "${HOME}/x",
    "cd $HOME",
    "%USERPROFILE%\\x",
    "USER=dmitri",
    "export FOO_MODE=1",
    "AWS_REGION=eu-west-1",
]:
    private("environment_value", v)
for v in [
    "User: please fix the build",
    "Assistant: here is the patch",
    '{"role": "user", "content": "hi"}',
    "<|im_start|>user\nhello<|im_end|>",
    "[INST] summarise [/INST]",
]:
    private("transcript", v)
private(
    "transcript", [{"role": "user", "content": "what is the build status?"}, {"role": "assistant", "content": "green"}], field="messages"
)
for v in [
    "Traceback (most recent call last):",
    '  File "app/main.py", line 12, in main',
    "2026-01-01 12:00:00,123 ERROR dispatch failed",
    "[ERROR] boom",
    "root@build-box:~# ls -la",
    "ValueError: invalid literal for int() with base 10",
]:
    private("raw_log", v)
# No rule can tell these from public prose without refusing public prose too.
private("hostname_in_prose", f"deploy to {R.choice(ORGS)}.consulting tonight", expressible=False)  # reads as a dotted id
private("secret_in_prose", "my password is swordfish", expressible=False)
private("secret_in_prose", "use the word bluebird to log in", expressible=False)
private("undeclared_private_name", "Project Bluefin kickoff", expressible=False)
private("undeclared_private_name", "prepared by Dmitri Volkov", expressible=False)


# ---------------------------------------------------------------- legitimate: typed opaque ids
def HEX() -> str:
    return rs(HEXL, 64)


for v in [
    "billing.report",
    "weekly.digest",
    "periodic_report.trigger_evaluation",
    "periodic_report.runtime_trigger",
    "notify.app",
    "sync.cloud",
    "report.dev",
    "status.info",
    "deploy.live",
    "digest.email",
    "metrics.world",
    "alerts.team",
    "cache.tools",
    "plan.review",
    "quota.systems",
    "a.reporter",
    "report.site",
    "summary.news",
    "ops.digital",
    "task.run",
    "feed.page",
    "segment.report.v2",
    "audit.trail",
    "billing.report.monthly",
    "receipt.id",
    "opt.in",
    "user.me",
    "job.at",
    "hook.name",
    "trigger.co_op",
    "bench.follow_up",
    "pwh.smoke",
    "x",
]:
    legit("opaque_id_dotted", v, field="hook_id")
for v in ["periodic_report.trigger_evaluation", "report.publish", "digest.weekly", "billing.report", "bench.follow_up", "alert.page"]:
    legit("opaque_id_dotted", v, field="intent_kind")
for v in ["follow_up", "schedule.report", "notify.team"]:
    legit("opaque_id_dotted", v, field="operation")
for v in ["v0", "v1", "policy.v2", "weekly.v3"]:
    legit("opaque_id_dotted", v, field="policy_version")
for v in ["periodic_report", "billing", "weekly_digest", "a_capability"]:
    legit("opaque_id_token", v, field="capability_id")
for v in ["todo_completed", "replan_recorded"]:
    legit("opaque_id_token", v, field="event_kind")
for v in ["loopx_post_writeback_hook_input_v0", "loopx_post_writeback_intent_v0"]:
    legit("opaque_id_token", v, field="schema_version")
for field, v in [
    ("receipt_id", "rcpt:2026-08-26:0042"),
    ("receipt_id", "Receipt-7F3A"),
    ("receipt_id", "receipt_7f3a9c"),
    ("receipt_id", "01HZX3K9Q2V8T6M4N7P5R2S1A0"),
    ("receipt_id", "3f2b8c1e-9d4a-4e6f-8b7c-2a1d0e9f8c7b"),
    ("effect_id", "effect.2026.08.26"),
    ("effect_id", "eff-000042"),
    ("goal_id", "goal:weekly.report"),
    ("agent_id", "agent_0001"),
    ("agent_id", "Agent-7"),
    ("todo_id", "todo-42.v2"),
    ("todo_id", "T-0042"),
    ("turn_instance_id", "turn:abc:1"),
    ("turn_instance_id", "turn_0042.retry_1"),
    ("state_revision", "rev.2026.08.26"),
    ("state_revision", "r42"),
    ("state_revision", "v1.2.3"),
    ("segment_ref", "segment_0001"),
    ("segment_ref", "seg:billing.report"),
    ("fact_refs", ["fact:metric.latency", "fact_0042"]),
    ("fact_refs", ["f.1", "f.2"]),
    ("source_receipt_id", "receipt_0042"),
    ("goal_id", "G-2026-Q3"),
    ("todo_id", "todo.weekly.digest"),
]:
    legit("opaque_ref", v, field=field)
for field, v in [
    ("dispatch_id", "pwh_" + HEX()),
    ("dispatch_id", "pwh_" + HEX()),
    ("source_dispatch_id", "pwh_" + HEX()),
    ("intent_id", "pwi_" + HEX()),
    ("intent_id", "pwi_" + HEX()),
    ("result_digest", "sha256:" + HEX()),
]:
    legit("opaque_digest", v, field=field)
for v in ["2026-08-26T00:00:00Z", "2026-08-26T12:30:45.123456Z"]:
    legit("opaque_timestamp", v, field="committed_at")

# ---------------------------------------------------------------- legitimate: free data
for v in [
    "v1.2.3",
    "2.1.1",
    "1.0.0-rc.1",
    "v2.0.0-beta.3+build.7",
    "release-2026.08",
    "10.2",
    "python3.11",
    "loopx==2.1.1",
    "1.2.3.4567",
    "v10.0.0.1-rc",
    "20.04.6",
    "pkg@1.2.3",
    "loopx@2.1.1",
    "1.0.0+build.io",
    "v2.0.0-beta.app",
    "10.0.0.1-rc",
    "5.4.0.1+ubuntu.1",
    "8.3.0.dev.local",
    "0.1.0.dev.co",
]:
    legit("version_string", v)
for v in [
    "mode=fast",
    "PAGE_SIZE=50",
    "retries=3",
    "LOG_LEVEL=debug",
    "threshold=0.8",
    "a=b;c=d",
    "MAX_HOOKS=8",
    "window=7d",
    "k=v",
    "RETRY_LIMIT=3",
    "FEATURE_X=on",
    "x_y=1",
]:
    legit("key_value_text", v)
for v in [
    "the weekly digest is due",
    "3 of 5 segments completed",
    "no credentials are recorded",
    "token budget exhausted",
    "the password policy requires 12 characters",
    "Bearer tokens are never stored",
    "Authorization: granted by the executor",
    "token: opaque",
    "secret: none",
    "ratio 1/2 and/or read/write",
    "see reports/weekly.md",
    "$.intents[0].payload.segment_ref",
    "#/$defs/budget",
    "12:30:45",
    "the session ended",
    "key rotation is out of scope",
    "@scope/package",
    "an ERROR code",
    "User stories",
    "README.md",
    "schema.json",
    "setup.py",
    "run.sh",
    "e.g. this, i.e. that",
    "https://json-schema.org/draft/2020-12/schema",
    "risk-assessment-of-the-whole-pipeline-2026",
    "periodic_report.trigger_evaluation",
    "x.invalid",
    "docs.example.org",
    "svc.test",
    "urn:pwh:schema:registration",
    "N/A",
    'Given hook "a.open" is installed',
    'the intent kind "synthetic.report" is registered',
    "hook billing.report proposed one intent",
]:
    legit("free_text", v)
for field, v in [
    ("token_budget", 1000),
    ("max_tokens", 512),
    ("prompt_tokens", 1200),
    ("password_policy", "min_length_12"),
    ("secret_name", "db_main"),
    ("token_type", "bearer"),
    ("auth_method", "oauth"),
    ("key", "periodic_report"),
    ("keyword", "digest"),
    ("tokens_used", 42),
    ("credential_values_recorded", False),
    ("max_result_bytes", 16384),
    ("session_count", 3),
    ("api_key_required", True),
    ("passage", "the third passage"),
    ("author", "the capability"),
    ("next_page_token", "page_0002"),
    ("public_key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5"),
    ("sort_key", "committed_at"),
    ("cache_key", "report:weekly"),
    ("idempotency_key", "receipt_0042"),
]:
    legit("secret_metadata_key", v, field=field)

path = Path(__file__).resolve().parent.parent / "pwh" / "corpus" / "boundary.jsonl"
with path.open("w", encoding="utf-8") as fh:
    for e in out:
        fh.write(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n")
counts: dict[str, int] = {}
for e in out:
    counts[e["label"]] = counts.get(e["label"], 0) + 1
print(path, counts)
