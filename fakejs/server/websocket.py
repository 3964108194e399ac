"""The WebSocket layer: nats-server's HTTP upgrade, then NATS bytes inside binary frames.

:class:`WebSocketLayer` is a sans-IO :class:`~fakejs.server.layers.Layer`.
Until the upgrade it reads an HTTP request (parsed by ``h11``) and answers
it as nats-server's Go HTTP server does: ``101 Switching Protocols`` with
``Sec-WebSocket-Accept`` (and ``permessage-deflate``, ``Nats-No-Masking``,
the configured ``headers``), or the Go ``http.Error`` reply for a refused
request -- after which the connection stays open for another request, as
HTTP/1.1 keep-alive does.  Afterwards frames are :mod:`fakejs.server.wsframes`'
business (on wsproto).  The layer holds no timer: the handshake deadline is the
connection's.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from email.utils import formatdate
from urllib.parse import urlsplit

import h11

from fakejs.core.clientio import TransportDetails
from fakejs.core.transport_config import WebSocketConfig
from fakejs.server import wsframes
from fakejs.server.layers import LayerFailed

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
PMC_RESPONSE = (
    "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n"
)
NO_MASKING_RESPONSE = "Nats-No-Masking: true\r\n"
HANDSHAKE_TIMEOUT = "websocket handshake timeout"
MAX_REQUEST_HEAD = 1 << 20  # Go's DefaultMaxHeaderBytes
_STATUS_TEXT = {400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed"}


class HandshakeRefused(Exception):
    """nats-server refuses the upgrade with ``status``; ``reason`` goes to its log."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()


class OriginPolicy:
    """``same_origin`` and ``allowed_origins``: which ``Origin`` headers an upgrade may carry."""

    def __init__(self, same_origin: bool, allowed_origins: list[str]) -> None:
        self.same_origin = same_origin
        self.allowed: dict[str, list[tuple[str, str]]] = {}
        for origin in allowed_origins:
            parts = urlsplit(origin)
            host, port = host_and_port(parts.scheme == "https", parts.netloc)
            self.allowed.setdefault(host, []).append((parts.scheme, port))

    def check(self, origin: str, request_host: str, secure: bool) -> str:
        """Why ``origin`` is refused, or ``""``: no policy, no Origin, or a match."""
        if (not self.same_origin and not self.allowed) or not origin:
            return ""
        parts = urlsplit(origin)
        if not parts.scheme and not origin.startswith("/"):
            return f'parse "{origin}": invalid URI for request'
        try:
            host, port = host_and_port(parts.scheme == "https", parts.netloc)
        except ValueError as exc:
            return str(exc)
        if self.same_origin:
            try:
                own_host, own_port = host_and_port(secure, request_host)
            except ValueError as exc:
                return str(exc)
            scheme = "https" if secure else "http"
            if host != own_host or port != own_port or parts.scheme.lower() != scheme:
                return "not same origin"
        if self.allowed and not any(parts.scheme == s and port == p for s, p in self.allowed.get(host, [])):
            return "not in the allowed list"
        return ""


def host_and_port(secure: bool, hostport: str) -> tuple[str, str]:
    """Go's ``net.SplitHostPort``, with the scheme's port when there is none; the host lower-cased."""
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            raise ValueError(f"address {hostport}: missing ']' in address")
        host, rest = hostport[1:end], hostport[end + 1 :]
        if not rest:
            return host.lower(), "443" if secure else "80"
        if not rest.startswith(":"):
            raise ValueError(f"address {hostport}: unexpected ']' in address")
        return host.lower(), rest[1:]
    if hostport.count(":") > 1:
        raise ValueError(f"address {hostport}: too many colons in address")
    if ":" not in hostport:
        return hostport.lower(), "443" if secure else "80"
    host, port = hostport.split(":", 1)
    return host.lower(), port


def http_error(status: int, version: str, date: str) -> bytes:
    """Go's ``http.Error`` reply as nats-server sends it for a refused upgrade."""
    text = _STATUS_TEXT[status]
    return (
        f"HTTP/{version} {status} {text}\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Sec-Websocket-Version: 13\r\n"
        "X-Content-Type-Options: nosniff\r\n"
        f"Date: {date}\r\n"
        f"Content-Length: {len(text) + 1}\r\n"
        f"\r\n{text}\n"
    ).encode()


def bad_request(detail: str = "") -> bytes:
    """Go's HTTP server's reply to a request it cannot parse (it then closes the connection)."""
    status = f"400 Bad Request{': ' + detail if detail else ''}"
    return f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n{status}".encode()


def _tokens(headers: dict[str, list[str]], name: str) -> list[str]:
    return [token.strip(" \t").lower() for value in headers.get(name, []) for token in value.split(",")]


class WebSocketLayer:
    """One client's upgrade and frames (see the module docstring)."""

    def __init__(
        self,
        config: WebSocketConfig,
        origins: OriginPolicy,
        *,
        secure: bool,
        max_payload: int,
        log_error: Callable[[str], None],
        wall_time: Callable[[], float],
    ) -> None:
        self._config = config
        self._origins = origins
        self._secure = secure
        self._max_payload = max_payload
        self.peer = ""  # host:port of the client, for the log (set once the socket is accepted)
        self._log_error = log_error
        self._wall_time = wall_time
        self._http = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_REQUEST_HEAD)
        self._reader: wsframes.FrameCodec | None = None
        self._output: list[bytes] = []
        self._origin = ""
        self._cookies: dict[str, str] = {}
        self.close_sent = False

    @property
    def ready(self) -> bool:
        return self._reader is not None

    @property
    def peer_closed(self) -> bool:
        return self._reader is not None and self._reader.closed

    def receive(self, data: bytes) -> bytes:
        if self._reader is None:
            data = self._handshake(data)
            if self._reader is None or not data:
                return b""
        try:
            return self._reader.feed(data)
        except LayerFailed as failure:
            if failure.farewell:
                self.close_sent = True  # the failure's own close frame is the last one
            raise
        finally:
            if self._reader.replies:
                if self._reader.closed:
                    self.close_sent = True
                self._output.extend(self._reader.replies)
                self._reader.replies.clear()

    def send(self, data: bytes) -> bytes:
        if self._reader is None or self.close_sent:
            return b""
        return self._reader.encode(data)

    def take_output(self) -> bytes:
        output, self._output = b"".join(self._output), []
        return output

    def closing_frame(self, reason: str) -> bytes:
        """The close frame telling the client why the server closes it (once; none before the upgrade)."""
        if self._reader is None or self.close_sent:
            return b""
        self.close_sent = True
        return self._reader.close_for(reason)

    def describe(self, details: TransportDetails) -> None:
        details.origin = self._origin
        details.cookies = dict(self._cookies)

    # -- the HTTP upgrade ----------------------------------------------------------------

    def _handshake(self, data: bytes) -> bytes:
        """Read requests until one upgrades; returns the bytes that followed the upgrade request."""
        self._http.receive_data(data)
        while True:
            try:
                event = self._http.next_event()
            except h11.RemoteProtocolError as exc:
                detail = "missing required Host header" if "Host" in str(exc) else ""
                raise LayerFailed(f"websocket: bad request: {exc}", "", bad_request(detail)) from exc
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return b""
            if isinstance(event, h11.Request):
                return self._request(event)

    def _request(self, request: h11.Request) -> bytes:
        headers: dict[str, list[str]] = {}
        for name, value in request.headers:
            headers.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
        version = request.http_version.decode()
        trailing, _ = self._http.trailing_data
        try:
            reply = self._upgrade(request, headers)
        except HandshakeRefused as refused:
            self._log_error(f"{self.peer} - websocket handshake error: {refused.reason}")
            error = http_error(refused.status, version, formatdate(self._wall_time(), usegmt=True))
            if version == "1.0" or "close" in _tokens(headers, "connection"):
                raise LayerFailed(f"websocket handshake error: {refused.reason}", "", error) from None
            self._output.append(error)
            self._http = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_REQUEST_HEAD)
            return self._handshake(trailing) if trailing else b""
        if request.target.endswith(b"/leafnode"):
            raise LayerFailed("Not configured to accept leaf node connections", "", reply)
        self._output.append(reply)
        return trailing

    def _upgrade(self, request: h11.Request, headers: dict[str, list[str]]) -> bytes:
        """nats-server's checks, in its order; the 101 reply, with the frame reader set up."""
        config = self._config
        if request.target.endswith(b"/mqtt"):
            raise HandshakeRefused(404, "mqtt websocket endpoint not enabled")
        if request.method != b"GET":
            raise HandshakeRefused(405, "request method must be GET")
        host = headers.get("host", [""])[0]
        if not host:
            raise HandshakeRefused(400, "'Host' missing in request")
        if "websocket" not in _tokens(headers, "upgrade"):
            raise HandshakeRefused(400, "invalid value for header 'Upgrade'")
        if "upgrade" not in _tokens(headers, "connection"):
            raise HandshakeRefused(400, "invalid value for header 'Connection'")
        key = headers.get("sec-websocket-key", [""])[0]
        if not key:
            raise HandshakeRefused(400, "key missing")
        try:
            decoded = base64.b64decode(key, validate=True)
        except ValueError:
            decoded = b""
        if len(decoded) != 16:
            raise HandshakeRefused(400, "invalid websocket key")
        if "13" not in _tokens(headers, "sec-websocket-version"):
            raise HandshakeRefused(400, "invalid version")
        origin = headers.get("origin", [""])[0] or headers.get("sec-websocket-origin", [""])[0]
        problem = self._origins.check(origin, host, self._secure)
        if problem:
            raise HandshakeRefused(403, f"origin not allowed: {problem}")
        compress = config.compression and any(
            param.strip(" \t").lower() == "permessage-deflate"
            for value in headers.get("sec-websocket-extensions", [])
            for extension in value.split(",")
            for param in extension.split(";")
        )
        no_masking = headers.get("nats-no-masking", [""])[0] == "true"
        reply = ["HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"]
        reply.append(f"Sec-WebSocket-Accept: {accept_key(key)}\r\n")
        if compress:
            reply.append(PMC_RESPONSE)
        if no_masking:
            reply.append(NO_MASKING_RESPONSE)
        reply.extend(f"{name}: {value}\r\n" for name, value in config.headers.items())
        reply.append("\r\n")
        agent = headers.get("user-agent", [""])[0]
        browser = agent.startswith("Mozilla/")
        self._origin = origin
        self._cookies = _cookies(headers.get("cookie", []))
        # browsers get 4 KiB frames; Safari cannot take compressed messages in pieces
        self._reader = wsframes.FrameCodec(
            compression=compress,
            masked=not no_masking,
            max_payload=self._max_payload,
            frame_size=wsframes.BROWSER_FRAME_SIZE if browser else 0,
        )
        self._reader.whole_compressed = compress and browser and "Version/" in agent and "Safari/" in agent
        return "".join(reply).encode()


def _cookies(values: list[str]) -> dict[str, str]:
    cookies: dict[str, str] = {}
    for value in values:
        for pair in value.split(";"):
            name, sep, content = pair.strip().partition("=")
            if sep and name:
                cookies.setdefault(name, content.strip('"'))
    return cookies
