"""What a stream is fed by: its mirror or its sources, started, followed and stopped with it.

The stream builds one :class:`Links` and calls it when it attaches, when
its config changes (a promoted mirror stops mirroring, sources come and
go) and when it closes; STREAM.INFO gets the ``mirror`` or ``sources``
block from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fakejs.jetstream.stream.consumer_view import StreamConsumer
from fakejs.jetstream.stream.feed import FedStream
from fakejs.jetstream.stream.mirror import Mirror
from fakejs.jetstream.stream.sources import Sources


class Links:
    """A stream's mirror or sources (nats-server's ``mset.mirror`` / ``mset.sources``): started,
    kept in step with the config and stopped with the stream."""

    def __init__(self, stream: FedStream) -> None:
        self.stream = stream
        self.mirror: Mirror | None = None
        self.sources: Sources | None = None

    def sync(self) -> None:
        """Start what the config asks for, stop what it no longer does."""
        config = self.stream.config
        if config["mirror"] is None and self.mirror is not None:
            self.mirror.close(removed=True)  # promoted
            self.mirror = None
        elif config["mirror"] is not None and self.mirror is None:
            self.mirror = Mirror(self.stream)
            self.mirror.start()
        if config["sources"]:
            if self.sources is None:
                self.sources = Sources(self.stream)
            self.sources.sync()
        elif self.sources is not None:
            self.sources.close(removed=True)
            self.sources = None

    def close(self, deleted: bool = False) -> None:
        """Stop feeding; a ``deleted`` stream also asks its origins to drop its consumers."""
        if self.mirror is not None:
            self.mirror.close(deleted)
            self.mirror = None
        if self.sources is not None:
            self.sources.close(deleted)
            self.sources = None

    def add_info(self, info: dict[str, Any]) -> dict[str, Any]:
        """``StreamInfo`` with ``mirror`` or ``sources`` placed before ``ts``, as nats-server writes it."""
        if self.mirror is None and self.sources is None:
            return info
        ts = info.pop("ts")
        if self.mirror is not None:
            info["mirror"] = self.mirror.info()
        if self.sources is not None:
            info["sources"] = self.sources.info()
        info["ts"] = ts
        return info

    @staticmethod
    def consumer_count(consumers: Mapping[str, StreamConsumer]) -> int:
        """Consumers the state counts: direct ones (other streams' mirrors and sources) are not."""
        return sum(1 for consumer in consumers.values() if not consumer.config["direct"])
