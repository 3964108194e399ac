"""What a configuration reload does to a running server beyond its options, as nats-server's Apply steps.

:class:`ReloadSteps` runs one reload for a :class:`~fakejs.server.server.Server`:
the options are compared and set by :func:`fakejs.server.reload.reload_options`;
here are the steps some of them take, each run just before its
``Reloaded:`` line: the pid file written, the connections' new ping interval, the ports file moved, the client
port's new TLS (its files checked before anything is applied), raised
JetStream limits and new atomic batch limits, the cluster's new settings and routes.  Once
every line is logged, before the last one, the cluster's accepted routes
log in again, JetStream is turned off or on, and each account gets (or
loses) JetStream and its new limits as configured; after it, clients whose
certificate new ``pinned_certs`` leave out are closed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from fakejs.core.broker import Broker
from fakejs.core.cluster.reloading import follow_ping_interval, recheck_routes, reload_routes, reload_settings
from fakejs.core.options import ServerOptions
from fakejs.core.process import process_id
from fakejs.core.reload_options import ReloadRefused
from fakejs.server.jetstreams import AccountJetStreams
from fakejs.server.listeners import Listeners
from fakejs.server.reload import recheck_pinned_certs, reload_options

if TYPE_CHECKING:
    from fakejs.jetstream import JetStreamWithApi
    from fakejs.server.tls import ClientPortTLS

__all__ = ["ReloadSteps", "RunningServer"]


class RunningServer(Protocol):
    """What a reload works on: the :class:`~fakejs.server.server.Server` (which imports this module)."""

    options: ServerOptions
    broker: Broker
    listeners: Listeners
    jetstreams: AccountJetStreams

    @property
    def port(self) -> int: ...

    @property
    def account_jetstreams(self) -> list[JetStreamWithApi]: ...

    def switch_jetstream(self, on: bool) -> None: ...


class ReloadSteps:
    """One reload of a running server: the new options, and the steps their changes take."""

    def __init__(self, server: RunningServer, options: ServerOptions) -> None:
        self._server = server
        self._new = options
        # Checked before anything is applied: a certificate that cannot be used refuses the reload.
        self._tls = _prepared_tls(options) if options.tls is not None else None
        self._recheck_routes = False

    def run(self, on_logging: Callable[[ServerOptions], None] | None) -> None:
        """Apply the new options (or raise :class:`ReloadRefused`, nothing applied)."""
        server = self._server
        running_tls = server.options.tls
        pins_before = frozenset(running_tls.pinned_certs) if running_tls is not None else frozenset()
        reload_options(server.broker, self._new, on_logging, self._actions(), self._finish)
        tls = server.options.tls
        if tls is not None and frozenset(tls.pinned_certs) != pins_before:
            recheck_pinned_certs(server.broker, tls.pinned_certs)

    def _actions(self) -> dict[str, Callable[[], None]]:
        server = self._server
        limits = self._raise_jetstream_limits
        return {
            "pid_file": self._write_pid_file,
            "ping_interval": self._follow_ping_interval,
            "ports_file_dir": lambda: server.listeners.move_ports_file(server.port),
            "tls": lambda: server.listeners.renew_tls(self._tls),
            "jetstream_max_memory": limits,
            "jetstream_max_store": limits,
            "jetstream_batch_inflight_per_stream": self._follow_batch_limits,
            "cluster": self._follow_cluster_settings,
            "cluster:routes": self._reload_routes,
        }

    def _write_pid_file(self) -> None:
        """A reload named a pid file: this process's id written to it (nats-server's logPid)."""
        path = self._server.options.pid_file
        if not path:
            return
        try:
            with open(path, "w") as handle:
                handle.write(str(process_id()))
        except OSError as exc:
            self._server.broker.log.error("Failed to write pidfile: %s", exc)

    def _raise_jetstream_limits(self) -> None:
        """Raised max_mem_store or max_file_store: every account's JetStream takes them at once."""
        options = self._server.options
        for js in self._server.account_jetstreams:
            js.raise_server_limits(options.jetstream_max_memory, options.jetstream_max_store)

    def _follow_ping_interval(self) -> None:
        """A new ping interval: every connection takes it from its next PING on (nats-server's setPingTimer)."""
        broker = self._server.broker
        for client in list(broker.clients.values()):
            client.keepalive.interval = client.keepalive.configured_interval()
        if broker.cluster is not None:
            follow_ping_interval(broker.cluster)

    def _follow_batch_limits(self) -> None:
        """New atomic batch limits (nats-server's JetStreamLimits): for the next batches and messages, at once."""
        # The JetStream layer loads only when JetStream starts: a server without it does not pay for it
        from fakejs.jetstream.service.jetstream import server_batch_limits

        limits = server_batch_limits(self._server.broker)
        for shared in {id(js.batch_limits): js.batch_limits for js in self._server.account_jetstreams}.values():
            shared.follow(limits)

    def _follow_cluster_settings(self) -> None:
        """The cluster's new name or authorization (the accepted routes are checked at the end)."""
        cluster, new = self._server.broker.cluster, self._server.options.cluster
        if cluster is not None and new is not None and new is not cluster.config:
            self._recheck_routes = reload_settings(cluster, new) or self._recheck_routes

    def _reload_routes(self) -> None:
        """The cluster's new routes: the running cluster keeps its settings, with the new routes."""
        cluster, new = self._server.broker.cluster, self._server.options.cluster
        if cluster is not None and new is not None and new is not cluster.config:
            reload_routes(cluster, new.routes)

    def _finish(self, changed: set[str]) -> None:
        """Before the last line: the running cluster's settings stay the options', JetStream off or on."""
        server = self._server
        cluster = server.broker.cluster
        if cluster is not None:
            server.options.cluster = cluster.config  # what the running cluster reads
            if self._recheck_routes:
                recheck_routes(cluster)
        if "jetstream" in changed:
            server.switch_jetstream(server.options.jetstream)
        server.jetstreams.follow_accounts()
        server.jetstreams.follow_limits()


def _prepared_tls(options: ServerOptions) -> ClientPortTLS:
    """The client port's TLS a reload asks for, its files checked first (a bad one refuses the reload)."""
    # Only a server with TLS loads the TLS layers, reloaded ones too
    from fakejs.core.tls_files import TLSFileError, check_files
    from fakejs.server.tls import ClientPortTLS

    assert options.tls is not None
    try:
        check_files(options.tls)
        return ClientPortTLS(options.tls, options.allow_non_tls)
    except (TLSFileError, OSError, ValueError) as exc:
        raise ReloadRefused(str(exc)) from None
