"""Core NATS across a cluster: routes carry messages, interest, queue groups, replies and client URLs.

Three nodes of one kind (the second and third routed to the first only, so
they meet through its gossip), nats-py clients on different nodes, on both
targets.  Facts pinned (nats-server 2.15.1):

- a message published on one node reaches every matching subscription on
  every node exactly once, however many subscriptions of one connection or
  one node match it (a route carries it once per node, the node fans out);
- a queue group spread over nodes gets each message exactly once
  cluster-wide, and the member on the publisher's node is not preferred:
  over 300 messages every member gets a share (about a third each);
- request/reply and headers cross routes unchanged (the header block's
  bytes, repeated keys and spacing included);
- unsubscribing (or closing) the only subscriber on one node removes the
  interest on the others: a request through them then gets 503 no responders;
- a client told the other nodes (``connect_urls``) reconnects to one of
  them when its node dies and keeps receiving;
- INFO lists ``connect_urls`` as ``host:port`` of every node's client
  listener, this node's first; a client that sent CONNECT with
  ``"protocol":1`` gets a new INFO when a node joins or leaves, one with
  ``"protocol":0`` none; ``--no_advertise`` leaves ``connect_urls`` out;
- ``/varz`` lists the same ``connect_urls`` (after ``port``, before
  ``max_connections``), and leaves them out with ``--no_advertise``;
- ``$SYS.REQ.USER.INFO`` is answered by the node the client is on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import urllib.request
from collections.abc import AsyncIterator, Callable
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import NoRespondersError, TimeoutError

from tests.harness.cluster import Cluster, Inbox, group_gets_each_once, interest_routed
from tests.harness.raw import RawClient
from tests.harness.wait import WAIT, eventually

pytestmark = pytest.mark.cluster

MakeCluster = Callable[..., Cluster]


def token() -> str:
    return secrets.token_hex(4)


async def clients(cluster: Cluster, *indexes: int) -> list[Client]:
    return [await nats.connect(cluster.url(index)) for index in indexes]


@contextlib.asynccontextmanager
async def connected_to(url: str) -> AsyncIterator[Client]:
    nc = await nats.connect(url)
    try:
        yield nc
    finally:
        await nc.close()


async def close_all(connections: list[Client]) -> None:
    for nc in connections:
        await nc.close()


async def test_publish_reaches_every_matching_subscription_once(cluster3: Cluster) -> None:
    a, b, c, c2 = await clients(cluster3, 0, 1, 2, 2)
    base = f"fan.{token()}"
    inboxes = {name: Inbox() for name in ("a", "b", "b-star", "b-gt", "c", "c-gt", "c2")}
    try:
        await a.subscribe(f"{base}.x", cb=inboxes["a"].add)
        await b.subscribe(f"{base}.x", cb=inboxes["b"].add)
        await b.subscribe(f"{base}.*", cb=inboxes["b-star"].add)  # the same connection, a second match
        await b.subscribe(f"{base}.>", cb=inboxes["b-gt"].add)  # and a third
        await c.subscribe(f"{base}.>", cb=inboxes["c-gt"].add)
        await c.subscribe(f"{base}.x", cb=inboxes["c"].add)
        await c2.subscribe(f"{base}.*", cb=inboxes["c2"].add)  # another connection on the same node
        await interest_routed(a, b, c, c2)
        sent = [str(n).encode() for n in range(20)] + [b"end"]
        for payload in sent:
            await a.publish(f"{base}.x", payload)
        await a.flush()
        await eventually(
            lambda: asyncio.sleep(0, [inbox.payloads[-1:] for inbox in inboxes.values()]),
            lambda lasts: all(last == [b"end"] for last in lasts),
            what="the last message on every subscription",
        )
        assert {name: inbox.payloads for name, inbox in inboxes.items()} == {name: sent for name in inboxes}
    finally:
        await close_all([a, b, c, c2])


async def test_messages_flow_from_every_node_to_every_node(cluster3: Cluster) -> None:
    connections = await clients(cluster3, 0, 1, 2)
    subject = f"mesh.{token()}"
    inboxes = [Inbox() for _ in connections]
    try:
        for nc, inbox in zip(connections, inboxes, strict=True):
            await nc.subscribe(subject, cb=inbox.add)
        for publisher in connections:
            await interest_routed(publisher, *connections)
        for index, publisher in enumerate(connections):
            await publisher.publish(subject, f"from {index}".encode())
            await publisher.flush()
        expected = sorted(f"from {index}".encode() for index in range(3))
        await eventually(
            lambda: asyncio.sleep(0, [sorted(inbox.payloads) for inbox in inboxes]),
            lambda seen: seen == [expected] * 3,
            what="every node's message on every node",
        )
    finally:
        await close_all(connections)


async def test_queue_group_delivers_each_message_once_cluster_wide(cluster3: Cluster) -> None:
    a, b, c = await clients(cluster3, 0, 1, 2)
    subject = f"work.{token()}"
    members = [Inbox() for _ in range(3)]
    plain = Inbox()
    try:
        for nc, inbox in zip((a, b, c), members, strict=True):
            await nc.subscribe(subject, queue="workers", cb=inbox.add)
        await b.subscribe(subject, cb=plain.add)  # not in the group: gets every message
        await interest_routed(a, a, b, c)
        await interest_routed(b, a, b, c)
        await group_gets_each_once(b, subject, members)
        await eventually(lambda: asyncio.sleep(0, len(plain.payloads)), lambda n: n == 300, what="the plain sub")
        # no preference for the member on the publisher's node: every member gets a share
        assert all(inbox.payloads for inbox in members), [len(inbox.payloads) for inbox in members]

    finally:
        await close_all([a, b, c])


async def test_queue_group_members_on_other_nodes_share_the_load(cluster3: Cluster) -> None:
    a, b, c, c2 = await clients(cluster3, 0, 1, 2, 2)
    subject = f"share.{token()}"
    members = [Inbox() for _ in range(3)]
    try:
        for nc, inbox in zip((b, c, c2), members, strict=True):
            await nc.subscribe(subject, queue="workers", cb=inbox.add)
        await interest_routed(a, b, c, c2)
        await group_gets_each_once(a, subject, members)
        assert all(inbox.payloads for inbox in members), [len(inbox.payloads) for inbox in members]
    finally:
        await close_all([a, b, c, c2])


async def test_request_reply_across_nodes(cluster3: Cluster) -> None:
    a, c = await clients(cluster3, 0, 2)
    subject = f"svc.{token()}"
    try:

        async def respond(msg: Msg) -> None:
            await msg.respond(b"re: " + msg.data)

        await c.subscribe(subject, cb=respond)
        await interest_routed(a, c)
        for n in range(5):
            reply = await a.request(subject, f"q{n}".encode(), timeout=WAIT)
            assert reply.data == f"re: q{n}".encode()
        reply = await c.request(subject, b"local", timeout=WAIT)
        assert reply.data == b"re: local"
    finally:
        await close_all([a, c])


async def test_headers_cross_routes_byte_for_byte(cluster3: Cluster) -> None:
    subject = f"hdr.{token()}"
    receiver = await RawClient.connect("127.0.0.1", cluster3.nodes[1].port)
    sender = await RawClient.connect("127.0.0.1", cluster3.nodes[0].port)
    canary = await nats.connect(cluster3.url(0))
    try:
        connect = b'CONNECT {"verbose":false,"pedantic":false,"protocol":1,"headers":true}\r\n'
        await receiver.send(connect + f"SUB {subject} 7\r\nPING\r\n".encode())
        await receiver.read_until(b"PONG\r\n")
        watcher = await nats.connect(cluster3.url(1))
        await interest_routed(canary, watcher)  # the raw SUB came first on node 1: its interest is routed too
        await watcher.close()
        block = b"NATS/1.0\r\nA: 1\r\nA: 2\r\nX-Spaced:  two  words \r\nb: lower\r\n\r\n"
        body = b"payload"
        await sender.send(
            connect
            + f"HPUB {subject} reply.{subject} {len(block)} {len(block) + len(body)}\r\n".encode()
            + block
            + body
            + b"\r\nPING\r\n"
        )
        await sender.read_until(b"PONG\r\n")
        expected = (
            f"HMSG {subject} 7 reply.{subject} {len(block)} {len(block) + len(body)}\r\n".encode()
            + block
            + body
            + b"\r\n"
        )
        data = await receiver.read_until(expected)
        assert data.endswith(expected), data
        assert data.count(b"HMSG") == 1

        # and through nats-py
        a, b = await clients(cluster3, 0, 1)
        sub = await b.subscribe(subject)
        await interest_routed(a, b)
        await a.publish(subject, b"body", headers={"X-One": "1", "X-Two": "two words"})
        msg = await sub.next_msg(timeout=WAIT)
        assert (msg.data, msg.headers) == (b"body", {"X-One": "1", "X-Two": "two words"})
        await close_all([a, b])
    finally:
        await receiver.close()
        await sender.close()
        await canary.close()


@pytest.mark.parametrize("how", ["unsubscribe", "close"])
async def test_losing_the_only_subscriber_removes_interest_everywhere(cluster3: Cluster, how: str) -> None:
    a, b = await clients(cluster3, 0, 1)
    subject = f"gone.{token()}"
    try:

        async def respond(msg: Msg) -> None:
            await msg.respond(b"here")

        sub = await b.subscribe(subject, cb=respond)
        await interest_routed(a, b)
        assert (await a.request(subject, b"", timeout=WAIT)).data == b"here"
        if how == "unsubscribe":
            await sub.unsubscribe()
            await b.flush()
        else:
            await b.close()

        async def outcome() -> str:
            try:
                await a.request(subject, b"", timeout=0.3)
            except NoRespondersError:
                return "no responders"
            except TimeoutError:
                return "lost"  # forwarded while the interest was still there, to a subscriber now gone
            return "answered"

        await eventually(outcome, lambda result: result == "no responders", what="503 from node A")
    finally:
        await close_all([a, b])


async def test_client_of_a_killed_node_reconnects_to_another(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(3)
    reconnected = asyncio.Event()

    async def on_reconnect() -> None:
        reconnected.set()

    nc = await nats.connect(
        cluster.url(1), reconnected_cb=on_reconnect, reconnect_time_wait=0.05, max_reconnect_attempts=-1
    )
    publisher = await nats.connect(cluster.url(0))
    subject = f"survive.{token()}"
    try:
        others = {f"127.0.0.1:{cluster.nodes[index].port}" for index in (0, 2)}
        assert {uri.netloc for uri in nc.discovered_servers} == others
        assert {uri.netloc for uri in nc.servers} == others | {f"127.0.0.1:{cluster.nodes[1].port}"}
        sub = await nc.subscribe(subject)
        await interest_routed(publisher, nc)
        await publisher.publish(subject, b"before")
        assert (await sub.next_msg(timeout=WAIT)).data == b"before"

        await asyncio.to_thread(cluster.kill, 1)
        await asyncio.wait_for(reconnected.wait(), 10)
        assert nc.connected_url is not None and nc.connected_url.netloc in others
        await interest_routed(publisher, nc)  # the subscription was made again on the new node
        await publisher.publish(subject, b"after")
        assert (await sub.next_msg(timeout=WAIT)).data == b"after"

        port = cluster.nodes[1].port
        await asyncio.to_thread(cluster.restart, 1)  # back on its ports, routed to every node again
        assert cluster.nodes[1].port == port
        async with connected_to(cluster.url(1)) as returned:
            await interest_routed(returned, nc)
            await returned.publish(subject, b"from the returned node")
            assert (await sub.next_msg(timeout=WAIT)).data == b"from the returned node"
    finally:
        await nc.close()
        await publisher.close()


# -- connect_urls and asynchronous INFO --------------------------------------------------------


async def raw_client(port: int, protocol: int) -> tuple[RawClient, dict[str, Any]]:
    """A bare client after CONNECT and PING/PONG; returns it (its bytes cleared) and its first INFO."""
    client = await RawClient.connect("127.0.0.1", port)
    await client.read_until(b"\r\n")
    greeting = bytes(client.received)
    await client.send(f'CONNECT {{"verbose":false,"pedantic":false,"protocol":{protocol}}}\r\nPING\r\n'.encode())
    await client.read_until(b"PONG\r\n")
    if protocol >= 1:
        await client.read_until(b'"connect_info":true')  # the INFO after the first PONG
    client.received.clear()
    return client, json.loads(greeting[5 : greeting.index(b" \r\n")])


def info_documents(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[5:-1]) for line in data.split(b"\r\n") if line.startswith(b"INFO ")]


async def next_info(client: RawClient, seen: int, timeout: float = 5.0) -> dict[str, Any]:
    """The INFO after the first ``seen`` ones, answering the server's PINGs while waiting."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(infos := info_documents(bytes(client.received))) <= seen:
        assert loop.time() < deadline, f"no INFO; received {bytes(client.received)!r}"
        if bytes(client.received).endswith(b"PING\r\n"):
            await client.send(b"PONG\r\n")
        await client.read_some(0.05)
    return infos[seen]


async def test_connect_urls_and_async_info_on_join_and_leave(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(3)
    addresses = [node.client_address for node in cluster.nodes]
    modern, first_info = await raw_client(cluster.nodes[0].port, protocol=1)
    legacy, legacy_info = await raw_client(cluster.nodes[0].port, protocol=0)
    try:
        assert first_info["connect_urls"][0] == addresses[0]
        assert set(first_info["connect_urls"]) == set(addresses)
        assert len(first_info["connect_urls"]) == 3
        assert legacy_info["connect_urls"][0] == addresses[0]
        assert set(legacy_info["connect_urls"]) == set(addresses)
        assert first_info["cluster"] == cluster.name

        fourth = await asyncio.to_thread(cluster.add)
        joined = await next_info(modern, 0)
        assert joined["connect_urls"][0] == addresses[0]
        assert set(joined["connect_urls"]) == {*addresses, fourth.client_address}
        assert joined["client_id"] == first_info["client_id"]
        assert "connect_info" not in joined and "remote_account" not in joined

        await asyncio.to_thread(cluster.kill, 2)
        left = await next_info(modern, 1)
        assert set(left["connect_urls"]) == {addresses[0], addresses[1], fourth.client_address}

        await modern.settle(quiet=0.2)
        assert len(info_documents(bytes(modern.received))) == 2
        await legacy.settle(quiet=0.2)
        assert info_documents(bytes(legacy.received)) == []
    finally:
        await modern.close()
        await legacy.close()


async def test_no_advertise_leaves_connect_urls_out(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(2, extra=["--no_advertise"])
    modern, info = await raw_client(cluster.nodes[0].port, protocol=1)
    try:
        assert "connect_urls" not in info
        assert info["cluster"] == cluster.name
        await asyncio.to_thread(cluster.add)
        await modern.settle(quiet=0.3)
        assert info_documents(bytes(modern.received)) == []
        nc = await nats.connect(cluster.url(1))
        assert nc.discovered_servers == []
        await nc.close()
    finally:
        await modern.close()


async def varz(cluster: Cluster, node: int) -> dict[str, Any]:
    url = f"http://127.0.0.1:{cluster.nodes[node].http_port}/varz"
    body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read())
    doc: dict[str, Any] = json.loads(body)
    return doc


async def test_varz_lists_the_client_urls_of_every_node(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(3, monitor=True)
    addresses = [node.client_address for node in cluster.nodes]
    client, info = await raw_client(cluster.nodes[1].port, protocol=0)
    await client.close()
    doc = await eventually(lambda: varz(cluster, 1), lambda d: len(d.get("connect_urls", ())) == 3, what="3 URLs")
    assert doc["connect_urls"][0] == addresses[1]
    assert set(doc["connect_urls"]) == set(addresses) == set(info["connect_urls"])
    keys = list(doc)
    assert keys.index("port") < keys.index("connect_urls") == keys.index("max_connections") - 1


async def test_varz_has_no_connect_urls_without_advertising(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(2, extra=["--no_advertise"], monitor=True)
    doc = await varz(cluster, 0)
    assert doc["cluster"]["name"] == cluster.name and "connect_urls" not in doc


async def test_user_info_is_answered_by_the_clients_own_node(cluster3: Cluster) -> None:
    """``$SYS.REQ.USER.INFO`` is served by each node for its own clients (its interest stays off the routes)."""
    for index in (1, 2):
        async with connected_to(cluster3.url(index)) as nc:
            reply = await nc.request("$SYS.REQ.USER.INFO", b"", timeout=WAIT)
            doc = json.loads(reply.data)
            assert doc["server"]["name"] == cluster3.nodes[index].name
            assert doc["data"] == {"user": "", "account": "$G", "account_name": "$G"}
