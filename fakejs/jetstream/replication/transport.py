"""A member's wire: its subscription in the system account, and what it publishes to its peers.

Each member listens on its own subject (see
:mod:`~fakejs.jetstream.replication.subjects`) through an internal
subscription on the system account's router, which announces it over the
routes as any other; a message to a peer is one publish on the peer's
subject.  Nothing is retried here: a message with nobody to take it (the
peer's server down, or cut off by a partition) is counted and dropped, and
the node sends again when its timers say so.

On the routes a message travels as its bytes (:func:`~fakejs.jetstream.raft.encode`); on the in-process
exchange as the node's (immutable) message itself, which the member hands to the node as it came.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from fakejs.jetstream.raft import Message, encode
from fakejs.jetstream.replication.exchange import LocalWire
from fakejs.jetstream.replication.subjects import member_subject


class Wire(Protocol):
    """What a transport uses of the system account's router (:class:`~fakejs.core.router.Router`), or of the
    in-process exchange (:class:`~fakejs.jetstream.replication.exchange.LocalWire`)."""

    def subscribe_internal(self, subject: str, handler: Any) -> Any: ...

    def unsubscribe(self, sub: Any) -> None: ...

    def publish(
        self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: object = None
    ) -> bool: ...

    def has_interest(self, subject: str) -> bool: ...


@dataclass(slots=True)
class TransportCounters:
    """Messages ``sent`` to peers (of which ``unreachable``: nobody took them) and ``received`` from them."""

    sent: int = 0
    unreachable: int = 0
    received: int = 0


class Transport:
    """The member ``peer`` of ``group`` on ``router`` (the system account's, or an in-process exchange's wire):
    ``deliver`` gets each message, as bytes from the routes or as the message itself from the exchange."""

    def __init__(self, router: Wire, group: str, peer: str, deliver: Callable[[bytes | Message], None]) -> None:
        self.router = router
        self.group = group
        self.counters = TransportCounters()
        self._deliver = deliver
        self.subject = member_subject(group, peer)
        self._subscription = router.subscribe_internal(self.subject, self._on_message)
        self._local = router if isinstance(router, LocalWire) else None
        self._subjects: dict[str, str] = {}  # peer -> its subject

    def _on_message(
        self, subject: str, reply: str, headers: bytes | None, payload: bytes | Message, origin: object
    ) -> None:
        self.counters.received += 1
        self._deliver(payload)

    def send(self, peer: str, message: Message) -> None:
        """Send ``message`` to ``peer``'s subject (on the routes when it is on another server)."""
        self.counters.sent += 1
        subject = self._subjects.get(peer)
        if subject is None:
            subject = self._subjects[peer] = member_subject(self.group, peer)
        if self._local is not None:  # the node's message itself, not its bytes
            sent = self._local.exchange.send(self._local.server, subject, message)
        else:
            sent = self.router.publish(subject, "", None, encode(message), None)
        if not sent:
            self.counters.unreachable += 1

    def reaches(self, peer: str) -> bool:
        """Whether a message to ``peer`` would find it now (its subscription is known here)."""
        return self.router.has_interest(member_subject(self.group, peer))

    def close(self) -> None:
        self.router.unsubscribe(self._subscription)
