"""What a consumer's parts may see of the consumer, and the callbacks they are given.

The parts (ack tracker, pull dispatch, push flow control, pacing, lifecycle,
priority groups) never import :mod:`fakejs.jetstream.consumer.consumer`.
Each is handed the consumer as a :class:`ConsumerView` -- its config, where
delivery stands, and :meth:`ConsumerView.kick` to let the delivery loop run
-- plus the few callbacks it needs for side effects (replies, advisories).
A test can stand in for the consumer with any object of this shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from fakejs.jetstream.config.consumer import ConsumerConfig


@dataclass(frozen=True)
class ConsumerName:
    """Which consumer a part belongs to: names its subjects and identifies it to faults."""

    stream: str
    consumer: str


class ConsumerView(Protocol):
    """The consumer as its parts see it."""

    @property
    def config(self) -> ConsumerConfig:
        """The consumer's config (replaced as a whole on update, so read it each time)."""
        ...

    @property
    def closed(self) -> bool:
        """Deleted or stopped: timers that still fire must do nothing."""
        ...

    @property
    def active(self) -> bool:
        """Pull consumers always; push consumers while someone listens on the deliver subject."""
        ...

    @property
    def next_stream_sequence(self) -> int:
        """The next stream sequence to deliver (nats-server's ``sseq``)."""
        ...

    @property
    def next_consumer_sequence(self) -> int:
        """The consumer sequence of the next delivery (nats-server's ``dseq``)."""
        ...

    @property
    def num_pending(self) -> int:
        """Messages still to deliver (nats-server's ``npc``; may dip below zero)."""
        ...

    @property
    def num_ack_pending(self) -> int:
        """Deliveries awaiting an ack."""
        ...

    def kick(self) -> None:
        """Let the delivery loop deliver whatever it can now."""
        ...


class Reply(Protocol):
    """Publish an internal message (a status, a reply) on a subject, with no reply subject."""

    def __call__(self, subject: str, payload: bytes, hdr: bytes | None = None) -> None: ...


class Publish(Protocol):
    """Publish an internal message that carries a reply subject."""

    def __call__(self, subject: str, reply_to: str, hdr: bytes | None, payload: bytes, /) -> object: ...
