"""Host names for the public-boundary scanner (SPEC §2 INP, JNL-6, M13).

A dotted name is a host name when its last label is a top-level domain. The TLDs are the ICANN
section of the Public Suffix List as packaged by ``publicsuffixlist`` (read once, on first use; the
package is released with each list update), plus the special-use and private-use names no public
list holds: ``internal`` (ICANN, 2024), ``local`` (RFC 6762), ``localhost`` and ``home.arpa``
(RFC 6761, RFC 8375), and the names private networks use without delegation (``lan``, ``corp``,
``intranet``, ``localdomain``, ``home``, ``private``). RFC 2606/6761 documentation names
(``example``, ``example.com/.net/.org``, ``test``, ``invalid``) are public by definition.

The contracts' opaque-id grammar ``[a-z][a-z0-9_]*`` joined by dots (hook ids, intent kinds,
operations, policy versions) admits names such as ``billing.report`` or ``notify.app`` whose last
label is also a TLD (``report``, ``app`` are generic-word TLDs). So the rule reads a name by its
shape as well (:func:`host_kind`):

- three labels or more ending in a TLD: a host name (``ci.acme.systems``, ``build.acme.com``);
- two labels ending in a *host-only* TLD — the original gTLDs ``com net org edu gov mil int arpa``,
  a special- or private-use name, or a country code that is not also a common word or file
  extension — a host name (``acme.com``, ``alerts.internal``, ``acme.io``);
- two labels ending in any other TLD: a host name unless the name is *id-shaped* (every label
  ``[a-z][a-z0-9_]*``): ``acme-corp.systems`` and ``Hooli.Report`` are hosts. An id-shaped one
  (``billing.report``, ``notify.app``) is an id in a typed opaque-id field; in free data it is a host
  when it is the whole value, or, inside longer text, when its TLD is one registered mostly for
  machines (:data:`INFRA_TLDS`: ``hall.dev``); otherwise (``the a.open hook``) an id;
- a name whose next-to-last label is a number (``loopx-2.1.1.md``): a version, not a host;
- two labels whose last is a file extension that is also a country code (``README.md``,
  ``setup.py``, ``run.sh``): a file name;
- three labels or more under a cluster's own domain, which no public list holds (``svc`` for a
  Kubernetes service, ``redis.cache.svc``; ``consul`` for a Consul service,
  ``web.service.consul``): a host name;
- two id-shaped labels under a country code that ids use for a region or a locale
  (:data:`REGION_CC`: ``tenant.eu``, ``locale.de``): ``'regional'``, a host in free data and an id
  in a field that holds ids (``acme.io`` stays a host everywhere).
"""

from __future__ import annotations

import importlib.util
import os
import re
from functools import lru_cache

__all__ = ["host_kind", "is_host_labels", "tlds", "user_at_host"]

SPECIAL_USE = frozenset({"internal", "local", "localhost", "lan", "corp", "intranet", "localdomain", "home", "private", "onion"})
DOCUMENTATION = frozenset({"example", "test", "invalid"})
DOCUMENTATION_DOMAINS = ("example.com", "example.net", "example.org")
ORIGINAL_GTLDS = frozenset({"com", "net", "org", "edu", "gov", "mil", "int", "arpa"})
# Country codes that are also words or file extensions in ids and prose ("receipt.id", "opt.in",
# "setup.py"): a two-label id-shaped name ending in one is not read as a host.
WORDLIKE_CC = frozenset(
    """
    id in is at to me no so by do as it be my am us re st ad an on or up go ok hi tv fm ac ai md py sh
    rs pl pm cc ps ml mk tf sc bz gz cs js ts rb hs cr sx dk ge ma mu ne nu pe se si sl sn sv td tk tt
    ws
    """.split()
)
# Country codes ids use for a region or a locale ("tenant.eu", "catalog.de", "store.uk"): an
# id-shaped two-label name under one is an id where the field holds ids, a host in free data.
REGION_CC = frozenset(
    """
    eu uk de fr es nl ch jp cn kr sg au nz ca br mx ar cl za ru ua tr gr pt cz hu ro ie fi pl hk tw
    th vn ph il ae sa eg ng ke
    """.split()
)
# A cluster's own DNS domain: three labels or more under one name a service inside it.
CLUSTER_SUFFIXES = frozenset({"svc", "consul"})
# Generic TLDs registered mostly for machines and services: an id-shaped two-label name under one
# (``hall.dev``, ``build.cloud``) is read as a host in free data even inside text.
INFRA_TLDS = frozenset(
    """
    dev app cloud tech xyz info biz online site host hosting network systems software website email
    server services digital computer tools
    """.split()
)
# File extensions that are TLDs: a two-label name ending in one is a file name.
FILE_EXTENSIONS = frozenset(
    """
    md py sh rs pl pm cc so ps ml mk tf sc in zip mov ai bz cs rb js ts hs cr sx am ac cfg ini log toml
    yaml yml json txt csv xml html css lock bak tmp gif png jpg svg pdf feature spec
    """.split()
)


@lru_cache(maxsize=1)
def tlds() -> frozenset[str]:
    """Every top-level label of the ICANN section of the packaged Public Suffix List, lower case,
    IDN TLDs in their ``xn--`` form, plus :data:`SPECIAL_USE`."""
    out: set[str] = set(SPECIAL_USE)
    labels: set[str] = set()
    try:  # the package's data file, found without running the package's own code, read line by line
        spec = importlib.util.find_spec("publicsuffixlist")
        folder = next(iter(spec.submodule_search_locations or ())) if spec is not None else None
        with open(os.path.join(folder, "public_suffix_list.dat"), encoding="utf-8") as fh:  # type: ignore[arg-type]
            for line in fh:
                if line.startswith("// ===END ICANN DOMAINS==="):
                    break
                line = line.strip()
                if line and not line.startswith("//"):
                    labels.add(line.split()[0].lstrip("!*.").rsplit(".", 1)[-1].lower())
    except (ImportError, OSError, TypeError, StopIteration):  # no list: the original gTLDs and special-use names still count
        return frozenset(out | ORIGINAL_GTLDS)
    for label in labels:
        if label.isascii():
            out.add(label)
            continue
        try:
            out.add(label.encode("idna").decode("ascii"))
        except UnicodeError:
            continue
    return frozenset(out - DOCUMENTATION)


_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?", re.IGNORECASE)
_ID_LABEL = re.compile(r"[a-z][a-z0-9_]*")


def host_kind(labels: list[str]) -> str | None:
    """``'host'`` when the dotted name made of ``labels`` is a host name by the rules above; for an
    id-shaped two-label name under another TLD, ``'likely'`` (an :data:`INFRA_TLDS` one),
    ``'regional'`` (a :data:`REGION_CC` one) or ``'ambiguous'``; else ``None``."""
    if len(labels) < 2:
        return None
    tld = labels[-1].lower()
    if tld in CLUSTER_SUFFIXES and len(labels) >= 3 and all(_LABEL.fullmatch(label) for label in labels) and not labels[-2].isdigit():
        return "host"
    if tld not in tlds() or not tld[0].isalpha():
        return None
    if not all(_LABEL.fullmatch(label) for label in labels):
        return None
    low = ".".join(labels).lower()
    if any(low == d or low.endswith("." + d) for d in DOCUMENTATION_DOMAINS) or any(
        label.lower() in DOCUMENTATION for label in labels[-2:]
    ):
        return None
    if labels[-2].isdigit():  # "loopx-2.1.1.md", "v1.2.io": a version before the last label
        return None
    if len(labels) >= 3:
        return "host"
    if tld in FILE_EXTENSIONS:
        return None
    if tld in ORIGINAL_GTLDS or tld in SPECIAL_USE:
        return "host"
    id_shaped = all(_ID_LABEL.fullmatch(label) for label in labels)
    if len(tld) == 2 and not tld.startswith("xn"):
        if id_shaped and tld in WORDLIKE_CC:
            return None
        return "regional" if id_shaped and tld in REGION_CC else "host"
    if not id_shaped:
        return "host"
    return "likely" if tld in INFRA_TLDS else "ambiguous"


def is_host_labels(labels: list[str]) -> bool:
    return host_kind(labels) == "host"


# user@host without a dot ("deploy@buildbox", "root@ci-runner-3"): an account on a machine. The
# host part must start with a letter and is not a version, a digest algorithm or a dist-tag
# ("loopx@2.1.1", "image@sha256:…", "pkg@latest").
_USER_AT_HOST = re.compile(r"(?<![A-Za-z0-9._%+\-@])[A-Za-z0-9._%+\-]{1,64}@(?P<host>[A-Za-z][A-Za-z0-9\-]{1,62})(?![A-Za-z0-9\-@.])")
_NOT_HOSTS = frozenset(
    {
        "latest",
        "next",
        "beta",
        "alpha",
        "canary",
        "rc",
        "stable",
        "main",
        "master",
        "head",
        "dev",
        "nightly",
        "sha1",
        "sha224",
        "sha256",
        "sha384",
        "sha512",
        "md5",
        "blake2b",
        "blake2s",
        "blake3",
        "types",
        "experimental",
        "legacy",
        "lts",
        "none",
        "null",
        "everywhere",
        "all",
        "host",
        "hostname",
        "domain",
        "example",
        "machine",
        "server_name",  # placeholders in prose: user@host
    }
)


def user_at_host(text: str) -> bool:
    """True when ``text`` holds ``user@host`` with a single-label host (an account on a machine)."""
    for match in _USER_AT_HOST.finditer(text):
        host = match.group("host").lower()
        if host in _NOT_HOSTS or host.startswith("sha") or (host[0] == "v" and host[1:2].isdigit()):
            continue
        return True
    return False
