"""``fakejs --cluster_size N``: N nodes in one process, one :class:`~fakejs.server.local_cluster.Cluster`.

The nodes share the command line's settings; what each listens on:

* client port: ``-p P`` (P > 0, the default 4222 too) gives node ``i``
  (from 0) port ``P + i``; ``-p -1`` a free port each;
* monitoring: ``-m M`` gives ``M + i``; ``-m -1`` a free port each; none without ``-m``;
* routes: a free port each on 127.0.0.1 (the nodes route to one another in the process).

Nodes are named ``<-n NAME or "n">1`` ... ``N``; the cluster is named by
``--cluster_name`` (default ``C``).  ``--ports_file_dir DIR`` writes one
ports file for the process, ``DIR/nats-server_<pid>.ports``, listing every
node's URLs in node order (``nats``, ``monitoring``, ``cluster``), so a
launcher reading ``nats[0]`` finds node 1.  Flags that would cluster the
nodes elsewhere or serve what a cluster of fakejs nodes does not (routes,
websocket) are refused by name.  ``--scenario NAME`` starts a scenario on
the cluster once it is meshed (:mod:`fakejs.server.cluster_scenarios`).  ``-js`` gives the nodes a
JetStream replicated across them (:mod:`fakejs.server.cluster_replication`).  N = 1 is an ordinary
server.
"""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import fields
from typing import Any

from fakejs.core.clock import Clock
from fakejs.core.log import get_logger
from fakejs.core.options import ServerOptions
from fakejs.core.process import process_id
from fakejs.gocompat.goflag import Parsed
from fakejs.server import portsfile
from fakejs.server.idle_spin import spin_for
from fakejs.server.local_cluster import Cluster

MAX_PORT = 65535

# Flags that configure routes, by dest (``cluster`` is also ``--cluster_listen``): the nodes' routes are the cluster's own.
ROUTE_FLAGS = ("cluster", "routes", "cluster_advertise", "no_advertise", "connect_retries")

# Why a SIGHUP reloads nothing with --cluster_size.
CLUSTER_RELOAD = "config reload is not supported by fakejs with --cluster_size yet"


def cluster_size_problem(flags: Parsed, options: ServerOptions, file_cluster: bool) -> str:
    """Why ``--cluster_size`` cannot be served with the rest of the command line ("" when it can).

    ``file_cluster``: the configuration file has a ``cluster {}`` block.
    """
    size = flags.values["cluster_size"]
    if size < 1:
        return f"--cluster_size must be at least 1, not {size}"
    if size == 1:
        return ""
    for dest in ROUTE_FLAGS:
        if flags.given(dest):
            return f"--cluster_size makes its own routes: give it no --{flags.spelling(dest)}"
    if file_cluster:
        return "--cluster_size makes its own routes: give it a configuration file without a cluster {} block"
    if options.websocket is not None:
        return "websocket with --cluster_size: not supported by fakejs yet"
    for flag, base in (("-p", options.port), ("-m", options.http_port)):
        if base is not None and base > 0 and base + size - 1 > MAX_PORT:
            return f"--cluster_size {size} with {flag} {base}: the last node's port would be above {MAX_PORT}"
    return ""


def node_ports(base: int, index: int) -> int:
    """A node's port from the command line's: 0 (a free port) stays 0, any other is ``base + index``."""
    return base + index if base > 0 else 0


def make_cluster(size: int, options: ServerOptions, clock: Clock | None, cluster_name: str) -> Cluster:
    """The cluster of ``size`` nodes, each with the command line's options and its own ports."""
    settings: dict[str, Any] = {field.name: getattr(options, field.name) for field in fields(options)}
    for per_node in ("name", "seed", "cluster", "ports_file_dir"):
        settings.pop(per_node)
    cluster = Cluster(
        size, name=cluster_name or "C", clock=clock, seed=options.seed, node_prefix=options.name or "n", **settings
    )
    for index, server in enumerate(cluster.servers):
        server.options.port = node_ports(options.port, index)
        if options.http_port is not None:
            server.options.http_port = node_ports(options.http_port, index)
    return cluster


def ports_text(cluster: Cluster, options: ServerOptions) -> str:
    """The process's ports file: every node's URLs, in node order."""
    nats: list[str] = []
    monitoring: list[str] = []
    routes: list[str] = []
    scheme = "tls" if options.tls is not None else "nats"
    for server in cluster.servers:
        nats += portsfile.urls(scheme, options.host, server.port)
        if server.http_port is not None:
            monitoring += portsfile.urls(server.http_scheme, options.http_host or options.host, server.http_port)
        if server.routes is not None:
            routes += portsfile.urls("nats", "127.0.0.1", server.routes.port)
    return portsfile.ports_json(nats, monitoring, cluster=routes)


async def serve_cluster(
    size: int,
    options: ServerOptions,
    pid_file: str = "",
    clock: Clock | None = None,
    cluster_name: str = "",
    scenario: str = "",
    timeline_file: str = "",
    spin: float = 0.0,
) -> None:
    """Run ``size`` nodes until SIGINT or SIGTERM (or every node's end of lame duck mode, SIGUSR2), then stop them all.

    SIGHUP is trapped and the reload refused: the nodes do not reload yet.  ``timeline_file``: where
    the cluster's timeline page is written once every node has stopped.  ``spin``: seconds the loop keeps
    polling after a client's read of any node (:mod:`fakejs.server.idle_spin`; the nodes share the loop).
    """
    log = get_logger()
    cluster = make_cluster(size, options, clock, cluster_name)
    shared_spin = spin_for(spin)
    for server in cluster.servers:
        server.idle_spin = shared_spin
    stop = asyncio.Event()

    def trapped(name: str) -> None:
        log.info('Trapped "%s" signal', name)
        stop.set()

    def lame_duck() -> None:
        log.info('Trapped "user defined signal 2" signal')
        for server in cluster.running:
            server.control.lame_duck()

    def refuse_reload() -> None:
        log.info('Trapped "hangup" signal')
        log.error("Failed to reload server configuration: %s", CLUSTER_RELOAD)

    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, trapped, "interrupt")
    loop.add_signal_handler(signal.SIGTERM, trapped, "terminated")
    loop.add_signal_handler(signal.SIGUSR2, lame_duck)
    loop.add_signal_handler(signal.SIGHUP, refuse_reload)
    ports_file = ""
    try:
        await cluster.start()
        if scenario:
            await cluster.start_scenario(scenario)
        for server in cluster.servers:
            log.info("Cluster %s node %s: clients on %s", cluster.name, server.broker.name, server.url)
        if options.ports_file_dir:
            ports_file = portsfile.ports_file_path(options.ports_file_dir)
            portsfile.write_ports_file(ports_file, ports_text(cluster, options))
        if pid_file:
            with open(pid_file, "w") as handle:
                handle.write(str(process_id()))
        log.info("Cluster %s of %d nodes is ready", cluster.name, size)
        await _until(stop, cluster)
    finally:
        await cluster.stop()
        if timeline_file:  # once stopped: the store flushed, every client closed
            # Only --timeline FILE writes a page
            from fakejs.cli.timeline_file import write_cluster_timeline_page

            write_cluster_timeline_page(cluster, timeline_file)
        if ports_file:
            try:
                os.remove(ports_file)
            except OSError:
                pass


async def _until(stop: asyncio.Event, cluster: Cluster) -> None:
    """Wait for a stopping signal, or until every node has finished (lame duck mode ends a node)."""
    waiting: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
    finished: asyncio.Future[Any] = asyncio.ensure_future(_all_finished(cluster))
    try:
        await asyncio.wait({waiting, finished}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()
        finished.cancel()


async def _all_finished(cluster: Cluster) -> None:
    """Until every node has finished (a task: cancelled, it logs nothing, where a gather's exception would be)."""
    for server in cluster.servers:
        await server.finished.wait()
