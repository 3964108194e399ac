"""Pull consumers: fetch and ack, redelivery, filters, time-outs."""

from __future__ import annotations

import pytest
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

# What a fakejs user writes for a test that waits on the server's timers (pull
# expiries, ack waits): a virtual clock that jumps to the next timer once the
# clients have been quiet for 10 ms.  nats-server ignores the mark and waits.
VIRTUAL_TIME = pytest.mark.fakejs(clock="manual", autojump=0.01)


async def fill(js, count: int, subject: str = "s.a") -> None:
    await js.add_stream(name="S", subjects=["s.*"])
    for i in range(count):
        await js.publish(subject, f"m{i}".encode())


async def test_fetch_and_ack(js):
    await fill(js, 3)
    psub = await js.pull_subscribe("s.a", durable="d")
    msgs = await psub.fetch(3, timeout=1)
    assert [m.data for m in msgs] == [b"m0", b"m1", b"m2"]
    for m in msgs:
        await m.ack()
    info = await js.consumer_info("S", "d")
    assert info.num_ack_pending == 0 or info.num_ack_pending == 3  # acks are async


@pytest.mark.parametrize("batch", [1, 5, 10])
async def test_fetch_batches(js, batch):
    await fill(js, 10)
    psub = await js.pull_subscribe("s.a", durable="d")
    got = 0
    while got < 10:
        msgs = await psub.fetch(batch, timeout=1)
        for m in msgs:
            await m.ack_sync()
        got += len(msgs)
    assert got == 10


async def test_ack_sync_clears_pending(js):
    await fill(js, 2)
    psub = await js.pull_subscribe("s.a", durable="d")
    for m in await psub.fetch(2, timeout=1):
        await m.ack_sync()
    info = await js.consumer_info("S", "d")
    assert info.num_ack_pending == 0
    assert info.num_pending == 0


@pytest.mark.waits(0.1)
async def test_fetch_timeout_on_empty_stream(js):
    await js.add_stream(name="S", subjects=["s.*"])
    psub = await js.pull_subscribe("s.a", durable="d")
    with pytest.raises(NatsTimeoutError):
        await psub.fetch(1, timeout=0.1)


@pytest.mark.waits(0.1)
async def test_fetch_timeout_after_draining(js):
    await fill(js, 1)
    psub = await js.pull_subscribe("s.a", durable="d")
    (msg,) = await psub.fetch(1, timeout=1)
    await msg.ack_sync()
    with pytest.raises(NatsTimeoutError):
        await psub.fetch(1, timeout=0.1)


async def test_partial_batch_returns_what_is_there(js):
    await fill(js, 2)
    psub = await js.pull_subscribe("s.a", durable="d")
    msgs = await psub.fetch(5, timeout=0.5)
    assert len(msgs) == 2


async def test_nak_redelivers(js):
    await fill(js, 1)
    psub = await js.pull_subscribe("s.a", durable="d")
    (msg,) = await psub.fetch(1, timeout=1)
    await msg.nak()
    (again,) = await psub.fetch(1, timeout=1)
    assert again.data == b"m0"
    assert again.metadata.num_delivered == 2
    await again.ack_sync()


@pytest.mark.waits(0.2)
@VIRTUAL_TIME
async def test_ack_wait_redelivers(js):
    await js.add_stream(name="S", subjects=["s.*"])
    await js.publish("s.a", b"x")
    psub = await js.pull_subscribe("s.a", durable="d", config=ConsumerConfig(ack_wait=0.2))
    (msg,) = await psub.fetch(1, timeout=1)
    (again,) = await psub.fetch(1, timeout=2)
    assert again.metadata.sequence.stream == msg.metadata.sequence.stream
    assert again.metadata.num_delivered == 2


@pytest.mark.waits(0.2)
async def test_term_stops_redelivery(js):
    await fill(js, 1)
    psub = await js.pull_subscribe("s.a", durable="d", config=ConsumerConfig(ack_wait=0.1))
    (msg,) = await psub.fetch(1, timeout=1)
    await msg.term()
    with pytest.raises(NatsTimeoutError):  # not even once its ack wait has passed
        await psub.fetch(1, timeout=0.2)


async def test_in_progress_keeps_message(js):
    await fill(js, 1)
    psub = await js.pull_subscribe("s.a", durable="d")
    (msg,) = await psub.fetch(1, timeout=1)
    await msg.in_progress()
    await msg.ack_sync()
    info = await js.consumer_info("S", "d")
    assert info.num_ack_pending == 0


async def test_filter_subject(js):
    await js.add_stream(name="S", subjects=["s.*"])
    await js.publish("s.a", b"a")
    await js.publish("s.b", b"b")
    psub = await js.pull_subscribe("s.b", durable="only-b")
    (msg,) = await psub.fetch(1, timeout=1)
    assert msg.subject == "s.b"


async def test_metadata(js):
    await fill(js, 2)
    psub = await js.pull_subscribe("s.a", durable="d")
    msgs = await psub.fetch(2, timeout=1)
    assert msgs[1].metadata.sequence.stream == 2
    assert msgs[1].metadata.sequence.consumer == 2
    assert msgs[1].metadata.stream == "S"
    assert msgs[1].metadata.consumer == "d"


async def test_deliver_last(js):
    await fill(js, 3)
    psub = await js.pull_subscribe("s.a", durable="d", config=ConsumerConfig(deliver_policy=DeliverPolicy.LAST))
    (msg,) = await psub.fetch(1, timeout=1)
    assert msg.data == b"m2"


async def test_deliver_by_start_sequence(js):
    await fill(js, 5)
    config = ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=4)
    psub = await js.pull_subscribe("s.a", durable="d", config=config)
    msgs = await psub.fetch(5, timeout=0.5)
    assert [m.data for m in msgs] == [b"m3", b"m4"]


async def test_durable_resumes(fakejs_client, js):
    await fill(js, 4)
    psub = await js.pull_subscribe("s.a", durable="d")
    for m in await psub.fetch(2, timeout=1):
        await m.ack_sync()
    await psub.unsubscribe()
    psub = await js.pull_subscribe("s.a", durable="d")
    msgs = await psub.fetch(2, timeout=1)
    assert [m.data for m in msgs] == [b"m2", b"m3"]


async def test_add_and_delete_consumer(js):
    await fill(js, 1)
    await js.add_consumer("S", ConsumerConfig(durable_name="c", ack_policy=AckPolicy.EXPLICIT))
    names = [c.name for c in await js.consumers_info("S")]
    assert names == ["c"]
    assert await js.delete_consumer("S", "c")
    assert await js.consumers_info("S") == []


@pytest.mark.waits(0.2)
@VIRTUAL_TIME
async def test_max_ack_pending(js):
    await fill(js, 5)
    psub = await js.pull_subscribe("s.a", durable="d", config=ConsumerConfig(max_ack_pending=2))
    msgs = await psub.fetch(5, timeout=0.2)
    assert len(msgs) == 2


async def test_two_pull_workers_share(js):
    await fill(js, 6)
    one = await js.pull_subscribe("s.a", durable="shared")
    two = await js.pull_subscribe("s.a", durable="shared")
    a = await one.fetch(3, timeout=1)
    b = await two.fetch(3, timeout=1)
    assert sorted(m.data for m in a + b) == [f"m{i}".encode() for i in range(6)]


async def test_num_pending(js):
    await fill(js, 7)
    psub = await js.pull_subscribe("s.a", durable="d")
    await psub.fetch(2, timeout=1)
    info = await js.consumer_info("S", "d")
    assert info.num_pending == 5
    assert info.num_ack_pending == 2
