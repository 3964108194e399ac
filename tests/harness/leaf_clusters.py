"""Clusters whose nodes take part in leaf connections: each node of one kind, started from its own configuration."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from fakejs.targets.cluster import ProcessCluster
from fakejs.targets.cluster_probe import wait_connected
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON


def leaf_remote(port: int) -> str:
    """A ``leafnodes`` block dialling ``127.0.0.1:port`` (redialling quickly)."""
    return f'leafnodes {{ reconnect: "100ms", remotes [ {{ url: "nats://127.0.0.1:{port}" }} ] }}\n'


def leaf_listen(port: int) -> str:
    """A ``leafnodes`` block listening on ``127.0.0.1:port``."""
    return f'leafnodes {{ listen: "127.0.0.1:{port}" }}\n'


@asynccontextmanager
async def cluster_of(kind: str, tmp_path: Path, configs: Sequence[str]) -> AsyncIterator[ProcessCluster]:
    """A cluster of ``kind`` with node i started from ``configs[i]``; yielded once every route is up."""
    if kind == "real" and REAL_BINARY is None:
        pytest.skip(REAL_MISSING_REASON)
    cluster = ProcessCluster([kind] * len(configs))

    def start() -> None:
        for index, text in enumerate(configs):
            path = tmp_path / f"{cluster.name}-{index}.conf"
            path.write_text(text)
            routes = [cluster.seed_route] if index else []
            cluster.nodes.append(cluster.node(kind, index, routes, ["-c", str(path)]).start())
        wait_connected(cluster.nodes)

    try:
        await asyncio.to_thread(start)
        yield cluster
    finally:
        cluster.stop()
