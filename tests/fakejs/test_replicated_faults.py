"""JetStream replicated across three routed servers under faults: across a partition only the majority serves
(the minority's leader steps down once it hears no quorum, its publishers find no responders), the minority
catches up once healed; an R1 stream on a dead server is unavailable until the server returns, with its
messages."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import nats
import pytest

from fakejs.server.local_cluster import Cluster
from tests.harness.replicated import (
    all_joined,
    meta_leader,
    publish,
    replicated_cluster,
    request,
    share,
    stream_config,
    wait,
    wait_for_leader,
)

pytestmark = pytest.mark.cluster


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with replicated_cluster(3, store=tmp_path) as started:  # each store kept over a restart
        await wait(lambda: meta_leader(started) is not None and all_joined(started))
        yield started
        assert started.errors == []


def stream_leads(cluster: Cluster, node: str, stream: str) -> bool:
    replica = share(cluster, node).replicas.replicas.get(stream)
    return replica is not None and replica.is_leader


async def test_across_a_partition_only_the_majority_serves(cluster: Cluster) -> None:
    setup = await nats.connect(cluster.url(0))
    await request(setup, "$JS.API.STREAM.CREATE.PART", stream_config("PART", 3))
    assert (await publish(setup, "part.x", b"before"))["seq"] == 1
    lonely = (await request(setup, "$JS.API.STREAM.INFO.PART"))["cluster"]["leader"]
    await setup.close()
    crowd = [name for name in ("n1", "n2", "n3") if name != lonely]
    minority, majority = await nats.connect(cluster.url(lonely)), await nats.connect(cluster.url(crowd[0]))
    try:
        await cluster.partition([lonely], crowd)
        await wait(lambda: not stream_leads(cluster, lonely, "PART"))  # no quorum heard: it steps down
        info = await wait_for_leader(majority, "PART", lambda leader: leader in crowd)
        assert info["state"]["messages"] == 1
        assert (await publish(majority, "part.x", b"during"))["seq"] == 2
        with pytest.raises(nats.errors.NoRespondersError):
            await minority.request("part.x", b"cut off", timeout=1)
        await cluster.heal()
        await wait(lambda: share(cluster, lonely).replicas.replicas["PART"].stream.store.last_seq == 2)
        assert json.loads((await minority.request("part.x", b"after", timeout=5)).data)["seq"] == 3
    finally:
        await minority.close()
        await majority.close()


async def test_an_r1_stream_on_a_dead_server_is_unavailable_until_it_returns(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.urls, reconnect_time_wait=0.05)
    try:
        await request(nc, "$JS.API.STREAM.CREATE.ONE", stream_config("ONE", 1))
        assert (await publish(nc, "one.x", b"kept"))["seq"] == 1
        holder = (await request(nc, "$JS.API.STREAM.INFO.ONE"))["cluster"]["leader"]
        await cluster.kill(holder)
        await wait(lambda: meta_leader(cluster) is not None)
        with pytest.raises(nats.errors.NoRespondersError):
            await nc.request("one.x", b"", timeout=1)
        with pytest.raises(nats.errors.TimeoutError):
            await nc.request("$JS.API.STREAM.INFO.ONE", b"", timeout=0.5)
        assert (await request(nc, "$JS.API.STREAM.NAMES"))["streams"] == ["ONE"]
        await cluster.restart(holder)
        info = await wait_for_leader(nc, "ONE", lambda leader: leader == holder)
        assert info["state"]["messages"] == 1
        assert (await publish(nc, "one.x", b"back"))["seq"] == 2
    finally:
        await nc.close()
