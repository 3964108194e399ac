"""The ports one :class:`~fakejs.server.server.Server` listens on, opened and closed in nats-server's order.

The client port (plain, or TLS by nats-server's greeting rules:
:mod:`fakejs.server.tls_greeting`), the monitoring port (HTTP, or HTTPS
with the client port's certificate), the websocket port, and the ports
file that names them (``ports_file_dir``).  The server keeps its state and
its public face; this collaborator owns the sockets, so that starting and
stopping them stays in one place.
"""

from __future__ import annotations

import asyncio
import os
import socket
from typing import TYPE_CHECKING

from fakejs.core.options import ServerOptions
from fakejs.gocompat.gourl import ListenError, listen_error
from fakejs.server import portsfile
from fakejs.server.connection import Connection, Listener

if TYPE_CHECKING:
    from fakejs.server.http import Answer, HttpPort
    from fakejs.server.tls import ClientPortTLS
    from fakejs.server.wslistener import WebSocketListener


def system_backlog() -> int:
    """The kernel's largest accept queue, as nats-server listens with it.

    asyncio's default of 100 overflows when a test suite connects a
    thousand clients at once: the kernel drops the excess handshakes and
    those clients wait for an INFO that never comes.
    """
    try:
        with open("/proc/sys/net/core/somaxconn") as handle:
            return max(int(handle.read().strip()), socket.SOMAXCONN)
    except (OSError, ValueError):
        return socket.SOMAXCONN


def monitoring_problem(options: ServerOptions) -> str:
    """nats-server's refusals of a monitoring configuration (it then exits: "Can't start monitoring: ...")."""
    http, https = options.http_port, options.https_port
    if http is not None and https is not None:
        # nats-server names the ports as configured: -1 for a free one
        return f"can't specify both HTTP ({http or -1}) and HTTPs ({https or -1}) ports"
    if https is not None and options.tls is None:
        return "TLS cert and key required for HTTPS"
    return ""


def _public_host(host: str) -> str:
    """The address a client dials for a listener on ``host`` (the loopback one for a wildcard)."""
    return "127.0.0.1" if host in ("", "0.0.0.0", "::") else host


class Listeners:
    """The sockets of one server: the client port, the monitoring port, the websocket port, the ports file."""

    def __init__(self, server: Listener, options: ServerOptions, answer: Answer) -> None:
        self._server = server
        self._options = options
        self._answer = answer  # the monitoring port's handler (monitoring documents, control API)
        self._client: asyncio.base_events.Server | None = None
        self._http: HttpPort | None = None
        self._websocket: WebSocketListener | None = None
        self.http_scheme = "http"  # "https" when the monitoring port serves TLS (``https_port``)
        self.ports_file: str | None = None  # the ports file written at start (``ports_file_dir``)
        self.client_tls: ClientPortTLS | None = None  # the client port's TLS, shared by its connections

    # -- what is open --------------------------------------------------------------------

    @property
    def serving(self) -> bool:
        """The client port is open (between :meth:`open_client_port` and :meth:`close`)."""
        return self._client is not None

    @property
    def http_port(self) -> int | None:
        return None if self._http is None else self._http.port

    @property
    def websocket_url(self) -> str | None:
        """``ws://host:port`` (``wss://`` over TLS) of the websocket port, when there is one."""
        ws = self._websocket
        if ws is None:
            return None
        host = _public_host(ws.config.host)
        return f"{ws.scheme}://{f'[{host}]' if ':' in host else host}:{ws.port}"

    # -- opening ---------------------------------------------------------------------------

    async def open_client_port(self) -> int:
        """Listen for NATS clients; returns the port."""
        options = self._options
        self.client_tls = self._client_tls()
        host, port = options.host or "0.0.0.0", max(options.port, 0)
        try:
            self._client = await self._server.loop.create_server(
                self._accept, host, port, reuse_address=True, backlog=system_backlog()
            )
        except OSError as exc:
            raise ListenError(f'Error listening on port: {host}:{port}, "{listen_error(host, port, exc)}"') from exc
        return int(self._client.sockets[0].getsockname()[1])

    def _accept(self) -> Connection:
        """A new client connection: over TLS when the port has TLS now (a reload may turn it on or off)."""
        tls = self.client_tls
        if tls is None:
            return Connection(self._server)
        # Only a port with TLS loads the TLS layers
        from fakejs.server.tls_greeting import TLSConnection

        return TLSConnection(self._server, tls)

    def renew_tls(self, prepared: ClientPortTLS | None) -> None:
        """A reload's TLS settings (None: no TLS) for the connections accepted from now on (those open keep theirs)."""
        if self.client_tls is None or prepared is None:
            self.client_tls = prepared
        else:
            self.client_tls.config, self.client_tls.context = prepared.config, prepared.context

    def _client_tls(self) -> ClientPortTLS | None:
        """The client port's TLS (``tls {}``), its files checked as nats-server checks them."""
        options = self._options
        config = options.tls
        if config is None:
            return None
        # Only a port with TLS loads the TLS layers
        from fakejs.core.tls_files import check_files
        from fakejs.server.tls import ClientPortTLS

        check_files(config)
        log = self._server.broker.log
        first_only = config.handshake_first and config.handshake_first_fallback == 0
        if options.allow_non_tls and not first_only:
            log.info("TLS available for client connections")
        else:
            log.info("TLS required for client connections")
        if first_only:
            log.warning('Clients that are not using "TLS Handshake First" option will fail to connect')
        return ClientPortTLS(config, options.allow_non_tls)

    async def open_monitoring(self) -> None:
        """The monitoring port: plain HTTP, or HTTPS with the client port's certificate (no client certificates)."""
        options = self._options
        problem = monitoring_problem(options)
        if problem:
            raise ValueError(f"Can't start monitoring: {problem}")
        secure = options.https_port is not None
        port = options.https_port if secure else options.http_port
        if port is None:
            return
        # Only a monitoring port loads HTTP (h11)
        from fakejs.server.http import HttpPort

        context = None
        if secure:
            assert options.tls is not None
            # Only HTTPS loads the TLS layers
            from fakejs.server.tls import monitoring_context

            context = monitoring_context(options.tls)
        broker = self._server.broker
        http_host = options.http_host or options.host or "0.0.0.0"
        self._http = HttpPort(self._answer, broker.record_error, broker.clock)
        await self._http.start(http_host, port, backlog=system_backlog(), ssl=context)
        self.http_scheme = "https" if secure else "http"
        broker.log.info("Starting %s monitor on %s:%d", self.http_scheme, http_host, self._http.port)

    async def open_websocket(self) -> None:
        """Open the websocket port, when configured; websocket clients get its host and port in their INFO."""
        config = self._options.websocket
        if config is None:
            return
        # Only a websocket port loads the WebSocket layers (wsproto)
        from fakejs.server.wslistener import WebSocketListener

        context = None
        if config.tls is not None:
            # Only wss loads the TLS layers
            from fakejs.server.tls import server_context

            context = server_context(config.tls)
        self._websocket = ws = WebSocketListener(self._server, config, context)
        port = await ws.start(system_backlog())
        broker = self._server.broker
        broker.websocket_info = (ws.host, port, context is not None)
        broker.log.info("Listening for websocket clients on %s://%s:%d", ws.scheme, ws.host, port)
        if context is None:
            broker.log.warning("Websocket not configured with TLS. DO NOT USE IN PRODUCTION!")

    def write_ports_file(self, client_port: int) -> None:
        """``DIR/<executable>_<pid>.ports`` with the client, monitoring and websocket URLs, as nats-server writes it."""
        options = self._options
        if not options.ports_file_dir:
            return
        path = portsfile.ports_file_path(options.ports_file_dir)
        monitoring: list[str] = []
        if self._http is not None:
            monitoring = portsfile.urls(self.http_scheme, options.http_host or options.host, self._http.port)
        websocket: list[str] = []
        if self._websocket is not None:
            websocket = portsfile.urls(self._websocket.scheme, self._websocket.config.host, self._websocket.port)
        scheme = "tls" if options.tls is not None else "nats"
        broker = self._server.broker
        cluster: list[str] = []
        if broker.cluster_port is not None and options.cluster is not None:
            cluster = portsfile.urls("nats", options.cluster.host, broker.cluster_port)
        text = portsfile.ports_json(
            portsfile.urls(scheme, options.host, client_port), monitoring, websocket, cluster=cluster
        )
        try:
            portsfile.write_ports_file(path, text)
        except OSError as exc:
            self._server.broker.log.error("Error writing ports file (%s): %s", path, exc)
            return
        self.ports_file = path

    def pin_ports(self, client_port: int) -> None:
        """Write the ports in use into the options, so that a restart listens on the same ones."""
        options = self._options
        options.port = client_port
        if self._websocket is not None and options.websocket is not None:
            options.websocket.port = self._websocket.port
        if self._http is not None:
            if self.http_scheme == "https":
                options.https_port = self._http.port
            else:
                options.http_port = self._http.port

    # -- closing ---------------------------------------------------------------------------

    def stop_accepting(self) -> None:
        """Close the client and websocket ports to new connections (those made are the server's to close)."""
        if self._client is not None:
            self._client.close()
        if self._websocket is not None:
            self._websocket.close()

    async def close(self) -> None:
        """Stop the monitoring port, wait for the client ports to close, remove the ports file."""
        if self._http is not None:
            await self._http.stop()
            self._http = None
        if self._client is not None:
            await self._client.wait_closed()
            self._client = None
        ws, self._websocket = self._websocket, None
        if ws is not None:
            ws.close()
            await ws.wait_closed()
        self._remove_ports_file()

    def move_ports_file(self, client_port: int) -> None:
        """A reload gave a new ``ports_file_dir``: the old file removed, the new one written (if any)."""
        self._remove_ports_file()
        self.write_ports_file(client_port)

    def _remove_ports_file(self) -> None:
        path, self.ports_file = self.ports_file, None
        if path is None:
            return
        try:
            os.remove(path)
        except OSError as exc:
            self._server.broker.log.error("Error cleaning up ports file %s: %s", path, exc)
