"""How a client on the TLS client port is greeted: nats-server's order of INFO and the TLS handshake.

A :class:`TLSConnection` counts its client in as soon as the socket is
accepted (as nats-server does, so ``max_connections`` and /connz see it
during the handshake), then, by the port's settings:

* the usual way: INFO in plain text, then the TLS layer goes in under the
  session and the handshake must finish within ``timeout``;
* ``handshake_first``: the handshake comes first and INFO after it; with a
  fallback delay, a client silent past it gets the usual way instead;
* ``allow_non_tls``: INFO in plain text, then the client's first byte
  decides (0x16 starts a TLS handshake, anything else -- or silence past
  ``timeout`` -- stays plain text).

The login and keepalive timers start once the handshake is done.  Every
timer runs on the server clock (the connection's ready timer).
"""

from __future__ import annotations

from fakejs.core.clientio import TLS_HANDSHAKE_ERROR
from fakejs.server.connection import Connection, Listener
from fakejs.server.tls import ClientPortTLS, ProbeFailure

# What a connection still waits for from a client before deciding how to go on.
FIRST = "first"  # handshake_first with a fallback delay: the client's first bytes, or the delay
SNIFF = "sniff"  # allow_non_tls: the first byte says TLS (0x16) or plain text


class TLSConnection(Connection):
    """A client connection on the TLS client port (see the module docstring)."""

    def __init__(self, server: Listener, tls: ClientPortTLS) -> None:
        super().__init__(server)
        self._tls = tls
        self._registered = False  # counted in before its layers are ready
        self._greeted = False
        self._waiting_for = ""  # FIRST, SNIFF, or "" once decided

    @property
    def counted_in(self) -> bool:
        return self._registered

    def begin(self) -> None:
        """Count the client in, then INFO and the handshake in nats-server's order for the settings."""
        session = self.session
        assert session is not None
        if not session.register():
            return
        self._registered = True
        config = self._tls.config
        if config.handshake_first:
            self.details.tls_first = True
            self.insert_layer(0, self._tls.layer())
            if config.handshake_first_fallback > 0:
                self._waiting_for = FIRST
                self.set_ready_timer(config.handshake_first_fallback, self._first_fallback)
            else:
                self.set_ready_timer(config.timeout, self._handshake_timeout)
            return
        self._greet_plain()

    def session_ready(self) -> None:
        """The handshake is done (or plain text was chosen): INFO if it has not gone out, then the timers."""
        session = self.session
        assert session is not None
        if not self._greeted:
            self._greeted = True
            session.greet()
        session.start_timers()

    def client_spoke(self, data: bytes) -> None:
        """The first bytes of a client the port was waiting for: they decide how it goes on."""
        waiting, self._waiting_for = self._waiting_for, ""
        if not waiting:
            return
        self.cancel_ready_timer()
        if waiting == SNIFF and data[:1] != b"\x16":
            self._plain_chosen()
            return
        if waiting == SNIFF:
            self.insert_layer(0, self._tls.layer())
        self.set_ready_timer(self._tls.config.timeout, self._handshake_timeout)

    def _greet_plain(self) -> None:
        """INFO in plain text, then the TLS handshake (or, with ``allow_non_tls``, the client's choice)."""
        session = self.session
        assert session is not None
        session.greet()
        self.flush()
        self._greeted = True
        if self._tls.allow_non_tls:
            self._waiting_for = SNIFF
            self.set_ready_timer(self._tls.config.timeout, self._plain_chosen)
        else:
            self.insert_layer(0, self._tls.layer())
            self.set_ready_timer(self._tls.config.timeout, self._handshake_timeout)

    def _first_fallback(self) -> None:
        """A ``handshake_first`` client silent past the fallback delay: INFO in plain text and the usual path."""
        if self._waiting_for != FIRST:
            return
        self._waiting_for = ""
        self.details.tls_first = False
        self.clear_layers()
        self._greet_plain()

    def _plain_chosen(self) -> None:
        """An ``allow_non_tls`` client that stayed silent, or spoke plain text: no TLS for it."""
        self._waiting_for = ""
        if not self.started:
            self.start_session()

    def _handshake_timeout(self) -> None:
        if self.started:
            return
        transport = self.transport
        local = transport.get_extra_info("sockname") if transport is not None else None
        peer = transport.get_extra_info("peername") if transport is not None else None
        where = f"{_address(local)}->{_address(peer)}"
        self.fail(0, ProbeFailure(f"TLS handshake error: read tcp {where}: i/o timeout", TLS_HANDSHAKE_ERROR))


def _address(address: object) -> str:
    """Go's ``host:port`` of a socket address (``[::1]:4222`` for IPv6)."""
    if not isinstance(address, tuple) or len(address) < 2:
        return ""
    host = str(address[0])
    return f"[{host}]:{address[1]}" if ":" in host else f"{host}:{address[1]}"
