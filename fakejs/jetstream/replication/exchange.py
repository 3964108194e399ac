"""The wire between the members of groups whose servers share one process: a message is handed over at once.

Across processes a member's messages cross the routes (see
:mod:`~fakejs.jetstream.replication.transport`); the servers of an
in-process cluster (:class:`fakejs.Cluster`) share one
:class:`LocalExchange` instead.  Each server's members see it through a
:class:`LocalWire`, which offers what :class:`~fakejs.jetstream.replication.transport.Transport`
uses of a router (subscribe to a member's subject, publish to a peer's, ask
whether anybody listens, unsubscribe), so a group is the same code on either
wire.

A message is delivered before ``publish`` returns, in the order sent: one
sent while another is being delivered (a follower's answer to the append it
is taking) joins a queue that the outermost ``publish`` drains.  So a
proposal is stored by the followers, acknowledged and committed within the
call that made it, heartbeats reach the followers within the clock's tick
that fired them, and a cluster on a :class:`~fakejs.testkit.clock.ManualClock`
holds its leaders however far time is moved.  ``reaches`` (set by the
cluster while a node is down or the cluster is cut; ``None`` while every
server reaches every other) says whether one server's messages find another;
a message that finds nobody is dropped, as the routes drop it.

A payload is handed over as it was given: a member's transport gives the
node's message itself (immutable), not its bytes, so nothing is encoded and
decoded again on the way (:meth:`LocalExchange.send`).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["LocalExchange", "LocalWire"]

CLAIMS_KEPT = 4096  # requests remembered as acted on (their members answer within moments of each other)

Callback = Callable[[str, str, "bytes | None", Any, object], object]


@dataclass(slots=True)
class _Listener:
    """A member's subscription: its server, its subject, and what takes its messages."""

    server: str
    subject: str
    callback: Callback


class LocalExchange:
    """The members of the groups of every server of one process, by subject (see the module docstring)."""

    def __init__(self) -> None:
        self._listeners: dict[str, _Listener] = {}
        self._queue: deque[tuple[str, str, object]] = deque()  # (sender's server, subject, payload)
        self._delivering = False
        # Whether one server's messages find another (None: every server reaches every other)
        self.reaches: Callable[[str, str], bool] | None = None
        self._claimed: OrderedDict[tuple[str, str], None] = OrderedDict()  # (group, request) acted on, newest last

    def wire(self, server: str) -> LocalWire:
        """What the server ``server``'s members use in place of its system account's router."""
        return LocalWire(self, server)

    def listen(self, server: str, subject: str, callback: Callback) -> _Listener:
        listener = _Listener(server, subject, callback)
        self._listeners[subject] = listener
        return listener

    def forget(self, listener: _Listener) -> None:
        if self._listeners.get(listener.subject) is listener:
            del self._listeners[listener.subject]

    def claim(self, group: str, request: str) -> bool:
        """Whether ``request`` is claimed for ``group`` now (``False``: a member of the group acted on it)."""
        key = (group, request)
        if key in self._claimed:
            return False
        self._claimed[key] = None
        if len(self._claimed) > CLAIMS_KEPT:
            self._claimed.popitem(last=False)
        return True

    def finds(self, server: str, subject: str) -> bool:
        """Whether a message from ``server`` on ``subject`` would find its member."""
        listener = self._listeners.get(subject)
        return listener is not None and self._reaches(server, listener)

    def _reaches(self, server: str, listener: _Listener) -> bool:
        return self.reaches is None or self.reaches(server, listener.server)

    def send(self, server: str, subject: str, payload: object) -> bool:
        """Deliver ``payload`` to the member listening on ``subject`` (now, or after what is being delivered)."""
        listener = self._listeners.get(subject)
        reaches = self.reaches
        if listener is None or (reaches is not None and not reaches(server, listener.server)):
            return False
        self._queue.append((server, subject, payload))
        if not self._delivering:
            self._drain()
        return True

    def _drain(self) -> None:
        self._delivering = True
        try:
            while self._queue:
                server, subject, payload = self._queue.popleft()
                listener = self._listeners.get(subject)
                reaches = self.reaches
                if listener is not None and (reaches is None or reaches(server, listener.server)):
                    listener.callback(subject, "", None, payload, None)
        finally:
            self._delivering = False


class LocalWire:
    """One server's view of a :class:`LocalExchange`, shaped as the router methods a transport uses."""

    def __init__(self, exchange: LocalExchange, server: str) -> None:
        self.exchange = exchange
        self.server = server

    def subscribe_internal(self, subject: str, handler: Callback) -> _Listener:
        return self.exchange.listen(self.server, subject, handler)

    def unsubscribe(self, sub: _Listener) -> None:
        self.exchange.forget(sub)

    def publish(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: object = None) -> bool:
        return self.exchange.send(self.server, subject, payload)

    def has_interest(self, subject: str) -> bool:
        return self.exchange.finds(self.server, subject)
