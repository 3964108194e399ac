"""The queue of deliveries waiting to be sent again (nats-server's ``rdq`` with its index ``rdqi``)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator


class RedeliveryQueue:
    """Stream sequences to redeliver, in the order they were queued, each at most once.

    Every operation is O(1) (pop and compaction amortised), whatever the queue
    holds: an ack checks membership and removes, an expiry check asks about
    every pending delivery, and a consumer with a hundred thousand expired
    deliveries must not pay for the whole queue on each of them.  The order is
    a deque of ``(seq, ticket)``; ``queued`` maps each queued seq to the ticket
    of its current entry, so a removed seq's entry goes stale where it is and
    is skipped when it reaches the front (or dropped when stale entries
    outnumber live ones).
    """

    def __init__(self) -> None:
        self._order: deque[tuple[int, int]] = deque()
        # Each queued seq with the ticket of its current entry; its truth is the queue's, without
        # ``__bool__``'s call (what the delivery and ack paths test on every message).
        self.queued: dict[int, int] = {}
        self._tickets = 0

    def __len__(self) -> int:
        return len(self.queued)

    def __bool__(self) -> bool:
        return bool(self.queued)

    def __contains__(self, seq: object) -> bool:
        return seq in self.queued

    def __iter__(self) -> Iterator[int]:
        live = self.queued
        return (seq for seq, ticket in list(self._order) if live.get(seq) == ticket)

    def __repr__(self) -> str:
        return f"RedeliveryQueue({list(self)})"

    def append(self, seq: int) -> None:
        """Queue ``seq`` at the back, unless it is queued already."""
        if seq in self.queued:
            return
        self._tickets += 1
        self.queued[seq] = self._tickets
        self._order.append((seq, self._tickets))

    def extend(self, seqs: list[int]) -> None:
        for seq in seqs:
            self.append(seq)

    def remove(self, seq: int) -> None:
        """Take ``seq`` out of the queue, if it is there."""
        if self.queued.pop(seq, None) is not None and len(self._order) > 2 * len(self.queued) + 64:
            self._compact()

    def popleft(self) -> int:
        """The seq queued longest ago, taken out; IndexError when empty."""
        order, live = self._order, self.queued
        while order:
            seq, ticket = order.popleft()
            if live.get(seq) == ticket:
                del live[seq]
                return seq
        raise IndexError("pop from an empty redelivery queue")

    def keep(self, wanted: Callable[[int], bool]) -> None:
        """Drop every queued seq for which ``wanted`` is false (after a purge)."""
        for seq in [seq for seq in self.queued if not wanted(seq)]:
            del self.queued[seq]
        self._compact()

    def clear(self) -> None:
        self._order.clear()
        self.queued.clear()

    def _compact(self) -> None:
        live = self.queued
        self._order = deque(entry for entry in self._order if live.get(entry[0]) == entry[1])
