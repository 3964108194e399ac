"""Mirror and source retries run on the server clock.

A mirror or source whose origin is missing asks again after nats-server's
back-off: the 2 s throttle, 10 s per failure and 100-200 ms of jitter, so
the first retry comes 12.1-12.2 s after the first attempt.  With a
ManualClock those seconds pass at once.
"""

from __future__ import annotations

import nats

from fakejs import ManualClock, Server
from tests.harness.clocked import call, messages, settle


async def test_missing_origin_is_retried_after_the_backoff() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        await call(nc, "$JS.API.STREAM.CREATE.M", {"name": "M", "storage": "memory", "mirror": {"name": "O"}})
        body = {"name": "T", "subjects": ["t"], "storage": "memory", "sources": [{"name": "O"}]}
        await call(nc, "$JS.API.STREAM.CREATE.T", body)
        await settle(clock, 0.0)
        await settle(clock, 0.25)  # the source's first attempt, after its jitter
        mirror = (await call(nc, "$JS.API.STREAM.INFO.M"))["mirror"]
        assert mirror["error"]["err_code"] == 10059
        assert (await call(nc, "$JS.API.STREAM.INFO.T"))["sources"][0]["error"]["err_code"] == 10059
        await call(nc, "$JS.API.STREAM.CREATE.O", {"name": "O", "subjects": ["o"], "storage": "memory"})
        await nc.request("o", b"x", timeout=2)
        await settle(clock, 11.8)  # 12.05 s after the source's attempt: not yet
        assert (await messages(nc, "M"), await messages(nc, "T")) == (0, 0)
        await settle(clock, 0.5)
        assert (await messages(nc, "M"), await messages(nc, "T")) == (1, 1)
        mirror = (await call(nc, "$JS.API.STREAM.INFO.M"))["mirror"]
        assert "error" not in mirror and mirror["active"] >= 0
        await nc.close()


async def test_external_links_run() -> None:
    async with Server() as server:
        nc = await nats.connect(server.url)
        external = {"name": "M", "storage": "memory", "mirror": {"name": "O", "external": {"api": "$JS.D.API"}}}
        reply = await call(nc, "$JS.API.STREAM.CREATE.M", external)
        assert reply["mirror"]["external"] == {"api": "$JS.D.API", "deliver": ""}, reply
        await nc.close()
