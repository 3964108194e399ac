"""The HTTP port: HTTP/1.1 by h11 for monitoring and the control API (``/fakejs/``).

h11 parses and frames (sans-IO, like the NATS protocol parser); this module
moves bytes between it and an asyncio stream and asks ``answer(request)``
for each reply.  What a client sees follows nats-server's Go HTTP server:
its reason phrases, a ``Date`` header, and the bare ``Connection: close``
replies Go writes for a request it cannot parse.  Requests are bounded (head
and body, 1 MiB each, as Go's default header limit); connections are kept
alive between requests and :meth:`HttpPort.stop` closes the idle ones.  An
``answer`` that raises is recorded on the server and the request gets a 500.
As nats-server's monitoring server (Go's ``ReadHeaderTimeout`` of 5 s), a
request head must arrive whole within :data:`HEADER_TIMEOUT` of the
connection opening, or of the first byte of a later request on a kept-alive
connection (an idle one waits as long as it likes), or the connection is
closed without a reply; the timer runs on the server's clock.
"""

from __future__ import annotations

import asyncio
import ssl as ssl_module
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from http import HTTPStatus

import h11

from fakejs.core.clock import Clock, ErrorSink, TimerHandle
from fakejs.gocompat.gourl import ListenError, listen_error

__all__ = ["MAX_BODY", "MAX_HEAD", "TEXT", "Answer", "HttpPort", "Reply", "Request", "serve_http"]

MAX_HEAD = 1 << 20  # Go's http.DefaultMaxHeaderBytes: a longer head gets a 431
MAX_BODY = 1 << 20  # a longer body gets a 413 (nothing fakejs serves takes more)
TEXT = "text/plain; charset=utf-8"
READ_CHUNK = 65536
LINGER = 0.5  # seconds a refused request's remaining bytes are read and dropped
HEADER_TIMEOUT = 5.0  # seconds for a request head to arrive whole

# Go's http.StatusText where it differs from Python's phrase (or Python lacks one).
_GO_REASONS = {413: "Request Entity Too Large", 422: "Unprocessable Entity"}


def reason(status: int) -> str:
    """The reason phrase Go's HTTP server writes for ``status``."""
    if status in _GO_REASONS:
        return _GO_REASONS[status]
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


@dataclass(frozen=True)
class Request:
    """One parsed request: header names are lower case; a repeated header's values are joined by ``, ``."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes = b""

    def header(self, name: str) -> str:
        return self.headers.get(name.lower(), "")


@dataclass
class Reply:
    """A reply: ``headers`` are written first, then ``Date`` and ``Content-Length``.

    ``late_headers`` come after those two: Go writes a ``Content-Type`` it
    sniffed (the handler set none) there.
    """

    status: int
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)
    late_headers: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def text(cls, status: int, text: str, *headers: tuple[str, str]) -> Reply:
        """A plain-text reply, as Go's ``http.Error`` writes it."""
        return cls(status, text.encode(), [("Content-Type", TEXT), ("X-Content-Type-Options", "nosniff"), *headers])


Answer = Callable[[Request], Reply]


class _TooLarge(Exception):
    """The request body is over :data:`MAX_BODY`."""


async def serve_http(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    answer: Answer,
    on_error: ErrorSink,
    clock: Clock | None = None,
) -> None:
    """Serve one HTTP connection until either side closes it (or a request takes too long to arrive)."""
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
    deadline = _HeaderDeadline(clock, writer)
    deadline.start()  # the first request's head is due from the moment the connection opens
    try:
        while await _exchange(conn, reader, writer, answer, on_error, deadline):
            conn.start_next_cycle()
    except h11.RemoteProtocolError as exc:
        writer.write(_refusal(exc.error_status_hint, str(exc)))
        await _linger(reader, writer)
    except _TooLarge:
        writer.write(_refusal(413, ""))
        await _linger(reader, writer)
    except (ConnectionError, h11.LocalProtocolError):
        pass
    finally:
        deadline.cancel()
        writer.close()  # the transport sends what is buffered first


class _HeaderDeadline:
    """Closes the connection when a request head has not arrived whole within :data:`HEADER_TIMEOUT`."""

    def __init__(self, clock: Clock | None, writer: asyncio.StreamWriter) -> None:
        self._clock = clock
        self._writer = writer
        self._timer: TimerHandle | None = None

    @property
    def running(self) -> bool:
        return self._timer is not None

    def start(self) -> None:
        self.cancel()
        if self._clock is not None:
            self._timer = self._clock.call_later(HEADER_TIMEOUT, self._writer.close)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


async def _exchange(
    conn: h11.Connection,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    answer: Answer,
    on_error: ErrorSink,
    deadline: _HeaderDeadline,
) -> bool:
    """Read one request and write its reply; whether the connection stays open for another."""
    event = await _read_head(conn, reader, deadline)
    if not isinstance(event, h11.Request):
        return False  # the client closed (between requests, or in the middle of one)
    if event.http_version not in (b"1.0", b"1.1"):
        raise h11.RemoteProtocolError("unsupported protocol version", error_status_hint=505)
    headers: dict[str, str] = {}
    for name, value in event.headers:
        key = name.decode("latin-1")
        text = value.decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    if _declared_length(headers) > MAX_BODY:
        raise _TooLarge  # refused before reading a byte of it
    if conn.they_are_waiting_for_100_continue:
        writer.write(conn.send(h11.InformationalResponse(status_code=100, headers=[])) or b"")
    body = await _read_body(conn, reader)
    request = Request(event.method.decode("latin-1"), event.target.decode("latin-1"), headers, body)
    try:
        reply = answer(request)
    except Exception as exc:  # noqa: BLE001 - recorded on the server; the client gets a 500, not a hang
        on_error(f"HTTP {request.method} {request.target}", exc)
        reply = Reply.text(500, "Internal Server Error\n")
    writer.write(_encode(conn, reply, head_only=request.method == "HEAD"))
    await writer.drain()
    return conn.our_state is h11.DONE and conn.their_state is h11.DONE


def _declared_length(headers: dict[str, str]) -> int:
    """The ``Content-Length`` (h11 has checked it is a number; 0 for a chunked body)."""
    try:
        return int(headers.get("content-length", "0").split(",")[0])
    except ValueError:
        return 0


async def _read_body(conn: h11.Connection, reader: asyncio.StreamReader) -> bytes:
    """The request body, refused once it grows over :data:`MAX_BODY` (chunked bodies have no length up front)."""
    parts: list[bytes] = []
    size = 0
    while True:
        event = await _next_event(conn, reader)
        if isinstance(event, h11.Data):
            size += len(event.data)
            if size > MAX_BODY:
                raise _TooLarge
            parts.append(bytes(event.data))
        elif isinstance(event, h11.EndOfMessage):
            return b"".join(parts)
        else:  # the client went away in the middle of the body
            raise ConnectionResetError("request body cut short")


async def _read_head(conn: h11.Connection, reader: asyncio.StreamReader, deadline: _HeaderDeadline) -> object:
    """The next request head (or the end of the connection), within the header deadline.

    On a kept-alive connection the deadline starts with the next request's first bytes.
    """
    while True:
        event = conn.next_event()
        if event is not h11.NEED_DATA:
            deadline.cancel()
            return event
        data = await reader.read(READ_CHUNK)
        if not deadline.running:
            deadline.start()
        conn.receive_data(data)


async def _next_event(conn: h11.Connection, reader: asyncio.StreamReader) -> object:
    """h11's next event, reading from the socket as it needs more."""
    while True:
        event = conn.next_event()
        if event is not h11.NEED_DATA:
            return event
        conn.receive_data(await reader.read(READ_CHUNK))


def _encode(conn: h11.Connection, reply: Reply, head_only: bool) -> bytes:
    headers = [
        *reply.headers,
        ("Date", formatdate(usegmt=True)),
        ("Content-Length", str(len(reply.body))),
        *reply.late_headers,
    ]
    response = h11.Response(status_code=reply.status, headers=headers, reason=reason(reply.status).encode())
    out = conn.send(response) or b""
    if reply.body and not head_only:
        out += conn.send(h11.Data(data=reply.body)) or b""
    return out + (conn.send(h11.EndOfMessage()) or b"")


async def _linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Half-close, and drop what the client still sends for a moment, before closing (as Go does).

    Closing a socket with unread bytes makes the kernel reset the connection,
    and a client still sending its request would lose the reply just written.
    """
    try:
        if writer.can_write_eof():
            writer.write_eof()
        async with asyncio.timeout(LINGER):
            while await reader.read(READ_CHUNK):
                pass
    except (TimeoutError, ConnectionError, OSError):
        pass


def _refusal(status: int, detail: str) -> bytes:
    """What Go writes for a request it will not serve, before closing: no length, no date."""
    text = f"{status} {reason(status)}"
    if status == 400 and detail.startswith("Missing mandatory Host"):
        text += ": missing required Host header"
    elif status == 505:
        text += ": unsupported protocol version"
    return (f"HTTP/1.1 {text}\r\nContent-Type: {TEXT}\r\nConnection: close\r\n\r\n{text}").encode("latin-1")


class HttpPort:
    """The HTTP listener and its open connections, so that stopping closes the idle keep-alive ones too."""

    def __init__(self, answer: Answer, on_error: ErrorSink, clock: Clock | None = None) -> None:
        self._answer = answer
        self._on_error = on_error
        self._clock = clock
        self._server: asyncio.base_events.Server | None = None
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}

    async def start(self, host: str, port: int, backlog: int, ssl: ssl_module.SSLContext | None = None) -> None:
        try:
            self._server = await asyncio.start_server(
                self._serve, host, port, reuse_address=True, backlog=backlog, ssl=ssl
            )
        except OSError as exc:
            problem = listen_error(host, port, exc)
            raise ListenError(f"Can't start monitoring: can't listen to the monitor port: {problem}") from exc

    @property
    def port(self) -> int:
        assert self._server is not None, "HTTP port not started"
        return int(self._server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        try:
            await serve_http(reader, writer, self._answer, self._on_error, self._clock)
        except asyncio.CancelledError:
            # The loop is shutting down under an open connection (asyncio.run's final
            # cancel): end quietly, as Python 3.11's stream callback logs a cancelled task.
            writer.close()
        finally:
            self._connections.pop(task, None)

    async def stop(self) -> None:
        """Stop listening, close every connection (idle or not) and wait until their tasks end."""
        if self._server is None:
            return
        self._server.close()
        for writer in list(self._connections.values()):
            writer.close()  # the reader sees the end of the stream; the task returns
        tasks = list(self._connections)
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=1.0)
            for task in late:  # a reply still being written to a client that does not read
                task.cancel()
            if late:
                await asyncio.wait(late)
        await self._server.wait_closed()
        self._server = None
