"""Push and ordered consumers."""

from __future__ import annotations

import asyncio

import pytest
from nats.errors import TimeoutError as NatsTimeoutError


async def setup(js, count: int) -> None:
    await js.add_stream(name="S", subjects=["s.*"])
    for i in range(count):
        await js.publish("s.a", f"m{i}".encode())


async def test_push_with_callback(js):
    await setup(js, 5)
    got: list[bytes] = []
    done = asyncio.Event()

    async def handler(msg):
        got.append(msg.data)
        await msg.ack()
        if len(got) == 5:
            done.set()

    await js.subscribe("s.a", durable="p", cb=handler)
    await asyncio.wait_for(done.wait(), 2)
    assert got == [f"m{i}".encode() for i in range(5)]


async def test_push_next_msg(js):
    await setup(js, 2)
    sub = await js.subscribe("s.a", durable="p")
    first = await sub.next_msg(timeout=1)
    second = await sub.next_msg(timeout=1)
    assert [first.data, second.data] == [b"m0", b"m1"]
    await first.ack()
    await second.ack()


@pytest.mark.waits(0.1)
async def test_push_next_msg_times_out(js):
    await setup(js, 0)
    sub = await js.subscribe("s.a", durable="p")
    with pytest.raises(NatsTimeoutError):
        await sub.next_msg(timeout=0.1)


async def test_push_gets_new_messages(js):
    await setup(js, 0)
    sub = await js.subscribe("s.a", durable="p")
    await js.publish("s.a", b"later")
    msg = await sub.next_msg(timeout=1)
    assert msg.data == b"later"
    await msg.ack()


async def test_ephemeral_push(js):
    await setup(js, 3)
    sub = await js.subscribe("s.a")
    msgs = [await sub.next_msg(timeout=1) for _ in range(3)]
    assert [m.data for m in msgs] == [b"m0", b"m1", b"m2"]


async def test_deliver_new_only(js):
    await setup(js, 3)
    sub = await js.subscribe("s.a", deliver_policy="new")
    await js.publish("s.a", b"fresh")
    msg = await sub.next_msg(timeout=1)
    assert msg.data == b"fresh"


async def test_queue_push_consumer(js):
    await setup(js, 0)
    seen = []
    all_seen = asyncio.Event()

    async def worker(msg):
        await msg.ack()
        seen.append(int(msg.data))
        if len(seen) == 10:
            all_seen.set()

    await js.subscribe("s.a", queue="workers", durable="workers", cb=worker)
    await js.subscribe("s.a", queue="workers", durable="workers", cb=worker)
    for i in range(10):
        await js.publish("s.a", str(i).encode())
    await asyncio.wait_for(all_seen.wait(), timeout=2)
    await asyncio.sleep(0.01)  # no message comes twice
    assert sorted(seen) == list(range(10))


async def test_ordered_consumer(js):
    await setup(js, 10)
    sub = await js.subscribe("s.a", ordered_consumer=True)
    msgs = [await sub.next_msg(timeout=1) for _ in range(10)]
    assert [m.data for m in msgs] == [f"m{i}".encode() for i in range(10)]


async def test_ordered_consumer_sees_new_messages(js):
    await setup(js, 1)
    sub = await js.subscribe("s.a", ordered_consumer=True)
    assert (await sub.next_msg(timeout=1)).data == b"m0"
    await js.publish("s.a", b"next")
    assert (await sub.next_msg(timeout=1)).data == b"next"


async def test_push_unsubscribe_keeps_durable(js):
    await setup(js, 1)
    sub = await js.subscribe("s.a", durable="keep")
    msg = await sub.next_msg(timeout=1)
    await msg.ack()
    await sub.unsubscribe()
    info = await js.consumer_info("S", "keep")
    assert info.name == "keep"
