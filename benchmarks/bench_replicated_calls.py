"""Python calls per JetStream publish on an R3 stream of an in-process cluster.

    python benchmarks/bench_replicated_calls.py [--count 500] [--storage file] [--profile]

nats-py publishes ``--count`` messages one after the other (each awaiting its
PubAck) through node 2 of ``fakejs.Cluster(size=3, jetstream=True)`` to an R3
stream (memory, or ``--storage file``: the group's log on disk too), after a warm-up round, with cProfile counting every Python
call of the process (the client's included): the JetStream replicated across
the nodes (the stream group's Raft log, its three state machines, the
in-process exchange).  Prints calls per message (under cProfile), and, from a
run without it, the process's CPU time per message (what a busy machine
disturbs least) and messages per second; ``--profile`` adds cProfile's
busiest functions by calls.  ``benchmarks/bench_js_cluster.py`` sets the
rates beside nats-server's.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import time

import nats

from fakejs import Cluster

WARM_UP = 100


async def publish(url: str, count: int, profiler: cProfile.Profile | None) -> tuple[float, float]:
    """Seconds ``count`` sequential publishes took, and the process's CPU seconds (under ``profiler`` when given)."""
    nc = await nats.connect(url)
    js = nc.jetstream()
    for i in range(WARM_UP):
        await js.publish(f"bench.{i % 10}", b"x" * 32)
    started, cpu = time.perf_counter(), time.process_time()
    if profiler is not None:
        profiler.enable()
    for i in range(count):
        await js.publish(f"bench.{i % 10}", b"x" * 32)
    if profiler is not None:
        profiler.disable()
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    await nc.close()
    return elapsed, cpu


async def run(count: int, profiler: cProfile.Profile | None, storage: str = "memory") -> tuple[float, float]:
    async with Cluster(size=3, jetstream=True, seed=1) as cluster:
        nc = await nats.connect(cluster.url(0))
        await nc.jetstream().add_stream(name="BENCH", subjects=["bench.>"], num_replicas=3, storage=storage)
        await nc.close()
        return await publish(cluster.url(1), count, profiler)


def measure(count: int, storage: str, show: bool) -> None:
    elapsed, cpu = asyncio.run(run(count, None, storage))
    profiler = cProfile.Profile()
    asyncio.run(run(count, profiler, storage))
    stats = pstats.Stats(profiler)
    calls = sum(entry[1] for entry in stats.stats.values())  # type: ignore[attr-defined]
    print(
        f"{'replicated':>10}: {calls / count:6.0f} calls/msg  {cpu / count * 1e6:6.0f} us CPU/msg  {count / elapsed:6.0f} msg/s"
    )
    if show:
        stats.sort_stats("calls").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--storage", choices=["memory", "file"], default="memory")
    args = parser.parse_args()
    measure(args.count, args.storage, args.profile)


if __name__ == "__main__":
    main()
