"""A stream's duplicate window: message ids seen recently, forgotten on the server clock.

``Nats-Msg-Id`` values are remembered with the sequence they were stored at
for ``duplicate_window`` nanoseconds; a publish repeating one inside the
window is acknowledged as a duplicate and not stored.  Ids are kept in
arrival order, so one timer, re-armed for the oldest id, forgets them.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol

from fakejs.core.clock import Clock, TimerHandle
from fakejs.gocompat.gotime import NS
from fakejs.jetstream.config.stream import StreamConfig


class DeduplicatingStream(Protocol):
    """The stream a duplicate window serves, as the window reads it: its current config (``duplicate_window``)."""

    @property
    def config(self) -> StreamConfig: ...


class DuplicateWindow:
    """The ``Nats-Msg-Id`` values a stream stored inside its ``duplicate_window``, with their sequences
    (nats-server's ``mset.ddmap``), forgotten by one timer."""

    def __init__(self, clock: Clock, stream: DeduplicatingStream) -> None:
        self.clock = clock
        self.stream = stream
        self._seen: OrderedDict[str, tuple[int, int]] = OrderedDict()  # id -> (seq, stored at ns)
        self._timer: TimerHandle | None = None

    def window_ns(self) -> int:
        """The stream's current ``duplicate_window`` in nanoseconds (an update changes it)."""
        return self.stream.config["duplicate_window"]

    def lookup(self, msg_id: str) -> int | None:
        """The sequence a message with this id was stored at, if inside the window."""
        entry = self._seen.get(msg_id)
        if entry is None:
            return None
        seq, ts = entry
        if self.clock.time_ns() - ts >= self.window_ns():
            return None
        return seq

    def remember(self, msg_id: str, seq: int, ts: int | None = None) -> None:
        """An id stored at ``seq`` at time ``ts`` (the message's; now when not given)."""
        window = self.window_ns()
        if window <= 0:
            return
        self._seen.pop(msg_id, None)
        self._seen[msg_id] = (seq, self.clock.time_ns() if ts is None else ts)
        if self._timer is None:
            self._timer = self.clock.call_later(window / NS, self._forget_expired)

    def remember_at(self, msg_id: str, seq: int, ts: int) -> None:
        """Put back an id read from a stored message (after a restart)."""
        self._seen[msg_id] = (seq, ts)
        if self._timer is None:
            delay = max(self.window_ns() - (self.clock.time_ns() - ts), 0)
            self._timer = self.clock.call_later(delay / NS, self._forget_expired)

    def _forget_expired(self) -> None:
        self._timer = None
        now = self.clock.time_ns()
        window = self.window_ns()
        while self._seen:
            msg_id, (_seq, ts) = next(iter(self._seen.items()))
            if now - ts >= window:
                del self._seen[msg_id]
            else:
                self._timer = self.clock.call_later((window - (now - ts)) / NS, self._forget_expired)
                break

    def entries(self) -> list[tuple[str, int, int]]:
        """The ids remembered, oldest first, with their sequences and times (a replicated stream's snapshot)."""
        return [(msg_id, seq, ts) for msg_id, (seq, ts) in self._seen.items()]

    def clear(self) -> None:
        """Forget every id (before a snapshot's are put back)."""
        self._seen.clear()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
