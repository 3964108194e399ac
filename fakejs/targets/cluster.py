"""Clusters of server subprocesses: N nodes of nats-server or ``python -m fakejs``, joined by routes.

Every node gets the same command line on both kinds::

    -a 127.0.0.1 -p -1 --cluster nats://127.0.0.1:-1 --cluster_name NAME -n NODE
    --ports_file_dir DIR [-m -1] [--routes SEED] [-js -sd STORE [-c TAGS]] [extra flags]

All ports are free ports the servers pick (``-1``), learnt from the log
(client, monitoring) and from the ports file (``cluster``: nats-server's
``{"nats":[...],"monitoring":[...],"cluster":[...]}``), so clusters run in
parallel.  The first node is the seed; the others route to the seed only, so
they find each other through the seed's gossip.  A restart reuses a node's
ports, which is what routes and clients that know the node reconnect to.
A cluster is ready when a message through any node reaches every node
(:func:`~fakejs.targets.cluster_probe.wait_connected`).

With ``jetstream=True`` every node runs JetStream on its own store directory
(the node's temporary directory, removed at :meth:`ProcessCluster.stop`), and
the cluster is ready once ``$JS.API.INFO`` answers without an error on every
node, which needs an elected meta leader
(:func:`~fakejs.targets.cluster_probe.wait_jetstream`).  nats-server has no
flag for ``server_tags``, so a node given tags also reads a one-line
configuration file holding them (its flags win over the file for the rest).

:class:`ProcessCluster` is the launcher (this repository's tests mix the two
kinds); :class:`RealCluster` is a real nats-server cluster with the shape of
the pytest plugin's fakejs cluster handle, whose fakejs-only parts raise
:class:`~fakejs.targets.fake.FakeOnly`.
"""

from __future__ import annotations

import glob
import json
import os
import secrets
import socket
import sys
import time
from collections.abc import Sequence
from typing import Any

from fakejs.targets.cluster_probe import JETSTREAM_READY_TIMEOUT, READY_TIMEOUT, wait_connected, wait_jetstream
from fakejs.targets.fake import FakeOnly
from fakejs.targets.real import NatsServerNotFound, ServerProcess, find_nats_server

FAKE_COMMAND = (sys.executable, "-m", "fakejs")
SEED_ATTEMPTS = 3  # starts of a JetStream seed on a port chosen beforehand, in case another process took it
PORTS_TIMEOUT = 10.0  # seconds for a started node to write its ports file with its route port


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def node_command(kind: str) -> list[str]:
    """The program of a node: the nats-server binary (``real``) or fakejs's command line (``fake``)."""
    if kind == "fake":
        return list(FAKE_COMMAND)
    found = find_nats_server()
    if found is None:
        raise NatsServerNotFound("nats-server not found")
    return [found]


class ClusterNode(ServerProcess):
    """One node: a server subprocess with a route listener, cluster and node names, and seed routes."""

    def __init__(
        self,
        kind: str,
        name: str,
        cluster_name: str,
        *,
        routes: Sequence[str] = (),
        extra: Sequence[str] = (),
        monitor: bool = False,
        jetstream: bool = False,
        tags: Sequence[str] = (),
    ) -> None:
        super().__init__(command=node_command(kind), jetstream=jetstream, log_name=f"{name}.log")
        self.kind = kind
        self.tags = list(tags)
        self.name = name
        self.cluster_name = cluster_name
        self.routes = list(routes)
        self.extra = list(extra)
        self.monitor = monitor
        self.cluster_port = -1
        self.ports_dir = os.path.join(self.store_dir, "ports")
        os.makedirs(self.ports_dir, exist_ok=True)

    @property
    def route_url(self) -> str:
        return f"nats://127.0.0.1:{self.cluster_port}"

    @property
    def client_address(self) -> str:
        """``host:port`` as nats-server lists a client listener in ``connect_urls``."""
        return f"127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def arguments(self) -> list[str]:
        args = super().arguments()  # -a 127.0.0.1 -p PORT
        args += ["--cluster", f"nats://127.0.0.1:{self.cluster_port}", "--cluster_name", self.cluster_name]
        args += ["-n", self.name, "--ports_file_dir", self.ports_dir]
        if self.monitor:
            args += ["-m", str(self.http_port if self.http_port is not None else -1)]
        if self.routes:
            args += ["--routes", ",".join(self.routes)]
        if self.tags:
            args += ["-c", self._tags_file()]
        return args + self.extra

    def _tags_file(self) -> str:
        """A configuration file holding only this node's ``server_tags`` (there is no such flag)."""
        path = os.path.join(self.store_dir, "tags.conf")
        with open(path, "w") as handle:
            handle.write(f"server_tags: {json.dumps(self.tags)}\n")
        return path

    def start(self, timeout: float = 15.0) -> ClusterNode:
        super().start(timeout)
        self.cluster_port = self._route_port(time.monotonic() + PORTS_TIMEOUT)
        return self

    def _route_port(self, deadline: float) -> int:
        """The route listener's port from this process's ports file (written once every listener is up)."""
        assert self.process is not None
        pattern = os.path.join(self.ports_dir, f"*_{self.process.pid}.ports")
        while True:
            for path in glob.glob(pattern):
                try:
                    with open(path) as handle:
                        ports = json.load(handle)
                except (OSError, ValueError):
                    continue  # being written
                if ports.get("cluster"):
                    return int(ports["cluster"][0].rsplit(":", 1)[1])
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"{self.name}: no route port in a ports file:\n{self.log_text(True)}")
            time.sleep(0.005)


class ProcessCluster:
    """N running nodes, the first the seed of the others' routes.  Use as a context manager or call :meth:`stop`."""

    def __init__(
        self,
        kinds: Sequence[str],
        *,
        name: str | None = None,
        extra: Sequence[str] = (),
        monitor: bool = False,
        jetstream: bool = False,
        node_prefix: str | None = None,
        tags: Sequence[Sequence[str]] = (),
    ) -> None:
        self.name = name or f"C{secrets.token_hex(4)}"
        self.kinds = list(kinds)
        self.extra = list(extra)
        self.monitor = monitor
        self.jetstream = jetstream
        self.node_prefix = node_prefix if node_prefix is not None else f"{self.name}-n"  # node i is prefix + i
        self.tags = [list(node_tags) for node_tags in tags]  # node i's server_tags, if any
        self.nodes: list[ClusterNode] = []
        self.ready_seconds = 0.0  # how long the latest :meth:`start` took until messages crossed every route
        self.jetstream_seconds = 0.0  # of which waiting for JetStream (a meta leader) on every node

    # -- the nodes --------------------------------------------------------------------

    def node(self, kind: str, index: int, routes: Sequence[str] = (), extra: Sequence[str] = ()) -> ClusterNode:
        return ClusterNode(
            kind,
            f"{self.node_prefix}{index + 1}",
            self.name,
            routes=routes,
            extra=[*self.extra, *extra],
            monitor=self.monitor,
            jetstream=self.jetstream,
            tags=self.tags[index] if index < len(self.tags) else (),
        )

    @property
    def size(self) -> int:
        return len(self.nodes)

    @property
    def urls(self) -> list[str]:
        return [node.url for node in self.nodes]

    def url(self, index: int) -> str:
        return self.nodes[index].url

    @property
    def seed_route(self) -> str:
        return self.nodes[0].route_url

    def running_nodes(self) -> list[ClusterNode]:
        return [node for node in self.nodes if node.running]

    # -- life cycle -------------------------------------------------------------------

    def start(self, timeout: float = READY_TIMEOUT) -> ProcessCluster:
        """Start the seed, then the others routed to it; return once every node reaches every other."""
        began = time.monotonic()
        try:
            for index, kind in enumerate(self.kinds):
                if index:
                    self.nodes.append(self.node(kind, index, [self.seed_route]).start())
                else:
                    self.nodes.append(self.start_seed(kind))
            wait_connected(self.nodes, timeout)
            connected = time.monotonic()
            self.wait_ready(self.nodes, max(timeout, JETSTREAM_READY_TIMEOUT))
        except BaseException:
            self.stop()
            raise
        self.ready_seconds = time.monotonic() - began
        self.jetstream_seconds = time.monotonic() - connected
        return self

    def start_seed(self, kind: str) -> ClusterNode:
        """The first node; with JetStream it routes to itself on a port chosen here.

        nats-server refuses JetStream in a cluster without configured routes
        (and ignores a route to itself), while the seed cannot know another
        node's port yet.  A port chosen here may be taken meanwhile by
        another process, hence the few attempts.
        """
        if not self.jetstream:
            return self.node(kind, 0).start()
        for attempt in range(SEED_ATTEMPTS):
            port = free_port()
            seed = self.node(kind, 0, [f"nats://127.0.0.1:{port}"])
            seed.cluster_port = port
            try:
                return seed.start()
            except RuntimeError:
                seed.remove_store()
                if attempt == SEED_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    def wait_ready(self, nodes: Sequence[ClusterNode], timeout: float = JETSTREAM_READY_TIMEOUT) -> None:
        """With JetStream, wait until ``$JS.API.INFO`` answers without an error on each of ``nodes``."""
        if self.jetstream:
            wait_jetstream(nodes, timeout)

    def add(self, kind: str | None = None, extra: Sequence[str] = (), wait: bool = True) -> ClusterNode:
        """Start one more node routed to the seed (of the seed's kind unless ``kind``); wait until it is connected."""
        node = self.node(kind or self.kinds[0], len(self.nodes), [self.seed_route], extra).start()
        self.nodes.append(node)
        if wait:
            wait_connected(self.running_nodes())
            self.wait_ready(self.running_nodes())
        return node

    def kill(self, index: int) -> None:
        """SIGKILL one node (a crash: no goodbye to routes or clients)."""
        self.nodes[index].kill()

    def shutdown(self, index: int) -> None:
        """Stop one node the orderly way (SIGTERM: it tells the others it is going), keeping its store."""
        self.nodes[index].stop(keep_store=True)

    def restart(self, index: int, wait: bool = True) -> ClusterNode:
        """Start a stopped or killed node again on the same client, route and monitoring ports."""
        node = self.nodes[index]
        node.kill()
        node.start()
        if wait:
            wait_connected(self.running_nodes())
            self.wait_ready(self.running_nodes())
        return node

    def stop(self) -> None:
        for node in self.nodes:
            node.kill()
            node.remove_store()

    def __enter__(self) -> ProcessCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def logs(self) -> str:
        """Every node's log, for an assertion message."""
        return "\n".join(f"--- {node.name} ({node.kind})\n{node.log_text()}" for node in self.nodes)


def start_cluster(kinds: Sequence[str], *, extra: Sequence[str] = (), monitor: bool = False) -> ProcessCluster:
    """Start and return a ready :class:`ProcessCluster` of nodes of these kinds (``"real"``/``"fake"``)."""
    return ProcessCluster(kinds, extra=extra, monitor=monitor).start()


class RealCluster:
    """``size`` real nats-server nodes with the shape of the pytest plugin's fakejs cluster handle.

    ``kill`` and ``restart`` act on processes (``kill`` is a SIGKILL: a
    crash); partitions and the clock are fakejs's and raise :class:`FakeOnly`.
    With ``jetstream=True`` the nodes are named ``n1`` ... ``nN`` (fakejs's
    node names) and run JetStream, each on its own temporary store; ``tags``
    gives node i its ``server_tags``; ``monitor=True`` gives every node a
    monitoring port (:meth:`monitor_url`); ``extra`` flags go to every node
    (``["-c", FILE]`` for a configuration, e.g. accounts).
    """

    kind = "real"

    def __init__(
        self,
        size: int = 3,
        *,
        name: str = "C",
        jetstream: bool = False,
        tags: Sequence[Sequence[str]] = (),
        monitor: bool = False,
        extra: Sequence[str] = (),
    ) -> None:
        if size < 1:
            raise ValueError("a cluster needs at least one node")
        self.processes = ProcessCluster(
            ["real"] * size,
            name=name,
            jetstream=jetstream,
            node_prefix="n" if jetstream else None,
            tags=tags,
            monitor=monitor,
            extra=extra,
        )

    def start(self) -> RealCluster:
        self.processes.start()
        return self

    def stop(self) -> None:
        self.processes.stop()

    @property
    def size(self) -> int:
        return self.processes.size

    @property
    def urls(self) -> list[str]:
        return self.processes.urls

    def url(self, node: int) -> str:
        return self.processes.url(node)

    @property
    def ready_seconds(self) -> float:
        """How long the latest start took until the cluster was ready (JetStream included)."""
        return self.processes.ready_seconds

    def monitor_url(self, node: int) -> str:
        """``http://127.0.0.1:PORT`` of a node's monitoring listener (needs ``monitor=True``)."""
        port = self.processes.nodes[node].http_port
        if port is None:
            raise RuntimeError("this cluster has no monitoring ports: start it with monitor=True")
        return f"http://127.0.0.1:{port}"

    def kill(self, node: int) -> None:
        self.processes.kill(node)

    def shutdown(self, node: int) -> None:
        """Stop a node in order (it announces its shutdown; ``kill`` is a crash); ``restart`` brings it back."""
        self.processes.shutdown(node)

    def restart(self, node: int, down_for: float = 0.0) -> None:
        """Start a node again on its ports (``down_for`` real seconds after killing it, if it runs)."""
        if down_for > 0:
            self.processes.kill(node)
            time.sleep(down_for)
        self.processes.restart(node)

    def take_errors(self) -> list[Any]:
        return []

    def partition(self, *groups: Any) -> None:
        raise FakeOnly("partition() is a fakejs feature; a real cluster cannot be cut on cue")

    def heal(self) -> None:
        raise FakeOnly("heal() is a fakejs feature; a real cluster cannot be cut on cue")

    def drop_leafs(self, node: Any = None, remote: str = "*", until_restored: bool = False) -> dict[str, Any]:
        raise FakeOnly("drop_leafs() is a fakejs feature; a real cluster's leaf links cannot be cut on cue")

    def restore_leafs(self, node: Any = None) -> dict[str, Any]:
        raise FakeOnly("restore_leafs() is a fakejs feature; a real cluster's leaf links cannot be cut on cue")

    def advance(self, seconds: float) -> int:
        raise FakeOnly("advance() needs fakejs's manual clock: a real cluster runs on real time")

    def advance_to_next(self) -> float | None:
        raise FakeOnly("advance_to_next() needs fakejs's manual clock: a real cluster runs on real time")

    def advance_until(self, predicate: Any, limit: float = 3600.0) -> float:
        raise FakeOnly("advance_until() needs fakejs's manual clock: a real cluster runs on real time")

    def __getattr__(self, name: str) -> Any:
        if name in (
            "call",
            "server",
            "now",
            "step_down",
            "move_leader",
            "scenario",
            "start_scenario",
            "timeline",
            "timeline_page",
        ):
            raise FakeOnly(f"{name} is a fakejs feature; a real nats-server cluster has no such thing")
        raise AttributeError(name)
