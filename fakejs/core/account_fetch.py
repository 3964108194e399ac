"""An account JWT asked of the other servers: nats-server's ``fetch`` behind a full or cache resolver.

A login whose account the server has not made, and whose JWT its directory
does not hold, makes the resolver raise :class:`AccountFetch`: the login
waits (the client's input held, as during an authorization callout) while
:class:`ClusterFetch` publishes ``$SYS.REQ.ACCOUNT.<account>.CLAIMS.LOOKUP``
in the system account, with a reply subject of the server's own
(``$SYS._INBOX.<hash of the server name>.<8>``).  The other full resolvers answer with the JWT
they hold, or an empty message when they have none; cache resolvers do not
answer, nor does the asking server itself (nats-server sends its requests
without echo).  The first JWT wins; an empty
answer counts only once every other server connected by a route has
answered (``account jwt not found``); no answer within the resolver's
``timeout`` (1.9 s unless set), on the server's clock, is ``fetching jwt
timed out``.  A JWT received is stored in the directory unless a newer one
is there (``saveIfNewer``; a cache's ``ttl`` starts), and the login is
tried again: it finds the account, or is refused with ``Account JWT lookup
error: <why>`` after nats-server's ``Account [<key>] fetch took <time>``
(a warning past a second, else a debug line) and ``Account fetch failed:
<why>`` lines.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import Any

from fakejs.core.accounts import Account
from fakejs.core.clock import Clock, TimerHandle
from fakejs.gocompat import ids
from fakejs.gocompat.gotime import format_duration

LOOKUP_SUBJECT = "$SYS.REQ.ACCOUNT.{}.CLAIMS.LOOKUP"
TIMED_OUT = "fetching jwt timed out"
NOT_FOUND = "account jwt not found"
SLOW_FETCH_NS = 1_000_000_000  # nats-server warns of a fetch that took longer than a second


def response_inbox(server_name: str, rng: random.Random) -> str:
    """nats-server's ``newRespInbox``: ``$SYS._INBOX.<hash of the server name>.<8 random characters>``."""
    return f"$SYS._INBOX.{ids.get_hash(server_name)}.{ids.token(rng, ids.BASE62, 8)}"


class AccountFetch(Exception):
    """The login's account is asked of the cluster: :meth:`wait` calls back once the answer is in."""

    def __init__(self, key: str, fetcher: ClusterFetch) -> None:
        super().__init__(key)
        self.key, self.fetcher = key, fetcher

    def wait(self, done: Callable[[], None]) -> None:
        """Start the fetch; ``done`` is called on a later turn of the loop, once the account is known or refused."""
        self.fetcher.start(self.key, done)


class ClusterFetch:
    """nats-server's ``Server.fetch`` for one server: lookups sent in its system account, one per waiting login.

    ``store`` keeps a JWT received (:class:`str` error text when the directory
    refuses it, "" when kept), ``servers`` counts the other servers that
    answer, and :attr:`outcomes` holds, for the login tried again, how its
    account's fetch ended.
    """

    def __init__(
        self,
        account: Account,
        clock: Clock,
        rng: random.Random,
        log: logging.Logger,
        timeout: float,
        store: Callable[[str, str], str],
        servers: Callable[[], int],
        server_name: str = "",
    ) -> None:
        self.account, self.clock, self.random, self.log = account, clock, rng, log
        self.server_name = server_name
        self.timeout = timeout
        self.store, self.servers = store, servers
        # How the latest fetch of an account ended ("": its JWT is stored, else why not), for the login tried again.
        self.outcomes: dict[str, str] = {}
        self.pending: set[_Lookup] = set()

    def start(self, key: str, done: Callable[[], None]) -> None:
        inbox = response_inbox(self.server_name, self.random)
        lookup = _Lookup(self, key, done, self.servers())
        lookup.inbox = inbox
        self.pending.add(lookup)
        lookup.subscription = self.account.router.subscribe_internal(inbox, lookup.on_reply)
        lookup.timer = self.clock.call_later(self.timeout, lookup.on_timeout)
        self.account.router.publish(LOOKUP_SUBJECT.format(key), inbox, None, b"")

    def asked(self, reply: str) -> bool:
        """Whether ``reply`` is one of this server's own lookups (its own resolver does not answer it).

        (nats-server sends its requests without echo: its own system subscriptions do not see them.)
        """
        return any(lookup.inbox == reply for lookup in self.pending)

    def stop(self) -> None:
        """The server stops: the lookups under way end without an answer (their logins stay held until closed)."""
        for lookup in list(self.pending):
            lookup.cancel()


class _Lookup:
    """One lookup under way: its reply subscription and time-out, until the first answer that counts."""

    def __init__(self, fetch: ClusterFetch, key: str, done: Callable[[], None], expected: int) -> None:
        self.fetch, self.key, self.done = fetch, key, done
        self.expected = expected  # the other servers, whose empty answers are awaited before "not found"
        self.started = fetch.clock.monotonic()
        self.inbox = ""
        self.subscription: Any = None
        self.timer: TimerHandle | None = None
        self.finished = False

    def on_reply(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        if self.finished:
            return
        self.expected -= 1
        if not payload and self.expected > 0:
            return
        self._finish(self.fetch.store(self.key, payload.decode(errors="replace")) if payload else NOT_FOUND)

    def on_timeout(self) -> None:
        if not self.finished:
            self.timer = None
            self._finish(TIMED_OUT)

    def cancel(self) -> None:
        """No more waiting: the time-out and the reply subscription are gone."""
        self.finished = True
        self.fetch.pending.discard(self)
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.fetch.account.router.unsubscribe(self.subscription)

    def _finish(self, error: str) -> None:
        """nats-server's lines for the fetch, then the login tried again (on the next turn of the loop)."""
        fetch = self.fetch
        self.cancel()
        took = int((fetch.clock.monotonic() - self.started) * 1e9)
        line = fetch.log.warning if took > SLOW_FETCH_NS else fetch.log.debug
        line("Account [%s] fetch took %s", self.key, format_duration(took))
        if error:
            fetch.log.warning("Account fetch failed: %s", error)
        fetch.clock.call_soon(self._done, error)

    def _done(self, error: str) -> None:
        self.fetch.outcomes[self.key] = error
        try:
            self.done()
        finally:
            self.fetch.outcomes.pop(self.key, None)
