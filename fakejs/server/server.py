"""The socket layer: asyncio listener and connections, and the public :class:`Server`.

This is the only module that touches sockets for the NATS port.  Each
accepted connection gets a :class:`~fakejs.core.session.ClientSession`; bytes
read go to it, and its queued output is written once per event-loop turn
so that many small frames leave in one ``send``.  A client that stops
reading is cut off when its pending output passes ``max_pending`` or a
write stays blocked past ``write_deadline``, so it never stalls the server.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from typing import Any

from fakejs._version import __version__
from fakejs.core.broker import Broker
from fakejs.core.clock import Clock, ManualClock, SystemClock, TimerHandle
from fakejs.core.options import NATS_VERSION, ServerOptions
from fakejs.core.session import SERVER_SHUTDOWN, SLOW_CONSUMER_DEADLINE, ClientSession
from fakejs.monitoring import endpoints as monitor
from fakejs.protocol import writer as wire
from fakejs.testkit import control_api
from fakejs.testkit.control import Controller
from fakejs.testkit.control_api import ControlSubjects
from fakejs.testkit.faults import Faults
from fakejs.testkit.introspection import Transcript, consumer_state, server_state

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
        self.transcript: Transcript | None = None

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
        if self._server.options.transcripts:
            self.transcript = self._server.transcripts[self.session.cid] = Transcript(self.session.cid)
        if not self._server.accepting:
            transport.abort()
            return
        self.session.start()

    def data_received(self, data: bytes) -> None:
        self._server.activity += 1
        if self.transcript is not None:
            self.transcript.record("in", data)
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
            if self.transcript is not None:
                self.transcript.record("out", data)
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

    Keyword arguments are :class:`~fakejs.core.options.ServerOptions` fields;
    ``clock`` may be a :class:`~fakejs.core.clock.ManualClock` for virtual time.
    """

    def __init__(self, options: ServerOptions | None = None, *, clock: Clock | None = None, **settings: Any) -> None:
        if options is None:
            settings.setdefault("port", 0)
            options = ServerOptions(**settings)
        elif settings:
            raise TypeError("give either options or keyword settings, not both")
        self.options = options
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.faults = Faults(self.clock)
        self.broker = Broker(options, self.clock, self.faults)
        self.accepting = False
        self.jetstream: Any = None
        self._control_subjects: ControlSubjects | None = None
        self._listener: asyncio.base_events.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._http: asyncio.base_events.Server | None = None
        self.http_requests: dict[str, int] = {}
        self._kept_store: tuple[str, bool] | None = None  # JetStream store carried over a restart
        self.transcripts: dict[int, Any] = {}
        self.control = Controller(self)
        self.finished = asyncio.Event()  # set when lame duck mode has shut the server down
        self.activity = 0  # reads from clients; an idle server lets an autojump clock move
        self._autojump: asyncio.Task[None] | None = None

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

            if self._kept_store is not None:
                store_dir, own = self._kept_store
                self.jetstream = JetStream(self.broker, store_dir, own_store=own)
            else:
                self.jetstream = JetStream(self.broker, options.store_dir)
            self._kept_store = None
            self.jetstream.start()
        if options.control:
            self._control_subjects = ControlSubjects(self.control)
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
        if isinstance(self.clock, ManualClock) and self.clock.autojump_threshold is not None and self._autojump is None:
            self._autojump = self._loop.create_task(self._autojump_loop(self.clock, self.clock.autojump_threshold))
        log.info("Listening for client connections on %s:%d", options.host or "0.0.0.0", self.port)
        log.info("Server is ready")

    async def stop(self, keep_store: bool = False) -> None:
        """Stop listening and close every client connection."""
        if self._listener is None:
            return
        if self._autojump is not None and not keep_store:
            self._autojump.cancel()
            self._autojump = None
        log = self.broker.log
        log.info("Initiating Shutdown...")
        self.accepting = False
        self._listener.close()
        if self._control_subjects is not None:
            self._control_subjects.close()
            self._control_subjects = None
        if self.jetstream is not None:
            if keep_store:
                self._kept_store = (self.jetstream.store_dir, self.jetstream.owns_store)
            self.jetstream.stop(keep_store)  # waiting pulls hear about it before clients go
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

    # -- a view inside (fakejs only) ---------------------------------------------------

    def state(self, messages: int = 100) -> dict[str, Any]:
        """Clients, streams with their messages, consumers with pending acks and waiting pulls, faults."""
        return server_state(self, messages)

    def consumer_state(self, stream: str, consumer: str) -> dict[str, Any]:
        return consumer_state(self.control._consumer(stream, consumer))

    def transcript(self, client: int | str) -> Transcript:
        """The protocol bytes of a connection (by client id or name); needs ``transcripts=True``."""
        if not self.options.transcripts:
            raise RuntimeError("start the server with transcripts=True to record connections")
        for cid, transcript in self.transcripts.items():
            session = self.broker.clients.get(cid)
            if cid == client or (session is not None and session.name == client):
                return transcript
        raise KeyError(f"no transcript for client {client!r}")

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
        """Wait until ``predicate()`` is truthy (checked as the server works); returns its value.

        ``timeout`` is real seconds: it bounds a test, it is not server time.
        """
        deadline = self.loop.time() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if self.loop.time() >= deadline:
                raise TimeoutError(f"condition not met within {timeout}s")
            await asyncio.sleep(0.002)

    async def restart(self, down_for: float = 0.0) -> None:
        """Stop, stay down for ``down_for`` seconds of server time, start on the same ports.

        File-backed streams and consumers come back from the store, as after
        a real restart; memory streams do not.  Clients see the connection
        drop and reconnect to the same URL.
        """
        port, http_port = self.port, self.http_port
        self.broker.lame_duck = False
        await self.stop(keep_store=True)
        if down_for > 0:
            await self._sleep(down_for)
        self.options.port = port
        if http_port is not None:
            self.options.http_port = http_port
        await self.start()

    async def lame_duck(self, duration: float | None = None, grace: float | None = None) -> None:
        """nats-server's lame duck mode, on the server clock.

        Stop accepting connections and shut JetStream down, tell every client
        that reads async INFO (``"ldm": true``), wait the grace period, close
        the clients one by one spread over the rest of ``duration`` (at most
        a second apart), then shut down.
        """
        options = self.options
        duration = options.lame_duck_duration if duration is None else duration
        grace = options.lame_duck_grace_period if grace is None else grace
        if self._listener is None or self.broker.lame_duck:
            return
        log = self.broker.log
        log.info("Entering lame duck mode, stop accepting new clients")
        self.broker.lame_duck = True
        self.accepting = False
        self._listener.close()
        if self.jetstream is not None:
            self.jetstream.stop()
            self.jetstream = None
        clients = [c for c in self.broker.clients.values() if not c.closed]
        for client in clients:
            if client.protocol >= 1:
                client.send(wire.info(self.broker.info_fields(client)))
        if clients:
            await self._sleep(grace)
            log.info("Closing existing clients")
            spread = max(duration - grace, 1.0)
            interval = min(spread / len(clients), 1.0)
            for i, client in enumerate(clients):
                client.close(SERVER_SHUTDOWN)
                if i < len(clients) - 1:
                    await self._sleep(self.broker.random.uniform(interval / 2, interval))
        await self.stop()
        self.finished.set()

    async def _autojump_loop(self, clock: ManualClock, threshold: float) -> None:
        """Jump the manual clock to its next timer whenever clients stay quiet for ``threshold``."""
        seen = -1
        while True:
            await asyncio.sleep(threshold)  # real time: this is what decides that virtual time may move
            if self.activity == seen:
                clock.jump()
            seen = self.activity

    async def _sleep(self, seconds: float) -> None:
        """Wait on the server clock (virtual time under a manual clock)."""
        done = self.loop.create_future()
        self.clock.call_later(seconds, lambda: done.done() or done.set_result(None))
        await done

    async def _serve_http(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A minimal HTTP/1.1 server: monitoring (GET) and the control API under ``/fakejs/``."""
        try:
            while True:
                request = await reader.readline()
                if not request:
                    break
                length = 0
                while True:
                    line = await reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = line.decode("latin-1").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip() or 0)
                body = await reader.readexactly(length) if length else b""
                parts = request.decode("latin-1").split()
                if len(parts) < 2:
                    break
                method, target = parts[0], parts[1]
                status, ctype, payload = self._http_response(method, target, body)
                reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}.get(status, "OK")
                head = (
                    f"HTTP/1.1 {status} {reason}\r\nAccess-Control-Allow-Origin: *\r\n"
                    f"Content-Type: {ctype}\r\nContent-Length: {len(payload)}\r\n\r\n"
                )
                writer.write(head.encode() + (b"" if method == "HEAD" else payload))
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()

    def _http_response(self, method: str, target: str, body: bytes) -> tuple[int, str, bytes]:
        path = target.split("?", 1)[0].rstrip("/")
        if self.options.control and (path == "/fakejs" or path.startswith("/fakejs/")):
            if method not in ("GET", "POST"):
                return 405, "text/plain; charset=utf-8", b"Method Not Allowed\n"
            tokens = [t for t in path.split("/")[2:] if t]
            status, doc = control_api.handle(self.control, tokens, body)
            return status, "application/json", (json.dumps(doc, indent=2) + "\n").encode()
        if method not in ("GET", "HEAD"):
            return 405, "text/plain; charset=utf-8", b"Method Not Allowed\n"
        return monitor.respond(self, target)

    async def __aenter__(self) -> Server:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
