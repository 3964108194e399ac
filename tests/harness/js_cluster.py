"""JetStream clusters of either kind: a connection that stays on one node, a stream placed once, peer ids."""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from collections.abc import AsyncIterator
from typing import Any

import nats
from nats.aio.client import Client

from tests.harness.js import api
from tests.harness.wait import eventually

Cluster = Any  # a FakeCluster or a RealCluster: urls, url(i), kill(i), restart(i)
ELECTION = 30.0  # seconds a new leader may take after a crash (nats-server: about 5, its Raft timers 4-9 s, more on a busy machine)
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def peer_of(node: str) -> str:
    """nats-server's 8-character peer id of a node name."""
    return "".join(BASE62[byte % 62] for byte in hashlib.sha256(node.encode()).digest()[:8])


def unique(prefix: str) -> str:
    return f"{prefix}{secrets.token_hex(3).upper()}"


async def quiet(_: Exception) -> None:
    """Connection errors are expected here: nodes die on purpose."""


@contextlib.asynccontextmanager
async def on_node(cluster: Cluster, index: int) -> AsyncIterator[Client]:
    """A connection to one node that stays there (no reconnecting to another)."""
    nc = await nats.connect(cluster.url(index), allow_reconnect=False, error_cb=quiet)
    try:
        yield nc
    finally:
        await nc.close()


async def create(nc: Client, name: str, **config: Any) -> dict:
    """Create stream ``name``; a busy nats-server answers "no suitable peers" until every node has reported in."""
    body = {"name": name, "subjects": [f"{name}.>"], **config}

    async def attempt() -> dict:
        return await api(nc, f"$JS.API.STREAM.CREATE.{name}", body)

    def placed(reply: dict) -> bool:
        return reply.get("error", {}).get("description") != NO_PEERS

    reply = await eventually(attempt, placed, what=f"peers to place {name}", timeout=ELECTION, interval=0.25)
    assert "error" not in reply, reply
    return reply


NO_PEERS = "no suitable peers for placement"
PEER_KEYS = (
    ["name", "current", "active", "peer"],
    ["name", "current", "active", "lag", "peer"],
)  # a replica or peer entry
