"""An in-process outbound-network guard for the external-write assertion (M12).

While :func:`refuse_outbound` is active, any attempt from this process to reach a non-loopback
host through the ``socket`` module fails *before* the real call, so not a single packet (nor a
DNS query) leaves. Loopback and ``AF_UNIX`` stay usable so local test servers still work.
Attempts are recorded by address family and locality only: never the address itself, so the
record is safe to publish (M13).

Limits: the patch is process-wide (all threads) and covers the Python ``socket`` API
(``socket.socket`` methods, ``socket.create_connection``, ``socket.getaddrinfo``); raw
``_socket`` objects, C extensions and subprocesses are outside its reach.
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

_MISSING = object()
_LOCK = threading.RLock()
_ACTIVE: list[OutboundGuard] = []
_SAVED: dict[str, Any] = {}

_SOCKET_METHODS = ("connect", "connect_ex", "sendto", "sendmsg")
_MODULE_FUNCTIONS = ("create_connection", "getaddrinfo")


class OutboundNetworkRefused(OSError):
    """An outbound connection or lookup was refused by the guard; no traffic was sent."""

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


def _family_name(family: Any) -> str:
    try:
        return socket.AddressFamily(family).name
    except (ValueError, TypeError):
        return "AF_OTHER"


def _is_loopback_host(host: Any) -> bool:
    """Loopback by literal or by the name ``localhost``; anything unparseable is not loopback."""
    if isinstance(host, bytes):
        try:
            host = host.decode("ascii")
        except UnicodeDecodeError:
            return False
    if not isinstance(host, str):
        return False
    name = host.rstrip(".").lower()
    if name == "localhost":  # only the exact name: "x.localhost" could still go to DNS
        return True
    try:
        ip = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def _is_unspecified(host: Any) -> bool:
    if host is None or host in ("", b""):
        return True
    try:
        text = host.decode("ascii") if isinstance(host, bytes) else host
        return ipaddress.ip_address(text).is_unspecified
    except (ValueError, TypeError, AttributeError, UnicodeDecodeError):
        return False


def _judge(api: str, family: Any, address: Any) -> None:
    """Record the attempt on every active guard; raise if it would leave this host."""
    name = _family_name(family)
    if name == "AF_UNIX":
        loopback = True
    elif name in ("AF_INET", "AF_INET6", "AF_UNSPEC"):
        host = address[0] if isinstance(address, tuple) and address else None
        loopback = _is_loopback_host(host)
    else:
        loopback = False
    attempt = OutboundAttempt(api, name, loopback, refused=not loopback)
    for guard in list(_ACTIVE):
        guard.attempts.append(attempt)
    if attempt.refused:
        raise OutboundNetworkRefused(name)


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
    original_create: Callable[..., Any] = _SAVED["module.create_connection"]
    original_getaddrinfo: Callable[..., Any] = _SAVED["module.getaddrinfo"]

    def connect(self: socket.socket, address: Any) -> None:
        _judge("connect", self.family, address)
        return original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        _judge("connect_ex", self.family, address)
        return original_connect_ex(self, address)

    def sendto(self: socket.socket, *args: Any) -> int:
        _judge("sendto", self.family, args[-1] if len(args) >= 2 else None)
        return original_sendto(self, *args)

    def sendmsg(self: socket.socket, *args: Any, **kwargs: Any) -> int:
        address = kwargs.get("address", args[3] if len(args) >= 4 else None)
        if address is not None:
            _judge("sendmsg", self.family, address)
        return original_sendmsg(self, *args, **kwargs)

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        _judge("create_connection", socket.AF_UNSPEC, address)
        return original_create(address, *args, **kwargs)

    def getaddrinfo(host: Any, port: Any, family: Any = 0, *args: Any, **kwargs: Any) -> Any:
        if not _is_unspecified(host):
            _judge("getaddrinfo", family or socket.AF_UNSPEC, (host, port))
        return original_getaddrinfo(host, port, family, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.socket.sendto = sendto  # type: ignore[method-assign, assignment]
    socket.socket.sendmsg = sendmsg  # type: ignore[method-assign]
    socket.create_connection = create_connection  # type: ignore[assignment]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]


def _uninstall() -> None:
    for name in _SOCKET_METHODS:
        saved = _SAVED.pop("socket." + name)
        if saved is _MISSING:
            delattr(socket.socket, name)
        else:
            setattr(socket.socket, name, saved)
    for name in _MODULE_FUNCTIONS:
        setattr(socket, name, _SAVED.pop("module." + name))
