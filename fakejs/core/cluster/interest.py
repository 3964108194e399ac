"""One account's side of the cluster: what the other servers want from it, and what it tells them.

:class:`AccountRoutes` hangs on an account's router (``router.remote``)
while the server is in a cluster.  It holds

* the **remote interest**: each route's ``RS+`` becomes a
  :class:`~fakejs.core.router.Subscription` in a subscription index of its
  own, owned by the route connection it came on (queue subscriptions carry
  the remote member count as their ``weight``), so a publish matches local
  and remote subscribers in two lookups and nothing changes for a server
  without routes;
* the **local interest**, nats-server's route map: how many local
  subscriptions (clients and the server's own) there are per subject and
  queue.  A plain subject is announced (``RS+``) when its first
  subscription comes and withdrawn (``RS-``) when its last goes; a queue's
  every change is announced with the new member count as its weight.

Messages from a route are never sent on to another route: every server
of a cluster has a route to every other (a full mesh).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from fakejs.core.router import RouteOwner, Subscription
from fakejs.core.subjects import SubscriptionIndex

__all__ = ["AccountRoutes", "RouteTarget", "RouteTargets"]


class RouteTarget(Protocol):
    """A route connection, as the account sees it: where interest and messages are sent."""

    def announce(self, account: str, subject: str, queue: str, weight: int) -> None:
        """``RS+`` (``weight`` > 0 or a plain subject) or ``RS-`` (``weight`` 0 with a queue, or -1)."""

    def forward(
        self, account: str, subject: str, reply: str, queues: list[str], headers: bytes | None, payload: bytes
    ) -> None:
        """Send one message for the remote server's subscribers (and one member of each queue)."""


class RouteTargets(Protocol):
    """The route connections that carry one account: one per remote server (its pool's connection for it)."""

    def routes_for(self, account: str) -> Iterable[RouteTarget]: ...


class AccountRoutes:
    """The cluster's view of one account: remote subscriptions, local counts, announcements."""

    carries_imports = False  # each server imports for its own clients

    def __init__(self, account: str, targets: RouteTargets) -> None:
        self.account = account
        self.index = SubscriptionIndex()
        self._targets = targets
        # (subject, queue) -> local subscriptions: nats-server's ``acc.rm``.
        self._local: dict[tuple[str, str], int] = {}
        # Each route's subscriptions here, by (subject, queue), to update weights and drop them all at once.
        self._remote: dict[RouteOwner, dict[tuple[str, str], Subscription]] = {}
        # Told of each subject whose remote interest came or went (the account router's interest watchers).
        self.on_change: Callable[[str], None] | None = None

    # -- local interest ------------------------------------------------------------

    def local_changed(self, sub: Subscription, delta: int) -> None:
        """A local subscription came (+1) or went (-1): tell every route when the announcement changes."""
        if sub.local_only:
            return
        key = (sub.subject, sub.queue)
        count = self._local.get(key, 0) + delta
        if count > 0:
            self._local[key] = count
        else:
            self._local.pop(key, None)
        if sub.queue:
            weight = count  # 0: the queue's last member here went
        elif count == 1 and delta > 0:
            weight = 0
        elif count == 0:
            weight = -1
        else:
            return
        for target in self._targets.routes_for(self.account):
            target.announce(self.account, sub.subject, sub.queue, weight)

    def local_changed_quietly(self, sub: Subscription) -> None:
        """Count a subscription that existed before the cluster started (announced when a route comes)."""
        if sub.local_only:
            return
        key = (sub.subject, sub.queue)
        self._local[key] = self._local.get(key, 0) + 1

    def announcements(self) -> Iterator[tuple[str, str, int]]:
        """``(subject, queue, weight)`` of every local subject and queue: what a new route is told first."""
        for (subject, queue), count in self._local.items():
            yield subject, queue, count if queue else 0

    # -- remote interest -----------------------------------------------------------

    def remote_sub(self, route: RouteOwner, subject: str, queue: str, weight: int) -> None:
        """``RS+`` from ``route``: index it, or update a queue's weight."""
        subs = self._remote.setdefault(route, {})
        existing = subs.get((subject, queue))
        if existing is not None:
            existing.weight = max(weight, 1)
            return
        sub = Subscription(subject, queue, "", route)
        sub.weight = max(weight, 1)
        self.index.insert(sub)
        subs[(subject, queue)] = sub
        self._changed(subject)

    def _changed(self, subject: str) -> None:
        if self.on_change is not None:
            self.on_change(subject)

    def remote_unsub(self, route: RouteOwner, subject: str, queue: str) -> None:
        """``RS-`` from ``route``."""
        subs = self._remote.get(route)
        sub = subs.pop((subject, queue), None) if subs else None
        if sub is not None:
            sub.closed = True
            self.index.remove(sub)
            self._changed(subject)

    def drop_route(self, route: RouteOwner) -> None:
        """A route closed: its interest goes with it."""
        for sub in self._remote.pop(route, {}).values():
            sub.closed = True
            self.index.remove(sub)
            self._changed(sub.subject)

    def remote_subscriptions(self, route: RouteOwner) -> list[Subscription]:
        """The subscriptions ``route`` holds here, in the order they came (``/routez?subs=1``)."""
        return list(self._remote.get(route, {}).values())
