"""Core NATS through an unchanged nats-py client, on both targets."""

from __future__ import annotations

import asyncio

import nats
import pytest
from nats.errors import NoRespondersError, TimeoutError

from tests.harness.targets import Target
from tests.harness.wait import WAIT, eventually


async def test_publish_subscribe(target: Target) -> None:
    nc = await nats.connect(target.url)
    sub = await nc.subscribe("greet.*")
    await nc.publish("greet.joe", b"hello")
    await nc.publish("other", b"ignored")
    msg = await sub.next_msg(timeout=WAIT)
    assert (msg.subject, msg.data) == ("greet.joe", b"hello")
    with pytest.raises(TimeoutError):
        await sub.next_msg(timeout=0.1)
    await nc.close()


async def test_headers_round_trip(target: Target) -> None:
    nc = await nats.connect(target.url)
    sub = await nc.subscribe("h")
    await nc.publish("h", b"body", headers={"X-One": "1", "X-Two": "two words"})
    msg = await sub.next_msg(timeout=WAIT)
    assert msg.data == b"body"
    assert msg.headers == {"X-One": "1", "X-Two": "two words"}
    await nc.close()


async def test_request_reply(target: Target) -> None:
    nc = await nats.connect(target.url)

    async def handler(msg):
        await msg.respond(msg.data.upper())

    await nc.subscribe("svc.upper", cb=handler)
    reply = await nc.request("svc.upper", b"abc", timeout=WAIT)
    assert reply.data == b"ABC"
    await nc.close()


async def test_no_responders(target: Target) -> None:
    nc = await nats.connect(target.url)
    with pytest.raises(NoRespondersError):
        await nc.request("nobody.home", b"?", timeout=WAIT)
    await nc.close()


async def test_queue_group_delivers_each_message_once(target: Target) -> None:
    nc = await nats.connect(target.url)
    got: dict[str, list[bytes]] = {"a": [], "b": []}

    async def worker(name: str):
        async def cb(msg):
            got[name].append(msg.data)

        return cb

    await nc.subscribe("jobs", queue="workers", cb=await worker("a"))
    await nc.subscribe("jobs", queue="workers", cb=await worker("b"))
    plain = await nc.subscribe("jobs")
    for i in range(50):
        await nc.publish("jobs", str(i).encode())
    await nc.flush()
    for _ in range(50):
        await plain.next_msg(timeout=WAIT)
    # The queue members' copies may come behind the plain subscriber's last one.
    await eventually(lambda: asyncio.sleep(0, got["a"] + got["b"]), lambda d: len(d) >= 50, what="50 queue deliveries")
    delivered = got["a"] + got["b"]
    assert sorted(delivered, key=int) == [str(i).encode() for i in range(50)]
    await nc.close()


async def test_auto_unsubscribe(target: Target) -> None:
    nc = await nats.connect(target.url)
    sub = await nc.subscribe("limited")
    await sub.unsubscribe(limit=3)
    for i in range(5):
        await nc.publish("limited", str(i).encode())
    await nc.flush()
    received = []
    for _ in range(3):
        received.append((await sub.next_msg(timeout=WAIT)).data)
    assert received == [b"0", b"1", b"2"]
    await nc.close()


async def test_echo_off(target: Target) -> None:
    quiet = await nats.connect(target.url, no_echo=True)
    other = await nats.connect(target.url)
    mine = await quiet.subscribe("echo")
    theirs = await other.subscribe("echo")
    await quiet.flush()
    await other.flush()
    await quiet.publish("echo", b"x")
    await quiet.flush()
    assert (await theirs.next_msg(timeout=WAIT)).data == b"x"
    with pytest.raises(TimeoutError):
        await mine.next_msg(timeout=0.2)
    await quiet.close()
    await other.close()


async def test_large_payload_and_crlf(target: Target) -> None:
    nc = await nats.connect(target.url)
    sub = await nc.subscribe("big")
    body = (b"\r\n" + bytes(range(256))) * 4000
    assert len(body) < nc.max_payload
    await nc.publish("big", body)
    msg = await sub.next_msg(timeout=5)
    assert msg.data == body
    await nc.close()


async def test_payload_over_max_is_refused_by_client(target: Target) -> None:
    nc = await nats.connect(target.url)
    assert nc.max_payload == 1048576
    with pytest.raises(nats.errors.MaxPayloadError):
        await nc.publish("big", b"x" * (1048576 + 1))
    await nc.close()


async def test_drain_delivers_pending_then_closes(target: Target) -> None:
    nc = await nats.connect(target.url)
    seen = []

    async def cb(msg):
        seen.append(msg.data)

    await nc.subscribe("d", cb=cb)
    await nc.flush()
    pub = await nats.connect(target.url)
    for i in range(20):
        await pub.publish("d", str(i).encode())
    await pub.flush()
    await asyncio.sleep(0.05)
    await nc.drain()
    assert seen == [str(i).encode() for i in range(20)]
    assert nc.is_closed
    await pub.close()


async def test_server_info_seen_by_client(target: Target) -> None:
    nc = await nats.connect(target.url)
    info = nc._server_info
    assert info["version"] == "2.15.1"
    assert info["headers"] is True
    assert nc.connected_server_version.major == 2
    assert nc.connected_server_version.minor == 15
    await nc.close()


async def test_many_subscribers_fan_out(target: Target) -> None:
    nc = await nats.connect(target.url)
    subs = [await nc.subscribe("fan") for _ in range(10)]
    await nc.publish("fan", b"all")
    for sub in subs:
        assert (await sub.next_msg(timeout=WAIT)).data == b"all"
    await nc.close()
