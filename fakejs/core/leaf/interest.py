"""The bound account's side of its leaf connections: their interest, what each is told, and relays.

:class:`AccountLeafs` hangs on the account's router (``router.remote``)
while the server has leaf connections configured.  Each connection's
``LS+`` becomes a :class:`~fakejs.core.router.Subscription` owned by the
connection (queue subscriptions weighted by their member count there), so
a local publish reaches the leaf connections that want it.  What each
connection is told follows nats-server's ``updateLeafNodes``: every local
subscription, and the other connections' interest -- except that a
connection on which this server is the spoke (one it dialled, unless its
remote says ``hub: true``; one it accepted from a leaf that said it is the
hub) hears nothing of the other connections it is the spoke of, the loop
detection subjects (``$LDS.``) aside.  The
server's own internal subscriptions count (a service import's subject, the
account's ``$SYS.REQ`` requests), as nats-server's do, fakejs's control
subjects (``$FAKEJS.``) aside; what a stream import carries reaches the leaf
connections' subscribers too.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Protocol

from fakejs.core.cluster.interest import AccountRoutes
from fakejs.core.leaf.jetstream import LinkDenies
from fakejs.core.router import RouteOwner, Router, Subscription
from fakejs.core.subjects import SubscriptionIndex

__all__ = ["LDS_PREFIX", "AccountLeafs", "LeafTarget"]

# nats-server's loop detection subject prefix: each account subscribes to one of its own on every link.
LDS_PREFIX = "$LDS."
# fakejs's control subjects: each server answers its own, never told to another.
CONTROL_PREFIX = "$FAKEJS."


class LeafTarget(RouteOwner, Protocol):
    """A leaf connection, as the account sees it."""

    # The role this server plays on the connection (nats-server's ``isSpoke``): the dialler's unless it is the hub.
    spoke: bool
    denies: LinkDenies
    # The cluster the server at the other end is in ("" when none): told in its CONNECT, or in the hub's INFO.
    remote_cluster: str

    def update_interest(self, subject: str, queue: str, delta: int) -> None:
        """Count ``delta`` more (or fewer) subscriptions to tell the remote of; send ``LS+``/``LS-`` on change."""


class LeafTargets(Protocol):
    """The leaf connections that are up."""

    def leaf_links(self) -> Iterable[LeafTarget]: ...


def _tells(target: LeafTarget, source: LeafTarget | None, subject: str) -> bool:
    """Whether interest from ``source`` (None: local) is told to ``target``."""
    if source is None:
        return True
    if source is target or _same_cluster(source, target):
        return False
    return not (target.spoke and source.spoke) or subject.startswith(LDS_PREFIX)


def _same_cluster(source: LeafTarget, target: LeafTarget) -> bool:
    """Both connections lead to servers of one cluster: what comes from one is never told or sent to the other."""
    return bool(source.remote_cluster) and source.remote_cluster == target.remote_cluster


def _told(sub: Subscription) -> bool:
    return not sub.subject.startswith(CONTROL_PREFIX)


class AccountLeafs:
    """The leaf connections' view of one account: their subscriptions, local counts, relays."""

    carries_imports = True
    has_fallbacks = True

    def __init__(
        self,
        account: str,
        targets: LeafTargets,
        router: Router,
        lds: str,
        rng: random.Random,
        routes: AccountRoutes | None = None,
    ) -> None:
        self.account = account
        # In a cluster, the routes' and the leaf connections' subscriptions share one index.
        self.index = routes.index if routes is not None else SubscriptionIndex()
        self.routes = routes
        self.router = router
        self.lds = lds
        self._targets = targets
        self._rng = rng
        self._local: dict[tuple[str, str], int] = {}
        self._remote: dict[LeafTarget, dict[tuple[str, str], Subscription]] = {}
        # Subjects told to every connection without a subscription (nats-server's imports and mappings),
        # and those told only to the connections this server accepted (a leaf checks its imports against its denies).
        self.mapped_sources: list[str] = []
        self.hub_imports: list[str] = []

    def has_exact_interest(self, subject: str) -> bool:
        """Whether a connection has a plain subscription on exactly ``subject`` (a push consumer's delivery)."""
        return bool(self.index.exact(subject).psubs)

    def takes_imported(self, owner: RouteOwner) -> bool:
        """What a stream import carries goes to the leaf connections, not to the routes (each server imports its own)."""
        return owner in self._remote

    # -- local interest ------------------------------------------------------------

    def local_changed(self, sub: Subscription, delta: int) -> None:
        """A local subscription came (+1) or went (-1): every leaf connection hears of it, and every route."""
        if self.routes is not None:
            self.routes.local_changed(sub, delta)
        if not _told(sub):
            return
        key = (sub.subject, sub.queue)
        count = self._local.get(key, 0) + delta
        if count > 0:
            self._local[key] = count
        else:
            self._local.pop(key, None)
        for target in self._targets.leaf_links():
            target.update_interest(sub.subject, sub.queue, delta)

    def count_quietly(self, sub: Subscription) -> None:
        """A subscription made before the leaf connections started (told when each comes up)."""
        if _told(sub):
            key = (sub.subject, sub.queue)
            self._local[key] = self._local.get(key, 0) + 1

    def initial_interest(self, target: LeafTarget) -> list[tuple[str, str, int]]:
        """``(subject, queue, count)`` a new connection is told first: local, the others', the loop subject."""
        told: dict[tuple[str, str], int] = dict(self._local)
        if self.routes is not None and not target.spoke:  # a hub tells its leafs of its cluster's interest
            for key, count in self.routes.remote_counts().items():
                told[key] = told.get(key, 0) + count
        for owner, subs in self._remote.items():
            for (subject, queue), sub in subs.items():
                if _tells(target, owner, subject):
                    told[(subject, queue)] = told.get((subject, queue), 0) + (sub.weight if queue else 1)
        told = {key: count for key, count in told.items() if not target.denies.subscribe_denied(key[0])}
        for subject in self.mapped_sources + ([] if target.spoke else self.hub_imports) + self._mapping_sources(target):
            told[(subject, "")] = told.get((subject, ""), 0) + 1
        told[(self.lds, "")] = told.get((self.lds, ""), 0) + 1
        return [(subject, queue, count) for (subject, queue), count in told.items()]

    def _mapping_sources(self, target: LeafTarget) -> list[str]:
        """The sources of the account's configured ``mappings`` (a spoke leaves out what the link denies)."""
        mappings = self.router.mappings
        if mappings is None:
            return []
        return [source for source in mappings.sources if not (target.spoke and target.denies.subscribe_denied(source))]

    # -- remote interest -----------------------------------------------------------

    def remote_sub(self, link: LeafTarget, subject: str, queue: str, weight: int) -> None:
        """``LS+`` from ``link``: index it (or update a queue's weight) and tell the other connections.

        Interest the link denies (JetStream's API) is not taken.
        """
        if link.denies.subscribe_denied(subject):
            return
        subs = self._remote.setdefault(link, {})
        existing = subs.get((subject, queue))
        if existing is not None:
            delta = max(weight, 1) - existing.weight if queue else 0
            existing.weight = max(weight, 1)
        else:
            sub = Subscription(subject, queue, "", link)
            sub.weight = max(weight, 1)
            sub.fallback = True
            self.index.insert(sub)
            subs[(subject, queue)] = sub
            delta = sub.weight if queue else 1
            self.router.notify_interest(subject)  # a push consumer delivering to the leaf
        if delta:
            self._relay_interest(link, subject, queue, delta)

    def route_count(self, subject: str, queue: str, delta: int) -> None:
        """The routes' interest changed: the connections this server accepted hear of it (loop subjects: every one)."""
        for target in self._targets.leaf_links():
            if not target.spoke or subject.startswith(LDS_PREFIX):
                target.update_interest(subject, queue, delta)

    def remote_unsub(self, link: LeafTarget, subject: str, queue: str) -> None:
        """``LS-`` from ``link``."""
        subs = self._remote.get(link)
        sub = subs.pop((subject, queue), None) if subs else None
        if sub is not None:
            self._drop(link, sub)

    def drop_link(self, link: LeafTarget) -> None:
        """A connection closed: its interest goes with it."""
        for sub in self._remote.pop(link, {}).values():
            self._drop(link, sub)

    def _drop(self, link: LeafTarget, sub: Subscription) -> None:
        sub.closed = True
        self.index.remove(sub)
        self.router.notify_interest(sub.subject)
        self._relay_interest(link, sub.subject, sub.queue, -(sub.weight if sub.queue else 1))

    def _relay_interest(self, source: LeafTarget, subject: str, queue: str, delta: int) -> None:
        for target in self._targets.leaf_links():
            if _tells(target, source, subject):
                target.update_interest(subject, queue, delta)
        if self.routes is not None and not source.spoke:  # a spoke's interest is told as this server's
            self.routes.count_changed(subject, queue, delta, source.remote_cluster)

    def remote_subscriptions(self, link: LeafTarget) -> list[Subscription]:
        return list(self._remote.get(link, {}).values())

    # -- messages from a leaf connection --------------------------------------------

    def relay(
        self,
        source: LeafTarget,
        subject: str,
        reply: str,
        queues: tuple[str, ...],
        headers: bytes | None,
        payload: bytes,
    ) -> None:
        """A message from ``source``: local subscribers (plain, one of each queue named), then the other connections.

        The subject is mapped first (a JetStream domain's API onto the
        account's, then the account's ``mappings``, as a client's message);
        a mapped message that named no queue goes to every queue group of
        its new subject, as a client's would.  A queue named that has no
        local member goes to one member on another connection (in a
        cluster, another server's first).
        Nothing goes back to the cluster ``source`` is in, and a hub's
        message goes to no route: each server of a cluster dials the hub.
        """
        arrived, subject = subject, self.router.map_published(self.router.mapped(subject))
        if not subject:
            return  # a weighted mapping dropped it
        local = self.router.index.match(subject)
        remote = self.index.match(subject)
        if subject != arrived and not queues:  # nats-server's pmrIgnoreEmptyQueueFilter
            queues = tuple(dict.fromkeys([*local.qsubs, *remote.qsubs]))
        self.router.publish_routed(subject, reply, queues, headers, payload, source)
        cluster = source.remote_cluster
        targets: dict[RouteOwner, list[str]]
        if self.routes is None:  # leaf connections alone: every other one, of another cluster
            targets = {
                sub.owner: []
                for sub in remote.psubs
                if sub.owner is not source and (not cluster or sub.owner.remote_cluster != cluster)
            }
        else:
            takes = self._takes(source)
            targets = {sub.owner: [] for sub in remote.psubs if takes(sub.owner)}
        for queue in queues:
            if local.qsubs.get(queue):
                continue
            takes = self._takes(source)
            members = [sub for sub in remote.qsubs.get(queue, ()) if takes(sub.owner)]
            if self.routes is not None:
                members = [sub for sub in members if sub.owner not in self._remote] or members
            if members:
                targets.setdefault(members[self._rng.randrange(len(members))].owner, []).append(queue)
        for owner, named in targets.items():
            owner.forward(self.account, subject, reply, named, headers, payload)

    def _takes(self, source: LeafTarget) -> Callable[[object], bool]:
        """Whether a subscription's owner gets a message from ``source`` (never ``source`` itself)."""
        leafs = self._remote

        def takes(owner: object) -> bool:
            if owner is source:
                return False
            if owner in leafs:
                return not _same_cluster(source, owner)
            return not source.spoke  # a route

        return takes

    # -- messages from a route ------------------------------------------------------

    def routed(
        self, subject: str, reply: str, queues: tuple[str, ...], headers: bytes | None, payload: bytes, route: object
    ) -> None:
        """A message another server of the cluster sent on: local subscribers, then the connections this server accepted.

        A queue named without a local member goes to a member on a leaf
        connection; nothing goes back to a route.
        """
        local = self.router.index.match(subject)
        self.router.publish_routed(subject, reply, queues, headers, payload, route)
        leafs = self._remote
        remote = self.index.match(subject)
        targets: dict[RouteOwner, list[str]] = {
            sub.owner: [] for sub in remote.psubs if sub.owner in leafs and not sub.owner.spoke
        }
        for queue in queues:
            if local.qsubs.get(queue):
                continue
            members = [sub for sub in remote.qsubs.get(queue, ()) if sub.owner in leafs]
            if members:
                targets.setdefault(members[self._rng.randrange(len(members))].owner, []).append(queue)
        for owner, named in targets.items():
            owner.forward(self.account, subject, reply, named, headers, payload)
