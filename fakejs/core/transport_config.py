"""What the client listeners are asked to speak: TLS and WebSocket settings, as plain data.

The ``tls {}`` block (or the ``--tls*`` flags) fills a :class:`TLSConfig`;
the ``websocket {}`` block a :class:`WebSocketConfig`.  Durations are
seconds, defaults are nats-server's.  Building an ``ssl.SSLContext`` from
them is the server layer's business (:mod:`fakejs.server.tls`): this module
holds data only, so the options, the configuration loader and the sessions
can share it without importing any I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# nats-server's TLS_TIMEOUT: how long a client has to finish the TLS handshake.
DEFAULT_TLS_TIMEOUT = 2.0
# nats-server's DEFAULT_TLS_HANDSHAKE_FIRST_FALLBACK_DELAY (``handshake_first: auto``).
DEFAULT_TLS_FIRST_FALLBACK = 0.050
# nats-server sets no websocket handshake timeout unless the block gives one (0: none).
DEFAULT_WS_HANDSHAKE_TIMEOUT = 0.0


@dataclass
class TLSConfig:
    """One ``tls {}`` block: certificates, client verification and handshake timing."""

    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    # Ask clients for a certificate signed by ``ca_file`` (mutual TLS).
    verify: bool = False
    # ``verify`` and log the client in as the user named by its certificate (subject, SAN email, ...).
    verify_and_map: bool = False
    timeout: float = DEFAULT_TLS_TIMEOUT
    # The client starts TLS before the server sends INFO.  ``handshake_first_fallback`` > 0
    # (``handshake_first: auto`` or a duration): a client silent that long gets INFO in plain
    # text and the usual upgrade instead.
    handshake_first: bool = False
    handshake_first_fallback: float = 0.0
    # "1.2" or "1.3" ("" = nats-server's minimum, TLS 1.2).
    min_version: str = ""
    # nats-server's cipher suite names (Go's), kept in the order given.
    cipher_suites: list[str] = field(default_factory=list)
    curve_preferences: list[str] = field(default_factory=list)
    # SHA-256 fingerprints (hex) of the only client certificates accepted.
    pinned_certs: list[str] = field(default_factory=list)

    @property
    def default_auth_timeout(self) -> float:
        """nats-server's login time with TLS on, when none is configured: the handshake's time and a second more."""
        return self.timeout + 1.0


@dataclass
class WebSocketConfig:
    """The ``websocket {}`` block: a second client listener speaking NATS inside WebSocket frames."""

    host: str = ""
    port: int = 0  # -1 (or 0 given in the file) asks for a free port, as for the client port
    advertise: str = ""
    no_tls: bool = False
    tls: TLSConfig | None = None
    # Only upgrade requests whose Origin matches the request's Host / one of these URLs.
    same_origin: bool = False
    allowed_origins: list[str] = field(default_factory=list)
    compression: bool = False
    handshake_timeout: float = DEFAULT_WS_HANDSHAKE_TIMEOUT
    # Extra response headers on the upgrade reply (``headers {}``).
    headers: dict[str, str] = field(default_factory=dict)
    # The block's own ``no_auth_user`` and ``authorization {}`` (user/password/token) for
    # websocket clients; empty: the server's.
    no_auth_user: str = ""
    username: str = ""
    password: str = ""
    token: str = ""
    auth_timeout: float = 0.0
    # Upgrade request cookies whose values stand in for CONNECT's user, pass and auth_token.
    user_cookie: str = ""
    pass_cookie: str = ""
    token_cookie: str = ""
    jwt_cookie: str = ""  # refused at start: there are no trusted operators
    ping_interval: float = 0.0  # seconds; 0: the server's ping_interval
