"""CONNECT: the options a client asks for and the login its credentials make, as nats-server's processConnect.

:class:`ConnectHandling` is the part of :class:`~fakejs.core.session.ClientSession`
that handles CONNECT (and the implicit login of a client that skips it):
it takes on the client's options, checks them, logs the client in through
the server (:meth:`LoginHost.authenticate`), and refuses and closes a
client whose credentials or options are not accepted.  It lives apart from
the session's publish and deliver path, which CONNECT never touches.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

from fakejs.core.accounts import Account
from fakejs.core.auth import Login
from fakejs.core.clientio import AUTH_VIOLATION, KICKED, PROTOCOL_VIOLATION, ClientIO, PeerCertificate
from fakejs.core.clock import Clock, TimerHandle
from fakejs.core.hooks import Hooks
from fakejs.core.keepalive import Keepalive
from fakejs.core.permissions import PermissionChecker
from fakejs.protocol import writer
from fakejs.protocol.events import ERR_AUTHORIZATION, Connect
from fakejs.protocol.parser import Parser

ERR_BAD_PROTOCOL = "invalid client protocol"
ERR_NO_RESPONDERS_HEADERS = "no responders requires headers support"


class LoginHost(Protocol):
    """What logging a client in needs from the server (part of :class:`~fakejs.core.session.SessionHost`)."""

    clock: Clock
    log: logging.Logger
    faults: Hooks

    def client_connected(self, client: Any) -> None: ...

    def authenticate(
        self, connect: dict[str, Any], nonce: str, peer: PeerCertificate | None
    ) -> tuple[Account, Login] | None:
        """The account the CONNECT options (or the client certificate) log in to, or ``None`` when refused."""
        ...


class ConnectHandling:
    """CONNECT and login for a :class:`~fakejs.core.session.ClientSession` (which supplies this state)."""

    broker: LoginHost
    io: ClientIO
    parser: Parser
    keepalive: Keepalive
    cid: int
    opts: dict[str, Any]
    account: Account
    login: Login | None
    perms: PermissionChecker | None
    denies: Callable[[str, str], bool] | None
    nonce: str
    connect_received: bool
    echo: bool
    verbose: bool
    headers: bool
    no_responders: bool
    protocol: int
    started: float
    last_activity: float
    _auth_timer: TimerHandle | None

    # The session's own, used here.
    @property
    def name(self) -> str:
        raise NotImplementedError

    def send(self, frame: bytes) -> None:
        raise NotImplementedError

    def send_err(self, text: str) -> None:
        raise NotImplementedError

    def close(self, reason: str, abort: bool = False) -> None:
        raise NotImplementedError

    def _drop_subscriptions(self) -> None:
        raise NotImplementedError

    # -- CONNECT -------------------------------------------------------------------

    def _on_connect(self, event: Connect) -> None:
        broker = self.broker
        self._stop_auth_timer()
        now = broker.clock.monotonic()
        self.last_activity = now
        self.keepalive.connected(now - self.started)
        self.opts.update(event.options)
        if self.connect_received:
            # nats-server 2.14+ drops every subscription on a repeated CONNECT (it
            # may move the client to another account); the sids become free again.
            self._drop_subscriptions()
        self.connect_received = True
        self._apply_options(self.opts)
        if not self._accept_connect(self.opts):
            return
        if self.verbose:
            self.send(writer.OK)
        faults = broker.faults
        if faults:
            hit = faults.fire("client.connect", cid=self.cid, name=self.name)
            if hit is not None:
                self.close(KICKED, abort=hit.change == "drop")

    def _apply_options(self, opts: dict[str, Any]) -> None:
        """Take on the CONNECT options the session and its parser honour."""
        self.echo = bool(opts.get("echo"))
        self.verbose = bool(opts.get("verbose"))
        self.headers = bool(opts.get("headers"))
        self.no_responders = bool(opts.get("no_responders"))
        self.protocol = int(opts.get("protocol", 0))
        self.parser.headers = self.headers
        self.parser.pedantic = bool(opts.get("pedantic"))

    def _accept_connect(self, opts: dict[str, Any]) -> bool:
        """Authenticate and check the protocol options; a refused client is told why and closed."""
        if not self._log_in(opts):
            return False
        if self.protocol < 0 or self.protocol > 1:
            return self._refuse(ERR_BAD_PROTOCOL, PROTOCOL_VIOLATION)
        if self.no_responders and not self.headers:
            return self._refuse(ERR_NO_RESPONDERS_HEADERS, PROTOCOL_VIOLATION)
        return True

    def _refuse(self, error: str, reason: str) -> bool:
        """Tell the client why (``-ERR``) and close it; False, for the check that refused."""
        self.send_err(error)
        self.close(reason)
        return False

    # -- login -----------------------------------------------------------------------

    def _implicit_login(self) -> bool:
        """Log in as the no_auth_user without a CONNECT; a refused client is told so and closed."""
        self.connect_received = True
        self._stop_auth_timer()
        return self._log_in({})

    def _log_in(self, connect: dict[str, Any]) -> bool:
        """Take on the account, user and permissions the credentials log in to, or refuse and close."""
        broker = self.broker
        result = broker.authenticate(connect, self.nonce, self.io.details.peer_certificate)
        if result is None or connect.get("new_account") or connect.get("account"):
            broker.log.error("%s - authentication error", self)
            return self._refuse(ERR_AUTHORIZATION, AUTH_VIOLATION)
        self.account, self.login = result
        user = self.login.user
        if user is not None:
            # As nats-server, the login names the client (/connz ``authorized_user``), no_auth_user too.
            if user.nkey:
                self.opts["nkey"] = user.nkey
            else:
                self.opts["user"] = user.name
        permissions = user.permissions if user is not None else None
        self.perms = PermissionChecker(permissions, broker.clock.monotonic()) if permissions is not None else None
        self.denies = None
        self.parser.auth_pending = False
        broker.client_connected(self)
        return True

    def _stop_auth_timer(self) -> None:
        if self._auth_timer is not None:
            self._auth_timer.cancel()
            self._auth_timer = None
