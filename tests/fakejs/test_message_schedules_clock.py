"""Message schedules on a manual clock: an hour, a day or a time zone away takes no real time."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import nats

from fakejs import ManualClock, Server
from fakejs.gocompat.gotime import parse_rfc3339


async def _api(nc: nats.NATS, subject: str, body: Any = None) -> dict:
    reply = await nc.request(subject, json.dumps(body).encode() if body is not None else b"", timeout=2)
    return json.loads(reply.data)


async def _setup(nc: nats.NATS) -> None:
    body = {"name": "S", "subjects": ["s.>"], "storage": "memory", "allow_msg_schedules": True}
    assert "error" not in await _api(nc, "$JS.API.STREAM.CREATE.S", body)


async def _fired(nc: nats.NATS) -> list[tuple[str, bytes]]:
    """The messages stored on the target subject: (Nats-Schedule-Next, payload)."""
    found = []
    seq = 0
    while True:
        reply = await _api(nc, "$JS.API.STREAM.MSG.GET.S", {"seq": seq + 1, "next_by_subj": "s.t"})
        if "error" in reply:
            return found
        msg = reply["message"]
        seq = msg["seq"]
        headers = base64.b64decode(msg["hdrs"]).decode()
        found.append((headers.split("Nats-Schedule-Next: ")[1].split("\r\n")[0], base64.b64decode(msg["data"])))


async def _schedule(nc: nats.NATS, pattern: str, payload: bytes, **extra: str) -> None:
    headers = {"Nats-Schedule": pattern, "Nats-Schedule-Target": "s.t", **extra}
    reply = await nc.request("s.sched", payload, headers=headers, timeout=2)
    assert b'"seq"' in reply.data and b"error" not in reply.data, reply.data


async def test_an_hour_ahead_fires_when_the_clock_gets_there() -> None:
    clock = ManualClock(start_ns=parse_rfc3339("2026-03-01T23:00:00Z"))
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        await _setup(nc)
        started = time.monotonic()
        await _schedule(nc, "@at 2026-03-02T00:00:00Z", b"later")
        clock.advance(3599)
        assert await _fired(nc) == []
        clock.advance(1)
        assert await _fired(nc) == [("purge", b"later")]
        state = (await _api(nc, "$JS.API.STREAM.INFO.S"))["state"]
        assert (state["messages"], state["first_seq"]) == (1, 2)  # the schedule is gone
        assert time.monotonic() - started < 2
        await nc.close()


async def test_daily_cron_fires_every_midnight() -> None:
    clock = ManualClock(start_ns=parse_rfc3339("2026-03-01T23:00:00Z"))
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        await _setup(nc)
        await _schedule(nc, "@daily", b"tick")
        clock.advance(3600)
        assert await _fired(nc) == [("2026-03-03T00:00:00Z", b"tick")]
        clock.advance(86400)
        clock.advance(86400)
        assert await _fired(nc) == [
            ("2026-03-03T00:00:00Z", b"tick"),
            ("2026-03-04T00:00:00Z", b"tick"),
            ("2026-03-05T00:00:00Z", b"tick"),
        ]
        await nc.close()


async def test_cron_follows_its_time_zone_across_daylight_saving() -> None:
    # New York moves to daylight saving time on 2026-03-08: 9:00 is 14:00Z, then 13:00Z.
    clock = ManualClock(start_ns=parse_rfc3339("2026-03-07T12:00:00Z"))
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        await _setup(nc)
        await _schedule(nc, "0 0 9 * * *", b"nine", **{"Nats-Schedule-Time-Zone": "America/New_York"})
        clock.advance(2 * 3600 - 1)
        assert await _fired(nc) == []
        clock.advance(1)
        assert await _fired(nc) == [("2026-03-08T09:00:00-04:00", b"nine")]
        clock.advance(23 * 3600)
        assert [n for n, _ in await _fired(nc)] == ["2026-03-08T09:00:00-04:00", "2026-03-09T09:00:00-04:00"]
        await nc.close()


async def test_every_minute_fires_each_minute_the_clock_passes() -> None:
    clock = ManualClock(start_ns=parse_rfc3339("2026-03-01T00:00:00Z"))
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        await _setup(nc)
        await _schedule(nc, "@every 1m", b"m")
        clock.advance(600)
        assert await _fired(nc) == [(f"2026-03-01T00:{minute:02d}:00Z", b"m") for minute in range(2, 12)]
        await nc.close()


async def test_one_timer_for_many_schedules() -> None:
    clock = ManualClock(start_ns=parse_rfc3339("2026-03-01T00:00:00Z"))
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        await _setup(nc)
        for i in range(50):
            headers = {"Nats-Schedule": f"@at 2026-03-01T0{i % 5}:30:00Z", "Nats-Schedule-Target": "s.t"}
            await nc.request(f"s.sched.{i}", b"%d" % i, headers=headers, timeout=2)
        assert server.jetstream is not None
        assert len(server.jetstream.lookup("S").schedules) == 50
        clock.advance(3 * 3600)
        assert len(await _fired(nc)) == 30
        clock.advance(2 * 3600)
        assert len(await _fired(nc)) == 50
        await nc.close()


async def test_deleted_stream_and_purged_schedule_fire_nothing() -> None:
    clock = ManualClock(start_ns=parse_rfc3339("2026-03-01T00:00:00Z"))
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        await _setup(nc)
        await _schedule(nc, "@at 2026-03-01T01:00:00Z", b"gone")
        assert "error" not in await _api(nc, "$JS.API.STREAM.PURGE.S", {"filter": "s.sched"})
        clock.advance(7200)
        assert await _fired(nc) == []
        assert server.jetstream is not None
        assert len(server.jetstream.lookup("S").schedules) == 0  # dropped when it came due
        await _schedule(nc, "@every 1s", b"tick")
        assert "error" not in await _api(nc, "$JS.API.STREAM.DELETE.S")
        clock.advance(10)
        assert server.errors == []
        await nc.close()
