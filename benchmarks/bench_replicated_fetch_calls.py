"""Python calls and Raft proposals per message fetched and acknowledged from an R3 stream of an in-process cluster.

    python benchmarks/bench_replicated_fetch_calls.py [--count 500] [--profile]

``fakejs.Cluster(size=3, jetstream=True)`` holds ``--count`` messages on an R3
stream; nats-py fetches them in batches of 100 through node 3 from a durable
pull consumer (R3, its own group) and acknowledges each, after a warm-up
batch, with cProfile counting every Python call of the process (the client's
included).  Prints calls per message and, counted on every group member,
appends proposed (one call of the Raft node's ``propose_many``) and entries
proposed per message; from a run without cProfile, the process's CPU time
per message and messages per second.  ``--profile`` adds cProfile's busiest
functions by calls.  ``benchmarks/bench_js_cluster.py`` sets the rates beside nats-server's.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import time
from collections.abc import Sequence

import nats

from fakejs import Cluster
from fakejs.jetstream.raft import RaftNode, Ready

BATCH = 100


class ProposalCounter:
    """Counts the appends and entries proposed to every Raft node of the process while on."""

    def __init__(self) -> None:
        self.on = False
        self.appends = 0
        self.entries = 0
        original = RaftNode.propose_many
        counter = self

        def propose_many(node: RaftNode, items: Sequence[bytes]) -> Ready:
            if counter.on:
                counter.appends += 1
                counter.entries += len(items)
            return original(node, items)

        RaftNode.propose_many = propose_many  # type: ignore[method-assign]


async def fetch(
    url: str, count: int, profiler: cProfile.Profile | None, counter: ProposalCounter
) -> tuple[float, float]:
    """Seconds fetching and acknowledging ``count`` messages took, and the process's CPU seconds."""
    nc = await nats.connect(url)
    sub = await nc.jetstream().pull_subscribe("bench.>", durable="B", stream="BENCH")
    for msg in await sub.fetch(BATCH, timeout=10):  # warm-up
        await msg.ack()
    await nc.flush()  # the warm-up's acks are in before counting starts
    started, cpu = time.perf_counter(), time.process_time()
    counter.on = True
    if profiler is not None:
        profiler.enable()
    done = 0
    while done < count:
        for msg in await sub.fetch(BATCH, timeout=10):
            await msg.ack()
            done += 1
    await nc.flush()
    if profiler is not None:
        profiler.disable()
    counter.on = False
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    await nc.close()
    return elapsed, cpu


async def run(count: int, profiler: cProfile.Profile | None, counter: ProposalCounter) -> tuple[float, float]:
    async with Cluster(size=3, jetstream=True, seed=1) as cluster:
        nc = await nats.connect(cluster.url(0))
        js = nc.jetstream()
        await js.add_stream(name="BENCH", subjects=["bench.>"], num_replicas=3)
        for i in range(count + BATCH):
            await js.publish(f"bench.{i % 10}", b"x" * 32)
        await nc.close()
        return await fetch(cluster.url(2), count, profiler, counter)


def measure(count: int, show: bool) -> None:
    counter = ProposalCounter()
    elapsed, cpu = asyncio.run(run(count, None, counter))
    counter.appends = counter.entries = 0
    profiler = cProfile.Profile()
    asyncio.run(run(count, profiler, counter))
    stats = pstats.Stats(profiler)
    calls = sum(entry[1] for entry in stats.stats.values())  # type: ignore[attr-defined]
    print(
        f"fetch+ack: {calls / count:6.0f} calls/msg  {counter.appends / count:6.3f} appends/msg"
        f"  {counter.entries / count:5.2f} entries/msg  {cpu / count * 1e6:6.0f} us CPU/msg  {count / elapsed:6.0f} msg/s"
    )
    if show:
        stats.sort_stats("calls").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    measure(args.count, args.profile)


if __name__ == "__main__":
    main()
