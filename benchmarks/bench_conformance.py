"""What the client conformance watch costs, side by side with nats-server.

    python benchmarks/bench_conformance.py [--messages 1000000]

Three servers run as processes: fakejs, fakejs ``--conformance`` and
nats-server.  The workload stores ``--messages`` messages spread over 5,000
subjects, then drains them with an ADR-37 style loop on one inbox: pulls of
500 re-issued at half the buffer, every message acked.  Values are messages
per second consumed (higher is better); the ratio is against nats-server.
With the watch on, each delivery and ack goes through it, so the two fakejs
rows together show its cost per message, whatever the number of subjects.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

import nats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ROOT, Result, report, start_server

from fakejs.targets.real import ServerProcess

SUBJECTS = 5_000
BUFFER = 500


async def drain(url: str, messages: int) -> float:
    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(name="BENCH", subjects=["bench.>"], storage="memory")
    for start in range(0, messages, 1_000):
        await asyncio.gather(*(nc.publish(f"bench.{i % SUBJECTS}", b"x" * 16) for i in range(start, start + 1_000)))
        await nc.flush()
    await js.add_consumer("BENCH", durable_name="C", ack_policy="explicit", max_ack_pending=-1)
    inbox = nc.new_inbox()
    state = {"owed": 0, "got": 0}
    done = asyncio.Event()

    async def pull() -> None:
        batch = BUFFER - state["owed"]
        state["owed"] += batch
        body = {"batch": batch, "expires": 5_000_000_000, "idle_heartbeat": 1_000_000_000}
        await nc.publish("$JS.API.CONSUMER.MSG.NEXT.BENCH.C", json.dumps(body).encode(), reply=inbox)

    async def on_msg(msg: nats.aio.msg.Msg) -> None:
        if msg.headers and msg.headers.get("Status"):
            return
        state["owed"] -= 1
        state["got"] += 1
        await msg.ack()
        if state["got"] >= messages:
            done.set()
        elif state["owed"] <= BUFFER // 2:
            await pull()

    await nc.subscribe(inbox, cb=on_msg)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await pull()
    await asyncio.wait_for(done.wait(), timeout=600)
    rate = messages / (loop.time() - started)
    await nc.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1_000_000)
    messages = parser.parse_args().messages
    watched = ServerProcess(command=[sys.executable, "-m", "fakejs", "--conformance"], cwd=ROOT).start()
    servers = {"fakejs": start_server("fakejs"), "watched": watched, "nats-server": start_server("nats-server")}
    try:
        rates = {kind: asyncio.run(drain(server.url, messages)) for kind, server in servers.items()}
    finally:
        for server in servers.values():
            server.stop()
    name = f"drain {messages:,} over {SUBJECTS:,} subjects"
    print(
        report(
            [
                Result(name, "msg/s", rates["fakejs"], rates["nats-server"]),
                Result("  the same, --conformance", "msg/s", rates["watched"], rates["nats-server"]),
            ]
        )
    )


if __name__ == "__main__":
    main()
