"""Core NATS throughput: publish to a subscriber, request/reply, fan-out to 10.

    python benchmarks/bench_core.py [--repeat 3] [--only fan]

Each workload reports messages per second handled end to end by a nats-py
client process; the ratio is fakejs / nats-server.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

import nats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main

PAYLOAD = b"x" * 128
MESSAGES = 200_000


async def pub_sub(url: str) -> float:
    """One publisher connection, one subscriber connection: delivered msgs/s."""
    pub = await nats.connect(url, pending_size=64 * 1024 * 1024)
    sub_nc = await nats.connect(url, pending_size=64 * 1024 * 1024)
    done = asyncio.Event()
    count = 0

    async def cb(msg):
        nonlocal count
        count += 1
        if count == MESSAGES:
            done.set()

    await sub_nc.subscribe("bench.pubsub", cb=cb, pending_msgs_limit=MESSAGES + 1, pending_bytes_limit=-1)
    await sub_nc.flush()
    await sub_nc.flush()  # nats-py's first PING can overtake the SUB: the second PONG proves interest
    start = time.perf_counter()
    for _ in range(MESSAGES):
        await pub.publish("bench.pubsub", PAYLOAD)
    await pub.flush(timeout=60)
    await asyncio.wait_for(done.wait(), 120)
    elapsed = time.perf_counter() - start
    await pub.close()
    await sub_nc.close()
    return MESSAGES / elapsed


async def request_reply(url: str) -> float:
    """Sequential request/reply round trips per second for 3 seconds."""
    responder = await nats.connect(url)
    requester = await nats.connect(url)

    async def handler(msg):
        await msg.respond(msg.data)

    await responder.subscribe("bench.rr", cb=handler)
    await responder.flush()
    await responder.flush()  # nats-py's first PING can overtake the SUB: the second PONG proves interest
    for _ in range(100):  # warm up the reply subscription
        await requester.request("bench.rr", PAYLOAD, timeout=5)
    count = 0
    start = time.perf_counter()
    while time.perf_counter() - start < 3.0:
        await requester.request("bench.rr", PAYLOAD, timeout=5)
        count += 1
    elapsed = time.perf_counter() - start
    await requester.close()
    await responder.close()
    return count / elapsed


async def fan_out(url: str) -> float:
    """One publisher, ten subscriber connections: delivered msgs/s (all subscribers)."""
    messages = MESSAGES // 10
    pub = await nats.connect(url, pending_size=64 * 1024 * 1024)
    subscribers = [await nats.connect(url) for _ in range(10)]
    remaining = messages * 10
    done = asyncio.Event()

    async def cb(msg):
        nonlocal remaining
        remaining -= 1
        if remaining == 0:
            done.set()

    for nc in subscribers:
        await nc.subscribe("bench.fan", cb=cb, pending_msgs_limit=messages + 1, pending_bytes_limit=-1)
        await nc.flush()
        await nc.flush()  # nats-py's first PING can overtake the SUB: the second PONG proves interest
    start = time.perf_counter()
    for _ in range(messages):
        await pub.publish("bench.fan", PAYLOAD)
    await pub.flush(timeout=60)
    await asyncio.wait_for(done.wait(), 120)
    elapsed = time.perf_counter() - start
    await pub.close()
    for nc in subscribers:
        await nc.close()
    return messages * 10 / elapsed


WORKLOADS = {
    "core: publish -> 1 subscriber": ("msgs/s", pub_sub),
    "core: request/reply round trips": ("req/s", request_reply),
    "core: fan-out to 10 subscribers": ("msgs/s", fan_out),
}

if __name__ == "__main__":
    main(WORKLOADS)
