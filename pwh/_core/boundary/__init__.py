"""Public-boundary scanner: finds private data before it crosses into a public packet (SPEC §2 INP, JNL-6, M13).

Hook inputs, journal records, reports and published packets must carry only opaque ids, bounded
typed fields and compact codes. This module finds what must not cross that boundary (URLs, e-mail
addresses, local paths, credentials, IP addresses, host names, declared private names, chat
transcripts, raw logs, environment values) in any JSON-like value or in a text file's content.

A finding names *where* (a JSON path, or ``line N``) and *what category*, never the offending value,
so a report about a leak can itself be published.

The scanner runs on every hook input in the dispatcher's hot path, so each rule is gated by a cheap
substring test and short lowercase ids skip almost all of them. It never raises: values are
inspected by exact type only, unknown objects are skipped without calling any of their methods,
and deep or cyclic structures end in one ``unscannable`` finding instead of a ``RecursionError``.

Every string is first normalised (:mod:`pwh._core.boundary.text`: NFKC, invisible characters removed,
the confusable skeleton), so look-alike spellings meet the same rules. Credentials come from
detect-secrets' plugins and pwh's own shapes, and from keys that name a secret in any case style
(:mod:`pwh._core.boundary.secrets`); host names from the Public Suffix List read by the name's shape
(:mod:`pwh._core.boundary.hosts`); paths, e-mail, addresses, transcripts, logs and environment values
from the rules below. A string in a field the contracts type as an opaque id (:data:`OPAQUE_FIELDS`)
that matches the field's grammar is judged as an id (``billing.report`` is not a host there).
The rates on a labelled corpus are in :mod:`pwh._harness.boundary_corpus`; zero false positives on the
project's own public material (prose, Gherkin, JSON Schema, ids, digests, timestamps, versions,
JSON paths) is held by the reliability campaign. This module reads no environment variable: the
deny-list of private names is passed in by the caller (the CLI reads ``PWH_PRIVATE_NAMES``).
"""

from __future__ import annotations

import gc
import ipaddress
import re
import types
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pwh._core.boundary.hosts import host_kind, user_at_host
from pwh._core.boundary.secrets import (
    _FAST_ID,
    has_assignment,
    has_token_shape,
    is_placeholder,
    is_secret_key,
)
from pwh._core.boundary.text import forms

__all__ = [
    "CATEGORIES",
    "MAX_DEPTH",
    "BoundaryScanner",
    "Finding",
    "is_clean",
    "scan_value",
]

CATEGORIES: tuple[str, ...] = (
    "url",
    "email",
    "absolute_path",
    "credential",
    "ip_address",
    "private_name",
    "transcript",
    "raw_log",
    "hostname",
    "home_dir",
    "environment_value",
    "unscannable",  # too deep or cyclic: the value cannot be proven clean
)

# Nesting deeper than this is not walked; real packets are a handful of levels deep.
MAX_DEPTH = 200


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing that must not cross the public boundary: its category and where it is, never its value."""

    category: str
    path: str

    def to_json(self) -> dict[str, str]:
        """The finding as a JSON object, safe to publish because it holds no scanned content."""
        return {"category": self.category, "path": self.path}


# --------------------------------------------------------------------------------------------
# Patterns. Each is only run after a substring test shows it could match, and each starts with a
# look-behind so a search cannot restart inside a run of the same characters (linear cost on long
# hostile strings).
# --------------------------------------------------------------------------------------------

# Strings made only of these characters are ids or tokens: only credential shapes and private
# names can match them, so every other rule is skipped (the hot-path fast lanes). Of the token
# shapes, only GitHub, Slack and "sk-" keys can be all lowercase.
_PLAIN = re.compile(r"[A-Za-z0-9_\-]*")
# Lowercase dotted ids ("a_capability.runtime_trigger", "2.1.1"): only host names and IPv4
# addresses need checking. A bare ISO timestamp ("2026-08-26T00:00:00Z") needs nothing.
_DOTTED_ID = re.compile(r"[a-z0-9_\-]+(?:\.[a-z0-9_\-]+)+")
_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"(?:T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?(?:Z|[+\-][0-9]{2}:[0-9]{2})?)?"
)

# url -------------------------------------------------------------------------------------------
_URL = re.compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,31}://[^\s\"'<>`]+")
# JSON Schema documents carry their meta-schema URI in "$schema"; that one public site is allowed.
_JSON_SCHEMA_URI = re.compile(r"https?://json-schema\.org(?:/[^\s\"'<>`#]*)?#?", re.IGNORECASE)
_WWW = re.compile(r"(?<![A-Za-z0-9_.\-/@])www\.[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+", re.IGNORECASE)

# email -----------------------------------------------------------------------------------------
_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@"
    r"[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}"
)

# absolute_path / home_dir ----------------------------------------------------------------------
# A POSIX path starts a token (line start, whitespace, quote, "=", ":", "(", ",", "[", "{", "|", "`"),
# so "$.a/b", "#/$defs/x", "1/2" and "and/or" never match; the "//" of a URL needs a segment char.
# A POSIX path starts a token: its "/" follows no word or path character, so "$.a/b", "#/$defs/x",
# "1/2" and "and/or" never match, while "cat</etc/x", "→/srv" and "x;/opt" do; "</div>" is markup.
# (Each pattern starts with a literal or is gated by one, so the regex engine scans fast.)
_ABS_POSIX = re.compile(r"/(?<![A-Za-z0-9_.~\-/\\$#%@?!)\]}*+]/)(?![A-Za-z][A-Za-z0-9\-]*>)[A-Za-z0-9._~\-]")
_ABS_DRIVE = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z]:(?:\\|/(?=[A-Za-z0-9._~\-$]))")  # C:\ or C:/x
_ABS_UNC = re.compile(
    r"\\\\+[?.]\\+"  # \\?\ and \\.\ device paths
    r"|(?<![A-Za-z0-9:])\\\\+[A-Za-z0-9._\-$]+\\+[A-Za-z0-9._\-$]+"  # \\server\share (also JSON-escaped)
    r"|(?<![A-Za-z0-9_\\])\\(?:Windows|Users|Program Files|ProgramData|inetpub|System32)\\",  # \Windows\
    re.IGNORECASE,
)
_ABS_SLASHES = re.compile(r"(?<![A-Za-z0-9:/])//[A-Za-z0-9][A-Za-z0-9._\-]*/[A-Za-z0-9._\-$]+")  # //server/share


def _has_absolute_path(text: str) -> bool:
    if "/" in text and (_ABS_POSIX.search(text) or ("//" in text and _ABS_SLASHES.search(text))):
        return True
    if ":" in text and _ABS_DRIVE.search(text):
        return True
    return "\\" in text and _ABS_UNC.search(text) is not None


_HOME_DIR = re.compile(
    r"(?<![A-Za-z0-9_~/.\-])~[A-Za-z0-9_.\-]*[/\\]"  # ~/x, ~user/x
    r"|(?<![A-Za-z0-9._\-])/(?:home|Users)/[A-Za-z0-9._\-]+"
    r"|(?<![A-Za-z0-9._\-])/root(?![A-Za-z0-9._\-])"
    r"|(?<![A-Za-z0-9_])[A-Za-z]:[\\/](?:Users|Documents and Settings)[\\/][^\\/\s\"']+"
)

# credential ------------------------------------------------------------------------------------
# Token shapes, secret-named keys and assignments live in pwh._core.boundary.secrets (detect-secrets'
# plugins plus pwh's own shapes). A cheap pre-test keeps them off strings too short to hold one.
_CREDENTIAL_MIN = 8

# ip_address ------------------------------------------------------------------------------------
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
# Exactly four octets: "2.1.1" (three parts) and "1.2.3.4.5" are not addresses.
# A version's suffix ("10.0.0.1-rc", "5.4.0.1+ubuntu.1") makes the four numbers a version.
_IPV4 = re.compile(rf"(?<![0-9A-Za-z.+]){_OCTET}(?:\.{_OCTET}){{3}}(?![0-9]|\.[0-9]|[\-+][A-Za-z])")
# Candidates only; ipaddress decides, so "00:00:00" and "12:30:45" never pass.
_IPV6 = re.compile(
    r"(?<![0-9A-Za-z:.])(?:[0-9A-Fa-f]{0,4}:){2,7}"
    r"(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Fa-f]{1,4})?(?:%[0-9A-Za-z]+)?(?![0-9A-Za-z:])"
)

# hostname --------------------------------------------------------------------------------------
# Candidates only: pwh._core.boundary.hosts decides from the Public Suffix List and the name's shape.
# "logging.info(", "typing.IO[" are code; a label after "_" or "$" is part of an identifier.
_HOSTNAME = re.compile(
    r"(?<![A-Za-z0-9_.\-@/\\$#])(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.){1,126}"
    r"(?P<tld>[A-Za-z][A-Za-z0-9\-]{1,62})(?![A-Za-z0-9_\-(\[]|\.[A-Za-z0-9_])"
)
_LOCALHOST = re.compile(r"(?<![A-Za-z0-9_\-.])localhost(?![A-Za-z0-9_\-])", re.IGNORECASE)

# transcript ------------------------------------------------------------------------------------
_ROLE_LINE = re.compile(r"^[ \t>]*(?:User|Assistant|System|Human|AI)[ \t]*:[ \t]*\S", re.MULTILINE)
_CHAT_MARKUP = re.compile(r"<\|im_start\|>|<\|im_end\|>|<\|(?:start|end)_header_id\|>|<\|eot_id\|>|\[/?INST\]|<<SYS>>")
_ROLE_JSON = re.compile(r"\"role\"\s*:\s*\"(?:user|assistant|system|tool|developer)\"")
_TRANSCRIPT_ROLES = frozenset({"user", "assistant", "system", "tool", "developer", "human"})

# raw_log ---------------------------------------------------------------------------------------
_LEVEL = r"(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|CRITICAL|FATAL|SEVERE)"
_LEVEL_HINT = re.compile(r"TRACE|DEBUG|INFO|NOTICE|WARN|ERR|CRITICAL|FATAL|SEVERE")
_LOG_LEVEL = re.compile(
    r"\b[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(?::[0-9]{2})?(?:[.,][0-9]+)?"
    rf"(?:Z|[+\-][0-9]{{2}}:?[0-9]{{2}})?\]?[ \t]*(?:[\-|:][ \t]*)?\[?{_LEVEL}\b"
    rf"|\[{_LEVEL}\]"
)
_PY_FILE_LINE = re.compile(r"\bFile \"[^\"\n]+\", line [0-9]+")
# "ValueError: bad input", but not the Python source "except ValueError:  # comment".
_EXCEPTION_TEXT = re.compile(r"(?<!except )\b[A-Z][A-Za-z0-9]*(?:Error|Exception):[ \t]+[^\s#]")
_SHELL_PROMPT = re.compile(
    r"^[ \t]*\$[ \t]+[A-Za-z./~_\-]"  # "$ make test"
    r"|(?<![A-Za-z0-9_.\-])[A-Za-z0-9_.\-]+@[A-Za-z0-9_.\-]+:[^\s#$]*[#$](?:[ \t]|$)",  # root@host:~#
    re.MULTILINE,
)
_REPL_PROMPT = re.compile(r"^[ \t]*>>>[ \t]+\S", re.MULTILINE)

# environment_value -----------------------------------------------------------------------------
# NAME=VALUE is an environment value when NAME is a variable the process environment carries (a
# well-known name or the prefix of a tool that reads its settings from the environment) or when the
# text exports it; other KEY=VALUE text ("PAGE_SIZE=50", "mode=fast") is configuration, not environment.
_ENV_WELL_KNOWN = frozenset(
    ["HOME", "PATH", "USER", "USERNAME", "LOGNAME", "SHELL", "PWD", "OLDPWD", "HOSTNAME", "HOST", "TMPDIR", "TEMP", "TMP", "LANG", "LANGUAGE", "TERM", "EDITOR", "VISUAL", "PAGER", "MAIL", "DISPLAY", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "LD_PRELOAD", "GNUPGHOME", "JAVA_HOME", "GOPATH", "GOROOT", "GOBIN", "CARGO_HOME", "RUSTUP_HOME", "KUBECONFIG", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "FTP_PROXY", "APPDATA", "LOCALAPPDATA", "USERPROFILE", "HOMEPATH", "HOMEDRIVE", "COMPUTERNAME", "USERDOMAIN", "SYSTEMROOT", "WINDIR", "PROGRAMFILES", "PROGRAMDATA", "COMSPEC", "PATHEXT", "PS1", "HISTFILE", "SUDO_USER", "SUDO_UID", "MANPATH", "INFOPATH", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "PWH_PRIVATE_NAMES", "TOKEN", "PASSWORD", "SECRET", "API_KEY", "DATABASE_URL", "REDIS_URL"]
)
_ENV_PREFIXES = (
    "LC_", "XDG_", "SSH_", "GPG_", "GIT_", "GITHUB_", "GITLAB_", "CI_", "RUNNER_", "BUILDKITE_", "JENKINS_",
    "TRAVIS_", "CIRCLE_", "AWS_", "AZURE_", "ARM_", "GOOGLE_", "GCP_", "GCLOUD_", "CLOUDSDK_", "DOCKER_",
    "NODE_", "NPM_", "NVM_", "YARN_", "PIP_", "CONDA_", "PYENV_", "DYLD_", "KUBE_", "HELM_", "VAULT_",
    "TF_", "OPENAI_", "ANTHROPIC_", "HF_", "HUGGINGFACE_", "SLACK_", "STRIPE_", "SENTRY_", "PWH_", "LOOPX_",
    "POSTGRES_", "PG", "MYSQL_", "REDIS_", "DATABASE_", "DB_",
)
_ENV_ASSIGN = re.compile(
    r"(?<![A-Za-z0-9_$.\-])(?P<export>(?:export|setenv|set|env)[ \t]+)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?=[^\s=])"
)
_ENV_EXPAND = re.compile(
    r"\$\{[A-Z][A-Z0-9_]*[}:]"  # ${VAR}, ${VAR:-x}
    r"|(?<![A-Za-z0-9_$\\])\$[A-Z][A-Z0-9_]+(?![A-Za-z0-9_])"  # $HOME
)
_ENV_WINDOWS = re.compile(r"%[A-Z][A-Z0-9_]+%")  # %USERPROFILE%


def is_env_name(name: str) -> bool:
    """True for the name of a variable the process environment carries (see _ENV_WELL_KNOWN)."""
    if name in _ENV_WELL_KNOWN:
        return True
    return name.isupper() and "_" in name and (name.startswith(_ENV_PREFIXES) or is_secret_key(name))


def _has_env_assignment(text: str) -> bool:
    for match in _ENV_ASSIGN.finditer(text):
        name = match.group("name")
        if is_env_name(name) or (match.group("export") and name.upper() == name):
            return True
    return False


def _categories(text: str) -> list[str]:
    """The categories found in one string that is not a plain token (private names aside)."""
    out: list[str] = []
    colon = ":" in text
    dot = "." in text
    slash = "/" in text or "\\" in text

    if colon and "://" in text and any(
        _JSON_SCHEMA_URI.fullmatch(m.group()) is None for m in _URL.finditer(text)
    ) or dot and ("w." in text or "W." in text) and _WWW.search(text):  # www. in any case: Www.x.zz too
        out.append("url")
    if "@" in text and (_EMAIL.search(text) or user_at_host(text)):
        out.append("email")
    if slash and _has_absolute_path(text):
        out.append("absolute_path")
    if ("~" in text or (slash and ("home" in text or "Users" in text or "root" in text))) and _HOME_DIR.search(text):
        out.append("home_dir")
    if _has_credential(text, colon):
        out.append("credential")
    if dot and text.count(".") >= 3 and _IPV4.search(text) or colon and ("::" in text or text.count(":") >= 6) and any(map(_is_ipv6, _IPV6.finditer(text))):
        out.append("ip_address")
    if _has_hostname(text, dot, opaque=False):
        out.append("hostname")
    if _has_transcript(text, colon):
        out.append("transcript")
    if _has_raw_log(text, colon):
        out.append("raw_log")
    if (
        ("=" in text and _has_env_assignment(text))
        or ("$" in text and _ENV_EXPAND.search(text))
        or ("%" in text and _ENV_WINDOWS.search(text))
    ):
        out.append("environment_value")
    return out


def _has_credential(text: str, colon: bool) -> bool:
    if len(text) >= _CREDENTIAL_MIN and has_token_shape(text):
        return True
    return (colon or "=" in text or "-" in text) and has_assignment(text)


def _has_hostname(text: str, dot: bool, *, opaque: bool) -> bool:
    """A host name in ``text`` (pwh._core.boundary.hosts.host_kind). An id-shaped two-label name under a
    generic TLD (``billing.report``, ``notify.app``) is an id in a typed opaque-id field
    (``opaque``); in free data it is a host when it is the whole value or its TLD is one registered
    mostly for machines (``hall.dev``), and an id inside longer text otherwise (``hook a.open``)."""
    if ("ocalhost" in text or "OCALHOST" in text) and _LOCALHOST.search(text):
        return True
    if not dot:
        return False
    for match in _HOSTNAME.finditer(text):
        kind = host_kind(match.group().split("."))
        if kind is None or _in_version(text, match.start()):
            continue
        if kind == "host" or (not opaque and (kind == "likely" or (
            kind == "ambiguous" and match.start() == 0 and match.end() == len(text)
        ))):
            return True
    return False


_VERSION_START = re.compile(r"[vV]?[0-9]+\.[0-9]+")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.+-_~")


def _in_version(text: str, start: int) -> bool:
    """True when the token around ``start`` is a version ("1.0.0+build.io", "8.3.0.dev.local"):
    its labels are pre-release or build identifiers, not a host."""
    begin = start
    while begin > 0 and text[begin - 1] in _TOKEN_CHARS:
        begin -= 1
    return _VERSION_START.match(text, begin) is not None


def _is_ipv6(match: re.Match[str]) -> bool:
    text = match.group()
    try:
        ipaddress.IPv6Address(text.split("%", 1)[0])
    except ValueError:
        return False
    # "a::b" is also a code path; demand a digit or at least three groups.
    return any(c.isdigit() for c in text) or sum(1 for g in text.split(":") if g) >= 3


def _has_transcript(text: str, colon: bool) -> bool:
    if colon:
        if ("User" in text or "Assistant" in text or "System" in text or "Human" in text or "AI" in text) and (
            _ROLE_LINE.search(text)
        ):
            return True
        if '"role"' in text and _ROLE_JSON.search(text):
            return True
    return bool(("<|" in text or "INST]" in text or "<<SYS>>" in text) and _CHAT_MARKUP.search(text))


def _has_raw_log(text: str, colon: bool) -> bool:
    if "Traceback (most recent call last)" in text:
        return True
    if 'File "' in text and _PY_FILE_LINE.search(text):
        return True
    if colon and ("Error:" in text or "Exception:" in text) and _EXCEPTION_TEXT.search(text):
        return True
    if _LEVEL_HINT.search(text) and _LOG_LEVEL.search(text):
        return True
    if ("$" in text or "#" in text) and _SHELL_PROMPT.search(text):
        return True
    return ">>>" in text and _REPL_PROMPT.search(text) is not None


# --------------------------------------------------------------------------------------------
# The scanner.
# --------------------------------------------------------------------------------------------

_SAFE_KEY = re.compile(r"[A-Za-z0-9_$][A-Za-z0-9_.$\-]{0,63}")
_PATH_PART = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\['([^'\]]*)'\]|\[(?:[0-9]+|\?)\]")  # one step of a JSON path
_EXIT = object()  # stack marker: a container's children are done (for cycle detection)
_Found = set[tuple[str, str]]  # (path, category)
# Types that can carry nothing private. Tested with issubclass, never "in a set": hashing a type
# would run its metaclass's __hash__, which may be hostile.
_SCALARS = (int, float, type(None))  # bool is an int
_QUICK_SCALARS = frozenset({int, float, bool, type(None)})
_PROXY = types.MappingProxyType  # how the dispatcher freezes the input it hands to a provider
_MEMO_MAX_TEXT = 256  # only strings up to this length are memoised ...
_MEMO_MAX_ENTRIES = 4096  # ... and the memo is emptied when it reaches this size
_KEY_SECRET, _KEY_ENV, _KEY_ROLE, _KEY_CONTENT = 1, 2, 4, 8  # what a dict key says about its value
_KeyInfo = tuple[tuple[str, ...], str, int]  # (the key's own categories, its path suffix, _KEY_* flags)
_ODD_KEY: _KeyInfo = ((), "[?]", 0)  # a key that is not a string: never read, shown as "[?]"


# --------------------------------------------------------------------------------------------
# Typed opaque-id fields (SPEC §2: the contracts' token grammars, pwh/schemas/*.json). A string in
# one of these fields that matches the field's grammar is an opaque id: a dotted id is not refused
# for looking like a host under a generic-word TLD (``billing.report``), while a real host
# (``build.acme.com``), a credential, an address or a declared name still is. Every other string
# is free data, judged by every rule. tests/test_boundary_fields.py holds this table equal to the
# schemas' patterns.
# --------------------------------------------------------------------------------------------

_G_DOTTED = re.compile(r"[a-z][a-z0-9_]{0,63}(?:\.[a-z][a-z0-9_]{0,63}){0,3}")  # hook_id, intent_kind, ...
_G_TOKEN = re.compile(r"[a-z][a-z0-9_]{0,63}")  # capability_id and the enumerated tokens
_G_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:\-]{0,127}")  # source identities and references
_G_DISPATCH = re.compile(r"pwh_[0-9a-f]{64}")
_G_INTENT = re.compile(r"pwi_[0-9a-f]{64}")
_G_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_G_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?Z")
OPAQUE_FIELDS: dict[str, re.Pattern[str]] = {
    **dict.fromkeys(("hook_id", "intent_kind", "intent_kinds", "operation", "policy_version", "requested_write_scope"), _G_DOTTED),
    **dict.fromkeys(
        ("capability_id", "schema_version", "event_kind", "event_kinds", "transition", "step_kind", "step_status",
         "phase", "status", "failure_policy", "requested_read_scope"),
        _G_TOKEN,
    ),
    **dict.fromkeys(
        ("receipt_id", "effect_id", "plan_effect_id", "goal_id", "agent_id", "todo_id", "turn_instance_id",
         "state_revision", "segment_ref", "fact_refs", "source_receipt_id"),
        _G_REF,
    ),
    **dict.fromkeys(("dispatch_id", "source_dispatch_id"), _G_DISPATCH),
    "intent_id": _G_INTENT,
    "result_digest": _G_DIGEST,
    "committed_at": _G_TIME,
}
_SCHEMA_NAME_MAPS = (".properties", ".patternProperties", ".definitions", "['$defs']", ".$defs")
_SECRET = object()  # walk context: everything below a key that names a secret
_LAST_KEY = re.compile(r"(?:\.([A-Za-z_][A-Za-z0-9_]*)|\['([^'\]]*)'\])(?:\[[0-9]+\])?$")


def _root_context(path: str) -> re.Pattern[str] | None:
    """The grammar of the field a root path ends in (``$.receipt_id``, ``$.source.fact_refs[0]``)."""
    match = _LAST_KEY.search(path) if type(path) is str else None
    if match is None:
        return None
    return OPAQUE_FIELDS.get(match.group(1) if match.group(1) is not None else match.group(2))


def _as_str_list(items: Iterable[str]) -> list[str]:
    """Accept one string or an iterable of strings; silently drop anything else (never str() it)."""
    if items is None:
        return []
    if issubclass(type(items), str):
        items = [items]  # type: ignore[list-item]  # one name, not its characters
    out: list[str] = []
    for item in items:
        if issubclass(type(item), str):
            text = str.__str__(item)
            if text.strip():
                out.append(text)
    return out


class BoundaryScanner:
    """Finds private data in JSON-like values and text; shareable across threads.

    Its configuration is fixed at construction. The only mutable state is a bounded memo of the
    short strings found clean: the same keys, schema versions and hook ids recur in every hook
    input, and a memo hit costs one dict lookup instead of a rule pass. Strings with findings are
    never kept, so the scanner does not retain private data.
    """

    __slots__ = ("_allow", "_allow_re", "_key_memo", "_key_sets", "_memo", "_names_re", "_opaque_memo")

    def __init__(self, private_names: Iterable[str] = (), allow: Iterable[str] = ()) -> None:
        """``private_names``: an organisation's deny-list, matched case-insensitively as whole words
        (only letters and digits continue a word, so ``acme`` is found in ``acme_goal``).
        ``allow``: exact public strings never flagged, as a whole value or as a bounded part of one."""
        names = sorted({n.lower() for n in _as_str_list(private_names)}, key=len, reverse=True)
        self._names_re: re.Pattern[str] | None = None
        if names:
            alternatives = "|".join(r"\s+".join(map(re.escape, n.split())) for n in names)
            # Matched on lowered text without re.I and without a leading look-behind: both would
            # disable the regex engine's prefix scan (4x slower); the start boundary is checked by hand.
            self._names_re = re.compile(rf"(?:{alternatives})(?![^\W_])")
        allowed = sorted(set(_as_str_list(allow)), key=len, reverse=True)
        self._allow = frozenset(allowed)
        self._allow_re: re.Pattern[str] | None = None
        if allowed:
            self._allow_re = re.compile(
                r"(?<![A-Za-z0-9_.\-@/])(?:" + "|".join(map(re.escape, allowed)) + r")"
                r"(?![A-Za-z0-9_\-@/]|\.[A-Za-z0-9])"
            )
        self._memo: dict[str, tuple[str, ...]] = {}
        self._key_memo: dict[str, _KeyInfo] = {}
        self._key_sets: dict[tuple[str, ...], bool] = {}
        self._opaque_memo: dict[str, bool] = {}  # typed opaque ids found clean as ids

    # -- public API ---------------------------------------------------------------------------

    def scan_value(self, value: Any, path: str = "$") -> list[Finding]:
        """Walk dicts (keys and values), lists, tuples and strings; other types are skipped unread.

        A key that is itself flagged, or is not a plain token, shows in paths as ``[?]`` so a path
        never repeats private content.
        """
        root = path if type(path) is str else "$"
        found: _Found = set()
        try:
            self._walk(value, root, found)
        except Exception:  # a scanner bug must read as "not proven clean", never crash the dispatcher
            found.add((root, "unscannable"))
        return _sorted(found)

    def text_categories(self, text: str) -> tuple[str, ...]:
        """The categories found in one string, not memoised: for a caller scanning the lines of a
        file (pwh._harness.text_scan), which rarely repeat and must not crowd out the ids the memo holds."""
        return self._scan_str_uncached(text)

    def texts_clean(self, texts: Iterable[str]) -> bool:
        """True when no string of ``texts`` (exact ``str`` values) would be flagged on its own:
        for callers that know the shape around them and need only a yes or no."""
        scan = self._scan_str
        for text in texts:
            if scan(text):
                return False
        return True

    def keys_clean(self, keys: tuple[str, ...]) -> bool:
        """True when no key of ``keys`` (exact ``str``) is flagged, shown as ``[?]``, or marks its
        value as a secret, an environment value or part of a transcript: a dict with only these
        keys and clean scalar values then scans clean. Memoised per tuple (a schema's key set)."""
        verdict = self._key_sets.get(keys)
        if verdict is None:
            verdict = True
            for key in keys:
                categories, suffix, flags = self._key_info(key)
                if categories or flags or suffix == "[?]":
                    verdict = False
            if len(self._key_sets) < 64:  # a handful of schema key sets; never unbounded
                self._key_sets[keys] = verdict
        return verdict

    def is_clean(self, value: Any) -> bool:
        """True when nothing in ``value`` may not cross the public boundary."""
        return self.quickly_clean(value) or not self.scan_value(value)

    def quickly_clean(self, value: Any, depth: int = 0) -> bool:
        """True only when ``value`` is plain JSON whose every key and string would pass on its own
        (no path bookkeeping, memoised); False means 'not proven here': ask :meth:`scan_value`.
        A key that could mark a secret, an environment value or a transcript, a container deeper
        than 32 levels, or any non-JSON object answers False."""
        kind = type(value)
        if kind is str:
            return not self._scan_str(value)
        if kind is dict:
            if depth >= 32:
                return False
            for key in value:  # reading a plain dict's keys runs none of their code
                if type(key) is not str:
                    return False
            if not self.keys_clean(tuple(value)):
                return False
            return self._children_clean(value.values(), depth)
        if kind is list or kind is tuple:
            if depth >= 32:
                return False
            return self._children_clean(value, depth)
        return kind in _QUICK_SCALARS

    def _children_clean(self, children: Iterable[Any], depth: int) -> bool:
        scan = self._scan_str
        for child in children:
            kind = type(child)
            if kind is str:  # the usual child, judged here rather than by a call per string
                if scan(child):
                    return False
            elif kind not in _QUICK_SCALARS and not self.quickly_clean(child, depth + 1):
                return False
        return True

    def public_path(self, path: str) -> str:
        """A JSON path as pwh renders it (``$.a['b-c'][0]``) with every key this scanner would flag
        shown as ``[?]``: a rejection's path names where, never a private key (a token, a host,
        a declared name). Anything that is not such a path becomes ``$``."""
        if type(path) is not str or not path.startswith("$"):
            return "$"
        out, pos = ["$"], 1
        for match in _PATH_PART.finditer(path, 1):
            if match.start() != pos:
                return "$"
            key = match.group(1) if match.group(1) is not None else match.group(2)
            out.append("[?]" if key is not None and self._scan_str(key) else match.group(0))
            pos = match.end()
        return "".join(out) if pos == len(path) else "$"

    # -- internals ----------------------------------------------------------------------------

    def _scan_str(self, text: str) -> tuple[str, ...]:
        """The categories found in one string (empty for the usual opaque id), memoised for short strings."""
        cached = self._memo.get(text)
        if cached is not None:
            return cached
        if (_FAST_ID.fullmatch(text) and "xox" not in text and "xapp" not in text and "localhost" not in text) or (
            text[:2].isdigit() and _TIMESTAMP.fullmatch(text)
        ):
            # An opaque lowercase id of words and numbers ("receipt_000042", _boundary_secrets.fast_clean,
            # inlined) or a bare timestamp: no structural rule applies, only a declared name can be in it.
            # Digests are unique per dispatch: rechecked, not memoised; the rest is memoised (the
            # words recur in every input; the memo's bound keeps the numbered ids from piling up).
            if self._names_re is not None and text not in self._allow and self._has_private_name(text):
                return ("private_name",)
            if len(text) > 60:
                return ()
            result: tuple[str, ...] = ()
        else:
            result = self._scan_str_uncached(text)
        if not result and len(text) <= _MEMO_MAX_TEXT:  # only clean strings: the memo never holds private data
            if len(self._memo) >= _MEMO_MAX_ENTRIES:
                self._memo.clear()
            self._memo[text] = result
        return result

    def _scan_str_uncached(self, text: str) -> tuple[str, ...]:
        if text in self._allow:
            return ()
        variants = forms(text)
        if len(variants) == 1 and variants[0] is text:
            return self._rules(text)
        out: list[str] = []
        for form in variants:
            if form in self._allow:
                continue
            out.extend(c for c in self._rules(form) if c not in out)
        return tuple(out)

    def _rules(self, text: str) -> tuple[str, ...]:
        """Every rule on one (normalised) form, through the fast lanes of the usual id shapes."""
        if self._allow_re is not None:
            text = self._allow_re.sub(" ", text)
        out: list[str] = []
        if _PLAIN.fullmatch(text):  # [A-Za-z0-9_-]*: only token shapes (and "localhost") can match
            if has_token_shape(text):
                out.append("credential")
            if ("ocalhost" in text or "OCALHOST" in text) and _LOCALHOST.search(text):
                out.append("hostname")
        elif _DOTTED_ID.fullmatch(text):
            if text.count(".") >= 3 and _IPV4.search(text):
                out.append("ip_address")
            if _has_hostname(text, True, opaque=False):
                out.append("hostname")
            if "www." in text and _WWW.search(text):
                out.append("url")
            if has_token_shape(text):
                out.append("credential")
        elif not _TIMESTAMP.fullmatch(text):
            out = _categories(text)
        if self._names_re is not None and self._has_private_name(text):
            out.append("private_name")
        return tuple(out)

    def _scan_opaque(self, text: str) -> tuple[str, ...]:
        """A string that matches the grammar of the opaque-id field it sits in (SPEC §2: the
        contracts type these fields as opaque ids): only what such an id can still carry is looked
        for -- a credential, an IP address, a host name read as an id reads it (``billing.report``
        is an id, ``build.acme.com`` a host), a declared private name. Memoised when clean."""
        if text in self._opaque_memo:
            return ()
        out: list[str] = []
        for form in forms(text):
            if form in self._allow:
                continue
            if self._allow_re is not None:
                form = self._allow_re.sub(" ", form)
            if has_token_shape(form) and "credential" not in out:
                out.append("credential")
            if "ip_address" not in out and (
                (form.count(".") >= 3 and _IPV4.search(form))
                or (":" in form and ("::" in form or form.count(":") >= 6) and any(map(_is_ipv6, _IPV6.finditer(form))))
            ):
                out.append("ip_address")
            if "hostname" not in out and _has_hostname(form, "." in form, opaque=True):
                out.append("hostname")
            if "private_name" not in out and self._names_re is not None and self._has_private_name(form):
                out.append("private_name")
        if not out and len(text) <= _MEMO_MAX_TEXT:
            if len(self._opaque_memo) >= _MEMO_MAX_ENTRIES:
                self._opaque_memo.clear()
            self._opaque_memo[text] = True
        return tuple(out)

    def _scan_field(self, text: str, grammar: re.Pattern[str] | None) -> tuple[str, ...]:
        """A string under a key: judged as free data, then, if that finds something and the key is
        a typed opaque-id field whose grammar the string matches, as an opaque id."""
        categories = self._memo.get(text)
        if categories is None:
            categories = self._scan_str(text)
        if categories and grammar is not None and grammar.fullmatch(text):
            return self._scan_opaque(text)
        return categories

    def _has_private_name(self, text: str) -> bool:
        names, low = self._names_re, text.lower()
        match = names.search(low)  # type: ignore[union-attr]
        while match is not None:
            start = match.start()
            if start == 0 or not low[start - 1].isalnum():  # the start-of-word boundary, by hand
                return True
            match = names.search(low, start + 1)  # type: ignore[union-attr]
        return False

    def _key_info(self, key: str) -> _KeyInfo:
        """For a dict key: (its own categories, its path suffix, _KEY_* flags); memoised."""
        info = self._key_memo.get(key)
        if info is not None:
            return info
        categories = self._scan_str(key)
        if "hostname" in categories and _G_DOTTED.fullmatch(key) and host_kind(key.split(".")) == "ambiguous":
            # a key is a field name: "secret.name" is an id; "hall.dev", "acme.com" stay hosts
            categories = tuple(c for c in categories if c != "hostname")
        if categories or not _SAFE_KEY.fullmatch(key):
            suffix = "[?]"  # the key may itself be private: the path must not spell it out
        else:  # the same rendering as pwh._core.codes.json_path
            suffix = f".{key}" if key.isidentifier() else f"['{key}']"
        normal = forms(key)[-1]  # the confusable skeleton, if any: "pаssword" names a password
        flags = 0
        if is_secret_key(normal):
            flags |= _KEY_SECRET
        if is_env_name(normal):
            flags |= _KEY_ENV
        if key == "role":
            flags |= _KEY_ROLE
        elif key == "content":
            flags |= _KEY_CONTENT
        info = (categories, suffix, flags)
        if not categories and len(key) <= _MEMO_MAX_TEXT:
            if len(self._key_memo) >= _MEMO_MAX_ENTRIES:
                self._key_memo.clear()
            self._key_memo[key] = info
        return info

    def _walk(self, root: Any, root_path: str, found: _Found) -> None:
        """Iterative depth-first walk: no Python recursion, so no RecursionError at any depth.
        A stack item is (node, path, depth, context): context is None, a field grammar (the
        items of a typed id list), or _SECRET (everything under a key that names a secret)."""
        stack: list[Any] = [(root, root_path, 0, _root_context(root_path))]
        active: set[int] = set()  # ids of the containers on the current path, to spot cycles
        reported = False
        while stack:
            item = stack.pop()
            node = item[0]
            if node is _EXIT:
                active.discard(item[1])
                continue
            path, context = item[1], item[3]
            kind = type(node)
            if issubclass(kind, str):
                text = str.__str__(node)
                if context is _SECRET:
                    if text and not is_placeholder(text):
                        found.add((path, "credential"))
                    for category in self._scan_str(text):
                        found.add((path, category))
                else:
                    for category in self._scan_field(text, context):
                        found.add((path, category))
                continue
            if context is _SECRET and issubclass(kind, (int, float)) and not issubclass(kind, bool):
                found.add((path, "credential"))  # a PIN, a numeric key: a number under a secret key
                continue
            if kind is _PROXY:
                node = _unwrap_proxy(node)
                kind = type(node)
            is_dict = kind is dict or issubclass(kind, dict)
            if not (is_dict or issubclass(kind, (list, tuple))):
                continue  # numbers, None and bools carry nothing; unknown objects are never touched
            depth = item[2]
            if depth >= MAX_DEPTH or id(node) in active:
                if not reported:
                    found.add((path, "unscannable"))
                    reported = True
                continue
            active.add(id(node))
            stack.append((_EXIT, id(node)))
            if is_dict:
                self._walk_dict(node, path, depth + 1, found, stack, context is _SECRET)
            else:
                items = list.__iter__(node) if issubclass(kind, list) else tuple.__iter__(node)
                self._walk_items(items, path, depth + 1, found, stack, context)

    def _walk_items(
        self, items: Iterable[Any], path: str, depth: int, found: _Found, stack: list[Any], context: Any
    ) -> None:
        children = []
        grammar = context if context is not _SECRET else None
        for i, child in enumerate(items):
            child_kind = type(child)
            if child_kind is str and context is not _SECRET:  # the common case, scanned inline
                for category in self._scan_field(child, grammar):
                    found.add((f"{path}[{i}]", category))
            elif context is _SECRET or not issubclass(child_kind, _SCALARS):
                children.append((child, f"{path}[{i}]", depth, context))
        stack.extend(reversed(children))

    def _walk_dict(
        self, node: dict[Any, Any], path: str, depth: int, found: _Found, stack: list[Any], secret: bool = False
    ) -> None:
        # dict.items() called on the instance reads the table directly: a subclass's overrides never
        # run, and no key is hashed or compared (a hostile key's __eq__/__hash__ stays uncalled).
        memo, key_memo = self._memo, self._key_memo
        # The keys of a JSON Schema "properties" object name fields ("password": {"type": ...});
        # they hold no values, so a secret-named one there marks nothing below it as a secret.
        names_fields = path.endswith(_SCHEMA_NAME_MAPS)
        has_role = has_content = False
        children = []
        for key, child in dict.items(node):
            key_kind = type(key)
            if key_kind is str:
                info = key_memo.get(key)
                if info is None:
                    info = self._key_info(key)
                grammar = OPAQUE_FIELDS.get(key)
            elif issubclass(key_kind, str):
                info = self._key_info(str.__str__(key))
                grammar = None
            else:
                info, grammar = _ODD_KEY, None
            key_categories, suffix, flags = info
            if names_fields:
                flags &= ~(_KEY_SECRET | _KEY_ENV)
            under_secret = secret or bool(flags & _KEY_SECRET)
            child_kind = type(child)
            if child_kind is str:  # the common case, scanned inline to save a stack round trip
                categories = memo.get(child)
                if categories is None or categories and grammar is not None:
                    categories = self._scan_field(child, grammar)
            else:
                categories = ()
                if under_secret:
                    if not issubclass(child_kind, type(None)) and not issubclass(child_kind, bool):
                        children.append((child, path + suffix, depth, _SECRET))
                elif not issubclass(child_kind, _SCALARS):
                    children.append((child, path + suffix, depth, grammar))
            if not (categories or key_categories or flags or secret):
                continue  # the hot path ends here
            child_path = path + suffix
            found.update((child_path, category) for category in key_categories + categories)
            if child_kind is str and child:
                if under_secret and not is_placeholder(child):
                    found.add((child_path, "credential"))
                if flags & _KEY_ENV:
                    found.add((child_path, "environment_value"))
            if flags & _KEY_ROLE:
                has_role = child_kind is str and child.lower() in _TRANSCRIPT_ROLES
            elif flags & _KEY_CONTENT:
                has_content = True
        if has_role and has_content:
            found.add((path, "transcript"))
        stack.extend(reversed(children))


def _unwrap_proxy(proxy: types.MappingProxyType[Any, Any]) -> Any:
    """The mapping behind a read-only proxy (the frozen hook input), found without calling any of its methods."""
    referents = gc.get_referents(proxy)
    return referents[0] if len(referents) == 1 else None


def _sorted(found: _Found) -> list[Finding]:
    return [Finding(category, path) for path, category in sorted(found)]


_DEFAULT = BoundaryScanner()


def scan_value(value: Any, path: str = "$") -> list[Finding]:
    """Scan ``value`` with the default scanner (no private names, no allow-list)."""
    return _DEFAULT.scan_value(value, path)


def is_clean(value: Any) -> bool:
    """True when the default scanner finds nothing in ``value``."""
    return _DEFAULT.is_clean(value)
