"""The route port: sockets between the servers of a cluster, each carrying one :class:`RouteLink`.

:class:`RoutePort` listens for other servers (nats-server's route accept
loop) and dials the ones the cluster asks for (its :class:`Dialer`), through
:class:`LinkSockets`, the listener and dials the leaf port holds as well;
:class:`RouteConnection` moves bytes between a socket and its link, the
link's queued output written once per event-loop turn.  An exception
while a link handles input is recorded on the server and the route is
dropped, so a bug shows instead of a silent cluster.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import cast

from fakejs.core.broker import Broker
from fakejs.core.cluster.cluster import Cluster
from fakejs.core.cluster.link import RouteIO, RouteLink
from fakejs.gocompat.gourl import GoURLError, ListenError, listen_error, parse_host_port
from fakejs.server.connection import tcp_peer
from fakejs.server.listeners import system_backlog

__all__ = ["LinkSockets", "RouteConnection", "RoutePort"]

# nats-server's DEFAULT_ROUTE_DIAL: how long a dial may take.
ROUTE_DIAL_TIMEOUT = 1.0


class RouteConnection(asyncio.Protocol):
    """One route socket; implements :class:`RouteIO` for its link."""

    def __init__(self, broker: Broker, make_link: Callable[[RouteIO], RouteLink]) -> None:
        self._broker = broker
        self._make_link = make_link
        self._transport: asyncio.Transport | None = None
        self._flush_pending = False
        self._closing = False
        self.link: RouteLink | None = None
        self._address: tuple[str, int] = ("", 0)

    # RouteIO -------------------------------------------------------------------------

    @property
    def remote_address(self) -> tuple[str, int]:
        return self._address

    def want_flush(self) -> None:
        if not self._flush_pending and self._transport is not None:
            self._flush_pending = True
            asyncio.get_running_loop().call_soon(self._flush)

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._flush()
        if self._transport is not None:
            self._transport.close()

    # asyncio.Protocol ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's are not subclasses of asyncio.Transport, so no isinstance check)
        self._transport = stream = cast(asyncio.Transport, transport)
        self._address = tcp_peer(stream)
        self._guarded("start", self._start)

    def _start(self) -> None:
        self.link = self._make_link(self)
        self.link.start()

    def data_received(self, data: bytes) -> None:
        link = self.link
        if link is not None:
            self._guarded("input", link.data_received, data)
            self._flush()

    def connection_lost(self, exc: Exception | None) -> None:
        self._closing = True
        link = self.link
        if link is not None:
            self._guarded("close", link.connection_lost)

    def _flush(self) -> None:
        self._flush_pending = False
        link, transport = self.link, self._transport
        if link is None or transport is None or transport.is_closing():
            return
        data = link.take_output()
        if data:
            transport.write(data)

    def _guarded(self, where: str, action: Callable[..., None], *args: object) -> None:
        try:
            action(*args)
        except Exception as exc:  # noqa: BLE001 - recorded on the server; the route is dropped, others go on
            self._broker.record_error(f"route connection ({where})", exc)
            if self._transport is not None:
                self._transport.abort()


class LinkSockets:
    """The sockets of one kind of link between servers (routes, leaf connections): the listener and the dials.

    A failed dial is reported while ``running`` says the links are still
    wanted; closing cancels the dials under way and stops listening.
    """

    def __init__(self, running: Callable[[], bool]) -> None:
        self._running = running
        self._listener: asyncio.base_events.Server | None = None
        self._dials: set[asyncio.Task[None]] = set()

    async def listen(self, host: str, port: int, connection: Callable[[], asyncio.Protocol], port_name: str) -> int:
        """Listen on ``host:port`` (0: any free port) for ``connection`` sockets; returns the bound port."""
        try:
            self._listener = await asyncio.get_running_loop().create_server(
                connection,
                host,
                port,
                reuse_address=True,
                backlog=system_backlog(),
            )
        except OSError as exc:
            problem = listen_error(host, port, exc)
            raise ListenError(f"Error listening on {port_name} port: {port} - {problem}") from exc
        return int(self._listener.sockets[0].getsockname()[1])

    def dial(
        self, host: str, port: int, connection: Callable[[], asyncio.Protocol], failed: Callable[[], None]
    ) -> None:
        """Dial ``host:port`` for a ``connection`` socket; ``failed`` when no socket came within the dial timeout."""
        task = asyncio.get_running_loop().create_task(self._dial(host, port, connection, failed))
        self._dials.add(task)
        task.add_done_callback(self._dials.discard)

    async def _dial(
        self, host: str, port: int, connection: Callable[[], asyncio.Protocol], failed: Callable[[], None]
    ) -> None:
        loop = asyncio.get_running_loop()
        try:
            await asyncio.wait_for(loop.create_connection(connection, host, port), ROUTE_DIAL_TIMEOUT)
        except (TimeoutError, OSError):
            if self._running():
                failed()

    def stop_listening(self) -> None:
        """Accept no more sockets (the listener is waited for by :meth:`close`)."""
        if self._listener is not None:
            self._listener.close()

    async def close(self) -> None:
        """Cancel the dials under way and stop listening."""
        for task in list(self._dials):
            task.cancel()
        if self._listener is not None:
            self._listener.close()
            await self._listener.wait_closed()
            self._listener = None


class RoutePort:
    """The server's route listener and dialler (the cluster's :class:`Dialer`)."""

    def __init__(self, broker: Broker, cluster: Cluster) -> None:
        self._broker = broker
        self._cluster = cluster
        self._sockets = LinkSockets(lambda: cluster.running)
        self.port = 0

    async def open(self, client_urls: list[str]) -> int:
        """Listen for routes, then dial the configured ones; returns the bound port."""
        config = self._cluster.config
        cluster = self._cluster
        log = self._broker.log
        log.info("Cluster name is %s", cluster.name)
        if cluster.dynamic_name:
            log.warning("Cluster name was dynamically generated, consider setting one")
        host, port = config.host or "0.0.0.0", max(config.port, 0)
        self.port = await self._sockets.listen(
            host, port, lambda: RouteConnection(self._broker, cluster.accepted), "router"
        )
        log.info("Listening for route connections on %s:%d", config.host or "0.0.0.0", self.port)
        if config.advertise:
            try:
                parse_host_port(config.advertise, self.port)
            except GoURLError as exc:  # nats-server's fatal error, once the port listens
                self._sockets.stop_listening()
                raise ListenError(
                    f"Error setting route INFO with Cluster.Advertise value of {config.advertise}, err={exc}"
                ) from None
        cluster.start(self.port, client_urls, self)
        return self.port

    def dial(self, host: str, port: int, connected: Callable[[RouteIO], RouteLink], failed: Callable[[], None]) -> None:
        self._sockets.dial(host, port, lambda: RouteConnection(self._broker, connected), failed)

    async def close(self) -> None:
        """Stop dialling and listening, close every route."""
        self._cluster.stop()
        await self._sockets.close()


def client_connect_urls(host: str, port: int) -> list[str]:
    """This server's client URLs as other servers pass them on (nats-server's ``getClientConnectURLs``).

    A wildcard host stands for every address of the machine but the
    loopback ones, as nats-server lists them.
    """
    if host not in ("", "0.0.0.0", "::"):
        return [_join(host, port)]
    addresses: list[str] = []
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, proto=socket.IPPROTO_TCP):
            address = str(info[4][0]).split("%", 1)[0]
            if address not in addresses and not address.startswith("127.") and address != "::1":
                addresses.append(address)
    except OSError:
        pass
    return [_join(address, port) for address in addresses] or [_join("127.0.0.1", port)]


def _join(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
