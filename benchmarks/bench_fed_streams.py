"""Streams fed by streams and batch publishing, side by side with nats-server.

    python benchmarks/bench_fed_streams.py [--repeat 1] [--only mirror]

* mirror / source catch-up: an origin holding 50,000 messages on 1,000
  subjects, then a mirror (or a source with a subject transform) is created
  and timed until it holds them all -- messages copied per second;
* atomic batches: 500 batches of 100 messages, each committed at once --
  messages stored per second;
* fast batch: one ``$FI`` batch of 50,000 messages in ``ok`` mode with a flow
  of 500, paced by the server's flow-control acks -- messages per second.

Values are rates (higher is better).  Each copy or stored message must cost
the same whatever the stream holds: the rates are per message.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

import nats
from nats.aio.client import Client

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Workload, main

MESSAGES = 50_000
SUBJECTS = 1_000
IN_FLIGHT = 500
BATCHES, BATCH_SIZE = 500, 100


async def api(nc: Client, subject: str, body: dict | None = None) -> dict:
    reply = await nc.request(subject, json.dumps(body or {}).encode(), timeout=10)
    return json.loads(reply.data)


async def fresh(nc: Client, name: str, config: dict) -> None:
    await api(nc, f"$JS.API.STREAM.DELETE.{name}")
    created = await api(nc, f"$JS.API.STREAM.CREATE.{name}", {"name": name, "storage": "memory", **config})
    assert "error" not in created, created


async def fill_origin(nc: Client) -> None:
    await fresh(nc, "O", {"subjects": ["o.>"]})
    js = nc.jetstream()
    for first in range(0, MESSAGES, IN_FLIGHT):
        batch = range(first, min(first + IN_FLIGHT, MESSAGES))
        await asyncio.gather(*(js.publish(f"o.{i % SUBJECTS}", b"x" * 32) for i in batch))


def catch_up(name: str, config: dict) -> Workload:
    async def workload(url: str) -> float:
        nc = await nats.connect(url)
        await fill_origin(nc)
        await api(nc, f"$JS.API.STREAM.DELETE.{name}")
        loop = asyncio.get_running_loop()
        started = loop.time()
        await fresh(nc, name, config)
        while (await api(nc, f"$JS.API.STREAM.INFO.{name}"))["state"]["messages"] < MESSAGES:
            await asyncio.sleep(0.01)
        elapsed = loop.time() - started
        for stream in (name, "O"):
            await api(nc, f"$JS.API.STREAM.DELETE.{stream}")
        await nc.close()
        return MESSAGES / elapsed

    return workload


async def atomic_batches(url: str) -> float:
    nc = await nats.connect(url)
    await fresh(nc, "A", {"subjects": ["a.>"], "allow_atomic": True})
    loop = asyncio.get_running_loop()
    started = loop.time()
    for b in range(BATCHES):
        for seq in range(1, BATCH_SIZE):
            headers = {"Nats-Batch-Id": f"b{b}", "Nats-Batch-Sequence": str(seq)}
            await nc.publish(f"a.{seq % 10}", b"x" * 32, headers=headers)
        headers = {"Nats-Batch-Id": f"b{b}", "Nats-Batch-Sequence": str(BATCH_SIZE), "Nats-Batch-Commit": "1"}
        ack = await nc.request("a.0", b"x" * 32, headers=headers, timeout=10)
        assert b'"count":' in ack.data, ack.data
    elapsed = loop.time() - started
    await api(nc, "$JS.API.STREAM.DELETE.A")
    await nc.close()
    return BATCHES * BATCH_SIZE / elapsed


async def fast_batch(url: str) -> float:
    nc = await nats.connect(url)
    await fresh(nc, "F", {"subjects": ["f.>"], "allow_batched": True})
    inbox = nc.new_inbox()
    acks: asyncio.Queue[bytes] = asyncio.Queue()

    async def heard(msg: nats.aio.msg.Msg) -> None:
        await acks.put(msg.data)

    await nc.subscribe(f"{inbox}.>", cb=heard)  # each answer goes to the reply subject it answers
    flow = 500
    loop = asyncio.get_running_loop()
    started = loop.time()
    acked = 0  # the batch sequence the server's last flow-control ack covers
    for seq in range(1, MESSAGES + 1):
        while seq - acked > 2 * flow:  # paced by the acks, as a fast-batch client is
            ack = json.loads(await asyncio.wait_for(acks.get(), 10))
            acked = max(acked, ack.get("seq", 0))
        op = 0 if seq == 1 else (2 if seq == MESSAGES else 1)
        await nc.publish(f"f.{seq % 10}", b"x" * 32, reply=f"{inbox}.B.{flow}.ok.{seq}.{op}.$FI")
    while True:  # until the final PubAck
        reply = json.loads(await asyncio.wait_for(acks.get(), 10))
        if "count" in reply:
            break
    elapsed = loop.time() - started
    assert reply["count"] == MESSAGES, reply
    await api(nc, "$JS.API.STREAM.DELETE.F")
    await nc.close()
    return MESSAGES / elapsed


WORKLOADS = {
    "mirror catch-up": ("msg/s", catch_up("M", {"mirror": {"name": "O"}})),
    "source catch-up, transform": (
        "msg/s",
        catch_up(
            "S", {"sources": [{"name": "O", "subject_transforms": [{"src": "o.*", "dest": "s.{{wildcard(1)}}"}]}]}
        ),
    ),
    "atomic batches of 100": ("msg/s", atomic_batches),
    "fast batch": ("msg/s", fast_batch),
}

if __name__ == "__main__":
    main(WORKLOADS)
