"""The account resolver's requests in the system account, made when a server needs them.

In operator mode (trusted operators, or a resolver directory) the resolver's
requests (:class:`~fakejs.monitoring.claims.ClaimsRequests`) and the accounts it
follows (:class:`~fakejs.core.account_claims.ResolvedAccounts`) are made at the
start.  Out of it the system account still takes account updates
(:data:`UPDATE_SUBJECTS`, nats-server's ``accountClaimUpdate``): they are listened
for here from the start, and the first one that arrives loads the resolver's
machinery (JWTs, the directory) and is answered by it; a server nobody sends
a JWT to never loads it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fakejs.core.router import Subscription

if TYPE_CHECKING:
    from fakejs.core.broker import Broker
    from fakejs.core.options import ServerOptions
    from fakejs.core.sysevents import SystemEvents
    from fakejs.monitoring.claims import ClaimsRequests

__all__ = ["UPDATE_SUBJECTS", "AccountResolver", "resolves_accounts"]

# ``$SYS.REQ.ACCOUNT.<account>.CLAIMS.UPDATE`` and the older ``$SYS.ACCOUNT.<account>.CLAIMS.UPDATE``.
UPDATE_SUBJECTS = ("$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE", "$SYS.ACCOUNT.*.CLAIMS.UPDATE")


def resolves_accounts(options: ServerOptions) -> bool:
    """Operator mode, or a resolver directory: the account resolver serves its requests from the start."""
    return bool(options.trusted_operators) or options.resolver_directory is not None


class AccountResolver:
    """The account resolver's requests of one running server, made at the start or by the first update."""

    def __init__(self, broker: Broker, events: SystemEvents) -> None:
        self.broker, self.events = broker, events
        self._claims: ClaimsRequests | None = None
        self._follow_jetstream: Callable[[], None] | None = None
        self._subs: list[Subscription] = []
        if resolves_accounts(broker.options):
            self._make(listen=True)
        elif events.account is not None:
            router = events.account.router
            self._subs = [router.subscribe_internal(subject, self._on_update) for subject in UPDATE_SUBJECTS]

    @property
    def claims(self) -> ClaimsRequests:
        """The resolver's requests, made now if no update has made them yet."""
        return self._claims if self._claims is not None else self._make(listen=False)

    def _make(self, listen: bool) -> ClaimsRequests:
        # Operator mode, or the first account update out of it, loads the resolver (JWTs, the directory)
        from fakejs.core.account_claims import ResolvedAccounts
        from fakejs.monitoring.claims import ClaimsRequests

        resolved = ResolvedAccounts(self.broker)
        resolved.follow_jetstream = self._follow_jetstream
        updates = UPDATE_SUBJECTS if listen else ()
        self._claims = ClaimsRequests(self.broker, self.events, resolved, updates)
        return self._claims

    def follow_jetstream(self, follow: Callable[[], None]) -> None:
        """What makes the accounts' JetStream follow their JWTs (``ResolvedAccounts.follow_jetstream``)."""
        self._follow_jetstream = follow
        if self._claims is not None:
            self._claims.resolved.follow_jetstream = follow

    def _on_update(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        """An account update out of operator mode: answered as a MEMORY resolver does."""
        self.claims.on_memory_update(subject, reply, headers, payload, origin)

    def stop(self) -> None:
        if self._claims is not None:
            self._claims.stop()
        if self._subs and self.events.account is not None:
            for sub in self._subs:
                self.events.account.router.unsubscribe(sub)
        self._subs.clear()
