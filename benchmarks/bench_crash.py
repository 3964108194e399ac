"""kill -9 under publish load: acknowledged against stored, and the time to fail over.

    python benchmarks/bench_crash.py [--target real|fake] [--cycles 20] [--per-cycle 200] [--seed 1]

Three server processes of one kind (``real``: nats-server; ``fake``: fakejs's
command line), each with JetStream and its own store, routed as a harness
routes them (:class:`fakejs.targets.cluster.ProcessCluster`).  One nats-py
client, connected to all three, publishes to an R3 file stream without pause;
each message has its own ``Nats-Msg-Id`` and is sent again until a PubAck
comes back (the duplicate window keeps a message that was stored but not
acknowledged from being stored twice).  Each cycle waits for ``--per-cycle``
more acknowledgements, then SIGKILLs one node (every other cycle the stream's
leader, else one drawn from the seeded generator), waits for the next
acknowledgement of a publish sent after the kill (the failover time: from the
kill to that PubAck), and starts the node again on its store.

At the end every node is up; the stream's messages are read back through an
ordered consumer and compared with what was acknowledged: ``lost`` counts
acknowledged ids not stored, ``duplicates`` ids stored twice, ``unacknowledged``
ids stored whose PubAck never came (the publisher stops mid-retry at most once).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from dataclasses import dataclass, field

import nats
from nats.aio.client import Client
from nats.errors import Error as NatsError

from fakejs.targets.cluster import ProcessCluster

STREAM = "CRASH"
PUBLISH_TIMEOUT = 2.0  # seconds a publish waits for its PubAck before it is sent again
RETRY_PAUSE = 0.02  # seconds between two tries of one message
READ_TIMEOUT = 30.0


@dataclass
class Publisher:
    """Publishes ``m-0``, ``m-1``, ... each until acknowledged; counts acknowledgements as they come."""

    js: nats.js.JetStreamContext
    task: asyncio.Task[None] | None = None
    acknowledged: dict[str, int] = field(default_factory=dict)  # message id -> stream sequence
    acked_at: list[float] = field(default_factory=list)  # monotonic time of each acknowledgement
    sent_at: list[float] = field(default_factory=list)  # when the publish acknowledged was sent (its last try)
    retries: int = 0
    running: bool = True

    async def run(self) -> None:
        number = 0
        while self.running:
            message_id = f"m-{number}"
            while self.running:
                sent = time.monotonic()
                try:
                    ack = await self.js.publish(
                        f"crash.{number % 16}",
                        message_id.encode(),
                        timeout=PUBLISH_TIMEOUT,
                        headers={"Nats-Msg-Id": message_id},
                    )
                except (NatsError, OSError):  # no answer, no leader yet, a reconnect under way: send it again
                    self.retries += 1
                    await asyncio.sleep(RETRY_PAUSE)
                    continue
                self.acknowledged[message_id] = ack.seq
                self.sent_at.append(sent)
                self.acked_at.append(time.monotonic())
                number += 1
                break

    async def sent_after(self, moment: float) -> float:
        """Wait for the acknowledgement of a publish sent after ``moment``; when it came."""
        index = len(self.sent_at) - 1
        while True:
            await self.acknowledgements(1, index + 1)
            index += 1
            if self.sent_at[index] >= moment:
                return self.acked_at[index]

    async def acknowledgements(self, count: int, since: int = 0) -> float:
        """Wait until ``count`` acknowledgements came after the first ``since``; the time of the first of them."""
        while len(self.acked_at) < since + count:
            if self.task is not None and self.task.done():
                self.task.result()  # the publisher's error, raised here
                raise RuntimeError("the publisher stopped")
            await asyncio.sleep(0.005)
        return self.acked_at[since]


async def leader_index(js: nats.js.JetStreamContext, cluster: ProcessCluster) -> int:
    info = await js.stream_info(STREAM)
    names = [node.name for node in cluster.nodes]
    assert info.cluster is not None and info.cluster.leader in names, info.cluster
    return names.index(info.cluster.leader)


async def settled_info(js: nats.js.JetStreamContext, timeout: float = 60.0) -> nats.js.api.StreamInfo:
    """The stream's info, asked again while the last restart's election goes on (no answer meanwhile)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await js.stream_info(STREAM)
        except NatsError:
            if time.monotonic() > deadline:
                raise


async def stored_ids(nc: Client) -> list[str]:
    """Every message of the stream, oldest first, read through an ordered consumer."""
    js = nc.jetstream()
    info = await settled_info(js)
    found: list[str] = []
    sub = await js.subscribe("crash.>", ordered_consumer=True, stream=STREAM)
    while len(found) < info.state.messages:
        message = await sub.next_msg(timeout=READ_TIMEOUT)
        found.append(message.data.decode())
    await sub.unsubscribe()
    return found


async def create_stream(js: nats.js.JetStreamContext) -> float:
    """Create the R3 stream, asking again while it cannot be placed yet; the seconds until it was created.

    A cluster is ready once every node answers ``$JS.API.INFO``; the meta
    group may not know every server yet (10005, or no answer in time).
    """
    began = time.monotonic()
    while True:
        try:
            await js.add_stream(name=STREAM, subjects=["crash.>"], num_replicas=3, storage="file")
            return time.monotonic() - began
        except NatsError as error:
            _progress(f"stream not created yet: {error!r}")
            await asyncio.sleep(0.5)


async def crash_cycles(cluster: ProcessCluster, cycles: int, per_cycle: int, rng: random.Random) -> dict[str, float]:
    nc = await nats.connect(
        cluster.urls, max_reconnect_attempts=-1, reconnect_time_wait=0.05, error_cb=_quiet, disconnected_cb=_quiet_event
    )
    js = nc.jetstream()
    placed_after = await create_stream(js)
    publisher = Publisher(js)
    task = publisher.task = asyncio.create_task(publisher.run())
    failovers: dict[str, list[float]] = {"leader": [], "follower": []}
    for cycle in range(cycles):
        await publisher.acknowledgements(per_cycle, len(publisher.acked_at))
        leader = await leader_index(js, cluster)
        victim = leader if cycle % 2 == 0 else rng.randrange(len(cluster.nodes))
        await asyncio.to_thread(cluster.kill, victim)
        killed_at = time.monotonic()
        first = await publisher.sent_after(killed_at)
        failovers["leader" if victim == leader else "follower"].append(max(first - killed_at, 0.0))
        _progress(
            f"cycle {cycle + 1}: killed n{victim + 1} (leader n{leader + 1}), acknowledged again after {first - killed_at:.3f} s"
        )
        await asyncio.to_thread(cluster.restart, victim)
    publisher.running = False
    await task
    stored = await stored_ids(nc)
    await nc.close()
    acknowledged = set(publisher.acknowledged)
    return {
        "stream created after, s": placed_after,
        "cycles": cycles,
        "acknowledged": len(acknowledged),
        "stored": len(stored),
        "lost": len(acknowledged - set(stored)),
        "duplicates": len(stored) - len(set(stored)),
        "unacknowledged": len(set(stored) - acknowledged),
        "retries": publisher.retries,
        "leader kills": len(failovers["leader"]),
        "failover after a leader kill, median s": _median(failovers["leader"]),
        "failover after a leader kill, max s": max(failovers["leader"], default=0.0),
        "failover after a follower kill, median s": _median(failovers["follower"]),
    }


async def _quiet(error: Exception) -> None:
    """The client's connection errors while a node is down are expected: not printed."""


async def _quiet_event() -> None:
    """Nothing to do when the client loses its server: it reconnects to another."""


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _median(samples: list[float]) -> float:
    return statistics.median(samples) if samples else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=["real", "fake"], default="real")
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--per-cycle", type=int, default=200, help="acknowledgements between two kills")
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    cluster = ProcessCluster([options.target] * 3, jetstream=True, node_prefix="n").start()
    try:
        started = time.monotonic()
        figures = asyncio.run(crash_cycles(cluster, options.cycles, options.per_cycle, random.Random(options.seed)))
        elapsed = time.monotonic() - started
    finally:
        cluster.stop()
    server = "nats-server" if options.target == "real" else "fakejs"
    print(f"| kill -9 under publish load ({server}, 3 processes, R3 file stream, {elapsed:.0f} s) | |")
    print("| --- | ---: |")
    for name, value in figures.items():
        print(f"| {name} | {value:.3f} |" if isinstance(value, float) else f"| {name} | {value} |")


if __name__ == "__main__":
    main()
