"""What passes between a client session and the socket layer.

:class:`ClientIO` is what the socket layer (:mod:`fakejs.server.connection`)
provides to a :class:`~fakejs.core.session.ClientSession`; the close
reasons are nats-server's words for why a connection ended, which the
session records and ``/connz`` reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

# Why a connection closed, in nats-server's words (as /connz reports them).
CLIENT_CLOSED = "Client Closed"
SERVER_SHUTDOWN = "Server Shutdown"
SLOW_CONSUMER_PENDING = "Slow Consumer (Pending Bytes)"
SLOW_CONSUMER_DEADLINE = "Slow Consumer (Write Deadline)"
STALE_CONNECTION = "Stale Connection"
PROTOCOL_VIOLATION = "Protocol Violation"
BAD_CLIENT_PROTOCOL = "Bad Client Protocol Version"
NO_RESPONDERS_REQUIRES_HEADERS = "No Responders Requires Headers"
AUTH_VIOLATION = "Authentication Failure"
AUTH_TIMEOUT = "Authentication Timeout"
KICKED = "Kicked"
MAX_CONNECTIONS_EXCEEDED = "Maximum Connections Exceeded"
MAX_ACCOUNT_CONNECTIONS_EXCEEDED = "Maximum Account Connections Exceeded"
AUTH_EXPIRED = "Authentication Expired"
TLS_HANDSHAKE_ERROR = "TLS Handshake Failure"
MAX_SUBSCRIPTIONS_EXCEEDED = "Maximum Subscriptions Exceeded"
READ_ERROR = "Read Error"
WRITE_ERROR = "Write Error"

# Reasons nats-server closes a connection for without flushing what is queued (``skipFlushOnClose``):
# a websocket client closed for one of them gets no close frame either.
UNFLUSHED_REASONS = frozenset(
    {READ_ERROR, WRITE_ERROR, SLOW_CONSUMER_PENDING, SLOW_CONSUMER_DEADLINE, TLS_HANDSHAKE_ERROR}
)

# nats-server's connection types (``allowed_connection_types``), as a client's transport is one.
STANDARD = "STANDARD"
WEBSOCKET = "WEBSOCKET"
LEAF_CONNECTION = "LEAFNODE"


@dataclass
class PeerCertificate:
    """What a verified client certificate says about its holder (for ``verify_and_map``)."""

    subject: str = ""  # RFC 2253, as Go prints it (``CN=alice,O=Acme``)
    common_name: str = ""
    emails: list[str] = field(default_factory=list)
    dns_names: list[str] = field(default_factory=list)
    uris: list[str] = field(default_factory=list)
    ip_addresses: list[str] = field(default_factory=list)
    # The subject as encoded, RDNs in order of ``(dotted OID, value)``: nats-server matches DNs on it.
    rdns: list[list[tuple[str, str]]] = field(default_factory=list)
    display_subject: str = ""  # as Go's ``pkix.Name.String()`` prints it (/connz ``tls_peer_certs``)


@dataclass
class TransportDetails:
    """What the socket layer knows about how a client is connected (filled in as handshakes finish)."""

    connection_type: str = STANDARD
    tls_version: str = ""  # "1.3", as /connz reports it; empty: not TLS
    tls_cipher: str = ""  # nats-server's cipher suite name
    peer_certificate: PeerCertificate | None = None
    tls_first: bool = False  # the client started TLS before the server's INFO (``handshake_first``)
    # /connz?auth=true ``tls_peer_certs``: subject, spki_sha256, cert_sha256 of the client's certificate.
    tls_peer_certs: list[dict[str, str]] = field(default_factory=list)
    # The client certificate's verified chain, PEM, leaf first, up to the CA (an authorization request's client_tls).
    tls_verified_chain: list[str] = field(default_factory=list)
    # A websocket client's upgrade request: its Origin, and its cookies by name.
    origin: str = ""
    cookies: dict[str, str] = field(default_factory=dict)


class ClientIO(Protocol):
    """What the socket layer provides to a session."""

    def want_flush(self) -> None:
        """Arrange for :meth:`ClientSession.take_output` to be written soon."""

    def write_early(self) -> None:
        """Write the session's queued output now, before the turn ends (a large output: the client reads it sooner)."""

    def close(self) -> None:
        """Write what is pending, then close the connection."""

    def abort(self) -> None:
        """Drop the connection at once, discarding pending output."""

    def write_buffer_size(self) -> int:
        """Bytes handed to the transport but not yet sent."""

    def pause_reading(self, seconds: float) -> None:
        """Stop reading for ``seconds`` (real time), then call :meth:`ClientSession.resume`."""

    @property
    def details(self) -> TransportDetails:
        """How the client is connected (TLS, WebSocket), complete by the time CONNECT arrives."""
        ...
