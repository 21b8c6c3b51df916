"""A loopback-only network guard for the campaign (M12): while it is active, any attempt to resolve
or reach a non-loopback address is refused *before* the original call runs, so not one packet
(not even a DNS query) leaves the machine.

It patches the Python-level entry points (``socket.socket.connect``/``connect_ex``/``sendto``/
``sendmsg``, ``socket.create_connection``, ``socket.getaddrinfo``, ``socket.gethostbyname``);
it is a guard for a campaign of ordinary code, not a sandbox (``_socket`` used directly is not covered).
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable
from typing import Any

_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class NetworkRefused(PermissionError):
    """An outbound attempt the guard stopped (pwh's own text: never the address)."""


def is_loopback(host: Any) -> bool:
    """True for ``localhost``, 127.0.0.0/8 and ::1; host names other than localhost are not
    loopback (resolving them would already send a DNS query)."""
    if host is None:
        return True  # getaddrinfo(None, port): the local wildcard, nothing is resolved
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    if host.lower() in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _address_ok(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX: a local file, never the network
        return True
    if isinstance(address, tuple) and address:
        return is_loopback(address[0])
    return False


class NetworkGuard:
    """Context manager; ``refused`` counts what it stopped, ``allowed`` the loopback calls."""

    def __init__(self) -> None:
        self.refused = 0
        self.allowed = 0
        self._lock = threading.Lock()
        self._saved: list[tuple[Any, str, bool, Any]] = []

    def check(self, ok: bool) -> None:
        with self._lock:
            if ok:
                self.allowed += 1
                return
            self.refused += 1
        raise NetworkRefused("outbound network refused by the campaign guard")

    def __enter__(self) -> "NetworkGuard":
        sock = socket.socket
        self._patch(sock, "connect", lambda orig: lambda s, address: (self.check(_address_ok(address)), orig(s, address))[1])
        self._patch(sock, "connect_ex", lambda orig: lambda s, address: (self.check(_address_ok(address)), orig(s, address))[1])
        self._patch(sock, "sendto", lambda orig: lambda s, *args: (self.check(_address_ok(args[-1])), orig(s, *args))[1])
        self._patch(sock, "sendmsg", lambda orig: lambda s, *args: (self.check(len(args) < 4 or _address_ok(args[3])), orig(s, *args))[1])
        self._patch(socket, "create_connection", lambda orig: lambda address, *a, **k: (self.check(_address_ok(address)), orig(address, *a, **k))[1])
        self._patch(socket, "getaddrinfo", lambda orig: lambda host, *a, **k: (self.check(is_loopback(host)), orig(host, *a, **k))[1])
        self._patch(socket, "gethostbyname", lambda orig: lambda host: (self.check(is_loopback(host)), orig(host))[1])
        self._patch(socket, "gethostbyname_ex", lambda orig: lambda host: (self.check(is_loopback(host)), orig(host))[1])
        return self

    def _patch(self, owner: Any, name: str, wrap: Callable[[Any], Any]) -> None:
        had = name in vars(owner)
        original = getattr(owner, name)
        self._saved.append((owner, name, had, vars(owner).get(name)))
        setattr(owner, name, wrap(original))

    def __exit__(self, *exc: object) -> None:
        while self._saved:
            owner, name, had, original = self._saved.pop()
            if had:
                setattr(owner, name, original)
            else:
                delattr(owner, name)
