"""What a server's cluster port is asked to do: the ``cluster {}`` block and the route flags, as plain data.

``--cluster``/``--cluster_listen``, ``--cluster_name``, ``--routes``,
``--cluster_advertise``, ``--no_advertise``, ``--connect_retries`` and the
``cluster {}`` block of a configuration file fill one
:class:`ClusterConfig`.  Durations are seconds, defaults nats-server's.  The
route protocol itself lives in :mod:`fakejs.core.cluster`; this module holds
data only, so the options and the configuration loader can share it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

# nats-server's DEFAULT_HOST, where a route port listens when no host is given.
DEFAULT_CLUSTER_HOST = "0.0.0.0"
# nats-server's DEFAULT_ROUTE_POOL_SIZE: connections per remote server, accounts spread over them.
DEFAULT_POOL_SIZE = 3
# nats-server's AUTH_TIMEOUT, which a route's login time defaults to (without TLS).
DEFAULT_ROUTE_AUTH_TIMEOUT = 2.0
# nats-server's TLS_TIMEOUT, which /varz shows for the route port even without TLS.
ROUTE_TLS_TIMEOUT = 2.0
# nats-server's DEFAULT_ROUTE_CONNECT (between attempts) and DEFAULT_ROUTE_CONNECT_MAX (with backoff).
ROUTE_CONNECT_DELAY = 1.0
ROUTE_CONNECT_MAX_DELAY = 30.0
# nats-server's DEFAULT_ROUTE_RECONNECT: the wait before an explicit route is dialled again.
ROUTE_RECONNECT_DELAY = 1.0
# nats-server's defaultRouteMaxPingInterval: routes ping at least this often.
ROUTE_MAX_PING_INTERVAL = 30.0


@dataclass
class ClusterConfig:
    """One server's cluster settings: where it listens for routes, whom it dials, how it logs them in.

    ``name`` empty: nats-server's dynamic cluster name (a generated one,
    given up for a remote's configured or greater name).  ``port`` 0 asks
    the OS for a free port (nats-server's -1).  ``routes`` are the URLs as
    given (``nats-route://user:pass@host:port``), dialled for ever;
    servers learned through gossip are dialled ``connect_retries`` more
    times.  ``pool_size`` < 1 turns route pooling off (one connection per
    remote server, as servers before 2.10 had).
    """

    name: str = ""
    host: str = "0.0.0.0"
    port: int = 0
    advertise: str = ""
    no_advertise: bool = False
    routes: list[str] = field(default_factory=list)
    username: str = ""
    password: str = ""
    auth_timeout: float = DEFAULT_ROUTE_AUTH_TIMEOUT
    connect_retries: int = 0
    connect_backoff: bool = False
    pool_size: int = DEFAULT_POOL_SIZE
    # 0: the server's ping_interval / ping_max (a route's interval is capped at 30 s).
    ping_interval: float = 0.0
    ping_max: int = 0
    # "accept" (nats-server's default), "off" or "disabled": routes are never compressed by fakejs.
    compression: str = "accept"
    # nats-server's pinned accounts (``accounts``): each has a route of its own to every server (with ``$SYS``).
    accounts: list[str] = field(default_factory=list)

    @property
    def auth_required(self) -> bool:
        """Whether remote servers must log in with the block's user and password."""
        return bool(self.username)


@dataclass
class FileCluster:
    """What a file's ``cluster {}`` asked for: the settings (host "" when not given) and the port as written."""

    config: ClusterConfig = field(default_factory=lambda: ClusterConfig(host=""))
    port: int = 0


def settled(config: ClusterConfig, port: int) -> ClusterConfig | None:
    """The cluster a server starts with: None without a route port, else nats-server's defaults filled in."""
    if not port:
        return None
    return replace(
        config,
        routes=list(config.routes),
        host=config.host or DEFAULT_CLUSTER_HOST,
        port=max(port, 0),
        auth_timeout=config.auth_timeout or DEFAULT_ROUTE_AUTH_TIMEOUT,
        pool_size=config.pool_size or DEFAULT_POOL_SIZE,
    )
