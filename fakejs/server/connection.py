"""One client socket: moves bytes between an asyncio transport and its :class:`ClientSession`.

Bytes read go to the session; its queued output is written once per
event-loop turn so that many small frames leave in one ``send``.  Output
queued while a read is handled (the answer to a request, a fan-out) is
written as soon as that read is done, without waiting for the next turn
of the loop: a round trip costs one loop turn instead of two.  A client
that stops reading is cut off when a write stays blocked past
``write_deadline``.  An exception while the session handles input (or
while its output is written) is recorded on the server and the connection
is dropped (as asyncio itself would drop it), so the client sees the
failure instead of waiting.

Between the socket and the session sit the connection's layers
(:mod:`fakejs.server.layers`: TLS, WebSocket), bottom first.  Bytes read
climb through them, output descends; what a layer writes on its own goes
down through the layers beneath it.  The session starts (and greets the
client with INFO) once every layer is ready; a layer that fails closes the
connection with its reason, and one not ready within ``ready_within``
seconds of server time closes it too.

A connection that greets its client before its layers are ready (the
TLS client port: :mod:`fakejs.server.tls_greeting`) builds on the public
hooks here: :meth:`Connection.begin` (what happens once the socket is
accepted), :meth:`Connection.client_spoke` (the bytes before the layers
see them), :meth:`Connection.session_ready` (what happens once every
layer is ready), and the ready timer, :meth:`Connection.flush`,
:meth:`Connection.write_below` and :meth:`Connection.fail` to act.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Sequence
from typing import Any, Protocol, cast

from fakejs.core.broker import Broker
from fakejs.core.clientio import SLOW_CONSUMER_DEADLINE, STANDARD, TransportDetails
from fakejs.core.clock import TimerHandle
from fakejs.core.session import ClientSession
from fakejs.server.layers import Layer, LayerFailed
from fakejs.testkit.transcript import Transcript


def tcp_peer(transport: asyncio.Transport) -> tuple[str, int]:
    """Turn Nagle off on a new connection (small protocol frames go at once); its peer's address."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
    peer = transport.get_extra_info("peername") or ("", 0)
    return str(peer[0]), int(peer[1])


class Listener(Protocol):
    """What a connection needs from the server that accepted it."""

    @property
    def broker(self) -> Broker: ...

    @property
    def loop(self) -> asyncio.AbstractEventLoop: ...

    @property
    def accepting(self) -> bool:
        """False while shutting down: new connections are refused."""
        ...

    def client_activity(self) -> None:
        """A client sent something (an idle server lets an autojump clock move)."""

    def new_transcript(self, cid: int) -> Transcript | None:
        """The transcript to keep for client ``cid``, if the server keeps them."""

    @property
    def output_batch(self) -> OutputBatch:
        """The connections with output waiting while a read is handled."""
        ...


class OutputBatch:
    """Connections whose output was queued while a read is being handled (one per server).

    They are written when the read is done.  While faults are installed the
    batch stays off: a fault's action runs on the next loop turn and, as
    before, sees that output not yet written.
    """

    __slots__ = ("active", "waiting")

    def __init__(self) -> None:
        self.active = False
        self.waiting: list[Connection] = []


class Connection(asyncio.Protocol):
    """Moves bytes between one socket and its :class:`ClientSession` (the session's ``ClientIO``)."""

    def __init__(
        self,
        server: Listener,
        layers: Sequence[Layer] = (),
        *,
        connection_type: str = STANDARD,
        ready_within: float | None = None,
        not_ready: tuple[str, str] = ("", ""),
    ) -> None:
        self._server = server
        self._loop = server.loop
        self._transport: asyncio.Transport | None = None
        self._flush_pending = False
        self._reading_paused = False
        self._deadline: TimerHandle | None = None
        self.session: ClientSession | None = None
        self.transcript: Transcript | None = None
        self.layers: list[Layer] = list(layers)
        self._details = TransportDetails(connection_type=connection_type)
        self._started = False
        self._ready_within = ready_within
        self._not_ready = not_ready  # (log line, close reason) when the layers miss ``ready_within``
        self._ready_timer: TimerHandle | None = None

    # asyncio.Protocol -------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's are not subclasses of asyncio.Transport, so no isinstance check)
        self._transport = stream = cast(asyncio.Transport, transport)
        host, port = tcp_peer(stream)
        self.session = ClientSession(self._server.broker, self, host, port)
        self.transcript = self._server.new_transcript(self.session.cid)
        if not self._server.accepting:
            stream.abort()
            return
        self._guarded("start", self.begin)

    def data_received(self, data: bytes) -> None:
        server = self._server
        server.client_activity()
        session = self.session
        if session is None:
            return
        batch = server.output_batch
        if batch.active or server.broker.faults:
            self._guarded("input", self._received, data)
            return
        batch.active = True
        try:
            self._guarded("input", self._received, data)
        finally:
            batch.active = False
        waiting = batch.waiting
        if waiting:
            batch.waiting = []
            for conn in waiting:
                conn._guarded("output", conn.flush)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        self.cancel_ready_timer()
        session = self.session
        if session is not None:
            self._guarded("close", session.connection_lost)
        self._transport = None

    def pause_writing(self) -> None:
        if self._deadline is None:
            broker = self._server.broker
            self._deadline = broker.clock.call_later(broker.options.write_deadline, self._write_deadline_passed)

    def resume_writing(self) -> None:
        self._cancel_deadline()

    # ClientIO -----------------------------------------------------------------

    def want_flush(self) -> None:
        if not self._flush_pending:
            self._flush_pending = True
            batch = self._server.output_batch
            if batch.active:
                batch.waiting.append(self)
            else:
                self._loop.call_soon(self._guarded, "output", self.flush)

    def write_early(self) -> None:
        # With faults installed output waits for the turn's end, where a fault's action expects it.
        if not self._server.broker.faults:
            self.flush()

    def close(self) -> None:
        self.flush()
        if self._transport is not None:
            self._transport.close()

    def abort(self) -> None:
        if self._transport is not None:
            self._transport.abort()

    def write_buffer_size(self) -> int:
        transport = self._transport
        return transport.get_write_buffer_size() if transport is not None else 0

    @property
    def details(self) -> TransportDetails:
        return self._details

    def pause_reading(self, seconds: float) -> None:
        transport = self._transport
        if transport is None or self._reading_paused:
            return
        self._reading_paused = True
        transport.pause_reading()
        # Flow control, not protocol timing: always real time.
        self._loop.call_later(seconds, self._resume_reading)

    # -- hooks for a connection that greets before its layers are ready ----------------------

    def begin(self) -> None:
        """The socket is accepted and the session made: start it once the layers are ready.

        A layer-less connection starts at once; one whose layers handshake first
        waits for them, at most ``ready_within`` seconds of server time.
        """
        if self.layers_ready:
            self.start_session()
        elif self._ready_within is not None:
            self.set_ready_timer(self._ready_within, self._ready_deadline_passed)

    def client_spoke(self, data: bytes) -> None:
        """Bytes from the socket, before the layers see them (a TLS port decides on its first bytes)."""

    def session_ready(self) -> None:
        """Every layer is ready: greet the client and start its timers (:meth:`ClientSession.start`)."""
        session = self.session
        assert session is not None
        self._guarded("start", session.start)

    @property
    def counted_in(self) -> bool:
        """Whether the session was registered before its layers were ready (closing it then closes a client)."""
        return False

    # -- layers -------------------------------------------------------------------

    def insert_layer(self, index: int, layer: Layer) -> None:
        """Put a layer into the stack (e.g. TLS under everything once INFO has gone out in plain text)."""
        self.layers.insert(index, layer)

    def clear_layers(self) -> None:
        """Take every layer away (a TLS port falling back to plain text)."""
        self.layers.clear()

    @property
    def layers_ready(self) -> bool:
        return all(layer.ready for layer in self.layers)

    @property
    def started(self) -> bool:
        """The session has started (every layer was ready)."""
        return self._started

    @property
    def transport(self) -> asyncio.Transport | None:
        """The socket's transport (``None`` once the connection is lost)."""
        return self._transport

    def set_ready_timer(self, seconds: float, callback: Callable[[], None]) -> None:
        """Call ``callback`` after ``seconds`` of server time unless the timer is cancelled or replaced first."""
        self.cancel_ready_timer()

        def fire() -> None:
            self._ready_timer = None
            self._guarded("timer", callback)

        self._ready_timer = self._server.broker.clock.call_later(seconds, fire)

    def cancel_ready_timer(self) -> None:
        if self._ready_timer is not None:
            self._ready_timer.cancel()
            self._ready_timer = None

    # -----------------------------------------------------------------------------------

    def _received(self, data: bytes) -> None:
        """Bytes from the socket: up through the layers, to the session once they are ready."""
        if data:
            self.client_spoke(data)
        chunk = data
        try:
            for index, layer in enumerate(self.layers):
                chunk = layer.receive(chunk)
                own = layer.take_output()
                if own:
                    self.write_below(index, own)
                if layer.peer_closed:
                    self.close()
                    return
                if not chunk:
                    break
        except LayerFailed as failure:
            self.fail(self.layers.index(layer), failure)
            return
        if not self._started:
            if not self.layers_ready:
                return
            self.start_session()
        if chunk and self.session is not None and not self.session.closed:
            if self.transcript is not None:
                self.transcript.record("in", chunk)
            self.session.data_received(chunk)

    def start_session(self) -> None:
        """Every layer is ready: record what they know about the client, then :meth:`session_ready`."""
        self._started = True
        self.cancel_ready_timer()
        for layer in self.layers:
            layer.describe(self._details)
        self.session_ready()

    def write_below(self, index: int, data: bytes) -> None:
        """Write bytes produced by layer ``index`` through the layers beneath it."""
        for layer in reversed(self.layers[:index]):
            data = layer.send(data)
        transport = self._transport
        if data and transport is not None and not transport.is_closing():
            transport.write(data)

    def fail(self, index: int, failure: LayerFailed) -> None:
        """Layer ``index`` cannot go on: log it, write its farewell beneath it, close the client or the socket."""
        session = self.session
        if failure.passed and session is not None and self._started and not session.closed:
            session.data_received(failure.passed)
            self.flush()  # what that input earned goes out, as nats-server signals its writer before closing
        log = self._server.broker.log
        (log.debug if failure.quiet else log.error)("%s - %s", session, failure.log)
        if failure.farewell:
            self.write_below(index, failure.farewell)
        if session is not None and (self._started or self.counted_in):
            session.close(failure.reason)
        elif self._transport is not None:
            self._transport.close()

    def _ready_deadline_passed(self) -> None:
        if not self._started:
            log, reason = self._not_ready
            self.fail(0, LayerFailed(log, reason))

    # ---------------------------------------------------------------------------

    def _guarded(self, what: str, handler: Callable[..., None], *args: Any) -> None:
        """Run a session handler; an exception is recorded and the connection dropped."""
        try:
            handler(*args)
        except Exception as exc:  # noqa: BLE001 - recorded on the server; the client sees its connection dropped
            self._server.broker.record_error(f"client {self.session!r} {what}", exc)
            self.abort()

    def _resume_reading(self) -> None:
        self._reading_paused = False
        transport = self._transport
        if transport is not None and not transport.is_closing():
            transport.resume_reading()
        if self.session is not None:
            self._guarded("input", self.session.resume)

    def flush(self) -> None:
        """Write the session's queued output now, down through the layers."""
        self._flush_pending = False
        session = self.session
        transport = self._transport
        if session is None or transport is None:
            return
        data = session.take_output()
        if data and not transport.is_closing():
            if self.transcript is not None:
                self.transcript.record("out", data)
            for layer in reversed(self.layers):
                data = layer.send(data)
            if data:
                transport.write(data)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _write_deadline_passed(self) -> None:
        self._deadline = None
        if self.session is not None and not self.session.closed:
            self.session.slow_consumer(SLOW_CONSUMER_DEADLINE)
