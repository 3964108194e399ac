"""JetStream in a three-node cluster, side by side with nats-server.

    python benchmarks/bench_js_cluster.py

fakejs runs as ``python -m fakejs --cluster_size 3 -js`` (its JetStream
replicated across the three nodes of one process); nats-server as three processes with
JetStream (:class:`fakejs.targets.cluster.RealCluster`).  Workloads, on an R3
file stream, through a node the stream leader may or may not be on:

* publish: 5,000 sequential JetStream publishes through node 2 -- PubAcks per second;
* fetch and ack: 5,000 messages fetched in batches of 100 through node 3, each acked --
  messages per second;
* fast batch: one ``$FI`` batch of 5,000 messages (``ok`` mode, a flow of 500, paced by the
  server's flow-control acks) into an R3 stream with ``allow_batched``, through node 1 --
  messages per second until the final PubAck;
* source catch-up: an R3 stream created sourcing an R3 origin that holds 5,000 messages,
  timed until it holds them all -- messages copied per second.

Values are rates (higher is better).
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

import nats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ROOT, Result, report

from fakejs.targets.cluster import RealCluster

MESSAGES = 5_000
FLOW = 500


async def fast_batch(url: str) -> float:
    """One fast batch of :data:`MESSAGES` into an R3 stream: messages per second until its final PubAck."""
    nc = await nats.connect(url)
    config = {"name": "FAST", "subjects": ["fast.>"], "num_replicas": 3, "allow_batched": True}
    created = json.loads((await nc.request("$JS.API.STREAM.CREATE.FAST", json.dumps(config).encode(), timeout=10)).data)
    assert "error" not in created, created
    inbox = nc.new_inbox()
    acks: asyncio.Queue[bytes] = asyncio.Queue()

    async def heard(msg: nats.aio.msg.Msg) -> None:
        await acks.put(msg.data)

    await nc.subscribe(f"{inbox}.>", cb=heard)  # each answer goes to the reply subject it answers
    loop = asyncio.get_running_loop()
    started = loop.time()
    acked = 0  # the batch sequence the server's last flow-control ack covers
    for seq in range(1, MESSAGES + 1):
        while seq - acked > 2 * FLOW:  # paced by the acks, as a fast-batch client is
            acked = max(acked, json.loads(await asyncio.wait_for(acks.get(), 10)).get("seq", 0))
        op = 0 if seq == 1 else (2 if seq == MESSAGES else 1)
        await nc.publish(f"fast.{seq % 10}", b"x" * 32, reply=f"{inbox}.B.{FLOW}.ok.{seq}.{op}.$FI")
    while "count" not in (reply := json.loads(await asyncio.wait_for(acks.get(), 10))):
        pass  # until the final PubAck
    elapsed = loop.time() - started
    assert reply["count"] == MESSAGES, reply
    await nc.request("$JS.API.STREAM.DELETE.FAST", b"", timeout=10)
    await nc.close()
    return MESSAGES / elapsed


async def source_catch_up(url: str) -> float:
    """An R3 stream sourcing an R3 origin of :data:`MESSAGES`: messages copied per second."""
    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(name="ORIGIN", subjects=["origin.>"], num_replicas=3)
    for first in range(0, MESSAGES, FLOW):
        await asyncio.gather(*(js.publish(f"origin.{i % 10}", b"x" * 32) for i in range(first, first + FLOW)))
    loop = asyncio.get_running_loop()
    started = loop.time()
    config = {"name": "SOURCED", "num_replicas": 3, "sources": [{"name": "ORIGIN"}]}
    created = json.loads(
        (await nc.request("$JS.API.STREAM.CREATE.SOURCED", json.dumps(config).encode(), timeout=10)).data
    )
    assert "error" not in created, created
    while (await js.stream_info("SOURCED")).state.messages < MESSAGES:
        await asyncio.sleep(0.01)
    elapsed = loop.time() - started
    for name in ("SOURCED", "ORIGIN"):
        await js.delete_stream(name)
    await nc.close()
    return MESSAGES / elapsed


async def workloads(urls: list[str]) -> tuple[float, float, float, float]:
    writer, reader = await nats.connect(urls[1]), await nats.connect(urls[2])
    js = writer.jetstream()
    await js.add_stream(name="BENCH", subjects=["bench.>"], num_replicas=3)
    loop = asyncio.get_running_loop()
    started = loop.time()
    for i in range(MESSAGES):
        await js.publish(f"bench.{i % 10}", b"x" * 32)
    publish_rate = MESSAGES / (loop.time() - started)
    sub = await reader.jetstream().pull_subscribe("bench.>", durable="B", stream="BENCH")
    started = loop.time()
    done = 0
    while done < MESSAGES:
        for msg in await sub.fetch(100, timeout=10):
            await msg.ack()
            done += 1
    fetch_rate = MESSAGES / (loop.time() - started)
    await js.delete_stream("BENCH")
    await writer.close()
    await reader.close()
    return publish_rate, fetch_rate, await fast_batch(urls[0]), await source_catch_up(urls[0])


def fake_cluster() -> tuple[subprocess.Popen[bytes], list[str], str]:
    """``fakejs --cluster_size 3 -js`` in a process; its node URLs from the ports file."""
    folder = tempfile.mkdtemp(prefix="fakejs-bench-")
    command = [sys.executable, "-m", "fakejs", "--cluster_size", "3", "-js", "-sd", folder, "-p", "-1"]
    process = subprocess.Popen([*command, "--ports_file_dir", folder], cwd=ROOT, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = glob.glob(os.path.join(folder, "*.ports"))
        if found:
            with open(found[0]) as handle:
                return process, json.load(handle)["nats"], folder
        time.sleep(0.05)
    process.kill()
    raise SystemExit("fakejs --cluster_size 3 -js did not write its ports file")


def main() -> None:
    process, urls, _ = fake_cluster()
    try:
        fake = asyncio.run(workloads(urls))
    finally:
        process.terminate()
        process.wait(10)
    real_cluster = RealCluster(3, jetstream=True).start()
    try:
        real = asyncio.run(workloads(real_cluster.urls))
    finally:
        real_cluster.stop()
    print(
        report(
            [
                Result("R3 publish through node 2", "msg/s", fake[0], real[0]),
                Result("R3 fetch+ack through node 3", "msg/s", fake[1], real[1]),
                Result("R3 fast batch through node 1", "msg/s", fake[2], real[2]),
                Result("R3 source catch-up", "msg/s", fake[3], real[3]),
            ]
        )
    )


if __name__ == "__main__":
    main()
