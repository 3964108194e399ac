"""Replicated groups on routed in-process servers: short Raft timings, and waiting for what they agree on.

The groups run on the real clock with elections within a second and a lost
quorum noticed after one; :func:`wait` polls a plain condition (a leader
known, an entry applied everywhere) until it holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fakejs.jetstream.raft import RaftSettings

FAST = RaftSettings(
    election_timeout_min=0.3,
    election_timeout_max=0.6,
    heartbeat_interval=0.05,
    lost_quorum_interval=1.0,
    transfer_timeout=0.5,
)
WAIT = 15.0  # real seconds a condition may take before the test gives up


async def wait(condition: Callable[[], Any], timeout: float = WAIT) -> Any:
    """Wait (real time) until ``condition()`` is truthy; returns its value."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (value := condition()):
        if loop.time() > deadline:
            raise TimeoutError(f"not met within {timeout} s: {condition}")
        await asyncio.sleep(0.005)
    return value


def replicated_cluster(size: int = 3, store: Path | None = None, **settings: Any) -> Any:
    """An in-process cluster whose nodes run JetStream replicated across them, each on its own store: a
    directory of ``store`` named after the node (kept over a restart), else one fakejs makes and removes."""
    # Imported here: the server layer loads only for the tests that start servers
    from fakejs.core.options import ReplicatedJetStream
    from fakejs.server.local_cluster import Cluster

    peers = tuple(f"n{index + 1}" for index in range(size))
    cluster = Cluster(size=size, jetstream_replicated=ReplicatedJetStream(peers, FAST), **settings)
    if store is not None:
        for server in cluster.servers:
            server.options.store_dir = str(store / server.broker.name)
    return cluster
