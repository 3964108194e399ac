"""Who may use the control API: the holder of a credential, whenever the server asks for one.

The control API reads every message and can delete, reset, restart or
disconnect anything, so it is guarded by whatever guards the server: when
clients need credentials to connect, or a control token is set
(``ServerOptions.control_token``, ``--control_token``), a caller must show
one of those secrets.  Over HTTP that is ``Authorization: Bearer <control or
NATS token>`` or ``Basic`` with a NATS user and password (the single user or
any ``users`` entry, bcrypt hashes checked as nats-server does); over NATS it
is the credential the connection presented in its CONNECT, or an nkey it
proved by signing the nonce (a client connects with ``token=<control
token>`` to an open server; nats-server ignores credentials it does not
need, so this changes nothing else).  A server with neither serves the
control API to anyone who reaches it.

The secret is checked here against the options, not through the broker's
login, so that a later way of logging in without credentials (a default
user such as ``no_auth_user``, accounts) cannot open the control API by
accident.  Plain secrets are compared in constant time.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from typing import Any

from fakejs.core.auth import Authenticator
from fakejs.core.options import ServerOptions
from fakejs.core.session import ClientSession

REALM = "fakejs"


def _host_name(host: str) -> str:
    """``Host`` without its port: ``[::1]:8222`` -> ``::1``, ``a.b:80`` -> ``a.b``."""
    if host.startswith("["):
        return host[1:].partition("]")[0]
    name, colon, port = host.rpartition(":")
    return name if colon and port.isdigit() else host


def _same(expected: str, given: str) -> bool:
    return hmac.compare_digest(expected.encode(), given.encode())


class ControlAccess:
    """The control API's credential check, for both transports."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        self.auth = Authenticator(options)

    @property
    def guarded(self) -> bool:
        """Whether callers must show a credential."""
        return bool(self.options.control_token) or self.options.auth_required

    @property
    def _basic(self) -> bool:
        """NATS logs in with user and password (a token, when both are set, wins as in nats-server)."""
        return bool(self.auth.users) or (bool(self.options.user) and not self.options.token)

    def token_ok(self, token: str) -> bool:
        opts = self.options
        control = bool(opts.control_token) and _same(opts.control_token, token)
        nats = self.auth.token_ok(token)
        return control or nats

    def user_ok(self, user: str, password: str) -> bool:
        if not self._basic:
            return False
        return self.auth.password_ok(user, password)

    # -- HTTP ----------------------------------------------------------------------------

    def allows_http(self, authorization: str) -> bool:
        """Whether an ``Authorization`` header value opens the control API."""
        if not self.guarded:
            return True
        scheme, _, credential = authorization.strip().partition(" ")
        credential = credential.strip()
        if scheme.lower() == "bearer":
            return self.token_ok(credential)
        if scheme.lower() == "basic":
            try:
                decoded = base64.b64decode(credential, validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                return False
            user, colon, password = decoded.partition(":")
            return bool(colon) and self.user_ok(user, password)
        return False

    def host_allowed(self, host: str) -> bool:
        """Whether an HTTP request's ``Host`` may reach the control API of a server without credentials.

        A web page can reach an open server through DNS rebinding: its own
        name (``evil.example``) made to resolve to 127.0.0.1, so the browser
        sends the page's requests there as same-origin.  Such a name always
        has a dot; the names a test harness uses do not (``localhost``, an
        IP address, a container's service name such as ``fakejs``), nor do
        names under ``.localhost``, which browsers resolve to loopback
        themselves.  A guarded server checks credentials instead, so any
        name works there.
        """
        if self.guarded or not host:
            return True
        name = _host_name(host).lower().rstrip(".")
        if not name or name == "localhost" or name.endswith(".localhost") or "." not in name:
            return True
        import ipaddress  # only for a request addressed to a dotted name

        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True

    def challenges(self) -> list[tuple[str, str]]:
        """``WWW-Authenticate`` headers of a 401: the schemes a caller may use."""
        headers = [("WWW-Authenticate", f'Bearer realm="{REALM}"')]
        if self._basic:
            headers.append(("WWW-Authenticate", f'Basic realm="{REALM}", charset="UTF-8"'))
        return headers

    # -- NATS ----------------------------------------------------------------------------

    def allows_nats(self, origin: Any) -> bool:
        """Whether a ``$FAKEJS.>`` request from ``origin`` (the publisher) may run.

        Only a client connection qualifies once the server is guarded (not a
        message the server itself moved, such as a JetStream delivery), and
        only in the account the control API lives in.
        """
        if not self.guarded:
            return True
        if not isinstance(origin, ClientSession) or origin.account is not origin.broker.accounts.default:
            # Hook: once accounts can be configured, the control API belongs to the system
            # account (or an account named in an option), and this is where that is checked.
            return False
        login = origin.login
        if login is not None and login.anonymous:
            return False  # the no_auth_user: no credential shown
        if login is not None and login.signed:
            return True
        connect = origin.opts
        token, user, password = connect.get("auth_token"), connect.get("user"), connect.get("pass")
        if isinstance(token, str) and token and self.token_ok(token):
            return True
        return isinstance(user, str) and isinstance(password, str) and self.user_ok(user, password)
