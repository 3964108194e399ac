"""A durable sourcing consumer's reset runs on the server clock.

The reset of a missing consumer gets no answer; nats-server gives up after
5 s (not the 30 s a consumer create gets), backs off (2 s throttle, 10 s per
failure, 100-200 ms of jitter) and meanwhile watches the consumer's deliver
subject: a consumer made then pushes to that subscription, which ends the
back-off at once.  With a ManualClock those seconds pass at once.
"""

from __future__ import annotations

import asyncio
from typing import Any

import nats

from fakejs import ManualClock, Server
from tests.harness.clocked import call, messages, settle

DURABLE = {
    "durable_name": "D",
    "deliver_subject": "dlv.D",
    "ack_policy": "flow_control",
    "flow_control": True,
    "idle_heartbeat": 1_000_000_000,
    "max_ack_pending": 100,
}


async def start(clock: ManualClock, nc: nats.NATS) -> list[float]:
    """The origin with one message, a source through the missing durable ``D``; the resets' clock times."""
    resets: list[float] = []

    async def spy(msg: Any) -> None:
        resets.append(clock.monotonic())

    await nc.subscribe("$JS.API.CONSUMER.RESET.O.D", cb=spy)
    await call(nc, "$JS.API.STREAM.CREATE.O", {"name": "O", "subjects": ["o"], "storage": "memory"})
    await nc.request("o", b"x", timeout=2)
    source = {"name": "O", "consumer": {"name": "D", "deliver_subject": "dlv.D"}}
    await call(nc, "$JS.API.STREAM.CREATE.T", {"name": "T", "storage": "memory", "sources": [source]})
    await settle(clock, 0.0)
    await settle(clock, 0.25)  # the first reset, after the source's jitter
    return resets


async def test_unanswered_reset_waits_5s_then_backs_off() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        resets = await start(clock, nc)
        assert len(resets) == 1
        await settle(clock, 14.7)  # 15 s: the 5 s wait, then 2 s throttle spent, 10 s back-off and jitter ahead
        assert len(resets) == 1
        await settle(clock, 0.5)
        assert len(resets) == 2
        assert 15.0 < resets[1] - resets[0] < 15.3
        source = (await call(nc, "$JS.API.STREAM.INFO.T"))["sources"][0]
        assert source == {"name": "O", "lag": 0, "active": -1}
        await nc.close()


async def test_durable_made_during_the_back_off_is_found_through_its_deliver_subject() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        resets = await start(clock, nc)
        reply = await call(nc, "$JS.API.CONSUMER.CREATE.O.D", {"stream_name": "O", "config": DURABLE})
        assert "error" not in reply, reply
        await settle(clock, 4.7)
        assert (len(resets), await messages(nc, "T")) == (1, 0)  # the reset went unanswered: still waiting
        await settle(clock, 0.3)  # timed out: the deliver subject is watched, the durable pushes to it
        for _ in range(4):
            await settle(clock, 0.1)
        assert len(resets) == 2 and resets[1] - resets[0] < 5.6
        assert await messages(nc, "T") == 1
        await settle(clock, 1.5)  # a flow control answer acks it
        info = await call(nc, "$JS.API.CONSUMER.INFO.O.D")
        assert info["ack_floor"]["stream_seq"] == 1
        await asyncio.sleep(0)
        await nc.close()
