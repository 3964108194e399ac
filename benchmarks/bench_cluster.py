"""Core NATS across a three-node cluster, side by side with nats-server.

    python benchmarks/bench_cluster.py [--repeat 1] [--only fan]

Each kind runs as three processes (``nats-server``, or ``python -m fakejs``
with the same flags), the second and third routed to the first and meshed
by gossip (:func:`fakejs.targets.cluster.start_cluster`):

* publish across a route: 100,000 small messages published on node 1 to a
  subscriber on node 3 -- messages received per second;
* queue group across nodes: 50,000 messages published on node 1 to a queue
  group with a member on each node -- messages delivered per second;
* requests across a route: 5,000 sequential requests from node 1 to a
  responder on node 2 -- round trips per second;
* many subjects across a route: a subscriber on node 3 holds 5,000 subjects
  (5,000 ``RS+`` crossed to node 1), 100,000 messages published on node 1
  round-robin over them -- messages received per second (compare with the
  one-subject rate: routing costs the same per message whatever the subjects).

Values are rates (higher is better).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable

import nats
from nats.aio.msg import Msg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Result, report

from fakejs.targets.cluster import ProcessCluster, start_cluster

MESSAGES = 100_000
QUEUE_MESSAGES = 50_000
REQUESTS = 5_000

ClusterWorkload = Callable[[list[str]], Awaitable[float]]


async def _settled(publisher: nats.NATS, subscriber: nats.NATS, subject: str) -> None:
    """Wait until a message from ``publisher`` reaches ``subscriber`` on ``subject`` (interest crossed)."""
    arrived = asyncio.Event()

    async def heard(msg: Msg) -> None:
        arrived.set()

    probe = await subscriber.subscribe(subject + ".probe", cb=heard)
    await subscriber.flush()
    while not arrived.is_set():
        await publisher.publish(subject + ".probe", b"")
        await asyncio.sleep(0.01)
    await probe.unsubscribe()


async def across_a_route(urls: list[str]) -> float:
    publisher, subscriber = await nats.connect(urls[0]), await nats.connect(urls[2])
    done = asyncio.Event()
    count = 0

    async def heard(msg: Msg) -> None:
        nonlocal count
        count += 1
        if count == MESSAGES:
            done.set()

    await subscriber.subscribe("bench.x", cb=heard, pending_msgs_limit=MESSAGES * 2)
    await _settled(publisher, subscriber, "bench")
    loop = asyncio.get_running_loop()
    started = loop.time()
    for _ in range(MESSAGES):
        await publisher.publish("bench.x", b"x" * 16)
    await publisher.flush()
    await asyncio.wait_for(done.wait(), 120)
    elapsed = loop.time() - started
    await publisher.close()
    await subscriber.close()
    return MESSAGES / elapsed


async def queue_across_nodes(urls: list[str]) -> float:
    clients = [await nats.connect(url) for url in urls]
    done = asyncio.Event()
    count = 0

    async def heard(msg: Msg) -> None:
        nonlocal count
        count += 1
        if count == QUEUE_MESSAGES:
            done.set()

    for nc in clients:
        await nc.subscribe("bench.q", queue="workers", cb=heard, pending_msgs_limit=QUEUE_MESSAGES * 2)
    for nc in clients[1:]:
        await _settled(clients[0], nc, f"bench.{id(nc)}")
    loop = asyncio.get_running_loop()
    started = loop.time()
    for _ in range(QUEUE_MESSAGES):
        await clients[0].publish("bench.q", b"x" * 16)
    await clients[0].flush()
    await asyncio.wait_for(done.wait(), 120)
    elapsed = loop.time() - started
    for nc in clients:
        await nc.close()
    return QUEUE_MESSAGES / elapsed


async def requests_across_a_route(urls: list[str]) -> float:
    requester, responder = await nats.connect(urls[0]), await nats.connect(urls[1])

    async def answer(msg: Msg) -> None:
        await msg.respond(msg.data)

    await responder.subscribe("bench.svc", cb=answer)
    await _settled(requester, responder, "bench.svc.ready")
    loop = asyncio.get_running_loop()
    started = loop.time()
    for _ in range(REQUESTS):
        await requester.request("bench.svc", b"ping", timeout=5)
    elapsed = loop.time() - started
    await requester.close()
    await responder.close()
    return REQUESTS / elapsed


MANY_SUBJECTS = 5_000


async def many_subjects_across_a_route(urls: list[str]) -> float:
    publisher, subscriber = await nats.connect(urls[0]), await nats.connect(urls[2])
    done = asyncio.Event()
    count = 0

    async def heard(msg: Msg) -> None:
        nonlocal count
        count += 1
        if count == MESSAGES:
            done.set()

    for i in range(MANY_SUBJECTS):
        await subscriber.subscribe(f"many.{i}", cb=heard, pending_msgs_limit=MESSAGES * 2)
    await _settled(publisher, subscriber, f"many.{MANY_SUBJECTS - 1}")
    loop = asyncio.get_running_loop()
    started = loop.time()
    for n in range(MESSAGES):
        await publisher.publish(f"many.{n % MANY_SUBJECTS}", b"x" * 16)
    await publisher.flush()
    await asyncio.wait_for(done.wait(), 120)
    elapsed = loop.time() - started
    await publisher.close()
    await subscriber.close()
    return MESSAGES / elapsed


WORKLOADS: dict[str, tuple[str, ClusterWorkload]] = {
    "publish across a route": ("msg/s", across_a_route),
    "queue group across 3 nodes": ("msg/s", queue_across_nodes),
    "requests across a route": ("req/s", requests_across_a_route),
    "5,000 subjects across a route": ("msg/s", many_subjects_across_a_route),
}


def run(repeat: int, only: str) -> list[Result]:
    results = []
    clusters: dict[str, ProcessCluster] = {}
    try:
        for kind, label in (("fake", "fakejs"), ("real", "nats-server")):
            clusters[label] = start_cluster([kind] * 3)
        for name, (unit, workload) in WORKLOADS.items():
            if only not in name:
                continue
            best: dict[str, float] = {}
            for _ in range(repeat):
                for label, cluster in clusters.items():
                    best[label] = max(best.get(label, 0.0), asyncio.run(workload(cluster.urls)))
            results.append(Result(name, unit, best["fakejs"], best["nats-server"]))
    finally:
        for cluster in clusters.values():
            cluster.stop()
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", default="", help="run workloads whose name contains this")
    args = parser.parse_args()
    print(report(run(args.repeat, args.only)))
