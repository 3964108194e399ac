"""Streams: create, inspect, update, purge, delete."""

from __future__ import annotations

import pytest
from nats.js.api import RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import BadRequestError, NotFoundError


async def test_create_stream(js):
    info = await js.add_stream(name="ORDERS", subjects=["orders.>"])
    assert info.config.name == "ORDERS"
    assert info.state.messages == 0


@pytest.mark.parametrize("storage", [StorageType.MEMORY, StorageType.FILE])
async def test_create_stream_with_storage(js, storage):
    info = await js.add_stream(name="S", subjects=["s.*"], storage=storage)
    assert info.config.storage == storage


async def test_create_same_stream_twice_is_idempotent(js):
    await js.add_stream(name="S", subjects=["s.*"])
    info = await js.add_stream(name="S", subjects=["s.*"])
    assert info.config.subjects == ["s.*"]


async def test_create_conflicting_stream_fails(js):
    await js.add_stream(name="S", subjects=["s.*"])
    with pytest.raises(BadRequestError):
        await js.add_stream(name="S", subjects=["other.*"])


async def test_overlapping_subjects_fail(js):
    await js.add_stream(name="A", subjects=["x.>"])
    with pytest.raises(BadRequestError):
        await js.add_stream(name="B", subjects=["x.y"])


async def test_stream_info_counts_messages(js):
    await js.add_stream(name="S", subjects=["s.*"])
    for i in range(5):
        await js.publish("s.a", f"m{i}".encode())
    info = await js.stream_info("S")
    assert info.state.messages == 5
    assert info.state.first_seq == 1
    assert info.state.last_seq == 5


async def test_stream_info_missing(js):
    with pytest.raises(NotFoundError):
        await js.stream_info("NOPE")


async def test_update_stream_subjects(js):
    await js.add_stream(name="S", subjects=["a.*"])
    info = await js.update_stream(StreamConfig(name="S", subjects=["a.*", "b.*"]))
    assert info.config.subjects == ["a.*", "b.*"]
    ack = await js.publish("b.1", b"x")
    assert ack.stream == "S"


async def test_update_stream_limits(js):
    await js.add_stream(name="S", subjects=["s.*"])
    await js.update_stream(StreamConfig(name="S", subjects=["s.*"], max_msgs=3))
    for i in range(6):
        await js.publish("s.a", str(i).encode())
    info = await js.stream_info("S")
    assert info.state.messages == 3
    assert info.state.first_seq == 4


async def test_delete_stream(js):
    await js.add_stream(name="S", subjects=["s.*"])
    assert await js.delete_stream("S")
    with pytest.raises(NotFoundError):
        await js.stream_info("S")


async def test_delete_missing_stream(js):
    with pytest.raises(NotFoundError):
        await js.delete_stream("NOPE")


async def test_purge_stream(js):
    await js.add_stream(name="S", subjects=["s.*"])
    for _ in range(4):
        await js.publish("s.a", b"x")
    await js.purge_stream("S")
    info = await js.stream_info("S")
    assert info.state.messages == 0
    assert info.state.first_seq == 5


async def test_purge_by_subject(js):
    await js.add_stream(name="S", subjects=["s.*"])
    await js.publish("s.a", b"1")
    await js.publish("s.b", b"2")
    await js.publish("s.a", b"3")
    await js.purge_stream("S", subject="s.a")
    info = await js.stream_info("S")
    assert info.state.messages == 1


async def test_list_streams(js):
    for name in ("A", "B", "C"):
        await js.add_stream(name=name, subjects=[name.lower() + ".>"])
    names = sorted(info.config.name for info in await js.streams_info())
    assert names == ["A", "B", "C"]


async def test_max_msgs_per_subject(js):
    await js.add_stream(name="S", subjects=["s.*"], max_msgs_per_subject=1)
    await js.publish("s.a", b"1")
    await js.publish("s.a", b"2")
    await js.publish("s.b", b"3")
    info = await js.stream_info("S")
    assert info.state.messages == 2


async def test_max_bytes_discards_old(js):
    await js.add_stream(name="S", subjects=["s.*"], max_bytes=300)
    for _ in range(10):
        await js.publish("s.a", b"x" * 50)
    info = await js.stream_info("S")
    assert info.state.bytes <= 300
    assert info.state.last_seq == 10


async def test_work_queue_stream(js):
    await js.add_stream(name="WQ", subjects=["wq.*"], retention=RetentionPolicy.WORK_QUEUE)
    await js.publish("wq.a", b"job")
    psub = await js.pull_subscribe("wq.a", durable="worker")
    msgs = await psub.fetch(1, timeout=1)
    await msgs[0].ack_sync()
    info = await js.stream_info("WQ")
    assert info.state.messages == 0


async def test_get_message_by_sequence(js):
    await js.add_stream(name="S", subjects=["s.*"])
    await js.publish("s.a", b"first")
    await js.publish("s.b", b"second")
    msg = await js.get_msg("S", 2)
    assert msg.data == b"second"
    assert msg.subject == "s.b"


async def test_get_last_message_for_subject(js):
    await js.add_stream(name="S", subjects=["s.*"])
    await js.publish("s.a", b"1")
    await js.publish("s.a", b"2")
    await js.publish("s.b", b"3")
    msg = await js.get_last_msg("S", "s.a")
    assert msg.data == b"2"


async def test_delete_message(js):
    await js.add_stream(name="S", subjects=["s.*"])
    for _ in range(3):
        await js.publish("s.a", b"x")
    await js.delete_msg("S", 2)
    info = await js.stream_info("S")
    assert info.state.messages == 2
    with pytest.raises(NotFoundError):
        await js.get_msg("S", 2)
