"""The route flags laid over a configuration file's cluster, as nats-server's ``overrideCluster`` does.

``--cluster``/``--cluster_listen nats://[user:pass@]host:port`` sets the
route port's host and port (``-1``: a free one) and the cluster's login,
clearing the file's when the URL has none; an empty value turns clustering
off.  ``--routes`` replaces the file's routes (comma-separated URLs, kept
as given: nats-server dials them as they are).  ``--cluster_name``,
``--cluster_advertise``, ``--no_advertise`` and ``--connect_retries`` set
their field.  Errors are Go's, as nats-server prints them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fakejs.core.cluster_config import ClusterConfig, FileCluster, settled
from fakejs.gocompat.goflag import Parsed
from fakejs.gocompat.gourl import GoURLError, parse_url, split_host_port

_INT64 = 2**63


class ClusterFlagError(ValueError):
    """A route flag nats-server refuses: ``str()`` is its text (printed after ``nats-server: ``)."""


def _sscan_int(text: str) -> int:
    """Go's ``fmt.Sscan`` into an int, for the digits ``url.Parse`` lets through as a port."""
    if not text:
        raise ClusterFlagError("EOF")
    number = int(text)
    if not -_INT64 <= number < _INT64:
        raise ClusterFlagError(f'strconv.ParseInt: parsing "{text}": value out of range')
    return number


def listen_url(config: ClusterConfig, text: str) -> int:
    """Set ``config``'s host and login from a ``--cluster`` URL; returns nats-server's port (-1: a free one)."""
    random_port = text.endswith(":-1")
    if random_port:
        text = text[:-3] + ":0"
    try:
        parsed = parse_url(text)
        host, port = split_host_port(parsed.host)
    except GoURLError as exc:
        raise ClusterFlagError(str(exc)) from None
    number = -1 if random_port else _sscan_int(port)
    config.host = host
    if parsed.username is None:
        config.username = config.password = ""
    elif parsed.password is None:
        raise ClusterFlagError("expected cluster password to be set")
    else:
        config.username, config.password = parsed.username, parsed.password
    return number


def route_urls(text: str) -> list[str]:
    """``--routes``: the comma-separated URLs, trimmed (nats-server keeps even empty ones)."""
    return [part.strip() for part in text.split(",")]


def cluster_from_flags(base: FileCluster | None, flags: Parsed) -> ClusterConfig | None:
    """The cluster a server starts with, after the flags over the file's (``base``, None without a file).

    ``ClusterFlagError`` carries nats-server's text.
    """
    values: dict[str, Any] = flags.values
    file_cluster = base or FileCluster()
    config = replace(file_cluster.config, routes=list(file_cluster.config.routes))
    port = file_cluster.port
    if flags.given("cluster"):
        port = listen_url(config, values["cluster"]) if values["cluster"] else 0
    if flags.given("routes"):
        config.routes = route_urls(values["routes"]) if values["routes"] else []
    if values["routes"] and not values["cluster"] and not file_cluster.config.host and not file_cluster.port:
        raise ClusterFlagError("solicited routes require cluster capabilities, e.g. --cluster")
    if flags.given("cluster_name"):
        config.name = values["cluster_name"]
    if flags.given("cluster_advertise"):
        config.advertise = values["cluster_advertise"]
    if flags.given("no_advertise"):
        config.no_advertise = values["no_advertise"]
    if flags.given("connect_retries"):
        config.connect_retries = values["connect_retries"]
    return settled(config, port)
