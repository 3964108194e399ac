"""The server's batch limits and its batches in flight, counted across its streams.

Apart from the batches themselves (:mod:`~fakejs.jetstream.stream.batch`, atomic;
:mod:`~fakejs.jetstream.stream.fast_batch`, fast-ingest): a JetStream holds its
server's limits from its start, and a server that no stream was made on yet
does not load the batch machinery.
"""

from __future__ import annotations

__all__ = ["BatchLimits", "FastBatchLimits"]


class FastBatchLimits:
    """The server's fast-batch limits (nats-server's defaults) and its fast batches in flight, across streams.

    Plain classes, these two: every JetStream start makes them, and a dataclass costs its import.
    """

    __slots__ = ("inflight", "max_inflight_per_stream", "max_inflight_total", "timeout")

    def __init__(
        self, max_inflight_per_stream: int = 1000, max_inflight_total: int = 50_000, timeout: float = 10.0
    ) -> None:
        self.max_inflight_per_stream = max_inflight_per_stream
        self.max_inflight_total = max_inflight_total
        self.timeout = timeout  # seconds without a message before a batch is dropped
        self.inflight = 0


class BatchLimits:
    """The server's batch limits (nats-server's defaults) and its batches in flight, across streams.

    ``fast`` holds the fast-batch ones: the same ``jetstream { limits { batch } }``
    options set both kinds, each counted on its own.
    """

    __slots__ = ("fast", "inflight", "max_inflight_per_stream", "max_inflight_total", "max_msgs", "timeout")

    def __init__(self) -> None:
        self.max_inflight_per_stream = 50
        self.max_inflight_total = 1000
        self.max_msgs = 1000
        self.timeout = 10.0
        self.inflight = 0
        self.fast = FastBatchLimits()

    @classmethod
    def configured(cls, per_stream: int, total: int, max_msgs: int, timeout: float) -> BatchLimits:
        """The limits with the configured values (those above zero) in place of the defaults."""
        limits = cls()
        fast = limits.fast
        if per_stream > 0:
            limits.max_inflight_per_stream = fast.max_inflight_per_stream = per_stream
        if total > 0:
            limits.max_inflight_total = fast.max_inflight_total = total
        if max_msgs > 0:
            limits.max_msgs = max_msgs
        if timeout > 0:
            limits.timeout = fast.timeout = timeout
        return limits

    def follow(self, other: BatchLimits) -> None:
        """A reload's limits (``other``'s) in place of these, the batches in flight still counted."""
        self.max_inflight_per_stream, self.max_inflight_total = other.max_inflight_per_stream, other.max_inflight_total
        self.max_msgs, self.timeout = other.max_msgs, other.timeout
        fast, new = self.fast, other.fast
        fast.max_inflight_per_stream, fast.max_inflight_total = new.max_inflight_per_stream, new.max_inflight_total
        fast.timeout = new.timeout
