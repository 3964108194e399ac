"""The server's place in a cluster: its routes, the servers behind them, and what it tells its clients.

:class:`Cluster` does what nats-server's ``route.go`` does for a server,
without sockets (the socket layer dials and accepts through
:class:`Dialer` and hands each connection a
:class:`~fakejs.core.cluster.link.RouteLink`):

* **Routes and pools.**  Every other server is a :class:`Peer` reached by
  ``pool_size`` connections (nats-server's route pooling); each account
  travels on one of them, chosen by the FNV-1a hash of its name, so both
  ends agree.  The dialling server takes the first free slot and says which
  in its (delayed) INFO; the next connection is dialled once the last one
  has answered a PING.  A server that does not pool (``pool_size`` < 1, or
  a remote without ``route_pool_size``) has one connection for everything.
* **Dedicated routes.**  With pooling, the system account and those of
  ``cluster { accounts }`` (nats-server's pinned accounts) each travel on a
  route of its own to each server: the
  dialling server opens it beside the pool, its INFO naming the account
  (``route_account``), and gossips it so that the others open theirs.  Its
  interest and messages never take a pool connection (only a server that
  does not pool carries them on its one connection).
* **Discovery.**  A server that registers a new route tells the servers it
  already knows (its INFO, gossiped); they dial it.  Configured routes are
  dialled for ever, learned ones ``connect_retries`` more times.
* **Clients.**  Each server's client URLs travel in its route INFO; the
  union (this server's first) is INFO's ``connect_urls``, and clients that
  can take it get an async INFO whenever it changes.
* **Dynamic names.**  Without a configured name the cluster's name is
  generated, and given up for a remote's configured (or greater) one.

Every timer goes through the server's clock, every random choice through
its generator.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from typing import Any, Protocol
from urllib.parse import urlsplit

from fakejs.core.accounts import Account, Accounts
from fakejs.core.clientio import AUTH_VIOLATION, PROTOCOL_VIOLATION
from fakejs.core.clock import Clock
from fakejs.core.cluster.dialling import Dialer, Dialling
from fakejs.core.cluster.greeting import Greeting
from fakejs.core.cluster.interest import AccountRoutes, RouteTarget
from fakejs.core.cluster.link import (
    CLUSTER_NAME_CONFLICT,
    DUPLICATE_ROUTE,
    DUPLICATE_SERVER_NAME,
    ROUTE_REMOVED,
    RouteIO,
    RouteLink,
)
from fakejs.core.cluster.peers import Peer, join_host_port, pool_index
from fakejs.core.cluster_checks import is_fakejs_route, mixed_jetstream_problem, replicated_jetstream
from fakejs.core.cluster_config import ROUTE_MAX_PING_INTERVAL, ClusterConfig
from fakejs.core.log import get_logger
from fakejs.core.options import SYSTEM_ACCOUNT, ServerOptions
from fakejs.core.router import Router, Subscription
from fakejs.gocompat import ids
from fakejs.protocol import route as wire
from fakejs.protocol.events import ERR_AUTHORIZATION
from fakejs.protocol.route import RoutedMsg
from fakejs.protocol.writer import go_quote

__all__ = ["Cluster", "ClusterServer", "Dialer", "Peer"]

# nats-server's close reason for a route dedicated to an account the server does not have.
MISSING = "Missing Account"

# nats-server's gossip modes, exchanged between servers in INFO.
GOSSIP_DEFAULT, GOSSIP_DISABLED, GOSSIP_OVERRIDE = 0, 1, 2


class ClusterServer(Protocol):
    """The server whose routes these are (:class:`~fakejs.core.broker.Broker`), told what the routes bring."""

    def send_async_info(self) -> None:
        """The cluster's client URLs (``connect_urls``) changed: clients that take them get an async INFO."""

    def trace_routed(
        self, link: RouteLink, account: Account, message: tuple[str, str, tuple[str, ...], bytes | None, bytes]
    ) -> bool:
        """Trace a routed message whose headers ask for it; whether it was handled (else it is delivered as usual)."""

    def refuse_to_run(self, problem: str) -> None:
        """Stop serving: the routes found a cluster this server cannot serve (logged as fatal)."""


class Cluster:
    """One server's routes to the others (see the module docstring)."""

    def __init__(
        self,
        config: ClusterConfig,
        options: ServerOptions,
        identity: tuple[str, str],
        accounts: Accounts,
        clock: Clock,
        rng: random.Random,
        server: ClusterServer,
    ) -> None:
        self.config = config
        self.server_options = options
        self.server_id, self.server_name = identity
        self.accounts = accounts
        self.clock = clock
        self.rng = rng
        self.log = get_logger()
        self.greeting = Greeting(config, identity, ids.nuid(rng), options.max_payload, rng)
        self.pooled = self.greeting.pooled
        self.pool_size = self.greeting.pool_size
        self.ping_interval = min(config.ping_interval or options.ping_interval, ROUTE_MAX_PING_INTERVAL)
        self.peers: dict[str, Peer] = {}
        self.running = False
        self.server = server
        self._account_routes: dict[str, AccountRoutes] = {}
        # nats-server's pinned accounts: each has a route of its own to every server that pools.
        self.pinned = self._pinned_accounts(config, options, accounts) if self.pooled else ()
        # The routes dedicated to a pinned account: account -> server id -> link.
        self._dedicated: dict[str, dict[str, RouteLink]] = {name: {} for name in self.pinned}
        self._next_rid = 0
        self.dialling = Dialling(config, clock, rng, self.log, self._dialled)
        self.links: set[RouteLink] = set()
        self._urls_learned = False  # another server brought client URLs at least once
        # Servers (by name) this one may not talk to: a partition a test asked for (fakejs only).
        self.blocked: set[str] = set()

    @staticmethod
    def _pinned_accounts(config: ClusterConfig, options: ServerOptions, accounts: Accounts) -> tuple[str, ...]:
        """``cluster { accounts }``, then the system account (when the server has one)."""
        system = options.system_account or SYSTEM_ACCOUNT
        pinned = list(dict.fromkeys(config.accounts))
        if system not in pinned and accounts.get(system) is not None:
            pinned.append(system)
        return tuple(pinned)

    # -- identity (kept by the greeting: it travels in INFO and CONNECT) ---------------------------

    @property
    def name(self) -> str:
        """The cluster's name: the configured one, or one generated (and given up for a remote's)."""
        return self.greeting.name

    @property
    def dynamic_name(self) -> bool:
        return self.greeting.dynamic_name

    @property
    def port(self) -> int:
        return self.greeting.port

    @property
    def own_client_urls(self) -> list[str]:
        return self.greeting.own_client_urls

    # -- starting and stopping -------------------------------------------------------------

    def start(self, port: int, client_urls: list[str], dialer: Dialer) -> None:
        """The route port listens on ``port``: join every account, dial the configured routes."""
        self.greeting.port = port
        self.greeting.own_client_urls = [] if self.config.no_advertise else list(client_urls)
        self.greeting.listen_urls = list(client_urls)
        self.dialling.dialer = dialer
        self.running = self.dialling.running = True
        for account in self.accounts:
            self._join(account.name, account.router)
        for url in self.config.routes:
            self.solicit(url, explicit=True)
        for name in self.pinned:  # nats-server's ``solicitRoutes``: then each pinned account's own route
            for url in self.config.routes:
                self.solicit(url, explicit=True, account=name)

    def _join(self, name: str, router: Router) -> None:
        routes = AccountRoutes(name, self)
        for sub in router.local_subscriptions():
            routes.local_changed_quietly(sub)
        router.remote = routes
        routes.on_change = router.notify_interest
        self._account_routes[name] = routes

    def block(self, names: Iterable[str]) -> None:
        """Cut this server off from the servers named (a network partition, fakejs only).

        Their routes close and every new one is refused once it says who
        it is; configured routes keep being dialled, as across a real
        partition, and come back after :meth:`unblock`.
        """
        self.blocked.update(names)
        for link in list(self.links):
            if link.remote_name in self.blocked:
                link.close(ROUTE_REMOVED)

    def unblock(self) -> None:
        """Talk to every server again (the partition healed)."""
        self.blocked.clear()

    def lame_duck(self) -> None:
        """This server enters lame duck mode: the others drop its client URLs (an INFO with ``ldm``)."""
        frame = wire.info({**self.route_info(), "ldm": True})
        for peer in self.peers.values():
            link = next(peer.live_links(), None)
            if link is not None:
                link.send(frame)

    def stop(self) -> None:
        self.running = self.dialling.running = False
        for link in list(self.links):
            link.close("Server Shutdown")

    # -- what accounts and links ask ---------------------------------------------------------

    def routes_for(self, account: str) -> Iterable[RouteTarget]:
        """The connection to each other server that carries ``account`` (a pinned one: its dedicated routes)."""
        dedicated = self._dedicated.get(account)
        for peer in self.peers.values():
            if dedicated is None or peer.no_pool:
                link = peer.link_for(account)
                if link is not None:
                    yield link
        if dedicated is not None:
            yield from dedicated.values()

    def dedicated_missing(self, server_id: str) -> list[str]:
        """The pinned accounts without their own route to the server ``server_id`` (yet)."""
        return [name for name in self.pinned if server_id not in self._dedicated[name]]

    def account_routes(self, account: str) -> AccountRoutes | None:
        return self._account_routes.get(account)

    def account_router(self, account: str) -> Router | None:
        found = self.accounts.get(account)
        return found.router if found is not None else None

    def trace_routed(self, link: RouteLink, event: RoutedMsg) -> bool:
        """Trace a routed message whose headers ask for it (see :mod:`fakejs.core.msgtrace_route`)."""
        account = self.accounts.get(event.account)
        if account is None:
            return False
        message = (event.subject, event.reply, event.queues, event.headers, event.payload)
        return self.server.trace_routed(link, account, message)

    def client_urls(self) -> list[str]:
        """INFO's ``connect_urls``: this server's, then every other server's (each once).

        As on nats-server, the list appears only once another server
        brought URLs, and keeps this server's own after they all left.
        """
        if not self._urls_learned:
            return []
        urls = list(self.own_client_urls)
        for peer in self.peers.values():
            urls.extend(url for url in peer.client_urls if url not in urls)
        return urls

    def next_rid(self) -> int:
        self._next_rid += 1
        return self._next_rid

    # -- INFO and CONNECT ----------------------------------------------------------------------

    def route_info(self, nonce: bool = False, pool_idx: int = 0, account: str = "") -> dict[str, Any]:
        """This server's route INFO (see :class:`~fakejs.core.cluster.greeting.Greeting`)."""
        return self.greeting.route_info(nonce, pool_idx, account)

    def connect_fields(self, url: str) -> dict[str, Any]:
        return self.greeting.connect_fields(url)

    def check_login(self, options: dict[str, Any]) -> tuple[str, str] | None:
        """An accepted route's credentials (the block's ``authorization``): ``(error, close reason)`` when wrong."""
        config = self.config
        if config.auth_required and (options.get("user") != config.username or options.get("pass") != config.password):
            self.log.error("authentication error")
            return ERR_AUTHORIZATION, AUTH_VIOLATION
        return None

    def check_connect(self, options: dict[str, Any]) -> tuple[str, str] | None:
        """An accepted route's CONNECT once logged in: ``(error text, close reason)`` when refused."""
        if options.get("gateway"):
            return f"Rejecting connection from gateway {go_quote(str(options['gateway']))} on the Route port", (
                "Wrong Gateway"
            )
        theirs = str(options.get("cluster") or "")
        if theirs != self.name:
            if self.dynamic_name and (not options.get("cluster_dynamic") or self.name < theirs):
                self._adopt_name(
                    theirs, keep=str(options.get("name") or ""), configured=not options.get("cluster_dynamic")
                )
                return None
            text = f"Rejecting connection, cluster name {go_quote(theirs)} does not match {go_quote(self.name)}"
            self.log.error(text)
            return text, CLUSTER_NAME_CONFLICT
        return None

    def _adopt_name(self, name: str, keep: str, configured: bool) -> None:
        self.greeting.name = name
        if configured:
            self.greeting.dynamic_name = False
        for link in list(self.links):
            if link.remote_id != keep and link.registered:
                link.close(CLUSTER_NAME_CONFLICT)

    # -- registering routes ------------------------------------------------------------------

    def route_info_first(self, link: RouteLink, info: dict[str, Any]) -> None:
        """The remote's first INFO (nats-server's ``processRouteInfo``): checks, then registration."""
        remote_id = str(info.get("server_id") or "")
        if remote_id == self.server_id:
            link.remote_id = remote_id
            if link.url:
                self.dialling.is_self(link.url)
            link.no_reconnect = True
            link.close(DUPLICATE_ROUTE)
            return
        theirs = str(info.get("cluster") or "")
        if theirs and theirs != self.name:
            if self.dynamic_name and (not info.get("cluster_dynamic") or self.name < theirs):
                self._adopt_name(theirs, keep=remote_id, configured=not info.get("cluster_dynamic"))
            else:
                link.close(CLUSTER_NAME_CONFLICT)
                return
        name = str(info.get("server_name") or "")
        if name in self.blocked:
            link.close(ROUTE_REMOVED)
            return
        if not link.solicited and name == self.server_name:
            self.log.error("%s - Remote server has a duplicate name: %s", link, go_quote(name))
            link.close(DUPLICATE_SERVER_NAME)
            return
        link.remote_id, link.remote_name = remote_id, name
        if not info.get("ip"):
            host = link.io.remote_address[0]
            info["ip"] = f"nats-route://{join_host_port(host, int(info.get('port') or 0))}/"
        if not link.url:
            link.url = f"nats-route://{join_host_port(str(info.get('host') or ''), int(info.get('port') or 0))}/"
        account = link.account if link.solicited else str(info.get("route_account") or "")
        added = self._add_dedicated(link, account, info) if account else self._add_route(link, info)
        if not added:
            link.close(DUPLICATE_ROUTE)
        elif replicated_jetstream(self.server_options) is not None and not is_fakejs_route(info):
            self.server.refuse_to_run(mixed_jetstream_problem(name, info))

    def _add_dedicated(self, link: RouteLink, account: str, info: dict[str, Any]) -> bool:
        """A route dedicated to a pinned ``account``: its interest and messages travel there alone."""
        if int(info.get("route_pool_size") or 0) <= 0 or not self.pooled:
            link.no_reconnect = True
            text = f"Not possible to have a dedicated route for account {go_quote(account)} between those servers"
            return self._protocol_error(link, text)
        routes = self._account_routes.get(account)
        if routes is None:
            return self._protocol_error(link, f"Unable to lookup account {go_quote(account)}: account missing", MISSING)
        by_server = self._dedicated.get(account)
        if by_server is None:
            return self._protocol_error(link, f"No route for account {go_quote(account)}")
        existing = by_server.get(link.remote_id)
        if existing is not None:
            self._keep_existing(existing, link)
            return False
        link.account, link.registered = account, True
        by_server[link.remote_id] = link
        link.keepalive.connected(self.clock.monotonic() - link.started)
        if len(by_server) > 1:
            self._gossip(link, {**info, "route_account": account})
        for subject, queue, weight, origin in routes.announcements():
            link.announce(account, subject, queue, weight, origin)
        self.log.debug("%s - Registering remote route %s for account %s", link, go_quote(link.remote_id), account)
        return True

    def _add_route(self, link: RouteLink, info: dict[str, Any]) -> bool:
        """nats-server's ``addRoute``: take a pool slot (or find the route a duplicate)."""
        theirs = int(info.get("route_pool_size") or 0)
        pool = theirs > 0 and self.pooled
        size = max(self.pool_size, theirs) if pool else 1
        asked = int(info.get("route_pool_idx") or 0)
        if pool and link.solicited and asked:
            return self._protocol_error(link, f"Route pool index should not be set but is set to {asked}")
        if pool and not link.solicited and not 0 <= asked < size:
            return self._protocol_error(link, f"Invalid route pool index: {asked} - pool size is {theirs}")
        peer = self.peers.get(link.remote_id)
        first = peer is None
        if peer is None:
            peer = Peer(link.remote_id, link.remote_name, [None] * size, not pool)
            self.peers[link.remote_id] = peer
            slot = asked if pool else 0
        elif not pool:
            self._keep_existing(peer.links[0], link)
            return False
        else:
            peer.links.extend([None] * (size - len(peer.links)))
            slot = asked if not link.solicited else next((i for i, s in enumerate(peer.links) if s is None), -1)
            if slot < 0 or peer.links[slot] is not None:
                self._keep_existing(peer.links[slot] if slot >= 0 else None, link)
                return False
        peer.links[slot] = link
        link.pool_idx, link.no_pool, link.registered = slot, not pool, True
        if link.solicited and self.pooled:
            link.send(wire.info(self.route_info(nonce=True, pool_idx=slot)))
        if first:
            peer.client_urls = [str(url) for url in info.get("connect_urls") or ()]
            self._gossip(link, info)
            if peer.client_urls and not self.config.no_advertise:
                self._urls_learned = True
                self.server.send_async_info()
        self._send_interest(link, peer)
        if pool and link.solicited and not peer.full:
            link.next_in_pool = True
            link.keepalive.rtt_start = self.clock.monotonic()
            link.send(b"PING\r\n")
        link.keepalive.connected(self.clock.monotonic() - link.started)  # the first PING comes soon
        self.log.debug("%s - Registering remote route %s", link, go_quote(link.remote_id))
        return True

    def _protocol_error(self, link: RouteLink, text: str, reason: str = PROTOCOL_VIOLATION) -> bool:
        link.refuse(text, reason)
        return True  # the link is already closed: nothing more to do

    def _keep_existing(self, existing: RouteLink | None, duplicate: RouteLink) -> None:
        """nats-server's ``handleDuplicateRoute``: the registered route stays, and learns the duplicate's URL."""
        duplicate.no_reconnect = True
        if existing is None:
            return
        if duplicate.solicited and not existing.solicited:
            existing.solicited, existing.url = True, duplicate.url
        if duplicate.explicit:
            existing.explicit = True
        existing.retry = True

    def _send_interest(self, link: RouteLink, peer: Peer) -> None:
        """``sendSubsToRoute``: the accounts this connection carries, every subject and queue with interest."""
        for name, routes in self._account_routes.items():
            if name in self._dedicated and not peer.no_pool:
                continue
            if peer.no_pool or pool_index(len(peer.links), name) == link.pool_idx:
                for subject, queue, weight, origin in routes.announcements():
                    link.announce(name, subject, queue, weight, origin)

    def dial_next_in_pool(self, link: RouteLink) -> None:
        """The pool's last connection answered a PING: dial the next one."""
        peer = self.peers.get(link.remote_id)
        if peer is not None and not peer.full and link.url:
            self.solicit(link.url, link.explicit, force=True)

    # -- gossip ---------------------------------------------------------------------------

    def _gossip(self, link: RouteLink, info: dict[str, Any]) -> None:
        """``forwardNewRouteInfoToKnownServers``: tell the other servers about the new one."""
        from_gossip = link.solicited and not link.explicit
        if (from_gossip and link.gossip_mode != GOSSIP_OVERRIDE) or info.get("gossip_mode") == GOSSIP_DISABLED:
            return
        forwarded = {key: value for key, value in info.items() if key != "nonce"}
        account = str(info.get("route_account") or "")
        for peer in self.peers.values():
            if peer.server_id == link.remote_id or (account and peer.no_pool):
                continue
            target = self._dedicated.get(account, {}).get(peer.server_id) or next(peer.live_links(), None)
            if target is None:
                continue
            if (not link.solicited and target.explicit) or (link.solicited and link.explicit):
                mode = GOSSIP_OVERRIDE
            elif not link.solicited:
                mode = GOSSIP_DISABLED
            else:
                mode = GOSSIP_DEFAULT
            target.send(wire.info({**forwarded, "gossip_mode": mode} if mode else forwarded))

    def route_info_update(self, link: RouteLink, info: dict[str, Any]) -> None:
        """A later INFO on a registered route: another server to dial (gossip), or the remote's news."""
        remote_id = str(info.get("server_id") or "")
        if remote_id and remote_id != link.remote_id:
            self._implicit_route(info)
            return
        peer = self.peers.get(link.remote_id)
        if peer is not None and info.get("ldm") and peer.client_urls:
            peer.client_urls = []
            if not self.config.no_advertise:
                self.server.send_async_info()

    def _implicit_route(self, info: dict[str, Any]) -> None:
        """``processImplicitRoute``: dial a server learned through gossip, unless known or configured."""
        remote_id = str(info.get("server_id") or "")
        account = str(info.get("route_account") or "")
        by_server = self._dedicated.get(account) if account else self.peers
        known = by_server is None or remote_id in by_server  # an account not pinned here: no route for it
        if remote_id == self.server_id or known or self._configured(info):
            return
        url = str(info.get("ip") or "")
        if not url:
            return
        if info.get("auth_required") and self.config.username:
            parts = urlsplit(url)
            url = f"{parts.scheme}://{self.config.username}:{self.config.password}@{parts.netloc}/"
        self.solicit(url, explicit=False, gossip_mode=int(info.get("gossip_mode") or 0), account=account)

    def _configured(self, info: dict[str, Any]) -> bool:
        port = str(info.get("port") or "")
        wanted = {f"{str(info.get('host') or '').lower()}:{port}"}
        ip = str(info.get("ip") or "")
        if ip:
            wanted.add(f"{(urlsplit(ip).hostname or '').lower()}:{port}")
        return any(
            f"{(urlsplit(url).hostname or '').lower()}:{urlsplit(url).port}" in wanted for url in self.config.routes
        )

    # -- dialling -------------------------------------------------------------------------

    def solicit(self, url: str, explicit: bool, gossip_mode: int = 0, force: bool = False, account: str = "") -> None:
        """Dial ``url`` (see :class:`~fakejs.core.cluster.dialling.Dialling`); ``account``: its dedicated route."""
        self.dialling.solicit(url, explicit, gossip_mode, force, account=account)

    def _dialled(self, io: RouteIO, url: str, explicit: bool, gossip_mode: int, account: str) -> RouteLink:
        link = RouteLink(self, io, self.next_rid(), solicited=True, url=url, explicit=explicit)
        link.gossip_mode, link.account = gossip_mode, account
        self.links.add(link)
        return link

    def accepted(self, io: RouteIO) -> RouteLink:
        """A server dialled our route port: its link (the socket layer starts it)."""
        link = RouteLink(self, io, self.next_rid(), solicited=False)
        self.links.add(link)
        return link

    def route_closed(self, link: RouteLink) -> None:
        """A route connection closed: forget what it carried; reconnect as nats-server would."""
        self.links.discard(link)
        for routes in self._account_routes.values():
            routes.drop_route(link)
        if link.account:
            by_server = self._dedicated.get(link.account, {})
            if by_server.get(link.remote_id) is link:
                del by_server[link.remote_id]
            self._maybe_reconnect(link)
            return
        peer = self.peers.get(link.remote_id)
        if peer is not None and link.pool_idx >= 0 and peer.links[link.pool_idx] is link:
            peer.links[link.pool_idx] = None
            if next(peer.live_links(), None) is None:
                del self.peers[link.remote_id]
                if peer.client_urls and not self.config.no_advertise:
                    self.server.send_async_info()
        self._maybe_reconnect(link)

    def _maybe_reconnect(self, link: RouteLink) -> None:
        if not self.running or link.no_reconnect or not link.url:
            return
        if not (link.solicited or link.retry):
            return
        if link.remote_id == self.server_id:
            return
        if link.account:
            if link.account in self._dedicated:
                self.dialling.redial(link)
            return
        peer = self.peers.get(link.remote_id)
        if peer is not None and (peer.no_pool or not self.pooled):
            return  # still connected over another connection
        self.dialling.redial(link)

    # -- monitoring -------------------------------------------------------------------------

    def route_links(self) -> Iterator[RouteLink]:
        """Every registered route connection as nats-server walks them: each server's pool, then dedicated routes."""
        for peer in self.peers.values():
            yield from peer.live_links()
        for by_server in self._dedicated.values():
            yield from by_server.values()

    def remote_subscriptions(self, link: RouteLink) -> Iterator[tuple[str, Subscription]]:
        """``(account, subscription)`` for every subscription the remote server made over ``link``."""
        for name, routes in self._account_routes.items():
            for sub in routes.remote_subscriptions(link):
                yield name, sub

    @property
    def num_routes(self) -> int:
        return sum(1 for peer in self.peers.values() for _ in peer.live_links())
