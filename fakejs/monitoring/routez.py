"""``/routez``: the route connections to the other servers of the cluster, as nats-server shows them.

nats-server lists every registered route connection (``RouteInfo``): each
pool connection to each server on its own, then the routes dedicated to
one account (which carry ``account``).  ``num_routes`` counts them all.
``subs=1`` adds each route's subscription subjects
(``subscriptions_list``), ``subs=detail`` the subscriptions themselves
(``subscriptions_list_detail``, whose ``sid`` is the ``RS+`` arguments
without the queue weight, after ``R ``); a route without subscriptions
has neither.  Times are RFC 3339, ``uptime``/``idle`` nats-server's
whole-second durations and ``rtt`` Go's duration text (``0s`` before the
first PONG).  A server without a cluster answers ``num_routes`` 0 and an
empty list.  fakejs never compresses routes: ``compression`` is ``off``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from fakejs.core.router import Subscription
from fakejs.gocompat.gotime import NS, format_duration, rfc3339
from fakejs.monitoring.query import BadRequest, Query, go_uptime
from fakejs.monitoring.records import rtt_ns, sub_detail
from fakejs.monitoring.source import MonitoredServer

__all__ = ["RoutedLink", "RoutezCluster", "route_info", "routez", "routez_document"]

# What nats-server reports for a route it does not compress (fakejs compresses none).
COMPRESSION_OFF = "off"


class RouteAddress(Protocol):
    """A route's connection, for the remote address ``/routez`` reports (``ip``, ``port``)."""

    @property
    def remote_address(self) -> tuple[str, int]: ...


class RouteRTT(Protocol):
    """A route's keepalive, for the round-trip time ``/routez`` reports (``rtt``)."""

    rtt: float


class RoutedLink(Protocol):
    """One route connection as ``/routez`` reads it (:class:`~fakejs.core.cluster.link.RouteLink`)."""

    rid: int
    remote_id: str
    remote_name: str
    solicited: bool
    explicit: bool
    started: float
    last_in: float
    in_msgs: int
    out_msgs: int
    in_bytes: int
    out_bytes: int

    @property
    def io(self) -> RouteAddress: ...

    @property
    def keepalive(self) -> RouteRTT: ...

    @property
    def account(self) -> str: ...

    @property
    def pending_size(self) -> int: ...


class RoutezCluster(Protocol):
    """The cluster as ``/routez`` reads it (:class:`~fakejs.core.cluster.cluster.Cluster`)."""

    def route_links(self) -> Iterable[RoutedLink]: ...

    def remote_subscriptions(self, link: Any) -> Iterator[tuple[str, Subscription]]: ...


def routez(server: MonitoredServer, params: dict[str, list[str]]) -> tuple[int, Any]:
    """The ``/routez`` endpoint: options from the query, 400 with Go's text for a bad ``subs``."""
    try:
        subs = _decode_subs(Query(params))
    except BadRequest as bad:
        return 400, str(bad)
    return 200, routez_document(server, subs)


def _decode_subs(query: Query) -> str:
    """``subs``: ``detail``, or a Go boolean (``1``/``true``... for the subject list)."""
    if query.text("subs").lower() == "detail":
        return "detail"
    return "list" if query.bool("subs") else ""


def routez_document(server: MonitoredServer, subs: str = "") -> dict[str, Any]:
    """nats-server's ``Routez``; ``subs`` is ``""``, ``"list"`` or ``"detail"``."""
    broker = server.broker
    clock = broker.clock
    now_ns = clock.time_ns()
    cluster = broker.cluster
    routes: list[dict[str, Any]] = []
    if cluster is not None:
        mono_now = clock.monotonic()
        routes = [route_info(link, cluster, now_ns, mono_now, subs) for link in cluster.route_links()]
    return {
        "server_id": broker.server_id,
        "server_name": broker.name,
        "now": rfc3339(now_ns),
        "num_routes": len(routes),
        "routes": routes,
    }


def route_info(link: RoutedLink, cluster: RoutezCluster, now_ns: int, mono_now: float, subs: str) -> dict[str, Any]:
    """One ``RouteInfo``; ``now_ns``/``mono_now`` are the same instant on the wall and monotonic clocks."""
    start_ns = now_ns - int((mono_now - link.started) * NS)
    last_ns = now_ns - int((mono_now - link.last_in) * NS)
    host, port = link.io.remote_address
    remote = list(cluster.remote_subscriptions(link))
    doc: dict[str, Any] = {
        "rid": link.rid,
        "remote_id": link.remote_id,
        "remote_name": link.remote_name,
        "did_solicit": link.solicited,
        "is_configured": link.explicit,
        "ip": host,
        "port": port,
        "start": rfc3339(start_ns),
        "last_activity": rfc3339(last_ns),
        "rtt": format_duration(rtt_ns(link.keepalive.rtt)),
        "uptime": go_uptime(now_ns - start_ns),
        "idle": go_uptime(now_ns - last_ns),
        "pending_size": link.pending_size,
        "in_msgs": link.in_msgs,
        "out_msgs": link.out_msgs,
        "in_bytes": link.in_bytes,
        "out_bytes": link.out_bytes,
        "subscriptions": len(remote),
    }
    if remote and subs == "detail":
        doc["subscriptions_list_detail"] = [_route_sub_detail(link, name, sub) for name, sub in remote]
    elif remote and subs == "list":
        doc["subscriptions_list"] = [sub.subject for _, sub in remote]
    if link.account:
        doc["account"] = link.account
    doc["compression"] = COMPRESSION_OFF
    return doc


def _route_sub_detail(link: RoutedLink, account: str, sub: Subscription) -> dict[str, Any]:
    """A route's subscription as nats-server's ``SubDetail``: ``sid`` is ``R [account ]subject[ queue]``."""
    doc = sub_detail(sub, account=False)
    words = ["R"] if link.account else ["R", account]
    words.append(sub.subject)
    if sub.queue:
        words.append(sub.queue)
    doc["sid"] = " ".join(words)
    doc["cid"] = link.rid
    return doc
