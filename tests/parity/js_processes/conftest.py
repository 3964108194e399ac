"""Fixtures of the parity tests of JetStream across server processes: three nodes and clients of them.

``cluster`` is three JetStream nodes ``n1``..``n3`` of this test's kind
(``target_kind``: each test runs against nats-server and against fakejs
processes), started from flags.  A module whose nodes need more (monitoring, a
configuration file) defines its own ``cluster``; the clients here then connect
to that one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import nats
import pytest
from nats.aio.client import Client

from fakejs.targets.cluster import ProcessCluster
from tests.harness.js_processes import connect, process_cluster


@pytest.fixture
def cluster(target_kind: str) -> Iterator[ProcessCluster]:
    """Three JetStream nodes ``n1``..``n3`` of this test's kind."""
    with process_cluster(target_kind).start() as started:
        yield started


@pytest.fixture
async def clients(cluster: ProcessCluster) -> AsyncIterator[list[Client]]:
    """A client of every node, in the nodes' order, each staying on its node."""
    connected = [await nats.connect(url, allow_reconnect=False) for url in cluster.urls]
    yield connected
    for client in connected:
        await client.close()


@pytest.fixture
async def client(cluster: ProcessCluster) -> AsyncIterator[Client]:
    """A client of ``n1``, staying there."""
    connected = await nats.connect(cluster.urls[0], allow_reconnect=False)
    yield connected
    await connected.close()


@pytest.fixture
async def client3(cluster: ProcessCluster) -> AsyncIterator[Client]:
    """A client of ``n1`` once the meta group knows all three servers (see :func:`connect`)."""
    async for connected in connect(cluster):
        yield connected
