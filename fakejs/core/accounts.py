"""Accounts: each one a separate subject space with its own users and its own JetStream.

An :class:`Account` holds its :class:`~fakejs.core.router.Router` (so its
subscriptions never see another account's messages), the users who log in
to it and a slot for its JetStream service.  A server without accounts
configured, as every fakejs server is today, has exactly one: the global
account ``$G``, which nats-server also uses for every client then.
:class:`Accounts` is the server's registry of them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from fakejs.core.clock import ErrorSink
from fakejs.core.jetstream_limits import NO_LIMIT
from fakejs.core.router import Router

if TYPE_CHECKING:
    from fakejs.core.account_config import AccountConfig

# The account every client of a server without accounts belongs to.
GLOBAL_ACCOUNT = "$G"


class AccountJetStream(Protocol):
    """What an account needs from the JetStream service attached to it."""

    def stop(self, keep_store: bool = False) -> None:
        """Shut the service down (``keep_store``: a restart follows)."""

    def reserved_bytes(self, memory: bool, exclude: str = "") -> int:
        """Bytes its streams reserve (``max_bytes``) in memory or on disk; the server's store limits count them all."""


class Account:
    """One account: its name, router, users (name -> password) and JetStream, if enabled."""

    def __init__(self, name: str, router: Router) -> None:
        self.name = name
        self.router = router
        self.users: dict[str, str] = {}
        self.jetstream: AccountJetStream | None = None
        # ``limits { max_subscriptions }`` per client, and when a client last logged going over it.
        self.max_subscriptions = NO_LIMIT
        # An account JWT's ``limits { conn }``: clients logged in at once (``NO_LIMIT``: any number).
        self.max_connections = NO_LIMIT
        self.limit_logged_ns: int | None = None
        # ``msg_trace { dest, sampling }``: where messages with a sampled ``traceparent`` are traced.
        self.trace_dest = ""
        self.trace_sampling = 0
        # An account JWT's ``name``: log lines show the account as ``<public key>/<name>``.
        self.name_tag = ""

    @property
    def label(self) -> str:
        """How log lines name the account (nats-server's ``traceLabel``)."""
        return f"{self.name}/{self.name_tag}" if self.name_tag else self.name

    def __repr__(self) -> str:
        return f"<Account {self.name!r}>"


class Accounts:
    """The accounts of one server, starting with the global account.

    Every account's router draws queue members from the server's one
    generator ``rng`` and reports a failed internal handler to ``on_error``.
    """

    def __init__(self, rng: random.Random, on_error: ErrorSink) -> None:
        self._rng = rng
        self._on_error = on_error
        self._by_name: dict[str, Account] = {}
        self.default = self.add(GLOBAL_ACCOUNT)

    def add(self, name: str) -> Account:
        """Register a new account with an empty router."""
        if name in self._by_name:
            raise ValueError(f"account {name!r} already exists")
        account = Account(name, Router(self._rng, self._on_error))
        self._by_name[name] = account
        return account

    def add_mappings(self, configs: list[AccountConfig], cluster: str = "") -> None:
        """Install the configured subject mappings (``mappings { }``) of each account that has them.

        ``cluster`` is the server's cluster name: destinations scoped to it apply.
        """
        for config in configs:
            account = self._by_name.get(config.name)
            if config.mappings and account is not None:
                # Only an account with mappings loads the subject transforms: a plain start has none
                from fakejs.core.mappings import SubjectMappings

                account.router.mappings = SubjectMappings(config.mappings, self._rng, cluster)

    def remove(self, name: str) -> Account | None:
        """Take an account out of the registry (gone from the configuration on a reload)."""
        return self._by_name.pop(name, None)

    def get(self, name: str) -> Account | None:
        return self._by_name.get(name)

    def with_user(self, user: str) -> Account | None:
        """The account ``user`` logs in to, if any."""
        for account in self._by_name.values():
            if user in account.users:
                return account
        return None

    def __iter__(self) -> Iterator[Account]:
        return iter(list(self._by_name.values()))

    def __len__(self) -> int:
        return len(self._by_name)
