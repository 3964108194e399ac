"""Message tracing in an in-process fakejs cluster (tests/parity/test_message_tracing_cluster.py compares routes).

The servers of an in-process cluster trace each hop as separate
processes do; their shared JetStream records the ``js`` event.
"""

from __future__ import annotations

import json

import nats
import pytest

from fakejs import Cluster
from tests.harness.cluster import interest_routed
from tests.harness.wait import WAIT

pytestmark = pytest.mark.fake_only

TRACE = {"Nats-Trace-Dest": "traces"}


def kinds(data: bytes) -> list[str]:
    return [event["type"] for event in json.loads(data)["events"]]


async def test_an_in_process_cluster_traces_each_hop() -> None:
    async with Cluster(size=2) as cluster:
        home, away = await nats.connect(cluster.url(0)), await nats.connect(cluster.url(1))
        traces = await home.subscribe("traces")
        remote = await away.subscribe("t.x")
        await interest_routed(home, away)
        await home.publish("t.x", b"only", headers={**TRACE, "Nats-Trace-Only": "true"})
        documents = sorted([(await traces.next_msg(WAIT)).data for _ in range(2)], key=kinds)
        assert [kinds(data) for data in documents] == [["in", "eg"], ["in", "eg"]]
        first, second = (json.loads(data) for data in documents)
        assert {first["events"][0]["kind"], second["events"][0]["kind"]} == {0, 1}
        await home.publish("t.x", b"traced", headers=TRACE)
        got = await remote.next_msg(WAIT)
        assert got.data == b"traced" and got.headers == {**TRACE, "Nats-Trace-Hop": "1"}
        await home.close()
        await away.close()


async def test_the_cluster_s_jetstream_is_traced_by_the_stream_leader() -> None:
    async with Cluster(size=2, jetstream=True) as cluster:
        nc, other = await nats.connect(cluster.url(1)), await nats.connect(cluster.url(0))
        js = nc.jetstream()
        await js.add_stream(name="ORDERS", subjects=["orders.>"], num_replicas=2)
        leader = (await js.stream_info("ORDERS")).cluster.leader
        traces = await nc.subscribe("traces")
        await interest_routed(other, nc)
        count = 1 if leader == "n2" else 2  # the publisher's own server, or the leader's too
        await nc.publish("orders.new", b"only", headers={**TRACE, "Nats-Trace-Only": "1"})
        documents = [json.loads((await traces.next_msg(WAIT)).data) for _ in range(count)]
        at_leader = next(doc for doc in documents if doc["server"]["name"] == leader)
        assert [item["type"] for item in at_leader["events"]] == ["in", "js"]
        assert at_leader["events"][1]["stream"] == "ORDERS"
        ack = await js.publish("orders.new", b"stored", headers=TRACE)
        assert ack.seq == 1
        documents = [json.loads((await traces.next_msg(WAIT)).data) for _ in range(count)]
        assert sorted(item["type"] for doc in documents for item in doc["events"])[-1] == "js"
        assert (await js.stream_info("ORDERS")).state.messages == 1
        await nc.close()
        await other.close()
