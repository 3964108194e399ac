"""Message routing: subscriptions and fan-out, apart from any connection.

A subscription belongs to a *subscriber* -- a client connection or an
internal component such as JetStream -- that implements :class:`Subscriber`.
JetStream attaches through :meth:`Router.subscribe_internal` exactly like
nats-server's internal subscriptions: it receives published messages via a
callback and answers by publishing.  A handler that raises is reported
to the router's error callback (the server records it) and fan-out goes on.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from fakejs.core.clock import ErrorSink
from fakejs.core.log import get_logger
from fakejs.core.subjects import InvalidSubject, MatchResult, SubscriptionIndex

if TYPE_CHECKING:
    from fakejs.core.mappings import SubjectMappings
    from fakejs.core.request_info import RequestInfo

__all__ = [
    "InternalHandler",
    "InvalidSubject",
    "RemoteInterest",
    "RouteOwner",
    "RoutedReceiver",
    "Router",
    "Subscriber",
    "Subscription",
]


class Subscriber(Protocol):
    """What the router needs from the owner of a subscription."""

    echo: bool
    # Set when some messages must not reach this subscriber: asked with (subject, queue) before each.
    denies: Callable[[str, str], bool] | None

    def deliver(
        self, sub: Subscription, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: object
    ) -> None:
        """Hand one message to the subscriber; ``origin`` is the publisher."""

    def remove_subscription(self, sub: Subscription) -> None:
        """Forget a subscription the router dropped (auto-unsubscribe reached)."""

    def limit_reached(self, sub: Subscription, exceeded: bool) -> None:
        """The subscription's auto-unsubscribe limit is reached by this message (``exceeded``: passed before it)."""


JS_ACK_PREFIX = "$JS.ACK."


def js_ack_deliver_index(reply: str) -> int:
    """nats-server's ``jsAckDeliverIdx``: where ``@<subject>`` starts in a ``$JS.ACK.`` reply sent to another server.

    Only an ``@`` after the ack's eight dots counts (stream and consumer
    names may hold one); -1 when there is none.
    """
    if not reply.startswith(JS_ACK_PREFIX):
        return -1
    after = len(JS_ACK_PREFIX)  # past the ack's first two dots
    for _ in range(6):
        after = reply.find(".", after) + 1
        if not after:
            return -1
    return reply.find("@", after)


class RouteOwner(Protocol):
    """The owner of a remote subscription: a route connection to another server of the cluster
    (:class:`~fakejs.core.cluster.link.RouteLink`), named in message traces by ``rid`` and ``remote_name``."""

    @property
    def rid(self) -> int: ...

    @property
    def remote_name(self) -> str: ...

    @property
    def carries_request_info(self) -> bool:
        """Whether a request sent over it carries its requester's info (:mod:`fakejs.core.request_info`):
        a route's does, a leaf connection's does not."""

    def forward(
        self, account: str, subject: str, reply: str, queues: list[str], headers: bytes | None, payload: bytes
    ) -> None:
        """Send one message on, for the remote subscribers (and one member of each of ``queues``)."""


class RemoteInterest(Protocol):
    """The other servers' side of an account (set as :attr:`Router.remote` while the server has routes or leafs).

    ``index`` holds the other servers' subscriptions (owned by a
    :class:`RouteOwner`, queue members weighted); ``local_changed`` hears
    of every local subscription that comes (+1) and goes (-1), to announce
    it to the other servers.  A server with both routes and leaf
    connections has one view of both (the leaf side's, owning the routes').
    """

    account: str
    index: SubscriptionIndex
    # What a stream import carries goes there too (leaf connections; each server of a cluster imports its own).
    carries_imports: bool
    # Some queue members are taken only when no local or routed member is (a leaf connection's: ``fallback``).
    has_fallbacks: bool

    def local_changed(self, sub: Subscription, delta: int) -> None: ...

    def takes_imported(self, owner: RouteOwner) -> bool:
        """Whether what a stream import carries goes to ``owner`` (asked only when ``carries_imports``)."""


Delivery = Callable[["Subscription", str, str, "bytes | None", bytes, object], bool]
Forwarding = Callable[["RouteOwner", str, str, str, list[str], "bytes | None", bytes], None]
# A message another server of the cluster sent on: subject, reply, queues named, headers, payload, the route.
RoutedReceiver = Callable[[str, str, "tuple[str, ...]", "bytes | None", bytes, object], None]

InternalHandler = Callable[[str, str, "bytes | None", bytes, object], "bool | None"]


class Subscription:
    """One subscription: subject, optional queue group, owner and limits.

    ``max`` is the UNSUB auto-unsubscribe limit (0 = none) and
    ``delivered`` counts the messages handed over, as nats-server's
    ``sub.nm`` does.  A remote server's subscription (see
    :class:`RemoteInterest`) is owned by the route it came on.
    """

    __slots__ = (
        "__weakref__",
        "closed",
        "delivered",
        "fallback",
        "local_only",
        "max",
        "owner",
        "queue",
        "sid",
        "sid_bytes",
        "subject",
        "weight",
    )

    def __init__(self, subject: str, queue: str, sid: str, owner: Any) -> None:
        self.subject = subject
        self.queue = queue
        self.sid = sid
        self.sid_bytes = sid.encode("utf-8", "surrogateescape")
        self.owner = owner
        self.max = 0
        self.delivered = 0
        self.closed = False
        # A remote server's queue subscription stands for this many members there.
        self.weight = 1
        # Never announced to the other servers of a cluster (this server's own control subjects).
        self.local_only = False
        # A leaf connection's queue member: picked only when no local or routed member is.
        self.fallback = False

    def __repr__(self) -> str:
        queue = f" queue={self.queue!r}" if self.queue else ""
        return f"<Subscription {self.subject!r}{queue} sid={self.sid!r}>"


def _log_error(where: str, exc: BaseException) -> None:
    get_logger().error("%s failed", where, exc_info=exc)


class _InternalOwner:
    """Owner of an internal subscription: calls a handler for each message."""

    echo = True
    denies = None
    # How a traced message passes here (an import, a stream): called with the trace, subject, reply,
    # headers, payload and publisher; returns whether it was delivered, or None for the handler to take it on.
    trace_hop: Callable[[Any, str, str, bytes | None, bytes, object], bool | None] | None = None

    def __init__(self, handler: InternalHandler, on_error: ErrorSink) -> None:
        self.handler = handler
        self.on_error = on_error

    def deliver(
        self, sub: Subscription, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: object
    ) -> bool | None:
        try:
            return self.handler(subject, reply, headers, payload, origin)
        except Exception as exc:  # noqa: BLE001 - recorded on the server; the publisher and other subscribers go on
            self.on_error(f"internal subscription on {sub.subject!r} (a message on {subject!r})", exc)
            return True

    def remove_subscription(self, sub: Subscription) -> None:
        pass

    def limit_reached(self, sub: Subscription, exceeded: bool) -> None:
        pass


class Router:
    """The subscription index plus message fan-out.

    ``rng`` picks queue group members (the server's seeded generator);
    ``on_error`` receives what an internal subscription's handler raised
    (without one, it is logged).
    """

    def __init__(self, rng: random.Random | None = None, on_error: ErrorSink | None = None) -> None:
        self.index = SubscriptionIndex()
        self._rng = rng or random.Random()
        self._on_error = on_error or _log_error
        self._watchers: dict[str, list[Callable[[], None]]] = {}
        # Account subject mappings by prefix (``$JS.<domain>.API.`` -> ``$JS.API.``), applied to
        # every message published in the account before it is routed, as nats-server's are.
        self._prefix_mappings: list[tuple[str, str]] = []
        # The account's configured subject mappings (``mappings { }``), for what clients publish.
        self.mappings: SubjectMappings | None = None
        # The subject the message being fanned out was routed on (it may be shown as another).
        self.routed_subject = ""
        # Other accounts' exact interest carried here by stream imports (nats-server's shadow subscriptions).
        self._imported_interest: list[Callable[[str], bool]] = []
        # Stream imports told of interest coming and going here, for the exporter's push consumers.
        self._interest_listeners: list[Callable[[str], None]] = []
        # The other servers of the cluster: their interest here, and the announcement of ours.
        self.remote: RemoteInterest | None = None
        # Delivery to one subscription and forwarding to another server: a traced message's trace takes them over.
        self._deliver: Delivery = self._deliver_own
        self._forward: Forwarding = self._forward_own
        # Where a route's message goes: here (:meth:`publish_routed`), and with leaf connections to them too.
        self.receive_routed: RoutedReceiver = self.publish_routed
        # The requests whose copies sent over a route carry the requester's info (the account's JetStream API).
        self.request_info: RequestInfo | None = None

    # -- subject mappings ------------------------------------------------------

    def add_prefix_mapping(self, source: str, target: str) -> None:
        """Route every subject starting with ``source`` as if it started with ``target``.

        Subscribers (and a no-responders status) see the mapped subject.
        Costs one ``startswith`` per mapping per message, nothing without mappings.
        """
        if (source, target) not in self._prefix_mappings:
            self._prefix_mappings.append((source, target))

    @property
    def prefix_mappings(self) -> list[tuple[str, str]]:
        """The prefix mappings added so far (a copy)."""
        return list(self._prefix_mappings)

    def map_published(self, subject: str) -> str:
        """What a client's message on ``subject`` is routed as under the account's ``mappings``.

        nats-server maps a client's message (and a service import's request)
        before anything else looks at it, publish permissions included; an
        empty result is a message a weighted mapping drops.
        """
        if self.mappings is None:
            return subject
        selected = self.mappings.select(subject)
        return subject if selected is None else selected

    def mapped(self, subject: str) -> str:
        """``subject`` as the account routes it."""
        for source, target in self._prefix_mappings:
            if subject.startswith(source):
                return target + subject[len(source) :]
        return subject

    # -- subscriptions ---------------------------------------------------------

    def subscribe(self, sub: Subscription) -> None:
        """Index ``sub``; raises :class:`InvalidSubject` for an invalid subject."""
        self.index.insert(sub)
        if self.remote is not None:
            self.remote.local_changed(sub, 1)
        self._notify(sub.subject)

    def unsubscribe(self, sub: Subscription) -> None:
        if not sub.closed:
            sub.closed = True
            if self.index.remove(sub) and self.remote is not None:
                self.remote.local_changed(sub, -1)
            self._notify(sub.subject)

    def local_subscriptions(self) -> list[Subscription]:
        """Every local subscription (what a cluster announces when it starts)."""
        return list(self.index.all())

    # -- interest on an exact subject (push consumers) ------------------------------------

    def watch_interest(self, subject: str, callback: Callable[[], None]) -> None:
        """Call ``callback`` whenever a subscription on exactly ``subject`` comes or goes."""
        self._watchers.setdefault(subject, []).append(callback)

    def unwatch_interest(self, subject: str, callback: Callable[[], None]) -> None:
        callbacks = self._watchers.get(subject)
        if callbacks and callback in callbacks:
            callbacks.remove(callback)
            if not callbacks:
                del self._watchers[subject]

    def has_exact_interest(self, subject: str, queue: str = "") -> bool:
        """Whether a plain subscription (or one in ``queue``, if given) exists on exactly ``subject``, here or
        on another server of the cluster (as nats-server's account sublist holds the routes' subscriptions)."""
        result = self.index.exact(subject)
        remote = self.remote.index.exact(subject) if self.remote is not None else None
        if queue:
            return bool(result.qsubs.get(queue)) or (remote is not None and bool(remote.qsubs.get(queue)))
        if result.psubs or (remote is not None and remote.psubs):
            return True
        return any(check(subject) for check in self._imported_interest)

    def add_imported_interest(self, check: Callable[[str], bool]) -> None:
        """A stream import: an importer's subscription on exactly the subject, renamed, counts here."""
        self._imported_interest.append(check)

    def add_interest_listener(self, listener: Callable[[str], None]) -> None:
        """A stream import: a subscription here on an imported subject wakes the exporter's push consumer."""
        self._interest_listeners.append(listener)

    def remove_import_callbacks(
        self, check: Callable[[str], bool] | None, listener: Callable[[str], None] | None
    ) -> None:
        """A stream import taken away (a configuration reload): its interest check and listener go."""
        if check in self._imported_interest:
            self._imported_interest.remove(check)
        if listener in self._interest_listeners:
            self._interest_listeners.remove(listener)

    def notify_interest(self, subject: str) -> None:
        """Interest on ``subject`` changed somewhere it is carried from (an importing account)."""
        self._notify(subject)

    def _notify(self, subject: str) -> None:
        callbacks = self._watchers.get(subject)
        if callbacks:
            for callback in list(callbacks):
                callback()
        for listener in self._interest_listeners:
            listener(subject)

    def subscribe_internal(
        self, subject: str, handler: InternalHandler, queue: str = "", local_only: bool = False
    ) -> Subscription:
        """Subscribe a server component; ``handler(subject, reply, headers, payload, origin)``.

        The handler may return ``False`` to decline a message, which then
        does not count as delivered (no-responders still applies).
        ``local_only``: the other servers of a cluster are not told (the
        subscription answers for this server alone).
        """
        sub = Subscription(subject, queue, "", _InternalOwner(handler, self._on_error))
        sub.local_only = local_only
        self.index.insert(sub)
        if self.remote is not None:
            self.remote.local_changed(sub, 1)
        self._notify(subject)  # a stream's durable sourcing consumer pushes to an internal subscription
        return sub

    def match(self, subject: str) -> MatchResult:
        return self.index.match(subject)

    def has_interest(self, subject: str) -> bool:
        remote = self.remote
        return self.index.has_interest(subject) or (remote is not None and remote.index.has_interest(subject))

    # -- publishing ------------------------------------------------------------

    def publish(
        self,
        subject: str,
        reply: str,
        headers: bytes | None,
        payload: bytes,
        origin: object = None,
        shown_as: str = "",
        routes: bool = True,
    ) -> bool:
        """Deliver to every plain subscriber and one member per queue group.

        ``origin`` is the publishing client (``None`` for the server
        itself); it does not receive its own message when it turned echo
        off.  ``shown_as`` is the subject subscribers see when it differs
        from the one routed on (JetStream delivers a stored message, with
        its own subject, to a consumer's delivery subject).  ``routes``
        false keeps the message on this server (what a stream import carries:
        each server imports for its own clients).  Returns whether anyone
        received the message.
        """
        if self._prefix_mappings:
            subject = self.mapped(subject)
        result = self.index.match(subject)
        remote = self.remote
        if remote is not None and (routes or remote.carries_imports) and remote.index.count:
            return self._publish_clustered(result, remote, subject, reply, headers, payload, origin, shown_as, routes)
        if not result.psubs and not result.qsubs:  # not result, without a call to __bool__
            return False
        visible = shown_as or subject
        delivered = False
        outer, self.routed_subject = self.routed_subject, subject
        for sub in result.psubs:
            if self._deliver(sub, visible, reply, headers, payload, origin):
                delivered = True
        if result.qsubs:
            rng = self._rng
            for group in result.qsubs.values():
                size = len(group)
                start = rng.randrange(size) if size > 1 else 0
                for i in range(size):
                    if self._deliver(group[(start + i) % size], visible, reply, headers, payload, origin):
                        delivered = True
                        break
        self.routed_subject = outer
        return delivered

    def _publish_clustered(
        self,
        result: MatchResult,
        remote: RemoteInterest,
        subject: str,
        reply: str,
        headers: bytes | None,
        payload: bytes,
        origin: object,
        shown_as: str,
        routes: bool = True,
    ) -> bool:
        """A publish while other servers have interest here: local delivery, then one message per route.

        Each queue group picks one member cluster-wide, a remote server's
        members weighted by their number there (nats-server prefers no
        local member); a route gets the message once, naming the queues
        whose member it holds.
        """
        remote_result = remote.index.match(subject)
        visible = shown_as or subject
        delivered = False
        outer, self.routed_subject = self.routed_subject, subject
        targets: dict[RouteOwner, list[str]] = {sub.owner: [] for sub in remote_result.psubs}
        for sub in result.psubs:
            if self._deliver(sub, visible, reply, headers, payload, origin):
                delivered = True
        queues = list(result.qsubs) + [queue for queue in remote_result.qsubs if queue not in result.qsubs]
        for queue in queues:
            local = result.qsubs.get(queue, ())
            members: Sequence[Subscription] = remote_result.qsubs.get(queue, ())
            fallbacks: Sequence[Subscription] = ()
            if remote.has_fallbacks:  # a leaf connection's member takes what no local nor routed member could
                fallbacks = [sub for sub in members if sub.fallback]
                members = [sub for sub in members if not sub.fallback] or ([] if local else fallbacks)
            pick = self._rng.randrange(len(local) + sum(sub.weight for sub in members))
            if pick >= len(local):
                pick -= len(local)
                for sub in members:
                    pick -= sub.weight
                    if pick < 0:
                        targets.setdefault(sub.owner, []).append(queue)
                        break
                continue
            for i in range(len(local)):
                if self._deliver(local[(pick + i) % len(local)], visible, reply, headers, payload, origin):
                    delivered = True
                    break
            else:  # no local member took it: nats-server goes on to another server's
                members = members or fallbacks
                if members:
                    targets.setdefault(members[self._rng.randrange(len(members))].owner, []).append(queue)
        self.routed_subject = outer
        if not routes:  # what a stream import carries: only to the connections that take it
            targets = {owner: named for owner, named in targets.items() if remote.takes_imported(owner)}
        if targets and visible != subject and reply and js_ack_deliver_index(reply) < 0:
            reply = f"{reply}@{visible}"  # the subject shown travels at the end of the reply, as nats-server sends it
        carried = headers
        if targets and self.request_info is not None:
            carried = self.request_info.sent(subject, headers, origin)
        for route, queues in targets.items():
            sent = carried if route.carries_request_info else headers
            self._forward(route, remote.account, subject, reply, queues, sent, payload)
        return delivered or bool(targets)

    def publish_routed(
        self, subject: str, reply: str, queues: tuple[str, ...], headers: bytes | None, payload: bytes, origin: object
    ) -> None:
        """A message another server sent on: every local plain subscriber, one local member of each queue named.

        Queue groups the route did not name were served elsewhere; nothing
        goes back out to a route.
        """
        result = self.index.match(subject)
        if not result:
            return
        shown = subject
        split = js_ack_deliver_index(reply) if reply else -1
        if 0 <= split < len(reply) - 1:  # a JetStream delivery: the subject shown ends its ``$JS.ACK.`` reply
            shown, reply = reply[split + 1 :], reply[:split]
        outer, self.routed_subject = self.routed_subject, subject
        for sub in result.psubs:
            self._deliver(sub, shown, reply, headers, payload, origin)
        for queue in queues:
            group = result.qsubs.get(queue)
            if not group:
                continue
            start = self._rng.randrange(len(group)) if len(group) > 1 else 0
            for i in range(len(group)):
                if self._deliver(group[(start + i) % len(group)], shown, reply, headers, payload, origin):
                    break
        self.routed_subject = outer

    def _forward_own(
        self,
        route: RouteOwner,
        account: str,
        subject: str,
        reply: str,
        queues: list[str],
        headers: bytes | None,
        payload: bytes,
    ) -> None:
        """Send a message on to another server (a traced message's trace takes this over)."""
        route.forward(account, subject, reply, queues, headers, payload)

    def _deliver_own(
        self, sub: Subscription, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: object
    ) -> bool:
        owner = sub.owner
        if sub.closed or (not owner.echo and owner is origin):
            return False
        denies = owner.denies
        if denies is not None and denies(subject, sub.queue):
            return False
        sub.delivered += 1
        if sub.max:
            if sub.delivered > sub.max:
                owner.limit_reached(sub, exceeded=True)
                self._auto_unsubscribe(sub)
                return False
            if sub.delivered == sub.max:
                owner.limit_reached(sub, exceeded=False)
                owner.deliver(sub, subject, reply, headers, payload, origin)
                self._auto_unsubscribe(sub)
                return True
        # An internal handler may decline a message (False): it was not delivered.
        return owner.deliver(sub, subject, reply, headers, payload, origin) is not False

    def _auto_unsubscribe(self, sub: Subscription) -> None:
        self.unsubscribe(sub)
        sub.owner.remove_subscription(sub)
