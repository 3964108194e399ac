"""What a link between servers (a route or a leaf connection) shares with its socket, the same for either kind.

:class:`LinkOutput` holds the frames a link queued until its socket writes
them, :func:`read_operations` feeds the socket's bytes to the link's parser
and each operation to the link, and :class:`LinkDeadline` is the one timer a
link arms while it waits for its remote to log in (or to answer).  Each link
(:class:`~fakejs.core.cluster.link.RouteLink`,
:class:`~fakejs.core.leaf.link.LeafLink`) holds its own and keeps what differs
between the kinds, its log lines and close reasons, to itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from fakejs.core.clock import Clock, TimerHandle
from fakejs.protocol.events import ProtocolViolation
from fakejs.protocol.route import RouteEvent, RouteParser

__all__ = ["ERR_AUTH_TIMEOUT", "WRONG_PORT", "LinkDeadline", "LinkOutput", "read_operations"]

# nats-server's close reason for a link its remote dialled on the wrong port (a client, on a route or leaf port).
WRONG_PORT = "Incorrect Port"
# The -ERR text of a link that did not log in in time (closed with AUTH_TIMEOUT, fakejs.core.clientio).
ERR_AUTH_TIMEOUT = "Authentication Timeout"


class FlushRequests(Protocol):
    """The socket side of a link's output: it writes :meth:`LinkOutput.take` soon once asked."""

    def want_flush(self) -> None: ...


class ClosingLink(Protocol):
    """A link as :func:`read_operations` sees it: it stops reading once closed."""

    @property
    def closed(self) -> bool: ...


class LinkOutput:
    """The frames a link queued for its socket, written together when the socket flushes."""

    def __init__(self, socket: FlushRequests) -> None:
        self._socket = socket
        self.frames: list[bytes] = []

    def add(self, frame: bytes) -> None:
        """Queue ``frame``; the first frame after a flush asks the socket for the next."""
        if not self.frames:
            self._socket.want_flush()
        self.frames.append(frame)

    def add_last(self, frame: bytes) -> None:
        """Queue ``frame`` (an ``-ERR`` before closing) and ask for a flush whatever is queued."""
        self.frames.append(frame)
        self._socket.want_flush()

    def take(self) -> bytes:
        """All that is queued, as one write; the queue is left empty."""
        data = b"".join(self.frames)
        self.frames.clear()
        return data

    @property
    def size(self) -> int:
        """Bytes waiting to be written (``pending_size`` of ``/routez``, ``pending`` of ``/leafz``)."""
        return sum(len(frame) for frame in self.frames)


def read_operations(
    link: ClosingLink, parser: RouteParser, data: bytes, handle: Callable[[RouteEvent], None]
) -> ProtocolViolation | None:
    """Feed ``data`` to ``parser`` and each whole operation to ``handle`` until the input runs out or the link closes.

    Returns the violation that stopped the reading when the input (or the
    link's handling of it) broke the protocol: the link logs and closes as
    its kind does.
    """
    parser.receive_data(data)
    try:
        while not link.closed:
            event = parser.next_event()
            if event is None:
                return None
            handle(event)
    except ProtocolViolation as violation:
        return violation
    return None


class LinkDeadline:
    """The one timer a link arms while it waits for its remote (a login, an answer); cleared once it came."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._timer: TimerHandle | None = None

    def arm(self, delay: float, expired: Callable[[], None]) -> None:
        """Call ``expired`` in ``delay`` seconds unless :meth:`clear` comes first."""
        self._timer = self._clock.call_later(delay, self._expire, expired)

    def clear(self) -> None:
        """The remote answered in time (or the link closed): the timer will not fire."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self, expired: Callable[[], None]) -> None:
        self._timer = None
        expired()
