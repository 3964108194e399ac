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
    """Allow and deny lists of subjects (wildcards allowed); an empty allow list allows everything."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResponsePermission:
    """``allow_responses``: publishing to the reply subjects of requests received.

    ``max_msgs`` replies per request (nats-server's default 1) within
    ``expires`` seconds (0: no limit).
    """

    max_msgs: int = 1
    expires: float = 0.0


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
    global account ``$G``.
    """

    name: str = ""
    password: str = ""
    nkey: str = ""
    permissions: Permissions | None = None
    account: str = ""
