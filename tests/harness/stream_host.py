"""A stream without a server: what it needs from its JetStream, and a checked configuration.

:class:`Host` stands for the JetStream (clock, router, limits, the consumer
decisions asked of it, recorded); :func:`config` makes a checked
:class:`~fakejs.jetstream.config.stream.StreamConfig` from request fields.
"""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

from fakejs.core.options import ServerOptions
from fakejs.core.recorder import NO_RECORDER
from fakejs.core.router import Router
from fakejs.jetstream.config import stream as streamconfig
from fakejs.jetstream.config import stream_rules
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.stream.batch_limits import BatchLimits
from fakejs.jetstream.stream.stream import Stream, StreamConsumer
from fakejs.testkit.clock import ManualClock

T0 = 1_700_000_000_000_000_000
SECOND = 1_000_000_000


class Host:
    """What a stream needs from its JetStream, recording the consumer decisions asked of it."""

    def __init__(self) -> None:
        self.clock = ManualClock(start_ns=T0)
        self.router = Router(random.Random(0))
        self.broker = SimpleNamespace(options=ServerOptions())
        self.recorder = NO_RECORDER
        self.server_name = "unit"
        self.account_name = "$G"
        self.domain = ""
        self.batch_limits = BatchLimits()
        self.removed: list[str] = []
        self.acked: list[tuple[str, int]] = []
        self.limits_checked = (True, True)  # the limit checks are asked, and answer that nothing is over

    def nuid(self) -> str:
        return "NUID"

    def online(self, stream: str, consumer: str = "") -> bool:
        return True

    def cluster_section(self, stream: str, consumer: str = "") -> dict[str, Any] | None:
        return None if consumer else {"leader": self.server_name}

    def reply(self, subject: str, payload: bytes, hdr: bytes | None = None, empty_reply: bool = False) -> None:
        self.router.publish(subject, "", hdr, payload, None)

    def remove_consumer(self, stream: Stream, consumer: StreamConsumer, cause: str = "api") -> None:
        self.removed.append(consumer.name)

    def limits_exceeded(self, memory: bool) -> bool:
        return False

    def account_limits_exceeded(self, memory: bool, subject: str, hdr: bytes | None, payload: bytes) -> bool:
        return False

    def consumer_acked(self, stream: Stream, consumer: StreamConsumer, seq: int) -> None:
        self.acked.append((consumer.name, seq))

    def consumer_updated(self, stream: Stream, consumer: StreamConsumer) -> None:
        pass

    def asset_request(self, kind: str, *args: Any) -> None:
        raise AssertionError(kind)


def config(**fields: Any) -> StreamConfig:
    base: dict[str, Any] = {"name": "S", "subjects": ["s.>"], "storage": "memory"}
    return stream_rules.check(streamconfig.from_request({**base, **fields}))
