"""The leaf port and the leaf remotes' dials: sockets each carrying one :class:`~fakejs.core.leaf.link.LeafLink`.

The sockets are the route port's (:class:`~fakejs.server.routes.RouteConnection`),
which move bytes the same way whatever the link.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from fakejs.core.broker import Broker
from fakejs.core.cluster.link import RouteIO
from fakejs.core.leaf.leafs import Leafs
from fakejs.core.leaf.link import LeafLink
from fakejs.gocompat.gourl import ListenError, listen_error
from fakejs.server.listeners import system_backlog
from fakejs.server.routes import ROUTE_DIAL_TIMEOUT, RouteConnection

__all__ = ["LeafPort"]


class LeafPort:
    """The server's leaf listener (when ``leafnodes`` has a port) and the remotes' dialler."""

    def __init__(self, broker: Broker, leafs: Leafs) -> None:
        self._broker = broker
        self._leafs = leafs
        self._listener: asyncio.base_events.Server | None = None
        self._dials: set[asyncio.Task[None]] = set()
        self.port = 0

    async def open(self) -> int:
        """Listen for leaf connections (if asked), then dial the remotes; returns the bound port (0: none)."""
        config = self._leafs.config
        if config.port is not None:
            host, port = config.host or "0.0.0.0", max(config.port, 0)
            try:
                self._listener = await asyncio.get_running_loop().create_server(
                    lambda: RouteConnection(self._broker, self._accept),
                    host,
                    port,
                    reuse_address=True,
                    backlog=system_backlog(),
                )
            except OSError as exc:
                problem = listen_error(host, port, exc)
                raise ListenError(f"Error listening on leafnode port: {port} - {problem}") from exc
            self.port = int(self._listener.sockets[0].getsockname()[1])
            self._broker.log.info("Listening for leafnode connections on %s:%d", host, self.port)
        self._leafs.start(self, config.host, self.port)
        return self.port

    def _accept(self, io: RouteIO) -> Any:
        return self._leafs.accepted(io)

    def dial(self, host: str, port: int, connected: Callable[[RouteIO], LeafLink], failed: Callable[[], None]) -> None:
        task = asyncio.get_running_loop().create_task(self._dial(host, port, connected, failed))
        self._dials.add(task)
        task.add_done_callback(self._dials.discard)

    async def _dial(
        self, host: str, port: int, connected: Callable[[RouteIO], LeafLink], failed: Callable[[], None]
    ) -> None:
        loop = asyncio.get_running_loop()
        try:
            await asyncio.wait_for(
                loop.create_connection(lambda: RouteConnection(self._broker, connected), host, port),  # type: ignore[arg-type]
                ROUTE_DIAL_TIMEOUT,
            )
        except (TimeoutError, OSError):
            if self._leafs.running:
                failed()

    async def close(self) -> None:
        self._leafs.stop()
        for task in list(self._dials):
            task.cancel()
        if self._listener is not None:
            self._listener.close()
            await self._listener.wait_closed()
            self._listener = None
