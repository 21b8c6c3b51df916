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

Detection is structural, tuned for zero false positives on the project's own public material:
English prose, Gherkin steps, JSON Schema documents, snake_case and dotted ids, ``pwh_``/``pwi_``
digests, ISO timestamps, version strings and JSON paths. This module reads no environment variable:
the deny-list of private names is passed in by the caller (the CLI reads ``PWH_PRIVATE_NAMES``).
"""

from __future__ import annotations

import gc
import ipaddress
import re
import types
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CATEGORIES",
    "MAX_DEPTH",
    "BoundaryScanner",
    "Finding",
    "is_clean",
    "scan_text",
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
_LOWER_ID = re.compile(r"[a-z0-9_\-]*")
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
_JSON_SCHEMA_URI = re.compile(r"https?://json-schema\.org(?:/[^\s\"'<>`#]*)?#?", re.I)
_WWW = re.compile(r"(?<![A-Za-z0-9_.\-/@])www\.[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+", re.I)

# email -----------------------------------------------------------------------------------------
_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@"
    r"[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}"
)

# absolute_path / home_dir ----------------------------------------------------------------------
# A POSIX path starts a token (line start, whitespace, quote, "=", ":", "(", ",", "[", "{", "|", "`"),
# so "$.a/b", "#/$defs/x", "1/2" and "and/or" never match; the "//" of a URL needs a segment char.
_ABS_PATH = re.compile(
    r"(?:^|(?<=[\s\"'=:(,\[{|`]))/[A-Za-z0-9._~\-]"
    r"|(?<![A-Za-z0-9_])[A-Za-z]:(?:\\|/(?=[A-Za-z0-9._~\-$]))"  # C:\ or C:/x
    r"|(?<!\\)\\\\[A-Za-z0-9._\-$]+\\[A-Za-z0-9._\-$]+",  # \\server\share
    re.M,
)
_HOME_DIR = re.compile(
    r"(?<![A-Za-z0-9_~/.\-])~[A-Za-z0-9_.\-]*[/\\]"  # ~/x, ~user/x
    r"|(?<![A-Za-z0-9._\-])/(?:home|Users)/[A-Za-z0-9._\-]+"
    r"|(?<![A-Za-z0-9._\-])/root(?![A-Za-z0-9._\-])"
    r"|(?<![A-Za-z0-9_])[A-Za-z]:[\\/](?:Users|Documents and Settings)[\\/][^\\/\s\"']+"
)

# credential ------------------------------------------------------------------------------------
# (substrings that must occur, pattern): well-known token shapes.
_TOKEN_SHAPES: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    (("AKIA", "ASIA"), re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])")),  # AWS
    (("gh", "github_pat_"), re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})")),
    (("xox",), re.compile(r"(?<![A-Za-z0-9])xox[abprse]-[A-Za-z0-9\-]{10,}")),  # Slack
    (("sk-",), re.compile(r"(?<![A-Za-z0-9_\-])sk-(?=[A-Za-z0-9_\-]*[0-9])[A-Za-z0-9_\-]{20,}")),  # OpenAI-style
    (("AIza",), re.compile(r"(?<![A-Za-z0-9_\-])AIza[0-9A-Za-z_\-]{35}")),  # Google API key
    (("eyJ",), re.compile(r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*")),  # JWT
    (("PRIVATE KEY",), re.compile(r"-----BEGIN[A-Z ]*PRIVATE KEY-----")),
    (
        ("earer", "EARER"),
        re.compile(r"(?<![A-Za-z])bearer[ \t]+(?=[A-Za-z0-9._~+/\-]*[0-9])[A-Za-z0-9._~+/\-]{12,}", re.I),
    ),
    (
        ("uthorization", "UTHORIZATION"),
        re.compile(
            r"(?<![A-Za-z])authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
            r"(?:bearer|basic|digest|token|negotiate|bot|aws4-hmac-sha256)\b",
            re.I,
        ),
    ),
)
# "password=...", '"api_key": "..."', "token: s3cr3t": a secret-named field with a real value. A bare
# "name: value" is also how prose reads ("the secret: any ..."), so there the value must hold a
# digit or symbol; after "=" or a quoted name any non-placeholder value counts.
_SECRET_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z])(?:password|passwd|passphrase|client[_\-]?secret|secret[_\-]?key|secret"
    r"|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key"
    r"|auth[_\-]?token|access[_\-]?token|refresh[_\-]?token|token)"
    r"(?P<q>[\"']?)[ \t]*(?P<sep>[:=])[ \t]*[\"']?(?P<v>[^\s\"',;{}\[\]()<>]+)",
    re.I,
)
_PLACEHOLDERS = frozenset(
    "false true null none nil redacted omitted hidden masked required optional string".split()
)
# Dict keys that name a secret: any real string value under them is a credential.
_SECRET_KEYS = frozenset({"token", "authorization", "cookie", "set_cookie"})
_SECRET_KEY_SUFFIXES = (
    "password", "passwd", "passphrase", "secret", "api_key", "apikey",
    "access_key", "secret_key", "private_key", "access_token", "auth_token", "refresh_token",
)

# ip_address ------------------------------------------------------------------------------------
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
# Exactly four octets: "2.1.1" (three parts) and "1.2.3.4.5" are not addresses.
_IPV4 = re.compile(rf"(?<![0-9A-Za-z.]){_OCTET}(?:\.{_OCTET}){{3}}(?![0-9]|\.[0-9])")
# Candidates only; ipaddress decides, so "00:00:00" and "12:30:45" never pass.
_IPV6 = re.compile(
    r"(?<![0-9A-Za-z:.])(?:[0-9A-Fa-f]{0,4}:){2,7}"
    r"(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Fa-f]{1,4})?(?:%[0-9A-Za-z]+)?(?![0-9A-Za-z:])"
)

# hostname --------------------------------------------------------------------------------------
# Only these last labels make a dotted token a host name: code ids ("pwh._boundary",
# "a_capability.runtime_trigger") and file names ("README.md", "schema.json") never end in one.
_TLDS = (
    "com net org io dev internal local localdomain lan corp intranet cloud ai app co edu gov mil "
    "info biz xyz tech cn de uk jp fr ru au ca br nl eu us ch se kr"
).split()
_TLD_HINT = re.compile(r"\.(?:" + "|".join(_TLDS) + r")(?![A-Za-z0-9_\-])", re.I)
_TLD_HINT_LOWER = re.compile(r"\.(?:" + "|".join(_TLDS) + r")(?![a-z0-9_\-])")  # for lowercase text
_HOSTNAME = re.compile(
    r"(?<![A-Za-z0-9_.\-@/\\$#])(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.){1,126}"
    r"(?P<tld>[A-Za-z]{2,63})(?![A-Za-z0-9_\-(\[]|\.[A-Za-z0-9_])"  # "logging.info(", "typing.IO[" are code
)
_TLD_SET = frozenset(_TLDS)
# RFC 2606 documentation domains are public by definition (".test", ".example", ".invalid" are
# not in the TLD list, so they are never flagged either).
_RESERVED_DOMAINS = ("example.com", "example.net", "example.org")

# transcript ------------------------------------------------------------------------------------
_ROLE_LINE = re.compile(r"^[ \t>]*(?:User|Assistant|System|Human|AI)[ \t]*:[ \t]*\S", re.M)
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
    re.M,
)
_REPL_PROMPT = re.compile(r"^[ \t]*>>>[ \t]+\S", re.M)

# environment_value -----------------------------------------------------------------------------
_ENV_NAME = (
    r"(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|HOME|PATH|USER|USERNAME|SHELL|PWD|TOKEN|LANG|TMPDIR"
    r"|HOSTNAME|LOGNAME|TERM|EDITOR|PYTHONPATH|PASSWORD|SECRET)"
)
_ENV_NAME_FULL = re.compile(_ENV_NAME)
_ENV_ASSIGN = re.compile(rf"(?<![A-Za-z0-9_$.\-]){_ENV_NAME}=(?=[^\s=])")  # HOME=/root
_ENV_EXPAND = re.compile(
    r"\$\{[A-Z][A-Z0-9_]*[}:]"  # ${VAR}, ${VAR:-x}
    r"|(?<![A-Za-z0-9_$\\])\$[A-Z][A-Z0-9_]+(?![A-Za-z0-9_])"  # $HOME
)
_ENV_WINDOWS = re.compile(r"%[A-Z][A-Z0-9_]+%")  # %USERPROFILE%


def _categories(text: str) -> list[str]:
    """The categories found in one string that is not a plain token (private names aside)."""
    out: list[str] = []
    colon = ":" in text
    dot = "." in text
    slash = "/" in text or "\\" in text

    if colon and "://" in text and any(
        _JSON_SCHEMA_URI.fullmatch(m.group()) is None for m in _URL.finditer(text)
    ):
        out.append("url")
    elif dot and ("www." in text or "WWW." in text) and _WWW.search(text):
        out.append("url")
    if "@" in text and _EMAIL.search(text):
        out.append("email")
    if slash and _ABS_PATH.search(text):
        out.append("absolute_path")
    if ("~" in text or (slash and ("home" in text or "Users" in text or "root" in text))) and _HOME_DIR.search(text):
        out.append("home_dir")
    if _has_credential(text, colon):
        out.append("credential")
    if dot and text.count(".") >= 3 and _IPV4.search(text):
        out.append("ip_address")
    elif colon and ("::" in text or text.count(":") >= 6) and any(map(_is_ipv6, _IPV6.finditer(text))):
        out.append("ip_address")
    if dot and _TLD_HINT.search(text) and any(map(_is_hostname, _HOSTNAME.finditer(text))):
        out.append("hostname")
    if _has_transcript(text, colon):
        out.append("transcript")
    if _has_raw_log(text, colon):
        out.append("raw_log")
    if (
        ("=" in text and _ENV_ASSIGN.search(text))
        or ("$" in text and _ENV_EXPAND.search(text))
        or ("%" in text and _ENV_WINDOWS.search(text))
    ):
        out.append("environment_value")
    return out


def _has_token_shape(text: str) -> bool:
    if not (
        "AKIA" in text or "ASIA" in text or "gh" in text or "github_pat_" in text or "xox" in text or "sk-" in text or "AIza" in text
        or "eyJ" in text or "PRIVATE KEY" in text or "earer" in text or "EARER" in text
        or "uthorization" in text or "UTHORIZATION" in text
    ):
        return False
    for hints, pattern in _TOKEN_SHAPES:
        for hint in hints:
            if hint in text:
                if pattern.search(text):
                    return True
                break
    return False


def _has_credential(text: str, colon: bool) -> bool:
    if _has_token_shape(text):
        return True
    if colon or "=" in text:
        low = text.lower()
        if "pass" in low or "secret" in low or "key" in low or "token" in low:
            return any(map(_is_secret_value, _SECRET_ASSIGNMENT.finditer(text)))
    return False


def _is_secret_value(match: re.Match[str]) -> bool:
    value = match.group("v")
    if _is_placeholder(value):
        return False
    return match.group("sep") == "=" or bool(match.group("q")) or not value.isalpha()


def _is_placeholder(value: str) -> bool:
    """``***``, ``<redacted>``, ``null``: a value that names no secret."""
    bare = value.strip().strip("<>[]{}()\"'").lower()
    return not bare.strip("*x.-_ ") or bare in _PLACEHOLDERS


def _is_ipv6(match: re.Match[str]) -> bool:
    text = match.group()
    try:
        ipaddress.IPv6Address(text.split("%", 1)[0])
    except ValueError:
        return False
    # "a::b" is also a code path; demand a digit or at least three groups.
    return any(c.isdigit() for c in text) or sum(1 for g in text.split(":") if g) >= 3


def _is_hostname(match: re.Match[str]) -> bool:
    if match.group("tld").lower() not in _TLD_SET:
        return False
    host = match.group().lower()
    return not any(host == d or host.endswith("." + d) for d in _RESERVED_DOMAINS)


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


def _as_str_list(items: Iterable[str]) -> list[str]:
    """Accept one string or an iterable of strings; silently drop anything else (never str() it)."""
    if items is None:
        return []
    if issubclass(type(items), str):
        items = [items]
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

    __slots__ = ("_allow", "_allow_re", "_names_re", "_memo", "_key_memo", "_key_sets")

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

    def scan_text(self, text: str) -> list[Finding]:
        """Scan a text file's content line by line; paths are ``line N`` (1-based)."""
        if not issubclass(type(text), str):
            return [Finding("unscannable", "line 0")]
        found: _Found = set()
        try:
            for number, line in enumerate(str.__str__(text).split("\n"), start=1):
                line = line.rstrip("\r")
                if line and not line.isspace():  # lines are not memoised: they rarely repeat
                    for category in self._scan_str_uncached(line):
                        found.add((f"line {number}", category))
        except Exception:  # as in scan_value
            found.add(("line 0", "unscannable"))
        return _sorted(found)

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
        if (text.isidentifier() and text.islower() and "gh" not in text and "github_pat_" not in text) or (
            text[:2].isdigit() and _TIMESTAMP.fullmatch(text)
        ):
            # An opaque lowercase id ("receipt_7f3a9c"; of the token shapes only a GitHub token can
            # look like one) or a bare timestamp: no structural rule applies, and such strings are
            # unique per dispatch, so they are rechecked rather than memoised.
            if self._names_re is None or text in self._allow or not self._has_private_name(text):
                return ()
            return ("private_name",)
        result = self._scan_str_uncached(text)
        if not result and len(text) <= _MEMO_MAX_TEXT:  # only clean strings: the memo never holds private data
            if len(self._memo) >= _MEMO_MAX_ENTRIES:
                self._memo.clear()
            self._memo[text] = result
        return result

    def _scan_str_uncached(self, text: str) -> tuple[str, ...]:
        if text in self._allow:
            return ()
        if self._allow_re is not None:
            text = self._allow_re.sub(" ", text)
        out: list[str] = []
        if _LOWER_ID.fullmatch(text):
            if ("gh" in text or "github_pat_" in text or "xox" in text or "sk-" in text) and _has_token_shape(text):
                out.append("credential")
        elif _PLAIN.fullmatch(text):
            if _has_token_shape(text):
                out.append("credential")
        elif _DOTTED_ID.fullmatch(text):
            if text.count(".") >= 3 and _IPV4.search(text):
                out.append("ip_address")
            if _TLD_HINT_LOWER.search(text) and any(map(_is_hostname, _HOSTNAME.finditer(text))):
                out.append("hostname")
            if "www." in text and _WWW.search(text):
                out.append("url")
            if ("gh" in text or "github_pat_" in text or "xox" in text or "sk-" in text) and _has_token_shape(text):
                out.append("credential")
        elif not _TIMESTAMP.fullmatch(text):
            out = _categories(text)
        if self._names_re is not None and self._has_private_name(text):
            out.append("private_name")
        return tuple(out)

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
        if categories or not _SAFE_KEY.fullmatch(key):
            suffix = "[?]"  # the key may itself be private: the path must not spell it out
        else:  # the same rendering as pwh._codes.json_path
            suffix = f".{key}" if key.isidentifier() else f"['{key}']"
        normal = key.lower().replace("-", "_")
        flags = 0
        if normal in _SECRET_KEYS or normal.endswith(_SECRET_KEY_SUFFIXES):
            flags |= _KEY_SECRET
        if _ENV_NAME_FULL.fullmatch(key):
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
        """Iterative depth-first walk: no Python recursion, so no RecursionError at any depth."""
        stack: list[Any] = [(root, root_path, 0)]
        active: set[int] = set()  # ids of the containers on the current path, to spot cycles
        reported = False
        while stack:
            item = stack.pop()
            node = item[0]
            if node is _EXIT:
                active.discard(item[1])
                continue
            path = item[1]
            kind = type(node)
            if issubclass(kind, str):
                for category in self._scan_str(str.__str__(node)):
                    found.add((path, category))
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
                self._walk_dict(node, path, depth + 1, found, stack)
            else:
                items = list.__iter__(node) if issubclass(kind, list) else tuple.__iter__(node)
                self._walk_items(items, path, depth + 1, found, stack)

    def _walk_items(self, items: Iterable[Any], path: str, depth: int, found: _Found, stack: list[Any]) -> None:
        children = []
        for i, child in enumerate(items):
            child_kind = type(child)
            if child_kind is str:  # the common case, scanned inline to save a stack round trip
                for category in self._scan_str(child):
                    found.add((f"{path}[{i}]", category))
            elif not issubclass(child_kind, _SCALARS):
                children.append((child, f"{path}[{i}]", depth))
        stack.extend(reversed(children))

    def _walk_dict(self, node: dict[Any, Any], path: str, depth: int, found: _Found, stack: list[Any]) -> None:
        # dict.items() called on the instance reads the table directly: a subclass's overrides never
        # run, and no key is hashed or compared (a hostile key's __eq__/__hash__ stays uncalled).
        memo, key_memo = self._memo, self._key_memo
        has_role = has_content = False
        children = []
        for key, child in dict.items(node):
            key_kind = type(key)
            if key_kind is str:
                info = key_memo.get(key)
                if info is None:
                    info = self._key_info(key)
            elif issubclass(key_kind, str):
                info = self._key_info(str.__str__(key))
            else:
                info = _ODD_KEY
            key_categories, suffix, flags = info
            child_kind = type(child)
            if child_kind is str:  # the common case, scanned inline to save a stack round trip
                categories = memo.get(child)
                if categories is None:
                    categories = self._scan_str(child)
            else:
                categories = ()
                if not issubclass(child_kind, _SCALARS):
                    children.append((child, path + suffix, depth))
            if not (categories or key_categories or flags):
                continue  # the hot path ends here
            child_path = path + suffix
            found.update((child_path, category) for category in key_categories + categories)
            if child_kind is str and child:
                if flags & _KEY_SECRET and not _is_placeholder(child):
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


def scan_text(text: str) -> list[Finding]:
    """Scan a text file's content with the default scanner."""
    return _DEFAULT.scan_text(text)


def is_clean(value: Any) -> bool:
    """True when the default scanner finds nothing in ``value``."""
    return _DEFAULT.is_clean(value)
