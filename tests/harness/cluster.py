"""Clusters of server subprocesses: N nodes of nats-server or ``python -m fakejs``, joined by routes.

Every node gets the same command line on both kinds::

    -a 127.0.0.1 -p -1 --cluster nats://127.0.0.1:-1 --cluster_name NAME -n NODE
    --ports_file_dir DIR [-m -1] [--routes SEED] [extra flags]

All ports are free ports the servers pick (``-1``), learnt from the log
(client, monitoring) and from the ports file (``cluster``: nats-server's
``{"nats":[...],"monitoring":[...],"cluster":[...]}``), so clusters run in
parallel.  The first node is the seed; the others route to the seed only, so
they find each other through the seed's gossip.  A restart reuses a node's
ports, which is what routes and clients that know the node reconnect to.

A cluster is ready when a message published through any node reaches a
subscriber on every node: :func:`wait_connected` checks exactly that with
bare sockets (no event loop needed), republishing until every subscriber has
heard from every node or the deadline passes.  It needs no monitoring
endpoint, and it is also what a client of the cluster needs.
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import secrets
import select
import socket
import sys
import time
from collections.abc import Sequence

from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs.targets import ServerProcess, find_nats_server
from tests.harness.wait import eventually

FAKE_COMMAND = (sys.executable, "-m", "fakejs")
READY_TIMEOUT = 15.0  # seconds for a cluster's routes to carry messages between every two nodes
PORTS_TIMEOUT = 10.0  # seconds for a started node to write its ports file with its route port
PROBE_INTERVAL = 0.02  # seconds between two rounds of probe messages


def node_command(kind: str) -> list[str]:
    """The program of a node: the nats-server binary (``real``) or fakejs's command line (``fake``)."""
    if kind == "fake":
        return list(FAKE_COMMAND)
    found = find_nats_server()
    if found is None:
        raise RuntimeError("nats-server not found")
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
    ) -> None:
        super().__init__(command=node_command(kind), jetstream=False, log_name=f"{name}.log")
        self.kind = kind
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
        return args + self.extra

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


class Cluster:
    """N running nodes, the first the seed of the others' routes.  Use as a context manager or call :meth:`stop`."""

    def __init__(
        self,
        kinds: Sequence[str],
        *,
        name: str | None = None,
        extra: Sequence[str] = (),
        monitor: bool = False,
    ) -> None:
        self.name = name or f"C{secrets.token_hex(4)}"
        self.kinds = list(kinds)
        self.extra = list(extra)
        self.monitor = monitor
        self.nodes: list[ClusterNode] = []
        self.ready_seconds = 0.0  # how long the latest :meth:`start` took until messages crossed every route

    # -- the nodes --------------------------------------------------------------------

    def node(self, kind: str, index: int, routes: Sequence[str] = (), extra: Sequence[str] = ()) -> ClusterNode:
        return ClusterNode(
            kind,
            f"{self.name}-n{index + 1}",
            self.name,
            routes=routes,
            extra=[*self.extra, *extra],
            monitor=self.monitor,
        )

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

    def start(self, timeout: float = READY_TIMEOUT) -> Cluster:
        """Start the seed, then the others routed to it; return once every node reaches every other."""
        began = time.monotonic()
        try:
            for index, kind in enumerate(self.kinds):
                routes = [self.seed_route] if index else []
                self.nodes.append(self.node(kind, index, routes).start())
            wait_connected(self.nodes, timeout)
        except BaseException:
            self.stop()
            raise
        self.ready_seconds = time.monotonic() - began
        return self

    def add(self, kind: str | None = None, extra: Sequence[str] = (), wait: bool = True) -> ClusterNode:
        """Start one more node routed to the seed (of the seed's kind unless ``kind``); wait until it is connected."""
        node = self.node(kind or self.kinds[0], len(self.nodes), [self.seed_route], extra).start()
        self.nodes.append(node)
        if wait:
            wait_connected(self.running_nodes())
        return node

    def kill(self, index: int) -> None:
        """SIGKILL one node (a crash: no goodbye to routes or clients)."""
        self.nodes[index].kill()

    def restart(self, index: int, wait: bool = True) -> ClusterNode:
        """Start a stopped or killed node again on the same client, route and monitoring ports."""
        node = self.nodes[index]
        node.kill()
        node.start()
        if wait:
            wait_connected(self.running_nodes())
        return node

    def stop(self) -> None:
        for node in self.nodes:
            node.kill()
            node.remove_store()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def logs(self) -> str:
        """Every node's log, for an assertion message."""
        return "\n".join(f"--- {node.name} ({node.kind})\n{node.log_text()}" for node in self.nodes)


# -- readiness: a message through every node reaches every node -------------------------------


class _Probe:
    """A bare-socket client on one node, subscribed to the probe subjects, counting whom it heard from."""

    def __init__(self, node: ClusterNode, subject: str, deadline: float) -> None:
        self.sock = socket.create_connection(("127.0.0.1", node.port), timeout=max(deadline - time.monotonic(), 0.1))
        self.buffer = b""
        self.heard: set[str] = set()
        self.pongs = 0
        self.sock.sendall(
            b'CONNECT {"verbose":false,"pedantic":false,"protocol":1}\r\n'
            + f"SUB {subject}.* 1\r\n".encode()
            + b"PING\r\n"
        )
        while not self.pongs and time.monotonic() < deadline:  # subscribed
            self.receive()

    def publish(self, subject: str) -> None:
        self.sock.sendall(f"PUB {subject} 0\r\n\r\n".encode())

    def receive(self) -> None:
        """Read what is there (waiting briefly) and note the senders of probe messages."""
        readable, _, _ = select.select([self.sock], [], [], PROBE_INTERVAL)
        if not readable:
            return
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("a node closed a probe connection")
        self.buffer += chunk
        self._parse()

    def _parse(self) -> None:
        while b"\r\n" in self.buffer:
            line, rest = self.buffer.split(b"\r\n", 1)
            if line.startswith(b"MSG "):
                parts = line.split()
                size = int(parts[-1])
                if len(rest) < size + 2:
                    return  # the payload has not all arrived
                self.heard.add(parts[1].decode().rsplit(".", 1)[1])
                rest = rest[size + 2 :]
            elif line == b"PING":
                self.sock.sendall(b"PONG\r\n")
            elif line == b"PONG":
                self.pongs += 1
            self.buffer = rest

    def close(self) -> None:
        self.sock.close()


def wait_connected(nodes: Sequence[ClusterNode], timeout: float = READY_TIMEOUT) -> None:
    """Return once a message published through each node has reached a subscriber on each node.

    Interest crosses routes asynchronously, so every round publishes again
    from every node until every subscriber has heard from all of them.
    """
    deadline = time.monotonic() + timeout
    subject = f"_CLUSTER_READY.{secrets.token_hex(6)}"
    probes = [_Probe(node, subject, deadline) for node in nodes]
    try:
        everyone = {str(index) for index in range(len(nodes))}
        while not all(probe.heard >= everyone for probe in probes):
            if time.monotonic() > deadline:
                missing = {nodes[i].name: sorted(everyone - probe.heard) for i, probe in enumerate(probes)}
                raise TimeoutError(f"cluster not connected after {timeout}s; not heard from: {missing}")
            for index, probe in enumerate(probes):
                probe.publish(f"{subject}.{index}")
            for probe in probes:
                probe.receive()
    finally:
        for probe in probes:
            probe.close()


def start_cluster(kinds: Sequence[str], *, extra: Sequence[str] = (), monitor: bool = False) -> Cluster:
    """Start and return a ready :class:`Cluster` of nodes of these kinds (``"real"``/``"fake"``)."""
    return Cluster(kinds, extra=extra, monitor=monitor).start()


# -- clients of a cluster -----------------------------------------------------------------------


async def interest_routed(publisher: Client, *subscribers: Client, timeout: float = 5.0) -> None:
    """Return once the subscriptions each subscriber connection made so far are known where ``publisher`` is.

    Interest crosses a route asynchronously but in order: a canary
    subscription made after the others on the same connection arrives after
    them, so once the publisher's messages reach every canary, they reach
    the subscriptions before it too.
    """
    subject = f"_CANARY.{secrets.token_hex(6)}"
    canaries = [await nc.subscribe(subject) for nc in subscribers]
    for nc in subscribers:
        await nc.flush()
        await nc.flush()  # nats-py's flush can overtake a SUB still queued; the second one cannot
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    waiting = list(canaries)
    while waiting:
        assert loop.time() < deadline, "interest did not cross the routes in time"
        await publisher.publish(subject, b"")
        await publisher.flush()
        await asyncio.sleep(PROBE_INTERVAL)
        waiting = [canary for canary in waiting if not canary.pending_msgs]
    for canary in canaries:
        await canary.unsubscribe()


class Inbox:
    """The payloads a subscription received, in order."""

    def __init__(self) -> None:
        self.payloads: list[bytes] = []

    async def add(self, msg: Msg) -> None:
        self.payloads.append(msg.data)


async def group_gets_each_once(publisher: Client, subject: str, members: Sequence[Inbox], count: int = 300) -> None:
    """Publish ``count`` numbered messages; the queue group's members must get each exactly once between them."""
    for n in range(count):
        await publisher.publish(subject, str(n).encode())
    await publisher.flush()
    await eventually(
        lambda: asyncio.sleep(0, sum(len(inbox.payloads) for inbox in members)),
        lambda total: total >= count,
        what="every message delivered to the group",
    )
    await asyncio.sleep(0.05)  # a duplicate would arrive right behind
    assert sorted(int(payload) for inbox in members for payload in inbox.payloads) == list(range(count))
