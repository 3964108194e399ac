"""JetStream throughput: publish (sync and async, memory and file), fetch+ack, KV put and get.

    python benchmarks/bench_jetstream.py [--repeat 3] [--only async]

Every workload is the same nats-py code on both servers; values are
operations per second seen by the client and the ratio is fakejs /
nats-server.  Each workload creates its own stream and deletes it after.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

import nats
from nats.js.api import StorageType, StreamConfig

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import main

PAYLOAD = b"x" * 128
SECONDS = 3.0
ASYNC_MESSAGES = 50_000


async def _stream(url: str, name: str, storage: StorageType):
    nc = await nats.connect(url, pending_size=64 * 1024 * 1024)
    js = nc.jetstream(publish_async_max_pending=4000)
    try:
        await js.delete_stream(name)
    except nats.js.errors.NotFoundError:
        pass
    await js.add_stream(StreamConfig(name=name, subjects=[f"{name}.>"], storage=storage))
    return nc, js


def publish_sync(storage: StorageType):
    async def workload(url: str) -> float:
        """Sequential js.publish round trips (publish, wait for the PubAck)."""
        name = f"BSYNC{storage.value.upper()}"
        nc, js = await _stream(url, name, storage)
        count = 0
        start = time.perf_counter()
        while time.perf_counter() - start < SECONDS:
            await js.publish(f"{name}.x", PAYLOAD)
            count += 1
        elapsed = time.perf_counter() - start
        await js.delete_stream(name)
        await nc.close()
        return count / elapsed

    return workload


def publish_async(storage: StorageType):
    async def workload(url: str) -> float:
        """js.publish_async with up to 4000 acks outstanding, until every ack is in."""
        name = f"BASYNC{storage.value.upper()}"
        nc, js = await _stream(url, name, storage)
        start = time.perf_counter()
        futures = [await js.publish_async(f"{name}.x", PAYLOAD) for _ in range(ASYNC_MESSAGES)]
        await asyncio.wait_for(js.publish_async_completed(), 120)
        elapsed = time.perf_counter() - start
        assert all(f.result().seq for f in futures)
        await js.delete_stream(name)
        await nc.close()
        return ASYNC_MESSAGES / elapsed

    return workload


async def fetch_ack(url: str) -> float:
    """Pull consumer: fetch batches of 100 and ack each message (msgs/s)."""
    name = "BFETCH"
    nc, js = await _stream(url, name, StorageType.MEMORY)
    total = 20_000
    for _ in range(total):
        await js.publish_async(f"{name}.x", PAYLOAD)
    await js.publish_async_completed()
    sub = await js.pull_subscribe(f"{name}.x", durable="worker", stream=name)
    start = time.perf_counter()
    done = 0
    while done < total:
        for msg in await sub.fetch(100, timeout=10):
            await msg.ack()
            done += 1
    await nc.flush()
    elapsed = time.perf_counter() - start
    await js.delete_stream(name)
    await nc.close()
    return total / elapsed


async def _bucket(url: str, direct: bool):
    nc = await nats.connect(url)
    js = nc.jetstream()
    try:
        await js.delete_key_value("BKV")
    except nats.js.errors.NotFoundError:
        pass  # no bucket left over from an earlier workload
    kv = await js.create_key_value(bucket="BKV", history=1, direct=direct)
    return nc, js, kv


def kv_put():
    async def workload(url: str) -> float:
        """Key-value puts (each waits for its ack), keys cycling over 100 (puts/s)."""
        nc, js, kv = await _bucket(url, False)
        count = 0
        start = time.perf_counter()
        while time.perf_counter() - start < SECONDS:
            await kv.put(f"k{count % 100}", PAYLOAD)
            count += 1
        elapsed = time.perf_counter() - start
        await js.delete_key_value("BKV")
        await nc.close()
        return count / elapsed

    return workload


def kv_get(direct: bool):
    async def workload(url: str) -> float:
        """Key-value gets of 100 keys (STREAM.MSG.GET, or Direct Get with direct=True) (gets/s)."""
        nc, js, kv = await _bucket(url, direct)
        for i in range(100):
            await kv.put(f"k{i}", PAYLOAD)
        count = 0
        start = time.perf_counter()
        while time.perf_counter() - start < SECONDS:
            entry = await kv.get(f"k{count % 100}")
            assert entry.value == PAYLOAD
            count += 1
        elapsed = time.perf_counter() - start
        await js.delete_key_value("BKV")
        await nc.close()
        return count / elapsed

    return workload


WORKLOADS = {
    "js: publish sync (memory)": ("msgs/s", publish_sync(StorageType.MEMORY)),
    "js: publish sync (file)": ("msgs/s", publish_sync(StorageType.FILE)),
    "js: publish async (memory)": ("msgs/s", publish_async(StorageType.MEMORY)),
    "js: publish async (file)": ("msgs/s", publish_async(StorageType.FILE)),
    "js: fetch 100 + ack each": ("msgs/s", fetch_ack),
    "kv: put": ("puts/s", kv_put()),
    "kv: get (msg get)": ("gets/s", kv_get(False)),
    "kv: get (direct get)": ("gets/s", kv_get(True)),
}

if __name__ == "__main__":
    main(WORKLOADS)
