"""Raw logs for the public-boundary scanner (SPEC §2 INP, JNL-6, M13; RFC §7 excludes them).

A log line is known by what a logger writes around the message: a timestamp then a level in any
case (``2026-03-01 10:00:00 error …``, ``[2026-03-01 10:00:00] local.ERROR: …``, a thread in
brackets between them), a level then a timestamp (``WARN 2026-01-02 03:04:05 …``), a level in
brackets, a JSON record or a logfmt line with a level and a message, time or caller field, a
syslog header, an HTTP access-log request, Python logging's default ``LEVEL:logger:`` prefix, a
glog/klog header, a kernel timestamp, a stack trace (Python, Java, Node, Go), a shell or REPL
prompt. A level word alone (``ERROR budget``, ``{"level": "info"}``) is configuration or prose.
"""

from __future__ import annotations

import re

__all__ = ["has_raw_log"]

_LEVELS = r"TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|CRITICAL|CRIT|FATAL|SEVERE|PANIC|ALERT|EMERG"
_LEVEL_HINT = re.compile(r"(?i:trace|debug|info|notice|warn|err|crit|fatal|severe|panic|alert|emerg)")
_DATE_TIME = r"[0-9]{4}[-/][0-9]{2}[-/][0-9]{2}[ T][0-9]{2}:[0-9]{2}(?::[0-9]{2})?(?:[.,][0-9]+)?(?:Z|[+\-][0-9]{2}:?[0-9]{2})?"
# A timestamp, at most three bracketed fields (a thread, a process), then a level in any case; a
# level at the start of a line before a timestamp; a level in brackets.
_LOG_LEVEL = re.compile(
    rf"\b{_DATE_TIME}\]?(?:[ \t]+\[[^\]\n]{{1,40}}\]){{0,3}}[ \t]*(?:[\-|:][ \t]*)?[\[<]?(?:[A-Za-z][\w\-]{{0,31}}\.)?(?i:{_LEVELS})\b"
    rf"|^[ \t]*[\[<]?(?:{_LEVELS})[\]>]?[ \t]*[:|\-]?[ \t]*\[?{_DATE_TIME}"
    rf"|\[(?:{_LEVELS})\]",
    re.MULTILINE,
)
# A JSON record or a logfmt line: a level field, and a message, time or caller field.
_JSON_LEVEL = re.compile(rf"\"(?:level|lvl|severity|loglevel|log\.level)\"[ \t]*:[ \t]*\"(?i:{_LEVELS})\"", re.IGNORECASE)
_JSON_FIELD = re.compile(r"\"(?:msg|message|ts|time|timestamp|@timestamp|caller|logger|log|err|error|stack)\"[ \t]*:", re.IGNORECASE)
_LOGFMT_LEVEL = re.compile(rf"(?<![\w.])(?:level|lvl|severity)=\"?(?i:{_LEVELS})\b", re.IGNORECASE)
_LOGFMT_FIELD = re.compile(r"(?<![\w.])(?:msg|message|ts|time|caller|logger|err|error)=", re.IGNORECASE)
_SYSLOG = re.compile(
    r"^(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} \S{1,64} [\w\-./]{1,64}(?:\[[0-9]+\])?: ",
    re.MULTILINE,
)
_ACCESS_LOG = re.compile(r"\"(?:GET|POST|PUT|DELETE|HEAD|PATCH|OPTIONS|CONNECT) \S{1,2048} HTTP/[0-9](?:\.[0-9])?\" [1-5][0-9]{2}\b")
_PY_LOGGING = re.compile(r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]{1,128}:", re.MULTILINE)
_GLOG = re.compile(r"^[IWEF][0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}[ \t]+[0-9]+ [\w.\-]{1,128}:[0-9]+\] ", re.MULTILINE)
_KERNEL = re.compile(r"^\[[ \t]*[0-9]{1,8}\.[0-9]{6}\] ", re.MULTILINE)
_PY_FILE_LINE = re.compile(r"\bFile \"[^\"\n]+\", line [0-9]+")
# "ValueError: bad input", but not the Python source "except ValueError:  # comment".
_EXCEPTION_TEXT = re.compile(r"(?<!except )\b[A-Z][A-Za-z0-9]*(?:Error|Exception):[ \t]+[^\s#]")
_STACK_FRAME = re.compile(
    r"^[ \t]+at [\w$.<>/\[\]]{1,256}[ \t]*\((?:[^()\n]{1,256}:[0-9]+(?::[0-9]+)?|Native Method|Unknown Source)\)",  # Java, Node
    re.MULTILINE,
)
_GOROUTINE = re.compile(r"^goroutine [0-9]+ \[[a-z ,0-9]{1,64}\]:", re.MULTILINE)
_SHELL_PROMPT = re.compile(
    r"^[ \t]*\$[ \t]+[A-Za-z./~_\-]"  # "$ make test"
    r"|(?<![A-Za-z0-9_.\-])[A-Za-z0-9_.\-]+@[A-Za-z0-9_.\-]+:[^\s#$]*[#$](?:[ \t]|$)",  # root@host:~#
    re.MULTILINE,
)
_REPL_PROMPT = re.compile(r"^[ \t]*>>>[ \t]+\S", re.MULTILINE)


def _has_record(text: str) -> bool:
    """A structured record: JSON or logfmt with a level and a message, time or caller field."""
    if "{" in text and '"' in text and _JSON_LEVEL.search(text) and _JSON_FIELD.search(text):
        return True
    return "=" in text and _LOGFMT_LEVEL.search(text) is not None and _LOGFMT_FIELD.search(text) is not None


def has_raw_log(text: str, colon: bool) -> bool:
    """True when ``text`` holds a line a logger, a stack trace or a prompt wrote (see the module
    docstring); ``colon``: ``":" in text``."""
    if "Traceback (most recent call last)" in text:
        return True
    if 'File "' in text and _PY_FILE_LINE.search(text):
        return True
    if colon and ("Error:" in text or "Exception:" in text) and _EXCEPTION_TEXT.search(text):
        return True
    if _LEVEL_HINT.search(text):
        if _LOG_LEVEL.search(text) or _has_record(text):
            return True
        if colon and _PY_LOGGING.search(text):
            return True
    if colon and (_SYSLOG.search(text) or _GOROUTINE.search(text) or ("at " in text and _STACK_FRAME.search(text))):
        return True
    if "] " in text and colon and _GLOG.search(text):
        return True
    if "HTTP/" in text and _ACCESS_LOG.search(text):
        return True
    if "[" in text and "." in text and _KERNEL.search(text):
        return True
    if ("$" in text or "#" in text) and _SHELL_PROMPT.search(text):
        return True
    return ">>>" in text and _REPL_PROMPT.search(text) is not None
