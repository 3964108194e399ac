"""Fast batches on the server clock: an idle batch is dropped after 10 seconds, activity pushes that back.

nats-server 2.15.1 (checked on the binary): a batch's inactivity timer is
10 seconds, restarted by every message of the batch; a dropped batch is not
announced, its next message is answered ``batch publish ID unknown`` (10208).
"""

from __future__ import annotations

import asyncio
import json

import nats
from nats.aio.msg import Msg

from fakejs import ManualClock, Server


def fi(batch: str, seq: int, op: int) -> str:
    return f"R.{batch}.10.ok.{seq}.{op}.$FI"


class Replies:
    """Every message on ``R.>``, in order."""

    def __init__(self) -> None:
        self.got: list[bytes] = []

    async def handler(self, msg: Msg) -> None:
        self.got.append(msg.data)

    async def next(self, nc: nats.NATS) -> bytes:
        await nc.flush()
        for _ in range(200):
            if self.got:
                return self.got.pop(0)
            await asyncio.sleep(0.01)
        raise AssertionError("no reply")


async def _setup(server: Server) -> tuple[nats.NATS, Replies]:
    nc = await nats.connect(server.url)
    body = {"name": "S", "subjects": ["s.>"], "storage": "memory", "allow_batched": True}
    reply = await nc.request("$JS.API.STREAM.CREATE.S", json.dumps(body).encode())
    assert "error" not in json.loads(reply.data), reply.data
    replies = Replies()
    await nc.subscribe("R.>", cb=replies.handler)
    return nc, replies


UNKNOWN = b'{"error":{"code":400,"err_code":10208,"description":"batch publish ID unknown"},"stream":"S","seq":0}'


async def test_idle_batch_is_dropped_after_ten_seconds() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc, replies = await _setup(server)
        await nc.publish("s.a", b"1", reply=fi("A", 1, 0))
        assert await replies.next(nc) == b'{"type":"ack","seq":0,"msgs":10}'
        for seq in (2, 3):  # each message restarts the 10 seconds
            clock.advance(9.5)
            await nc.publish("s.a", b"x", reply=fi("A", seq, 1))
            await nc.flush()
        clock.advance(9.5)
        await nc.publish("s.a", b"x", reply=fi("A", 3, 4))  # a ping counts as activity too
        assert await replies.next(nc) == b'{"type":"ack","seq":0,"msgs":10}'
        clock.advance(10.1)
        await nc.publish("s.a", b"x", reply=fi("A", 4, 1))
        assert await replies.next(nc) == UNKNOWN
        # The id is free again: a new batch may start under it.
        await nc.publish("s.a", b"x", reply=fi("A", 1, 2))
        assert await replies.next(nc) == b'{"stream":"S","seq":4,"batch":"A","count":1}'
        assert replies.got == []
        await nc.close()


async def test_committed_and_deleted_batches_leave_no_timer() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc, replies = await _setup(server)
        await nc.publish("s.a", b"1", reply=fi("A", 1, 0))
        await nc.publish("s.a", b"2", reply=fi("A", 2, 2))
        assert await replies.next(nc) == b'{"type":"ack","seq":0,"msgs":10}'
        assert await replies.next(nc) == b'{"stream":"S","seq":2,"batch":"A","count":2}'
        await nc.publish("s.a", b"1", reply=fi("B", 1, 0))
        assert await replies.next(nc) == b'{"type":"ack","seq":0,"msgs":10}'
        reply = await nc.request("$JS.API.STREAM.DELETE.S", b"")
        assert json.loads(reply.data)["success"] is True
        clock.advance(30)  # nothing left to fire
        await nc.flush()
        assert replies.got == []
        await nc.close()
