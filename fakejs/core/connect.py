"""CONNECT: the options a client asks for and the login its credentials make, as nats-server's processConnect.

A :class:`ConnectHandler` belongs to one :class:`~fakejs.core.session.ClientSession`
(it is given the session as a :class:`ConnectingClient`) and handles its
CONNECT and the implicit login of a client that skips it: it takes on the
client's options, checks them, logs the client in through the server
(:meth:`LoginHost.authenticate`), and refuses and closes a client whose
credentials or options are not accepted.  It lives apart from the session's
publish and deliver path, which CONNECT never touches.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from fakejs.core.account_fetch import AccountFetch
from fakejs.core.accounts import Account
from fakejs.core.auth import Login
from fakejs.core.clientio import (
    AUTH_EXPIRED,
    AUTH_VIOLATION,
    BAD_CLIENT_PROTOCOL,
    KICKED,
    MAX_ACCOUNT_CONNECTIONS_EXCEEDED,
    NO_RESPONDERS_REQUIRES_HEADERS,
    ClientIO,
    TransportDetails,
)
from fakejs.core.clock import Clock
from fakejs.core.hooks import Hooks
from fakejs.core.jetstream_limits import NO_LIMIT
from fakejs.core.keepalive import Keepalive
from fakejs.core.options import ServerOptions
from fakejs.core.permissions import PermissionChecker
from fakejs.core.sublimits import apply_limits, tighter
from fakejs.core.trace import auth_user, client_label
from fakejs.core.violations import AUTHENTICATION_ERROR, read_error
from fakejs.protocol import writer
from fakejs.protocol.events import ERR_AUTHORIZATION, Connect
from fakejs.protocol.parser import Parser

ERR_BAD_PROTOCOL = "invalid client protocol"
ERR_MAX_ACCOUNT_CONNECTIONS = "maximum account active connections exceeded"
ERR_AUTH_EXPIRED = "User Authentication Expired"
ERR_ACCOUNT_EXPIRED = "Account Authentication Expired"
ERR_NO_RESPONDERS_HEADERS = "no responders requires headers support"
# A login not looked up yet (``None`` is a refused one).
NOT_YET = object()
Authenticated = tuple[Account, Login] | None | object


class LoginRefusal(Protocol):
    """Why a user JWT login was refused (:class:`fakejs.core.jwt.login.Refused`): ``str()`` is nats-server's line.

    ``error_line``: nats-server logs it as an error, not a debug line;
    ``account_found``: it came after the user's account was found.
    """

    error_line: bool
    account_found: bool


# What an authorization callout hands back: the login, or None and the warning to log after the refusal.
Outcome = tuple[tuple[Account, Login] | None, str]


class CalloutRunner(Protocol):
    """The authorization callout as a login sees it (:class:`~fakejs.core.callout.AuthCallouts`)."""

    def policy(
        self, connect: dict[str, Any], result: tuple[Account, Login] | None, refusal: LoginRefusal | None = None
    ) -> Any:
        """The callout that decides this CONNECT's login (``refusal``: why its JWT login failed), or None."""
        ...

    def shown(self, connect: dict[str, Any], prior: Any) -> Mapping[str, Any]:
        """The CONNECT as the callout sees it (a client without credentials as the no_auth_user)."""
        ...

    def told_account(self, policy: Any) -> str:
        """The account told when the callout ``policy`` refuses a login."""
        ...

    def guarded(self, result: tuple[Account, Login] | None) -> tuple[Account, Login] | None:
        """A configured login with the callout's own subject denied where nats-server denies it."""
        ...

    def start(
        self, client: Any, connect: dict[str, Any], policy: Any, done: Callable[[Outcome], None], prior: Any = None
    ) -> None:
        """Send the request; ``done`` gets the outcome later."""
        ...

    def refusals_to(self) -> str:
        """The account told of logins refused without a callout ("": the client's own)."""
        ...


class LoginHost(Protocol):
    """What logging a client in needs from the server (part of :class:`~fakejs.core.session.SessionHost`)."""

    clock: Clock
    log: logging.Logger
    faults: Hooks
    options: ServerOptions

    def client_connected(self, client: Any) -> None: ...

    def account_connections(self, account: Account) -> int:
        """How many open clients are in ``account`` (the one logging in included)."""
        ...

    @property
    def callouts(self) -> CalloutRunner | None:
        """The authorization callout (``auth_callout``), if configured."""
        ...

    def login_refused(self, client: Any, account: str, reason: str) -> None:
        """Tell ``account`` (the client's own when "") of a refused login (``$SYS.ACCOUNT.CLIENT.AUTH.ERR``)."""
        ...

    def authenticate(
        self,
        connect: dict[str, Any],
        nonce: str,
        details: TransportDetails,
        host: str = "",
        refused: Callable[[LoginRefusal], None] | None = None,
    ) -> tuple[Account, Login] | None:
        """The account the CONNECT options (or the client certificate, cookies) log in to, or ``None`` when refused.

        ``refused`` hears why a JWT login was refused.
        """
        ...


class ConnectingClient(Protocol):
    """The session's state and actions a CONNECT changes (what :class:`ConnectHandler` is given)."""

    @property
    def broker(self) -> LoginHost: ...

    @property
    def io(self) -> ClientIO: ...

    @property
    def parser(self) -> Parser: ...

    @property
    def keepalive(self) -> Keepalive: ...

    @property
    def cid(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def nonce(self) -> str: ...

    @property
    def host(self) -> str: ...

    @property
    def started(self) -> float: ...

    @property
    def websocket(self) -> bool: ...

    @property
    def subscription_count(self) -> int: ...

    opts: dict[str, Any]
    label: str
    account: Account
    login: Login | None
    perms: PermissionChecker | None
    denies: Callable[[str, str], bool] | None
    connect_received: bool
    echo: bool
    verbose: bool
    headers: bool
    no_responders: bool
    protocol: int
    max_subs: int
    closed: bool
    last_activity: float

    def send(self, frame: bytes) -> None: ...

    def send_err(self, text: str) -> None: ...

    def refuse(self, error: str, reason: str) -> bool: ...

    def close(self, reason: str = ..., abort: bool = False) -> None: ...

    def drop_subscriptions(self) -> None: ...

    def stop_auth_timer(self) -> None: ...

    paused: bool

    def resume(self) -> None: ...


class ConnectHandler:
    """CONNECT and login for one client session."""

    __slots__ = ("_client", "_refusals_to")

    def __init__(self, client: ConnectingClient) -> None:
        self._client = client
        # The account told of a refused login ($SYS.ACCOUNT.CLIENT.AUTH.ERR); "": the client's own.
        self._refusals_to = ""

    def on_connect(self, event: Connect) -> None:
        client = self._client
        broker = client.broker
        client.stop_auth_timer()
        now = broker.clock.monotonic()
        client.last_activity = now
        client.keepalive.connected(now - client.started)
        client.opts.update(event.options)
        first = not client.connect_received
        if not first:
            # nats-server 2.14+ drops every subscription on a repeated CONNECT (it
            # may move the client to another account); the sids become free again.
            client.drop_subscriptions()
        client.connect_received = True
        self._apply_options(client.opts)
        self._decide(first)

    def _decide(self, first: bool) -> bool:
        """Log the client in and accept its CONNECT; False while the login waits (a callout, an account fetch)."""
        client = self._client
        broker = client.broker
        try:
            callouts = broker.callouts
            result: Authenticated = NOT_YET
            if callouts is not None:
                refusals: list[LoginRefusal] = []

                def refused(refusal: LoginRefusal) -> None:
                    refusals.append(refusal)
                    self._login_refused(refusal)

                result = broker.authenticate(client.opts, client.nonce, client.io.details, client.host, refused)
                policy = callouts.policy(client.opts, result, refusals[0] if refusals else None)
                if policy is not None:
                    prior = result[1] if isinstance(result, tuple) else None
                    client.opts.update(callouts.shown(client.opts, prior))  # as nats-server: the no_auth_user's
                    self._call_out(dict(client.opts), first, policy, prior)
                    return False
                result = callouts.guarded(result)
                self._refusals_to = callouts.refusals_to()
            if not self._accept(client.opts, first, result):
                return True
        except AccountFetch as fetch:
            self._await_account(fetch, first)
            return False
        self._connected()
        return True

    def _await_account(self, fetch: AccountFetch, first: bool) -> None:
        """Hold the client's input while the other servers are asked for its account (see fakejs.core.account_fetch).

        The login is then tried again, as after an authorization callout's answer.
        """
        client = self._client
        client.paused = True

        def fetched() -> None:
            if client.closed:
                return
            if self._decide(first) and not client.closed:
                client.resume()

        fetch.wait(fetched)

    def _connected(self) -> None:
        """The CONNECT is accepted: ``+OK`` for a verbose client, and the ``client.connect`` hook point."""
        client = self._client
        faults = client.broker.faults
        if client.verbose:
            client.send(writer.OK)
        if faults:
            hit = faults.fire("client.connect", cid=client.cid, name=client.name)
            if hit is not None:
                client.close(KICKED, abort=hit.change == "drop")

    def _call_out(self, connect: dict[str, Any], first: bool, policy: Any, prior: Login | None) -> None:
        """Hold the client's input while the authorization callout decides its login (see fakejs.core.callout)."""
        client = self._client
        callouts = client.broker.callouts
        assert callouts is not None
        client.paused = True

        def decided(outcome: Outcome) -> None:
            if client.closed:
                return
            result, warning = outcome
            if result is None:
                self._refuse_login(connect, told=False)
                if warning:
                    client.broker.log.warning("%s", warning)
                client.broker.login_refused(client, callouts.told_account(policy), warning)
                return
            client.opts.pop("jwt", None)  # as nats-server, the callout's user replaces the JWT's
            self._take_login(*result, named=False)
            named = result[1].user.name if result[1].user is not None else ""
            if named:  # the response's user name replaces the credentials the client showed
                for key in ("nkey", "auth_token"):
                    client.opts.pop(key, None)
                client.opts["user"] = named
            if not self._checked(first):
                return
            self._connected()
            client.resume()

        callouts.start(client, connect, policy, decided, prior)

    def implicit_login(self) -> bool:
        """Log in as the no_auth_user without a CONNECT; a refused client is told so and closed."""
        client = self._client
        client.connect_received = True
        client.stop_auth_timer()
        return self._log_in({})

    def _apply_options(self, opts: dict[str, Any]) -> None:
        """Take on the CONNECT options the session and its parser honour."""
        client = self._client
        client.echo = bool(opts.get("echo"))
        client.verbose = bool(opts.get("verbose"))
        client.headers = bool(opts.get("headers"))
        client.no_responders = bool(opts.get("no_responders"))
        client.protocol = int(opts.get("protocol", 0))
        client.parser.headers = client.headers
        client.parser.pedantic = bool(opts.get("pedantic"))

    def _accept(self, opts: dict[str, Any], first: bool, result: Authenticated = NOT_YET) -> bool:
        """Authenticate (unless ``result`` is the login already made) and check the protocol options."""
        return self._log_in(opts, result) and self._checked(first)

    def _checked(self, first: bool) -> bool:
        """The protocol options checked once logged in; a refused client is told why and closed."""
        client = self._client
        if first:
            client.label = client_label(client.opts, client.account.label)
        if client.protocol < 0 or client.protocol > 1:
            return self._refuse(ERR_BAD_PROTOCOL, BAD_CLIENT_PROTOCOL)
        if client.no_responders and not client.headers:
            return self._refuse(ERR_NO_RESPONDERS_HEADERS, NO_RESPONDERS_REQUIRES_HEADERS)
        return True

    def _refuse(self, error: str, reason: str) -> bool:
        """nats-server's order for a CONNECT it refuses after the login: -ERR, closed, then the error line."""
        client = self._client
        client.refuse(error, reason)
        client.broker.log.error("%s - %s", client, read_error(error) if client.websocket else error)
        return False

    def _login_refused(self, refusal: LoginRefusal) -> None:
        """nats-server's line saying why a JWT login was refused (debug, or error for a few), before its auth error."""
        client = self._client
        (client.broker.log.error if refusal.error_line else client.broker.log.debug)("%s - %s", client, refusal)

    def _log_in(self, connect: dict[str, Any], result: Authenticated = NOT_YET) -> bool:
        """Take on the account, user and permissions the credentials log in to, or refuse and close."""
        client = self._client
        if result is NOT_YET:
            result = client.broker.authenticate(
                connect, client.nonce, client.io.details, client.host, self._login_refused
            )
        if not isinstance(result, tuple) or connect.get("new_account") or connect.get("account"):
            return self._refuse_login(connect)
        return self._take_login(*result)

    def _refuse_login(self, connect: dict[str, Any], told: bool = True) -> bool:
        """nats-server's ``authViolation``: the error line, ``-ERR 'Authorization Violation'``, closed.

        ``told``: the account's ``$SYS.ACCOUNT.CLIENT.AUTH.ERR`` event goes first (a callout's comes after).
        """
        client = self._client
        log = client.broker.log
        if told:
            client.broker.login_refused(client, self._refusals_to, AUTH_VIOLATION)
        presented = auth_user(connect)
        log.error("%s - authentication error%s", client, f" - {presented}" if presented else "")
        client.refuse(ERR_AUTHORIZATION, AUTH_VIOLATION)
        if client.websocket:  # the error the parser returns, as the websocket read loop logs it
            log.error("%s - %s", client, read_error(AUTHENTICATION_ERROR))
        return False

    def _take_login(self, account: Account, login: Login, named: bool = True) -> bool:
        """The client joins ``account`` as ``login`` (its limits, permissions, expiry); False: no room, closed.

        ``named``: the login's user names the client (its nkey or name), as a configured login does.
        """
        client = self._client
        broker = client.broker
        client.account, client.login = account, login
        if not account_has_room(client):  # nats-server logs it before closing and after
            broker.log.error("%s - %s", client, ERR_MAX_ACCOUNT_CONNECTIONS)
            return self._refuse(ERR_MAX_ACCOUNT_CONNECTIONS, MAX_ACCOUNT_CONNECTIONS_EXCEEDED)
        expire_login(client)
        user = login.user
        if user is not None:  # registered with the user's account: its limits apply
            limit_payload(client, broker.options, broker.log, user.max_payload)
            apply_limits(client, broker.options, broker.clock, broker.log, user.max_subscriptions)
        if user is not None and named and not _named_beside_jwt(client.opts, login):
            # As nats-server, the login names the client (/connz ``authorized_user``), no_auth_user too.
            if user.nkey:
                client.opts["nkey"] = user.nkey
            else:
                client.opts["user"] = user.name
        permissions = user.permissions if user is not None else None
        client.perms = PermissionChecker(permissions, broker.clock.monotonic()) if permissions is not None else None
        client.denies = None
        client.parser.auth_pending = False
        broker.client_connected(client)
        return True


def account_has_room(client: ConnectingClient) -> bool:
    """nats-server's ``MaxTotalConnectionsReached``: the account's ``conn`` limit leaves room for the client."""
    account = client.account
    if account.max_connections < 0:
        return True
    return client.broker.account_connections(account) <= account.max_connections


def limit_payload(client: ConnectingClient, options: ServerOptions, log: logging.Logger, user_limit: int) -> None:
    """A user JWT's ``payload`` limit (lowered by its account's) for the client's messages, as ``applyAccountLimits``.

    The server's ``max_payload`` lowers it in turn, and nats-server says so in a debug line.
    """
    limit = tighter(user_limit, options.max_payload)
    if user_limit != NO_LIMIT and limit != user_limit:
        log.debug(
            "%s - Max Payload set to %d from server overrides account or user config", client, options.max_payload
        )
    client.parser.max_payload = limit


def expire_login(client: ConnectingClient) -> None:
    """A login that expires (a user JWT's ``exp``) ends then: ``-ERR 'User Authentication Expired'``, closed.

    When its account's JWT expires first, nats-server closes every client of
    the account then: ``-ERR 'Account Authentication Expired'``.  The
    server's clock drives both (a virtual clock too).
    """
    login = client.login
    if login is None:
        return
    clock = client.broker.clock
    now = clock.time_ns() / 1e9
    if login.expires:
        clock.call_later(max(login.expires - now, 0.0), _expired, client, login, ERR_AUTH_EXPIRED)
    if login.account_expires:
        clock.call_later(max(login.account_expires - now, 0.0), _account_expired, client, login, login.account_expires)


def follow_account_expiry(client: ConnectingClient, expires: int) -> None:
    """A new account JWT's ``exp`` (0: never) for the client's login: the old expiry no longer ends it.

    As nats-server's ``checkExpiration`` re-arms the account's timer: a later or
    earlier ``exp`` ends the login then, none never; one already past arms nothing.
    """
    login = client.login
    if login is None or login.account_expires == expires:
        return
    login.account_expires = expires
    clock = client.broker.clock
    now = int(clock.time_ns() // 1_000_000_000)  # nats-server counts whole seconds here
    if expires > now:
        clock.call_later(expires - clock.time_ns() / 1e9, _account_expired, client, login, expires)


def _account_expired(client: ConnectingClient, login: Login, expires: int) -> None:
    if login.account_expires == expires:  # a newer account JWT has not moved the expiry since
        _expired(client, login, ERR_ACCOUNT_EXPIRED)


def _expired(client: ConnectingClient, login: Login, error: str) -> None:
    if client.closed or client.login is not login:
        return
    user_key = login.user.nkey if login.user is not None else ""
    client.broker.log.debug("%s - %s - Account:%s - jwt:%s", client, error, client.account.label, user_key)
    client.send_err(error)
    client.close(AUTH_EXPIRED)


def _named_beside_jwt(opts: Mapping[str, Any], login: Login) -> bool:
    """A user JWT's login whose CONNECT also gave an nkey or user name: that names the client, not the JWT's key.

    (nats-server's ``getRawAuthUser`` reads the CONNECT's nkey, then its user, then the JWT's key.)
    """
    return bool(opts.get("jwt") and login.issuer_key) and bool(opts.get("nkey") or opts.get("user"))
