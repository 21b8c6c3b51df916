"""The one outbound-network guard (M12): scenarios, fakes and the reliability campaign share it.

While :func:`refuse_outbound` is active, any attempt from this process to resolve or reach a
host that is not this machine fails *before* the real call, so not a packet leaves, not even a
DNS query. What stays usable: ``AF_UNIX``, the loopback literals (127.0.0.0/8, ``::1``), the
exact name ``localhost``, and ``getaddrinfo(None, port)`` (the local wildcard: nothing is
resolved). Everything else is refused, including names a resolver might answer from a file but
could send to DNS instead (``localhost.localdomain``, ``ip6-localhost``, ``x.localhost``), the
IPv4-mapped form ``::ffff:127.0.0.1``, unspecified addresses and families other than
``AF_INET``/``AF_INET6``/``AF_UNIX``: where two earlier guards disagreed, this one takes the
stricter answer.

Attempts are recorded by API, address family and locality only, never the address, so the
record is safe to publish (M13). The patch is process-wide (all threads) and covers the Python
``socket`` API (the socket methods ``connect``, ``connect_ex``, ``sendto``, ``sendmsg``; the
module's ``create_connection``, ``getaddrinfo``, ``gethostbyname``, ``gethostbyname_ex``,
``gethostbyaddr``, ``getnameinfo``); ``_socket`` used directly, C extensions and subprocesses
are outside its reach: a guard for ordinary code, not a sandbox.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["NetworkRefused", "OutboundAttempt", "OutboundGuard", "guard_active", "is_loopback", "refuse_outbound"]

_MISSING = object()
_LOCK = threading.RLock()
_ACTIVE: list[OutboundGuard] = []
_SAVED: dict[str, Any] = {}

_SOCKET_METHODS = ("connect", "connect_ex", "sendto", "sendmsg")
_MODULE_FUNCTIONS = ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getnameinfo")
_IP_FAMILIES = ("AF_INET", "AF_INET6", "AF_UNSPEC")


class NetworkRefused(PermissionError):
    """An outbound connection or lookup the guard refused; nothing was sent. pwh's own text:
    the family, never the address."""

    def __init__(self, family: str) -> None:
        super().__init__(errno.EACCES, f"outbound network refused by the pwh guard ({family})")
        self.family = family


@dataclass(frozen=True, slots=True)
class OutboundAttempt:
    """One observed attempt: which API, which family, whether it stayed on this host."""

    api: str
    family: str
    loopback: bool
    refused: bool

    def to_json(self) -> dict[str, Any]:
        return {"api": self.api, "family": self.family, "loopback": self.loopback, "refused": self.refused}


@dataclass(eq=False)  # identity, not content: nested guards must be told apart
class OutboundGuard:
    """What one active :func:`refuse_outbound` block observed."""

    attempts: list[OutboundAttempt] = field(default_factory=list)

    @property
    def refused(self) -> list[OutboundAttempt]:
        return [a for a in self.attempts if a.refused]

    @property
    def allowed(self) -> list[OutboundAttempt]:
        return [a for a in self.attempts if not a.refused]


@contextmanager
def refuse_outbound() -> Iterator[OutboundGuard]:
    """Refuse non-loopback network access while active; nestable, restored on any exit."""
    guard = OutboundGuard()
    with _LOCK:
        if not _ACTIVE:
            _install()
        _ACTIVE.append(guard)
    try:
        yield guard
    finally:
        with _LOCK:
            _ACTIVE.remove(guard)
            if not _ACTIVE:
                _uninstall()


def guard_active() -> bool:
    """True while at least one :func:`refuse_outbound` block is open."""
    return bool(_ACTIVE)


# -- judging an address ------------------------------------------------------------------------


def is_loopback(host: Any) -> bool:
    """This machine without asking a resolver: a loopback literal or exactly ``localhost``
    (a trailing dot and any case allowed). Anything else, unparseable included, is not."""
    if isinstance(host, bytes):
        try:
            host = host.decode("ascii")
        except UnicodeDecodeError:
            return False
    if not isinstance(host, str):
        return False
    name = host.rstrip(".").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name.split("%", 1)[0]).is_loopback  # ::ffff:127.0.0.1 is not
    except ValueError:
        return False


def _family_name(family: Any) -> str:
    try:
        return socket.AddressFamily(family).name
    except (ValueError, TypeError):
        return "AF_OTHER"


def _judge(api: str, family: Any, host: Any) -> None:
    """Record the attempt on every active guard; raise if it would leave this host."""
    name = _family_name(family)
    loopback = name == "AF_UNIX" or (name in _IP_FAMILIES and is_loopback(host))
    attempt = OutboundAttempt(api, name, loopback, refused=not loopback)
    for guard in list(_ACTIVE):
        guard.attempts.append(attempt)
    if attempt.refused:
        raise NetworkRefused(name)


def _host(address: Any) -> Any:
    return address[0] if isinstance(address, tuple) and address else None


# -- the patches --------------------------------------------------------------------------------


def _install() -> None:
    for name in _SOCKET_METHODS:
        _SAVED["socket." + name] = vars(socket.socket).get(name, _MISSING)
    for name in _MODULE_FUNCTIONS:
        _SAVED["module." + name] = getattr(socket, name)
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex
    original_sendto = socket.socket.sendto
    original_sendmsg = socket.socket.sendmsg
    module: dict[str, Callable[..., Any]] = {name: _SAVED["module." + name] for name in _MODULE_FUNCTIONS}

    def connect(self: socket.socket, address: Any) -> None:
        _judge("connect", self.family, _host(address))
        return original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        _judge("connect_ex", self.family, _host(address))
        return original_connect_ex(self, address)

    def sendto(self: socket.socket, *args: Any) -> int:
        _judge("sendto", self.family, _host(args[-1] if len(args) >= 2 else None))
        return original_sendto(self, *args)

    def sendmsg(self: socket.socket, *args: Any, **kwargs: Any) -> int:
        address = kwargs.get("address", args[3] if len(args) >= 4 else None)
        if address is not None:  # a connected socket's send: its connect was judged
            _judge("sendmsg", self.family, _host(address))
        return original_sendmsg(self, *args, **kwargs)

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        _judge("create_connection", socket.AF_UNSPEC, _host(address))
        return module["create_connection"](address, *args, **kwargs)

    def getaddrinfo(host: Any, port: Any, family: Any = 0, *args: Any, **kwargs: Any) -> Any:
        if host is not None:  # None: the local wildcard, nothing is resolved
            _judge("getaddrinfo", family or socket.AF_UNSPEC, host)
        return module["getaddrinfo"](host, port, family, *args, **kwargs)

    def gethostbyname(host: Any) -> str:
        _judge("gethostbyname", socket.AF_INET, host)
        return module["gethostbyname"](host)

    def gethostbyname_ex(host: Any) -> Any:
        _judge("gethostbyname_ex", socket.AF_INET, host)
        return module["gethostbyname_ex"](host)

    def gethostbyaddr(host: Any) -> Any:
        _judge("gethostbyaddr", socket.AF_UNSPEC, host)
        return module["gethostbyaddr"](host)

    def getnameinfo(address: Any, flags: int) -> Any:
        _judge("getnameinfo", socket.AF_UNSPEC, _host(address))
        return module["getnameinfo"](address, flags)

    socket.socket.connect = connect  # type: ignore[method-assign, assignment]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign, assignment]
    socket.socket.sendto = sendto  # type: ignore[method-assign, assignment]
    socket.socket.sendmsg = sendmsg  # type: ignore[method-assign, assignment]
    socket.create_connection = create_connection
    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
    socket.gethostbyname_ex = gethostbyname_ex
    socket.gethostbyaddr = gethostbyaddr
    socket.getnameinfo = getnameinfo


def _uninstall() -> None:
    for name in _SOCKET_METHODS:
        saved = _SAVED.pop("socket." + name)
        if saved is _MISSING:
            delattr(socket.socket, name)
        else:
            setattr(socket.socket, name, saved)
    for name in _MODULE_FUNCTIONS:
        setattr(socket, name, _SAVED.pop("module." + name))
