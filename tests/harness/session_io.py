"""The socket layer's side of a client session, for tests of a session without sockets."""

from __future__ import annotations

from fakejs.core.clientio import TransportDetails


class FakeIO:
    """The socket layer's side of a session, keeping what the session asked of it."""

    def __init__(self) -> None:
        self.flushes = 0
        self.early_writes = 0
        self.closed = False
        self.aborted = False
        self.buffered = 0
        self.paused: list[float] = []
        self.details = TransportDetails()

    def want_flush(self) -> None:
        self.flushes += 1

    def write_early(self) -> None:
        self.early_writes += 1

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def write_buffer_size(self) -> int:
        return self.buffered

    def pause_reading(self, seconds: float) -> None:
        self.paused.append(seconds)
