"""Configuration reload, as nats-server's Reload: new options applied to a running server.

:func:`reload_options` compares the running options with new ones
(:func:`fakejs.core.reload_options.diff_options`); an option that cannot
be reloaded refuses the whole reload (:class:`ReloadRefused`), the running
configuration kept; a SIGHUP logs it as nats-server's ``Failed to reload
server configuration: ...`` line (:data:`FAILED`), a system account request
answers it.  Otherwise each change is applied in nats-server's order and
logged (``Reloaded: ...``), then ``Reloaded server configuration``; what a
change does beyond the options (files, TLS, routes, JetStream) is given by
the caller (:mod:`fakejs.server.reload_steps`).

The accounts are configured again when they changed
(:mod:`fakejs.core.account_reload`): a client whose user moved to another
account, or whose account is gone, is closed as one whose user is gone.
In operator mode the accounts a resolver looked up since the start stay
(:mod:`fakejs.core.account_claims`), and a user JWT's client stays while
its account does.

A change of the authorization settings checks every connected client
again, as nats-server's reloadAuthorization: a client whose user is gone
is closed (``Client Closed``, no ``-ERR``); one whose credentials no
longer log in is told ``-ERR 'Authorization Violation'`` and closed; a
subscription the client's new permissions no longer allow is removed and
the client told ``-ERR 'Permissions Violation for Subscription to
"<subject>" (sid "<sid>")'``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from fakejs.core.account_claims import carry_over_logins, keep_resolved_accounts
from fakejs.core.account_fetch import AccountFetch
from fakejs.core.account_reload import reconfigure_accounts
from fakejs.core.auth import Authenticator
from fakejs.core.broker import Broker
from fakejs.core.clientio import (
    AUTH_VIOLATION,
    CLIENT_CLOSED,
    MAX_CONNECTIONS_EXCEEDED,
    STANDARD,
    TLS_HANDSHAKE_ERROR,
)
from fakejs.core.jwt.login import jwt_logins
from fakejs.core.options import ServerOptions
from fakejs.core.permissions import PermissionChecker
from fakejs.core.reload_options import Change, ReloadRefused, diff_options
from fakejs.core.session import TOO_MANY_CONNECTIONS, ClientSession
from fakejs.core.trace import ProtocolTrace, auth_user
from fakejs.gocompat.goflag import go_quote
from fakejs.protocol.events import ERR_AUTHORIZATION

__all__ = ["AUTH_FIELDS", "FAILED", "ReloadRefused", "recheck_pinned_certs", "reload_options"]

FAILED = "Failed to reload server configuration: %s"
# Options whose change makes every client log in again.
AUTH_FIELDS = frozenset({"user", "password", "token", "users", "accounts", "auth_timeout"})
# Options whose change the process's log handler must follow (debug and trace lines).
LOGGING_FIELDS = frozenset({"debug", "trace", "log_file"})
# Options whose change gives every connected client a new protocol trace.
TRACE_FIELDS = frozenset({"trace", "trace_headers", "max_traced_msg_len"})
# What a change of an option does beyond the options themselves (files written), run before its line.
Actions = Mapping[str, Callable[[], None]]


def reload_options(
    broker: Broker,
    new: ServerOptions,
    on_logging: Callable[[ServerOptions], None] | None = None,
    actions: Actions | None = None,
    finish: Callable[[set[str]], None] | None = None,
) -> list[Change]:
    """Apply ``new`` over the running options, or raise :class:`ReloadRefused` keeping them.

    The log handler follows the new settings once every ``Reloaded:`` line is
    logged (the line naming a new log file goes to the old one, as on nats-server).
    ``finish`` gets the names of the options changed before the last line
    (JetStream is started or stopped there).
    """
    current = broker.options
    # A random port (-1, or 0) is the port the server listens on, in the running options and the new ones.
    running = replace(current, port=broker.port) if current.port <= 0 else current
    if new.port <= 0:
        new.port = running.port
    keep_resolved_accounts(broker, new)
    changes = diff_options(running, new)
    names = {change.field for change in changes}
    accounts_changed = (running.accounts, running.users) != (new.accounts, new.users)
    for name in {name.split(":")[0] for name in names}:
        setattr(current, name, getattr(new, name))
    current.config_digest = new.config_digest
    for change in changes:
        if change.field == "max_connections" and change.line.startswith("Reloaded: max_connections"):
            _close_beyond(broker, current.max_connections)
        action = (actions or {}).get(change.field)
        if action is not None:
            action()
        if change.line:
            broker.log.info("%s", change.line)
    if on_logging is not None and names & LOGGING_FIELDS:
        on_logging(current)
    if names & TRACE_FIELDS:
        _retrace(broker)
    if names & {"max_payload", "max_control_line"}:
        for client in list(broker.clients.values()):
            client.parser.max_payload = current.max_payload
            client.parser.max_control_line = current.max_control_line
    if names & AUTH_FIELDS:
        _reload_authorization(broker, accounts_changed)
    if finish is not None:
        finish(names)
    digest = f"({current.config_digest})" if current.config_digest else ""
    broker.log.info("Reloaded server configuration %s", digest)
    return changes


def _retrace(broker: Broker) -> None:
    """Connected clients follow the new trace setting (nats-server's reloadClientTraceLevel)."""
    options = broker.options
    for client in list(broker.clients.values()):
        if options.trace:
            client.trace = ProtocolTrace(broker.log, client, options.max_traced_msg_len, options.trace_headers)
            client.parser.trace = client.trace.incoming
        else:
            client.trace = None
            client.parser.trace = None


def _close_beyond(broker: Broker, limit: int) -> None:
    """A lower max_connections closes the clients beyond it (nats-server's maxConnExceeded)."""
    clients = [client for client in broker.clients.values() if not client.closed]
    excess = len(clients) - max(0, limit)
    if excess <= 0:
        return
    for client in clients[:excess]:
        client.refuse(TOO_MANY_CONNECTIONS, MAX_CONNECTIONS_EXCEEDED)
    broker.log.info("Closed %d connections to fall within max_connections", excess)


def _reload_authorization(broker: Broker, accounts_changed: bool) -> None:
    """New credential checks, then every logged-in client checked against them (reloadAuthorization).

    The accounts are configured again only when they changed: reply subjects
    of requests in flight through service imports survive a reload otherwise.
    """
    options = broker.options
    default_users = broker.accounts.default.users
    default_users.clear()
    if options.user:
        default_users[options.user] = options.password
    broker.auth = Authenticator(options, broker.auth.secrets)
    previous_logins, broker.jwt_logins = broker.jwt_logins, jwt_logins(options)
    carry_over_logins(previous_logins, broker.jwt_logins)
    if accounts_changed:
        reconfigure_accounts(broker)
    logged_in = [client for client in broker.clients.values() if client.login is not None and not client.closed]
    staying: list[ClientSession] = []
    for client in logged_in:  # clients whose user is gone are closed first, as nats-server's
        if _user_gone(broker, client):
            client.close(CLIENT_CLOSED)
        else:
            staying.append(client)
    for client in staying:
        if not client.closed:
            _recheck(broker, client)


def _user_gone(broker: Broker, client: ClientSession) -> bool:
    """nats-server's clientHasMovedToDifferentAccount: the user is no longer configured (or changed account)."""
    login = client.login
    user = login.user if login is not None else None
    if user is None:
        return False
    if broker.jwt_logins is not None and client.opts.get("jwt"):  # operator mode: the user's account must remain
        return user.account not in broker.jwt_logins.accounts
    now = broker.auth.nkeys.get(user.nkey) if user.nkey else broker.auth.users.get(user.name)
    return now is None or now.account != user.account


def _recheck(broker: Broker, client: ClientSession) -> None:
    """Log the client in again with its CONNECT; refuse it, or take on its new permissions."""
    try:
        result = broker.authenticate(client.opts, client.nonce, client.io.details)
    except AccountFetch:  # a reload does not wait for other servers: the account is gone here
        result = None
    if result is None or result[0] is not client.account:
        presented = auth_user(client.opts)
        broker.log.error("%s - authentication error%s", client, f" - {presented}" if presented else "")
        client.refuse(ERR_AUTHORIZATION, AUTH_VIOLATION)
        return
    client.login = result[1]
    user = client.login.user
    permissions = user.permissions if user is not None else None
    client.perms = PermissionChecker(permissions, broker.clock.monotonic()) if permissions is not None else None
    client.denies = None
    _remove_unauthorized(broker, client)


def _remove_unauthorized(broker: Broker, client: ClientSession) -> None:
    """nats-server's processSubsOnConfigReload: subscriptions the new permissions deny are removed."""
    perms = client.perms
    if perms is None:
        return
    who = auth_user(client.opts)
    for sub in list(client.subs.values()):
        if perms.can_subscribe(sub.subject, sub.queue):
            continue
        client.account.router.unsubscribe(sub)
        client.remove_subscription(sub)
        subject, sid = go_quote(sub.subject), go_quote(sub.sid)
        if sub.queue:
            queue = go_quote(sub.queue)
            client.send_err(f"Permissions Violation for Subscription to {subject} using queue {queue} (sid {sid})")
            broker.log.info("Removed sub %s using queue %s (sid %s) for %s - not authorized", subject, queue, sid, who)
        else:
            client.send_err(f"Permissions Violation for Subscription to {subject} (sid {sid})")
            broker.log.info("Removed sub %s (sid %s) for %s - not authorized", subject, sid, who)


def recheck_pinned_certs(broker: Broker, pinned_certs: list[str]) -> None:
    """New ``pinned_certs``: clients of the NATS port whose certificate is not pinned are closed.

    As nats-server's recheckPinnedCerts, once the reload is done (``Disconnect
    N clients due to pinned certs reload``, closed as a TLS handshake failure);
    no pins at all let every client stay.
    """
    if not pinned_certs:
        return
    pinned = frozenset(pinned_certs)
    unpinned = [
        client
        for client in broker.clients.values()
        if not client.closed and client.io.details.connection_type == STANDARD and not _pinned(client, pinned)
    ]
    if not unpinned:
        return
    broker.log.info("Disconnect %d clients due to pinned certs reload", len(unpinned))
    for client in unpinned:
        client.close(TLS_HANDSHAKE_ERROR)


def _pinned(client: ClientSession, pinned: frozenset[str]) -> bool:
    certificates = client.io.details.tls_peer_certs
    return bool(certificates) and certificates[0]["spki_sha256"] in pinned
