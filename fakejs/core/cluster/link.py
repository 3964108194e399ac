"""One route connection to another server of the cluster, without the socket.

A :class:`RouteLink` parses what the remote server sends
(:mod:`fakejs.protocol.route`) and acts on it through the server's
:class:`~fakejs.core.cluster.cluster.Cluster`:

* the handshake, as nats-server's: the server that dialled sends
  ``CONNECT`` (and, when routes are pooled, its ``INFO`` only after the
  remote's, naming the pool slot it takes; a route dedicated to one
  account names it in its ``INFO``, sent at once); the server that accepted sends
  ``INFO`` at once and waits for ``CONNECT`` (credentials, cluster name);
  the first ``INFO`` registers the route, later ones tell of other servers
  (gossip) or changes;
* interest (``RS+``/``RS-``, ``LS+``/``LS-``) into the account's
  :class:`~fakejs.core.cluster.interest.AccountRoutes`;
* messages (``RMSG``/``HMSG``/``LMSG``) to the account's local subscribers;
* the keepalive: PINGs every route ping interval, stale after too many.

The socket layer provides :class:`RouteIO` and feeds bytes to
:meth:`RouteLink.data_received`.
"""

from __future__ import annotations

import logging
import random
from typing import Any, Protocol

from fakejs.core.clientio import AUTH_TIMEOUT, AUTH_VIOLATION, PROTOCOL_VIOLATION, STALE_CONNECTION
from fakejs.core.clock import Clock
from fakejs.core.cluster_config import ClusterConfig
from fakejs.core.keepalive import Keepalive
from fakejs.core.linkio import ERR_AUTH_TIMEOUT, WRONG_PORT, LinkDeadline, LinkOutput, read_operations
from fakejs.core.options import ServerOptions
from fakejs.core.router import RouteOwner, Router
from fakejs.protocol import route as wire
from fakejs.protocol import writer
from fakejs.protocol.events import ERR_AUTHORIZATION, Ok, Ping, Pong, ProtocolViolation
from fakejs.protocol.route import (
    RemoteSub,
    RemoteUnsub,
    RouteConnect,
    RoutedMsg,
    RouteError,
    RouteEvent,
    RouteInfo,
    RouteParser,
)

__all__ = ["RouteHost", "RouteIO", "RouteLink"]

# nats-server's close reasons for routes (as /routez and the logs say them).
DUPLICATE_ROUTE = "Duplicate Route"
CLUSTER_NAME_CONFLICT = "Cluster Name Conflict"
DUPLICATE_SERVER_NAME = "Duplicate Server Name"
ROUTE_REMOVED = "Route Removed"
ERR_CLIENT_ON_ROUTE_PORT = "attempted to connect to route port"


class RouteIO(Protocol):
    """What the socket layer provides to a route connection."""

    def want_flush(self) -> None:
        """Arrange for :meth:`RouteLink.take_output` to be written soon."""

    def close(self) -> None:
        """Write what is pending, then close."""

    @property
    def remote_address(self) -> tuple[str, int]: ...


class AccountInterest(Protocol):
    """One account's remote interest (:class:`~fakejs.core.cluster.interest.AccountRoutes`)."""

    def remote_sub(self, route: RouteOwner, subject: str, queue: str, weight: int, origin: str = "") -> None: ...

    def remote_unsub(self, route: RouteOwner, subject: str, queue: str, origin: str = "") -> None: ...


class RouteHost(Protocol):
    """What a route connection needs from the server's :class:`~fakejs.core.cluster.cluster.Cluster`."""

    config: ClusterConfig
    server_options: ServerOptions
    clock: Clock
    rng: random.Random
    log: logging.Logger
    pooled: bool
    ping_interval: float

    def route_info(self, nonce: bool = False, pool_idx: int = 0, account: str = "") -> dict[str, Any]: ...

    def connect_fields(self, url: str) -> dict[str, Any]: ...

    def check_login(self, options: dict[str, Any]) -> tuple[str, str] | None: ...

    def check_connect(self, options: dict[str, Any]) -> tuple[str, str] | None: ...

    def route_info_first(self, link: RouteLink, info: dict[str, Any]) -> None: ...

    def route_info_update(self, link: RouteLink, info: dict[str, Any]) -> None: ...

    def route_closed(self, link: RouteLink) -> None: ...

    def dial_next_in_pool(self, link: RouteLink) -> None: ...

    def account_routes(self, account: str) -> AccountInterest | None: ...

    def account_router(self, account: str) -> Router | None: ...

    def trace_routed(self, link: RouteLink, event: RoutedMsg) -> bool: ...


class RouteLink:
    """One route connection: handshake state, the remote's identity, its pool slot, traffic counters."""

    # a request sent over it carries its requester's info (fakejs.core.request_info)
    carries_request_info = True

    def __init__(
        self, cluster: RouteHost, io: RouteIO, rid: int, solicited: bool, url: str = "", explicit: bool = False
    ):
        self.cluster = cluster
        self.io = io
        self.rid = rid
        self.solicited = solicited
        self.url = url  # the URL dialled (solicited routes): what a reconnect dials again
        self.explicit = explicit  # configured (``routes``) rather than learned through gossip
        self.parser = RouteParser()
        self.remote_id = ""
        self.remote_name = ""
        self.pool_idx = -1
        self.no_pool = False
        self.registered = False
        self.connect_received = False
        self.connect_options: dict[str, Any] = {}
        self.info_received = False
        self.closed = False
        self.close_reason = ""
        self.output = LinkOutput(io)
        self.in_msgs = self.out_msgs = self.in_bytes = self.out_bytes = 0
        self.started = cluster.clock.monotonic()
        self.last_in = self.started
        # Set once registered when the pool still has free slots: dial the next after the first PONG.
        self.next_in_pool = False
        # How a closed route is dialled again: never (a duplicate, a route to this server), or also
        # when it was accepted (``retry``: it replaced a dialled duplicate).
        self.no_reconnect = False
        self.retry = False
        # The gossip mode the INFO that made this server dial said (see Cluster._gossip).
        self.gossip_mode = 0
        self.keepalive = Keepalive(self, cluster.clock, cluster.server_options, cluster.rng)
        self.keepalive.interval = cluster.ping_interval
        self.keepalive.ping_max = cluster.config.ping_max  # a route's own, when the cluster block sets one
        self._login_deadline = LinkDeadline(cluster.clock)

    def __repr__(self) -> str:
        host, port = self.io.remote_address
        return f"{host}:{port} - rid:{self.rid}"

    # What nats-server's lines call this kind of connection ("Router Ping Timer").
    kind = "Router"

    @property
    def websocket(self) -> bool:
        return False

    # -- starting ------------------------------------------------------------------

    def start(self) -> None:
        """The socket is open: CONNECT (if this server dialled) and INFO (unless it waits for the remote's)."""
        cluster = self.cluster
        if self.solicited:
            self.send(wire.connect(cluster.connect_fields(self.url)))
            if not cluster.pooled or self.account:  # a pool connection says its slot once the remote answered
                self.send(wire.info(cluster.route_info(nonce=True, account=self.account)))
        else:
            self.send(wire.info(cluster.route_info(nonce=True)))
            if cluster.config.auth_required:
                self._login_deadline.arm(cluster.config.auth_timeout, self._auth_timeout)
        self.keepalive.start()

    # -- output --------------------------------------------------------------------

    def send(self, frame: bytes) -> None:
        if not self.closed:
            self.output.add(frame)

    @property
    def pending_size(self) -> int:
        """Bytes waiting to be written (``/routez``'s ``pending_size``)."""
        return self.output.size

    def take_output(self) -> bytes:
        return self.output.take()

    def forward(
        self, account: str, subject: str, reply: str, queues: list[str], headers: bytes | None, payload: bytes
    ) -> None:
        """One message for the remote server's subscribers (the router's :class:`RouteOwner`)."""
        self.out_msgs += 1
        self.out_bytes += len(payload) + (len(headers) if headers is not None else 0)
        named = "" if self.account else account
        self.send(wire.routed_msg(named, subject, reply, queues, headers, payload))

    def announce(self, account: str, subject: str, queue: str, weight: int, origin: str = "") -> None:
        """``RS+``/``RS-`` for local interest (see :meth:`AccountRoutes.local_changed`); ``LS+``/``LS-``
        for a leaf connection's of the cluster ``origin``."""
        named = "" if self.account else account
        if weight < 0 or (queue and weight == 0):
            self.send(wire.leaf_unsub(origin, named, subject, queue) if origin else wire.unsub(named, subject, queue))
        elif origin:
            self.send(wire.leaf_sub(origin, named, subject, queue, weight))
        else:
            self.send(wire.sub(named, subject, queue, weight))

    @property
    def account(self) -> str:
        """The one account a dedicated route carries (nats-server's ``route_account``), or ""."""
        return self.parser.account.decode()

    @account.setter
    def account(self, name: str) -> None:
        self.parser.account = name.encode()

    # -- closing -------------------------------------------------------------------

    def close(self, reason: str) -> None:
        """Close the route (pending output is written first) and forget everything it carried."""
        if self.closed:
            return
        self.closed = True
        self.close_reason = reason
        self.keepalive.cancel()
        self._login_deadline.clear()
        self.cluster.route_closed(self)
        self.io.close()

    def refuse(self, text: str, reason: str) -> None:
        self.output.add_last(writer.err(text))
        self.close(reason)

    def debug(self, text: str) -> None:
        self.cluster.log.debug("%s - %s", self, text)

    def stale(self) -> None:
        self.cluster.log.debug("%s - Stale Route Connection - Closing", self)
        self.refuse("Stale Connection", STALE_CONNECTION)

    def _auth_timeout(self) -> None:
        if not self.connect_received and not self.closed:
            self.refuse(ERR_AUTH_TIMEOUT, AUTH_TIMEOUT)

    def connection_lost(self) -> None:
        """The socket went away under us."""
        self.close(self.close_reason or "Client Closed")

    # -- input ---------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        self.last_in = self.cluster.clock.monotonic()
        violation = read_operations(self, self.parser, data, self._handle)
        if violation is not None:
            self.cluster.log.error("%s - Route parser ERROR: %s", self, violation.reason)
            self.close(PROTOCOL_VIOLATION)

    def _handle(self, event: RouteEvent) -> None:
        kind = type(event)
        if kind is not RouteConnect and self._before_login():
            return
        if kind is RoutedMsg:
            assert isinstance(event, RoutedMsg)
            self._on_msg(event)
        elif kind is RemoteSub:
            assert isinstance(event, RemoteSub)
            self._on_sub(event)
        elif kind is RemoteUnsub:
            assert isinstance(event, RemoteUnsub)
            self._on_unsub(event)
        elif kind is Ping:
            self.send(writer.PONG)
        elif kind is Pong:
            self._on_pong()
        elif kind is RouteConnect:
            assert isinstance(event, RouteConnect)
            self._on_connect(event.options)
        elif kind is RouteInfo:
            assert isinstance(event, RouteInfo)
            self._on_info(event.options)
        elif kind is RouteError:
            assert isinstance(event, RouteError)
            self.cluster.log.error("%s - Received error from route: %s", self, event.text)
        elif kind is not Ok:
            raise ProtocolViolation(None, f"unexpected {kind.__name__}")

    def _on_pong(self) -> None:
        self.keepalive.pong()
        if self.next_in_pool:
            self.next_in_pool = False
            self.cluster.dial_next_in_pool(self)

    def _on_connect(self, options: dict[str, Any]) -> None:
        if self.solicited or self.connect_received:
            return
        self._login_deadline.clear()
        # nats-server logs the route in first, then tells a client it dialled the wrong port.
        problem = self.cluster.check_login(options)
        if problem is None and "lang" in options:
            problem = (ERR_CLIENT_ON_ROUTE_PORT, WRONG_PORT)
        problem = problem or self.cluster.check_connect(options)
        if problem is not None:
            text, reason = problem
            self.refuse(text, reason)
            return
        self.connect_received = True
        self.connect_options = options  # checked again when a reload changes the cluster's authorization
        self.remote_id = str(options.get("name") or "")

    def _before_login(self) -> bool:
        """An accepted route that must log in sent something before CONNECT: refused, as nats-server does."""
        if self.solicited or self.connect_received or not self.cluster.config.auth_required:
            return False
        self.refuse(ERR_AUTHORIZATION, AUTH_VIOLATION)
        return True

    def _on_info(self, info: dict[str, Any]) -> None:
        if not self.solicited and not self.connect_received:
            # nats-server reads nothing but CONNECT from a route that has not logged in.
            self.refuse(ERR_AUTHORIZATION, AUTH_VIOLATION)
            return
        if self.info_received:
            self.cluster.route_info_update(self, info)
            return
        self.info_received = True
        self.cluster.route_info_first(self, info)

    def _on_sub(self, event: RemoteSub) -> None:
        routes = self.cluster.account_routes(event.account)
        if routes is None:
            self.cluster.log.error("%s - Unknown account %r for remote subject %r", self, event.account, event.subject)
            return
        try:
            routes.remote_sub(self, event.subject, event.queue, event.weight, event.origin)
        except ValueError:
            self.cluster.log.error("%s - Could not insert subscription %r", self, event.subject)

    def _on_unsub(self, event: RemoteUnsub) -> None:
        routes = self.cluster.account_routes(event.account)
        if routes is not None:
            routes.remote_unsub(self, event.subject, event.queue, event.origin)

    def _on_msg(self, event: RoutedMsg) -> None:
        self.in_msgs += 1
        self.in_bytes += len(event.payload) + (len(event.headers) if event.headers is not None else 0)
        router = self.cluster.account_router(event.account)
        if router is None:
            self.cluster.log.debug("%s - Unknown account %r for routed message", self, event.account)
            return
        if event.headers is not None and self.cluster.trace_routed(self, event):
            return
        if event.headers is not None and router.request_info is not None:  # a request with its requester's info
            headers, origin = router.request_info.received(event.subject, event.headers, self)
            router.receive_routed(event.subject, event.reply, event.queues, headers, event.payload, origin)
            return
        router.receive_routed(event.subject, event.reply, event.queues, event.headers, event.payload, self)
