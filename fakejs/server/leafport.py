"""The leaf port and the leaf remotes' dials: sockets each carrying one :class:`~fakejs.core.leaf.link.LeafLink`.

The sockets are the route port's (:class:`~fakejs.server.routes.RouteConnection`),
which move bytes the same way whatever the link, listened for and dialled as
the route port does (:class:`~fakejs.server.routes.LinkSockets`); a :class:`LeafConnection`
can also start TLS when its link asks (asyncio's ``start_tls`` under the
same protocol object), the hub as server, the leaf as client.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from typing import Any, cast

from fakejs.core.broker import Broker
from fakejs.core.leaf.leafs import Leafs
from fakejs.core.leaf.link import LeafIO, LeafLink
from fakejs.core.transport_config import TLSConfig
from fakejs.server.routes import LinkSockets, RouteConnection
from fakejs.server.tls import go_handshake_error, server_context

__all__ = ["LeafConnection", "LeafPort", "client_context"]


def client_context(config: TLSConfig) -> ssl.SSLContext:
    """A remote's side of the TLS: the hub verified with ``ca_file`` (the system's CAs without), its own certificate."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_3 if config.min_version == "1.3" else ssl.TLSVersion.TLSv1_2
    if config.ca_file:
        context.load_verify_locations(config.ca_file)
    else:
        context.load_default_certs()
    if config.cert_file:
        context.load_cert_chain(config.cert_file, config.key_file)
    return context


class LeafConnection(RouteConnection):
    """A leaf socket: a route socket that can start TLS (see the module docstring)."""

    def __init__(self, broker: Broker, make_link: Callable[[LeafIO], Any]) -> None:
        super().__init__(broker, lambda io: make_link(cast(LeafIO, io)))
        self._upgrading = False

    def _flush(self) -> None:
        if not self._upgrading:  # the peer's first bytes after its handshake may come before the TLS transport
            super()._flush()

    def start_tls(self, config: TLSConfig, server_side: bool, server_name: str, done: Callable[[], None]) -> None:
        self._flush()
        self._upgrading = True  # what the link sends meanwhile waits for the TLS transport
        if self._transport is not None:
            self._transport.pause_reading()  # the peer's handshake bytes are the TLS layer's, not the link's
        task = asyncio.get_running_loop().create_task(self._upgrade(config, server_side, server_name, done))
        task.add_done_callback(self._upgraded)

    def _upgraded(self, task: asyncio.Task[None]) -> None:
        """An upgrade that raised what no handshake failure raises: recorded on the server, the socket dropped."""
        problem = None if task.cancelled() else task.exception()
        if problem is not None:
            self._broker.record_error("leaf connection (tls)", problem)
            if self._transport is not None:
                self._transport.abort()

    async def _upgrade(self, config: TLSConfig, server_side: bool, server_name: str, done: Callable[[], None]) -> None:
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        context = server_context(config) if server_side else client_context(config)
        side = "server" if server_side else "client"
        self._broker.log.debug("%s - Starting TLS leafnode %s handshake", self.link, side)
        try:
            upgraded = await asyncio.get_running_loop().start_tls(
                transport,
                self,
                context,
                server_side=server_side,
                server_hostname=None if server_side else server_name,
                ssl_handshake_timeout=config.timeout,
            )
        except (ssl.SSLError, OSError, TimeoutError, ConnectionError) as exc:
            text = go_handshake_error(exc) if isinstance(exc, ssl.SSLError) else "i/o timeout"
            self._broker.log.error("%s - TLS leafnode handshake error: %s", self.link, text)
            transport.abort()
            return
        if upgraded is None:
            return
        self._transport, self._upgrading = upgraded, False
        self._guarded("tls", done)
        self._flush()


class LeafPort:
    """The server's leaf listener (when ``leafnodes`` has a port) and the remotes' dialler."""

    def __init__(self, broker: Broker, leafs: Leafs) -> None:
        self._broker = broker
        self._leafs = leafs
        self._sockets = LinkSockets(lambda: leafs.running)
        self.port = 0

    async def open(self) -> int:
        """Listen for leaf connections (if asked), then dial the remotes; returns the bound port (0: none)."""
        config = self._leafs.config
        if config.port is not None:
            host, port = config.host or "0.0.0.0", max(config.port, 0)
            self.port = await self._sockets.listen(
                host, port, lambda: LeafConnection(self._broker, self._accept), "leafnode"
            )
            self._broker.log.info("Listening for leafnode connections on %s:%d", host, self.port)
        self._leafs.start(self, config.host, self.port)
        return self.port

    def _accept(self, io: LeafIO) -> Any:
        return self._leafs.accepted(io)

    def dial(self, host: str, port: int, connected: Callable[[LeafIO], LeafLink], failed: Callable[[], None]) -> None:
        self._sockets.dial(host, port, lambda: LeafConnection(self._broker, connected), failed)

    async def close(self) -> None:
        """Stop dialling and listening, close every leaf connection."""
        self._leafs.stop()
        await self._sockets.close()
