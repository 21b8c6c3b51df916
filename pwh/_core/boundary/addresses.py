"""IP addresses for the public-boundary scanner (SPEC §2 INP, JNL-6, M13), told from versions and ids.

Four dotted numbers of at most 255 are an IPv4 address or a version (``release-1.2.3.4``,
``firmware 2.4.1.7``, ``pkg==1.2.3.4``) or a section number (``clause 5.2.1.1``). What sits
before them decides:

- a version's suffix after them (``1.2.3.4-beta``, ``2.0.0.1+build.5``), a version operator
  (``==``, ``>=``, ``~=``, ``^``) or a ``+`` before them: a version;
- letters glued to them (``ip10.20.30.40``, ``srv10.8.0.1``): an address, unless the letters are
  a version word (``v``, ``ver``, ``rel``, ``build``... as in ``v3.2.1.0``);
- a name joined by ``-`` or ``_`` (``release-1.2.3.4``, ``app-2.3.4.5``): a name and its version,
  unless the name is one for a machine or an address (``ip_172.31.0.9``, ``node-10.1.2.3``);
- after a space, ``=`` or ``:``, the word before decides: a version or numbering word
  (``version``, ``firmware``, ``section``, ``clause``...) makes a version, any other an address.

``ip-10-0-3-17`` (a cloud's private host name for an address) is an address too. An IPv6 candidate
is decided by :mod:`ipaddress`; one glued to an id by ``_`` or ``-`` (``batch_7::2``, ``grid-3::5``)
is a namespaced id, and ``a::b`` (a code path) needs a digit or three groups.
"""

from __future__ import annotations

import ipaddress
import re

__all__ = ["has_ip_address", "has_ipv4", "has_ipv6"]

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
# Exactly four octets: "2.1.1" (three parts) and "1.2.3.4.5" (an OID, a long version) are not addresses.
_IPV4 = re.compile(rf"(?<![0-9.+]){_OCTET}(?:\.{_OCTET}){{3}}(?![0-9]|\.[0-9]|[\-+][A-Za-z])")
_IP_DASHED = re.compile(rf"(?<![A-Za-z0-9])(?i:ip)-{_OCTET}(?:-{_OCTET}){{3}}(?![0-9])")
# Candidates only; ipaddress decides, so "00:00:00" and "12:30:45" never pass.
_IPV6 = re.compile(
    r"(?<![0-9A-Za-z:._\-])(?:[0-9A-Fa-f]{0,4}:){2,7}"
    r"(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Fa-f]{1,4})?(?:%[0-9A-Za-z]+)?(?![0-9A-Za-z:])"
)

# Words that make the numbers after them a version or a section number.
_VERSION_WORDS = frozenset(
    """
    v ver vers version versions r rel release releases rev revision b build builds fw firmware
    patch update sdk spec rfc draft edition section sections sec clause clauses chapter step steps
    rule rules item items para paragraph part appendix figure fig table
    """.split()
)
# Names that make the numbers after "<name>-" or "<name>_" an address.
_ADDRESS_WORDS = frozenset(
    """
    ip ipv4 addr address host hostname node server srv gw gateway peer src dst from to net subnet
    vpn proxy dns router vm vip lb db worker client bastion jump nat
    """.split()
)
_OPERATOR_CHARS = frozenset("=<>~!^")
_WORD_BEFORE = re.compile(r"([A-Za-z]{1,24})[ \t]*[=:#(]?[ \t]*$")


def _is_version(text: str, start: int) -> bool:
    """True when the four numbers at ``start`` read as a version (see the module docstring)."""
    if start == 0:
        return False
    before = text[start - 1]
    if before in _OPERATOR_CHARS:
        if before in "^~" or (start >= 2 and text[start - 2] in _OPERATOR_CHARS):
            return True  # ==1.2.3.4, >=2.0.0.1, ^1.2.3.4
    if before.isalpha():  # glued letters: "ip10.20.30.40", "v3.2.1.0"
        begin = start
        while begin > 0 and start - begin < 24 and text[begin - 1].isalpha():
            begin -= 1
        return text[begin:start].lower() in _VERSION_WORDS
    if before in "-_":  # "release-1.2.3.4", "node-10.1.2.3"
        begin = start - 1
        while begin > 0 and start - begin < 25 and text[begin - 1].isalnum():
            begin -= 1
        name = text[begin : start - 1]
        return any(c.isalpha() for c in name) and name.lower() not in _ADDRESS_WORDS
    word = _WORD_BEFORE.search(text, max(0, start - 32), start)
    return word is not None and word.group(1).lower() in _VERSION_WORDS


def has_ipv4(text: str) -> bool:
    """True when ``text`` holds an IPv4 address that no version reading explains."""
    if text.count(".") >= 3:
        for match in _IPV4.finditer(text):
            if not _is_version(text, match.start()):
                return True
    return ("ip-" in text or "IP-" in text or "Ip-" in text) and _IP_DASHED.search(text) is not None


def _is_ipv6(match: re.Match[str]) -> bool:
    candidate = match.group()
    try:
        ipaddress.IPv6Address(candidate.split("%", 1)[0])
    except ValueError:
        return False
    # "a::b" is also a code path; demand a digit or at least three groups.
    return any(c.isdigit() for c in candidate) or sum(1 for g in candidate.split(":") if g) >= 3


def has_ipv6(text: str) -> bool:
    """True when ``text`` holds an IPv6 address (not a time, a code path or a namespaced id)."""
    return ":" in text and ("::" in text or text.count(":") >= 6) and any(map(_is_ipv6, _IPV6.finditer(text)))


def has_ip_address(text: str) -> bool:
    """True when ``text`` holds an IPv4 or IPv6 address."""
    return has_ipv4(text) or has_ipv6(text)
