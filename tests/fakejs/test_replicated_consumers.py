"""Consumers of a JetStream replicated across three routed servers, each on its own store: every server in a
consumer's group runs its replica, its leader delivers, and nats-py's requests, pulls and acks reach it from any node.

A durable pull consumer is created through one node, fetched from and acknowledged through every node and
described from every node with nats-server's ``cluster`` sections; a killed consumer leader's successor
redelivers what was not acknowledged, not what was; a work-queue stream's acknowledged messages leave every
replica; ephemeral consumers are placed and removed; and what is not built is refused by name."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.js.api import AckPolicy, ConsumerConfig

from fakejs.server.local_cluster import Cluster
from tests.harness.replicated import (
    SUPPORTED,
    all_joined,
    consumer_replica,
    meta_leader,
    publish,
    replicated_cluster,
    request,
    share,
    stream_config,
    wait,
)

pytestmark = pytest.mark.cluster

NODES = ("n1", "n2", "n3")


def consumer_leader(cluster: Cluster, stream: str, consumer: str) -> str | None:
    for server in cluster.running:
        replica = consumer_replica(cluster, server.broker.name, stream, consumer)
        if replica is not None and replica.is_leader:
            return str(server.broker.name)
    return None


def held(cluster: Cluster, name: str, stream: str) -> list[int]:
    replica = share(cluster, name).replicas.replicas.get(stream)
    return [] if replica is None else [msg.seq for msg in replica.stream.store]


def durable(name: str, **fields: Any) -> dict[str, Any]:
    return {"stream_name": "S", "config": {"durable_name": name, "ack_policy": "explicit", **fields}}


async def fetch(nc: nats.NATS, consumer: str, batch: int) -> list[Any]:
    """A pull of ``batch`` messages (asked again while the consumer's leader is being elected)."""
    subscription = await nc.jetstream().pull_subscribe_bind(consumer, stream="S")
    try:
        for _ in range(10):
            try:
                return list(await subscription.fetch(batch, timeout=2))
            except nats.errors.TimeoutError:
                continue
        raise TimeoutError(f"nothing delivered from {consumer}")
    finally:
        await subscription.unsubscribe()


async def test_a_durable_pull_consumer_is_served_through_every_node(cluster: Cluster) -> None:
    clients = [await nats.connect(url) for url in cluster.urls]
    try:
        await request(clients[0], "$JS.API.STREAM.CREATE.S", stream_config("S", 3))
        created = await request(clients[1], "$JS.API.CONSUMER.DURABLE.CREATE.S.D", durable("D"))
        assert created["type"] == "io.nats.jetstream.api.v1.consumer_create_response"
        assert created["name"] == "D" and created["config"]["durable_name"] == "D"
        assert list(created["cluster"]) == [
            "name", "raft_group", "leader", "leader_since", "system_account", "traffic_account", "replicas"
        ]  # fmt: skip
        assert created["cluster"]["raft_group"].startswith("C-R3F-")
        again = await request(clients[2], "$JS.API.CONSUMER.CREATE.S.D", durable("D"))
        assert again["config"] == created["config"] and again["created"] == created["created"]
        other = durable("D", ack_wait=5_000_000_000)
        assert (await request(clients[0], "$JS.API.CONSUMER.CREATE.S.D", {**other, "action": "create"}))["error"][
            "err_code"
        ] == 10148
        for index in range(6):
            await publish(clients[index % 3], "s.a", b"m%d" % index)

        got = []
        for nc in clients:  # pulls and acks reach the consumer's leader from every node
            for msg in await fetch(nc, "D", 2):
                await msg.ack_sync()
                got.append(msg.data)
        assert got == [b"m%d" % index for index in range(6)]
        for nc in clients:
            info = await request(nc, "$JS.API.CONSUMER.INFO.S.D")
            assert info["num_ack_pending"] == 0 and info["ack_floor"]["stream_seq"] == 6
            assert info["cluster"]["leader"] == consumer_leader(cluster, "S", "D")
            replicas = info["cluster"]["replicas"]
            assert sorted(replica["name"] for replica in replicas) == sorted(set(NODES) - {info["cluster"]["leader"]})
        await wait(
            lambda: all(consumer_replica(cluster, name, "S", "D").machine.state.ack_floor[1] == 6 for name in NODES)
        )

        names = await request(clients[2], "$JS.API.CONSUMER.NAMES.S")
        assert names["consumers"] == ["D"] and names["total"] == 1
        listing = await request(clients[0], "$JS.API.CONSUMER.LIST.S")
        assert [info["name"] for info in listing["consumers"]] == ["D"] and "missing" not in listing
        assert (await request(clients[1], "$JS.API.CONSUMER.INFO.S.NOPE"))["error"]["err_code"] == 10014
        assert (await request(clients[1], "$JS.API.CONSUMER.INFO.NOPE.D"))["error"]["err_code"] == 10059
        deleted = await request(clients[2], "$JS.API.CONSUMER.DELETE.S.D")
        assert deleted == {"type": "io.nats.jetstream.api.v1.consumer_delete_response", "success": True}
        await wait(lambda: all(consumer_replica(cluster, name, "S", "D") is None for name in NODES))
        assert (await request(clients[2], "$JS.API.CONSUMER.DELETE.S.D"))["error"]["err_code"] == 10014
    finally:
        for nc in clients:
            await nc.close()


async def test_a_killed_consumer_leader_s_successor_redelivers_only_the_unacknowledged(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.url(0))
    try:
        await request(nc, "$JS.API.STREAM.CREATE.S", stream_config("S", 3))
        await request(nc, "$JS.API.CONSUMER.DURABLE.CREATE.S.D", durable("D", ack_wait=1_000_000_000))
        for index in range(4):
            await publish(nc, "s.a", b"m%d" % index)
        first = await fetch(nc, "D", 4)
        assert [msg.data for msg in first] == [b"m0", b"m1", b"m2", b"m3"]
        await first[0].ack_sync()
        await first[2].ack_sync()
        await wait(
            lambda: all(consumer_replica(cluster, name, "S", "D").machine.state.ack_floor[1] == 1 for name in NODES)
        )
        leader = consumer_leader(cluster, "S", "D")
        assert leader is not None
        await cluster.kill(leader)
        # while no survivor leads, a pull finds no responders (as on nats-server): wait for the election
        await wait(lambda: consumer_leader(cluster, "S", "D") not in (None, leader))
        survivor = await nats.connect(next(server.url for server in cluster.running))
        try:
            again = await fetch(survivor, "D", 4)
            while len(again) < 2:  # each redelivery is due at its own ack deadline: a fetch may end between them
                again += await fetch(survivor, "D", 4)
            assert [msg.data for msg in again] == [b"m1", b"m3"]
            assert [msg.metadata.num_delivered for msg in again] == [2, 2]
            await asyncio.gather(*(msg.ack_sync() for msg in again))
            info = await request(survivor, "$JS.API.CONSUMER.INFO.S.D")
            assert info["num_ack_pending"] == 0 and info["cluster"]["leader"] != leader
        finally:
            await survivor.close()
    finally:
        await nc.close()


async def test_a_work_queue_stream_removes_acknowledged_messages_on_every_replica(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.url(1))
    try:
        await request(nc, "$JS.API.STREAM.CREATE.S", {**stream_config("S", 3), "retention": "workqueue"})
        for index in range(3):
            await publish(nc, "s.a", b"m%d" % index)
        js = nc.jetstream()
        await js.add_consumer("S", ConsumerConfig(durable_name="W", ack_policy=AckPolicy.EXPLICIT))
        await wait(lambda: all(held(cluster, name, "S") == [1, 2, 3] for name in NODES))
        msgs = await fetch(nc, "W", 2)
        for msg in msgs:
            await msg.ack_sync()
        await wait(lambda: all(held(cluster, name, "S") == [3] for name in NODES))
        info = await request(nc, "$JS.API.STREAM.INFO.S")
        assert info["state"]["messages"] == 1 and info["state"]["first_seq"] == 3
    finally:
        await nc.close()


async def test_ephemeral_consumers_are_placed_and_go_when_inactive(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.url(2))
    try:
        await request(nc, "$JS.API.STREAM.CREATE.S", stream_config("S", 3))
        await publish(nc, "s.a", b"x")
        body = {"stream_name": "S", "config": {"ack_policy": "explicit", "inactive_threshold": 500_000_000}}
        created = await request(nc, "$JS.API.CONSUMER.CREATE.S", body)
        name = created["name"]
        assert len(name) == 8 and created["config"]["inactive_threshold"] == 500_000_000
        assert set(created["cluster"]) == {"name", "leader"}  # one replica on a limits stream
        held_by = [server for server in NODES if consumer_replica(cluster, server, "S", name) is not None]
        assert held_by == [created["cluster"]["leader"]]
        msgs = await fetch(nc, name, 1)
        assert [msg.data for msg in msgs] == [b"x"]
        await msgs[0].ack_sync()  # nothing left to acknowledge: it goes once inactive
        await wait(lambda: all(consumer_replica(cluster, server, "S", name) is None for server in NODES))
        assert (await request(nc, "$JS.API.CONSUMER.NAMES.S"))["consumers"] == []
    finally:
        await nc.close()


async def test_consumer_requests_not_built_are_refused_by_name(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.url(0))
    try:
        await request(nc, "$JS.API.STREAM.CREATE.S", stream_config("S", 3))
        await request(nc, "$JS.API.CONSUMER.DURABLE.CREATE.S.D", durable("D"))
        await request(nc, "$JS.API.STREAM.CREATE.W", {**stream_config("W", 3), "retention": "workqueue"})
        sourcing = {
            "stream_name": "W",
            "config": {"name": "M", "direct": True, "sourcing": True, "deliver_subject": "m.in"},
        }
        refused = await request(nc, "$JS.API.CONSUMER.CREATE.W.M", sourcing)
        assert refused["error"]["description"] == (
            f"a mirror's or source's consumer of a work-queue or interest stream in a JetStream cluster across"
            f" servers: {SUPPORTED}"
        )
    finally:
        await nc.close()


async def test_an_interest_stream_removes_what_every_consumer_acknowledged(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.url(0))
    try:
        await request(nc, "$JS.API.STREAM.CREATE.S", {**stream_config("S", 3), "retention": "interest"})
        await request(nc, "$JS.API.CONSUMER.DURABLE.CREATE.S.A", durable("A"))
        await request(nc, "$JS.API.CONSUMER.DURABLE.CREATE.S.B", durable("B"))
        for index in range(2):
            await publish(nc, "s.a", b"m%d" % index)
        await wait(lambda: all(held(cluster, name, "S") == [1, 2] for name in NODES))
        for msg in await fetch(nc, "A", 2):
            await msg.ack_sync()
        assert all(held(cluster, name, "S") == [1, 2] for name in NODES)  # B still needs them
        (first, _) = await fetch(nc, "B", 2)
        await first.ack_sync()
        await wait(lambda: all(held(cluster, name, "S") == [2] for name in NODES))
        await publish(nc, "s.a", b"m2")
        assert (await request(nc, "$JS.API.CONSUMER.DELETE.S.A"))["success"] is True
        await wait(lambda: all(held(cluster, name, "S") == [2, 3] for name in NODES))  # B still needs them
        assert (await request(nc, "$JS.API.CONSUMER.DELETE.S.B"))["success"] is True
        await wait(lambda: all(held(cluster, name, "S") == [] for name in NODES))  # nobody left: all of it goes
    finally:
        await nc.close()


async def test_a_key_value_bucket_replicated_on_three_servers(cluster: Cluster) -> None:
    clients = [await nats.connect(url) for url in cluster.urls]
    try:
        kv = await clients[0].jetstream().create_key_value(bucket="B", replicas=3)
        watcher = await (await clients[2].jetstream().key_value("B")).watchall()
        assert await watcher.updates(timeout=5) is None  # nothing stored yet
        for index, nc in enumerate(clients):
            await (await nc.jetstream().key_value("B")).put("k", b"v%d" % index)
        for nc in clients:
            entry = await (await nc.jetstream().key_value("B")).get("k")
            assert entry.value == b"v2" and entry.revision == 3
        seen = [await watcher.updates(timeout=5) for _ in range(3)]
        assert [(entry.key, entry.value) for entry in seen] == [("k", b"v0"), ("k", b"v1"), ("k", b"v2")]
        await watcher.stop()
        assert (await kv.status()).values == 1
    finally:
        for nc in clients:
            await nc.close()


async def test_a_push_consumer_delivers_to_a_subscriber_on_another_node(cluster: Cluster) -> None:
    clients = [await nats.connect(url) for url in cluster.urls]
    try:
        await request(clients[0], "$JS.API.STREAM.CREATE.S", stream_config("S", 3))
        subscription = await clients[2].subscribe("deliver.here")
        await clients[2].flush()
        push = durable("P", deliver_subject="deliver.here")
        created = await request(clients[1], "$JS.API.CONSUMER.DURABLE.CREATE.S.P", push)
        assert created["config"]["deliver_subject"] == "deliver.here"
        await publish(clients[0], "s.a", b"pushed")
        msg = await subscription.next_msg(timeout=5)
        assert msg.data == b"pushed" and msg.reply.startswith("$JS.ACK.S.P.")
        assert (await clients[1].request(msg.reply, b"+ACK", timeout=5)).data == b""
        await wait(
            lambda: all(consumer_replica(cluster, name, "S", "P").machine.state.ack_floor[1] == 1 for name in NODES)
        )
    finally:
        for nc in clients:
            await nc.close()


async def test_a_deleted_stream_takes_its_consumers_and_their_directories(tmp_path: Path) -> None:
    async with replicated_cluster(3, store=tmp_path) as cluster:
        await wait(lambda: meta_leader(cluster) is not None and all_joined(cluster))
        nc = await nats.connect(cluster.url(0))
        try:
            await request(nc, "$JS.API.STREAM.CREATE.S", {**stream_config("S", 3), "storage": "file"})
            created = await request(nc, "$JS.API.CONSUMER.DURABLE.CREATE.S.D", durable("D"))
            group = created["cluster"]["raft_group"]
            directories = [path for path in tmp_path.glob(f"*/fakejs/*/_js_/{group}") if path.is_dir()]
            assert len(directories) == 3
            assert (await request(nc, "$JS.API.STREAM.DELETE.S"))["success"] is True
            await wait(lambda: all(consumer_replica(cluster, name, "S", "D") is None for name in NODES))
            await wait(lambda: not any(path.exists() for path in directories))
        finally:
            await nc.close()
        assert cluster.errors == []


async def test_a_restarted_consumer_replica_catches_up_from_its_store(tmp_path: Path) -> None:
    async with replicated_cluster(3, store=tmp_path) as cluster:
        await wait(lambda: meta_leader(cluster) is not None and all_joined(cluster))
        nc = await nats.connect(cluster.url(0))
        try:
            await request(nc, "$JS.API.STREAM.CREATE.S", {**stream_config("S", 3), "storage": "file"})
            await request(nc, "$JS.API.CONSUMER.DURABLE.CREATE.S.D", durable("D"))
            for index in range(4):
                await publish(nc, "s.a", b"m%d" % index)
            leader = consumer_leader(cluster, "S", "D")
            follower = next(name for name in ("n2", "n3") if name != leader)
            await cluster.kill(follower)
            for msg in await fetch(nc, "D", 3):
                await msg.ack_sync()
            await cluster.restart(follower)

            def caught_up() -> bool:
                replica = consumer_replica(cluster, follower, "S", "D")
                return replica is not None and replica.machine.state.ack_floor[1] == 3

            await wait(caught_up)
            assert [msg.data for msg in await fetch(nc, "D", 3)] == [b"m3"]
        finally:
            await nc.close()
        assert cluster.errors == []
