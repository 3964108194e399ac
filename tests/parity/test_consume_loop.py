"""An ADR-37 ``Consume()`` loop (:mod:`tests.harness.consume`), served alike by both targets.

Once every pull request has ended, the consume loop's pending counts must
come back to exactly zero -- which only happens when the server's 408/409
headers account for every message and byte it did not deliver.
"""

from __future__ import annotations

import asyncio
import json

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from tests.harness.consume import NS, STATUS, Consume
from tests.harness.js import api, create_stream
from tests.harness.targets import Target
from tests.harness.wait import WAIT

# fakejs runs on a manual clock here: every wait below lets the server's time pass explicitly.
pytestmark = pytest.mark.manual_clock


async def setup(target: Target, durable: str = "C") -> Client:
    nc = await nats.connect(target.url)
    await create_stream(nc, {"name": "S", "subjects": ["s.>"], "storage": "memory"})
    reply = await api(
        nc,
        f"$JS.API.CONSUMER.CREATE.S.{durable}",
        {"stream_name": "S", "config": {"durable_name": durable, "ack_policy": "explicit"}},
    )
    assert "error" not in reply, reply
    return nc


async def publish_in_bursts(target: Target, nc: Client, count: int, burst: int, pause: float, size: int = 20) -> None:
    js = nc.jetstream()
    for i in range(count):
        await js.publish(f"s.{i % 3}", b"%0*d" % (size, i))
        if i % burst == burst - 1:
            await target.elapse(pause)


async def drained(consume: Consume, total: int, timeout: float = 10) -> None:
    async def wait() -> None:
        while len(consume.received) < total:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(wait(), timeout)


async def settle(target: Target, consume: Consume) -> None:
    """Stop asking, then let every open request end (each ends with a 408 within ``expires``)."""
    consume.done.set()
    await target.elapse(consume.expires + 0.5)


async def test_consume_by_messages_reconciles_to_zero(target: Target) -> None:
    nc = await setup(target)
    try:
        consume = Consume(nc, "S", "C", max_messages=10, clock=target.now)
        await consume.start()
        await publish_in_bursts(target, nc, 60, burst=7, pause=0.05)
        await drained(consume, 60)
        await settle(target, consume)
        await consume.stop()
        assert [int(m.data) for m in consume.received] == list(range(60))
        assert [m.metadata.sequence.stream for m in consume.received] == list(range(1, 61))
        assert (consume.pending_messages, consume.pending_bytes, consume.clamped) == (0, 0, 0)
        assert consume.statuses and {code for code, _ in consume.statuses} == {"408"}
        assert consume.missed_heartbeats == 0 and consume.error == ""
        info = await api(nc, "$JS.API.CONSUMER.INFO.S.C")
        assert (info["num_pending"], info["num_ack_pending"], info["num_waiting"]) == (0, 0, 0)
        assert info["delivered"]["stream_seq"] == 60
    finally:
        await nc.close()


async def test_consume_by_bytes_reconciles_to_zero(target: Target) -> None:
    nc = await setup(target)
    try:
        consume = Consume(nc, "S", "C", max_bytes=1200, clock=target.now)
        await consume.start()
        await publish_in_bursts(target, nc, 40, burst=9, pause=0.05, size=100)
        await drained(consume, 40)
        await settle(target, consume)
        await consume.stop()
        assert [int(m.data) for m in consume.received] == list(range(40))
        assert (consume.pending_messages, consume.pending_bytes, consume.clamped) == (0, 0, 0)
        assert consume.missed_heartbeats == 0
    finally:
        await nc.close()


async def test_consume_sees_heartbeats_while_idle(target: Target) -> None:
    nc = await setup(target)
    try:
        consume = Consume(nc, "S", "C", max_messages=4, expires=2.0, heartbeat=0.2, clock=target.now)
        await consume.start()
        await target.elapse(0.9)
        assert consume.heartbeats >= 3
        assert consume.received == [] and consume.missed_heartbeats == 0
        await consume.stop()
    finally:
        await nc.close()


async def test_consume_ends_when_the_consumer_is_deleted(target: Target) -> None:
    nc = await setup(target)
    try:
        consume = Consume(nc, "S", "C", max_messages=6, expires=5.0, clock=target.now)
        await consume.start()
        await publish_in_bursts(target, nc, 4, burst=4, pause=0)
        await drained(consume, 4)
        reply = await api(nc, "$JS.API.CONSUMER.DELETE.S.C")
        assert reply["success"] is True
        await asyncio.wait_for(consume.done.wait(), WAIT)
        await consume.stop()
        assert consume.error == "Consumer Deleted"
        assert consume.statuses[-1] == ("409", "Consumer Deleted")
    finally:
        await nc.close()


@pytest.mark.slow
async def test_idle_pull_consumer_is_removed_after_its_inactive_threshold(target: Target) -> None:
    nc = await setup(target, durable="keep")
    try:
        reply = await api(
            nc,
            "$JS.API.CONSUMER.CREATE.S.idle",
            {"stream_name": "S", "config": {"durable_name": "idle", "inactive_threshold": int(0.4 * NS)}},
        )
        assert reply["config"]["inactive_threshold"] == int(0.4 * NS)
        # A waiting pull keeps it alive past the threshold (pull consumers add 0.1-1s of jitter)...
        inbox = nc.new_inbox()
        statuses: list[str] = []

        async def on_status(msg: Msg) -> None:
            statuses.append((msg.headers or {}).get(STATUS, ""))

        await nc.subscribe(inbox, cb=on_status)
        body = json.dumps({"batch": 1, "expires": int(0.9 * NS)}).encode()
        await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.idle", body, reply=inbox)
        await target.elapse(0.8)
        names = await api(nc, "$JS.API.CONSUMER.NAMES.S")
        assert sorted(names["consumers"]) == ["idle", "keep"]

        # ...then, with nothing waiting, it goes within about two jittered thresholds.
        async def idle_gone() -> bool:
            names.update(await api(nc, "$JS.API.CONSUMER.NAMES.S"))
            return "idle" not in names["consumers"]

        await target.elapse_until(idle_gone, 4, interval=0.05)
        assert names["consumers"] == ["keep"]
        assert statuses == ["408"]
    finally:
        await nc.close()
