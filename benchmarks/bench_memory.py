"""Resident memory for a memory stream holding 1,000,000 x 100-byte messages.

    python benchmarks/bench_memory.py [--messages 1000000]

Each server runs as a subprocess; the messages are published without acks
(then counted through STREAM.INFO), and the server's VmRSS is read from
/proc before and after.  fakejs targets less than 400 MB at one million.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

import nats

from fakejs.targets.real import ServerProcess

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import start_server

TARGET_MB = 400


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


async def fill(server: ServerProcess, messages: int, size: int) -> tuple[float, float, float]:
    nc = await nats.connect(server.url, pending_size=256 * 1024 * 1024, flush_timeout=120)
    config = {"name": "MEM", "subjects": ["mem.>"], "storage": "memory"}
    await nc.request("$JS.API.STREAM.CREATE.MEM", json.dumps(config).encode(), timeout=5)
    assert server.process is not None
    before = rss_mb(server.process.pid)
    payload = b"x" * size
    start = time.perf_counter()
    for i in range(messages):
        await nc.publish("mem.a", payload)
        if i % 10_000 == 9_999:
            await nc.flush(timeout=120)
    await nc.flush(timeout=120)
    while True:
        info = json.loads((await nc.request("$JS.API.STREAM.INFO.MEM", b"", timeout=30)).data)
        if info["state"]["messages"] >= messages:
            break
        await asyncio.sleep(0.1)
    elapsed = time.perf_counter() - start
    after = rss_mb(server.process.pid)
    await nc.close()
    return before, after, messages / elapsed


def main() -> None:
    # The RSS read is the spawned process's: fakejs's server must be that process, not forked beside it.
    os.environ["FAKEJS_FORKSERVER"] = "0"
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100)
    args = parser.parse_args()
    print(f"{'server':12} {'rss before':>11} {'rss after':>10} {'fill rate':>12}")
    results = {}
    for kind in ("fakejs", "nats-server"):
        server = start_server(kind)
        try:
            before, after, rate = asyncio.run(fill(server, args.messages, args.size))
        finally:
            server.stop()
        results[kind] = after
        print(f"{kind:12} {before:>8.0f} MB {after:>7.0f} MB {rate:>8,.0f} m/s")
    verdict = "ok" if results["fakejs"] < TARGET_MB else "OVER TARGET"
    print(
        f"fakejs with {args.messages:,} x {args.size} B: {results['fakejs']:.0f} MB (target < {TARGET_MB} MB: {verdict})"
    )


if __name__ == "__main__":
    main()
