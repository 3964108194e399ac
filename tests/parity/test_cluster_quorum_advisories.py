"""A replicated stream and consumer losing their quorum in a three-node cluster, on both targets.

Facts pinned (nats-server 2.15.1): with ``n2`` and ``n3`` killed, the R3
stream's and consumer's replica on ``n1`` has no quorum; some seconds later
(nats-server: 10 s without hearing a quorum, then its next election timeout)
``n1`` publishes ``$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST.<stream>``
(``stream_quorum_lost``: type, id, timestamp, stream, every server of the
group as ``{name, current, active, peer}`` -- ``n1`` current, the dead ones
not) and ``CONSUMER.QUORUM_LOST.<stream>.<consumer>`` (the same with
``consumer``), in the account, and a copy in the system account with the
``account`` after the timestamp and the same id.  When exactly, and in
which order the servers list the peers, is nats-server's to choose: only the
content is compared.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest

from tests.harness.heard import ADVISORY, ADVISORY_TYPE, Heard
from tests.harness.js import api
from tests.harness.js_cluster import peer_of
from tests.harness.meta_cluster import Cluster, running
from tests.harness.wait import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

LOST = 60.0  # seconds nats-server may take to signal a lost quorum (measured: 14 to 20 s)
ELECTION = 30.0


@pytest.fixture
def cluster(js_cluster_kind: str, tmp_path: Path) -> Iterator[Cluster]:
    with running(js_cluster_kind, tmp_path) as started:
        yield started


@pytest.fixture
async def listeners(cluster: Cluster) -> AsyncIterator[tuple[Any, Heard, Heard]]:
    """An application client of ``n1`` and what it and a system client of ``n1`` hear."""
    app = await nats.connect(cluster.url(0), allow_reconnect=False)
    system = await nats.connect(cluster.url(0), user="sys", password="sys", allow_reconnect=False)
    heard_app, heard_system = Heard(), Heard()
    try:
        await app.subscribe(ADVISORY + "*.QUORUM_LOST.>", cb=heard_app.add)
        await system.subscribe(ADVISORY + "*.QUORUM_LOST.>", cb=heard_system.add)
        await app.flush()
        await system.flush()
        yield app, heard_app, heard_system
    finally:
        await app.close()
        await system.close()


def assert_replicas(doc: dict[str, Any]) -> None:
    by_name = {peer["name"]: peer for peer in doc["replicas"]}
    assert sorted(by_name) == ["n1", "n2", "n3"], doc
    for name, peer in by_name.items():
        assert list(peer) == ["name", "current", "active", "peer"], peer
        assert (peer["current"], peer["peer"]) == (name == "n1", peer_of(name)), peer
        assert isinstance(peer["active"], int)


async def created(app: Any) -> None:
    async def stream() -> dict[str, Any]:
        return await api(app, "$JS.API.STREAM.CREATE.Q", {"name": "Q", "subjects": ["q"], "num_replicas": 3})

    await eventually(stream, lambda answer: "error" not in answer, what="the R3 stream", timeout=ELECTION)
    consumer = await api(app, "$JS.API.CONSUMER.CREATE.Q.D", {"stream_name": "Q", "config": {"durable_name": "D"}})
    assert "error" not in consumer, consumer


async def test_the_survivor_announces_the_lost_quorum(cluster: Cluster, listeners: tuple[Any, Heard, Heard]) -> None:
    app, heard_app, heard_system = listeners
    await created(app)
    await asyncio.to_thread(cluster.kill, 1)
    await asyncio.to_thread(cluster.kill, 2)

    stream = await heard_app.first(ADVISORY + "STREAM.QUORUM_LOST.Q", LOST)
    assert list(stream) == ["type", "id", "timestamp", "stream", "replicas"], stream
    assert (stream["type"], stream["stream"]) == (ADVISORY_TYPE + "stream_quorum_lost", "Q")
    assert_replicas(stream)
    consumer = await heard_app.first(ADVISORY + "CONSUMER.QUORUM_LOST.Q.D", LOST)
    assert list(consumer) == ["type", "id", "timestamp", "stream", "consumer", "replicas"], consumer
    assert (consumer["type"], consumer["stream"], consumer["consumer"]) == (
        ADVISORY_TYPE + "consumer_quorum_lost",
        "Q",
        "D",
    )
    assert_replicas(consumer)

    for doc, subject in ((stream, "STREAM.QUORUM_LOST.Q"), (consumer, "CONSUMER.QUORUM_LOST.Q.D")):
        copy = await heard_system.first(ADVISORY + subject, LOST)
        head = {key: doc[key] for key in ("type", "id", "timestamp")}
        rest = {key: value for key, value in doc.items() if key not in head}
        assert list(copy) == [*head, "account", *rest], copy
        assert (copy["id"], copy["account"]) == (doc["id"], "$G")
