"""A cluster of fakejs servers in one process, failing on cue: kill, restart, partition, heal."""

from __future__ import annotations

import asyncio

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs import Cluster, ManualClock
from fakejs.core.configfile.load import options_from_config

pytestmark = pytest.mark.cluster


class Received:
    def __init__(self) -> None:
        self.payloads: list[bytes] = []

    async def add(self, msg: Msg) -> None:
        self.payloads.append(msg.data)


async def _delivered(publisher: Client, subject: str, inbox: Received, timeout: float = 3.0) -> bool:
    """Publish until ``inbox`` gets a message (interest crosses routes asynchronously), or give up."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    before = len(inbox.payloads)
    while loop.time() < deadline:
        await publisher.publish(subject, b"ping")
        await publisher.flush()
        await asyncio.sleep(0.02)
        if len(inbox.payloads) > before:
            return True
    return False


async def test_three_nodes_start_meshed_with_every_url() -> None:
    async with Cluster(size=3, seed=7) as cluster:
        assert cluster.meshed()
        assert len(set(cluster.urls)) == 3
        assert [server.broker.name for server in cluster.servers] == ["n1", "n2", "n3"]
        nc = await nats.connect(cluster.url("n1"))
        try:
            assert {f"nats://{srv.netloc}" for srv in nc.discovered_servers} == set(cluster.urls[1:])
        finally:
            await nc.close()
        assert cluster.errors == []


async def test_a_killed_node_loses_its_clients_to_the_others_and_comes_back() -> None:
    async with Cluster(size=3) as cluster:
        reconnected = asyncio.Event()

        async def on_reconnect() -> None:
            reconnected.set()

        moving = await nats.connect(cluster.url("n2"), reconnected_cb=on_reconnect, reconnect_time_wait=0.05)
        listener = await nats.connect(cluster.url("n1"))
        inbox = Received()
        try:
            await moving.subscribe("alerts", cb=inbox.add)
            assert await _delivered(listener, "alerts", inbox)
            await cluster.kill("n2")
            assert not cluster.server("n1").broker.cluster.peers.get(cluster.server("n2").broker.server_id)
            await asyncio.wait_for(reconnected.wait(), 5)
            assert moving.connected_url is not None and moving.connected_url.port != cluster.server("n2").port
            assert await _delivered(listener, "alerts", inbox)  # its subscription moved with it
            await cluster.restart("n2")
            assert cluster.meshed()
        finally:
            await moving.close()
            await listener.close()


async def test_a_partition_cuts_the_traffic_and_healing_restores_it() -> None:
    async with Cluster(size=3) as cluster:
        lonely = await nats.connect(cluster.url("n1"), allow_reconnect=False)
        crowd = await nats.connect(cluster.url("n3"), allow_reconnect=False)
        inbox = Received()
        try:
            await lonely.subscribe("news", cb=inbox.add)
            assert await _delivered(crowd, "news", inbox)
            await cluster.partition(["n1"], ["n2", "n3"])
            assert "n1" not in {peer.name for peer in cluster.server("n3").broker.cluster.peers.values()}
            assert not await _delivered(crowd, "news", inbox, timeout=0.3)
            await asyncio.sleep(1.2)  # the configured routes are dialled again, and refused
            assert cluster.meshed() and not await _delivered(crowd, "news", inbox, timeout=0.3)
            await cluster.heal()
            assert await _delivered(crowd, "news", inbox)
        finally:
            await lonely.close()
            await crowd.close()
        assert cluster.errors == []


async def test_on_a_manual_clock_healing_needs_no_time_to_pass() -> None:
    clock = ManualClock()
    async with Cluster(size=3, clock=clock) as cluster:
        await cluster.partition(["n2"])  # n2 alone, n1 and n3 together
        assert {peer.name for peer in cluster.server("n1").broker.cluster.peers.values()} == {"n3"}
        await cluster.heal()  # no reconnect timer had to fire: the clock never moved
        assert cluster.meshed() and clock.monotonic() == 0.0


async def test_nodes_are_named_or_numbered() -> None:
    cluster = Cluster(size=2)
    assert cluster.index("n2") == 1 and cluster.index(0) == 0
    with pytest.raises(KeyError):
        cluster.index("n9")
    with pytest.raises(IndexError):
        cluster.index(5)
    with pytest.raises(ValueError):
        Cluster(size=0)


def test_replicated_true_changes_nothing_and_replicated_false_is_refused_by_name() -> None:
    """A cluster's JetStream is replicated across its nodes; ``replicated=False`` asked for the shared JetStream
    of earlier versions, which was removed.  Every account with JetStream is served."""
    one = "JS { jetstream: enabled, users: [{user: js, password: js}] }"
    two = "K { jetstream: enabled, users: [{user: k, password: k}] }"
    options = options_from_config(f"accounts {{ {one}\n{two} }}")
    with pytest.raises(ValueError, match=r"^replicated=False: the shared JetStream was removed; "):
        Cluster(size=3, jetstream=True, replicated=False, accounts=options.accounts)
    kept = Cluster(size=3, jetstream=True, replicated=True, accounts=options.accounts)
    assert all(server.options.jetstream_replicated is not None for server in kept.servers)
    assert Cluster(size=3, accounts=options.accounts).size == 3  # without JetStream: served
