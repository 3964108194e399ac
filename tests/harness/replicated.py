"""Replicated groups on routed in-process servers: short Raft timings, and waiting for what they agree on.

The groups run on the real clock with elections within a second and a lost
quorum noticed after one; :func:`wait` polls a plain condition (a leader
known, an entry applied everywhere) until it holds.  A JetStream replicated
across the servers is asked what its nodes agree on (:func:`meta_leader`,
:func:`all_joined`, :func:`formed`) and sent ``$JS.API`` requests that are
asked again while nobody leads what they are about (:func:`request`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nats
from nats.aio.client import Client

from fakejs.jetstream.raft import RaftSettings
from fakejs.jetstream.replication import peer_id

if TYPE_CHECKING:
    from fakejs.server.local_cluster import Cluster

FAST = RaftSettings(
    election_timeout_min=0.3,
    election_timeout_max=0.6,
    heartbeat_interval=0.05,
    lost_quorum_interval=1.0,
    transfer_timeout=0.5,
)
WAIT = 15.0  # real seconds a condition may take before the test gives up
SUPPORTED = "not supported by fakejs yet"


async def wait(condition: Callable[[], Any], timeout: float = WAIT) -> Any:
    """Wait (real time) until ``condition()`` is truthy; returns its value."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (value := condition()):
        if loop.time() > deadline:
            raise TimeoutError(f"not met within {timeout} s: {condition}")
        await asyncio.sleep(0.005)
    return value


def replicated_cluster(size: int = 3, store: Path | None = None, **settings: Any) -> Any:
    """An in-process cluster whose nodes run JetStream replicated across them, each on its own store: a
    directory of ``store`` named after the node (kept over a restart), else one fakejs makes and removes."""
    # Imported here: the server layer loads only for the tests that start servers
    from fakejs.core.replicated_jetstream import ReplicatedJetStream
    from fakejs.server.local_cluster import Cluster

    peers = tuple(f"n{index + 1}" for index in range(size))
    cluster = Cluster(size=size, jetstream_replicated=ReplicatedJetStream(peers, FAST), **settings)
    if store is not None:
        for server in cluster.servers:
            server.options.store_dir = str(store / server.broker.name)
    return cluster


class LearningServers:
    """Servers started one at a time, each with ``cluster { name, routes }`` and a ``server_name`` as a
    configuration file gives them (routes to the servers started before it) and a JetStream replicated
    across them whose meta group's voters it learns from its routes; each keeps its store in ``store``."""

    def __init__(self, store: Path, cluster: str = "C", **settings: Any) -> None:
        self.store = store
        self.cluster = cluster
        self.settings = settings  # more of every server's options (users...)
        self.servers: dict[str, Any] = {}
        self.down: set[str] = set()

    async def start(self, name: str) -> Any:
        """Start ``name`` routed to every server started before it (a restart when it was started before)."""
        from fakejs.core.cluster_config import ClusterConfig
        from fakejs.core.options import ServerOptions
        from fakejs.core.replicated_jetstream import ReplicatedJetStream
        from fakejs.server.server import Server

        if name in self.servers:
            server = self.servers[name]
            self.down.discard(name)
            await server.start()
            return server
        routes = [f"nats-route://127.0.0.1:{server.routes.port}" for server in self.running()]
        config = ClusterConfig(name=self.cluster, host="127.0.0.1", port=0, routes=routes)
        options = ServerOptions(
            name=name,
            port=0,
            cluster=config,
            jetstream=True,
            jetstream_replicated=ReplicatedJetStream(raft=FAST),
            store_dir=str(self.store / name),
            **self.settings,
        )
        server = Server(options)
        self.servers[name] = server
        await server.start()
        return server

    async def kill(self, name: str, orderly: bool = False) -> None:
        """Crash ``name`` (stop it, ``orderly``); it keeps its ports and its store for :meth:`start`."""
        server = self.servers[name]
        server.listeners.pin_ports(server.port)
        assert server.options.cluster is not None and server.routes is not None
        server.options.cluster.port = server.routes.port
        self.down.add(name)
        await server.stop(crash=not orderly)

    async def stop(self) -> None:
        for name in list(self.servers):
            if name not in self.down:
                await self.servers[name].stop()

    def running(self) -> list[Any]:
        return [server for name, server in self.servers.items() if name not in self.down]

    def share(self, name: str) -> Any:
        js = self.servers[name].jetstream
        return None if js is None or js.replicated_api is None else js.replicated_api.domain


def share(cluster: Cluster, name: str) -> Any:
    """The replicated JetStream's share of server ``name`` (``None`` while it has none)."""
    js = cluster.server(name).jetstream
    return None if js is None or js.replicated_api is None else js.replicated_api.domain


def meta_leader(cluster: Cluster) -> str | None:
    running = [server.broker.name for server in cluster.running]
    return next((name for name in running if share(cluster, name).is_meta_leader), None)


def all_joined(cluster: Cluster) -> bool:
    """Every running server's ``AddPeer`` is applied on every running server."""
    names = {server.broker.name for server in cluster.running}
    return all({peer.name for peer in share(cluster, name).machine.state.peers.values()} >= names for name in names)


def formed(servers: LearningServers, names: list[str]) -> bool:
    """Every server of ``names`` is a voter of ``_meta_`` and in the meta state, on every one of them, and they
    agree on a leader among them."""
    peers = {peer_id(name) for name in names}
    members = [servers.share(name) for name in names]
    if any(member is None or member.group is None for member in members):
        return False
    leaders = {member.group.leader for member in members}
    return (
        len(leaders) == 1
        and leaders <= peers
        and all(member.group.voters == peers for member in members)
        and all({peer.peer for peer in member.machine.state.active_peers()} == peers for member in members)
    )


async def request(nc: Client, subject: str, body: Any = b"") -> dict[str, Any]:
    """A ``$JS.API`` request, asked again while nobody leads what it is about (no answer)."""
    payload = json.dumps(body).encode() if isinstance(body, dict) else body
    deadline = asyncio.get_running_loop().time() + WAIT
    while True:
        try:
            reply = await nc.request(subject, payload, timeout=1)
        except (nats.errors.TimeoutError, nats.errors.NoRespondersError):
            if asyncio.get_running_loop().time() > deadline:
                raise
            continue
        answer: dict[str, Any] = json.loads(reply.data)
        return answer


async def publish(nc: Client, subject: str, payload: bytes) -> dict[str, Any]:
    """A publish acknowledged by the stream (asked again while its leader is being elected, as a request)."""
    return await request(nc, subject, payload)


def stream_config(name: str, replicas: int) -> dict[str, Any]:
    return {"name": name, "subjects": [f"{name.lower()}.>"], "num_replicas": replicas}


async def wait_for_leader(nc: Client, stream: str, accept: Any) -> dict[str, Any]:
    """The stream's info once ``accept`` takes its leader."""
    deadline = asyncio.get_running_loop().time() + WAIT
    while True:
        info = await request(nc, f"$JS.API.STREAM.INFO.{stream}")
        if accept(info.get("cluster", {}).get("leader")):
            return info
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(info)


def group_dir(store: Path, node: str, group: str) -> Path:
    """Where ``node`` keeps replicated group ``group`` under ``store``."""
    return store / node / "fakejs" / "$SYS" / "_js_" / group


def consumer_replica(cluster: Cluster, node: str, stream: str, consumer: str) -> Any:
    return share(cluster, node).consumers.replicas.get((stream, consumer))
