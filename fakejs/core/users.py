"""Who may connect, and what each user may publish and subscribe to.

The data behind nats-server's ``authorization { users [...] }`` (and, later,
an account's ``users``): a :class:`User` with a plain or bcrypt password or
an nkey, and its :class:`Permissions`.  Plain frozen data: the
configuration file and the in-process :class:`~fakejs.core.options.ServerOptions`
build it, the session enforces it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SubjectPermission:
    """Allow and deny lists of subjects (wildcards allowed); an empty allow list allows everything.

    Subscribe entries may name a queue group after the subject
    (``"orders.* workers"``): such an entry governs queue subscriptions in
    that group (the queue name may have wildcards).  With ``allow_responses``
    an empty publish allow list allows nothing but replies.
    """

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResponsePermission:
    """``allow_responses``: publishing to the reply subjects of requests received.

    ``max_msgs`` replies per request within ``expires`` seconds, as
    nats-server: 0 means its default (1 reply, 2 minutes), a negative value
    no limit.
    """

    max_msgs: int = 1
    expires: float = 120.0


@dataclass(frozen=True)
class Permissions:
    """A user's ``permissions { publish, subscribe, allow_responses }``; None: that side is unrestricted."""

    publish: SubjectPermission | None = None
    subscribe: SubjectPermission | None = None
    response: ResponsePermission | None = None


@dataclass(frozen=True)
class User:
    """One entry of ``users``: a name and password (plain or ``$2a$`` bcrypt), or an nkey (``U...``).

    ``account`` names the account the user logs in to; empty means the
    global account ``$G``.  ``connection_types`` (nats-server's
    ``allowed_connection_types``, upper case) limits how the user may
    connect; empty allows every kind, and fakejs serves only ``STANDARD``.
    ``max_subscriptions`` is a user JWT's ``subs`` and ``max_payload`` its ``payload``,
    lowered by its account's (-1: no limit of its own).
    """

    name: str = ""
    password: str = ""
    nkey: str = ""
    permissions: Permissions | None = None
    account: str = ""
    connection_types: tuple[str, ...] = ()
    max_subscriptions: int = -1
    max_payload: int = -1


@dataclass(frozen=True)
class AuthCallout:
    """``authorization { auth_callout {...} }`` (nats-server's ``AuthCallout``): logins an outside service decides.

    ``issuer`` is the account public key the service signs user JWTs with,
    ``account`` the account the requests go to (``$G`` unless given),
    ``auth_users`` the users who log in as configured (the service's own),
    ``allowed_accounts`` the accounts whose logins are sent out (empty: all),
    ``xkey`` the service's curve key the requests are encrypted to.
    """

    issuer: str
    account: str = "$G"
    auth_users: tuple[str, ...] = ()
    allowed_accounts: tuple[str, ...] = ()
    xkey: str = ""
