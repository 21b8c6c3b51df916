"""Per-category detectors: pure ``str -> categories`` functions, tuned against false positives.

What the scanner looks for in one string (URLs, e-mail, paths, environment values here; credentials,
host names, addresses, transcripts and raw logs through :mod:`.secrets`, :mod:`.schemes`,
:mod:`.hosts`, :mod:`.addresses`, :mod:`.transcripts` and :mod:`.logs`), apart from *how* it walks a
value (:mod:`.scanner`): the two change for different reasons and are tested apart.
"""

from __future__ import annotations

import re

from pwh._core.boundary.addresses import has_ip_address
from pwh._core.boundary.hosts import FILE_EXTENSIONS, host_kind, user_at_host
from pwh._core.boundary.logs import has_raw_log
from pwh._core.boundary.schemes import has_scheme_credential
from pwh._core.boundary.secrets import (
    has_assignment,
    has_token_shape,
    is_secret_key,
)
from pwh._core.boundary.transcripts import TRANSCRIPT_ROLES, has_transcript

_TRANSCRIPT_ROLES = TRANSCRIPT_ROLES  # the name the scanner imports

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
# A word character of any script counts, so a slash between words ("后继/active") is no path either.
# (Each pattern starts with a literal or is gated by one, so the regex engine scans fast.)
_ABS_POSIX = re.compile(r"/(?<![\w.~\-/\\$#%@?!)\]}*+]/)(?![A-Za-z][A-Za-z0-9\-]*>)[A-Za-z0-9._~\-]")
_ABS_DRIVE = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z]:(?:\\|/(?=[A-Za-z0-9._~\-$]))")  # C:\ or C:/x
_ABS_UNC = re.compile(
    r"\\\\+[?.]\\+"  # \\?\ and \\.\ device paths
    r"|(?<![A-Za-z0-9:])\\\\+[A-Za-z0-9._\-$]+\\+[A-Za-z0-9._\-$]+"  # \\server\share (also JSON-escaped)
    r"|(?<![A-Za-z0-9_\\])\\(?:Windows|Users|Program Files|ProgramData|inetpub|System32)\\",  # \Windows\
    re.IGNORECASE,
)
_ABS_SLASHES = re.compile(r"(?<![A-Za-z0-9:/])//[A-Za-z0-9][A-Za-z0-9._\-]*/[A-Za-z0-9._\-$]+")  # //server/share


# A path with one segment ("/s", "/or", "/help" in prose: "10 requests /s", "and /or") is an
# absolute path only when the segment is a root folder of a POSIX or macOS system or a container
# image, a file name with an extension, or a dotfile ("/etc", "/srv", "/config.yaml", "/.env").
_ROOT_DIRS = frozenset(
    """
    bin boot dev etc home lib lib32 lib64 libx32 media mnt opt proc root run sbin srv sys tmp usr var
    users volumes applications library system private cores nix snap data app workspace workspaces
    scratch export
    """.split()
)
_SEGMENTS = re.compile(r"[A-Za-z0-9._~\-]{1,255}(?:/[A-Za-z0-9._~\-]{0,255})?")
_FILE_NAME = re.compile(r"\.?[A-Za-z0-9_\-]{0,255}\.[A-Za-z][A-Za-z0-9]{0,9}|\.[A-Za-z][A-Za-z0-9_.\-]{0,254}")


def _is_posix_path(text: str, slash: int) -> bool:
    """True when the "/" at ``slash`` (a place _ABS_POSIX accepts) starts an absolute path."""
    segments = _SEGMENTS.match(text, slash + 1)
    if segments is None:
        return False
    first, _, second = segments.group().partition("/")
    if second:  # two segments: "/var/lib"
        return True
    return first.lower() in _ROOT_DIRS or _FILE_NAME.fullmatch(first) is not None


def _has_absolute_path(text: str) -> bool:
    if "/" in text and (
        any(_is_posix_path(text, m.start()) for m in _ABS_POSIX.finditer(text)) or ("//" in text and _ABS_SLASHES.search(text))
    ):
        return True
    if ":" in text and _ABS_DRIVE.search(text):
        return True
    return "\\" in text and _ABS_UNC.search(text) is not None


_HOME_DIR = re.compile(
    r"(?<![A-Za-z0-9_~/.\-])~(?:[A-Za-z_][A-Za-z0-9_.\-]{0,63})?[/\\]"  # ~/x, ~user/x (a user name starts with a letter: "~3/5" is a score)
    r"|(?<![A-Za-z0-9._\-])/(?:home|Users)/[A-Za-z0-9._\-]+"
    r"|(?<![A-Za-z0-9._\-])/root(?![A-Za-z0-9._\-])"
    r"|(?<![A-Za-z0-9_])[A-Za-z]:[\\/](?:Users|Documents and Settings)[\\/][^\\/\s\"']+"
)

# credential ------------------------------------------------------------------------------------
# Token shapes, secret-named keys and assignments live in pwh._core.boundary.secrets (detect-secrets'
# plugins plus pwh's own shapes). A cheap pre-test keeps them off strings too short to hold one.
_CREDENTIAL_MIN = 8

# hostname --------------------------------------------------------------------------------------
# Candidates only: pwh._core.boundary.hosts decides from the Public Suffix List and the name's shape.
# "logging.info(", "typing.IO[" are code; a label after "_" or "$" is part of an identifier.
_HOSTNAME = re.compile(
    r"(?<![A-Za-z0-9_.\-@/\\$#])(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.){1,126}"
    r"(?P<tld>[A-Za-z][A-Za-z0-9\-]{1,62})(?![A-Za-z0-9_\-(\[]|\.[A-Za-z0-9_])"
)
_LOCALHOST = re.compile(r"(?<![A-Za-z0-9_\-.])localhost(?![A-Za-z0-9_\-])", re.IGNORECASE)
# After a "/" a dotted name is a file in a folder ("reports/weekly.md") unless it has three labels
# or more and no file extension: "jump/bastion.acme.com" names a machine behind another. After
# "//" it is a URL's or a share's host, which those rules report.
_HOSTNAME_AFTER_SLASH = re.compile(
    r"(?<=/)(?<!//)(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.){2,126}"
    r"[A-Za-z][A-Za-z0-9\-]{1,62}(?![A-Za-z0-9_\-(\[]|\.[A-Za-z0-9_])"
)

# environment_value -----------------------------------------------------------------------------
# NAME=VALUE is an environment value when NAME is a variable the process environment carries (a
# well-known name or the prefix of a tool that reads its settings from the environment) or when the
# text exports it; other KEY=VALUE text ("PAGE_SIZE=50", "mode=fast") is configuration, not environment.
_ENV_WELL_KNOWN = frozenset(
    [
        "HOME",
        "PATH",
        "USER",
        "USERNAME",
        "LOGNAME",
        "SHELL",
        "PWD",
        "OLDPWD",
        "HOSTNAME",
        "HOST",
        "TMPDIR",
        "TEMP",
        "TMP",
        "LANG",
        "LANGUAGE",
        "TERM",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "MAIL",
        "DISPLAY",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONSTARTUP",
        "VIRTUAL_ENV",
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "GNUPGHOME",
        "JAVA_HOME",
        "GOPATH",
        "GOROOT",
        "GOBIN",
        "CARGO_HOME",
        "RUSTUP_HOME",
        "KUBECONFIG",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
        "FTP_PROXY",
        "APPDATA",
        "LOCALAPPDATA",
        "USERPROFILE",
        "HOMEPATH",
        "HOMEDRIVE",
        "COMPUTERNAME",
        "USERDOMAIN",
        "SYSTEMROOT",
        "WINDIR",
        "PROGRAMFILES",
        "PROGRAMDATA",
        "COMSPEC",
        "PATHEXT",
        "PS1",
        "HISTFILE",
        "SUDO_USER",
        "SUDO_UID",
        "MANPATH",
        "INFOPATH",
        "XAUTHORITY",
        "DBUS_SESSION_BUS_ADDRESS",
        "PWH_PRIVATE_NAMES",
        "TOKEN",
        "PASSWORD",
        "SECRET",
        "API_KEY",
        "DATABASE_URL",
        "REDIS_URL",
    ]
)
_ENV_PREFIXES = (
    "LC_",
    "XDG_",
    "SSH_",
    "GPG_",
    "GIT_",
    "GITHUB_",
    "GITLAB_",
    "CI_",
    "RUNNER_",
    "BUILDKITE_",
    "JENKINS_",
    "TRAVIS_",
    "CIRCLE_",
    "AWS_",
    "AZURE_",
    "ARM_",
    "GOOGLE_",
    "GCP_",
    "GCLOUD_",
    "CLOUDSDK_",
    "DOCKER_",
    "NODE_",
    "NPM_",
    "NVM_",
    "YARN_",
    "PIP_",
    "CONDA_",
    "PYENV_",
    "DYLD_",
    "KUBE_",
    "HELM_",
    "VAULT_",
    "TF_",
    "OPENAI_",
    "ANTHROPIC_",
    "HF_",
    "HUGGINGFACE_",
    "SLACK_",
    "STRIPE_",
    "SENTRY_",
    "PWH_",
    "LOOPX_",
    "POSTGRES_",
    "PG",
    "MYSQL_",
    "REDIS_",
    "DATABASE_",
    "DB_",
)
_ENV_ASSIGN = re.compile(r"(?<![A-Za-z0-9_$.\-])(?P<export>(?:export|setenv|set|env)[ \t]+)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?=[^\s=])")
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

    if (
        colon
        and "://" in text
        and any(_JSON_SCHEMA_URI.fullmatch(m.group()) is None for m in _URL.finditer(text))
        or dot
        and ("w." in text or "W." in text)
        and _WWW.search(text)
    ):  # www. in any case: Www.x.zz too
        out.append("url")
    if "@" in text and (_EMAIL.search(text) or user_at_host(text)):
        out.append("email")
    if slash and _has_absolute_path(text):
        out.append("absolute_path")
    if ("~" in text or (slash and ("home" in text or "Users" in text or "root" in text))) and _HOME_DIR.search(text):
        out.append("home_dir")
    if _has_credential(text, colon):
        out.append("credential")
    if (dot or colon or "ip-" in text or "IP-" in text) and has_ip_address(text):
        out.append("ip_address")
    if _has_hostname(text, dot, opaque=False):
        out.append("hostname")
    if has_transcript(text, colon):
        out.append("transcript")
    if has_raw_log(text, colon):
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
    if (colon or "=" in text or "-" in text) and has_assignment(text):
        return True
    return " " in text and len(text) >= _CREDENTIAL_MIN and has_scheme_credential(text, text.lower())


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
        if kind == "host" or (
            not opaque and (kind in ("likely", "regional") or (kind == "ambiguous" and match.start() == 0 and match.end() == len(text)))
        ):
            return True
    if "/" in text:
        for match in _HOSTNAME_AFTER_SLASH.finditer(text):
            labels = match.group().split(".")
            if labels[-1].lower() not in FILE_EXTENSIONS and host_kind(labels) == "host" and not _in_version(text, match.start()):
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
