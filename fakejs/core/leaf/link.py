"""One leaf connection, without the socket: the handshake, interest and messages of nats-server's leaf protocol.

The hub (the server that accepted) sends ``INFO`` at once and waits for
``CONNECT`` (credentials checked, and the link bound to an account, by its
:class:`LeafHost`), then sends a second ``INFO`` (``connect_info``) and its
interest; the leaf (the server that dialled, bound to its remote's account)
answers the first ``INFO`` with ``CONNECT`` and its interest.  From then on
``LS+``/``LS-`` go to the bound account's
:class:`~fakejs.core.leaf.interest.AccountLeafs` and ``LMSG``/``HMSG`` to
its subscribers and the other leaf connections, each way within the link's
:class:`~fakejs.core.leaf.permissions.LeafPermissions`.  ``PING`` is answered.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urlsplit

from fakejs.core.clientio import AUTH_VIOLATION, PROTOCOL_VIOLATION
from fakejs.core.clock import Clock
from fakejs.core.cluster.link import RouteIO
from fakejs.core.keepalive import Keepalive
from fakejs.core.leaf.interest import LDS_PREFIX, AccountLeafs
from fakejs.core.leaf.jetstream import LinkDenies
from fakejs.core.leaf.permissions import LeafPermissions
from fakejs.core.linkio import ERR_AUTH_TIMEOUT, WRONG_PORT, LinkDeadline, LinkOutput, read_operations
from fakejs.core.options import ServerOptions
from fakejs.core.stats import Stats
from fakejs.core.subjects import has_wildcard
from fakejs.core.transport_config import TLSConfig
from fakejs.protocol import leaf as wire
from fakejs.protocol import route as route_wire
from fakejs.protocol import writer
from fakejs.protocol.events import ERR_AUTHORIZATION, Ok, Ping, Pong
from fakejs.protocol.route import RemoteSub, RemoteUnsub, RouteConnect, RoutedMsg, RouteError, RouteEvent, RouteInfo
from fakejs.protocol.writer import go_quote

__all__ = ["LeafHost", "LeafIO", "LeafLink"]

# nats-server's texts and close reasons for leaf connections.
ERR_CLIENT_ON_LEAF_PORT = "attempted to connect to leafnode port"
ERR_STALE = "Stale Connection"
ERR_STALE_LEAF = "Stale Leaf Node Connection - Closing"
# nats-server's connectProcessTimeout: how long a leaf waits for the hub's INFO answering its CONNECT.
CONNECT_PROCESS_TIMEOUT = 2.0
# nats-server's firstPingInterval: a leaf connection's first PING comes within a second (plus jitter).
FIRST_PING = 1.0


class LeafIO(RouteIO, Protocol):
    """The socket of a leaf connection: a route socket that can also start TLS."""

    def start_tls(self, config: TLSConfig, server_side: bool, server_name: str, done: Callable[[], None]) -> None:
        """Write what is pending, then the TLS handshake on ``config``; ``done`` once it finished (a failure closes)."""


class LeafHost(Protocol):
    """What a leaf connection needs from the server's :class:`~fakejs.core.leaf.leafs.Leafs`."""

    clock: Clock
    log: logging.Logger
    server_options: ServerOptions
    rng: random.Random
    auth_timeout: float
    auth_required: bool
    traffic: Stats

    def hub_info(self, link: LeafLink, connect_info: bool) -> dict[str, Any]: ...

    def account_traffic(self, account: str) -> Stats: ...

    def tls_for(self, link: LeafLink, info: dict[str, Any]) -> TLSConfig | None: ...

    def tls_first(self, link: LeafLink) -> TLSConfig | None:
        """The TLS a connection starts before any INFO (``handshake_first``), or None."""

    def connect_fields(self, link: LeafLink) -> dict[str, Any] | None: ...

    def login(self, link: LeafLink, options: dict[str, Any]) -> bool: ...

    def link_up(self, link: LeafLink) -> None: ...

    def link_closed(self, link: LeafLink) -> None: ...

    def loop_detected(self, link: LeafLink, send_error: bool) -> None: ...


class LeafLink:
    """One leaf connection: which side dialled, the remote's identity, what it was told, traffic counters."""

    # a request sent over it does not carry its requester's info (fakejs.core.request_info)
    carries_request_info = False

    kind = "Leafnode"

    def __init__(self, host: LeafHost, io: LeafIO, lid: int, solicited: bool, url: str = "", hub: bool = False) -> None:
        self.host = host
        self.io = io
        self.lid = lid
        self.solicited = solicited
        # nats-server's ``isSpoke``: the role this server plays on the link.  The server that dialled is the
        # spoke unless its remote says ``hub: true``; the one that accepted is the hub unless the CONNECT
        # says ``is_hub``.  The spoke tells only its own clients' interest (and that of the links it is the
        # hub of), PINGs whatever it heard, and drops quietly what its lists deny.
        self.spoke = solicited and not hub
        self.url = url
        self.parser = wire.LeafParser("")
        # The account bound (on the hub, once the leaf logged in) and what may cross each way.
        self.interest: AccountLeafs | None = None
        self.account = ""
        self.permissions: LeafPermissions | None = None
        self.remote_id = self.remote_name = self.remote_cluster = self.remote_domain = ""
        # What the link does not carry (JetStream's API, set when it comes up).
        self.denies = LinkDenies()
        self.connect_options: dict[str, Any] = {}
        # The hub's INFO nonce (sent by the hub, signed by a leaf logging in with keys).
        self.nonce = ""
        self.up = False
        self.closed = False
        self.close_reason = ""
        self.output = LinkOutput(io)
        self.in_msgs = self.out_msgs = self.in_bytes = self.out_bytes = 0
        self._account_traffic = Stats()  # the bound account's leaf traffic (the host's, once bound)
        self.started = self.last_in = host.clock.monotonic()
        self.started_ns = host.clock.time_ns()
        self.stopped_ns = 0
        # PINGs every ping_interval (a leaf PINGs its hub whatever it heard), stale after ping_max unanswered.
        self.keepalive = Keepalive(self, host.clock, host.server_options, host.rng)
        self.keepalive.always = self.spoke
        # What the remote was told: (subject, queue) -> subscriptions (nats-server's ``smap``).
        self.told: dict[tuple[str, str], int] = {}
        # The hub's login timeout, or the leaf's wait for the INFO answering its CONNECT.
        self._deadline = LinkDeadline(host.clock)
        self._connect_sent = False
        self._tls_started = False
        self.tls = False  # the connection runs over TLS (its handshake done)

    def __repr__(self) -> str:
        host, port = self.io.remote_address
        return f"{host}:{port} - lid:{self.lid}"

    @property
    def rid(self) -> int:
        return self.lid

    @property
    def websocket(self) -> bool:
        return False

    def debug(self, text: str) -> None:
        self.host.log.debug("%s - %s", self, text)

    def stale(self) -> None:
        self.host.log.debug("%s - Stale Client Connection - Closing", self)
        self.refuse(ERR_STALE, ERR_STALE)

    def start_pinging(self) -> None:
        """The link is up: the first PING within a second, then one every ping interval."""
        self.keepalive.always = self.spoke  # a spoke PINGs its hub whatever it heard
        self.keepalive.connected(self.host.clock.monotonic() - self.started, first=FIRST_PING)
        self.keepalive.rtt = 0.0  # nats-server measures a leaf link's round trip from its first PONG only

    @property
    def rtt(self) -> float:
        """The round trip (seconds) the last PING and PONG took; 0 before the first PONG."""
        return self.keepalive.rtt

    @property
    def side(self) -> str:
        """``leaf`` on the server that dialled, ``hub`` on the one that accepted."""
        return "leaf" if self.solicited else "hub"

    def bind(self, interest: AccountLeafs, permissions: LeafPermissions | None) -> None:
        """The link carries ``interest``'s account, within ``permissions`` (None: everything)."""
        self.interest, self.account, self.permissions = interest, interest.account, permissions
        self._account_traffic = self.host.account_traffic(interest.account)
        self.parser.account = interest.account.encode()

    # -- starting --------------------------------------------------------------------

    def start(self) -> None:
        """The socket is open: the hub greets, the leaf waits for the greeting (each after the TLS handshake first)."""
        first = self.host.tls_first(self)
        if self.solicited:
            if first is not None:  # the handshake at once; the hub's INFO comes over it
                self._tls_started = True
                self.io.start_tls(first, False, self._tls_server_name(), self._tls_done)
            return
        if first is not None:  # the leaf starts the handshake; INFO once it is done
            self.io.start_tls(first, True, "", self._greet_after_tls)
            return
        info = self._greet()
        tls = self.host.tls_for(self, info)
        if tls is not None:  # INFO in plain text, then the leaf starts the handshake
            self.io.start_tls(tls, True, "", self._tls_done)

    def _greet(self) -> dict[str, Any]:
        """The hub's first INFO; the leaf has until the login timeout to answer it."""
        info = self.host.hub_info(self, connect_info=False)
        self.send(route_wire.info(info).replace(b"\r\n", b" \r\n"))
        self._deadline.arm(self.host.auth_timeout, self._auth_timeout)
        return info

    def _greet_after_tls(self) -> None:
        self.tls = True
        if not self.closed:
            self._greet()

    def _tls_done(self) -> None:
        self.tls = True

    def _tls_server_name(self) -> str:
        """The host name the leaf checks the hub's certificate against: its URL's."""
        return urlsplit(self.url if "://" in self.url else f"nats://{self.url}").hostname or ""

    def _auth_timeout(self) -> None:
        if not self.up and not self.closed:
            self.refuse(ERR_AUTH_TIMEOUT, ERR_AUTH_TIMEOUT)

    # -- output ----------------------------------------------------------------------

    def send(self, frame: bytes) -> None:
        if not self.closed:
            self.output.add(frame)

    def take_output(self) -> bytes:
        return self.output.take()

    def forward(
        self, account: str, subject: str, reply: str, queues: list[str], headers: bytes | None, payload: bytes
    ) -> None:
        """One message for the remote's subscribers (and one member of each of ``queues``), if it may go there."""
        if self.denies.publish and self.denies.publish_denied(subject):
            return
        if self.permissions is not None and not self.permissions.may_deliver(subject):
            return
        size = len(payload) + (len(headers) if headers is not None else 0)
        self.out_msgs += 1
        self.out_bytes += size
        for traffic in (self.host.traffic, self._account_traffic):
            traffic.out_msgs += 1
            traffic.out_bytes += size
        self.send(wire.leaf_msg(subject, reply, queues, headers, payload))

    def update_interest(self, subject: str, queue: str, delta: int) -> None:
        """nats-server's ``updateSmap``: a queue's every change is told, a subject's first and last."""
        if not self.up or self.denies.subscribe_denied(subject):
            return
        key = (subject, queue)
        count = self.told.get(key, 0)
        if delta < 0 and key not in self.told:
            return
        if delta > 0 and count <= 0 and not self._may_tell(subject):
            return
        changed = bool(queue) or (count <= 0 < count + delta) or (count > 0 >= count + delta)
        count += delta
        if count > 0:
            self.told[key] = count
        else:
            self.told.pop(key, None)
        if changed:
            self.send(wire.leaf_sub(subject, queue, count) if count > 0 else wire.leaf_unsub(subject, queue))

    def _may_tell(self, subject: str) -> bool:
        return self.permissions is None or subject.startswith(LDS_PREFIX) or self.permissions.may_receive(subject)

    def send_initial_interest(self) -> None:
        if self.interest is None:
            return
        frames = []
        for subject, queue, count in self.interest.initial_interest(self):
            if not self._may_tell(subject):
                continue
            self.told[(subject, queue)] = count
            frames.append(wire.leaf_sub(subject, queue, count))
        if frames:
            self.send(b"".join(frames))

    # -- closing ---------------------------------------------------------------------

    def close(self, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        self.close_reason = reason
        self.keepalive.cancel()
        self.stopped_ns = self.host.clock.time_ns()
        self._deadline.clear()
        self.host.link_closed(self)
        self.io.close()

    def refuse(self, text: str, reason: str) -> None:
        self.output.add_last(writer.err(text))
        self.close(reason)

    def connection_lost(self) -> None:
        self.close(self.close_reason or "Client Closed")

    # -- input -----------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        self.last_in = self.host.clock.monotonic()
        violation = read_operations(self, self.parser, data, self._handle)
        if violation is not None:
            self.host.log.error("%s - Leafnode parser ERROR: %s", self, violation.reason)
            self.close(PROTOCOL_VIOLATION)

    def _handle(self, event: RouteEvent) -> None:
        kind = type(event)
        if kind is Ping:
            self.send(writer.PONG)
        elif kind is RouteInfo:
            assert isinstance(event, RouteInfo)
            self._on_info(event.options)
        elif kind is RouteConnect:
            assert isinstance(event, RouteConnect)
            self._on_connect(event.options)
        elif kind is RouteError:
            assert isinstance(event, RouteError)
            self._on_error(event.text)
        elif kind is Pong:
            self.keepalive.pong()
        elif kind is Ok:
            return
        elif not self.up or self.interest is None:
            self.refuse(ERR_AUTHORIZATION, PROTOCOL_VIOLATION)
        elif kind is RemoteSub:
            assert isinstance(event, RemoteSub)
            self._on_sub(self.interest, event)
        elif kind is RemoteUnsub:
            assert isinstance(event, RemoteUnsub)
            self.interest.remote_unsub(self, event.subject, event.queue)
        elif kind is RoutedMsg:
            assert isinstance(event, RoutedMsg)
            self._on_msg(self.interest, event)

    def _on_info(self, info: dict[str, Any]) -> None:
        """The leaf's side: CONNECT on the hub's first INFO; up on it, or on the INFO answering the CONNECT.

        An INFO naming the hub user's lists (``import``, ``export``) adds them to the link's.
        """
        if not self.solicited:
            return
        if "import" in info or "export" in info:
            self.permissions = (self.permissions or LeafPermissions(None, None, local_denies=([], []))).with_hub_lists(
                info
            )
        if self.up:
            return  # a later INFO (leafnode URLs): nothing fakejs follows yet
        if not self._connect_sent:
            tls = None if self._tls_started else self.host.tls_for(self, info)
            if tls is not None:  # the handshake first, then this INFO again
                self._tls_started = True
                self.io.start_tls(tls, False, self._tls_server_name(), lambda: self._after_tls(info))
                return
            self._connect_sent = True
            self.remote_id = str(info.get("server_id") or "")
            self.remote_name = str(info.get("server_name") or self.remote_id)
            self.remote_cluster = str(info.get("cluster") or "")
            self.remote_domain = str(info.get("domain") or "")
            self.nonce = str(info.get("nonce") or "")
            fields = self.host.connect_fields(self)
            if fields is None:  # the credentials could not sign the nonce (logged)
                self.close("Client Closed")
                return
            self.send(route_wire.connect(fields))
            if info.get("info_on_connect") and not info.get("connect_info"):
                self._deadline.arm(CONNECT_PROCESS_TIMEOUT, self._connect_timeout)
                return
        elif not info.get("connect_info"):
            return
        self._deadline.clear()
        self.host.link_up(self)

    def _after_tls(self, info: dict[str, Any]) -> None:
        self.tls = True
        if not self.closed:
            self._on_info(info)

    def _connect_timeout(self) -> None:
        """nats-server's connectProcessTimeout: the hub never answered the CONNECT."""
        if not self.up and not self.closed:
            self.host.log.debug("%s - %s", self, ERR_STALE_LEAF)
            self.refuse(ERR_STALE_LEAF, ERR_STALE)

    def _on_connect(self, options: dict[str, Any]) -> None:
        if self.solicited or self.up:
            return
        self._deadline.clear()
        if "lang" in options:
            self.refuse(ERR_CLIENT_ON_LEAF_PORT, WRONG_PORT)
            return
        if not self.host.login(self, options):
            self.host.log.error("%s - authentication error", self)
            self.refuse(ERR_AUTHORIZATION, AUTH_VIOLATION)
            return
        self.connect_options = options
        self.spoke = bool(options.get("is_hub"))  # the leaf said it is the hub: this side plays the spoke
        self.remote_id = str(options.get("server_id") or "")
        self.remote_name = str(options.get("name") or self.remote_id)
        self.remote_cluster = str(options.get("cluster") or "")
        self.remote_domain = str(options.get("domain") or "")
        self.send(route_wire.info(self.host.hub_info(self, connect_info=True)).replace(b"\r\n", b" \r\n"))
        self.host.link_up(self)

    def _on_sub(self, interest: AccountLeafs, event: RemoteSub) -> None:
        subject = event.subject
        if subject == interest.lds:
            self.host.loop_detected(self, send_error=True)
            return
        permissions = self.permissions
        if (
            permissions is not None
            and not subject.startswith(LDS_PREFIX)
            and not has_wildcard(subject)
            and not permissions.may_send(subject)
        ):
            self._violation("Subscription", subject)
            return
        if permissions is not None and not subject.startswith(LDS_PREFIX):
            permissions.remote_interest(subject, event.queue)
        interest.remote_sub(self, subject, event.queue, event.weight)

    def _on_msg(self, interest: AccountLeafs, event: RoutedMsg) -> None:
        size = len(event.payload) + (len(event.headers) if event.headers is not None else 0)
        self.in_msgs += 1
        self.in_bytes += size
        for traffic in (self.host.traffic, self._account_traffic):
            traffic.in_msgs += 1
            traffic.in_bytes += size
        if self.permissions is not None and not self.permissions.may_receive(event.subject):
            self._violation("Publish", event.subject)
            return
        interest.relay(self, event.subject, event.reply, event.queues, event.headers, event.payload)

    def _violation(self, action: str, subject: str) -> None:
        """nats-server's ``leafPermViolation``: the spoke drops it quietly, the hub tells, logs and closes."""
        if self.spoke:
            return
        self.host.log.error("%s - %s Violation on %s - Check other side configuration", self, action, go_quote(subject))
        self.refuse(f"Permissions Violation for {action} to {go_quote(subject)}", PROTOCOL_VIOLATION)

    def _on_error(self, text: str) -> None:
        self.host.log.error("%s - Leafnode Error '%s'", self, text)
        if "Loop detected" in text:
            self.host.loop_detected(self, send_error=False)
        else:
            self.close("Client Closed")
