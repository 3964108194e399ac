"""Which servers hold a replicated stream or consumer, changed in a JetStream replicated across four routed
servers: ``STREAM.PEER.REMOVE``, ``CONSUMER.PEER.REMOVE`` and an update's new ``num_replicas`` change the
Raft membership of the groups (a new server catches up from the leader, a removed one drops its replica and
its directory), the messages and the consumers' acknowledgements kept; ``PEER.EVACUATE`` moves an R1 asset
with what it holds."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import pytest

from fakejs.jetstream.replication import peer_id
from fakejs.server.local_cluster import Cluster
from tests.harness.replicated import (
    all_joined,
    consumer_replica,
    group_dir,
    meta_leader,
    publish,
    replicated_cluster,
    request,
    share,
    stream_config,
    wait,
)

pytestmark = pytest.mark.cluster

NODES = ("n1", "n2", "n3", "n4")


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with replicated_cluster(4, store=tmp_path) as started:
        await wait(lambda: meta_leader(started) is not None and all_joined(started))
        yield started
        assert started.errors == []


def stream_replica(cluster: Cluster, node: str, stream: str) -> Any:
    return share(cluster, node).replicas.replicas.get(stream)


def holders(cluster: Cluster, stream: str, consumer: str = "") -> set[str]:
    """The servers running a replica of the stream (or of its consumer)."""
    found = (
        (consumer_replica(cluster, node, stream, consumer) if consumer else stream_replica(cluster, node, stream))
        for node in NODES
    )
    return {node for node, replica in zip(NODES, found, strict=True) if replica is not None}


def led_members(cluster: Cluster, stream: str, consumer: str = "") -> set[str] | None:
    """The Raft members of the group as its leader sees them, by server name (None: nobody leads)."""
    for node in NODES:
        replica = (
            consumer_replica(cluster, node, stream, consumer) if consumer else stream_replica(cluster, node, stream)
        )
        if replica is not None and replica.is_leader:
            names = {peer_id(name): name for name in NODES}
            return {names[peer] for peer in replica.group.members}
    return None


def settled(cluster: Cluster, stream: str, servers: set[str], consumer: str = "") -> bool:
    """The group runs on exactly ``servers``: replicas there and nowhere else, its leader's membership the same."""
    return holders(cluster, stream, consumer) == servers and led_members(cluster, stream, consumer) == servers


def stored(cluster: Cluster, node: str, stream: str) -> int:
    replica = stream_replica(cluster, node, stream)
    return -1 if replica is None else int(replica.stream.store.msgs)


def acked(cluster: Cluster, node: str, stream: str, name: str) -> int:
    replica = consumer_replica(cluster, node, stream, name)
    return -1 if replica is None else int(replica.machine.state.ack_floor[1])


async def durable(nc: Any, stream: str, name: str, replicas: int = 0) -> None:
    config = {"durable_name": name, "ack_policy": "explicit", "num_replicas": replicas}
    await request(nc, f"$JS.API.CONSUMER.CREATE.{stream}.{name}", {"stream_name": stream, "config": config})


async def fetch_and_ack(nc: Any, stream: str, name: str, count: int) -> None:
    subscription = await nc.jetstream().pull_subscribe_bind(name, stream=stream)
    for message in await subscription.fetch(count, timeout=5):
        await message.ack_sync()


async def test_a_removed_stream_peer_is_replaced_and_its_consumers_follow(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.url(0))
    try:
        await request(nc, "$JS.API.STREAM.CREATE.S", stream_config("S", 3))
        await durable(nc, "S", "D")
        for index in range(5):
            await publish(nc, "s.x", b"m%d" % index)
        await fetch_and_ack(nc, "S", "D", 2)
        before = await wait(lambda: holders(cluster, "S") if len(holders(cluster, "S")) == 3 else None)
        leader = (await request(nc, "$JS.API.STREAM.INFO.S"))["cluster"]["leader"]
        removed = leader  # the leader itself: it hands over before it goes
        answer = await request(nc, "$JS.API.STREAM.PEER.REMOVE.S", {"peer": removed})
        assert answer == {"type": "io.nats.jetstream.api.v1.stream_remove_peer_response", "success": True}
        (added,) = set(NODES) - before
        after = before - {removed} | {added}
        await wait(lambda: settled(cluster, "S", after) and stored(cluster, added, "S") == 5)
        await wait(lambda: settled(cluster, "S", after, "D") and acked(cluster, added, "S", "D") == 2)
        store = Path(cluster.server(removed).options.store_dir).parent
        group = stream_replica(cluster, added, "S").assignment.group.name
        await wait(lambda: not group_dir(store, removed, group).exists())
        await fetch_and_ack(nc, "S", "D", 3)
        info = await request(nc, "$JS.API.CONSUMER.INFO.S.D")
        assert info["num_pending"] == 0 and info["ack_floor"]["stream_seq"] == 5
    finally:
        await nc.close()


async def test_a_stream_scaled_up_and_down_keeps_its_messages_and_consumers(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.url(0))
    try:
        config = stream_config("S", 1)
        await request(nc, "$JS.API.STREAM.CREATE.S", config)
        await durable(nc, "S", "D")
        for index in range(4):
            await publish(nc, "s.x", b"m%d" % index)
        await fetch_and_ack(nc, "S", "D", 1)
        (first,) = holders(cluster, "S")
        up = await request(nc, "$JS.API.STREAM.UPDATE.S", {**config, "num_replicas": 3})
        assert up["config"]["num_replicas"] == 3
        three = await wait(lambda: holders(cluster, "S") if len(holders(cluster, "S")) == 3 else None)
        assert first in three
        await wait(lambda: settled(cluster, "S", three) and all(stored(cluster, n, "S") == 4 for n in three))
        await wait(lambda: settled(cluster, "S", three, "D") and all(acked(cluster, n, "S", "D") == 1 for n in three))
        five = await request(nc, "$JS.API.STREAM.UPDATE.S", {**config, "num_replicas": 5})
        assert five["error"] == {"code": 400, "err_code": 10005, "description": "no suitable peers for placement"}
        leader = (await request(nc, "$JS.API.STREAM.INFO.S"))["cluster"]["leader"]
        down = await request(nc, "$JS.API.STREAM.UPDATE.S", {**config, "num_replicas": 1})
        assert down["config"]["num_replicas"] == 1 and down["cluster"]["leader"] == leader
        await wait(lambda: settled(cluster, "S", {leader}) and settled(cluster, "S", {leader}, "D"))
        await publish(nc, "s.x", b"m4")
        await fetch_and_ack(nc, "S", "D", 4)
        info = await request(nc, "$JS.API.CONSUMER.INFO.S.D")
        assert info["ack_floor"]["stream_seq"] == 5 and info["cluster"] == {"name": cluster.name, "leader": leader}
    finally:
        await nc.close()


async def test_a_removed_consumer_peer_moves_to_another_server_of_its_stream(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.url(0))
    try:
        await request(nc, "$JS.API.STREAM.CREATE.S", stream_config("S", 3))
        await durable(nc, "S", "ONE", replicas=1)
        await durable(nc, "S", "D")
        (holder,) = await wait(lambda: holders(cluster, "S", "ONE") or None)
        kind = "io.nats.jetstream.api.v1.consumer_remove_peer_response"
        answer = await request(nc, "$JS.API.CONSUMER.PEER.REMOVE.S.ONE", {"peer": holder})
        assert answer == {"type": kind, "success": True}
        streams = holders(cluster, "S")
        (moved,) = await wait(lambda: (h := holders(cluster, "S", "ONE")) and holder not in h and h)
        assert moved in streams
        refused = await request(nc, "$JS.API.CONSUMER.PEER.REMOVE.S.D", {"peer": sorted(streams)[0]})
        assert refused["error"] == {"code": 503, "err_code": 10075, "description": "peer remap failed"}
    finally:
        await nc.close()


async def test_an_evacuated_r1_stream_and_r1_consumer_keep_what_they_hold(cluster: Cluster) -> None:
    """Unlike a removal, an evacuation moves an R1 stream with its messages, an R1 consumer with its acks."""
    nc = await nats.connect(cluster.url(0))
    try:
        await request(nc, "$JS.API.STREAM.CREATE.SOLO", stream_config("SOLO", 1))
        for index in range(3):
            await publish(nc, "solo.x", b"m%d" % index)
        (holder,) = await wait(lambda: holders(cluster, "SOLO") or None)
        answer = await request(nc, "$JS.API.STREAM.PEER.EVACUATE.SOLO", {"peer": holder})
        assert answer == {"type": "io.nats.jetstream.api.v1.stream_evacuate_peer_response", "success": True}
        (moved,) = await wait(lambda: (h := holders(cluster, "SOLO")) and holder not in h and len(h) == 1 and h)
        await wait(lambda: settled(cluster, "SOLO", {moved}))
        assert stored(cluster, moved, "SOLO") == 3

        await request(nc, "$JS.API.STREAM.CREATE.S", stream_config("S", 3))
        for index in range(3):
            await publish(nc, "s.x", b"m%d" % index)
        await durable(nc, "S", "ONE", replicas=1)
        await fetch_and_ack(nc, "S", "ONE", 1)
        (held_by,) = await wait(lambda: holders(cluster, "S", "ONE") or None)
        answer = await request(nc, "$JS.API.CONSUMER.PEER.EVACUATE.S.ONE", {"peer": held_by})
        assert answer == {"type": "io.nats.jetstream.api.v1.consumer_evacuate_peer_response", "success": True}
        (now_on,) = await wait(lambda: (h := holders(cluster, "S", "ONE")) and held_by not in h and len(h) == 1 and h)
        await wait(lambda: settled(cluster, "S", {now_on}, "ONE"))
        assert now_on in holders(cluster, "S") and acked(cluster, now_on, "S", "ONE") == 1
    finally:
        await nc.close()


async def test_an_evacuated_r3_stream_leader_hands_over_and_its_consumer_follows(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.url(0))
    try:
        await request(nc, "$JS.API.STREAM.CREATE.TRIO", stream_config("TRIO", 3))
        await durable(nc, "TRIO", "D")
        for index in range(4):
            await publish(nc, "trio.x", b"m%d" % index)
        await fetch_and_ack(nc, "TRIO", "D", 2)
        before = await wait(lambda: holders(cluster, "TRIO") if len(holders(cluster, "TRIO")) == 3 else None)
        leader = (await request(nc, "$JS.API.STREAM.INFO.TRIO"))["cluster"]["leader"]
        answer = await request(nc, "$JS.API.STREAM.PEER.EVACUATE.TRIO", {"peer": leader})
        assert answer == {"type": "io.nats.jetstream.api.v1.stream_evacuate_peer_response", "success": True}
        (added,) = set(NODES) - before
        after = before - {leader} | {added}
        await wait(lambda: settled(cluster, "TRIO", after) and stored(cluster, added, "TRIO") == 4)
        await wait(lambda: settled(cluster, "TRIO", after, "D") and acked(cluster, added, "TRIO", "D") == 2)
    finally:
        await nc.close()


async def test_a_stream_scaled_down_and_at_once_up_again_settles_on_three_servers(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.url(0))
    try:
        config = stream_config("S", 3)
        await request(nc, "$JS.API.STREAM.CREATE.S", config)
        await durable(nc, "S", "D")
        for index in range(3):
            await publish(nc, "s.x", b"m%d" % index)
        await fetch_and_ack(nc, "S", "D", 2)
        down = await request(nc, "$JS.API.STREAM.UPDATE.S", {**config, "num_replicas": 1})
        up = await request(nc, "$JS.API.STREAM.UPDATE.S", {**config, "num_replicas": 3})
        assert (down["config"]["num_replicas"], up["config"]["num_replicas"]) == (1, 3)
        three = await wait(lambda: holders(cluster, "S") if len(holders(cluster, "S")) == 3 else None)
        await wait(lambda: settled(cluster, "S", three) and all(stored(cluster, n, "S") == 3 for n in three))
        await wait(lambda: settled(cluster, "S", three, "D") and all(acked(cluster, n, "S", "D") == 2 for n in three))
        await wait(lambda: not any(share(cluster, node).replicas.retiring for node in NODES))
        await fetch_and_ack(nc, "S", "D", 1)
        info = await request(nc, "$JS.API.CONSUMER.INFO.S.D")
        assert info["ack_floor"]["stream_seq"] == 3 and info["num_pending"] == 0
    finally:
        await nc.close()


async def test_a_consumer_led_on_a_leaving_server_hands_over_when_its_stream_is_scaled_down(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.url(0))
    try:
        config = stream_config("S", 3)
        await request(nc, "$JS.API.STREAM.CREATE.S", config)
        await durable(nc, "S", "D")
        for index in range(3):
            await publish(nc, "s.x", b"m%d" % index)
        await fetch_and_ack(nc, "S", "D", 2)
        stream = await request(nc, "$JS.API.STREAM.INFO.S")
        leader = stream["cluster"]["leader"]
        other = sorted(holders(cluster, "S") - {leader})[0]
        await wait(lambda: led_members(cluster, "S", "D") is not None)
        if not consumer_replica(cluster, other, "S", "D").is_leader:
            moved = await request(nc, "$JS.API.CONSUMER.LEADER.STEPDOWN.S.D", {"placement": {"preferred": other}})
            assert moved.get("success") is True, moved
        await wait(lambda: consumer_replica(cluster, other, "S", "D").is_leader)
        down = await request(nc, "$JS.API.STREAM.UPDATE.S", {**config, "num_replicas": 1})
        assert down["config"]["num_replicas"] == 1
        await wait(lambda: settled(cluster, "S", {leader}) and settled(cluster, "S", {leader}, "D"))
        assert acked(cluster, leader, "S", "D") == 2
        await wait(lambda: not any(share(cluster, node).consumers.retiring for node in NODES))
        assert [message for message in await pulled(nc, 1)] == [b"m2"]
    finally:
        await nc.close()


async def pulled(nc: Any, count: int) -> list[bytes]:
    subscription = await nc.jetstream().pull_subscribe_bind("D", stream="S")
    return [message.data for message in await subscription.fetch(count, timeout=5)]
