"""The manual clock: long protocol timeouts take no real time, and an idle server can jump."""

from __future__ import annotations

import asyncio
import json
import time

import nats
import pytest

from fakejs import ManualClock, Server
from fakejs.gocompat.gotime import NS


async def _js_setup(nc: nats.NATS, consumer: dict) -> None:
    await nc.request(
        "$JS.API.STREAM.CREATE.S", json.dumps({"name": "S", "subjects": ["s.>"], "storage": "memory"}).encode()
    )
    reply = await nc.request(
        "$JS.API.CONSUMER.CREATE.S.C", json.dumps({"stream_name": "S", "config": consumer}).encode()
    )
    assert "error" not in json.loads(reply.data), reply.data


async def test_thirty_second_ack_wait_redelivers_at_once() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await _js_setup(nc, {"durable_name": "C", "ack_policy": "explicit", "ack_wait": 30 * NS})
        await js.publish("s.a", b"job")
        sub = await js.pull_subscribe_bind("C", stream="S")
        first = (await sub.fetch(1, timeout=1))[0]
        assert first.metadata.num_delivered == 1
        started = time.monotonic()
        clock.advance(29.9)
        with pytest.raises(nats.errors.TimeoutError):
            await sub.fetch(1, timeout=0.1)
        clock.advance(0.2)
        again = (await sub.fetch(1, timeout=1))[0]
        assert (again.data, again.metadata.num_delivered) == (b"job", 2)
        assert time.monotonic() - started < 2  # virtual seconds, real milliseconds
        await nc.close()


async def test_two_minute_dedup_window() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"], storage="memory")
        first = await js.publish("s.a", b"1", headers={"Nats-Msg-Id": "m1"})
        clock.advance(119)
        dup = await js.publish("s.a", b"1", headers={"Nats-Msg-Id": "m1"})
        assert (first.seq, dup.seq, dup.duplicate) == (1, 1, True)
        clock.advance(2)  # past the 2 minute window: the id is forgotten
        fresh = await js.publish("s.a", b"1", headers={"Nats-Msg-Id": "m1"})
        assert (fresh.seq, fresh.duplicate) == (2, None)
        await nc.close()


async def test_max_age_and_timestamps_follow_the_clock() -> None:
    clock = ManualClock(start_ns=1_700_000_000 * NS)
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"], storage="memory", max_age=60)
        await js.publish("s.a", b"old")
        clock.advance(30)
        await js.publish("s.b", b"new")
        info = await js.stream_info("S")
        assert info.state.messages == 2
        msg = await js.get_msg("S", 2)
        assert msg.headers is None and msg.data == b"new"
        raw = json.loads((await nc.request("$JS.API.STREAM.MSG.GET.S", b'{"seq":2}')).data)
        assert raw["message"]["time"] == "2023-11-14T22:13:50Z"  # start + 30 s
        clock.advance(31)  # the first message is 61 s old
        info = await js.stream_info("S")
        assert (info.state.messages, info.state.first_seq) == (1, 2)
        await nc.close()


async def test_pull_expiry_and_heartbeats_on_virtual_time() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        await _js_setup(nc, {"durable_name": "C", "ack_policy": "explicit"})
        inbox = nc.new_inbox()
        got: list[str] = []

        async def on_msg(msg: nats.aio.msg.Msg) -> None:
            got.append((msg.headers or {}).get("Status", "msg"))

        await nc.subscribe(inbox, cb=on_msg)
        body = {"batch": 1, "expires": 30 * NS, "idle_heartbeat": 10 * NS}
        await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.C", json.dumps(body).encode(), reply=inbox)
        await nc.flush()
        await server.wait_for(lambda: server.consumer_state("S", "C")["waiting"])
        for _ in range(3):
            clock.advance(10)
            await nc.flush()
        await server.wait_for(lambda: len(got) >= 3, timeout=2)
        assert got == ["100", "100", "408"]
        await nc.close()


async def test_autojump_moves_an_idle_server_to_its_next_timer() -> None:
    clock = ManualClock(autojump_threshold=0.01)
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"], storage="memory")
        sub = await js.pull_subscribe("s.>", durable="C", stream="S")
        started = time.monotonic()
        body = json.dumps({"batch": 1, "expires": 3600 * NS}).encode()  # an hour of server time
        msg = await nc.request("$JS.API.CONSUMER.MSG.NEXT.S.C", body, timeout=5)
        assert msg.headers["Status"] == "408"
        assert time.monotonic() - started < 3
        assert clock.monotonic() >= 3600
        del sub
        await nc.close()


def test_manual_clock_fires_in_deadline_order_and_never_goes_back() -> None:
    clock = ManualClock()
    fired: list[str] = []
    clock.call_later(5, fired.append, "b")
    clock.call_later(1, fired.append, "a")
    late = clock.call_later(9, fired.append, "never")
    clock.call_at(5, fired.append, "b2")
    late.cancel()
    assert clock.advance(10) == 3
    assert fired == ["a", "b", "b2"]
    assert clock.jump() == 0
    with pytest.raises(ValueError):
        clock.advance(-1)


async def test_time_moves_only_when_told() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        before = server.control.clock_state()
        await asyncio.sleep(0.05)
        assert server.control.clock_state()["now"] == before["now"] == 0.0
        assert server.control.advance_clock(2.5)["now"] == 2.5
