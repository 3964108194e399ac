"""The server's leaf connections: the hub's greeting and logins, the remotes dialled, loop detection.

:class:`Leafs` does for a server what nats-server's ``leafnode.go`` does,
without sockets: the socket layer accepts on the leaf port
(:meth:`Leafs.accepted`) and dials through a :class:`LeafDialer`.  Every
connection is bound to one account: a remote's ``account`` (the global one
by default), on the hub the account of the user the leaf logged in as.
A remote is dialled again ``reconnect`` after its connection closed (30
seconds after a loop was detected), through the server's clock, each
time the next of its URLs.
"""

from __future__ import annotations

import fnmatch
import logging
import random
from collections.abc import Callable, Iterator
from typing import Any, Protocol
from urllib.parse import urlsplit

from fakejs.core.accounts import Accounts
from fakejs.core.auth import Login, new_nonce, verify_signature
from fakejs.core.clientio import KICKED
from fakejs.core.clock import Clock
from fakejs.core.cluster.interest import AccountRoutes
from fakejs.core.hooks import Hooks, NoHooks
from fakejs.core.leaf.interest import LDS_PREFIX, AccountLeafs, LeafTarget
from fakejs.core.leaf.jetstream import JETSTREAM_API, domain_api_mappings, link_denies
from fakejs.core.leaf.link import LeafIO, LeafLink
from fakejs.core.leaf.permissions import hub_permissions, leaf_permissions
from fakejs.core.leaf.signing import CredentialsError, credentials_problem, signed_login
from fakejs.core.leaf_config import LeafConfig, LeafRemote
from fakejs.core.log import get_logger
from fakejs.core.options import API_LEVEL, GIT_COMMIT, NATS_VERSION, RUNTIME, ServerOptions
from fakejs.core.stats import Stats
from fakejs.core.transport_config import TLSConfig
from fakejs.gocompat import ids
from fakejs.gocompat.gotime import NS, format_duration, rfc3339
from fakejs.protocol.writer import go_quote

__all__ = ["GLOBAL_ACCOUNT", "LOOP_DELAY", "LeafDialer", "Leafs", "leaf_client_info"]

GLOBAL_ACCOUNT = "$G"

# The nonce's random bytes (as a client's).
NONCE_RAW_LEN = 11
# nats-server's leafNodeReconnectDelayAfterLoopDetected.
LOOP_DELAY = 30.0
# nats-server's default leaf login timeout (its route and client default too).
DEFAULT_LEAF_AUTH_TIMEOUT = 2.0
# The leaf protocol version nats-server 2.15 speaks.
LEAF_PROTO = 3


class LeafDialer(Protocol):
    """The socket layer's dialler: ``connected`` makes the link once the socket is open."""

    def dial(
        self, host: str, port: int, connected: Callable[[LeafIO], LeafLink], failed: Callable[[], None]
    ) -> None: ...


class _BoundLinks:
    """The leaf connections up and bound to one account."""

    def __init__(self, links: list[LeafLink], account: str) -> None:
        self._links = links
        self._account = account

    def leaf_links(self) -> Iterator[LeafTarget]:
        return (link for link in self._links if link.up and link.account == self._account)


class _Remote:
    """One configured remote: its URLs, the next to dial, its connection and pending redial."""

    def __init__(self, config: LeafRemote, rng: random.Random) -> None:
        self.config = config
        # The URLs in the order they are dialled: shuffled once unless ``no_randomize``, as nats-server.
        self.urls = list(config.urls)
        if not config.no_randomize:
            rng.shuffle(self.urls)
        self.next_url = 0
        self.link: LeafLink | None = None
        self.delay = 0.0  # a longer wait before the next dial (after a loop)


class Leafs:
    """One server's leaf connections (see the module docstring)."""

    def __init__(
        self,
        config: LeafConfig,
        identity: tuple[str, str],
        accounts: Accounts,
        clock: Clock,
        rng: random.Random,
        authenticate: Callable[[dict[str, Any], str], Login | None] | None = None,
    ) -> None:
        self.config = config
        self.server_id, self.server_name = identity
        self.clock = clock
        self.rng = rng
        self.log: logging.Logger = get_logger()
        self.auth_required = True  # nats-server's leaf INFO always says so
        # nats-server's default login time: with TLS, the handshake's time and a second more.
        default_timeout = config.tls.default_auth_timeout if config.tls is not None else DEFAULT_LEAF_AUTH_TIMEOUT
        self.auth_timeout = config.auth_timeout or default_timeout
        self.accounts = accounts
        self.authenticate = authenticate
        # Each account bound to a leaf connection: its interest and relays.
        self.bound: dict[str, AccountLeafs] = {}
        self.links: list[LeafLink] = []
        # Told when a link comes up (True) or an up link closes (False): the system account's events.
        self.on_link: Callable[[LeafLink, bool], None] | None = None
        # Each connection's id (the server's client ids, when it sets this).
        self.next_id: Callable[[], int] = self._lid
        self.remotes = [_Remote(remote, rng) for remote in config.remotes]
        self.dialer: LeafDialer | None = None
        self.running = False
        self.port = 0
        self.host = ""
        self._next_lid = 0
        self.max_payload = 1024 * 1024
        self.client_port = 0
        # ``jetstream { domain }`` and whether JetStream runs (told in INFO and CONNECT, deciding the denies).
        self.jetstream_domain = ""
        self.jetstream: Callable[[], bool] = lambda: False
        # The server's hook points (the ``leaf.connect`` faults of a test).
        self.hooks: Callable[[], Hooks] = NoHooks
        # The server's ping_interval and ping_max (each link's keepalive).
        self.server_options = ServerOptions()
        # Messages and bytes every leaf connection took in and sent, closed ones too (part of /varz's counts).
        self.traffic = Stats()
        self.traffic_by_account: dict[str, Stats] = {}  # the same, by the account each link was bound to
        # The server's cluster: its name ("" outside one) and whether it was generated (told in INFO and CONNECT).
        self.cluster: Callable[[], tuple[str, bool]] = lambda: ("", False)

    # -- starting and stopping ----------------------------------------------------------

    def start(self, dialer: LeafDialer, host: str, port: int) -> None:
        """The leaf port listens on ``port`` (0: none): join the account, dial the remotes."""
        self.dialer, self.host, self.port = dialer, host, port
        self.running = True
        for remote in self.remotes:
            self.bind(remote.config.account or GLOBAL_ACCOUNT)
            problem = credentials_problem(remote.config.credentials) if remote.config.credentials else ""
            if problem:
                self.log.error(problem)
        for remote in self.remotes:
            self._dial(remote)

    def stop(self) -> None:
        self.running = False
        for link in list(self.links):
            link.close("Server Shutdown")

    def bind(self, name: str) -> AccountLeafs | None:
        """The account ``name``'s side of its leaf connections, joined on first use (None: no such account)."""
        interest = self.bound.get(name)
        if interest is not None:
            return interest
        account = self.accounts.get(name)
        if account is None:
            return None
        lds = LDS_PREFIX + ids.nuid(self.rng)
        router = account.router
        routes = router.remote if isinstance(router.remote, AccountRoutes) else None
        interest = AccountLeafs(account.name, _BoundLinks(self.links, name), router, lds, self.rng, routes)
        for sub in router.local_subscriptions():
            interest.count_quietly(sub)
        router.remote = interest  # in a cluster, the view of the routes and the leaf connections both
        if routes is not None:
            routes.on_count = interest.route_count
            router.receive_routed = interest.routed
        # A push consumer here delivers to a subscription across a leaf connection as to a local one.
        account.router.add_imported_interest(interest.has_exact_interest)
        if self.jetstream() and name == GLOBAL_ACCOUNT:
            interest.hub_imports = [JETSTREAM_API]  # the account's import of the JetStream API
            if self.jetstream_domain:
                interest.mapped_sources = list(domain_api_mappings(self.jetstream_domain))
        self.bound[name] = interest
        return interest

    def _lid(self) -> int:
        self._next_lid += 1
        return self._next_lid

    # -- the hub's side ----------------------------------------------------------------

    def accepted(self, io: LeafIO) -> LeafLink:
        link = LeafLink(self, io, self.next_id(), solicited=False)
        self.links.append(link)
        return link

    def hub_info(self, link: LeafLink, connect_info: bool) -> dict[str, Any]:
        """The leaf port's INFO as nats-server sends it (without compression, which fakejs does not offer)."""
        host, port = self._advertised()
        info: dict[str, Any] = {
            "server_id": self.server_id,
            "server_name": self.server_name,
            "version": NATS_VERSION,
            "proto": LEAF_PROTO,
            "git_commit": GIT_COMMIT,
            "go": RUNTIME,
            "host": host,
            "port": port,
            "headers": True,
            "auth_required": True,
        }
        if self.config.tls is not None:
            info["tls_required"] = True
            if self.config.tls.verify:
                info["tls_verify"] = True
        info["max_payload"] = self.max_payload
        if self.jetstream():
            info["jetstream"] = True
        info["ip"] = f"{host}:{port}"
        info["client_id"] = link.lid
        cluster, dynamic = self.cluster()
        if cluster:
            info["cluster"] = cluster
            if dynamic:
                info["cluster_dynamic"] = True
        if self.jetstream_domain:
            info["domain"] = self.jetstream_domain
        if connect_info:
            info["connect_info"] = True
            info["remote_account"] = link.account
        else:
            link.nonce = new_nonce(self.rng.randbytes(NONCE_RAW_LEN))
            info["nonce"] = link.nonce
        info["api_lvl"] = API_LEVEL
        if connect_info and link.permissions is not None:
            info.update(link.permissions.info)
        info["info_on_connect"] = True
        if not self.config.no_advertise:  # nats-server leaves the empty list out
            info["leafnode_urls"] = [f"{host}:{port}"]
        return info

    def tls_for(self, link: LeafLink, info: dict[str, Any]) -> TLSConfig | None:
        """The TLS a connection starts: the leaf port's on the hub; a remote's when its hub asks or it wants it."""
        if not link.solicited:
            return self.config.tls
        remote = next((r for r in self.remotes if r.link is link), None)
        if remote is None:
            return None
        if remote.config.tls_wanted or info.get("tls_required"):
            return remote.config.tls or TLSConfig()
        return None

    def tls_first(self, link: LeafLink) -> TLSConfig | None:
        """``tls { handshake_first }``: the leaf port's on the hub, the remote's on the leaf."""
        if not link.solicited:
            config = self.config.tls
        else:
            remote = next((r for r in self.remotes if r.link is link), None)
            config = remote.config.tls if remote is not None else None
        return config if config is not None and config.handshake_first else None

    def _advertised(self) -> tuple[str, int]:
        if self.config.advertise:
            host, _, port = self.config.advertise.rpartition(":")
            return (host, int(port)) if host else (self.config.advertise, self.port)
        return self.host or "0.0.0.0", self.port

    def login(self, link: LeafLink, options: dict[str, Any]) -> bool:
        """nats-server's ``isLeafNodeAuthorized``: check the leaf's CONNECT and bind the link to its account.

        ``leafnodes { authorization }`` decides when it has a user or users;
        otherwise the leaf logs in as a client would (its user's account
        and permissions), or binds ``authorization { account }`` when the
        server asks no credentials.
        """
        config, account, user_permissions = self.config, config_account(self.config), None
        if config.username:
            if (options.get("user"), options.get("pass")) != (config.username, config.password):
                return False
        elif config.nkey:
            if not self._nkey_signed(link, options):
                return False
        elif config.users:
            user = next((u for u in config.users if u.name == options.get("user")), None)
            if user is None or user.password != options.get("pass"):
                return False
            account = user.account or GLOBAL_ACCOUNT
        elif self.authenticate is not None:
            login = self.authenticate(options, link.nonce)
            if login is None:
                return False
            if login.user is not None:
                account = login.user.account or GLOBAL_ACCOUNT
                user_permissions = login.user.permissions
        interest = self.bind(account)
        if interest is None:
            return False
        link.bind(interest, hub_permissions(user_permissions, options.get("deny_pub")))
        return True

    def _nkey_signed(self, link: LeafLink, options: dict[str, Any]) -> bool:
        """The block's ``nkey``: the CONNECT names it and signs the nonce with it."""
        signature = options.get("sig")
        if options.get("nkey") != self.config.nkey:
            return False
        if not isinstance(signature, str) or not signature:
            link.debug("Signature missing")
            return False
        if not verify_signature(self.config.nkey, link.nonce.encode(), signature):
            link.debug("Signature not verified")
            return False
        return True

    # -- the leaf's side ---------------------------------------------------------------

    def _dial(self, remote: _Remote) -> None:
        if not self.running or self.dialer is None or not remote.urls:
            return
        url = remote.urls[remote.next_url % len(remote.urls)]
        remote.next_url += 1
        parts = urlsplit(url if "://" in url else f"nats://{url}")
        self.log.debug("Trying to connect as leafnode to remote server on %s", go_quote(parts.netloc))

        def connected(io: LeafIO) -> LeafLink:
            link = LeafLink(self, io, self.next_id(), solicited=True, url=url, hub=remote.config.hub)
            interest = self.bind(remote.config.account or GLOBAL_ACCOUNT)
            assert interest is not None  # the accounts bound were checked at start
            link.bind(interest, leaf_permissions(remote.config.deny_imports, remote.config.deny_exports))
            remote.link = link
            self.links.append(link)
            return link

        self.dialer.dial(parts.hostname or "127.0.0.1", parts.port or 7422, connected, lambda: self._redial(remote))

    def _redial(self, remote: _Remote) -> None:
        if self.running:
            delay, remote.delay = remote.delay or self.config.reconnect, 0.0
            self.clock.call_later(delay, self._dial, remote)

    def connect_fields(self, link: LeafLink) -> dict[str, Any] | None:
        """The leaf's CONNECT as nats-server 2.15 sends it, in its field order; None when it cannot sign.

        The remote's ``credentials`` (a user JWT) or ``nkey`` sign the hub's
        nonce; the URL's user and password (or token) are sent besides.
        """
        parts = urlsplit(link.url if "://" in link.url else f"nats://{link.url}")
        fields: dict[str, Any] = {"version": NATS_VERSION}
        remote = next((r for r in self.remotes if r.link is link), None)
        if remote is not None and (remote.config.credentials or remote.config.nkey):
            if remote.config.credentials:
                link.debug(f"Authenticating with credentials file {go_quote(remote.config.credentials)}")
            try:
                fields.update(signed_login(remote.config.credentials, remote.config.nkey, link.nonce))
            except CredentialsError as problem:
                self.log.error("%s - %s", link, problem)
                return None
        if parts.username:
            fields["user"] = parts.username
            if parts.password is not None:
                fields["pass"] = parts.password
            else:
                fields["auth_token"] = parts.username
        fields["server_id"] = self.server_id
        if self.jetstream_domain:
            fields["domain"] = self.jetstream_domain
        fields["name"] = self.server_name
        if remote is not None and remote.config.hub:
            fields["is_hub"] = True
        cluster, _ = self.cluster()
        if cluster:
            fields["cluster"] = cluster
        fields["headers"] = True
        if self.jetstream():
            fields["jetstream"] = True
        if remote is not None and remote.config.deny_imports:
            fields["deny_pub"] = list(remote.config.deny_imports)
        fields.update({"compress_mode": "not supported", "remote_account": link.account, "protocol": LEAF_PROTO})
        return fields

    # -- both sides ----------------------------------------------------------------------

    def link_up(self, link: LeafLink) -> None:
        hooks = self.hooks()
        if hooks and hooks.fire("leaf.connect", remote=link.remote_name, side=link.side) is not None:
            link.close(KICKED)  # the ``leaf.connect`` hook point's ``drop``: a leaf dials again after ``reconnect``
            return
        link.up = True
        if link.solicited:
            self.log.info("%s - Leafnode connection created for account: %s", link, link.account)
        else:
            self.log.info("%s - Leafnode connection created", link)
        link.denies, apart = link_denies(self.jetstream_domain, link.remote_domain, self.jetstream())
        if apart:
            self.log.info(
                "%s - JetStream using domains: local %s, remote %s",
                link,
                go_quote(self.jetstream_domain),
                go_quote(link.remote_domain),
            )
        link.send_initial_interest()
        link.start_pinging()
        if self.on_link is not None:
            self.on_link(link, True)

    def link_closed(self, link: LeafLink) -> None:
        if link in self.links:
            self.links.remove(link)
        tag = f" - Remote: {link.remote_name}" if link.remote_name else ""
        self.log.info("%s - Leafnode connection closed: %s%s", link, link.close_reason, tag)
        if link.up and link.interest is not None:
            link.up = False
            link.interest.drop_link(link)
            if self.on_link is not None:
                self.on_link(link, False)
        for remote in self.remotes:
            if remote.link is link:
                remote.link = None
                self._redial(remote)

    def loop_detected(self, link: LeafLink, send_error: bool) -> None:
        """nats-server's ``handleLeafNodeLoop``: the error (sent when this side found it), a longer wait to redial."""
        text = (  # the delay is named on both sides; only a leaf waits it out
            f"Loop detected for leafnode account={go_quote(link.account)}. "
            f"Delaying attempt to reconnect for {format_duration(int(LOOP_DELAY * 1e9))}"
        )
        self.log.error("%s - %s", link, text)
        for remote in self.remotes:
            if remote.link is link:
                remote.delay = LOOP_DELAY
        if send_error:
            link.refuse(text, "Protocol Violation")
        else:
            link.close("Protocol Violation")

    def drop(self, remote: str = "*") -> list[int]:
        """Close the connections that are up to servers named like ``remote`` (a pattern); their ids."""
        dropped = [link for link in self.links if link.up and fnmatch.fnmatchcase(link.remote_name, remote)]
        for link in dropped:
            link.close(KICKED)
        return [link.lid for link in dropped]

    @property
    def num_leafs(self) -> int:
        return sum(1 for link in self.links if link.up)

    def account_traffic(self, account: str) -> Stats:
        """What the leaf connections bound to ``account`` took in and sent, closed ones too."""
        return self.traffic_by_account.setdefault(account, Stats())

    def count(self, account: str) -> int:
        """The links up and bound to ``account``."""
        return sum(1 for link in self.links if link.up and link.account == account)


def config_account(config: LeafConfig) -> str:
    """The account ``leafnodes { authorization }`` binds a leaf to (the global one unless named)."""
    return config.account or GLOBAL_ACCOUNT


def leaf_client_info(link: LeafLink, name_tag: str, closed: bool) -> dict[str, Any]:
    """nats-server's ``ClientInfo`` of a leaf connection for the system account's events.

    The hub names the leaf's user, server name and version from its CONNECT;
    the leaf, which sent no such thing, names none.  ``rtt`` (nanoseconds)
    is there once the link measured one (after its first PONG).
    """
    host, _ = link.io.remote_address
    info: dict[str, Any] = {"start": rfc3339(link.started_ns), "host": host, "id": link.lid, "acc": link.account}
    options = link.connect_options
    for key, field in (("user", "user"), ("name", "name"), ("ver", "version")):
        value = options.get(field)
        if value:
            info[key] = str(value)
    rtt = round(link.rtt * NS)
    if rtt:
        info["rtt"] = rtt if not 1_000 < rtt < 1_000_000 else rtt - rtt % 1_000  # whole µs below a millisecond
    if closed:
        info["stop"] = rfc3339(link.stopped_ns)
    info["name_tag"] = name_tag
    info["kind"] = link.kind
    return info
