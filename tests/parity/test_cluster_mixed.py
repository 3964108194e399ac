"""A mixed cluster: a real nats-server node and a fakejs node joined by a route, each as the seed in turn.

The route protocol is the contract between the two: interest (RS+/RS-,
with queue weights), messages (RMSG, HMSG) and the gossip each sends the
other.  Both ways, core NATS must behave as in a cluster of nats-servers:

- a message published on either node reaches subscribers on both, once;
- a queue group with members on both nodes gets each message once, and
  both members get a share (nats-server prefers no member by node);
- request/reply crosses the route both ways;
- a header block arrives byte for byte (repeated keys, spacing, reply subject).

Not parametrized over targets: it needs the real binary and fakejs at once.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from tests.harness.cluster import (
    Cluster,
    Inbox,
    group_gets_each_once,
    interest_routed,
    requests_answered,
    start_cluster,
)
from tests.harness.raw import RawClient
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON
from tests.harness.wait import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)]

NODE_KINDS = ("real", "fake")  # the two kinds of node of the mixed cluster


@pytest.fixture(scope="module", params=["real-seed", "fake-seed"])
def mixed(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """Two nodes, one of each kind; the seed (node 0) is the real one or the fakejs one."""
    kinds = list(NODE_KINDS) if request.param == "real-seed" else list(reversed(NODE_KINDS))
    with start_cluster(kinds) as cluster:
        yield cluster


def token() -> str:
    return secrets.token_hex(4)


async def both_clients(cluster: Cluster) -> tuple[Client, Client]:
    return await nats.connect(cluster.url(0)), await nats.connect(cluster.url(1))


@pytest.mark.parametrize("publisher_index", [0, 1])
async def test_messages_cross_the_route_both_ways(mixed: Cluster, publisher_index: int) -> None:
    connections = await both_clients(mixed)
    publisher = connections[publisher_index]
    base = f"mix.{token()}"
    inboxes = [Inbox(), Inbox(), Inbox()]
    try:
        await connections[0].subscribe(f"{base}.x", cb=inboxes[0].add)
        await connections[1].subscribe(f"{base}.*", cb=inboxes[1].add)
        await connections[1].subscribe(f"{base}.>", cb=inboxes[2].add)  # a second match on the same node
        await interest_routed(publisher, *connections)
        sent = [str(n).encode() for n in range(20)] + [b"end"]
        for payload in sent:
            await publisher.publish(f"{base}.x", payload)
        await publisher.flush()
        await eventually(
            lambda: asyncio.sleep(0, [inbox.payloads[-1:] for inbox in inboxes]),
            lambda lasts: all(last == [b"end"] for last in lasts),
            what="the last message on every subscription",
        )
        assert [inbox.payloads for inbox in inboxes] == [sent] * 3
    finally:
        for nc in connections:
            await nc.close()


@pytest.mark.parametrize("publisher_index", [0, 1])
async def test_queue_group_across_both_nodes(mixed: Cluster, publisher_index: int) -> None:
    first, second = await both_clients(mixed)
    extra = await nats.connect(mixed.url(1))  # two members on the second node: a queue weight of 2
    publisher = (first, second)[publisher_index]
    subject = f"mixq.{token()}"
    members = [Inbox(), Inbox(), Inbox()]
    try:
        for nc, inbox in zip((first, second, extra), members, strict=True):
            await nc.subscribe(subject, queue="workers", cb=inbox.add)
        await interest_routed(publisher, first, second, extra)
        await group_gets_each_once(publisher, subject, members)
        assert members[0].payloads and (members[1].payloads or members[2].payloads)
    finally:
        for nc in (first, second, extra):
            await nc.close()


@pytest.mark.parametrize("requester_index", [0, 1])
async def test_request_reply_both_ways(mixed: Cluster, requester_index: int) -> None:
    connections = await both_clients(mixed)
    requester, responder = connections[requester_index], connections[1 - requester_index]
    subject = f"mixsvc.{token()}"
    try:
        await requests_answered(requester, responder, subject)
    finally:
        for nc in connections:
            await nc.close()


@pytest.mark.parametrize("sender_index", [0, 1])
async def test_headers_cross_the_route_byte_for_byte(mixed: Cluster, sender_index: int) -> None:
    receiver_node, sender_node = mixed.nodes[1 - sender_index], mixed.nodes[sender_index]
    subject = f"mixhdr.{token()}"
    receiver = await RawClient.connect("127.0.0.1", receiver_node.port)
    sender = await RawClient.connect("127.0.0.1", sender_node.port)
    publisher = await nats.connect(sender_node.url)
    watcher = await nats.connect(receiver_node.url)
    try:
        connect = b'CONNECT {"verbose":false,"pedantic":false,"protocol":1,"headers":true}\r\n'
        await receiver.send(connect + f"SUB {subject} 7\r\nPING\r\n".encode())
        await receiver.read_until(b"PONG\r\n")
        await interest_routed(publisher, watcher)  # the node's interest in the raw SUB came first
        block = b"NATS/1.0\r\nA: 1\r\nA: 2\r\nX-Spaced:  two  words \r\nb: lower\r\n\r\n"
        body = b"payload"
        sizes = f"{len(block)} {len(block) + len(body)}"
        await sender.send(connect + f"HPUB {subject} r.{subject} {sizes}\r\n".encode() + block + body + b"\r\nPING\r\n")
        await sender.read_until(b"PONG\r\n")
        expected = f"HMSG {subject} 7 r.{subject} {sizes}\r\n".encode() + block + body + b"\r\n"
        data = await receiver.read_until(expected)
        assert data.endswith(expected), data
        assert data.count(b"HMSG") == 1
    finally:
        await receiver.close()
        await sender.close()
        await publisher.close()
        await watcher.close()


@pytest.mark.parametrize("kinds", [("real", "fake", "real"), ("fake", "real", "fake")])
def test_gossip_meshes_three_mixed_nodes(kinds: tuple[str, str, str]) -> None:
    """Nodes 1 and 2 are routed to the seed only: the seed's gossip has them dial each other, across kinds."""
    with start_cluster(list(kinds)) as cluster:  # ready: a message crossed every pair of nodes

        async def across() -> None:
            first, last = await nats.connect(cluster.url(1)), await nats.connect(cluster.url(2))
            try:
                got: list[bytes] = []

                async def record(msg: Msg) -> None:
                    got.append(msg.data)

                await last.subscribe("gossip.check", cb=record)
                await interest_routed(first, last)
                await first.publish("gossip.check", b"hello")
                await eventually(lambda: asyncio.sleep(0, got), lambda g: g == [b"hello"], what="the message")
            finally:
                await first.close()
                await last.close()

        asyncio.run(across())
