"""Stages between a client's socket and its session: TLS, WebSocket -- sans-IO, stacked by the connection.

A :class:`Layer` turns the bytes of the stage below it (the socket, or the
layer under it) into the bytes of the stage above (the next layer, or the
NATS session), and back.  Layers do no I/O and start no timers: the
:class:`~fakejs.server.connection.Connection` moves the bytes, writes what a
layer produces on its own (handshake records, pongs, close frames) through
the layers beneath it, starts the session once every layer is ready, and
closes the connection when a layer fails.  Timeouts (a handshake that never
finishes) are the connection's, on the server clock.
"""

from __future__ import annotations

from typing import Protocol

from fakejs.core.clientio import TransportDetails


class LayerFailed(Exception):
    """A layer cannot go on (a failed handshake, a broken frame): the connection is closed.

    ``log`` is the server log line (nats-server's words where it logs one),
    ``reason`` the close reason /connz reports, and ``farewell`` bytes the
    layer wants written (below it) before the socket closes -- an HTTP error
    reply, a TLS alert, a close frame.  A ``quiet`` failure is logged at debug
    level (nats-server's level for probes and load balancers).  ``passed``
    holds what the layer read for the stage above before it failed: the
    session still gets it (nats-server parses each frame as it reads it).
    """

    quiet = False
    passed = b""

    def __init__(self, log: str, reason: str, farewell: bytes = b"") -> None:
        super().__init__(log)
        self.log = log
        self.reason = reason
        self.farewell = farewell


class Layer(Protocol):
    """One stage of a connection's byte stack (see the module docstring)."""

    def receive(self, data: bytes) -> bytes:
        """Bytes from below; returns the bytes now available to the stage above (``b""`` while handshaking).

        Raises :class:`LayerFailed` when the bytes cannot be accepted.
        """
        ...

    def send(self, data: bytes) -> bytes:
        """Bytes from above; returns what to pass below (a layer not yet ready keeps them until it is)."""
        ...

    def take_output(self) -> bytes:
        """Bytes the layer produced on its own since last asked (handshake replies, control frames)."""
        ...

    @property
    def ready(self) -> bool:
        """The handshake is done: bytes flow both ways (the session may start)."""
        ...

    @property
    def peer_closed(self) -> bool:
        """The peer ended the stream cleanly (TLS close_notify, a WebSocket close frame)."""
        ...

    def describe(self, details: TransportDetails) -> None:
        """Record what the layer knows about the client (TLS version, peer certificate, Origin) once ready."""
        ...
