"""A replicated stream and consumer losing their quorum in an in-process cluster, on a manual clock.

The stranded replica announces ``STREAM.QUORUM_LOST`` / ``CONSUMER.QUORUM_LOST``
10 s (nats-server's ``lostQuorumInterval``) after the quorum went, again every
20 s (``lostQuorumSignal``), and stops once the quorum is back.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nats
import pytest
from nats.aio.msg import Msg

from fakejs import Cluster, ManualClock
from tests.harness.wait import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.fake_only]

STREAM_LOST = "$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST.S"
CONSUMER_LOST = "$JS.EVENT.ADVISORY.CONSUMER.QUORUM_LOST.S.D"


async def api(nc: Any, subject: str, body: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads((await nc.request(subject, json.dumps(body).encode(), timeout=2)).data)
    return answer


async def test_the_stranded_replica_announces_the_lost_quorum_on_the_clock() -> None:
    clock = ManualClock()
    async with Cluster(size=3, jetstream=True, clock=clock, seed=4) as cluster:
        nc = await nats.connect(cluster.url("n1"))
        heard: list[Msg] = []

        async def add(msg: Msg) -> None:
            heard.append(msg)

        try:
            await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s"], "num_replicas": 3})
            await api(nc, "$JS.API.CONSUMER.CREATE.S.D", {"stream_name": "S", "config": {"durable_name": "D"}})
            await nc.subscribe("$JS.EVENT.ADVISORY.*.QUORUM_LOST.>", cb=add)
            await nc.flush()
            await cluster.kill("n2")
            await cluster.kill("n3")

            clock.advance(9.9)
            await nc.flush()
            assert heard == []
            clock.advance(0.1)
            await eventually(lambda: asyncio.sleep(0, len(heard)), lambda n: n == 2, what="both advisories")
            assert sorted(m.subject for m in heard) == [CONSUMER_LOST, STREAM_LOST]
            stream = json.loads(next(m.data for m in heard if m.subject == STREAM_LOST))
            assert list(stream) == ["type", "id", "timestamp", "stream", "replicas"]
            assert stream["type"] == "io.nats.jetstream.advisory.v1.stream_quorum_lost"
            assert stream["timestamp"].startswith("20")
            assert [(p["name"], p["current"], p["active"]) for p in stream["replicas"]] == [
                ("n1", True, 0),
                ("n2", False, 0),
                ("n3", False, 0),
            ]
            consumer = json.loads(next(m.data for m in heard if m.subject == CONSUMER_LOST))
            assert list(consumer) == ["type", "id", "timestamp", "stream", "consumer", "replicas"]
            assert (consumer["stream"], consumer["consumer"]) == ("S", "D")

            clock.advance(19.9)
            await nc.flush()
            assert len(heard) == 2
            clock.advance(0.1)
            await eventually(lambda: asyncio.sleep(0, len(heard)), lambda n: n == 4, what="the repeats")

            await cluster.restart("n2")
            clock.advance(60.0)
            await nc.flush()
            assert len(heard) == 4
        finally:
            await nc.close()


async def test_across_a_partition_the_minority_side_announces_it_until_healed() -> None:
    clock = ManualClock()
    async with Cluster(size=3, jetstream=True, clock=clock, seed=6) as cluster:
        lonely, crowd = await nats.connect(cluster.url("n1")), await nats.connect(cluster.url("n3"))
        heard: dict[str, list[Msg]] = {"n1": [], "n3": []}

        def recorder(name: str) -> Any:
            async def add(msg: Msg) -> None:
                heard[name].append(msg)

            return add

        try:
            await api(crowd, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s"], "num_replicas": 3})
            await lonely.subscribe(STREAM_LOST, cb=recorder("n1"))
            await crowd.subscribe(STREAM_LOST, cb=recorder("n3"))
            await lonely.flush()
            await crowd.flush()
            await cluster.partition(["n1"], ["n2", "n3"])
            clock.advance(10.0)
            await eventually(lambda: asyncio.sleep(0, len(heard["n1"])), lambda n: n == 1, what="n1's advisory")
            doc = json.loads(heard["n1"][0].data)
            assert [(p["name"], p["current"]) for p in doc["replicas"]] == [
                ("n1", True),
                ("n2", False),
                ("n3", False),
            ]
            await cluster.heal()
            clock.advance(60.0)
            await lonely.flush()
            await crowd.flush()
            assert (len(heard["n1"]), heard["n3"]) == (1, [])
        finally:
            await lonely.close()
            await crowd.close()
