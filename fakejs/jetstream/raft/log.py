"""The log as a node (and the in-memory store) holds it: a snapshot, then the entries after it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fakejs.jetstream.raft.entries import EMPTY_SNAPSHOT, Entry, EntryKind, Membership, Snapshot


class RaftLog:
    """Entries ``snapshot.index + 1`` to ``last_index``, in memory, after the snapshot that replaces the rest.

    ``snapshot`` and ``last_index`` are read many times a step: change them through :meth:`write` and
    :meth:`install` only, which keep them in step with the entries."""

    def __init__(self, snapshot: Snapshot = EMPTY_SNAPSHOT, entries: Iterable[Entry] = ()) -> None:
        self.snapshot = snapshot
        self._entries: list[Entry] = []
        self.last_index = snapshot.index  # kept as the log changes: read several times a step
        self._restore(list(entries))

    def _restore(self, entries: list[Entry]) -> None:
        """Keep the loaded entries the snapshot does not cover, when they continue it."""
        if entries and entries[0].index != self.snapshot.index + 1:
            offset = self.snapshot.index - entries[0].index  # where the snapshot's last entry is, if there
            matches = 0 <= offset < len(entries) and entries[offset].term == self.snapshot.term
            entries = entries[offset + 1 :] if matches else []
        self._entries = entries
        self.last_index = self.snapshot.index + len(entries)

    @property
    def first_index(self) -> int:
        return self.snapshot.index + 1

    @property
    def last_term(self) -> int:
        return self._entries[-1].term if self._entries else self.snapshot.term

    @property
    def entries(self) -> Sequence[Entry]:
        return self._entries

    def term_at(self, index: int) -> int | None:
        """The term of entry ``index``; ``None`` when the log neither holds it nor ends its snapshot with it."""
        snapshot = self.snapshot
        if index == snapshot.index:
            return snapshot.term
        if snapshot.index < index <= self.last_index:
            return self._entries[index - snapshot.index - 1].term
        return None

    def entry(self, index: int) -> Entry:
        return self._entries[index - self.snapshot.index - 1]

    def between(self, start: int, end: int) -> list[Entry]:
        """Entries ``start`` to ``end``, both included (within what the log holds)."""
        offset = self.snapshot.index + 1
        return self._entries[max(start - offset, 0) : max(end - offset + 1, 0)]

    def batch(self, start: int, max_entries: int, max_bytes: int) -> list[Entry]:
        """Entries from ``start`` within both limits, and always the first one there is."""
        offset = max(start - self.snapshot.index - 1, 0)
        batch = self._entries[offset : offset + max_entries]  # a slice: no walk over the entries before it
        size = 0
        for count, entry in enumerate(batch):
            size += entry.size
            if count and size > max_bytes:
                return batch[:count]
        return batch

    def write(self, first_index: int, entries: Sequence[Entry]) -> None:
        """Drop the entries from ``first_index`` on, then append ``entries``."""
        del self._entries[max(first_index - self.snapshot.index - 1, 0) :]
        self._entries.extend(entries)
        self.last_index = self.snapshot.index + len(self._entries)

    def install(self, snapshot: Snapshot) -> None:
        """Let ``snapshot`` replace the entries it covers (see :func:`entries_after`)."""
        self._entries = entries_after(self, snapshot)
        self.snapshot = snapshot
        self.last_index = snapshot.index + len(self._entries)

    def latest_membership(self, up_to: int) -> tuple[Membership | None, int]:
        """The newest membership logged at or before ``up_to``, and its index; else the snapshot's (``None`` when
        it has none), at the snapshot's index."""
        for entry in reversed(self.between(self.first_index, up_to)):
            if entry.kind is EntryKind.PEER_STATE:
                return Membership.decode(entry.data), entry.index
        return self.snapshot.membership, self.snapshot.index


def entries_after(log: RaftLog, snapshot: Snapshot) -> list[Entry]:
    """What of ``log`` follows ``snapshot``: its entries past the snapshot's index when it holds the snapshot's
    last entry (same index, same term), else nothing: a log that disagrees with a snapshot is replaced whole."""
    if log.term_at(snapshot.index) != snapshot.term:
        return []
    return log.between(snapshot.index + 1, log.last_index)
