"""When a group's state machine is snapshotted and its log compacted: after enough entries or enough bytes.

A member applies its group's committed entries; once the entries, or their
bytes, applied since the last snapshot reach its :class:`Compaction`'s
thresholds, it asks the state machine for a snapshot and the node drops the
log the snapshot covers (:meth:`~fakejs.jetstream.replication.group.ReplicatedGroup.compact`).
A restarted member then reads the snapshot and the entries after it, and a
follower that fell behind the compaction is sent the snapshot.

The thresholds are nats-server's (``server/jetstream_cluster.go``): a stream
group compacts after 65536 entries or 8 MiB (``monitorStream``), a consumer
group after 1024 entries or 64 KiB (``monitorConsumer``: its state is always
small); the meta group takes the stream's.  nats-server also compacts on a
two-minute ticker; here only the counts do.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CONSUMER_COMPACTION", "META_COMPACTION", "NEVER", "STREAM_COMPACTION", "Compaction"]


@dataclass(frozen=True, slots=True)
class Compaction:
    """Snapshot after ``entries`` applied entries, or ``size`` bytes of them, since the last snapshot (0: no
    threshold of that kind; both 0: never, but when asked)."""

    entries: int = 0
    size: int = 0

    def __post_init__(self) -> None:
        if self.entries < 0 or self.size < 0:
            raise ValueError("compaction thresholds cannot be negative")

    def due(self, entries: int, size: int) -> bool:
        """Whether ``entries`` entries of ``size`` bytes applied since the last snapshot call for another."""
        return (0 < self.entries <= entries) or (0 < self.size <= size)


NEVER = Compaction()
STREAM_COMPACTION = Compaction(entries=65536, size=8 * 1024 * 1024)
CONSUMER_COMPACTION = Compaction(entries=1024, size=64 * 1024)
META_COMPACTION = STREAM_COMPACTION
