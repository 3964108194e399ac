"""A running cluster following a configuration reload: its settings, its routes, its authorization.

What nats-server's clusterOption, routesOption and reloadAuthorization do
to the routes: a new name, ``advertise`` or ``no_advertise`` is carried by
the routes' next INFO (the open routes stay; the clients' ``connect_urls``
stay as they were), a new ``ping_interval`` is taken from each route's next
PING on; a route taken out of ``routes`` has every connection closed
(``Route Removed``, not dialled again) and a new one is dialled; accepted
routes whose credentials the new ``authorization`` refuses are told
``-ERR 'Authorization Violation'`` and closed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakejs.core.clientio import AUTH_VIOLATION
from fakejs.core.cluster.link import ROUTE_REMOVED
from fakejs.core.cluster_config import ROUTE_MAX_PING_INTERVAL, ClusterConfig
from fakejs.core.trace import auth_user
from fakejs.protocol.events import ERR_AUTHORIZATION

if TYPE_CHECKING:
    from fakejs.core.cluster.cluster import Cluster

__all__ = ["follow_ping_interval", "recheck_routes", "reload_routes", "reload_settings"]


def reload_settings(cluster: Cluster, new: ClusterConfig) -> bool:
    """Take the new settings (all but host, port, pool size and compression); whether the accepted routes must log
    in again."""
    config = cluster.config
    if new.name and new.name != cluster.name:
        cluster.greeting.name, cluster.greeting.dynamic_name = new.name, False
        cluster.log.info("Cluster name updated to %s", new.name)
    config.name = new.name
    credentials = (new.username, new.password)
    changed = credentials != (config.username, config.password)
    config.username, config.password, config.auth_timeout = (*credentials, new.auth_timeout)
    # Read by the next dial's retries.
    config.connect_retries, config.connect_backoff = new.connect_retries, new.connect_backoff
    # Read by the next route INFO (nats-server's routeInfo): where to reach this server, its client URLs or not.
    config.advertise, config.no_advertise = new.advertise, new.no_advertise
    config.ping_interval, config.ping_max = new.ping_interval, new.ping_max
    follow_ping_interval(cluster)
    return changed


def follow_ping_interval(cluster: Cluster) -> None:
    """The routes' ping interval and ping_max after a reload (the cluster's, else the server's): from each route's
    next PING on, as nats-server's timers read them."""
    interval = cluster.config.ping_interval or cluster.server_options.ping_interval
    cluster.ping_interval = min(interval, ROUTE_MAX_PING_INTERVAL)
    for link in cluster.links:
        link.keepalive.interval, link.keepalive.ping_max = cluster.ping_interval, cluster.config.ping_max


def recheck_routes(cluster: Cluster) -> None:
    """Accepted routes whose CONNECT the new authorization refuses: told so and closed (isRouterAuthorized)."""
    config = cluster.config
    if not config.auth_required:
        return
    for link in sorted(cluster.links, key=lambda link: link.rid):
        if link.solicited or not link.connect_received or link.closed:
            continue
        options = link.connect_options
        if options.get("user") == config.username and options.get("pass") == config.password:
            continue
        presented = auth_user(options)
        cluster.log.error("%s - authentication error%s", link, f" - {presented}" if presented else "")
        link.no_reconnect = True
        link.refuse(ERR_AUTHORIZATION, AUTH_VIOLATION)


def reload_routes(cluster: Cluster, routes: list[str]) -> None:
    """Routes taken out closed (and not dialled again), new ones dialled."""
    config = cluster.config
    removed = [url for url in config.routes if url not in routes]
    added = [url for url in routes if url not in config.routes]
    config.routes = list(routes)
    for url in removed:
        for link in [link for link in cluster.links if link.solicited and link.url == url]:
            link.no_reconnect = True
            link.close(ROUTE_REMOVED)
            cluster.log.info("Removed route %s", url)
    for url in added:
        cluster.solicit(url, explicit=True)
    for name in cluster.pinned:
        for url in added:
            cluster.solicit(url, explicit=True, account=name)
