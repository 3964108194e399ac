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

A stream's snapshot holds its messages (they are not kept elsewhere, see
:mod:`fakejs.jetstream.stream.replica`), where nats-server's holds its state
only: a stream group also waits until the entries since the last snapshot
weigh as much as that snapshot (``outweigh_snapshot``), so that snapshots of
a large stream cost no more than the log they replace, and the log stays
within the stream's size (or the thresholds) beyond it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CONSUMER_COMPACTION", "META_COMPACTION", "NEVER", "STREAM_COMPACTION", "Compaction"]


@dataclass(frozen=True, slots=True)
class Compaction:
    """Snapshot after ``entries`` applied entries, or ``size`` bytes of them, since the last snapshot (0: no
    threshold of that kind; both 0: never, but when asked); with ``outweigh_snapshot``, only once those
    entries weigh as much as the last snapshot."""

    entries: int = 0
    size: int = 0
    outweigh_snapshot: bool = False

    def __post_init__(self) -> None:
        if self.entries < 0 or self.size < 0:
            raise ValueError("compaction thresholds cannot be negative")

    def due(self, entries: int, size: int, snapshot_size: int = 0) -> bool:
        """Whether ``entries`` entries of ``size`` bytes applied since the last snapshot (of ``snapshot_size``
        bytes) call for another."""
        if self.outweigh_snapshot and size < snapshot_size:
            return False
        return (0 < self.entries <= entries) or (0 < self.size <= size)


NEVER = Compaction()
STREAM_COMPACTION = Compaction(entries=65536, size=8 * 1024 * 1024, outweigh_snapshot=True)
CONSUMER_COMPACTION = Compaction(entries=1024, size=64 * 1024)
META_COMPACTION = Compaction(entries=65536, size=8 * 1024 * 1024)
