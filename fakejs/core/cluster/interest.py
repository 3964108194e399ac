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

    def announce(self, account: str, subject: str, queue: str, weight: int, origin: str = "") -> None:
        """``RS+`` (``weight`` > 0 or a plain subject) or ``RS-`` (``weight`` 0 with a queue, or -1);
        ``LS+``/``LS-`` for a leaf connection's interest from the cluster ``origin``."""

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
        # (subject, queue, origin) -> local subscriptions: nats-server's ``acc.rm`` (a leaf cluster's as its origin).
        self._local: dict[tuple[str, str, str], int] = {}
        # Each route's subscriptions here, by (subject, queue, origin), to update weights and drop them all at once.
        self._remote: dict[RouteOwner, dict[tuple[str, str, str], Subscription]] = {}
        # Some remote queue members stand for a leaf connection there (taken last); set by the first one.
        self.has_fallbacks = False
        # Told of each subject whose remote interest came or went (the account router's interest watchers).
        self.on_change: Callable[[str], None] | None = None
        # Told of each change in the routes' count on a subject and queue (the account's leaf connections).
        self.on_count: Callable[[str, str, int], None] | None = None

    def takes_imported(self, owner: RouteOwner) -> bool:
        """Never asked: a route carries no stream import's messages."""
        return False

    # -- local interest ------------------------------------------------------------

    def local_changed(self, sub: Subscription, delta: int) -> None:
        """A local subscription came (+1) or went (-1): tell every route when the announcement changes."""
        if not sub.local_only:
            self.count_changed(sub.subject, sub.queue, delta)

    def count_changed(self, subject: str, queue: str, delta: int, origin: str = "") -> None:
        """``delta`` more (or fewer) subscriptions here on ``subject`` and ``queue``: a leaf connection's count too.

        A plain subject is announced when its count leaves 0 and withdrawn
        when it returns there; a queue's every change is announced with its
        new count as the weight.  A leaf connection's interest is announced
        apart, naming the cluster it comes from (``origin``) when it has one.
        """
        key = (subject, queue, origin)
        before = self._local.get(key, 0)
        count = before + delta
        if count > 0:
            self._local[key] = count
        else:
            self._local.pop(key, None)
        if queue:
            weight = max(count, 0)  # 0: the queue's last member here went
        elif before <= 0 < count:
            weight = 0
        elif count <= 0 < before:
            weight = -1
        else:
            return
        for target in self._targets.routes_for(self.account):
            target.announce(self.account, subject, queue, weight, origin)

    def local_changed_quietly(self, sub: Subscription) -> None:
        """Count a subscription that existed before the cluster started (announced when a route comes)."""
        if sub.local_only:
            return
        key = (sub.subject, sub.queue, "")
        self._local[key] = self._local.get(key, 0) + 1

    def announcements(self) -> Iterator[tuple[str, str, int, str]]:
        """``(subject, queue, weight, origin)`` of every local subject and queue: what a new route is told first."""
        for (subject, queue, origin), count in self._local.items():
            yield subject, queue, count if queue else 0, origin

    # -- remote interest -----------------------------------------------------------

    def remote_sub(self, route: RouteOwner, subject: str, queue: str, weight: int, origin: str = "") -> None:
        """``RS+`` (``LS+`` with the leaf cluster ``origin``) from ``route``: index it, or update a queue's weight.

        A queue member for a leaf connection there is taken only when no
        local member or other server's is (nats-server's routed ``origin``).
        """
        subs = self._remote.setdefault(route, {})
        existing = subs.get((subject, queue, origin))
        if existing is not None:
            before, existing.weight = existing.weight, max(weight, 1)
            if self.on_count is not None and existing.weight != before:
                self.on_count(subject, queue, existing.weight - before)
            return
        sub = Subscription(subject, queue, "", route)
        sub.weight = max(weight, 1)
        if origin and queue:
            sub.fallback = self.has_fallbacks = True
        self.index.insert(sub)
        subs[(subject, queue, origin)] = sub
        self._changed(sub, 1)

    def _changed(self, sub: Subscription, sign: int) -> None:
        if self.on_change is not None:
            self.on_change(sub.subject)
        if self.on_count is not None:
            self.on_count(sub.subject, sub.queue, sign * (sub.weight if sub.queue else 1))

    def remote_unsub(self, route: RouteOwner, subject: str, queue: str, origin: str = "") -> None:
        """``RS-`` (``LS-``) from ``route``."""
        subs = self._remote.get(route)
        sub = subs.pop((subject, queue, origin), None) if subs else None
        if sub is not None:
            sub.closed = True
            self.index.remove(sub)
            self._changed(sub, -1)

    def drop_route(self, route: RouteOwner) -> None:
        """A route closed: its interest goes with it."""
        for sub in self._remote.pop(route, {}).values():
            sub.closed = True
            self.index.remove(sub)
            self._changed(sub, -1)

    def remote_counts(self) -> dict[tuple[str, str], int]:
        """Every route's interest here: ``(subject, queue)`` -> subscriptions (a queue's members weighed)."""
        counts: dict[tuple[str, str], int] = {}
        for subs in self._remote.values():
            for (subject, queue, _), sub in subs.items():
                counts[(subject, queue)] = counts.get((subject, queue), 0) + (sub.weight if queue else 1)
        return counts

    def remote_subscriptions(self, route: RouteOwner) -> list[Subscription]:
        """The subscriptions ``route`` holds here, in the order they came (``/routez?subs=1``)."""
        return list(self._remote.get(route, {}).values())
