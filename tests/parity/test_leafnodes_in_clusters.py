"""Leaf connections and clusters together: a hub that is a cluster, and a cluster whose nodes dial a hub.

Facts pinned, as nats-server behaves:

* **A hub cluster** (nodes A and B, a leaf dialling A): the leaf's interest
  crosses the route as if it were A's own, and B's reaches the leaf, so
  messages and request/reply work both ways, and a queue group with members
  on the leaf and on B gets each message once: the leaf gives its own member
  every message, and A, which has none, prefers B's member (another server
  of its cluster) to the leaf's.
* **One node of a cluster dials a hub** (A does, B does not): A and the hub
  exchange messages, but B is out of it -- a dialling node tells its hub of
  its own interest only (not its routes'), the hub's interest is not told to
  the routes, and what comes from a route is not sent to the hub: requests
  either way between the hub and B find no responders.
* **Both nodes dial the same hub**: each message reaches each subscriber
  once (the hub, told the leafs' cluster in their CONNECT, tells neither of
  the other's interest nor sends one what came from the other), and a queue
  group with members on the hub, A and B gets each message once.

The hub cluster with a leaf and the two nodes dialling one hub are also run
with the cluster of one kind and the other server of the other.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs.targets.cluster import free_port
from tests.harness.cluster import Inbox, group_gets_each_once, interest_routed, requests_answered
from tests.harness.configured import configured_servers
from tests.harness.leaf_clusters import cluster_of, leaf_listen, leaf_remote
from tests.harness.targets import Settings
from tests.harness.wait import WAIT, eventually

pytestmark = pytest.mark.cluster

NO_JETSTREAM = Settings(jetstream=False)
# The cluster of one kind, the server it dials or that dials it of the other.
MIXED = pytest.mark.parametrize(("cluster_kind", "other_kind"), [("fake", "real"), ("real", "fake")])


async def _close(*connections: Client) -> None:
    for nc in connections:
        await nc.close()


async def _each_gets_each_once(publisher: Client, subject: str, inboxes: list[Inbox], count: int = 50) -> None:
    """``count`` numbered messages from ``publisher``: every inbox gets each exactly once."""
    for inbox in inboxes:
        inbox.payloads.clear()
    for n in range(count):
        await publisher.publish(subject, str(n).encode())
    await publisher.flush()
    for inbox in inboxes:
        await eventually(
            lambda inbox=inbox: asyncio.sleep(0, len(inbox.payloads)),  # type: ignore[misc]
            lambda got: got >= count,
            what="every message at every subscriber",
        )
    await asyncio.sleep(0.05)  # a duplicate would arrive right behind
    for inbox in inboxes:
        assert sorted(int(payload) for payload in inbox.payloads) == list(range(count))


async def _answer(msg: Msg) -> None:
    await msg.respond(b"re: " + msg.data)


# -- a hub that is a cluster ------------------------------------------------------------------------


async def test_a_leaf_on_one_hub_node_reaches_the_other_node(target_kind: str, tmp_path: Path) -> None:
    await _leaf_on_one_hub_node(target_kind, target_kind, tmp_path)


@MIXED
async def test_a_leaf_of_the_other_kind_on_one_hub_node(cluster_kind: str, other_kind: str, tmp_path: Path) -> None:
    await _leaf_on_one_hub_node(cluster_kind, other_kind, tmp_path)


async def _leaf_on_one_hub_node(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    port = free_port()
    async with (
        cluster_of(hub_kind, tmp_path, [leaf_listen(port), ""]) as hub,
        configured_servers(leaf_kind, tmp_path, NO_JETSTREAM) as start,
    ):
        leaf = await start(leaf_remote(port))
        leaf_client, node_b = await nats.connect(leaf.url), await nats.connect(hub.url(1))
        for publisher, subscriber in ((node_b, leaf_client), (leaf_client, node_b)):
            subject = f"lc.{secrets.token_hex(4)}"
            inbox = Inbox()
            await subscriber.subscribe(subject, cb=inbox.add)
            await interest_routed(publisher, subscriber)
            await _each_gets_each_once(publisher, subject, [inbox])
        await requests_answered(leaf_client, node_b, f"svc.{secrets.token_hex(4)}")
        await requests_answered(node_b, leaf_client, f"svc.{secrets.token_hex(4)}")
        await _close(leaf_client, node_b)


async def test_a_queue_group_shared_by_a_leaf_and_the_other_hub_node(target_kind: str, tmp_path: Path) -> None:
    await _queue_group_on_a_leaf_and_a_hub_node(target_kind, target_kind, tmp_path)


@MIXED
async def test_a_queue_group_shared_by_a_leaf_of_the_other_kind(
    cluster_kind: str, other_kind: str, tmp_path: Path
) -> None:
    await _queue_group_on_a_leaf_and_a_hub_node(cluster_kind, other_kind, tmp_path)


async def _queue_group_on_a_leaf_and_a_hub_node(hub_kind: str, leaf_kind: str, tmp_path: Path) -> None:
    port = free_port()
    async with (
        cluster_of(hub_kind, tmp_path, [leaf_listen(port), ""]) as hub,
        configured_servers(leaf_kind, tmp_path, NO_JETSTREAM) as start,
    ):
        leaf = await start(leaf_remote(port))
        leaf_client, node_a, node_b = (
            await nats.connect(leaf.url),
            await nats.connect(hub.url(0)),
            await nats.connect(hub.url(1)),
        )
        subject = f"work.{secrets.token_hex(4)}"
        members = [Inbox(), Inbox()]
        for nc, inbox in zip((leaf_client, node_b), members, strict=True):
            await nc.subscribe(subject, queue="workers", cb=inbox.add)
        for publisher in (node_a, node_b, leaf_client):
            await interest_routed(publisher, leaf_client, node_b)
        # The leaf's server gives its own member every message; A, which has none, another server's before a leaf's.
        for publisher, taker in ((node_a, 1), (node_b, None), (leaf_client, 0)):
            for inbox in members:
                inbox.payloads.clear()
            await group_gets_each_once(publisher, subject, members, count=100)
            if taker is not None:
                assert [len(inbox.payloads) for inbox in members] == [100 if n == taker else 0 for n in range(2)]
        await _close(leaf_client, node_a, node_b)


# -- a cluster whose nodes dial a hub ---------------------------------------------------------------


async def test_only_the_dialling_node_of_a_cluster_exchanges_with_the_hub(target_kind: str, tmp_path: Path) -> None:
    port = free_port()
    async with (
        configured_servers(target_kind, tmp_path, NO_JETSTREAM) as start,
    ):
        hub = await start(leaf_listen(port))
        async with cluster_of(target_kind, tmp_path, [leaf_remote(port), ""]) as cluster:
            hub_client, node_a, node_b = (
                await nats.connect(hub.url),
                await nats.connect(cluster.url(0)),
                await nats.connect(cluster.url(1)),
            )
            await requests_answered(hub_client, node_a, f"svc.{secrets.token_hex(4)}")
            await requests_answered(node_a, hub_client, f"svc.{secrets.token_hex(4)}")
            # A responder on B: known on A, never told to the hub.
            on_b = f"svc.b.{secrets.token_hex(4)}"
            await node_b.subscribe(on_b, cb=_answer)
            await interest_routed(node_a, node_b)
            await interest_routed(hub_client, node_a)
            with pytest.raises(nats.errors.NoRespondersError):
                await hub_client.request(on_b, b"", timeout=WAIT)
            # A responder on the hub: known on A, never told to B.
            on_hub = f"svc.hub.{secrets.token_hex(4)}"
            await hub_client.subscribe(on_hub, cb=_answer)
            await interest_routed(node_a, hub_client)
            await interest_routed(node_b, node_a)
            assert (await node_a.request(on_hub, b"a", timeout=WAIT)).data == b"re: a"
            with pytest.raises(nats.errors.NoRespondersError):
                await node_b.request(on_hub, b"", timeout=WAIT)
            await _close(hub_client, node_a, node_b)


async def test_both_nodes_dialling_one_hub_deliver_each_message_once(target_kind: str, tmp_path: Path) -> None:
    await _both_nodes_dial_one_hub(target_kind, target_kind, tmp_path)


@MIXED
async def test_both_nodes_dialling_a_hub_of_the_other_kind(cluster_kind: str, other_kind: str, tmp_path: Path) -> None:
    await _both_nodes_dial_one_hub(cluster_kind, other_kind, tmp_path)


async def _both_nodes_dial_one_hub(cluster_kind: str, hub_kind: str, tmp_path: Path) -> None:
    port = free_port()
    async with configured_servers(hub_kind, tmp_path, NO_JETSTREAM) as start:
        hub = await start(leaf_listen(port))
        async with cluster_of(cluster_kind, tmp_path, [leaf_remote(port), leaf_remote(port)]) as cluster:
            clients = [await nats.connect(url) for url in (hub.url, cluster.url(0), cluster.url(1))]
            subject = f"once.{secrets.token_hex(4)}"
            inboxes = [Inbox() for _ in clients]
            for nc, inbox in zip(clients, inboxes, strict=True):
                await nc.subscribe(subject, cb=inbox.add)
            for publisher in clients:
                await interest_routed(publisher, *[nc for nc in clients if nc is not publisher])
            for publisher in clients:
                await _each_gets_each_once(publisher, subject, inboxes)
            work = f"work.{secrets.token_hex(4)}"
            members = [Inbox() for _ in clients]
            for nc, inbox in zip(clients, members, strict=True):
                await nc.subscribe(work, queue="workers", cb=inbox.add)
            for publisher in clients:
                await interest_routed(publisher, *[nc for nc in clients if nc is not publisher])
            for publisher in clients:
                for inbox in members:
                    inbox.payloads.clear()
                await group_gets_each_once(publisher, work, members, count=100)
            await _close(*clients)
