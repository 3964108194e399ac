"""Which servers hold a stream or consumer in JetStream across server processes, on both targets.

Three, four or five nodes ``n1``..``n5`` started from flags (see
:mod:`tests.parity.js_processes.test_js_processes`), the same nats-py client code
against nats-server and fakejs processes.  Facts pinned (nats-server
2.15.1):

- ``$JS.API.STREAM.PEER.REMOVE.<stream>``: an empty request, one without a
  ``peer`` or with an empty one is 10003 ``bad request``, one that is not JSON
  10025, one asking for a higher API level 412 10185, a server that is not
  one of the stream's 10040 ``peer not a member``, a missing stream 10059; a
  stream's server is replaced by the free one (``{"success": true}``), the
  stream's messages and its consumer (its servers too, its acknowledgements)
  are there on the new set of servers, every replica current; with no free
  server (an R3 stream on three) it is 503, 10075 ``peer remap failed``;
- ``$JS.API.CONSUMER.PEER.REMOVE.<stream>.<consumer>``: the same 10003, 10040,
  10059 and 10014 for a missing consumer; an R1 consumer's server is replaced
  by another of the stream's, an R3 consumer on an R3 stream cannot move
  (10075);
- ``STREAM.UPDATE`` with another ``num_replicas``: R1 to R3 answers with the
  new configuration, then the stream and its consumer run on three servers,
  every replica current, messages and acknowledgements kept; R5 on three
  servers is 10005 ``no suitable peers for placement``; R3 to R1 keeps the
  stream's leader, and the consumer follows it there; on five servers R3 to
  R5 takes the two free ones, the consumer following.

The update's answer is compared by its configuration and state only: while
the replicas change, nats-server's ``cluster`` section carries a ``desired``
placement (and, scaling up, a new group name and no leader yet) that fakejs
does not show.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from nats.aio.client import Client

from fakejs.targets.cluster import ProcessCluster
from tests.harness.js_processes import (
    SETTLE,
    ask,
    asked,
    connect,
    create,
    durable,
    fetch_and_ack,
    process_cluster,
    refusal,
    servers,
    settled,
    settled_on,
)
from tests.harness.wait import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

STREAM_PEER_REMOVE = "$JS.API.STREAM.PEER.REMOVE."
CONSUMER_PEER_REMOVE = "$JS.API.CONSUMER.PEER.REMOVE."
STREAM_TYPE = "io.nats.jetstream.api.v1.stream_remove_peer_response"
CONSUMER_TYPE = "io.nats.jetstream.api.v1.consumer_remove_peer_response"


@pytest.fixture
def four(target_kind: str) -> Iterator[ProcessCluster]:
    with process_cluster(target_kind, 4).start() as started:
        yield started


@pytest.fixture
async def client4(four: ProcessCluster) -> AsyncIterator[Client]:
    async for connected in connect(four):
        yield connected


async def test_a_stream_peer_removed_and_a_consumer_peer_removed(client4: Client) -> None:
    created = await create(client4, "PEERS", 3)
    del created["servers"]
    js = client4.jetstream(timeout=10.0)
    for index in range(5):
        await js.publish("PEERS.x", b"m%d" % index)
    await durable(client4, "PEERS", "D")
    await durable(client4, "PEERS", "ONE", replicas=1)
    assert await fetch_and_ack(client4, "PEERS", "D", 2) == [b"m0", b"m1"]
    info = await ask(client4, "$JS.API.STREAM.INFO.PEERS")
    before = servers(info["cluster"])
    (free,) = {"n1", "n2", "n3", "n4"} - before
    subject = STREAM_PEER_REMOVE + "PEERS"
    bad = refusal(STREAM_TYPE, 400, 10003, "bad request")
    assert [await ask(client4, subject, body) for body in (None, {}, {"peer": ""})] == [bad] * 3
    assert await ask(client4, subject, {"peer": free}) == refusal(STREAM_TYPE, 400, 10040, "peer not a member")
    for kind, asked_of in ((STREAM_TYPE, subject), (CONSUMER_TYPE, CONSUMER_PEER_REMOVE + "PEERS.D")):
        assert await ask(client4, asked_of, {"peer": free}, {"Nats-Required-Api-Level": "99"}) == refusal(
            kind, 412, 10185, "JetStream minimum api level required"
        )
        assert await ask(client4, asked_of, b'{"peer":') == refusal(kind, 400, 10025, "invalid JSON: unexpected EOF")
    missing = await ask(client4, STREAM_PEER_REMOVE + "MISSING", {"peer": free})
    assert missing == refusal(STREAM_TYPE, 404, 10059, "stream not found")
    removed = info["cluster"]["replicas"][0]["name"]
    assert await ask(client4, subject, {"peer": removed}) == {"type": STREAM_TYPE, "success": True}
    after = before - {removed} | {free}
    moved = await settled_on(client4, "$JS.API.STREAM.INFO.PEERS", after, "the new servers")
    assert moved["state"]["messages"] == 5
    consumer = await settled_on(client4, "$JS.API.CONSUMER.INFO.PEERS.D", after, "the consumer")
    assert (consumer["ack_floor"]["stream_seq"], consumer["num_pending"]) == (2, 3)
    assert await fetch_and_ack(client4, "PEERS", "D", 3) == [b"m2", b"m3", b"m4"]

    consumer_subject = CONSUMER_PEER_REMOVE + "PEERS.D"
    bad = refusal(CONSUMER_TYPE, 400, 10003, "bad request")
    assert [await ask(client4, consumer_subject, body) for body in (None, {}, {"peer": ""})] == [bad] * 3
    assert await ask(client4, consumer_subject, {"peer": removed}) == refusal(
        CONSUMER_TYPE, 400, 10040, "peer not a member"
    )
    assert await ask(client4, CONSUMER_PEER_REMOVE + "PEERS.NONE", {"peer": free}) == refusal(
        CONSUMER_TYPE, 404, 10014, "consumer not found"
    )
    assert await ask(client4, CONSUMER_PEER_REMOVE + "MISSING.D", {"peer": free}) == refusal(
        CONSUMER_TYPE, 404, 10059, "stream not found"
    )
    assert await ask(client4, consumer_subject, {"peer": free}) == refusal(
        CONSUMER_TYPE, 503, 10075, "peer remap failed"
    )
    one = await settled(
        client4, "$JS.API.CONSUMER.INFO.PEERS.ONE", lambda reply: bool(reply["cluster"].get("leader")), "ONE's server"
    )
    holder = one["cluster"]["leader"]
    answer = await ask(client4, CONSUMER_PEER_REMOVE + "PEERS.ONE", {"peer": holder})
    assert answer == {"type": CONSUMER_TYPE, "success": True}
    await eventually(  # nats-server names the new server as a replica until it leads: the names are compared
        lambda: asked(client4, "$JS.API.CONSUMER.INFO.PEERS.ONE"),
        lambda reply: isinstance(reply, dict) and named_elsewhere(reply, holder, after),
        what="ONE on another server of its stream",
        timeout=SETTLE,
    )


def named_elsewhere(reply: dict[str, Any], holder: str, allowed: set[str]) -> bool:
    section = reply.get("cluster") or {}
    names = {section.get("leader")} | {replica["name"] for replica in section.get("replicas") or []}
    names.discard(None)
    return len(names) == 1 and holder not in names and names <= allowed


async def test_a_stream_s_replicas_changed_by_updates(client3: Client) -> None:
    full = await create(client3, "FULL", 3)
    assert await ask(client3, STREAM_PEER_REMOVE + "FULL", {"peer": sorted(full["servers"])[0]}) == refusal(
        STREAM_TYPE, 503, 10075, "peer remap failed"
    )
    config = await create(client3, "SCALE", 1)
    del config["servers"]
    js = client3.jetstream(timeout=10.0)
    for index in range(4):
        await js.publish("SCALE.x", b"m%d" % index)
    await durable(client3, "SCALE", "D")
    assert await fetch_and_ack(client3, "SCALE", "D", 1) == [b"m0"]
    update = "$JS.API.STREAM.UPDATE.SCALE"
    kind = "io.nats.jetstream.api.v1.stream_update_response"
    up = await ask(client3, update, {**config, "num_replicas": 3})
    assert (up["type"], up["config"]["num_replicas"], up["state"]["messages"]) == (kind, 3, 4)
    everyone = {"n1", "n2", "n3"}
    scaled = await settled_on(client3, "$JS.API.STREAM.INFO.SCALE", everyone, "three servers")
    assert scaled["state"]["messages"] == 4
    consumer = await settled_on(client3, "$JS.API.CONSUMER.INFO.SCALE.D", everyone, "the consumer")
    assert (consumer["ack_floor"]["stream_seq"], consumer["num_pending"]) == (1, 3)
    five = await ask(client3, update, {**config, "num_replicas": 5})
    assert five == refusal(kind, 400, 10005, "no suitable peers for placement")
    down = await ask(client3, update, {**config, "num_replicas": 1})
    # the leader when the update was asked stays (it may differ from the one seen settling above)
    leader = down["cluster"]["leader"]
    assert (down["type"], down["config"]["num_replicas"], leader in everyone) == (kind, 1, True)
    single = await settled(
        client3, "$JS.API.STREAM.INFO.SCALE", lambda reply: not reply["cluster"].get("replicas"), "one server"
    )
    assert (single["cluster"]["leader"], single["state"]["messages"]) == (leader, 4)
    followed = await settled(
        client3,
        "$JS.API.CONSUMER.INFO.SCALE.D",
        lambda reply: not reply["cluster"].get("replicas") and reply["cluster"].get("leader"),
        "the consumer on one server",
    )
    assert followed["cluster"] == {"name": single["cluster"]["name"], "leader": leader}
    assert followed["config"]["num_replicas"] == 0
    assert await fetch_and_ack(client3, "SCALE", "D", 3) == [b"m1", b"m2", b"m3"]


@pytest.fixture
def five(target_kind: str) -> Iterator[ProcessCluster]:
    with process_cluster(target_kind, 5).start() as started:
        yield started


@pytest.fixture
async def client5(five: ProcessCluster) -> AsyncIterator[Client]:
    async for connected in connect(five):
        yield connected


async def test_an_r3_stream_scaled_to_r5_where_there_are_servers(client5: Client) -> None:
    client = client5
    config = await create(client, "WIDE", 3)
    del config["servers"]
    js = client.jetstream(timeout=10.0)
    for index in range(3):
        await js.publish("WIDE.x", b"m%d" % index)
    await durable(client, "WIDE", "D")
    assert await fetch_and_ack(client, "WIDE", "D", 1) == [b"m0"]
    up = await ask(client, "$JS.API.STREAM.UPDATE.WIDE", {**config, "num_replicas": 5})
    assert (up["config"]["num_replicas"], up["state"]["messages"]) == (5, 3)
    everyone = {"n1", "n2", "n3", "n4", "n5"}
    scaled = await settled_on(client, "$JS.API.STREAM.INFO.WIDE", everyone, "five servers")
    assert scaled["state"]["messages"] == 3
    consumer = await settled_on(client, "$JS.API.CONSUMER.INFO.WIDE.D", everyone, "the consumer")
    assert (consumer["ack_floor"]["stream_seq"], consumer["num_pending"]) == (1, 2)
    assert await fetch_and_ack(client, "WIDE", "D", 2) == [b"m1", b"m2"]
