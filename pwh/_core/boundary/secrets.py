"""Credentials for the public-boundary scanner (SPEC §2 INP, JNL-6, M13): token shapes, secret-named
keys in any case style, and ``name=value`` assignments.

Token shapes come first from **detect-secrets** (Yelp; its regex plugins, collected from the
installed package on first use so a new release's plugins count without a change here) and then
from pwh's own rules, for the formats the library has no plugin for or matches only in one file
syntax (listed in :data:`OWN_SHAPES`). Of the library's plugins, three are left out on purpose:
the two high-entropy detectors and the keyword detector flag every 64-hex digest (``pwh_…``,
``sha256:…``) and every quoted value after a key word, i.e. the opaque ids this scanner must pass;
pwh's key-name rule (:func:`is_secret_key`) and its high-entropy rule, which exempts the contracts'
digest grammars, do their job. The public-IP plugin is left to pwh's own address rule, which also
finds private addresses.

A key names a secret when, split into words in any case style (``apiKey``, ``API-KEY``,
``x_api_key``, ``ClientSecret``, ``DB_PASSWORD``), it contains a secret term and its last word
does not make it metadata about the secret (``token_budget``, ``password_policy``,
``max_tokens``, ``secret_name``). Whatever sits under such a key is a secret: a string that is not a
placeholder, a number, and every such leaf of a list or object.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
import re
from collections import Counter
from functools import lru_cache
from re import _constants as _c  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

from pwh._core.boundary.decoding import encodes_text
from pwh._core.boundary.values import is_placeholder, token_value_is_secret

__all__ = [
    "CERTAIN_KINDS",
    "OWN_SHAPES",
    "certain_credential",
    "could_hold_token",
    "fast_clean",
    "has_assignment",
    "has_token_shape",
    "is_bare_token_key",
    "is_placeholder",
    "is_secret_key",
    "key_words",
    "names_secret_value",
]

# --------------------------------------------------------------------------------------------
# Key names in any case style
# --------------------------------------------------------------------------------------------

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")

# A word containing one of these names a secret, whatever surrounds it ("dbpassword", "passwordHash"),
# in English and in the languages whose word for it keys carry most often (German, Spanish after
# the accent is dropped, Portuguese, Dutch, French, Finnish, Swedish).
_CONTAINED = (
    "password",
    "passwd",
    "passphrase",
    "passcode",
    "passwort",
    "kennwort",
    "contrasena",
    "senha",
    "wachtwoord",
    "motdepasse",
    "salasana",
    "losenord",
)
# A word ending in one of these names a secret ("clientsecret", "accesstoken", "oauth", "setcookie").
_ENDINGS = tuple(
    """
    secret secrets token tokens apikey apikeys accesskey privatekey secretkey signingkey credential
    credentials cookie cookies authorization auth pwd privkey
    """.split()
)
# Whole words that name a secret on their own.
_WORDS = frozenset(
    """
    pass pw pwd pword bearer jwt creds cred pin pincode otp totp hotp psk sas dsn mfa pat privkey
    """.split()
)
# Two or three consecutive words that name a secret ("api key", "session id", "connection string").
_PHRASES = frozenset(
    {
        ("api", "key"),
        ("access", "key"),
        ("private", "key"),
        ("secret", "key"),
        ("signing", "key"),
        ("encryption", "key"),
        ("master", "key"),
        ("auth", "key"),
        ("session", "id"),
        ("session", "key"),
        ("session", "token"),
        ("client", "secret"),
        ("connection", "string"),
        ("conn", "str"),
        ("conn", "string"),
        ("account", "key"),
        ("shared", "key"),
        ("access", "key"),
        ("ssh", "key"),
        ("deploy", "key"),
        ("hmac", "key"),
        ("storage", "key"),
        ("license", "key"),
        ("recovery", "code"),
        ("recovery", "codes"),
        ("backup", "code"),
        ("auth", "code"),
        ("authorization", "code"),
        ("access", "code"),
        ("priv", "key"),
        ("client", "key"),
        ("tls", "key"),
        ("ssl", "key"),
        ("pgp", "key"),
        ("gpg", "key"),
        ("sessionid",),
        ("apikey",),
        ("mot", "de", "passe"),
    }
)
# "<one of these> key" names a secret ("appKey", "wallet_key", "rsa-key"); a bare "key" does not.
_KEY_KINDS = frozenset(
    """
    api app access secret private priv signing encryption encrypt master auth session client account
    shared ssh deploy hmac storage license tls ssl pgp gpg service consumer crypto root admin
    subscription webhook jwt aes rsa ed25519 ecdsa wallet sas server personal bot
    """.split()
)
# "<one of these> key" is a data structure's key or a public key, not a secret.
_PUBLIC_KEY_KINDS = frozenset(
    """
    sort cache partition primary foreign idempotency dedup dedupe lookup map dict hash range row object
    translation i18n group routing message cursor join composite unique index natural surrogate shard
    sharding bucket s3 compound candidate alternate event state config setting settings registry record
    entry item field column table cluster tenant public pub verify verification sig host known dispatch
    intent receipt hook capability schema segment fact todo goal agent turn trace span request
    correlation lock order sequence seq version content kv json yaml metadata label tag name the a by of
    """.split()
)
# A word before "token" that makes it a pagination or sync cursor, not a credential.
_CURSOR_WORDS = frozenset({"page", "pagination", "continuation", "cursor", "sync", "resume", "next", "prev", "delta", "change"})
# A last word that makes the key metadata about a secret rather than the secret itself.
_QUALIFIERS = frozenset(
    """
    count counts len length size limit limits max min budget budgets type types kind kinds name names
    label hint policy policies ttl expiry expires expiration expired age lifetime field fields scheme
    format version ref refs required enabled disabled present provided configured rotated rotation
    strength algorithm alg usage used remaining rate estimate method methods mode provider providers
    status state realm endpoint endpoints url urls uri server service level error errors file path dir
    location store vault manager source rule rules schema index position offset window per cost quota
    pattern regex validator check checked valid invalid recorded values flag flags policy_version class
    prefix suffix docs doc description help spec dispatch limiter
    """.split()
)
# A first word that makes the key a quantity ("max_tokens", "num_tokens").
_QUANTITY_FIRST = frozenset({"max", "min", "num", "n", "total", "count", "number", "avg", "mean"})
# With token(s), these make the key a language-model count ("prompt_tokens", "input_tokens").
_MODEL_COUNT = frozenset({"prompt", "completion", "input", "output", "reasoning", "cached", "cache", "context"})


def key_words(name: str) -> tuple[str, ...]:
    """``name`` split into lowercase words in any case style: ``x-apiKey`` → ``('x', 'api', 'key')``."""
    return tuple(w.lower() for w in _NON_ALNUM.split(_CAMEL.sub("_", name)) if w)


def _singular(words: tuple[str, ...]) -> tuple[str, ...]:
    """The phrase with its last word singular ("api keys" → "api key"), for the phrase table."""
    if words and len(words[-1]) > 3 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        return (*words[:-1], words[-1][:-1])
    return words


# Every secret term above holds one of these: a key whose words hold none names no secret, which
# one C-level search tells for the usual key ("schema_version", "event_kind").
_TERMS = re.compile(
    "pass|pw|secret|token|key|auth|cred|cookie|bearer|jwt|pin|otp|psk|sas|dsn|mfa|pat|priv|session|conn|code"
    "|senha|contrase|kennwort|wachtwoord|salasana|losenord"
)
_CONTAINED_RE = re.compile("|".join(_CONTAINED))


def is_secret_key(name: str) -> bool:
    """True when a dict key or an assigned name (already normalised text) names a secret."""
    words = key_words(name)
    if not words or words[-1] in _QUALIFIERS or (len(words) > 1 and words[0] in _QUANTITY_FIRST):
        return False
    if not _TERMS.search("".join(words)):
        return False
    hit = False
    for i, word in enumerate(words):
        if word in _WORDS or _CONTAINED_RE.search(word) or word.endswith(_ENDINGS):
            hit = True
            break
        if (word,) in _PHRASES or _singular(words[i : i + 2]) in _PHRASES or _singular(words[i : i + 3]) in _PHRASES:
            hit = True
            break
        if i + 1 < len(words) and words[i + 1] in ("key", "keys") and word not in _PUBLIC_KEY_KINDS:
            hit = True  # "<anything> key" ("appKey", "stripe_key") but a data structure's or a public one
            break
        stem = word[:-4] if word.endswith("keys") else word[:-3] if word.endswith("key") else ""
        if stem in _KEY_KINDS:  # "appkey", "sshkeys"
            hit = True
            break
    if not hit or "per" in words[1:]:  # "tokens_per_second": a rate
        return False
    # "prompt_tokens", "input_tokens": a language model's count; "next_page_token": a cursor.
    counted = any(w in _MODEL_COUNT or w in _CURSOR_WORDS for w in words)
    return not (counted and words[-1].endswith(("token", "tokens")) and not _CONTAINED_RE.search("".join(words)))


def is_bare_token_key(name: str) -> bool:
    """True for a key that is only ``token`` or ``tokens`` (any case): it names a session token or a
    pagination cursor alike, so its value is a secret unless it is a cursor's structured id
    (:func:`pwh._core.boundary.values.token_value_is_secret`). Every other key naming a token
    names a credential (``access_token``, ``csrfToken``, ``X-Auth-Token``)."""
    return key_words(name) in (("token",), ("tokens",))


def names_secret_value(name: str, value: str) -> bool:
    """True when ``value`` assigned to ``name`` is a secret by the key rule: a secret-named name and
    a value that is no placeholder and no ``$VAR`` reference; under a bare ``token`` name, not a
    cursor's structured id (``token=page_2``)."""
    if not is_secret_key(name) or is_placeholder(value) or value.startswith("$"):  # "${VAR}" names a variable
        return False
    return not is_bare_token_key(name) or token_value_is_secret(value)


# A bare key-ish word that cannot be a secret term: checked before the regex below on hot-path text.
_STEMS = tuple(
    """
    pass pw secret key token auth cred cookie bearer session pin otp psk sas dsn jwt conn mfa pat
    senha contrase kennwort wachtwoord salasana losenord
    """.split()
)

# --------------------------------------------------------------------------------------------
# name=value assignments in text
# --------------------------------------------------------------------------------------------

_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.\-])(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,63})(?P<q>[\"']?)[ \t]*"
    r"(?P<sep>:=|=>|[:=])[ \t]*(?P<vq>[\"']?)(?P<v>[^\s\"',;{}\[\]()<>]+)"
)
_FLAG = re.compile(r"(?<![A-Za-z0-9_\-])--?(?P<name>[A-Za-z][A-Za-z0-9\-_]{1,40})(?:=|[ \t]+)(?P<v>[^\s\"'\-][^\s\"']*)")


def has_assignment(text: str) -> bool:
    """``password=…``, ``"apiKey": "…"``, ``X-Auth-Token: …``, ``--token …``: a secret-named name with
    a real value. After an unquoted ``:`` the value must hold a digit or symbol (``the secret: any``
    is prose); after ``=`` or a quoted name any non-placeholder value counts."""
    low = text.lower()
    if not any(stem in low for stem in _STEMS):
        return False
    for match in _ASSIGNMENT.finditer(text):
        value = match.group("v")
        if not names_secret_value(match.group("name"), value):
            continue
        if match.group("sep") != ":" or match.group("q") or match.group("vq") or not value.isalpha():
            return True
    if "-" in text:
        for match in _FLAG.finditer(text):
            value = match.group("v")
            if names_secret_value(match.group("name"), value) and not value.isalpha():
                return True
    return False


# --------------------------------------------------------------------------------------------
# Token shapes
# --------------------------------------------------------------------------------------------

# pwh's own shapes: (name, pattern). Each is a format the library has no plugin for, or one whose
# plugin only matches in one file syntax or with one fixed length.
OWN_SHAPES: tuple[tuple[str, str], ...] = (
    ("aws_access_key_id", r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[0-9A-Z]{16}(?![0-9A-Z])"),
    ("github_token", r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{30,}"),
    ("github_fine_grained", r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{20,}"),
    ("gitlab_token", r"(?<![A-Za-z0-9_])gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas|sa|c)-[A-Za-z0-9_\-]{16,}"),
    ("slack_token", r"(?<![A-Za-z0-9])xox[a-z]-[A-Za-z0-9\-]{10,}"),
    ("slack_app_token", r"(?<![A-Za-z0-9])xapp-[0-9]+-[A-Za-z0-9\-]{10,}"),
    ("slack_config_token", r"(?<![A-Za-z0-9])xoxe(?:\.xox[a-z])?-[0-9]+-[A-Za-z0-9\-]{10,}"),
    ("openai_style_key", r"(?<![A-Za-z0-9_\-])sk-(?=[A-Za-z0-9_\-]*[0-9])[A-Za-z0-9_\-]{20,}"),
    ("stripe_key", r"(?<![A-Za-z0-9])(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{10,}"),
    ("stripe_webhook_secret", r"(?<![A-Za-z0-9])whsec_[0-9A-Za-z]{20,}"),
    ("google_api_key", r"(?<![A-Za-z0-9_\-])AIza[0-9A-Za-z_\-]{30,}"),
    ("google_oauth_client_secret", r"(?<![A-Za-z0-9])GOCSPX-[0-9A-Za-z_\-]{20,}"),
    ("google_oauth_access_token", r"(?<![A-Za-z0-9])ya29\.[0-9A-Za-z_\-]{20,}"),
    ("google_oauth_refresh_token", r"(?<![A-Za-z0-9])1//0[0-9A-Za-z_\-]{20,}"),
    ("npm_token", r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{30,}"),
    ("pypi_token", r"(?<![A-Za-z0-9])pypi-[A-Za-z0-9_\-]{40,}"),
    ("huggingface_token", r"(?<![A-Za-z0-9])(?:hf_|api_org_)[A-Za-z0-9]{30,}"),
    ("sendgrid_key", r"(?<![A-Za-z0-9])SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
    ("telegram_bot_token", r"(?<![0-9])[0-9]{6,12}:AA[0-9A-Za-z_\-]{30,}"),
    ("discord_webhook", r"discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_\-]{20,}"),
    ("azure_connection_string", r"(?i:AccountKey|SharedAccessKey|SharedAccessSignature|SharedSecret)[ \t]*=[ \t]*[A-Za-z0-9+/%=]{16,}"),
    ("azure_ad_client_secret", r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"),
    ("azure_sas_signature", r"(?<![A-Za-z0-9])sig=[A-Za-z0-9%+/]{20,}={0,2}"),
    ("private_key_block", r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"),
    ("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{50,}"),
    ("jwt", r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*"),
    ("digitalocean_token", r"(?<![A-Za-z0-9])do[opr]_v1_[a-f0-9]{40,}"),
    ("shopify_token", r"(?<![A-Za-z0-9])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{24,}"),
    ("atlassian_token", r"(?<![A-Za-z0-9])ATATT3[A-Za-z0-9_\-=]{40,}"),
    ("mailgun_key", r"(?<![A-Za-z0-9])key-[0-9a-f]{32}(?![0-9a-f])"),
    ("postman_key", r"(?<![A-Za-z0-9])PMAK-[0-9a-f]{20,}-[0-9a-f]{20,}"),
    ("databricks_token", r"(?<![A-Za-z0-9])dapi[0-9a-f]{32}"),
    ("vault_token", r"(?<![A-Za-z0-9])hv[sbr]\.[A-Za-z0-9_\-]{20,}"),
    ("doppler_token", r"(?<![A-Za-z0-9])dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{20,}"),
    ("terraform_token", r"[A-Za-z0-9]{10,}\.atlasv1\.[A-Za-z0-9_\-]{40,}"),
    ("linear_key", r"(?<![A-Za-z0-9])lin_(?:api|oauth)_[A-Za-z0-9]{30,}"),
    ("groq_key", r"(?<![A-Za-z0-9])gsk_[A-Za-z0-9]{30,}"),
    ("replicate_token", r"(?<![A-Za-z0-9])r8_[A-Za-z0-9]{30,}"),
    ("notion_token", r"(?<![A-Za-z0-9])(?:secret_[A-Za-z0-9]{40,}|ntn_[A-Za-z0-9]{40,})"),
    ("grafana_token", r"(?<![A-Za-z0-9])(?:glsa_[A-Za-z0-9_]{30,}|glc_[A-Za-z0-9+/=]{30,})"),
    ("newrelic_key", r"(?<![A-Za-z0-9])NR(?:AK|II|JS)-[A-Z0-9]{20,}"),
    ("square_token", r"(?<![A-Za-z0-9])(?:sq0atp|sq0csp|EAAA)[-_][A-Za-z0-9_\-]{20,}"),
    ("facebook_token", r"(?<![A-Za-z0-9])EAA[A-Za-z0-9]{60,}"),
    ("twilio_key", r"(?<![A-Za-z0-9])(?:AC|SK)[0-9a-f]{32}(?![0-9a-f])"),
    ("dropbox_token", r"(?<![A-Za-z0-9])sl\.[A-Za-z0-9_\-]{60,}"),
    ("firebase_fcm_key", r"(?<![A-Za-z0-9])AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{40,}"),
    ("bearer", r"(?i:(?<![A-Za-z])bearer)[ \t]+(?=[A-Za-z0-9._~+/\-]*[0-9])[A-Za-z0-9._~+/\-]{12,}=*"),
    (
        "authorization_header",
        (
            r"(?i:(?<![A-Za-z])(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
            r"(?:bearer|basic|digest|token|negotiate|bot|aws4-hmac-sha256|sso-key|ntlm)\b)"
        ),
    ),
    ("url_userinfo", r"[A-Za-z][A-Za-z0-9+.\-]{0,31}://[^\s:/@\"'<>]{1,64}:[^\s:/@\"'<>]{1,128}@"),
)

# Hints for the own shapes whose parse tree gives a weak one or none (see _hints).
_OWN_HINTS: dict[str, tuple[str, ...]] = {
    "aws_access_key_id": ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "APKA"),
    "gitlab_token": ("gl",),
    "stripe_key": ("k_live_", "k_test_"),
    "huggingface_token": ("hf_", "api_org_"),
    "notion_token": ("secret_", "ntn_"),
    "square_token": ("sq0atp", "sq0csp", "EAAA"),
    "twilio_key": ("AC", "SK"),
    "authorization_header": ("authorization",),
    "grafana_token": ("glsa_", "glc_"),
}

# Library plugins left out (see the module docstring).
_SKIPPED_PLUGINS = frozenset({"Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector", "IPPublicDetector"})


def _subclasses(cls: type) -> list[type]:
    out: list[type] = []
    sub: type
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(_subclasses(sub))
    return out


@lru_cache(maxsize=1)
def library_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The regexes of every detect-secrets regex plugin (but the skipped ones), as (plugin, pattern)."""
    try:
        from detect_secrets import plugins
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:  # a broken install must read as "fewer rules", never as a crash
        return ()
    for module in pkgutil.iter_modules(plugins.__path__):
        try:
            importlib.import_module(f"{plugins.__name__}.{module.name}")
        except Exception:
            continue
    out: list[tuple[str, re.Pattern[str]]] = []
    for cls in _subclasses(RegexBasedDetector):
        if cls.__name__ in _SKIPPED_PLUGINS:
            continue
        try:
            denylist = cls.denylist if not isinstance(cls.__dict__.get("denylist"), property) else cls().denylist  # type: ignore[attr-defined]
            out.extend((cls.__name__, p) for p in denylist if isinstance(p, re.Pattern))
        except Exception:
            continue
    return tuple(out)


def _hints(pattern: re.Pattern[str]) -> tuple[str, ...]:
    """Substrings one of which every match of ``pattern`` contains (lower case for a pattern that
    ignores case), found by reading its parse tree: the longest run of literals, through branches
    of literals and small character sets; ``()`` when there is none (the pattern always runs).

    A pattern that starts with a look-behind or a branch cannot use the regex engine's literal
    prefix scan, so searching for it costs about a microsecond per 80 characters; ~90 of them on
    every string would cost 100 µs. A substring test costs nanoseconds."""
    try:
        tree = _parser.parse(pattern.pattern, pattern.flags)
    except Exception:
        return ()
    best: tuple[str, ...] = ()
    run: tuple[str, ...] = ("",)

    def close() -> None:
        nonlocal best, run
        if run != ("",) and min(map(len, run)) > min(map(len, best), default=0):
            best = run
        run = ("",)

    def extend(options: list[str]) -> None:
        nonlocal run
        run = tuple(p + o for p in run for o in options)
        if len(run) > 24:
            close()

    def literal_options(item: tuple[Any, Any]) -> list[str] | None:
        op, av = item
        if op is _c.LITERAL:
            return [chr(av)]
        if op is _c.IN and all(o is _c.LITERAL for o, _ in av) and len(av) <= 6:
            return [chr(v) for _, v in av]
        if op is _c.SUBPATTERN and len(av[-1].data) == 1 and av[-1].data[0][0] is _c.BRANCH:
            alternatives = av[-1].data[0][1][1]
            out = []
            for alt in alternatives:
                chars = [literal_options(i) for i in alt.data]
                if any(c is None or len(c) != 1 for c in chars):
                    return None
                out.append("".join(c[0] for c in chars))  # type: ignore[index]
            return out if all(out) else None
        if op is _c.SUBPATTERN and all(literal_options(i) is not None for i in av[-1].data):
            return None  # a group of literals: walked by the caller's flattening below
        return None

    items = list(tree.data)
    while items:
        item = items.pop(0)
        op, av = item
        if op in (_c.ASSERT, _c.ASSERT_NOT, _c.AT):
            continue  # zero width: the literal run goes on
        if op is _c.SUBPATTERN and not any(i[0] is _c.BRANCH for i in av[-1].data) and len(av[-1].data) > 1:
            items[:0] = list(av[-1].data)  # a plain group: read its items in line
            continue
        options = literal_options(item)
        if options is None:
            close()
        else:
            extend(options)
    close()
    ignore_case = bool(pattern.flags & re.IGNORECASE) or "(?i" in pattern.pattern
    return tuple(h.lower() for h in best) if ignore_case else best


@lru_cache(maxsize=1)
def _gated() -> tuple[tuple[tuple[str, ...], bool, re.Pattern[str]], ...]:
    """Every shape, pwh's own first, as (hints, ignores case, pattern)."""
    named = [(n, re.compile(p)) for n, p in OWN_SHAPES] + list(library_patterns())
    out = []
    for name, pattern in named:
        ignore_case = bool(pattern.flags & re.IGNORECASE) or "(?i" in pattern.pattern
        hints = _OWN_HINTS.get(name) or _hints(pattern)
        out.append((tuple(h.lower() for h in hints) if ignore_case else hints, ignore_case, pattern))
    return tuple(out)


# AWS key ids are base32 after their prefix (A-Z and 2-7). Of the prefixes, only AKIA is never the
# start of an ordinary upper-case code; ASIA, ACCA, AIDA... begin words and names, so after one of
# them the 16 characters must be AWS's own alphabet ("ASIAPACIFIC2026Q1REG" is a region code, not
# a session key). AKIA keeps the looser 0-9A-Z that other scanners and test generators use.
_AWS_ID = re.compile(r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[0-9A-Z]{16}")
_BASE32 = re.compile(r"[A-Z2-7]{16}")


def _not_an_aws_id(matched: str) -> bool:
    """True when a match of an AWS key-id shape is an upper-case code instead (see above)."""
    return len(matched) == 20 and _AWS_ID.fullmatch(matched) is not None and matched[:4] != "AKIA" and not _BASE32.fullmatch(matched[4:])


def _matches(pattern: re.Pattern[str], text: str) -> bool:
    """True when ``pattern`` finds a token in ``text`` that is not an upper-case code (_not_an_aws_id)."""
    for match in pattern.finditer(text):
        if not _not_an_aws_id(match.group()):
            return True
    return False


@lru_cache(maxsize=1)
def _hint_table() -> tuple[tuple[tuple[str, tuple[int, ...]], ...], tuple[tuple[str, tuple[int, ...]], ...], tuple[int, ...]]:
    """(case-sensitive hints, lower-case hints, always-run shapes): each hint with the shapes it gates."""
    exact: dict[str, list[int]] = {}
    folded: dict[str, list[int]] = {}
    always: list[int] = []
    for i, (hints, ignore_case, _) in enumerate(_gated()):
        if not hints:
            always.append(i)
        for hint in hints:
            (folded if ignore_case else exact).setdefault(hint, []).append(i)
    return (tuple((h, tuple(v)) for h, v in exact.items()), tuple((h, tuple(v)) for h, v in folded.items()), tuple(always))


# A lowercase id made of words and short numbered words ("receipt_000042", "todo_completed",
# "loopx_post_writeback_hook_input_v0"): no token shape is only such segments unless it starts
# with one of the prefixes below, so the shapes are skipped for it (the hot path's usual string).
_WORDS_AND_NUMBERS = re.compile(r"(?:[a-z]{1,24}[0-9]{0,4}|[0-9]+)(?:[_.\-](?:[a-z]{1,24}[0-9]{0,4}|[0-9]+))*")
_LOWER_PREFIXES = re.compile(
    r"xox|xapp|gh[pousr]_|github_pat_|gl[a-z]{1,5}-|glsa_|glc_|sk-|sk_|rk_|whsec_|npm_|hf_|api_org_|pypi-|key-|"
    r"dapi|do[opr]_|shp|gsk_|r8_|lin_|secret_|ntn_|sq0|hv[sbr]\.|dp\.|sl\.|ya29|bearer|sig="
)
# The contracts' digest grammars (pwh_/pwi_ + sha256 hex, sha256:hex, bare hex): opaque by definition.
_DIGEST = re.compile(r"(?:pw[hi]_|sha256:|sha512:)?(?:[0-9a-f]{64}|[0-9a-f]{128}|[0-9a-f]{40})")
_SHAPE_MIN = 11  # the shortest match any library or own shape can make
# One C-level match for the hot path: a digest of the contracts' grammars, or a lowercase id of
# words and numbers joined by "_" or "-" (no Slack prefix, no "localhost", no "ip-" as in a cloud's
# host name for an address, ip-10-0-3-17). Such a string holds no token shape and no structural
# finding: only a declared private name can be in it.
_SEGMENT = r"(?:[a-z]{1,24}[0-9]{0,4}|[0-9]+)"
_FAST_ID = re.compile(r"pw[hi]_[0-9a-f]{64}|" + _SEGMENT + r"(?:[_\-]" + _SEGMENT + r")*")


def fast_clean(text: str) -> bool:
    """The hot path's test (see above). Of the token shapes only Slack's can be all such segments
    ("xoxb-123-456-abc"); every other lowercase-capable one has a random segment that mixes letters
    and digits or runs past 24 letters."""
    return (
        _FAST_ID.fullmatch(text) is not None and "xox" not in text and "xapp" not in text and "localhost" not in text and "ip-" not in text
    )


def could_hold_token(text: str) -> bool:
    """False for strings no token shape can match: short ones, the contracts' digests, and
    lowercase ids of words and numbers (see _WORDS_AND_NUMBERS)."""
    if len(text) < _SHAPE_MIN or _DIGEST.fullmatch(text):
        return False
    return not (text.islower() and _WORDS_AND_NUMBERS.fullmatch(text) and not _LOWER_PREFIXES.search(text))


def has_token_shape(text: str) -> bool:
    """True when ``text`` (already normalised) holds a credential of a known format, or a long random token."""
    if not could_hold_token(text):
        return False
    return has_known_format(text) or _has_random_token(text)


def has_known_format(text: str) -> bool:
    """True when ``text`` holds a credential of a known format (a documented prefix or structure),
    leaving out the long-random-run rule: for strings joined from pieces (a token split across
    list items), where a run of random ids joined would look random too."""
    exact, folded, always = _hint_table()
    shapes = _gated()
    candidates = set(always)
    for hint, indexes in exact:
        if hint in text:
            candidates.update(indexes)
    low = text.lower()
    for hint, indexes in folded:
        if hint in low:
            candidates.update(indexes)
    for i in sorted(candidates):  # pwh's own shapes first: they are the cheaper ones
        if shapes[i][2].search(text) and _matches(shapes[i][2], text):
            return True
    return False


# Unprefixed secrets: a run of 32+ token characters with high entropy that mixes upper case, lower
# case and digits, or (one case only) letters beyond a-f and many digits: base64/base62/base32 keys.
# The contracts' ids are lower-case words, numbers and hex digests (excluded), so none is such a
# run; prose has no such run either.
_RUN = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{32,}={0,2}(?![A-Za-z0-9+/_\-])")
_ONE_CASE_RUN = re.compile(r"(?<![A-Za-z0-9])(?:[a-z0-9]{32,}|[A-Z0-9]{32,})(?![A-Za-z0-9])")
_HEX_RUN = re.compile(r"[0-9a-fA-F]+")


def _entropy(run: str) -> float:
    counts = Counter(run)
    return -sum(n / len(run) * math.log2(n / len(run)) for n in counts.values())


# A random run may hold fewer than two digits (an AWS secret access key is 40 base64 characters;
# one in six has at most one digit). Without digits, CamelCase identifiers and paths also mix
# cases, but words repeat letters: their entropy stays near 4.0-4.2 bits, a random run's near 5.
_LETTERS_ENTROPY = 4.4


def _has_random_token(text: str) -> bool:
    for match in _RUN.finditer(text):
        run = match.group().rstrip("=")
        upper = sum(1 for c in run if c.isupper())
        lower = sum(1 for c in run if c.islower())
        digits = sum(1 for c in run if c.isdigit())
        if upper >= 2 and lower >= 2 and _entropy(run) >= (4.0 if digits >= 2 else _LETTERS_ENTROPY) and not encodes_text(match.group()):
            return True  # (base64 of readable text is an encoded cursor or state, not a random key)
    for match in _ONE_CASE_RUN.finditer(text):
        run = match.group()
        digits = sum(1 for c in run if c.isdigit())
        if digits >= 4 and len(run) - digits >= 8 and not _HEX_RUN.fullmatch(run) and _entropy(run) >= 4.0:
            return True
    return False


# --------------------------------------------------------------------------------------------
# Certain credentials: the values no reading is needed to call a credential
# --------------------------------------------------------------------------------------------

# The scanner above errs on the side of "private": a key that names a secret, a name=value
# assignment, a long random run, an auth scheme with nothing after it, a private key's header line
# are all findings. Which of those a public packet may not carry is pwh's reading (profile). A few
# are not a reading at all: a value of a format whose issuer marks it as a secret by a documented
# prefix or structure (a GitHub, Slack, Stripe secret, Atlassian, Databricks, age, Discord token...),
# a private key with its key material, a connection string or URL that holds a key or password, an
# HTTP credential after its scheme. The RFC excludes credentials from every hook input (§7) and
# from the journal (§9), and its M13 row requires the public-boundary scan to find none (§12):
# a value of these formats is what an implementation must never hand on or record.
#
# Left out on purpose (still found by the scanner, judged as profile): secret-named keys and
# assignments (which key names a secret is a reading), unprefixed high-entropy runs, shapes that
# are identifiers rather than secrets or whose prefix is too short to tell (Twilio's AC/SK ids,
# Facebook's EAA, Mailgun's key-<hex>, a bare sig= parameter, Stripe's publishable pk_ keys), a
# private key's header line alone, and an auth scheme with no credential after it.

# pwh's own shapes (OWN_SHAPES, by name) that are certain as they stand.
_CERTAIN_OWN = frozenset(
    """
    aws_access_key_id github_token github_fine_grained gitlab_token slack_token slack_app_token
    slack_config_token openai_style_key stripe_webhook_secret google_api_key google_oauth_client_secret
    google_oauth_access_token google_oauth_refresh_token npm_token pypi_token huggingface_token
    sendgrid_key telegram_bot_token discord_webhook azure_connection_string azure_ad_client_secret
    age_secret_key jwt digitalocean_token shopify_token atlassian_token postman_key databricks_token
    vault_token doppler_token terraform_token linear_key groq_key replicate_token notion_token
    grafana_token newrelic_key square_token dropbox_token firebase_fcm_key bearer
    """.split()
)
# detect-secrets' plugins (by class name) whose every pattern is a format of its own, not a
# key word before a value.
_CERTAIN_LIBRARY = frozenset(
    """
    AzureStorageKeyDetector DiscordBotTokenDetector GitHubTokenDetector GitLabTokenDetector
    MailchimpDetector OpenAIDetector PypiTokenDetector SendGridDetector SlackDetector
    SquareOAuthDetector StripeDetector
    """.split()
)
_TOKEN68 = r"[A-Za-z0-9._~+/=\-]"
# Shapes certain only in a narrower form than the scanner's: (name, pattern, group that must not
# be a placeholder or a reference such as ${VAR}, or None).
_CERTAIN_REFINED: tuple[tuple[str, str, str | None], ...] = (
    ("stripe_secret_key", r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}", None),
    # the header line followed by key material (optional "Name: value" header lines first)
    (
        "private_key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[ \t]*(?:\r?\n[ \t]*[A-Za-z][A-Za-z\-]*:[^\n]*)*\s+[A-Za-z0-9+/=]{16,}",
        None,
    ),
    (
        "authorization_header",
        r"(?i:(?<![A-Za-z])(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?:bearer|basic|digest|token|negotiate|bot|aws4-hmac-sha256|sso-key|ntlm))[ \t]+(?P<v>" + _TOKEN68 + r"{8,})",
        "v",
    ),
    # scheme://user:password@ (a database or broker URL with its password)
    ("url_password", r"[A-Za-z][A-Za-z0-9+.\-]{0,31}://[^\s:/@\"'<>]{1,64}:(?P<v>[^\s:/@\"'<>]{1,128})@", "v"),
    # Key=Value;... connection strings with a password (ADO.NET, ODBC, JDBC properties)
    (
        "connection_string_password",
        r"(?i:(?:^|;)[ \t]*(?:password|pwd)[ \t]*=[ \t]*)(?P<v>[^;\s\"']{1,128})(?=[ \t]*(?:;|$))",
        "v",
    ),
    # an Azure shared access signature: sig= inside a SAS connection string or a SAS URL
    ("azure_sas_signature", r"(?i:SharedAccessSignature)[ \t]*=[^;\s\"']*?\bsig=[A-Za-z0-9%+/]{20,}", None),
    ("azure_sas_signature", r"[?&]sv=[0-9][0-9\-]*&[^\s\"'<>]*?\bsig=[A-Za-z0-9%+/]{20,}", None),
)

CERTAIN_KINDS: tuple[str, ...] = tuple(
    sorted(_CERTAIN_OWN | {name for name, _p, _g in _CERTAIN_REFINED} | {"discord_bot_token", "mailchimp_key"})
)
"""The names :func:`certain_credential` may answer (library plugins answer under their format's name)."""

_LIBRARY_NAMES = {
    "AzureStorageKeyDetector": "azure_connection_string",
    "DiscordBotTokenDetector": "discord_bot_token",
    "GitHubTokenDetector": "github_token",
    "GitLabTokenDetector": "gitlab_token",
    "MailchimpDetector": "mailchimp_key",
    "OpenAIDetector": "openai_style_key",
    "PypiTokenDetector": "pypi_token",
    "SendGridDetector": "sendgrid_key",
    "SlackDetector": "slack_token",
    "SquareOAuthDetector": "square_token",
    "StripeDetector": "stripe_secret_key",
}


@lru_cache(maxsize=1)
def _certain() -> tuple[tuple[str, re.Pattern[str], str | None], ...]:
    """Every certain shape as (format name, pattern, group that must not be a placeholder)."""
    out: list[tuple[str, re.Pattern[str], str | None]] = [(n, re.compile(p), None) for n, p in OWN_SHAPES if n in _CERTAIN_OWN]
    out += [(n, re.compile(p, re.MULTILINE if n == "connection_string_password" else 0), g) for n, p, g in _CERTAIN_REFINED]
    out += [(_LIBRARY_NAMES[c], p, None) for c, p in library_patterns() if c in _CERTAIN_LIBRARY]
    return tuple(out)


def _stands_for_nothing(value: str) -> bool:
    """A placeholder (``***``, ``<redacted>``, ``password``) or a reference to one (``${PASS}``,
    ``$PASS``, ``%PASS%``, ``{{ pass }}``): no credential is spelled out."""
    return is_placeholder(value) or value.startswith(("$", "%", "{", "<"))


def certain_credential(text: str) -> str | None:
    """The format of the credential ``text`` (already normalised: see
    :func:`pwh._core.boundary.text.forms`) spells out, when its format makes it certainly one (see
    above), else None. Every such text is also a ``credential`` finding of the scanner."""
    if len(text) < _SHAPE_MIN or not could_hold_token(text):
        return None
    for name, pattern, group in _certain():
        if name == "connection_string_password" and (";" not in text or text.count("=") < 2):
            continue  # a lone password=... is an assignment (a reading), not a connection string
        for match in pattern.finditer(text):
            if _not_an_aws_id(match.group()):
                continue
            if group is None or not _stands_for_nothing(match.group(group)):
                return name
    return None
