"""What a consumer's parts need around them in a test, without a server.

A :class:`FakeConsumer` (a plain object of the ``ConsumerView`` shape), a :class:`Recorder` of
callbacks, a consumer config with the server's defaults, and a start time for the manual clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fakejs.gocompat.gotime import NS
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.config import consumer_rules
from fakejs.jetstream.config import stream as streamconfig

START_NS = 1_700_000_000 * NS


def consumer_config(**fields: Any) -> dict[str, Any]:
    """A consumer config as the server holds it after applying its defaults."""
    config = consumerconfig.from_request(fields)
    consumer_rules.apply_defaults(config, streamconfig.from_request({"name": "S"}))
    return config


@dataclass
class FakeConsumer:
    """Stands in for the consumer a part belongs to (a ``ConsumerView``)."""

    config: dict[str, Any]
    closed: bool = False
    active: bool = True
    next_stream_sequence: int = 1
    next_consumer_sequence: int = 1
    num_pending: int = 0
    num_ack_pending: int = 0
    kicks: int = 0

    def kick(self) -> None:
        self.kicks += 1


@dataclass
class Recorder:
    """A callback that remembers its calls."""

    calls: list[tuple[Any, ...]] = field(default_factory=list)

    def __call__(self, *args: Any) -> None:
        self.calls.append(args)
