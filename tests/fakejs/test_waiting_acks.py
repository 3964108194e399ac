"""A pull consumer's plain acks wait for the end of the client read that brought them, as nats-server's ack queue.

A client session of an in-process server is fed whole reads of raw frames and its output is
read back in order (the order is what a client sees).  A fetch loop's write (the acks of one
batch, then the next pull) has its pull served first; anything else the read carries, a
pull that could get other messages because of the acks, and everything after the read see
them applied.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from fakejs import Server
from fakejs.core.session import ClientSession
from tests.harness.session_io import FakeIO

DELIVERY = re.compile(rb"MSG (\S+) 1 (\$JS\.ACK\.\S+) \d+\r\n([^\r]*)\r\n")
ACK_ANSWER = re.compile(rb"MSG (_INBOX\.ack\.\d+) 1 0\r\n\r\n")


class Client:
    """A session fed whole reads; what it was sent, in order."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def read(self, frames: bytes) -> bytes:
        """One read of ``frames``; the output it produced (its turn's scheduled work included)."""
        self.session.data_received(frames)
        for _ in range(3):
            await asyncio.sleep(0)
        return self.session.take_output()

    async def api(self, subject: str, body: dict[str, Any]) -> dict[str, Any]:
        payload = json.dumps(body).encode()
        answer = await self.read(b"PUB %s _INBOX.api %d\r\n%s\r\n" % (subject.encode(), len(payload), payload))
        match = re.search(rb"MSG _INBOX\.api 1 \d+\r\n(.*)\r\n", answer)
        assert match is not None, answer
        reply: dict[str, Any] = json.loads(match.group(1))
        return reply

    async def fetch(self, count: int) -> list[tuple[bytes, bytes]]:
        """(payload, ack subject) of ``count`` messages of the durable ``W``."""
        output = await self.read(pull(count))
        return [(payload, ack) for _, ack, payload in DELIVERY.findall(output)]


def pull(count: int) -> bytes:
    body = b'{"batch":%d}' % count
    return b"PUB $JS.API.CONSUMER.MSG.NEXT.S.W _INBOX.pull %d\r\n%s\r\n" % (len(body), body)


def acks(delivered: list[tuple[bytes, bytes]], payload: bytes = b"+ACK") -> bytes:
    """An ack of each delivery, each asking for an answer on ``_INBOX.ack.<n>`` (an ``AckSync``)."""
    return b"".join(
        b"PUB %s _INBOX.ack.%d %d\r\n%s\r\n" % (ack, n, len(payload), payload) for n, (_, ack) in enumerate(delivered)
    )


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    async with Server(port=-1, jetstream=True) as server:
        session = ClientSession(server.broker, FakeIO(), "127.0.0.1", 1)
        session.start()
        connected = Client(session)
        await connected.read(b'CONNECT {"verbose":false,"headers":true}\r\nSUB _INBOX.> 1\r\n')
        yield connected


async def stream_of(client: Client, count: int, **consumer: Any) -> None:
    """Stream ``S`` of ``count`` messages ``m1``... and its durable pull consumer ``W`` (explicit acks)."""
    retention = consumer.pop("retention", "limits")
    stream = {"name": "S", "subjects": ["s.>"], "storage": "memory", "retention": retention}
    assert "error" not in await client.api("$JS.API.STREAM.CREATE.S", stream | consumer.pop("stream", {}))
    config = {"durable_name": "W", "ack_policy": "explicit", **consumer}
    assert "error" not in await client.api("$JS.API.CONSUMER.CREATE.S.W", {"stream_name": "S", "config": config})
    await client.read(b"".join(b"PUB s.x %d\r\nm%d\r\n" % (len(b"m%d" % n), n) for n in range(1, count + 1)))


def order(output: bytes) -> list[str]:
    """What a read produced, in order: ``deliver m<n>`` and ``answer ack <n>``."""
    events = [(m.start(), "deliver " + m.group(3).decode()) for m in DELIVERY.finditer(output)]
    events += [(m.start(), "answer " + m.group(1).decode()[len("_INBOX.") :]) for m in ACK_ANSWER.finditer(output)]
    return [name for _, name in sorted(events)]


async def test_a_fetch_loops_next_pull_is_served_before_its_acks_are_applied(client: Client) -> None:
    await stream_of(client, 4)
    first = await client.fetch(2)
    assert [payload for payload, _ in first] == [b"m1", b"m2"]
    output = await client.read(acks(first) + pull(2))
    assert order(output) == ["deliver m3", "deliver m4", "answer ack.0", "answer ack.1"]
    info = await client.api("$JS.API.CONSUMER.INFO.S.W", {})
    assert (info["ack_floor"]["stream_seq"], info["num_ack_pending"], info["delivered"]["stream_seq"]) == (2, 2, 4)


async def test_a_request_in_the_same_read_sees_the_acks_applied(client: Client) -> None:
    await stream_of(client, 3)
    first = await client.fetch(2)
    body = b"{}"
    output = await client.read(acks(first) + b"PUB $JS.API.CONSUMER.INFO.S.W _INBOX.api 2\r\n%s\r\n" % body)
    match = re.search(rb"MSG _INBOX\.api 1 \d+\r\n(.*)\r\n", output)
    assert match is not None
    info = json.loads(match.group(1))
    assert (info["ack_floor"]["stream_seq"], info["num_ack_pending"], info["num_pending"]) == (2, 0, 1)
    assert order(output) == ["answer ack.0", "answer ack.1"]


async def test_a_pull_the_acks_make_room_for_waits_for_them(client: Client) -> None:
    await stream_of(client, 4, max_ack_pending=2)
    first = await client.fetch(2)
    output = await client.read(acks(first) + pull(2))  # at max_ack_pending: the acks first, then m3 and m4
    assert order(output) == ["answer ack.0", "answer ack.1", "deliver m3", "deliver m4"]


async def test_a_pull_that_could_take_a_redelivery_waits_for_the_acks(client: Client) -> None:
    await stream_of(client, 3)
    first = await client.fetch(2)
    nak = b"PUB %s 4\r\n-NAK\r\n" % first[0][1]
    output = await client.read(nak + acks(first[1:]) + pull(1))  # m1 queued again: the ack first, m1 redelivered
    assert order(output) == ["answer ack.0", "deliver m1"]
    info = await client.api("$JS.API.CONSUMER.INFO.S.W", {})
    assert (info["num_ack_pending"], info["num_redelivered"]) == (1, 1)


async def test_a_publish_in_the_same_read_sees_a_work_queue_freed(client: Client) -> None:
    await stream_of(client, 2, retention="workqueue", stream={"max_msgs": 2, "discard": "new"})
    first = await client.fetch(2)
    output = await client.read(acks(first) + b"PUB s.y _INBOX.pub 2\r\nm3\r\n")
    assert b'"seq":3' in output and b"error" not in output  # the two acked messages left before it came
    info = await client.api("$JS.API.STREAM.INFO.S", {})
    assert (info["state"]["messages"], info["state"]["first_seq"]) == (1, 3)


async def test_acks_are_applied_before_a_delete_of_their_consumer_in_the_same_read(client: Client) -> None:
    await stream_of(client, 2)
    first = await client.fetch(2)
    output = await client.read(acks(first) + b"PUB $JS.API.CONSUMER.DELETE.S.W _INBOX.api 0\r\n\r\n")
    assert b'"success":true' in output
    assert order(output) == ["answer ack.0", "answer ack.1"]  # applied before the delete came
