"""TLS for client connections: a server ``ssl.SSLContext`` from a :class:`TLSConfig`, and the TLS layer.

:class:`TLSLayer` is a sans-IO :class:`~fakejs.server.layers.Layer` over
``ssl.MemoryBIO``: the connection feeds it the socket's bytes and writes what
it returns, so the same layer serves the NATS port (under the session) and
the websocket port (under the WebSocket layer), and handshake timing stays
on the server clock.
"""

from __future__ import annotations

import ssl

from fakejs.core.clientio import TLS_HANDSHAKE_ERROR, TransportDetails
from fakejs.core.transport_config import TLSConfig
from fakejs.server.layers import LayerFailed

READ_CHUNK = 256 * 1024


def server_context(config: TLSConfig) -> ssl.SSLContext:
    """The server side of ``config``: its certificate, and the client verification it asks for."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3 if config.min_version == "1.3" else ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(config.cert_file, config.key_file)
    if config.ca_file:
        context.load_verify_locations(config.ca_file)
    if config.verify or config.verify_and_map:
        context.verify_mode = ssl.CERT_REQUIRED
    return context


class TLSLayer:
    """The server end of one TLS session, bytes in and out through memory buffers."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._ssl = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self._ready = False
        self._peer_closed = False
        self._waiting: list[bytes] = []  # output from above before the handshake finished

    @property
    def ready(self) -> bool:
        return self._ready

    @property
    def peer_closed(self) -> bool:
        return self._peer_closed

    def receive(self, data: bytes) -> bytes:
        self._incoming.write(data)
        if not self._ready and not self._handshake():
            return b""
        chunks: list[bytes] = []
        while True:
            try:
                chunk = self._ssl.read(READ_CHUNK)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                self._peer_closed = True
                break
            except ssl.SSLError as exc:
                raise LayerFailed(f"TLS error: {exc}", TLS_HANDSHAKE_ERROR) from exc
            if not chunk:
                self._peer_closed = True
                break
            chunks.append(chunk)
        return b"".join(chunks)

    def _handshake(self) -> bool:
        """Go on with the handshake; True once it is done (what waited to be sent is then encrypted)."""
        try:
            self._ssl.do_handshake()
        except ssl.SSLWantReadError:
            return False
        except ssl.SSLError as exc:
            raise LayerFailed(f"TLS handshake error: {exc}", TLS_HANDSHAKE_ERROR, self._outgoing.read()) from exc
        self._ready = True
        waiting, self._waiting = self._waiting, []
        for chunk in waiting:
            self._ssl.write(chunk)
        return True

    def send(self, data: bytes) -> bytes:
        if not self._ready:
            self._waiting.append(data)
            return b""
        self._ssl.write(data)
        return self._outgoing.read()

    def take_output(self) -> bytes:
        return self._outgoing.read()

    def describe(self, details: TransportDetails) -> None:
        version = self._ssl.version() or ""
        details.tls_version = version.removeprefix("TLSv")
        cipher = self._ssl.cipher()
        details.tls_cipher = cipher[0] if cipher else ""
