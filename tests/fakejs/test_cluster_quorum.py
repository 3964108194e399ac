"""A replicated stream and consumer losing their quorum in an in-process cluster, on a manual clock.

The stranded replica announces ``STREAM.QUORUM_LOST`` / ``CONSUMER.QUORUM_LOST``
once it has heard no quorum for 10 s (nats-server's ``lostQuorumInterval``), at
its next election timeout (nats-server took 14 to 20 s: see
tests/parity/test_cluster_quorum_advisories.py), again at most every 20 s
(``lostQuorumSignal``), and stops once the quorum is back.
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


async def advance_until(clock: ManualClock, nc: Any, heard: list[Any], count: int, limit: float) -> float:
    """Move the clock a second at a time (at most ``limit`` seconds) until ``count`` advisories were heard; the
    seconds it moved."""
    moved = 0.0
    while len(heard) < count and moved < limit:
        clock.advance(1.0)
        moved += 1.0
        await nc.flush()
        await eventually(lambda: asyncio.sleep(0, len(heard)), lambda n: True, what="a turn")
    await eventually(lambda: asyncio.sleep(0, len(heard)), lambda n: n >= count, what=f"{count} advisories")
    return moved


async def test_the_stranded_replica_announces_the_lost_quorum_on_the_clock() -> None:
    clock = ManualClock()
    async with Cluster(size=3, jetstream=True, clock=clock, seed=4) as cluster:
        nc = await nats.connect(cluster.url("n1"))
        heard: list[tuple[float, Msg]] = []

        async def add(msg: Msg) -> None:
            heard.append((clock.monotonic(), msg))

        try:
            await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s"], "num_replicas": 3})
            await api(nc, "$JS.API.CONSUMER.CREATE.S.D", {"stream_name": "S", "config": {"durable_name": "D"}})
            await nc.subscribe("$JS.EVENT.ADVISORY.*.QUORUM_LOST.>", cb=add)
            await nc.flush()
            await cluster.kill("n2")
            await cluster.kill("n3")
            lost_at = clock.monotonic()

            clock.advance(9.9)
            await nc.flush()
            assert heard == []
            await advance_until(clock, nc, heard, 2, 30.0)
            assert sorted(m.subject for _, m in heard) == [CONSUMER_LOST, STREAM_LOST]
            assert all(at - lost_at >= 10.0 for at, _ in heard)
            stream = json.loads(next(m.data for _, m in heard if m.subject == STREAM_LOST))
            assert list(stream) == ["type", "id", "timestamp", "stream", "replicas"]
            assert stream["type"] == "io.nats.jetstream.advisory.v1.stream_quorum_lost"
            assert stream["timestamp"].startswith("20")
            assert sorted((p["name"], p["current"], p["active"]) for p in stream["replicas"]) == [
                ("n1", True, 0),
                ("n2", False, 0),
                ("n3", False, 0),
            ]
            consumer = json.loads(next(m.data for _, m in heard if m.subject == CONSUMER_LOST))
            assert list(consumer) == ["type", "id", "timestamp", "stream", "consumer", "replicas"]
            assert (consumer["stream"], consumer["consumer"]) == ("S", "D")

            await advance_until(clock, nc, heard, 4, 40.0)  # the repeats, each at least 20 s after the one before
            for subject in (STREAM_LOST, CONSUMER_LOST):
                first, second = [at for at, m in heard if m.subject == subject][:2]
                assert second - first >= 20.0

            await cluster.restart("n2")
            before = len(heard)
            clock.advance(60.0)
            await nc.flush()
            assert len(heard) == before
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
            await advance_until(clock, lonely, heard["n1"], 1, 30.0)
            doc = json.loads(heard["n1"][0].data)
            assert sorted((p["name"], p["current"]) for p in doc["replicas"]) == [
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
