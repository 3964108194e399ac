"""The server without sockets: identity, INFO, authentication, clients, routing.

:class:`Broker` is what a connection talks to.  It owns the
:class:`~fakejs.core.router.Router`, the registry of client sessions and the
clock, and it builds the INFO documents nats-server would send.  The
socket layer (:mod:`fakejs.server.server`) only moves bytes between sockets and
:class:`~fakejs.core.session.ClientSession` objects.
"""

from __future__ import annotations

import hmac
import platform
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from fakejs._version import __version__
from fakejs.core.clock import Clock
from fakejs.core.hooks import Hooks, NoHooks
from fakejs.core.log import get_logger
from fakejs.core.options import API_LEVEL, NATS_VERSION, PROTO, ServerOptions
from fakejs.core.router import Router
from fakejs.gocompat import ids
from fakejs.monitoring.connz import ConnRecord

if TYPE_CHECKING:
    from fakejs.core.router import Subscription
    from fakejs.core.session import ClientSession

# How many closed connections /connz?state=closed remembers (nats-server's default).
MAX_CLOSED_CLIENTS = 10000


class Stats:
    """Message and byte counters, as /varz reports them."""

    __slots__ = ("in_bytes", "in_msgs", "out_bytes", "out_msgs", "slow_consumers")

    def __init__(self) -> None:
        self.in_msgs = 0
        self.out_msgs = 0
        self.in_bytes = 0
        self.out_bytes = 0
        self.slow_consumers = 0


class Broker:
    def __init__(self, options: ServerOptions, clock: Clock, hooks: Hooks | None = None) -> None:
        check_options(options)
        self.options = options
        self.clock = clock
        self.log = get_logger()
        # Every random choice the server makes comes from this one generator.
        self.random = ids.new_random(options.seed)
        self.server_id = ids.server_id(self.random)
        self.name = options.name or "fakejs-" + self.server_id[-8:]
        self.router = Router(self.random)
        # Hook points fire here; the test kit installs its faults (see fakejs.core.hooks).
        self.faults: Hooks = hooks if hooks is not None else NoHooks()
        self.clients: dict[int, ClientSession] = {}
        self.stats = Stats()
        self.started_ns = clock.time_ns()
        self.total_connections = 0
        self.closed_clients: deque[ConnRecord] = deque(maxlen=MAX_CLOSED_CLIENTS)
        self.port = options.port
        self.lame_duck = False
        self.jetstream_enabled = False
        self._next_cid = 0

    # -- identity ----------------------------------------------------------

    def info_fields(self, client: ClientSession | None = None, connect_info: bool = False) -> dict[str, Any]:
        """The INFO document, in nats-server's field order, for one client."""
        opts = self.options
        info: dict[str, Any] = {
            "server_id": self.server_id,
            "server_name": self.name,
            "version": NATS_VERSION,
            "proto": PROTO,
            "go": "python" + platform.python_version(),
            "host": opts.host,
            "port": self.port,
            "headers": True,
        }
        if opts.auth_required:
            info["auth_required"] = True
        info["max_payload"] = opts.max_payload
        if self.jetstream_enabled:
            info["jetstream"] = True
        if client is not None:
            info["client_id"] = client.cid
            if client.host:
                info["client_ip"] = client.host
        if self.lame_duck:
            info["ldm"] = True
        if connect_info:
            info["connect_info"] = True
            info["remote_account"] = "$G"
        info["api_lvl"] = API_LEVEL
        info["fakejs"] = __version__
        return info

    # -- clients -------------------------------------------------------------

    def next_client_id(self) -> int:
        self._next_cid += 1
        return self._next_cid

    def add_client(self, client: ClientSession) -> None:
        self.clients[client.cid] = client
        self.total_connections += 1

    def remove_client(self, client: ClientSession, subs: Iterable[Subscription] = ()) -> None:
        """Forget a closed client, keeping what /connz reports about it (with ``subs``, its last subscriptions)."""
        if self.clients.pop(client.cid, None) is not None:
            self.closed_clients.append(ConnRecord.closed(client, list(subs)))

    def authenticate(self, connect: dict[str, Any]) -> bool:
        """nats-server's single-user and token checks (token wins if both are set)."""
        opts = self.options
        if not opts.auth_required:
            return True
        if opts.token:
            return _same(opts.token, connect.get("auth_token", ""))
        if opts.user != connect.get("user", ""):
            return False
        return _same(opts.password, connect.get("pass", ""))


def _same(expected: str, given: str) -> bool:
    return hmac.compare_digest(expected.encode(), given.encode())


def check_options(options: ServerOptions) -> None:
    """Reject settings fakejs cannot honour, naming them."""
    for label, secret in (("password", options.password), ("token", options.token)):
        if secret.startswith(("$2a$", "$2b$", "$2x$", "$2y$")):
            raise ValueError(f"bcrypt-hashed {label}s are not supported by fakejs; give the plain {label}")
    if options.max_payload > options.max_pending:
        raise ValueError(
            f"max_payload ({options.max_payload}) cannot be higher than max_pending ({options.max_pending})"
        )
