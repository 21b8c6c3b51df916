"""The scanner: a hostile-safe iterative walk over JSON-like values, with a memo and quick checks.

It never raises and never calls a method of a scanned object; deep or cyclic values end in one
``unscannable`` finding. What counts as private in one string is :mod:`.detectors`' business.
"""

from __future__ import annotations

import gc
import re
import types
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pwh._core.boundary.addresses import has_ip_address, has_ipv4
from pwh._core.boundary.decoding import decoded_forms
from pwh._core.boundary.detectors import (
    _DOTTED_ID,
    _LOCALHOST,
    _PLAIN,
    _TIMESTAMP,
    _TRANSCRIPT_ROLES,
    _WWW,
    _categories,
    _has_hostname,
    is_env_name,
)
from pwh._core.boundary.fields import (
    _G_DOTTED,
    _LAST_KEY,
    _SCHEMA_NAME_MAPS,
    _SECRET,
    field_grammar,
)
from pwh._core.boundary.fragments import could_start_token, token_across
from pwh._core.boundary.hosts import host_kind
from pwh._core.boundary.secrets import (
    _FAST_ID,
    certain_credential,
    has_token_shape,
    is_bare_token_key,
    is_placeholder,
    is_secret_key,
)
from pwh._core.boundary.text import forms
from pwh._core.boundary.values import token_value_is_secret

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
# The scanner.
# --------------------------------------------------------------------------------------------

_SAFE_KEY = re.compile(r"[A-Za-z0-9_$][A-Za-z0-9_.$\-]{0,63}")
_PATH_PART = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\['([^'\]]*)'\]|\[(?:[0-9]+|\?)\]")  # one step of a JSON path
_EXIT = object()  # stack marker: a container's children are done (for cycle detection)
_Found = set[tuple[str, str]]  # (path, category)
# Types that can carry nothing private. Tested with issubclass, never "in a set": hashing a type
# would run its metaclass's __hash__, which may be hostile.
_SCALARS = (int, float, type(None))  # bool is an int
_NONE = type(None)
_PROXY = types.MappingProxyType  # how the dispatcher freezes the input it hands to a provider
_MEMO_MAX_TEXT = 256  # only strings up to this length are memoised ...
_MEMO_MAX_ENTRIES = 4096  # ... and the memo is emptied when it reaches this size
# What a dict key says about its value: a secret; a secret unless a cursor's id (a bare "token");
# an environment value; a transcript's role or content; the start of a token cut in two.
_KEY_SECRET, _KEY_ENV, _KEY_ROLE, _KEY_CONTENT, _KEY_TOKEN, _KEY_FRAGMENT = 1, 2, 4, 8, 16, 32
# (the key's own categories, its path suffix, _KEY_* flags, the id grammar of its values or None)
_KeyInfo = tuple[tuple[str, ...], str, int, "re.Pattern[str] | None"]
_ODD_KEY: _KeyInfo = ((), "[?]", 0, None)  # a key that is not a string: never read, shown as "[?]"
_TOKEN = object()  # walk context: under a bare "token" key, a string is a secret unless it is a cursor's id
_OTP_MIN = 100_000  # under a bare "token" key, a whole number of six digits or more is a one-time code


def _root_context(path: str) -> re.Pattern[str] | None:
    """The grammar of the field a root path ends in (``$.receipt_id``, ``$.source.fact_refs[0]``)."""
    match = _LAST_KEY.search(path) if type(path) is str else None
    if match is None:
        return None
    return field_grammar(match.group(1) if match.group(1) is not None else match.group(2))


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


# The memos every scanner of the default configuration shares (BoundaryScanner.__init__): each is
# bounded as a scanner's own is, and holds only clean strings and keys.
_DEFAULT_MEMOS: tuple[dict[str, tuple[str, ...]], dict[str, _KeyInfo], dict[tuple[str, ...], bool], dict[str, bool], set[str]] = (
    {},
    {},
    {},
    {},
    set(),
)


class BoundaryScanner:
    """Finds private data in JSON-like values and text; shareable across threads.

    Its configuration is fixed at construction. The only mutable state is a bounded memo of the
    short strings found clean: the same keys, schema versions and hook ids recur in every hook
    input, and a memo hit costs one dict lookup instead of a rule pass. Strings with findings are
    never kept, so the scanner does not retain private data.
    """

    __slots__ = ("_allow", "_allow_re", "_key_memo", "_key_sets", "_memo", "_names_re", "_no_start", "_opaque_memo")

    def __init__(self, private_names: Iterable[str] = (), allow: Iterable[str] = ()) -> None:
        """``private_names``: an organisation's deny-list, matched case-insensitively as whole words
        (only letters and digits continue a word, so ``acme`` is found in ``acme_goal``); the words
        of a several-word name match joined by spaces, ``-``, ``_``, ``.`` or nothing.
        ``allow``: exact public strings never flagged, as a whole value or as a bounded part of one."""
        names = sorted({n.lower() for n in _as_str_list(private_names)}, key=len, reverse=True)
        self._names_re: re.Pattern[str] | None = None
        if names:
            # The words of a name joined as ids and host names join them too: a space, "-", "_",
            # ".", or nothing ("Zorbax Labs" is also zorbax-labs, zorbax_labs, zorbax.labs, ZorbaxLabs).
            alternatives = "|".join(r"[\s_.\-]*".join(map(re.escape, n.split())) for n in names)
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
        self._no_start: set[str] = set()  # clean strings that begin no token (fragments.could_start_token)
        if self._names_re is None and self._allow_re is None:
            # The default configuration (no declared names, nothing allowed): every scanner made so
            # shares one set of memos, since what they hold (the verdicts on clean strings and
            # keys) is the same for all of them. A dispatcher made anew on each restart, and each
            # judge of a model run, then start from the memos their predecessors filled.
            self._memo, self._key_memo, self._key_sets, self._opaque_memo, self._no_start = _DEFAULT_MEMOS

    # -- public API ---------------------------------------------------------------------------

    def scan_value(self, value: Any, path: str = "$") -> list[Finding]:
        """Walk dicts (keys and values), lists, tuples and strings; other types are skipped unread.
        Plain JSON that :meth:`quickly_clean` proves clean returns at once, without the walk.

        A key that is itself flagged, or is not a plain token, shows in paths as ``[?]`` so a path
        never repeats private content.
        """
        root = path if type(path) is str else "$"
        found: _Found = set()
        try:
            if self.quickly_clean(value):  # the early exit: plain JSON every part of which passes
                return []
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
                categories, suffix, flags, _grammar = self._key_info(key)
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
            return self._children_clean(value, depth) and not self._split_token_in(value)
        return kind is int or kind is float or kind is bool or kind is _NONE  # by identity: never hash a type

    def _children_clean(self, children: Iterable[Any], depth: int) -> bool:
        scan = self._scan_str
        for child in children:
            kind = type(child)
            if kind is str:  # the usual child, judged here rather than by a call per string
                if scan(child):
                    return False
            elif not (kind is int or kind is float or kind is bool or kind is _NONE) and not self.quickly_clean(child, depth + 1):
                return False
        return True

    def _split_token_in(self, items: list[Any] | tuple[Any, ...]) -> bool:
        """True when a token of a known format is cut across consecutive strings of a plain list
        (:func:`pwh._core.boundary.fragments.token_across`)."""
        run: list[str] = []
        for item in items:
            if type(item) is str:
                run.append(item)
                continue
            if len(run) >= 2 and token_across(run, self._could_start):
                return True
            run = []
        return len(run) >= 2 and token_across(run, self._could_start)

    def _could_start(self, text: str) -> bool:
        """:func:`could_start_token`, remembered for the clean strings (those the memo holds) that begin none."""
        if text in self._no_start:
            return False
        if could_start_token(text):
            return True
        if text in self._memo:
            if len(self._no_start) >= _MEMO_MAX_ENTRIES:
                self._no_start.clear()
            self._no_start.add(text)
        return False

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
            out.append("[?]" if key is not None and (self._scan_str(key) or could_start_token(key)) else match.group(0))
            pos = match.end()
        return "".join(out) if pos == len(path) else "$"

    # -- internals ----------------------------------------------------------------------------

    def _scan_str(self, text: str) -> tuple[str, ...]:
        """The categories found in one string (empty for the usual opaque id), memoised for short strings."""
        cached = self._memo.get(text)
        if cached is not None:
            return cached
        if (_FAST_ID.fullmatch(text) and "xox" not in text and "xapp" not in text and "localhost" not in text and "ip-" not in text) or (
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
        found = self._rules(text) if len(variants) == 1 and variants[0] is text else self._forms_rules(variants)
        if found:
            return found
        # Clean as written: what it decodes to (percent-encoding, escapes, base64, hex) must be too.
        return self._forms_rules([f for form in variants for decoded in decoded_forms(form) for f in forms(decoded)])

    def _forms_rules(self, variants: Iterable[str]) -> tuple[str, ...]:
        """Every rule on each of ``variants``, their categories united."""
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
            if ("ip-" in text or "IP-" in text) and has_ipv4(text):
                out.append("ip_address")  # ip-10-0-3-17: a cloud's host name for an address
        elif _DOTTED_ID.fullmatch(text):
            if text.count(".") >= 3 and has_ipv4(text):
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
            if "ip_address" not in out and has_ip_address(form):
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

    def has_private_name(self, text: str) -> bool:
        """Whether ``text`` holds a name of the deny-list (never true without one): the one check a
        file that is code, not data, gets (its paths and credential shapes are the code's own)."""
        return self._names_re is not None and self._has_private_name(text)

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
        """For a dict key: (its own categories, its path suffix, _KEY_* flags, the id grammar of its
        values); memoised for a key that is clean and starts no token."""
        info = self._key_memo.get(key)
        if info is not None:
            return info
        categories = self._scan_str(key)
        if "hostname" in categories and _G_DOTTED.fullmatch(key) and host_kind(key.split(".")) == "ambiguous":
            # a key is a field name: "secret.name" is an id; "hall.dev", "acme.com" stay hosts
            categories = tuple(c for c in categories if c != "hostname")
        normal = forms(key)[-1]  # the confusable skeleton, if any: "pаssword" names a password
        flags = 0
        if is_secret_key(normal):
            flags |= _KEY_TOKEN if is_bare_token_key(normal) else _KEY_SECRET
        if is_env_name(normal):
            flags |= _KEY_ENV
        if key == "role":
            flags |= _KEY_ROLE
        elif key == "content":
            flags |= _KEY_CONTENT
        if could_start_token(key):
            flags |= _KEY_FRAGMENT  # {"AKIAIOSF": "ODNN7EXAMPLE"}: read with its value
        if categories or flags & _KEY_FRAGMENT or not _SAFE_KEY.fullmatch(key):
            suffix = "[?]"  # the key may itself be private: the path must not spell it out
        else:  # the same rendering as pwh._core.codes.json_path
            suffix = f".{key}" if key.isidentifier() else f"['{key}']"
        info = (categories, suffix, flags, field_grammar(normal))
        if not categories and not flags & _KEY_FRAGMENT and len(key) <= _MEMO_MAX_TEXT:
            if len(self._key_memo) >= _MEMO_MAX_ENTRIES:
                self._key_memo.clear()
            self._key_memo[key] = info
        return info

    def _walk(self, root: Any, root_path: str, found: _Found) -> None:
        """Iterative depth-first walk: no Python recursion, so no RecursionError at any depth.
        A stack item is (node, path, depth, context): context is None, a field grammar (the
        items of a typed id list), _SECRET (everything under a key that names a secret) or _TOKEN
        (everything under a bare "token" key: a secret unless it is a cursor's structured id)."""
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
                if context is _SECRET or context is _TOKEN:
                    if context is _SECRET and text and not is_placeholder(text) or context is _TOKEN and token_value_is_secret(text):
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
            if context is _TOKEN and issubclass(kind, int) and not issubclass(kind, bool):
                if int.__abs__(node) >= _OTP_MIN:  # a one-time code, not a page number
                    found.add((path, "credential"))
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
                self._walk_dict(node, path, depth + 1, found, stack, context if context is _SECRET or context is _TOKEN else None)
            else:
                items = list.__iter__(node) if issubclass(kind, list) else tuple.__iter__(node)
                self._walk_items(items, path, depth + 1, found, stack, context)

    def _walk_items(self, items: Iterable[Any], path: str, depth: int, found: _Found, stack: list[Any], context: Any) -> None:
        children = []
        keyed = context is _SECRET or context is _TOKEN  # under a key that names a secret
        grammar = None if keyed else context
        texts: list[str] = []  # the list's strings, for a token cut across them
        for i, child in enumerate(items):
            child_kind = type(child)
            if child_kind is str:
                texts.append(child)
            if child_kind is str and not keyed:  # the common case, scanned inline
                for category in self._scan_field(child, grammar):
                    found.add((f"{path}[{i}]", category))
            elif keyed or not issubclass(child_kind, _SCALARS):
                children.append((child, f"{path}[{i}]", depth, context))
        if len(texts) >= 2 and token_across(texts, self._could_start):
            found.add((path, "credential"))  # ["AKIAIOSF", "ODNN7EXAMPLE"]: named by the list's path
        stack.extend(reversed(children))

    def _walk_dict(self, node: dict[Any, Any], path: str, depth: int, found: _Found, stack: list[Any], context: Any = None) -> None:
        # dict.items() called on the instance reads the table directly: a subclass's overrides never
        # run, and no key is hashed or compared (a hostile key's __eq__/__hash__ stays uncalled).
        memo, key_memo = self._memo, self._key_memo
        # The keys of a JSON Schema "properties" object name fields ("password": {"type": ...});
        # they hold no values, so a secret-named one there marks nothing below it as a secret.
        names_fields = path.endswith(_SCHEMA_NAME_MAPS)
        secret, token = context is _SECRET, context is _TOKEN
        has_role = has_content = False
        children = []
        for key, child in dict.items(node):
            key_kind = type(key)
            key_text = ""
            if key_kind is str:
                key_text = key
                info = key_memo.get(key)
                if info is None:
                    info = self._key_info(key)
            elif issubclass(key_kind, str):
                key_text = str.__str__(key)
                info = self._key_info(key_text)
            else:
                info = _ODD_KEY
            key_categories, suffix, flags, grammar = info
            if names_fields:
                flags &= ~(_KEY_SECRET | _KEY_ENV | _KEY_TOKEN)
            under_secret = secret or bool(flags & _KEY_SECRET)
            under_token = not under_secret and (token or bool(flags & _KEY_TOKEN))
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
                elif under_token:
                    if not issubclass(child_kind, (type(None), bool, float)):
                        children.append((child, path + suffix, depth, _TOKEN))
                elif not issubclass(child_kind, _SCALARS):
                    children.append((child, path + suffix, depth, grammar))
            if not (categories or key_categories or flags or secret or token):
                continue  # the hot path ends here
            child_path = path + suffix
            found.update((child_path, category) for category in key_categories + categories)
            if child_kind is str and child:
                if under_secret and not is_placeholder(child) or under_token and token_value_is_secret(child):
                    found.add((child_path, "credential"))
                if flags & _KEY_ENV:
                    found.add((child_path, "environment_value"))
                if flags & _KEY_FRAGMENT and token_across([key_text, child]):
                    found.add((child_path, "credential"))  # {"AKIAIOSF": "ODNN7EXAMPLE"}
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


# --------------------------------------------------------------------------------------------
# Certain credentials: what the RFC's checks judge (the scanner's other findings are pwh's reading).
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CredentialValue:
    """A credential of a certain format (:func:`pwh._core.boundary.secrets.certain_credential`)
    spelled out somewhere in a value: its format and where, never the credential."""

    kind: str
    path: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "path": self.path}


def _certain_in(text: str, memo: dict[str, str | None]) -> str | None:
    if text in memo:
        return memo[text]
    kind = None
    for form in forms(text):
        kind = certain_credential(form)
        if kind is not None:
            break
    memo[text] = kind
    return kind


def credential_values(value: Any, path: str = "$") -> list[CredentialValue]:
    """Every string of ``value`` (dict keys included, read-only views unwrapped, any depth) that spells
    out a credential of a certain format, in any of the spellings the scanner reads (NFKC,
    invisible characters removed, the confusable skeleton). A key that holds one, or that the scanner
    flags for any other reason, shows as ``[?]``: a path never spells out private content.

    The RFC excludes credentials from every hook input (§7) and from the journal (§9), and its M13
    row requires the public-boundary scan to find none: this is the part of the scan no reading
    decides, so a conformance check may fail an implementation on it. Like the scanner, it never
    calls a method of a scanned object and never raises on a cycle (a container already on the
    path is skipped)."""
    found: list[CredentialValue] = []
    memo: dict[str, str | None] = {}
    stack: list[Any] = [(value, path if type(path) is str else "$")]
    active: set[int] = set()
    while stack:
        item = stack.pop()
        node = item[0]
        if node is _EXIT:
            active.discard(item[1])
            continue
        where = item[1]
        kind = type(node)
        if issubclass(kind, str):
            certain = _certain_in(str.__str__(node), memo)
            if certain is not None:
                found.append(CredentialValue(certain, where))
            continue
        if kind is _PROXY:
            node = _unwrap_proxy(node)
            kind = type(node)
        if issubclass(kind, dict):
            is_dict = True
            pairs: Iterable[tuple[Any, Any]] = dict.items(node)  # the table itself: no override runs
        elif issubclass(kind, (list, tuple)):
            is_dict = False
            pairs = enumerate(list.__iter__(node) if issubclass(kind, list) else tuple.__iter__(node))
        else:
            continue  # numbers, None, bools and unknown objects spell out no text
        if id(node) in active:
            continue
        active.add(id(node))
        stack.append((_EXIT, id(node)))
        children = []
        for key, child in pairs:
            if not is_dict:
                suffix = f"[{key}]"
            elif issubclass(type(key), str):
                text = str.__str__(key)
                certain = _certain_in(text, memo)
                if certain is not None:
                    found.append(CredentialValue(certain, where + "[?]"))
                    suffix = "[?]"
                elif _SAFE_KEY.fullmatch(text) and not _DEFAULT._scan_str(text) and not could_start_token(text):
                    suffix = f".{text}" if text.isidentifier() else f"['{text}']"
                else:
                    suffix = "[?]"  # a key the scanner flags is never spelled out in a path
            else:
                suffix = "[?]"  # a key that is not a string is never read
            children.append((child, where + suffix))
        stack.extend(reversed(children))
    return sorted(set(found), key=lambda c: (c.path, c.kind))
