"""Publishing with acknowledgements: sequences, deduplication, expectations, headers."""

from __future__ import annotations

import asyncio

import pytest
from nats.js.errors import BadRequestError, NoStreamResponseError


async def test_publish_ack(js):
    await js.add_stream(name="S", subjects=["s.*"])
    ack = await js.publish("s.a", b"hello")
    assert ack.stream == "S"
    assert ack.seq == 1


async def test_sequences_increase(js):
    await js.add_stream(name="S", subjects=["s.*"])
    seqs = [(await js.publish("s.a", str(i).encode())).seq for i in range(10)]
    assert seqs == list(range(1, 11))


@pytest.mark.parametrize("size", [0, 1, 1024, 64 * 1024])
async def test_payload_sizes(js, size):
    await js.add_stream(name="S", subjects=["s.*"])
    payload = b"z" * size
    ack = await js.publish("s.a", payload)
    msg = await js.get_msg("S", ack.seq)
    assert (msg.data or b"") == payload


async def test_publish_without_stream_has_no_stream_response(js):
    with pytest.raises(NoStreamResponseError):
        await js.publish("nothing.here", b"x", timeout=1)


async def test_duplicate_detection(js):
    await js.add_stream(name="S", subjects=["s.*"])
    first = await js.publish("s.a", b"x", headers={"Nats-Msg-Id": "one"})
    again = await js.publish("s.a", b"x", headers={"Nats-Msg-Id": "one"})
    assert not first.duplicate
    assert again.duplicate
    assert again.seq == first.seq


async def test_expected_last_sequence(js):
    await js.add_stream(name="S", subjects=["s.*"])
    await js.publish("s.a", b"1")
    await js.publish("s.a", b"2", headers={"Nats-Expected-Last-Sequence": "1"})
    with pytest.raises(BadRequestError):
        await js.publish("s.a", b"3", headers={"Nats-Expected-Last-Sequence": "1"})


async def test_expected_last_subject_sequence(js):
    await js.add_stream(name="S", subjects=["s.*"])
    await js.publish("s.a", b"1")
    await js.publish("s.b", b"2")
    await js.publish("s.a", b"3", headers={"Nats-Expected-Last-Subject-Sequence": "1"})
    with pytest.raises(BadRequestError):
        await js.publish("s.b", b"4", headers={"Nats-Expected-Last-Subject-Sequence": "9"})


async def test_expected_stream(js):
    await js.add_stream(name="S", subjects=["s.*"])
    ack = await js.publish("s.a", b"x", stream="S")
    assert ack.stream == "S"
    with pytest.raises(BadRequestError):
        await js.publish("s.a", b"x", stream="OTHER")


async def test_headers_are_stored(js):
    await js.add_stream(name="S", subjects=["s.*"])
    await js.publish("s.a", b"x", headers={"Trace-Id": "abc"})
    msg = await js.get_msg("S", 1)
    assert msg.headers["Trace-Id"] == "abc"


async def test_concurrent_publishes(js):
    await js.add_stream(name="S", subjects=["s.*"])
    acks = await asyncio.gather(*(js.publish("s.a", str(i).encode()) for i in range(50)))
    assert sorted(a.seq for a in acks) == list(range(1, 51))


async def test_publish_async_batch(js):
    await js.add_stream(name="S", subjects=["s.*"])
    futures = [await js.publish_async("s.a", str(i).encode()) for i in range(100)]
    acks = await asyncio.gather(*futures)
    assert acks[-1].seq == 100
    info = await js.stream_info("S")
    assert info.state.messages == 100


async def test_core_publish_is_stored(fakejs_client, js):
    await js.add_stream(name="S", subjects=["s.*"])
    await fakejs_client.publish("s.a", b"plain")
    await fakejs_client.flush()
    for _ in range(50):
        info = await js.stream_info("S")
        if info.state.messages:
            break
        await asyncio.sleep(0.01)
    assert info.state.messages == 1
