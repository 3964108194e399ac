"""The websocket port: a second client listener whose connections carry a :class:`WebSocketLayer`.

Each accepted socket becomes a :class:`WebSocketConnection` -- a
:class:`~fakejs.server.connection.Connection` with the WebSocket layer on
top (over a TLS layer when the block has ``tls {}``) that, when the server
closes the client, sends the close frame nats-server sends for the reason
(``1001 Server Shutdown``, ``1008 Authentication Failure``, ...) after the
pending output.  The handshake deadline (``handshake_timeout``) is the
connection's, on the server clock.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from fakejs.core.clientio import CLIENT_CLOSED, UNFLUSHED_REASONS, WEBSOCKET, TransportDetails
from fakejs.core.transport_config import WebSocketConfig
from fakejs.gocompat.gourl import ListenError, listen_error
from fakejs.server.connection import Connection, Listener
from fakejs.server.layers import Layer, LayerFailed
from fakejs.server.websocket import HANDSHAKE_TIMEOUT, OriginPolicy, WebSocketLayer

if TYPE_CHECKING:
    import ssl


class WebSocketConnection(Connection):
    """A connection whose top layer is a :class:`WebSocketLayer` (it owns the close frame)."""

    def __init__(
        self, server: Listener, layers: list[Layer], websocket: WebSocketLayer, ready_within: float | None
    ) -> None:
        super().__init__(
            server,
            [*layers, websocket],
            connection_type=WEBSOCKET,
            ready_within=ready_within,
            not_ready=(HANDSHAKE_TIMEOUT, ""),
        )
        self._websocket = websocket

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = transport.get_extra_info("peername") or ("", 0)
        self._websocket.peer = f"{peer[0]}:{peer[1]}"
        super().connection_made(transport)

    def close(self) -> None:
        """Pending output, then the close frame for the session's close reason, then the socket.

        A client closed without a flush (a read error, a slow consumer) gets no close frame.
        """
        session = self.session
        websocket = self._websocket
        reason = (session.close_reason if session is not None else "") or CLIENT_CLOSED
        if session is not None and websocket.ready and not websocket.close_sent and reason not in UNFLUSHED_REASONS:
            self.flush()
            frame = websocket.closing_frame(reason)
            self.write_below(self.layers.index(websocket), frame)
        super().close()

    def eof_received(self) -> bool:
        """A plain websocket client that shuts down its side still gets ``1000 Client Closed``, as from nats-server."""
        session = self.session
        if session is None or session.closed or not self.started or len(self.layers) > 1:
            return False
        self._guarded("close", session.close, CLIENT_CLOSED)
        return False


# Go's net/http answer to a plain HTTP request on an HTTPS port (``tlsRecordHeaderLooksLikeHTTP``).
HTTP_ON_HTTPS = b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
_HTTP_STARTS = (b"GET /", b"HEAD ", b"POST ", b"PUT /", b"OPTIO")


class PlainHTTPProbe:
    """Under the TLS layer of a wss port: a client speaking plain HTTP gets Go's 400 reply, not a TLS alert.

    It looks at the first five bytes only (the size of a TLS record header),
    then passes everything through.
    """

    def __init__(self) -> None:
        self._head = b""
        self._decided = False

    @property
    def ready(self) -> bool:
        return True

    @property
    def peer_closed(self) -> bool:
        return False

    def receive(self, data: bytes) -> bytes:
        if self._decided:
            return data
        self._head += data
        if len(self._head) < 5:
            return b""
        self._decided = True
        if self._head[:5] in _HTTP_STARTS:
            log = "http: TLS handshake error: client sent an HTTP request to an HTTPS server"
            raise LayerFailed(log, "", HTTP_ON_HTTPS)
        data, self._head = self._head, b""
        return data

    def send(self, data: bytes) -> bytes:
        return data

    def take_output(self) -> bytes:
        return b""

    def describe(self, details: TransportDetails) -> None:
        pass


class WebSocketListener:
    """The websocket port of one server: opens it, makes its connections, closes it."""

    def __init__(self, server: Listener, config: WebSocketConfig, tls_context: ssl.SSLContext | None) -> None:
        self._server = server
        self.config = config
        self._tls_context = tls_context
        self._origins = OriginPolicy(config.same_origin, config.allowed_origins)
        self._listener: asyncio.base_events.Server | None = None
        self.port = 0

    @property
    def scheme(self) -> str:
        return "wss" if self._tls_context is not None else "ws"

    @property
    def host(self) -> str:
        """The host the port listens on, as nats-server names it (``0.0.0.0`` when none is given)."""
        return self.config.host or "0.0.0.0"

    async def start(self, backlog: int) -> int:
        port = self.config.port if self.config.port > 0 else 0
        try:
            self._listener = await self._server.loop.create_server(
                self._connection, self.host, port, reuse_address=True, backlog=backlog
            )
        except OSError as exc:
            problem = listen_error(self.host, port, exc)
            raise ListenError(f"Unable to listen for websocket connections: {problem}") from exc
        self.port = int(self._listener.sockets[0].getsockname()[1])
        return self.port

    def close(self) -> None:
        """Stop accepting (connections already made are the server's to close)."""
        if self._listener is not None:
            self._listener.close()

    async def wait_closed(self) -> None:
        if self._listener is not None:
            await self._listener.wait_closed()
            self._listener = None

    def _connection(self) -> WebSocketConnection:
        broker = self._server.broker
        layers: list[Layer] = []
        if self._tls_context is not None:
            # Only wss loads the TLS layers
            from fakejs.server.tls import TLSLayer

            layers += [PlainHTTPProbe(), TLSLayer(self._tls_context)]
        websocket = WebSocketLayer(
            self.config,
            self._origins,
            secure=self._tls_context is not None,
            max_payload=broker.options.max_payload,
            log_error=lambda text: broker.log.error("%s", text),
            wall_time=lambda: broker.clock.time_ns() / 1e9,
        )
        timeout = self.config.handshake_timeout
        return WebSocketConnection(self._server, layers, websocket, timeout if timeout > 0 else None)
