"""TLS for client connections: a server ``ssl.SSLContext`` from a :class:`TLSConfig`, and the TLS layer.

:class:`TLSLayer` is a sans-IO :class:`~fakejs.server.layers.Layer` over
``ssl.MemoryBIO``: the connection feeds it the socket's bytes and writes what
it returns, so the same layer serves the NATS port (under the session) and
the websocket port (under the WebSocket layer), and handshake timing stays
on the server clock.  A failed handshake is reported in nats-server's words
(Go's ``crypto/tls`` texts where OpenSSL has its own).
"""

from __future__ import annotations

import ssl

from fakejs.core.clientio import TLS_HANDSHAKE_ERROR, TransportDetails
from fakejs.core.transport_config import TLSConfig
from fakejs.server.layers import LayerFailed
from fakejs.server.tls_names import (
    GO_TO_OPENSSL,
    go_cipher_name,
    peer_cert_document,
    peer_certificate,
    public_key_fingerprint,
)

READ_CHUNK = 256 * 1024
# nats-server's words for a client that does not speak TLS at all (logged at debug level).
NOT_TLS = "tls: first record does not look like a TLS handshake"
NOT_PINNED = "certificate not pinned"
# OpenSSL's reasons -> Go's texts for the same failure.
_GO_TEXTS = {
    "PEER_DID_NOT_RETURN_A_CERTIFICATE": "tls: client didn't provide a certificate",
    "CERTIFICATE_VERIFY_FAILED": "tls: failed to verify certificate: x509: certificate signed by unknown authority",
    "WRONG_VERSION_NUMBER": NOT_TLS,
    "HTTP_REQUEST": NOT_TLS,
    "HTTPS_PROXY_REQUEST": NOT_TLS,
    "UNSUPPORTED_PROTOCOL": "tls: client offered only unsupported versions",
    "NO_SHARED_CIPHER": "tls: no cipher suite supported by both client and server",
}


def server_context(config: TLSConfig) -> ssl.SSLContext:
    """The server side of ``config``: its certificate, versions, suites and the client verification it asks for."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3 if config.min_version == "1.3" else ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(config.cert_file, config.key_file)
    if config.ca_file:
        context.load_verify_locations(config.ca_file)
    if config.verify or config.verify_and_map:
        context.verify_mode = ssl.CERT_REQUIRED
    # As Go, the list governs TLS 1.2 only: TLS 1.3's suites are always offered.
    legacy = [GO_TO_OPENSSL[name] for name in config.cipher_suites if name in GO_TO_OPENSSL]
    if config.cipher_suites:
        if legacy:
            context.set_ciphers(":".join(legacy))
        else:
            context.maximum_version = ssl.TLSVersion.TLSv1_3
            context.minimum_version = ssl.TLSVersion.TLSv1_3
    return context


def go_handshake_error(exc: ssl.SSLError) -> str:
    """Go's text for a failed handshake (OpenSSL's reason, lower case, when Go's is not known)."""
    reason = exc.reason or ""
    if reason in _GO_TEXTS:
        return _GO_TEXTS[reason]
    return "tls: " + (reason.lower().replace("_", " ") if reason else str(exc))


class TLSLayer:
    """The server end of one TLS session, bytes in and out through memory buffers."""

    def __init__(self, context: ssl.SSLContext, pinned_certs: tuple[str, ...] | list[str] = ()) -> None:
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._ssl = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self._pinned = frozenset(pinned_certs)
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
            text = go_handshake_error(exc)
            # Go writes nothing back to a client that never spoke TLS, and logs it at debug level.
            if text == NOT_TLS:
                raise ProbeFailure(f"TLS handshake error: {text}", TLS_HANDSHAKE_ERROR) from exc
            raise LayerFailed(f"TLS handshake error: {text}", TLS_HANDSHAKE_ERROR, self._outgoing.read()) from exc
        if self._pinned and not self._pinned_match():
            raise LayerFailed(f"TLS handshake error: {NOT_PINNED}", TLS_HANDSHAKE_ERROR, self._outgoing.read())
        self._ready = True
        waiting, self._waiting = self._waiting, []
        for chunk in waiting:
            self._ssl.write(chunk)
        return True

    def _pinned_match(self) -> bool:
        der = self._ssl.getpeercert(binary_form=True)
        return der is not None and public_key_fingerprint(der) in self._pinned

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
        details.tls_cipher = go_cipher_name(cipher[0]) if cipher else ""
        decoded = self._ssl.getpeercert()
        der = self._ssl.getpeercert(binary_form=True)
        if decoded and der is not None:
            peer = details.peer_certificate = peer_certificate(dict(decoded), der)
            details.tls_peer_certs = [peer_cert_document(peer.display_subject, der)]
            authorities = self._ssl.context.get_ca_certs(binary_form=True)
            details.tls_verified_chain = verified_chain(der, [bytes(ca) for ca in authorities])


def verified_chain(leaf: bytes, authorities: list[bytes]) -> list[str]:
    """The chain from a verified certificate up to the CA that signed it (Go's ``VerifiedChains[0]``), PEM each."""
    # Only a client certificate loads cryptography
    from cryptography import x509

    by_subject: dict[x509.Name, tuple[x509.Certificate, bytes]] = {}
    for der in authorities:
        certificate = x509.load_der_x509_certificate(der)
        by_subject[certificate.subject] = (certificate, der)
    chain: list[str] = []
    current, der = x509.load_der_x509_certificate(leaf), leaf
    while len(chain) < 10:
        chain.append(ssl.DER_cert_to_PEM_cert(der))
        issuer = by_subject.get(current.issuer)
        if issuer is None or issuer[1] == der:
            break
        current, der = issuer
    return chain


class ProbeFailure(LayerFailed):
    """A handshake that failed the way probes and load balancers fail it: nats-server logs it at debug level."""

    quiet = True


class ClientPortTLS:
    """What the NATS port's connections need to speak TLS: the context and nats-server's handshake rules."""

    def __init__(self, config: TLSConfig, allow_non_tls: bool) -> None:
        self.config = config
        self.context = server_context(config)
        self.allow_non_tls = allow_non_tls

    def layer(self) -> TLSLayer:
        return TLSLayer(self.context, self.config.pinned_certs)


def monitoring_context(config: TLSConfig) -> ssl.SSLContext:
    """The HTTPS monitoring port's side: the client port's certificate, asking no client for one."""
    context = server_context(config)
    context.verify_mode = ssl.CERT_NONE
    return context
