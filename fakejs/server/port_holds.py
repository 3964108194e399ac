"""A stopped server's ports kept bound until it starts again on them (the in-process cluster's kill and restart).

Between a node's kill and its restart, nothing listens on its ports, and the
kernel may hand one of them to another socket meanwhile: an outgoing
connection's local port, or a listener asking for any free port.  The
restart then fails with "address already in use".  A :class:`PortHold`
binds a socket to each port without listening, so connecting there is
refused as it is to a dead server, while the kernel hands the port to
nobody else; :meth:`PortHold.release` gives them back just before the
server binds them again.

A port the hold cannot bind (taken already) is left out: the restart on it
fails as it would have without the hold.  Where the server's closed
connections linger on a port (TIME_WAIT), the hold shares it with address
reuse: the kernel still hands it to no outgoing connection and to no
listener asking for any free port (those skip a port bound already), though
a socket binding that very port with address reuse could.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable

from fakejs.core.options import ServerOptions

__all__ = ["PortHold", "PortHolds", "hold_ports"]


class PortHold:
    """Sockets bound (not listening) to ``ports`` on ``host``; :meth:`release` closes them."""

    def __init__(self, host: str, ports: Iterable[int | None]) -> None:
        self._sockets = [held for port in ports if port and port > 0 and (held := _bind(host, port)) is not None]

    @property
    def ports(self) -> list[int]:
        """The ports held."""
        return [held.getsockname()[1] for held in self._sockets]

    def release(self) -> None:
        """Close the sockets: the ports are free for the server to bind again."""
        for held in self._sockets:
            held.close()
        self._sockets = []


def _bind(host: str, port: int) -> socket.socket | None:
    """A socket bound to ``port``; without address reuse first (then no other socket may share the port), with it
    when connections the server had on the port still linger (TIME_WAIT); ``None`` when the port is taken."""
    for reuse in (False, True):
        held = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        if reuse:
            held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            held.bind((host, port))
        except OSError:
            held.close()
            continue
        return held
    return None


def hold_ports(options: ServerOptions, host: str = "127.0.0.1") -> PortHold:
    """A hold on the ports a stopped server's options pin (client, route, monitoring, websocket)."""
    ports = [options.port, options.http_port, options.https_port]
    if options.cluster is not None:
        ports.append(options.cluster.port)
    if options.websocket is not None:
        ports.append(options.websocket.port)
    return PortHold(host, ports)


class PortHolds:
    """The holds of a cluster's nodes that are down, by node."""

    def __init__(self) -> None:
        self._holds: dict[int, PortHold] = {}

    def hold(self, node: int, options: ServerOptions) -> None:
        """Hold the ports node ``node``'s options pin (see :func:`hold_ports`)."""
        self.release(node)
        self._holds[node] = hold_ports(options)

    def release(self, node: int) -> None:
        """Give node ``node``'s ports back (nothing when none are held)."""
        held = self._holds.pop(node, None)
        if held is not None:
            held.release()

    def release_all(self) -> None:
        """Give every node's ports back."""
        for node in list(self._holds):
            self.release(node)
