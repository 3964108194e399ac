"""JetStream across three server processes started from flags, on both targets.

Three nodes ``n1``..``n3`` (``ProcessCluster(kind * 3, jetstream=True)``:
``-js --cluster_name --cluster --routes``, the seed routed to itself, the
others to the seed, started one by one), the same nats-py client code
against nats-server and fakejs processes.  Facts pinned (nats-server
2.15.1):

- an R3 stream's and its durable consumer's infos carry the cluster's name,
  a leader among the nodes and the two other nodes as replicas, whatever
  node is asked;
- a message published through any node is acknowledged once and fetched
  through any other node;
- a KV bucket of three replicas is put to through one node and read
  through the others; so is an Object Store bucket of three replicas (an
  object of several chunks);
- kill -9 of the stream's leader: another node leads, every acknowledged
  message is there, publishes are acknowledged again; the node started on
  its store catches up with what was published while it was down.

A nats-server routed to a fakejs node with JetStream is told apart by its
route INFO's ``go`` field; the fakejs node logs an error naming it.
"""

from __future__ import annotations

import asyncio

import nats
import pytest
from nats.aio.client import Client
from nats.js.api import ObjectStoreConfig

from fakejs.targets.cluster import ProcessCluster
from tests.harness.js_processes import FAILOVER, NODES, create_r3, leader, quietly, replicated_cluster
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON
from tests.harness.wait import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


async def test_r3_stream_consumer_and_kv_through_every_node(cluster: ProcessCluster, clients: list[Client]) -> None:
    await create_r3(clients[0], "ORDERS")
    for index, client in enumerate(clients):
        ack = await client.jetstream(timeout=10.0).publish(f"ORDERS.{index}", f"m{index}".encode())
        assert (ack.stream, ack.seq) == ("ORDERS", index + 1)
    for client in clients:
        info = await eventually(
            lambda client=client: quietly(client.jetstream(timeout=10.0).stream_info("ORDERS")),
            lambda reply: not isinstance(reply, Exception) and replicated_cluster(reply.as_dict()["cluster"]),
            what="a current R3 stream",
            timeout=30,
        )
        assert info.as_dict()["cluster"]["name"] == cluster.name and info.state.messages == 3
    await clients[1].jetstream(timeout=10.0).pull_subscribe("ORDERS.>", durable="D")
    for client in clients:
        consumer = await eventually(
            lambda client=client: quietly(client.jetstream(timeout=10.0).consumer_info("ORDERS", "D")),
            lambda reply: not isinstance(reply, Exception) and replicated_cluster(reply.as_dict()["cluster"]),
            what="a current R3 consumer",
            timeout=30,
        )
        assert consumer.num_pending == 3
    subscription = await clients[2].jetstream(timeout=10.0).pull_subscribe("ORDERS.>", durable="D")
    fetched = await subscription.fetch(3, timeout=10)
    assert [message.data for message in fetched] == [b"m0", b"m1", b"m2"]
    for message in fetched:
        await message.ack_sync()
    kv = await clients[0].jetstream(timeout=10.0).create_key_value(bucket="CONFIG", replicas=3)
    await kv.put("colour", b"blue")
    for client in clients[1:]:
        bucket = await client.jetstream(timeout=10.0).key_value("CONFIG")
        entry = await bucket.get("colour")
        assert entry.value == b"blue"
    status = await kv.status()
    assert status.bucket == "CONFIG" and status.values == 1
    assert "mixing fakejs" not in cluster.logs()  # routes between fakejs nodes are told from nats-server's


async def test_object_store_of_three_replicas_through_every_node(clients: list[Client]) -> None:
    data = bytes(range(256)) * 1200  # 300 KiB: three chunks of nats-py's 128 KiB
    store = await clients[0].jetstream(timeout=10.0).create_object_store("FILES", config=ObjectStoreConfig(replicas=3))
    await store.put("blob", data)
    for client in clients[1:]:
        bucket = await client.jetstream(timeout=10.0).object_store("FILES")
        result = await bucket.get("blob")
        assert result.data == data and result.info.chunks == 3 and result.info.size == len(data)
    info = await clients[0].jetstream(timeout=10.0).stream_info("OBJ_FILES")
    assert info.config.num_replicas == 3 and info.state.messages == 4  # three chunks and the object's metadata


async def test_kill_the_stream_leader_then_restart_it(cluster: ProcessCluster) -> None:
    client = await nats.connect(cluster.urls, max_reconnect_attempts=-1, reconnect_time_wait=0.2)
    try:
        js = client.jetstream(timeout=3.0)
        await create_r3(client, "CRASH")
        for number in range(20):
            await js.publish("CRASH.a", f"m{number}".encode())
        killed = sorted(NODES).index(await leader(client, "CRASH"))
        cluster.kill(killed)
        after = await eventually(
            # an attempt timed out during the election may still be stored: the retry is the same message
            lambda: quietly(js.publish("CRASH.b", b"after", headers={"Nats-Msg-Id": "after"})),
            lambda reply: not isinstance(reply, Exception),
            what="a publish acknowledged after the kill",
            timeout=FAILOVER,
        )
        assert after.seq == 21  # type: ignore[union-attr]
        await eventually(
            lambda: leader(client, "CRASH"),
            lambda name: name != f"n{killed + 1}",
            what="another leader",
            timeout=FAILOVER,
        )
        cluster.restart(killed)
        survivor = await nats.connect(cluster.url(killed), allow_reconnect=False)
        try:
            info = await eventually(
                lambda: quietly(client.jetstream(timeout=3.0).stream_info("CRASH")),
                lambda reply: not isinstance(reply, Exception) and replicated_cluster(reply.as_dict()["cluster"]),
                what="the restarted node current again",
                timeout=FAILOVER,
            )
            assert info.state.messages == 21  # type: ignore[union-attr]
            reader = survivor.jetstream(timeout=10.0)
            messages = [await reader.get_msg("CRASH", seq) for seq in range(1, 22)]
            assert [message.data for message in messages] == [f"m{n}".encode() for n in range(20)] + [b"after"]
        finally:
            await survivor.close()
    finally:
        await client.close()


@pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)
async def test_a_fakejs_node_names_a_nats_server_route_in_a_jetstream_cluster() -> None:
    """A nats-server routed to a fakejs node that replicates JetStream: the fakejs node refuses to go on, naming
    it in a fatal log line, and exits with status 1."""
    with ProcessCluster(["fake", "real"], jetstream=True, node_prefix="n") as cluster:
        seed = cluster.start_seed("fake")
        cluster.nodes.append(seed)
        cluster.nodes.append(cluster.node("real", 1, [cluster.seed_route]).start())
        line = "JetStream in a cluster mixing fakejs with nats-server n2 (version 2.15.1, go"
        text = await eventually(lambda: asyncio.sleep(0, seed.log_text()), lambda log: line in log, what=line)
        assert "[FTL]" in next(entry for entry in text.splitlines() if line in entry)
        assert (
            await eventually(
                lambda: asyncio.sleep(0, seed.process.poll() if seed.process else None), lambda code: code is not None
            )
            == 1
        )
