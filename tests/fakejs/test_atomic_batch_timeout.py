"""Atomic batches on the manual clock: the 10 s abandonment and the server's batch limits.

nats-server drops a batch that receives no message for its timeout (10 s,
``jetstream { limits { batch { timeout } } }``) and publishes the
``BATCH_ABANDONED`` advisory with reason ``timeout``; a later message of the
batch is then refused as incomplete.  Each message restarts the timer.
"""

from __future__ import annotations

import asyncio
import json

import nats

from fakejs import ManualClock, Server, ServerOptions

INCOMPLETE = {"code": 400, "err_code": 10176, "description": "atomic publish batch is incomplete"}


def headers(bid: str, seq: int, commit: str = "") -> dict[str, str]:
    out = {"Nats-Batch-Id": bid, "Nats-Batch-Sequence": str(seq)}
    if commit:
        out["Nats-Batch-Commit"] = commit
    return out


async def _stream(nc: nats.NATS) -> None:
    body = {"name": "S", "subjects": ["s.>"], "storage": "memory", "allow_atomic": True}
    reply = json.loads((await nc.request("$JS.API.STREAM.CREATE.S", json.dumps(body).encode())).data)
    assert "error" not in reply, reply


async def test_batch_abandoned_after_ten_seconds_without_a_message() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        await _stream(nc)
        advisories: asyncio.Queue[dict] = asyncio.Queue()

        async def on_advisory(msg: nats.aio.msg.Msg) -> None:
            await advisories.put(json.loads(msg.data))

        await nc.subscribe("$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.S", cb=on_advisory)
        assert (await nc.request("s.a", b"1", headers=headers("B", 1))).data == b""
        clock.advance(9.9)
        assert (await nc.request("s.a", b"2", headers=headers("B", 2))).data == b""  # restarts the timer
        clock.advance(9.9)
        assert advisories.empty()
        clock.advance(0.2)
        advisory = await asyncio.wait_for(advisories.get(), 2)
        assert (advisory["batch"], advisory["reason"]) == ("B", "timeout")
        late = await nc.request("s.a", b"3", headers=headers("B", 3, "1"))
        assert json.loads(late.data)["error"] == INCOMPLETE
        await nc.close()


async def test_lowered_server_limits() -> None:
    clock = ManualClock()
    options = ServerOptions(port=0, jetstream=True)
    options.jetstream_batch_max_msgs = 2
    options.jetstream_batch_inflight_total = 1
    options.jetstream_batch_timeout = 1.0
    async with Server(options, clock=clock) as server:
        nc = await nats.connect(server.url)
        await _stream(nc)
        assert (await nc.request("s.a", b"", headers=headers("A", 1))).data == b""
        busy = await nc.request("s.a", b"", headers=headers("X", 1))
        assert json.loads(busy.data)["error"]["err_code"] == 10210
        assert (await nc.request("s.a", b"", headers=headers("A", 2))).data == b""
        large = await nc.request("s.a", b"", headers=headers("A", 3, "1"))
        assert json.loads(large.data)["error"]["description"] == "atomic publish batch is too large: 2"
        assert (await nc.request("s.a", b"", headers=headers("X", 1))).data == b""
        clock.advance(1.1)
        assert (await nc.request("s.a", b"", headers=headers("Y", 1))).data == b""  # X timed out
        await nc.close()
