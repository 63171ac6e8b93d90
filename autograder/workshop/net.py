"""The server's network edge: binding with a clear error, a cap on open connections (per address and in all,
against slow clients that hold connections open), which address a request counts as, and the machine's own
interface addresses for the join URL (never a host name, which on many laptops resolves to 127.0.1.1)."""

from __future__ import annotations

import errno
import ipaddress
import resource
import socket
from collections import Counter

from tornado import httpserver, netutil

from ..feedback.wording import say
from .schema import MAX_BODY

LOOPBACK = ("127.", "::1", "::ffff:127.")
PROXY = ("127.0.0.1", "::1", "::ffff:127.0.0.1")
"""Where a tunnel or proxy on this machine connects from: the only peers whose forwarding header is read."""
TRUSTABLE = ("X-Forwarded-For", "X-Real-Ip", "Cf-Connecting-Ip", "Fly-Client-Ip", "True-Client-Ip")
"""Headers `--trust-forwarded` may name: the one the tunnel or proxy in front of the server sets."""


class StartError(Exception):
    """Something the host can fix before the server starts; the message is one line."""


class CappedServer(httpserver.HTTPServer):
    """Tornado's HTTP server, closing new connections beyond `per_address` from one address or `total` in all.
    A proxy's own address (`exempt`, with --trust-forwarded) has only the total cap."""

    def setup(self, per_address: int, total: int, exempt: tuple[str, ...] = ()) -> None:
        self.per_address, self.total, self.exempt = per_address, total, exempt
        self.open: Counter = Counter()
        self.refused_connections = 0
        self._addresses: dict[int, str] = {}

    def handle_stream(self, stream, address) -> None:
        ip = address[0] if isinstance(address, tuple) and address else "local"
        capped = ip not in self.exempt
        if sum(self.open.values()) >= self.total or (capped and self.open[ip] >= self.per_address):
            self.refused_connections += 1
            stream.close()
            return
        self.open[ip] += 1
        self._addresses[id(stream)] = ip
        super().handle_stream(stream, address)

    def on_close(self, server_conn) -> None:
        ip = self._addresses.pop(id(getattr(server_conn, "stream", None)), None)
        if ip is not None:
            self.open[ip] -= 1
            if self.open[ip] <= 0:
                del self.open[ip]
        super().on_close(server_conn)


def file_limit(wanted: int) -> int:
    """Raises this process's open-file limit towards `wanted` (up to the hard limit); returns the soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


def listen(app, host: str, port: int, per_address: int = 16, total: int = 512,
           exempt: tuple[str, ...] = ()) -> tuple[CappedServer, int]:
    """Binds the server (port 0: any free port) and returns it with its port; StartError for a busy port or an
    address this machine does not have. `total` is lowered to fit the open-file limit."""
    try:
        sockets = netutil.bind_sockets(port, host)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise StartError(say("workshop: port busy", port=port)) from None
        if e.errno in (errno.EADDRNOTAVAIL, errno.EACCES, -2, -3, -5):
            raise StartError(say("workshop: cannot listen", host=host, port=port, why=e.strerror or e)) from None
        raise StartError(say("workshop: cannot listen", host=host, port=port, why=e)) from None
    total = max(8, min(total, file_limit(total + 128) - 64))
    server = CappedServer(app, max_body_size=2 * MAX_BODY, max_header_size=16 * 1024, idle_connection_timeout=10,
                          body_timeout=10)
    server.setup(per_address, total, exempt)
    server.add_sockets(sockets)
    return server, sockets[0].getsockname()[1]


def client_key(remote_ip: str | None, headers, trusted: str | None) -> str:
    """The address a request counts as for the limits: the peer's, or, when it is the local proxy and a header
    is trusted, that header's last entry (the one the proxy added; a client can only prepend to it)."""
    ip = remote_ip or "?"
    if trusted and ip in PROXY:
        value = headers.get(trusted, "")
        last = value.split(",")[-1].strip()
        try:
            return str(ipaddress.ip_address(last))
        except ValueError:
            return ip
    return ip


def interface_addresses() -> list[tuple[str, str]]:
    """(interface, IPv4 address) of this machine, the one the default route uses first; no loopback,
    link-local or container bridges' own. From psutil where installed, else the default route's alone."""
    found: list[tuple[str, str]] = []
    try:
        import psutil

        for name, addresses in psutil.net_if_addrs().items():
            up = psutil.net_if_stats().get(name)
            if up is not None and not up.isup:
                continue
            for a in addresses:
                if a.family == socket.AF_INET and _usable(a.address, name):
                    found.append((name, a.address))
    except ImportError:
        pass
    primary = _default_route_address()
    if primary and primary not in [a for _, a in found]:
        found.append(("default route", primary))
    found.sort(key=lambda item: item[1] != primary)
    return found


def _usable(address: str, name: str = "") -> bool:
    ip = ipaddress.ip_address(address)
    return not (ip.is_loopback or ip.is_link_local or ip.is_unspecified or name.startswith(("docker", "br-", "veth")))


def _default_route_address() -> str | None:
    """The address this machine would send from to the internet: a UDP socket's connect sends no packet."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere real
            address = s.getsockname()[0]
        except OSError:
            return None
    return address if _usable(address) else None
