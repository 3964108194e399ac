"""What passes between a client session and the socket layer.

:class:`ClientIO` is what the socket layer (:mod:`fakejs.server.connection`)
provides to a :class:`~fakejs.core.session.ClientSession`; the close
reasons are nats-server's words for why a connection ended, which the
session records and ``/connz`` reports.
"""

from __future__ import annotations

from typing import Protocol

# Why a connection closed, in nats-server's words (as /connz reports them).
CLIENT_CLOSED = "Client Closed"
SERVER_SHUTDOWN = "Server Shutdown"
SLOW_CONSUMER_PENDING = "Slow Consumer (Pending Bytes)"
SLOW_CONSUMER_DEADLINE = "Slow Consumer (Write Deadline)"
STALE_CONNECTION = "Stale Connection"
PROTOCOL_VIOLATION = "Protocol Violation"
AUTH_VIOLATION = "Authentication Failure"
AUTH_TIMEOUT = "Authentication Timeout"
KICKED = "Kicked"
MAX_CONNECTIONS_EXCEEDED = "Maximum Connections Exceeded"


class ClientIO(Protocol):
    """What the socket layer provides to a session."""

    def want_flush(self) -> None:
        """Arrange for :meth:`ClientSession.take_output` to be written soon."""

    def close(self) -> None:
        """Write what is pending, then close the connection."""

    def abort(self) -> None:
        """Drop the connection at once, discarding pending output."""

    def write_buffer_size(self) -> int:
        """Bytes handed to the transport but not yet sent."""

    def pause_reading(self, seconds: float) -> None:
        """Stop reading for ``seconds`` (real time), then call :meth:`ClientSession.resume`."""
