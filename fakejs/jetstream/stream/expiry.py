"""When a stream's messages expire: ``max_age`` and per-message TTLs, on the server clock.

One timer is armed for the earliest expiry (the oldest message that may
age out, or the nearest TTL); when it fires the stream asks for the due
sequences, removes them (or leaves delete markers), and re-arms.  TTLs are
kept in a heap; entries of messages already gone are dropped lazily.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Protocol

from fakejs.core.clock import Clock, EarliestTimer
from fakejs.gocompat.gotime import NS
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.storage.store import MessageStore


class ExpiringStream(Protocol):
    """The stream whose messages expire, as its expiry reads it: its current config (``max_age``)."""

    @property
    def config(self) -> StreamConfig: ...


class MessageExpiry:
    """When a stream's messages age out (``max_age``) or their ``Nats-TTL`` runs out: one timer for the
    earliest, and the sequences due when it fires."""

    def __init__(self, store: MessageStore, clock: Clock, stream: ExpiringStream, on_due: Callable[[], None]) -> None:
        """``on_due`` runs when the timer fires."""
        self.store = store
        self.clock = clock
        self.stream = stream
        self.on_due = on_due
        self._ttls: list[tuple[int, int]] = []  # (expires at ns, seq)
        # Messages whose expiry was refused (a counter stream refuses the delete
        # marker): not due again before the given time (ns), as nats-server
        # retries a subject delete marker after two seconds.
        self._held: dict[int, int] = {}
        self._timer = EarliestTimer(clock, on_due)

    def max_age_ns(self) -> int:
        """The stream's current ``max_age`` in nanoseconds (an update changes it)."""
        return self.stream.config["max_age"]

    def add_ttl(self, expires_ns: int, seq: int) -> None:
        heapq.heappush(self._ttls, (expires_ns, seq))

    def stored(self, seq: int, ts: int, ttl: int) -> None:
        """A message was stored at ``ts`` with a ``ttl`` (seconds; -1 never): arm for its expiry.

        An earlier expiry already armed stays (every message stored before
        has armed the timer for its own), so a publish costs no timer change.
        """
        due = 0
        if ttl > 0:
            due = ts + ttl * NS
            self.add_ttl(due, seq)
        max_age = self.max_age_ns()
        if max_age > 0 and ttl >= 0 and (due == 0 or ts + max_age < due):
            due = ts + max_age
        if due:
            self._timer.arm(max(due - self.clock.time_ns(), 0) / NS)

    def hold(self, seq: int, until_ns: int) -> None:
        """``seq`` could not expire now: try again at ``until_ns``."""
        self._held[seq] = until_ns
        heapq.heappush(self._ttls, (until_ns, seq))

    def _held_until(self, seq: int) -> int | None:
        until = self._held.get(seq)
        if until is not None and self.store.get(seq) is None:
            del self._held[seq]
            return None
        return until

    def next_due_ns(self) -> int | None:
        candidates = []
        max_age = self.max_age_ns()
        if max_age > 0:
            for msg in self.store:
                if msg.ttl < 0:  # messages with "Nats-TTL: never" outlive max_age
                    continue
                until = self._held_until(msg.seq) if self._held else None
                candidates.append(max(msg.ts + max_age, until or 0))
                if until is None:
                    break
        while self._ttls and self.store.get(self._ttls[0][1]) is None:
            heapq.heappop(self._ttls)
        if self._ttls:
            candidates.append(self._ttls[0][0])
        return min(candidates) if candidates else None

    def rearm(self) -> None:
        """Arm the timer for the earliest expiry (an earlier one already armed is kept)."""
        due = self.next_due_ns()
        if due is None:
            self._timer.cancel()
        else:
            self._timer.arm(max(due - self.clock.time_ns(), 0) / NS)

    def due(self, now: int) -> list[int]:
        """Sequences whose age or TTL has run out at ``now``, in order."""
        expired: list[int] = []
        max_age = self.max_age_ns()
        if max_age > 0:
            for msg in self.store:
                if msg.ts + max_age > now:
                    break
                if msg.ttl < 0:
                    continue
                expired.append(msg.seq)
        while self._ttls and self._ttls[0][0] <= now:
            expired.append(heapq.heappop(self._ttls)[1])
        if self._held:
            expired = [seq for seq in expired if (self._held_until(seq) or 0) <= now]
            for seq in expired:
                self._held.pop(seq, None)
        return sorted(set(expired))

    def close(self) -> None:
        self._timer.cancel()
