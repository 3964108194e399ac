"""An origin deleted and created again under a mirror and a source, on the server clock.

nats-server 2.15.1 shows no error for either.  The mirror's consumer is
gone with the origin; the 10 s health check sets a new one up after the
mirror's last sequence, which then waits for the new origin to reach it.
The source's new consumer is refused for the origin's changed identity
(not shown) and set up again from the new origin's first message.  With
heartbeats every second, the last one can come just before the delete, so
the first health check (at 10 s) still finds the origin heard from and the
second (at 20 s) acts; a ManualClock pins those seconds.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nats

from fakejs import ManualClock, Server


async def call(nc: nats.NATS, subject: str, body: Any = None) -> dict:
    reply = await nc.request(subject, json.dumps(body).encode() if body is not None else b"", timeout=2)
    return json.loads(reply.data)


async def settle(clock: ManualClock, seconds: float, steps: int = 1) -> None:
    for _ in range(steps):
        clock.advance(seconds / steps)
        await asyncio.sleep(0.02)


async def state(nc: nats.NATS) -> tuple:
    m = await call(nc, "$JS.API.STREAM.INFO.M")
    t = await call(nc, "$JS.API.STREAM.INFO.T")
    return (
        m["state"]["last_seq"],
        m["mirror"].get("error"),
        t["state"]["messages"],
        t["sources"][0].get("seq"),
        t["sources"][0].get("error"),
    )


async def test_recreated_origin() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        origin = {"name": "O", "subjects": ["o.>"], "storage": "memory"}
        await call(nc, "$JS.API.STREAM.CREATE.O", origin)
        for i in range(3):
            await nc.request(f"o.{i}", b"x", timeout=2)
        await call(nc, "$JS.API.STREAM.CREATE.M", {"name": "M", "storage": "memory", "mirror": {"name": "O"}})
        await call(nc, "$JS.API.STREAM.CREATE.T", {"name": "T", "storage": "memory", "sources": [{"name": "O"}]})
        await settle(clock, 1.0, 10)
        assert await state(nc) == (3, None, 3, 3, None)
        await call(nc, "$JS.API.STREAM.DELETE.O")
        await call(nc, "$JS.API.STREAM.CREATE.O", origin)
        for i in range(2):
            await nc.request(f"o.n{i}", b"y", timeout=2)
        await settle(clock, 18.0, 36)  # a heartbeat came just before the delete: no word for 10 s by 20 s
        assert await state(nc) == (3, None, 3, 3, None)
        await settle(clock, 2.0, 8)  # the mirror's new consumer waits at 4; the source's is refused
        assert await state(nc) == (3, None, 3, None, None)
        await settle(clock, 2.5, 10)  # the source starts over from the new origin's first message
        assert await state(nc) == (3, None, 5, 2, None)
        for i in range(3):
            await nc.request(f"o.m{i}", b"z", timeout=2)
        await settle(clock, 0.5, 5)
        assert await state(nc) == (5, None, 8, 5, None)
        m4 = await call(nc, "$JS.API.STREAM.MSG.GET.M", {"seq": 4})
        assert m4["message"]["subject"] == "o.m1"
        await nc.close()
