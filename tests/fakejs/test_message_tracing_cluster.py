"""Message tracing in a fakejs cluster: the other servers do not trace (yet), a trace-only message stays home.

nats-server sends a traced message on to the other servers with a hop
count, and each sends its own trace event; fakejs's servers do not (see
docs/guide/message-tracing.md), so these tests are fakejs's own.
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


async def test_trace_only_is_not_sent_to_the_other_servers() -> None:
    async with Cluster(size=2) as cluster:
        home, away = await nats.connect(cluster.url(0)), await nats.connect(cluster.url(1))
        traces = await home.subscribe("traces")
        remote = await away.subscribe("t.x")
        await interest_routed(home, away)
        await home.publish("t.x", b"only", headers={**TRACE, "Nats-Trace-Only": "true"})
        assert kinds((await traces.next_msg(WAIT)).data) == ["in"]
        await home.publish("t.x", b"traced", headers=TRACE)
        assert kinds((await traces.next_msg(WAIT)).data) == ["in"]
        got = await remote.next_msg(WAIT)
        assert got.data == b"traced" and got.headers == TRACE
        await home.close()
        await away.close()


async def test_the_shared_jetstream_is_traced() -> None:
    async with Cluster(size=2, jetstream=True) as cluster:
        nc = await nats.connect(cluster.url(1))
        js = nc.jetstream()
        await js.add_stream(name="ORDERS", subjects=["orders.>"], num_replicas=2)
        traces = await nc.subscribe("traces")
        await nc.flush()
        await nc.publish("orders.new", b"only", headers={**TRACE, "Nats-Trace-Only": "1"})
        event = json.loads((await traces.next_msg(WAIT)).data)
        assert [item["type"] for item in event["events"]] == ["in", "js"]
        assert event["events"][1]["stream"] == "ORDERS"
        ack = await js.publish("orders.new", b"stored", headers=TRACE)
        assert ack.seq == 1
        assert kinds((await traces.next_msg(WAIT)).data) == ["in", "js"]
        assert (await js.stream_info("ORDERS")).state.messages == 1
        await nc.close()
