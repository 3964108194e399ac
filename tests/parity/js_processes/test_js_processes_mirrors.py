"""Mirrors and sources across three server processes, on both targets.

Three nodes ``n1``..``n3`` (``ProcessCluster(kind * 3, jetstream=True)``), the
same nats-py client code against nats-server and fakejs processes.  Facts
pinned (nats-server 2.15.1):

- an R3 mirror of an R3 origin holds the origin's messages at the origin's
  sequences and times, its holes included, whatever node they were
  published through, before and after the mirror was made; its info's
  ``mirror`` section shows the origin, no lag and a recent contact;
- the origin's STREAM.INFO lists itself and its mirror, with the cluster's
  name, as ``alternates`` (after ``cluster``, before ``ts``; nats-server
  lists them in no set order); a stream without mirrors, and the mirror
  itself, have none;
- a stream of three replicas sourcing an R3 and an R1 origin stores each of
  their messages once, in each origin's order, with a ``Nats-Stream-Source``
  header naming the origin and its sequence; its info lists both sources
  (nats-server in no set order) with no lag;
- kill -9 of the mirror's leader (not the origin's) while the origin is
  published to: another node leads the mirror, which ends with every
  message of the origin, once.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.js.api import PubAck, StreamConfig, StreamSource
from nats.js.errors import NoStreamResponseError

from fakejs.targets.cluster import ProcessCluster
from tests.harness.js_processes import FAILOVER, NODES, create_r3, leader, quietly
from tests.harness.wait import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


async def add_stream(client: Client, config: StreamConfig) -> None:
    """Create a stream (asked again while the meta group cannot place it yet), then wait for its leader."""
    js = client.jetstream(timeout=10.0)
    await eventually(lambda: quietly(js.add_stream(config)), lambda reply: not isinstance(reply, Exception), timeout=30)
    await leader(client, config.name or "")


async def publish(client: Client, subject: str, data: bytes) -> PubAck:
    """A publish, sent again while no server has heard of the stream's subjects yet (no responders: not stored)."""
    js = client.jetstream(timeout=10.0)
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        try:
            return await js.publish(subject, data)
        except NoStreamResponseError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.05)


async def raw_info(client: Client, stream: str, timeout: float = 10) -> dict[str, Any]:
    """STREAM.INFO as the server wrote it (keys in its order)."""
    reply = await client.request(f"$JS.API.STREAM.INFO.{stream}", b"", timeout=timeout)
    info: dict[str, Any] = json.loads(reply.data)
    return info


async def held(client: Client, stream: str, count: int) -> dict[str, Any]:
    """The stream's info once it holds ``count`` messages."""

    async def ask() -> object:
        return await quietly(raw_info(client, stream))

    info = await eventually(
        ask,
        lambda reply: isinstance(reply, dict) and reply.get("state", {}).get("messages") == count,
        what=f"{count} messages in {stream}",
        timeout=30,
    )
    return info  # type: ignore[return-value]


async def test_an_r3_mirror_of_an_r3_origin_and_the_origin_s_alternates(
    cluster: ProcessCluster, clients: list[Client]
) -> None:
    await create_r3(clients[0], "ORIGIN")
    for index in range(6):
        ack = await publish(clients[index % 3], f"ORIGIN.{index}", f"m{index}".encode())
        assert ack.seq == index + 1
    assert await clients[1].jetstream(timeout=10.0).delete_msg("ORIGIN", 3)
    await add_stream(clients[1], StreamConfig(name="BACKUP", mirror=StreamSource(name="ORIGIN"), num_replicas=3))
    for index in range(6, 10):
        await publish(clients[index % 3], f"ORIGIN.{index}", f"m{index}".encode())

    info = await held(clients[2], "BACKUP", 9)
    state = info["state"]
    assert (state["first_seq"], state["last_seq"], state["num_deleted"]) == (1, 10, 1)
    assert info["mirror"]["name"] == "ORIGIN" and info["mirror"]["lag"] == 0 and info["mirror"]["active"] >= 0
    assert list(info["mirror"]) == ["name", "lag", "active"]
    assert "alternates" not in info
    for seq in (1, 2, 4, 10):
        reader = clients[seq % 3].jetstream(timeout=10.0)
        original, mirrored = await reader.get_msg("ORIGIN", seq), await reader.get_msg("BACKUP", seq)
        assert (mirrored.seq, mirrored.subject, mirrored.data) == (seq, original.subject, original.data)
        assert mirrored.time == original.time  # type: ignore[attr-defined]

    for client in clients:
        described = await raw_info(client, "ORIGIN")
        assert sorted(described["alternates"], key=lambda alternate: alternate["name"]) == [
            {"name": "BACKUP", "cluster": cluster.name},
            {"name": "ORIGIN", "cluster": cluster.name},
        ]
        keys = list(described)
        assert keys[keys.index("cluster") + 1 :] == ["alternates", "ts"]
    await create_r3(clients[0], "ALONE")
    assert "alternates" not in await raw_info(clients[0], "ALONE")


async def test_an_r3_stream_sourcing_two_origins(clients: list[Client]) -> None:
    await create_r3(clients[0], "EAST")
    await add_stream(clients[1], StreamConfig(name="WEST", subjects=["WEST.>"], num_replicas=1))
    for index in range(3):
        await publish(clients[index % 3], "EAST.x", f"e{index}".encode())
        await publish(clients[(index + 1) % 3], "WEST.x", f"w{index}".encode())
    sources = [StreamSource(name="EAST"), StreamSource(name="WEST")]
    await add_stream(clients[2], StreamConfig(name="ALL", sources=sources, num_replicas=3))
    for index in range(3, 5):
        await publish(clients[index % 3], "EAST.x", f"e{index}".encode())
        await publish(clients[index % 3], "WEST.x", f"w{index}".encode())

    info = await held(clients[0], "ALL", 10)
    assert sorted(source["name"] for source in info["sources"]) == ["EAST", "WEST"]  # nats-server: in no set order
    assert all(source["lag"] == 0 for source in info["sources"])
    by_origin: dict[str, list[tuple[int, bytes]]] = {"EAST": [], "WEST": []}
    for seq in range(1, 11):
        message = await clients[seq % 3].jetstream(timeout=10.0).get_msg("ALL", seq)
        header = (message.headers or {})["Nats-Stream-Source"]
        origin, origin_seq = header.split(" ")[:2]
        by_origin[origin].append((int(origin_seq), message.data or b""))
    assert by_origin == {
        "EAST": [(index + 1, f"e{index}".encode()) for index in range(5)],
        "WEST": [(index + 1, f"w{index}".encode()) for index in range(5)],
    }


async def test_kill_the_mirror_s_leader_while_the_origin_is_published_to(cluster: ProcessCluster) -> None:
    client = await nats.connect(cluster.urls, max_reconnect_attempts=-1, reconnect_time_wait=0.2)
    try:
        js = client.jetstream(timeout=3.0)
        await create_r3(client, "SOURCE")
        await add_stream(client, StreamConfig(name="COPY", mirror=StreamSource(name="SOURCE"), num_replicas=3))
        for number in range(20):
            await js.publish("SOURCE.a", f"m{number}".encode(), headers={"Nats-Msg-Id": f"a{number}"})
        await held(client, "COPY", 20)
        victim = await leader(client, "COPY")
        if await leader(client, "SOURCE") == victim:
            # The origin's leader killed too would leave the mirror's consumer request unanswered for 30 s (nobody
            # leads the origin when it is sent): the origin is led elsewhere first.
            other = sorted(NODES - {victim})[0]
            moved = await client.request(
                "$JS.API.STREAM.LEADER.STEPDOWN.SOURCE", json.dumps({"placement": {"preferred": other}}).encode(), 10
            )
            assert json.loads(moved.data)["success"] is True
            # A request sent while the leadership moves may go unanswered (on both targets): asked again soon.
            await eventually(
                lambda: quietly(raw_info(client, "SOURCE", timeout=1)),
                lambda reply: isinstance(reply, dict) and reply.get("cluster", {}).get("leader") == other,
                what="the origin led elsewhere",
                timeout=30,
            )
        killed = sorted(NODES).index(victim)
        cluster.kill(killed)
        for number in range(20):
            await eventually(
                lambda number=number: quietly(
                    js.publish("SOURCE.b", f"n{number}".encode(), headers={"Nats-Msg-Id": f"b{number}"})
                ),
                lambda reply: not isinstance(reply, Exception),
                what="a publish acknowledged after the kill",
                timeout=FAILOVER,
            )
        await eventually(
            lambda: leader(client, "COPY"),
            lambda name: name != f"n{killed + 1}",
            what="another leader",
            timeout=FAILOVER,
        )
        info = await eventually(
            lambda: quietly(raw_info(client, "COPY")),
            lambda reply: isinstance(reply, dict) and reply.get("state", {}).get("messages") == 40,
            what="every message in the mirror",
            timeout=FAILOVER,
        )
        assert (info["state"]["first_seq"], info["state"]["last_seq"]) == (1, 40)  # type: ignore[index]
        reader = client.jetstream(timeout=10.0)
        mirrored = [(await reader.get_msg("COPY", seq)).data for seq in range(1, 41)]
        assert mirrored == [f"m{n}".encode() for n in range(20)] + [f"n{n}".encode() for n in range(20)]
    finally:
        await client.close()
