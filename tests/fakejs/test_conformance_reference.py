"""The reference consume loops break no conformance rule, whatever the server does to them.

:class:`~tests.harness.consume.Consume` (ADR-37) and
:class:`~tests.harness.ordered.OrderedConsume` (ADR-17) run against a
server started with ``conformance=True`` under each situation a rule is
about -- messages flowing in while the loop consumes (it tops up at the
threshold), pulls expiring empty (408s with pending headers), the shipped
scenarios (leadership change, consumer deleted, max waiting exceeded,
heartbeats stopping, a dropped connection, a pin timing out), a refused
pull that asks for a backoff, AckSync, and a delivery the ordered consumer
never sees -- and the report stays empty.  Short expiries and heartbeats
(1 s, 0.25 s) and a 0.5 s reaction window keep the file to a few seconds
of real time; waits are bounded polls.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs.server.server import Server
from tests.fakejs.clients import Link, eventually, publish
from tests.harness.consume import Consume
from tests.harness.js import api, create_stream
from tests.harness.ordered import OrderedConsume

WINDOW = 0.5
EXPIRES = 1.0
HEARTBEAT = 0.25


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    async with Server(port=0, conformance=True) as started:
        watch = started.conformance_watch
        assert watch is not None
        watch.settings.window = WINDOW
        watch.settings.backoff = 0.25
        yield started


@pytest.fixture
async def nc(server: Server) -> AsyncIterator[Client]:
    client = await nats.connect(server.url)
    try:
        yield client
    finally:
        await client.close()


def expect_consume(server: Server, stream: str, consumer: str, ack_sync: bool = False) -> None:
    watch = server.conformance_watch
    assert watch is not None
    watch.expect(stream, consumer, consume=True, ack_sync=ack_sync)


async def conforms(server: Server, linger: float = WINDOW + 0.1) -> None:
    """Let every reaction the rules wait for come due, then read the report: nothing broken."""
    await asyncio.sleep(linger)
    report = server.conformance()
    assert not report.violations, report.text()


async def setup(nc: Client, consumer: dict[str, Any] | None = None) -> None:
    await create_stream(nc, {"name": "S", "subjects": ["s.>"], "storage": "memory"})
    config = {"durable_name": "C", "ack_policy": "explicit", **(consumer or {})}
    reply = await api(nc, "$JS.API.CONSUMER.CREATE.S.C", {"stream_name": "S", "config": config})
    assert "error" not in reply, reply


def consume(nc: Client, server: Server, consumer: str = "C", stream: str = "S", **options: Any) -> Consume:
    options.setdefault("expires", EXPIRES)
    options.setdefault("heartbeat", HEARTBEAT)
    return Consume(nc, stream, consumer, clock=server.clock.monotonic, **options)


async def trickle(nc: Client, count: int, burst: int, size: int = 20) -> None:
    """``count`` messages in bursts, a little apart, so the loop tops up while they come."""
    js = nc.jetstream()
    for i in range(count):
        await js.publish(f"s.{i % 3}", b"%0*d" % (size, i))
        if i % burst == burst - 1:
            await asyncio.sleep(0.02)


def numbers(loop: Consume | OrderedConsume) -> list[int]:
    return [int(m.data) for m in loop.received]


# -- plain consumption ----------------------------------------------------------------------


@pytest.mark.parametrize("buffer", [{"max_messages": 10}, {"max_bytes": 1200}], ids=["messages", "bytes"])
async def test_consume_with_messages_flowing_in(server: Server, nc: Client, buffer: dict[str, int]) -> None:
    """Top-ups at the threshold, by messages and by bytes, then the pulls left expire with 408s."""
    await setup(nc)
    expect_consume(server, "S", "C")
    loop = consume(nc, server, **buffer)
    await loop.start()
    try:
        await trickle(nc, 60, burst=7, size=100 if "max_bytes" in buffer else 20)
        await eventually(lambda: len(loop.received) == 60, 10, what="every message")
        assert numbers(loop) == list(range(60))
        assert loop.requests > 3  # topped up along the way
        await eventually(lambda: ("408", "Request Timeout") in loop.statuses, 3, what="an expiry")
        await conforms(server)
    finally:
        await loop.stop()


async def test_empty_pulls_expire_and_are_renewed(server: Server, nc: Client) -> None:
    """Nothing to deliver: each pull ends "408 Request Timeout" with its pending counts, and a new one follows."""
    await setup(nc)
    expect_consume(server, "S", "C")
    loop = consume(nc, server, max_messages=4)
    await loop.start()
    try:
        await eventually(lambda: len(loop.statuses) >= 2, 4, what="two expiries")
        assert set(loop.statuses) == {("408", "Request Timeout")}
        assert loop.requests >= 3 and loop.missed_heartbeats == 0
        await conforms(server)
    finally:
        await loop.stop()


async def test_ack_sync(server: Server, nc: Client) -> None:
    """Acknowledged with AckSync: every ack carries a reply subject, and the server answers each."""
    await setup(nc)
    expect_consume(server, "S", "C", ack_sync=True)
    loop = consume(nc, server, max_messages=4, ack_sync=True)
    await loop.start()
    try:
        await trickle(nc, 10, burst=3)
        await eventually(lambda: len(loop.received) == 10, 5, what="every message")
        info = await api(nc, "$JS.API.CONSUMER.INFO.S.C")
        assert info["ack_floor"]["stream_seq"] == 10 and info["num_ack_pending"] == 0
        await conforms(server)
    finally:
        await loop.stop()


async def test_refused_pull_backs_off(server: Server, nc: Client) -> None:
    """Two pulls answered "409 Exceeded MaxWaiting": each re-pull waits the backoff first."""
    await setup(nc)
    expect_consume(server, "S", "C")
    pulls: list[float] = []
    server.control.answer_pulls("S", "C", 409, "Exceeded MaxWaiting", count=2)
    loop = consume(nc, server, max_messages=4, backoff=0.25)

    async def note(_: Msg) -> None:
        pulls.append(server.clock.monotonic())

    sub = await nc.subscribe("$JS.API.CONSUMER.MSG.NEXT.S.C", cb=note)
    await loop.start()
    try:
        await eventually(lambda: loop.requests == 3, 3, what="the third pull")
        await publish(nc, "s.x", [b"1", b"2"])
        await eventually(lambda: numbers(loop) == [1, 2], 3, what="messages to the third pull")
        assert loop.statuses == [("409", "Exceeded MaxWaiting")] * 2
        await eventually(lambda: len(pulls) == 3, 2, what="pulls seen")
        assert all(later - earlier >= 0.25 for earlier, later in itertools.pairwise(pulls))
        await conforms(server)
    finally:
        await sub.unsubscribe()
        await loop.stop()


# -- the shipped scenarios ------------------------------------------------------------------


def scenario(server: Server, name: str) -> None:
    server.control.start_scenario(path=name)


async def test_leadership_change(server: Server, nc: Client) -> None:
    scenario(server, "leadership-change")
    expect_consume(server, "ORDERS", "worker")
    await publish(nc, "orders.new", [b"%d" % i for i in range(1, 8)])
    loop = consume(nc, server, "worker", "ORDERS", max_messages=10)
    await loop.start()
    try:
        await eventually(lambda: numbers(loop) == list(range(1, 8)), 3, what="every message")
        assert loop.statuses[0] == ("409", "Leadership Change")
        await conforms(server)
    finally:
        await loop.stop()


async def test_consumer_deleted_stops_the_loop(server: Server, nc: Client) -> None:
    scenario(server, "consumer-deleted")
    expect_consume(server, "ORDERS", "worker")
    loop = consume(nc, server, "worker", "ORDERS", max_messages=10)
    await loop.start()
    try:
        await asyncio.wait_for(loop.done.wait(), 3)
        assert loop.error == "Consumer Deleted"
        await conforms(server, linger=2 * HEARTBEAT + WINDOW + 0.1)  # not even a missed heartbeat re-pulls
        assert loop.requests == 1
    finally:
        await loop.stop()


async def test_max_waiting_exceeded_two_loops(server: Server, nc: Client) -> None:
    """max_waiting 1: the second loop's pulls (with heartbeats) are dropped silently; it re-pulls on the silence."""
    scenario(server, "max-waiting-exceeded")
    expect_consume(server, "ORDERS", "worker")
    first = consume(nc, server, "worker", "ORDERS", max_messages=4)
    second = consume(nc, server, "worker", "ORDERS", max_messages=4)
    await first.start()
    await nc.flush()
    await second.start()
    try:
        await eventually(lambda: second.missed_heartbeats >= 2, 3, what="missed heartbeats")
        assert second.requests >= 2 and second.statuses == []
        await publish(nc, "orders.new", [b"%d" % i for i in range(1, 6)])
        await eventually(lambda: len(first.received) + len(second.received) == 5, 3, what="every message")
        await conforms(server)
    finally:
        await first.stop()
        await second.stop()


async def test_heartbeats_stop(server: Server, nc: Client) -> None:
    """Heartbeats stop after the first: the loop pulls again on the silence, and messages still come."""
    scenario(server, "heartbeats-stop")
    expect_consume(server, "ORDERS", "worker")
    loop = consume(nc, server, "worker", "ORDERS", max_messages=10)
    await loop.start()
    try:
        await eventually(lambda: loop.missed_heartbeats >= 1, 3, what="a missed heartbeat")
        await eventually(lambda: loop.requests >= 2, 2, what="the re-pull")
        await publish(nc, "orders.new", [b"1", b"2", b"3"])
        await eventually(lambda: numbers(loop) == [1, 2, 3], 3, what="messages after the silence")
        await conforms(server)
    finally:
        await loop.stop()


async def test_disconnect_and_reconnect(server: Server, link: Link) -> None:
    """The server drops the client after its second delivery: the loop re-pulls on reconnect."""
    scenario(server, "disconnect")
    expect_consume(server, "ORDERS", "worker")
    nc = await link.open(server.url)
    await publish(nc, "orders.new", [b"%d" % i for i in range(1, 6)])
    loop = await link.consume(
        "ORDERS", "worker", max_messages=10, expires=EXPIRES, heartbeat=HEARTBEAT, clock=server.clock.monotonic
    )
    await eventually(lambda: link.reconnected_to, 3, what="reconnect")
    await eventually(lambda: set(numbers(loop)) == {1, 2, 3, 4, 5}, 4, what="every message")
    assert loop.reconnects == 1
    await conforms(server)


async def test_pin_timeout(server: Server, nc: Client) -> None:
    """A pinned_client group whose pin expires: the old id is refused with 423, dropped, and never sent again."""
    scenario(server, "pin-timeout")
    expect_consume(server, "JOBS", "pool")
    loop = consume(nc, server, "pool", "JOBS", max_messages=2, group="A")
    await loop.start()
    try:
        await publish(nc, "jobs.a", [b"1"])
        await eventually(lambda: loop.pin_id, 3, what="the pin")
        first_pin = loop.pin_id
        await eventually(lambda: loop.requests >= 2, 3, what="the top-up with the pin id")
        await publish(nc, "jobs.a", [b"2", b"3"])
        await eventually(lambda: ("423", "Nats-Wrong-Pin-Id") in loop.statuses, 3, what="the 423")
        assert loop.pin_id != first_pin
        await conforms(server)
    finally:
        await loop.stop()


# -- ordered --------------------------------------------------------------------------------


async def test_ordered_consume_resets_after_a_dropped_delivery(server: Server, nc: Client) -> None:
    """The fifth delivery never reaches the client: it recreates its consumer from stream sequence 5."""
    await create_stream(nc, {"name": "S", "subjects": ["s.>"], "storage": "memory"})
    await publish(nc, "s.x", [b"%d" % i for i in range(1, 21)])
    server.control.add_fault(on="consumer.deliver", do="drop", match={"stream": "S"}, after=4, times=1)
    loop = OrderedConsume(nc, "S", max_messages=6, expires=EXPIRES, heartbeat=HEARTBEAT, clock=server.clock.monotonic)
    await loop.start()
    try:
        await eventually(lambda: len(loop.received) == 20, 5, what="every message")
        assert numbers(loop) == list(range(1, 21))
        assert loop.resets == [5] and len(loop.consumers) == 2
        names = await api(nc, "$JS.API.CONSUMER.NAMES.S")
        assert names["consumers"] == loop.consumers[1:]  # the old one deleted
        await conforms(server, linger=2 * HEARTBEAT + WINDOW + 0.3)  # the old consumer's silence is no fault
    finally:
        await loop.stop()


async def test_ordered_consume_resets_when_heartbeats_stop(server: Server, nc: Client) -> None:
    """No heartbeat ever comes: the ordered consume starts again (from where it was) instead of pulling."""
    await create_stream(nc, {"name": "S", "subjects": ["s.>"], "storage": "memory"})
    await publish(nc, "s.x", [b"1", b"2"])
    server.control.stop_heartbeats("S")
    loop = OrderedConsume(nc, "S", max_messages=6, expires=EXPIRES, heartbeat=HEARTBEAT, clock=server.clock.monotonic)
    await loop.start()
    try:
        await eventually(lambda: len(loop.resets) >= 2, 3, what="resets on the silence")
        assert set(loop.resets) == {3}
        await publish(nc, "s.x", [b"3", b"4"])
        await eventually(lambda: numbers(loop) == [1, 2, 3, 4], 3, what="every message")
        await conforms(server)
    finally:
        await loop.stop()
