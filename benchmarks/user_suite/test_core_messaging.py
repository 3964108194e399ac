"""Core NATS alongside JetStream: request/reply, queue groups, wildcards."""

from __future__ import annotations

import asyncio

import pytest
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError


async def test_request_reply(fakejs_client):
    async def echo(msg):
        await msg.respond(msg.data.upper())

    await fakejs_client.subscribe("svc.echo", cb=echo)
    reply = await fakejs_client.request("svc.echo", b"hi", timeout=1)
    assert reply.data == b"HI"


@pytest.mark.parametrize("count", [1, 10, 50])
async def test_many_requests(fakejs_client, count):
    async def add_one(msg):
        await msg.respond(str(int(msg.data) + 1).encode())

    await fakejs_client.subscribe("svc.inc", cb=add_one)
    replies = await asyncio.gather(
        *(fakejs_client.request("svc.inc", str(i).encode(), timeout=1) for i in range(count))
    )
    assert [int(r.data) for r in replies] == [i + 1 for i in range(count)]


async def test_no_responders(fakejs_client):
    with pytest.raises(NoRespondersError):
        await fakejs_client.request("svc.none", b"", timeout=1)


@pytest.mark.waits(0.1)
async def test_request_timeout(fakejs_client):
    async def ignore(msg):
        pass

    await fakejs_client.subscribe("svc.silent", cb=ignore)
    with pytest.raises(NatsTimeoutError):
        await fakejs_client.request("svc.silent", b"", timeout=0.1)


async def test_queue_group_shares_work(fakejs_client):
    counts = {"a": 0, "b": 0}

    def worker(name):
        async def handle(msg):
            counts[name] += 1
            await msg.respond(name.encode())

        return handle

    await fakejs_client.subscribe("jobs", queue="workers", cb=worker("a"))
    await fakejs_client.subscribe("jobs", queue="workers", cb=worker("b"))
    for _ in range(40):
        await fakejs_client.request("jobs", b"", timeout=1)
    assert counts["a"] + counts["b"] == 40


async def test_queue_group_and_plain_subscriber(fakejs_client):
    plain: list[bytes] = []
    queued: list[bytes] = []

    async def to_plain(msg):
        plain.append(msg.data)

    async def to_queued(msg):
        queued.append(msg.data)

    await fakejs_client.subscribe("evt", cb=to_plain)
    await fakejs_client.subscribe("evt", queue="q", cb=to_queued)
    await fakejs_client.subscribe("evt", queue="q", cb=to_queued)
    for i in range(10):
        await fakejs_client.publish("evt", str(i).encode())
    await fakejs_client.flush()
    for _ in range(100):
        if len(plain) == 10 and len(queued) == 10:
            break
        await asyncio.sleep(0.01)
    assert len(plain) == 10
    assert len(queued) == 10


async def test_wildcard_subscription(fakejs_client):
    sub = await fakejs_client.subscribe("orders.*.created")
    await fakejs_client.publish("orders.eu.created", b"1")
    await fakejs_client.publish("orders.us.shipped", b"2")
    await fakejs_client.publish("orders.us.created", b"3")
    first = await sub.next_msg(timeout=1)
    second = await sub.next_msg(timeout=1)
    assert [first.data, second.data] == [b"1", b"3"]


async def test_headers_round_trip(fakejs_client):
    sub = await fakejs_client.subscribe("h")
    await fakejs_client.publish("h", b"x", headers={"X-Id": "42"})
    msg = await sub.next_msg(timeout=1)
    assert msg.headers["X-Id"] == "42"


async def test_second_client(fakejs_server, fakejs_client):
    import nats

    other = await nats.connect(fakejs_server.url)
    try:
        sub = await other.subscribe("cross")
        await other.flush()
        await fakejs_client.publish("cross", b"hello")
        msg = await sub.next_msg(timeout=1)
        assert msg.data == b"hello"
    finally:
        await other.close()
