"""One router for a component the servers of a cluster in one process share: a clustered JetStream.

A cluster of fakejs servers in one process keeps one JetStream per
account, as if its replicas agreed on every message: the streams and
consumers exist once, and every server serves them.  :class:`MountedRouter`
is that JetStream's router.  It is *mounted* on each running server's
account router (:attr:`~fakejs.core.router.Router.mounted`): a message
published on a server reaches the shared subscriptions there, once, and
never crosses a route for them.  What the JetStream publishes (replies,
deliveries, advisories) leaves through one server's router -- the server
the message being handled arrived on, else the one the cluster names
(:attr:`MountedRouter.home`) -- and reaches clients anywhere over the
cluster's routes like any other message.  Interest on an exact subject (a
push consumer's delivery subject) is the interest of clients on any
server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fakejs.core.router import Router

__all__ = ["MountedRouter"]


class MountedRouter(Router):
    """A router whose subscriptions every mounted server serves, and whose messages leave through one of them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.nodes: list[Router] = []
        # The server a message being handled arrived on (its answers leave there), while it is handled.
        self.arrival: Router | None = None
        # Where messages leave when no message is being handled (the cluster's choice: a running server).
        self.home: Callable[[], Router | None] = self.first_node
        self._watched: list[tuple[str, Callable[[], None]]] = []

    def first_node(self) -> Router | None:
        """The first node mounted (the home until the cluster chooses one), ``None`` before any."""
        return self.nodes[0] if self.nodes else None

    # -- mounting ------------------------------------------------------------------------------

    def mount(self, node: Router) -> None:
        """Serve the shared subscriptions on ``node`` (a running server's account router)."""
        if node in self.nodes:
            return
        self.nodes.append(node)
        node.mounted = self
        for source, target in self.prefix_mappings:
            node.add_prefix_mapping(source, target)
        for subject, callback in self._watched:
            node.watch_interest(subject, callback)

    def unmount(self, node: Router) -> None:
        """Stop serving them there (the server went down)."""
        if node not in self.nodes:
            return
        self.nodes.remove(node)
        node.mounted = None
        for subject, callback in self._watched:
            node.unwatch_interest(subject, callback)

    # -- messages in and out ---------------------------------------------------------------------

    def deliver_from(
        self,
        node: Router,
        subject: str,
        reply: str,
        headers: bytes | None,
        payload: bytes,
        origin: object,
        shown_as: str,
    ) -> bool:
        """A message published on ``node``: the shared subscribers get it, their answers leave through ``node``."""
        if not self.index.count:
            return False
        outer, self.arrival = self.arrival, node
        try:
            return self.deliver_here(subject, reply, headers, payload, origin, shown_as)
        finally:
            self.arrival = outer

    def publish(
        self,
        subject: str,
        reply: str,
        headers: bytes | None,
        payload: bytes,
        origin: object = None,
        shown_as: str = "",
        routes: bool = True,
    ) -> bool:
        """What the shared component publishes: out through the arrival server, or the home one."""
        node = self.arrival or self.home()
        if node is None:
            return False
        return node.publish(subject, reply, headers, payload, origin, shown_as, routes)

    # -- interest anywhere -------------------------------------------------------------------------

    def has_interest(self, subject: str) -> bool:
        return any(node.has_interest(subject) for node in self.nodes) or self.index.has_interest(subject)

    def has_exact_interest(self, subject: str, queue: str = "") -> bool:
        """A subscriber on exactly ``subject`` on any server (or a shared one)."""
        if super().has_exact_interest(subject, queue):
            return True
        return any(node.has_exact_interest(subject, queue) for node in self.nodes)

    def watch_interest(self, subject: str, callback: Callable[[], None]) -> None:
        super().watch_interest(subject, callback)
        self._watched.append((subject, callback))
        for node in self.nodes:
            node.watch_interest(subject, callback)

    def unwatch_interest(self, subject: str, callback: Callable[[], None]) -> None:
        super().unwatch_interest(subject, callback)
        if (subject, callback) in self._watched:
            self._watched.remove((subject, callback))
        for node in self.nodes:
            node.unwatch_interest(subject, callback)

    def add_prefix_mapping(self, source: str, target: str) -> None:
        super().add_prefix_mapping(source, target)
        for node in self.nodes:
            node.add_prefix_mapping(source, target)
