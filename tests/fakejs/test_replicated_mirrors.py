"""Mirrors and sources of streams replicated across three routed servers: run by the stream's leader, what they
receive proposed to the stream's group and stored by every replica.

A mirror keeps its origin's sequences and times (holes included) on every replica; a stream sourcing two origins
stores each message once with its ``Nats-Stream-Source`` header; a killed mirror or sourcing leader's successor
takes up from its store, losing and repeating nothing; the origin's STREAM.INFO lists its mirrors as
``alternates``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from fakejs.jetstream.stream.sources import STREAM_SOURCE
from fakejs.protocol import headers as hdrs
from fakejs.server.local_cluster import Cluster
from tests.harness.replicated import publish, request, share, wait

pytestmark = pytest.mark.cluster

NODES = ("n1", "n2", "n3")


@pytest.fixture
async def clients(cluster: Cluster) -> AsyncIterator[list[Client]]:
    connected = [await nats.connect(url) for url in cluster.urls]
    yield connected
    for nc in connected:
        await nc.close()


def stored(cluster: Cluster, node: str, stream: str) -> list[tuple[int, int, str, bytes, bytes | None]] | None:
    """What ``node``'s replica of ``stream`` holds: sequence, time, subject, payload, headers."""
    replica = share(cluster, node).replicas.replicas.get(stream)
    if replica is None:
        return None
    return [(msg.seq, msg.ts, msg.subject, msg.data, msg.hdr) for msg in replica.stream.store]


def last_seq(cluster: Cluster, node: str, stream: str) -> int:
    replica = share(cluster, node).replicas.replicas.get(stream)
    return -1 if replica is None else int(replica.stream.store.last_seq)


def leader_of(cluster: Cluster, stream: str) -> str | None:
    for server in cluster.running:
        replica = share(cluster, server.broker.name).replicas.replicas.get(stream)
        if replica is not None and replica.is_leader:
            return str(server.broker.name)
    return None


async def test_a_mirror_keeps_its_origin_s_sequences_and_times_on_every_replica(
    cluster: Cluster, clients: list[Client]
) -> None:
    await request(clients[0], "$JS.API.STREAM.CREATE.O", {"name": "O", "subjects": ["o.>"], "num_replicas": 3})
    for index in range(6):
        assert (await publish(clients[index % 3], f"o.{index}", b"m%d" % index))["seq"] == index + 1
    assert (await request(clients[1], "$JS.API.STREAM.MSG.DELETE.O", {"seq": 3}))["success"] is True
    created = await request(
        clients[1], "$JS.API.STREAM.CREATE.M", {"name": "M", "mirror": {"name": "O"}, "num_replicas": 3}
    )
    assert created["did_create"] is True and created["mirror"]["name"] == "O"
    for index in range(6, 10):  # while the mirror catches up
        await publish(clients[index % 3], f"o.{index}", b"m%d" % index)

    origin = await wait(lambda: (held := stored(cluster, NODES[0], "O")) and len(held) == 9 and held)
    await wait(lambda: all(stored(cluster, node, "M") == origin for node in NODES))
    assert [item[0] for item in origin] == [1, 2, 4, 5, 6, 7, 8, 9, 10]

    info = await request(clients[2], "$JS.API.STREAM.INFO.M")
    assert info["state"]["messages"] == 9 and info["state"]["first_seq"] == 1 and info["state"]["last_seq"] == 10
    assert info["mirror"]["name"] == "O" and info["mirror"]["lag"] == 0 and info["mirror"]["active"] >= 0
    assert "alternates" not in info
    described = await request(clients[0], "$JS.API.STREAM.INFO.O")
    assert sorted(described["alternates"], key=lambda alt: alt["name"]) == [
        {"name": "M", "cluster": "C"},
        {"name": "O", "cluster": "C"},
    ]
    assert list(described)[-2:] == ["alternates", "ts"]


async def test_a_stream_sources_two_origins_on_every_replica(cluster: Cluster, clients: list[Client]) -> None:
    await request(clients[0], "$JS.API.STREAM.CREATE.A", {"name": "A", "subjects": ["a.>"], "num_replicas": 3})
    await request(clients[1], "$JS.API.STREAM.CREATE.B", {"name": "B", "subjects": ["b.>"], "num_replicas": 1})
    for index in range(4):
        await publish(clients[index % 3], "a.x", b"a%d" % index)
        await publish(clients[(index + 1) % 3], "b.x", b"b%d" % index)
    sourcing = {"name": "S", "sources": [{"name": "A"}, {"name": "B"}], "num_replicas": 3}
    assert (await request(clients[2], "$JS.API.STREAM.CREATE.S", sourcing))["did_create"] is True
    for index in range(4, 6):
        await publish(clients[index % 3], "a.x", b"a%d" % index)
        await publish(clients[index % 3], "b.x", b"b%d" % index)

    await wait(lambda: all(last_seq(cluster, node, "S") == 12 for node in NODES))
    held = stored(cluster, NODES[0], "S")
    assert held is not None and all(stored(cluster, node, "S") == held for node in NODES)
    assert [item[0] for item in held] == list(range(1, 13))
    origins = [hdrs.get(item[4], STREAM_SOURCE) for item in held]
    by_origin = {"A": [], "B": []}  # type: dict[str, list[bytes]]
    for item, header in zip(held, origins, strict=True):
        assert header is not None
        by_origin[header.decode().split(" ")[0]].append(item[3])
    assert by_origin == {"A": [b"a%d" % i for i in range(6)], "B": [b"b%d" % i for i in range(6)]}

    info = await request(clients[0], "$JS.API.STREAM.INFO.S")
    assert [(source["name"], source["lag"]) for source in info["sources"]] == [("A", 0), ("B", 0)]
    assert "alternates" not in await request(clients[0], "$JS.API.STREAM.INFO.A")


async def _publish_all(nc: Client, subject: str, count: int) -> list[dict[str, Any]]:
    return [await publish(nc, subject, b"%d" % index) for index in range(count)]


async def test_a_killed_mirror_and_sourcing_leader_s_successors_lose_and_repeat_nothing(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.url(0))
    try:
        await request(nc, "$JS.API.STREAM.CREATE.O", {"name": "O", "subjects": ["o.>"], "num_replicas": 3})
        await request(nc, "$JS.API.STREAM.CREATE.M", {"name": "M", "mirror": {"name": "O"}, "num_replicas": 3})
        await request(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "sources": [{"name": "O"}], "num_replicas": 3})
        await _publish_all(nc, "o.x", 20)
        await wait(lambda: leader_of(cluster, "M") is not None and last_seq(cluster, leader_of(cluster, "M"), "M") >= 5)
        victim = leader_of(cluster, "M")
        assert victim is not None
        if leader_of(cluster, "S") != victim:  # the sourcing stream's leader goes down with the mirror's
            moved = await request(nc, "$JS.API.STREAM.LEADER.STEPDOWN.S", {"placement": {"preferred": victim}})
            assert moved == {"type": "io.nats.jetstream.api.v1.stream_leader_stepdown_response", "success": True}
            await wait(lambda: leader_of(cluster, "S") == victim)
        if leader_of(cluster, "O") == victim:
            # The origin's leader killed too would leave the mirror's consumer request unanswered for 30 s, as with
            # nats-server (nobody leads the origin when it is sent).
            other = next(node for node in NODES if node != victim)
            moved = await request(nc, "$JS.API.STREAM.LEADER.STEPDOWN.O", {"placement": {"preferred": other}})
            assert moved["success"] is True
            await wait(lambda: leader_of(cluster, "O") == other)
        await nc.close()
        survivors = [server for server in cluster.servers if server.broker.name != victim]
        nc = await nats.connect(survivors[0].url)
        publishing = asyncio.create_task(_publish_all(nc, "o.y", 40))
        await cluster.kill(victim)
        acks = await publishing
        assert len(acks) == 40
        names = [server.broker.name for server in survivors]
        # A publish retried after the kill may be stored twice in the origin: the mirror follows the origin.
        await wait(lambda: len({last_seq(cluster, node, "O") for node in names}) == 1)
        origin = stored(cluster, names[0], "O")
        assert origin is not None and len(origin) >= 60 and origin[-1][0] == len(origin)
        await wait(lambda: all(last_seq(cluster, node, "M") == len(origin) for node in names), timeout=30)
        await wait(lambda: all(last_seq(cluster, node, "S") == len(origin) for node in names), timeout=30)
        for node in names:
            assert stored(cluster, node, "M") == origin
            sourced = stored(cluster, node, "S")
            assert sourced is not None and [item[3] for item in sourced] == [item[3] for item in origin]
        info = await request(nc, "$JS.API.STREAM.INFO.M")
        assert info["cluster"]["leader"] != victim and info["state"]["messages"] == len(origin)
    finally:
        await nc.close()
