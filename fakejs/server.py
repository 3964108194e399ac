"""The socket layer: asyncio listener and connections, and the public :class:`Server`.

This is the only module that touches sockets for the NATS port.  Each
accepted connection gets a :class:`~fakejs.client.ClientSession`; bytes
read go to it, and its queued output is written once per event-loop turn
so that many small frames leave in one ``send``.  A client that stops
reading is cut off when its pending output passes ``max_pending`` or a
write stays blocked past ``write_deadline``, so it never stalls the server.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from fakejs import __version__, monitor
from fakejs.broker import Broker
from fakejs.client import SERVER_SHUTDOWN, SLOW_CONSUMER_DEADLINE, ClientSession
from fakejs.clock import Clock, SystemClock, TimerHandle
from fakejs.options import NATS_VERSION, ServerOptions

__all__ = ["Server"]


class _Connection(asyncio.Protocol):
    """Moves bytes between one socket and its :class:`ClientSession`."""

    def __init__(self, server: Server) -> None:
        self._server = server
        self._loop = server.loop
        self._transport: asyncio.Transport | None = None
        self._flush_pending = False
        self._reading_paused = False
        self._deadline: TimerHandle | None = None
        self.session: ClientSession | None = None

    # asyncio.Protocol -------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        peer = transport.get_extra_info("peername") or ("", 0)
        broker = self._server.broker
        self.session = ClientSession(broker, self, str(peer[0]), int(peer[1]))
        if not self._server.accepting:
            transport.abort()
            return
        self.session.start()

    def data_received(self, data: bytes) -> None:
        session = self.session
        if session is not None:
            session.data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        session = self.session
        if session is not None:
            session.connection_lost()
        self._transport = None

    def pause_writing(self) -> None:
        if self._deadline is None:
            clock = self._server.broker.clock
            self._deadline = clock.call_later(self._server.options.write_deadline, self._write_deadline_passed)

    def resume_writing(self) -> None:
        self._cancel_deadline()

    # ClientIO -----------------------------------------------------------------

    def want_flush(self) -> None:
        if not self._flush_pending:
            self._flush_pending = True
            self._loop.call_soon(self._flush)

    def close(self) -> None:
        self._flush()
        if self._transport is not None:
            self._transport.close()

    def abort(self) -> None:
        if self._transport is not None:
            self._transport.abort()

    def write_buffer_size(self) -> int:
        transport = self._transport
        return transport.get_write_buffer_size() if transport is not None else 0

    def pause_reading(self, seconds: float) -> None:
        transport = self._transport
        if transport is None or self._reading_paused:
            return
        self._reading_paused = True
        transport.pause_reading()
        # Flow control, not protocol timing: always real time.
        self._loop.call_later(seconds, self._resume_reading)

    # ---------------------------------------------------------------------------

    def _resume_reading(self) -> None:
        self._reading_paused = False
        transport = self._transport
        if transport is not None and not transport.is_closing():
            transport.resume_reading()
        if self.session is not None:
            self.session.resume()

    def _flush(self) -> None:
        self._flush_pending = False
        session = self.session
        transport = self._transport
        if session is None or transport is None:
            return
        data = session.take_output()
        if data and not transport.is_closing():
            transport.write(data)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _write_deadline_passed(self) -> None:
        self._deadline = None
        if self.session is not None and not self.session.closed:
            self.session.slow_consumer(SLOW_CONSUMER_DEADLINE)


class Server:
    """A fakejs server running on the current asyncio loop.

    ::

        async with Server() as server:          # port 0: a free port
            nc = await nats.connect(server.url)

    Keyword arguments are :class:`~fakejs.options.ServerOptions` fields;
    ``clock`` may be a :class:`~fakejs.clock.ManualClock` for virtual time.
    """

    def __init__(self, options: ServerOptions | None = None, *, clock: Clock | None = None, **settings: Any) -> None:
        if options is None:
            settings.setdefault("port", 0)
            options = ServerOptions(**settings)
        elif settings:
            raise TypeError("give either options or keyword settings, not both")
        self.options = options
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.broker = Broker(options, self.clock)
        self.accepting = False
        self.jetstream: Any = None
        self._listener: asyncio.base_events.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._http: asyncio.base_events.Server | None = None
        self.http_requests: dict[str, int] = {}

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None, "server not started"
        return self._loop

    @property
    def port(self) -> int:
        return self.broker.port

    @property
    def host(self) -> str:
        host = self.options.host
        return "127.0.0.1" if host in ("", "0.0.0.0", "::") else host

    @property
    def url(self) -> str:
        host = self.host
        if ":" in host:
            host = f"[{host}]"
        return f"nats://{host}:{self.port}"

    @property
    def http_port(self) -> int | None:
        if self._http is None:
            return None
        return int(self._http.sockets[0].getsockname()[1])

    @property
    def http_url(self) -> str | None:
        port = self.http_port
        return None if port is None else f"http://{self.host}:{port}"

    async def start(self) -> None:
        """Listen and serve; returns once the server accepts connections."""
        self._loop = asyncio.get_running_loop()
        bind = getattr(self.clock, "bind", None)
        if bind is not None:
            bind(self._loop)
        options = self.options
        log = self.broker.log
        log.info("Starting nats-server")
        log.info("  Version:  %s (fakejs %s)", NATS_VERSION, __version__)
        log.info("  Name:     %s", self.broker.name)
        log.info("  ID:       %s", self.broker.server_id)
        if options.jetstream:
            from fakejs.jetstream import JetStream

            self.jetstream = JetStream(self.broker, options.store_dir)
            self.jetstream.start()
        self._listener = await self._loop.create_server(
            lambda: _Connection(self), options.host or "0.0.0.0", options.port, reuse_address=True
        )
        sock = self._listener.sockets[0]
        self.broker.port = sock.getsockname()[1]
        self.accepting = True
        if options.http_port is not None:
            http_host = options.http_host or options.host or "0.0.0.0"
            self._http = await asyncio.start_server(self._serve_http, http_host, options.http_port, reuse_address=True)
            log.info("Starting http monitor on %s:%d", http_host, self.http_port)
        log.info("Listening for client connections on %s:%d", options.host or "0.0.0.0", self.port)
        log.info("Server is ready")

    async def stop(self) -> None:
        """Stop listening and close every client connection."""
        if self._listener is None:
            return
        log = self.broker.log
        log.info("Initiating Shutdown...")
        self.accepting = False
        self._listener.close()
        if self.jetstream is not None:
            self.jetstream.stop()  # waiting pulls hear about it before clients go
            self.jetstream = None
        for client in list(self.broker.clients.values()):
            client.close(SERVER_SHUTDOWN)
        if self._http is not None:
            self._http.close()
            await self._http.wait_closed()
            self._http = None
        await self._listener.wait_closed()
        self._listener = None
        log.info("Server Exiting..")

    async def _serve_http(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A minimal HTTP/1.1 server for the monitoring endpoints (GET only)."""
        try:
            while True:
                request = await reader.readline()
                if not request:
                    break
                while True:  # skip the request headers
                    line = await reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                parts = request.decode("latin-1").split()
                if len(parts) < 2:
                    break
                method, target = parts[0], parts[1]
                if method not in ("GET", "HEAD"):
                    status, ctype, body = 405, "text/plain; charset=utf-8", b"Method Not Allowed\n"
                else:
                    status, ctype, body = monitor.respond(self, target)
                reason = {200: "OK", 404: "Not Found", 405: "Method Not Allowed"}.get(status, "OK")
                head = (
                    f"HTTP/1.1 {status} {reason}\r\nAccess-Control-Allow-Origin: *\r\n"
                    f"Content-Type: {ctype}\r\nContent-Length: {len(body)}\r\n\r\n"
                )
                writer.write(head.encode() + (b"" if method == "HEAD" else body))
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def __aenter__(self) -> Server:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
