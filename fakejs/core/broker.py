"""The server without sockets: identity, INFO, authentication, accounts, clients, failures.

:class:`Broker` is what a connection talks to (it implements
:class:`~fakejs.core.session.SessionHost`).  It owns the accounts (each
with its router), the registry of client sessions, the clock and the
record of handler failures, and it builds the INFO documents nats-server
would send.  The socket layer (:mod:`fakejs.server`) only moves bytes
between sockets and :class:`~fakejs.core.session.ClientSession` objects;
whoever wants to know about closed connections (monitoring) adds a
callback to :attr:`Broker.on_client_closed`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from fakejs._version import __version__
from fakejs.core.accounts import Account, Accounts
from fakejs.core.auth import OPEN, Authenticator, Login, LoginRules, validate, with_cookies
from fakejs.core.clientio import LEAF_CONNECTION, STANDARD, TransportDetails
from fakejs.core.clock import Clock
from fakejs.core.cluster_checks import jetstream_problem
from fakejs.core.connect import LoginRefusal
from fakejs.core.failures import Failures, ServerError
from fakejs.core.hooks import Hooks, NoHooks, WireTap
from fakejs.core.log import RepeatFilter, get_logger
from fakejs.core.options import API_LEVEL, GIT_COMMIT, NATS_VERSION, PROTO, RUNTIME, SYSTEM_ACCOUNT, ServerOptions
from fakejs.core.read_deferrals import ReadDeferrals
from fakejs.core.recorder import NO_RECORDER, Recorder
from fakejs.core.router import Router, Subscription
from fakejs.core.session import ClientSession
from fakejs.core.stats import Stats
from fakejs.core.sysevents import SystemEvents
from fakejs.gocompat import ids
from fakejs.gocompat.curvekeys import curve_private_key, curve_public_text
from fakejs.protocol.writer import go_quote
from fakejs.protocol.writer import info as go_info

if TYPE_CHECKING:
    from fakejs.core.callout import AuthCallouts
    from fakejs.core.cluster.cluster import Cluster
    from fakejs.core.cluster.link import RouteLink
    from fakejs.core.imports import Imports
    from fakejs.core.jwt.callout import NkeyPair
    from fakejs.core.jwt.login import JwtAuthenticator
    from fakejs.core.jwt.trust import AccountClaims
    from fakejs.core.leaf.leafs import Leafs
    from fakejs.core.leaf.link import LeafLink

# Called with a client that just closed and the subscriptions it had then.
ClosedCallback = Callable[[ClientSession, list[Subscription]], None]


class Broker:
    """One server's state apart from its sockets; what every client session talks to."""

    def __init__(self, options: ServerOptions, clock: Clock, hooks: Hooks | None = None) -> None:
        check_options(options)
        self.options = options
        self.clock = clock
        self.log = get_logger()
        self.repeated_lines = RepeatFilter()  # what rate_limited_warning logged lately
        self.failures = Failures(self.log)
        # Every random choice the server makes comes from this one generator.
        self.random = ids.new_random(options.seed)
        # With an authorization callout the id is the public half of a real server nkey (it signs the requests).
        callout_key: NkeyPair | None = None
        if wants_callouts(options):
            # Only servers that may call out load that machinery (start-up time)
            from fakejs.core.callout import callout_server_key

            callout_key = callout_server_key(self.random)
        self.server_id = callout_key.public_key if callout_key is not None else ids.server_id(self.random)
        # The curve key pair a server makes at its start: its private half decrypts an authorization
        # callout's encrypted answers, its public half is INFO's "xkey" (derived by the first INFO).
        self.xkey_private = curve_private_key(self.random)
        self.name = options.name or "fakejs-" + self.server_id[-8:]
        self.accounts = Accounts(self.random, self.record_error)
        self.auth = Authenticator(options)
        self.jwt_logins: JwtAuthenticator | None = None  # operator mode: user JWTs log in
        if options.trusted_operators:
            # Only operator mode loads the JWT machinery
            from fakejs.core.jwt.login import jwt_logins

            self.jwt_logins = jwt_logins(options)
        self.jwt_accounts_used: set[str] = set()  # accounts a user JWT logged in to (nats-server registers them)
        # ``auth_callout``, or accounts' JWT ``authorization``: logins a service decides (see fakejs.core.callout).
        self.callouts = self._callouts(callout_key)
        if options.user:
            self.accounts.default.users[options.user] = options.password
        add_configured_accounts(self.accounts, options)
        # Exports and imports join the accounts' subject spaces (internal subscriptions); a
        # server without any does not load that machinery.
        self.imports: Imports | None = None
        if any(config.imports or config.exports for config in options.accounts):
            # Only accounts with exports or imports load that machinery
            from fakejs.core.imports import wire_imports

            self.imports = wire_imports(self.accounts, list(options.accounts), clock, self.random)
        # Hook points fire here; the test kit installs its faults (see fakejs.core.hooks).
        self.faults: Hooks = hooks if hooks is not None else NoHooks()
        # What clients send and are sent, for the test kit's conformance watch (see fakejs.core.hooks).
        self.tap: WireTap | None = None  # None, not an object that is false: a test of it costs no call
        # The timeline's recorder (see fakejs.core.recorder): set once, before any stream or consumer exists.
        self.timeline: Recorder = NO_RECORDER
        self.clients: dict[int, ClientSession] = {}
        self.on_client_closed: list[ClosedCallback] = []
        self.on_client_connected: list[Callable[[ClientSession], None]] = []
        self.stats = Stats()
        # What handlers put off while a client's read is applied (a consumer's acks; see fakejs.core.read_deferrals).
        self.deferrals = ReadDeferrals()
        self.started_ns = clock.time_ns()
        self.total_connections = 0
        self.port = options.port
        # (host, port, tls) of the websocket port once it listens: what websocket clients' INFO says.
        self.websocket_info: tuple[str, int, bool] | None = None
        # The route port once its listener is up (None: not clustered, or not listening yet).
        self.cluster_port: int | None = None
        self.lame_duck = False
        self.jetstream_enabled = False
        # What a running server found it cannot serve (a JetStream cluster mixing fakejs with nats-server):
        # logged as fatal; ``on_refusal`` (the server's) ends it, and the command line exits with status 1.
        self.refusal = ""
        self.on_refusal: Callable[[], None] | None = None
        self._next_cid = 0
        # The events a client of the system account sees ($SYS.ACCOUNT.<acc>.CONNECT ...).
        self.events = SystemEvents(self)
        # The routes to the other servers of a cluster (started with the route port).
        self.cluster: Cluster | None = None
        if options.cluster is not None:
            # Only a server in a cluster loads the routes' machinery
            from fakejs.core.cluster.cluster import Cluster

            identity = (self.server_id, self.name)
            self.cluster = Cluster(options.cluster, options, identity, self.accounts, clock, self.random, self)
        # The leaf connections, as hub and as leaf (started with the leaf port).
        self.leafs: Leafs | None = None
        # Called with a leaf connection that closed (up till then) and its account: /connz keeps it.
        self.on_leaf_closed: list[Callable[[LeafLink, Account], None]] = []
        if options.leafnodes is not None:
            # Only a server with leaf nodes loads their machinery
            from fakejs.core.leaf.leafs import Leafs

            identity = (self.server_id, self.name)
            self.leafs = Leafs(options.leafnodes, identity, self.accounts, clock, self.random, self._leaf_login)
            self.leafs.on_link = self._leaf_event
            self.leafs.next_id = self.next_client_id  # nats-server numbers leaf connections with its clients
            self.leafs.max_payload = options.max_payload
            self.leafs.jetstream_domain = options.jetstream_domain
            self.leafs.jetstream = lambda: self.jetstream_enabled
            self.leafs.hooks = lambda: self.faults
            self.leafs.server_options = options
            self.leafs.cluster = self._cluster_identity

    def _leaf_login(self, connect: dict[str, Any], nonce: str) -> Login | None:
        """A leaf's CONNECT checked as a client's, as a leaf node connection: the server's users and accounts,
        an nkey signing ``nonce``, or in operator mode a user JWT (the login's user names its account)."""
        if self.jwt_logins is not None:
            details = TransportDetails(connection_type=LEAF_CONNECTION)
            result = self._jwt_login(connect, nonce, details, "", None)
            return None if result is None else result[1]
        rules = replace(self.auth.rules[STANDARD], connection_type=LEAF_CONNECTION)
        return self.auth.login(connect, nonce.encode(), rules=rules)

    def _leaf_event(self, link: LeafLink, up: bool) -> None:
        """A leaf connection came up or closed: the system account's CONNECT or DISCONNECT for its account."""
        from fakejs.core.leaf.leafs import leaf_client_info  # only a server with leaf nodes has links

        account = self.accounts.get(link.account)
        if account is None:
            return
        info = leaf_client_info(link, account.name_tag or account.name, closed=not up)
        if up:
            self.events.leaf_connected(account, info)
        else:
            traffic = (link.in_msgs, link.in_bytes, link.out_msgs, link.out_bytes)
            self.events.leaf_disconnected(account, info, traffic, link.close_reason, link.stopped_ns)
            for callback in self.on_leaf_closed:
                callback(link, account)

    def leaf_connections(self, account: str) -> int:
        """The leaf connections up and bound to ``account``."""
        return 0 if self.leafs is None else self.leafs.count(account)

    def leaf_traffic(self, account: str) -> Stats:
        """What the leaf connections bound to ``account`` took in and sent (closed ones too)."""
        return Stats() if self.leafs is None else self.leafs.account_traffic(account)

    def _callouts(self, key: NkeyPair | None) -> AuthCallouts | None:
        """The server's authorization callouts (``auth_callout``, or operator mode's accounts), given its nkey."""
        if key is None:
            return None
        from fakejs.core.callout import AuthCallouts, operator_callouts  # see callout_key above

        if self.options.auth_callout is not None:
            return AuthCallouts(self, key, self.options.auth_callout)
        if self.jwt_logins is not None:
            return operator_callouts(self, key, self._account_claims)
        return None

    def _account_claims(self) -> Mapping[str, AccountClaims]:
        """The accounts operator mode has made, as the JWT logins hold them now (a reload makes them again)."""
        return self.jwt_logins.accounts if self.jwt_logins is not None else {}

    @cached_property
    def xkey(self) -> str:
        """INFO's ``xkey``: the public half of the server's curve key pair, derived when first asked for.

        The derivation is plain Python and takes milliseconds: a server that no client reached
        yet has not paid for it (start-up time).
        """
        return curve_public_text(self.xkey_private)

    def _cluster_identity(self) -> tuple[str, bool]:
        """The cluster's name and whether it was generated (a leaf connection's INFO and CONNECT tell it).

        Outside a cluster, a server with leaf remotes and a configured
        ``server_name`` takes that name for its cluster, as nats-server does.
        """
        cluster, options = self.cluster, self.options
        if cluster is not None:
            return cluster.name, cluster.dynamic_name
        if options.leafnodes is not None and options.leafnodes.remotes and options.name:
            return options.name, False
        return "", False

    @property
    def cluster_name(self) -> str:
        """The cluster's name: the configured one, or the one generated when none is (nats-server's dynamic name)."""
        return self.cluster.name if self.cluster is not None else ""

    @property
    def router(self) -> Router:
        """The global account's router (what JetStream of the one account publishes through)."""
        return self.accounts.default.router

    def rate_limited_warning(self, text: str, key: str = "") -> None:
        """nats-server's ``RateLimitWarnf``: the same warning at most once a second (server time).

        ``key``: what counts as "the same" when not the text (``rateLimitFormatWarnf`` keys on the format).
        """
        if self.repeated_lines.allow(key or text, self.clock.monotonic()):
            self.log.warning("%s", text)

    # -- failures ------------------------------------------------------------

    def record_error(self, where: str, exc: BaseException) -> None:
        """Log and keep an exception a server handler raised (see :mod:`fakejs.core.failures`)."""
        self.failures.record(where, exc, self.clock.time_ns())

    def refuse_to_run(self, problem: str) -> None:
        """Stop serving a configuration found unsupported while running: ``problem`` logged as fatal, once."""
        if self.refusal:
            return
        self.refusal = problem
        self.log.critical("%s", problem)
        if self.on_refusal is not None:
            self.on_refusal()

    @property
    def errors(self) -> list[ServerError]:
        return self.failures.errors

    # -- identity ----------------------------------------------------------

    def info_fields(
        self, client: ClientSession | None = None, connect_info: bool = False, update: bool = False
    ) -> dict[str, Any]:
        """The INFO document, in nats-server's field order, for one client (``update``: an async INFO)."""
        opts = self.options
        info: dict[str, Any] = {
            "server_id": self.server_id,
            "server_name": self.name,
            "version": NATS_VERSION,
            "proto": PROTO,
            "git_commit": GIT_COMMIT,
            "go": RUNTIME,
            "host": opts.host,
            "port": self.port,
            "headers": True,
        }
        websocket = self.websocket_info if client is not None and client.websocket else None
        if websocket is not None:
            info["host"], info["port"] = websocket[0], websocket[1]
        # With a no_auth_user plain clients need no credentials: the greeting says so (a CONNECT is
        # still awaited); the INFO answering CONNECT is the server's own, which does require them.
        rules = self.login_rules(client.io.details) if client is not None else self.auth.rules["STANDARD"]
        if (opts.auth_required and connect_info) or rules.greeting_required:
            info["auth_required"] = True
        tls: dict[str, bool] = {}
        if opts.tls is not None:  # a websocket client gets the client port's INFO fields too
            tls_first = client is not None and not connect_info and client.io.details.tls_first
            tls = tls_fields(opts, tls_first and websocket is None)
        if websocket is not None and websocket[2]:
            tls = {"tls_required": True, **tls, "tls_available": True}
        info.update(tls)
        info["max_payload"] = opts.max_payload
        if self.jetstream_enabled:
            info["jetstream"] = True
        if client is not None:
            info["client_id"] = client.cid
            if client.host:
                info["client_ip"] = client.host
            if client.nonce and not connect_info and not update:
                info["nonce"] = client.nonce
        cluster = self.cluster
        if cluster is not None:
            info["cluster"] = cluster.name
            if cluster.dynamic_name:
                info["cluster_dynamic"] = True
        if self.jetstream_enabled and opts.jetstream_domain:
            info["domain"] = opts.jetstream_domain
        if cluster is not None and websocket is None and (urls := cluster.client_urls()):
            info["connect_urls"] = urls
        if self.lame_duck:
            info["ldm"] = True
        if connect_info:
            info["connect_info"] = True
            info["remote_account"] = client.account.name if client is not None else self.accounts.default.name
        info["api_lvl"] = API_LEVEL
        info["xkey"] = self.xkey
        info["fakejs"] = __version__
        return info

    def trace_server_info(self) -> dict[str, Any]:
        """The ``server`` block of a message trace event: the system messages' header, next ``seq``."""
        return self.events.server_info()

    # -- clients -------------------------------------------------------------

    def next_client_id(self) -> int:
        self._next_cid += 1
        return self._next_cid

    def add_client(self, client: ClientSession) -> None:
        self.clients[client.cid] = client
        self.total_connections += 1

    def remove_client(self, client: ClientSession, subs: Iterable[Subscription] = ()) -> None:
        """Forget a closed client, telling :attr:`on_client_closed` (with ``subs``, its last subscriptions)."""
        if self.clients.pop(client.cid, None) is not None:
            final = list(subs)
            for callback in self.on_client_closed:
                callback(client, final)
            self.events.disconnected(client)

    def trace_routed(
        self, link: RouteLink, account: Account, message: tuple[str, str, tuple[str, ...], bytes | None, bytes]
    ) -> bool:
        """Trace a message a route brought, if its headers ask for it (see :func:`publish_routed_traced`)."""
        from fakejs.core.msgtrace_route import publish_routed_traced  # only a server in a cluster has routes

        return publish_routed_traced(self, link, account, message)

    def send_async_info(self) -> None:
        """The cluster's client URLs changed: an INFO for every client that takes them.

        As nats-server: clients that said ``"protocol": 1`` in CONNECT and
        got the answer to their first PING (the others learn at that PING).
        """
        for client in list(self.clients.values()):
            if client.protocol >= 1 and client.first_pong_sent and not client.closed and not client.websocket:
                client.send(go_info(self.info_fields(client, update=True)))

    def client_connected(self, client: ClientSession) -> None:
        """A client logged in to its account (CONNECT accepted)."""
        self.events.connected(client)
        for callback in self.on_client_connected:
            callback(client)

    def login_refused(self, client: ClientSession, account: str, reason: str) -> None:
        """Tell ``account`` (the client's own when "") of a refused login: ``$SYS.ACCOUNT.CLIENT.AUTH.ERR``."""
        told = self.accounts.get(account) if account else client.account
        if told is not None:
            self.events.auth_error(client, told, reason)

    def account_connections(self, account: Account) -> int:
        """How many open clients are in ``account``."""
        return sum(1 for client in self.clients.values() if client.account is account and not client.closed)

    @property
    def nonce_required(self) -> bool:
        """Whether each client's INFO carries a nonce to sign (nkey users are configured)."""
        return self.auth.nonce_required or self.jwt_logins is not None

    def login_rules(self, details: TransportDetails) -> LoginRules:
        """How a client on this kind of connection logs in (websocket clients may have their own rules)."""
        return self.auth.rules[details.connection_type]

    def authenticate(
        self,
        connect: dict[str, Any],
        nonce: str,
        details: TransportDetails,
        host: str = "",
        refused: Callable[[LoginRefusal], None] | None = None,
    ) -> tuple[Account, Login] | None:
        """The account the CONNECT options log in to and how, or ``None`` when refused (see :mod:`fakejs.core.auth`).

        A websocket client's credentials may come from its upgrade request's cookies; in
        operator mode the user JWT logs in (see :mod:`fakejs.core.jwt.login`), and a refused one is
        told to ``refused`` (:class:`~fakejs.core.jwt.login.Refused`: the reason, whether nats-server logs it as an
        error rather than a debug line, whether the user's account was found).
        """
        if self.jwt_logins is not None:
            return self._jwt_login(connect, nonce, details, host, refused)
        ws = self.options.websocket
        if ws is not None and details.cookies and details.connection_type == "WEBSOCKET":
            connect = with_cookies(connect, details.cookies, (ws.user_cookie, ws.pass_cookie, ws.token_cookie))
        login = self.auth.login(connect, nonce.encode(), details.peer_certificate, self.login_rules(details))
        if login is None:
            account = self._account_login(connect)
            return (account, OPEN) if account is not None else None
        user = login.user
        tls = self.options.tls
        if user is not None and not user.nkey and tls is not None and tls.verify_and_map and self.auth.users:
            named = connect.get("user")
            if isinstance(named, str) and named:
                # The certificate chose the user; nats-server says so when CONNECT named one too.
                self.log.warning("User %s found in connect proto, but user required from cert", go_quote(named))
        account = self.accounts.get(user.account) if user is not None and user.account else None
        return account or self.accounts.default, login

    def _jwt_login(
        self,
        connect: dict[str, Any],
        nonce: str,
        details: TransportDetails,
        host: str,
        refused: Callable[[LoginRefusal], None] | None,
    ) -> tuple[Account, Login] | None:
        from fakejs.core.jwt.login import Refused  # operator mode (jwt_logins) loaded it

        assert self.jwt_logins is not None
        now = self.clock.time_ns() / 1e9
        try:
            login = self.jwt_logins.login(connect, nonce.encode(), host, details.connection_type, now)
        except Refused as reason:  # nats-server says why in a debug line (a few in an error line)
            if refused is not None:
                refused(reason)
            return None
        account = self.accounts.get(login.user.account)
        if account is None:
            return None
        if account.name not in self.jwt_accounts_used:  # nats-server registers an account at its first use
            self.jwt_accounts_used.add(account.name)
            self._log_unknown_exporters(account.name)
        expires, account_expires = login.expires, login.account_expires
        return account, Login(
            login.user,
            True,
            expires=expires,
            account_expires=account_expires,
            name_tag=login.user.name,
            issuer_key=login.issuer_key,
            tags=login.tags,
        )

    def _log_unknown_exporters(self, name: str) -> None:
        """The lines nats-server logs for each import it cannot find the exporter of, as it registers the account."""
        from fakejs.core.jwt.account_configs import unknown_exporters  # operator mode (jwt_logins) loaded it

        assert self.jwt_logins is not None
        for line in unknown_exporters(self.jwt_logins.accounts[name], self.jwt_logins.accounts):
            self.log.warning("Account fetch failed: account missing")
            self.log.error(line)

    def _account_login(self, connect: dict[str, Any]) -> Account | None:
        """A user and password registered on an account other than ``$G`` (``Account.users``)."""
        user, password = connect.get("user"), connect.get("pass")
        if not isinstance(user, str) or not isinstance(password, str):
            return None
        account = self.accounts.with_user(user)
        if account is None or account is self.accounts.default:
            return None
        return account if self.auth.secrets.same(account.users[user], password) else None


def tls_fields(options: ServerOptions, tls_first: bool) -> dict[str, bool]:
    """INFO's TLS fields: required (always for a client that started TLS first), verify, available."""
    tls = options.tls
    fields: dict[str, bool] = {}
    if tls_first or not options.allow_non_tls:
        fields["tls_required"] = True
    if tls is not None and tls.verify:
        fields["tls_verify"] = True
    if options.allow_non_tls:
        fields["tls_available"] = True
    return fields


def add_configured_accounts(accounts: Accounts, options: ServerOptions) -> None:
    """The ``accounts { }`` of the options (users included), then ``$SYS`` as nats-server always has it."""
    for config in options.accounts:
        account = accounts.get(config.name) or accounts.add(config.name)
        account.max_subscriptions = config.max_subscriptions
        account.max_connections = config.max_connections
        account.name_tag = config.name_tag
        account.trace_dest, account.trace_sampling = config.message_trace
    for user in options.all_users():
        if not user.account:
            continue
        account = accounts.get(user.account) or accounts.add(user.account)
        if user.name:
            account.users[user.name] = user.password
    if options.system_account in ("", SYSTEM_ACCOUNT) and accounts.get(SYSTEM_ACCOUNT) is None:
        accounts.add(SYSTEM_ACCOUNT)
    accounts.add_mappings(options.accounts, options.cluster.name if options.cluster is not None else "")


def check_options(options: ServerOptions) -> None:
    """Reject settings nats-server (or fakejs) cannot start with, naming them."""
    problem = validate(options) or jetstream_problem(options)
    if problem:
        raise ValueError(problem)
    if options.max_payload > options.max_pending:
        raise ValueError(
            f"max_payload ({options.max_payload}) cannot be higher than max_pending ({options.max_pending})"
        )


def wants_callouts(options: ServerOptions) -> bool:
    """Whether a server of ``options`` may have callouts: ``auth_callout``, or operator mode (any account JWT may ask)."""
    return options.auth_callout is not None or bool(options.trusted_operators)
