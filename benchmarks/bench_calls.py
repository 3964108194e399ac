"""Python calls per operation on JetStream's per-message paths, in-process (the measure a busy machine does not disturb).

    python benchmarks/bench_calls.py [--count 2000] [--only get] [--profile]

Like ``bench_publish_cpu.py``, a client session of an in-process server is
handed protocol frames and its output taken, with cProfile counting every
Python call.  Each path runs ``--count`` times after a warm-up round:

- ``publish``: ``PUB s.x _INBOX.r.N`` into a memory stream (the PubAck included);
- ``fetch+ack``: a pull request of 100 on a durable consumer, then ``+ACK`` of each message;
- ``msg get``: ``$JS.API.STREAM.MSG.GET`` by ``last_by_subj`` (a KV get without allow_direct);
- ``direct get``: ``$JS.API.DIRECT.GET.<stream>.<subject>`` (a KV get with allow_direct).

The server records no timeline, as the command-line server without
``--timeline``.  Prints calls per operation for each; ``--profile`` adds cProfile's busiest
functions by calls for each path.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import re
from collections.abc import Awaitable, Callable

from bench_publish_cpu import KeptOutput

from fakejs.cli import tune_gc
from fakejs.core.session import ClientSession
from fakejs.server.server import Server

ACK_REPLY = re.compile(rb"MSG \S+ \d+ (\$JS\.ACK\.\S+) \d+\r\n")
BATCH = 100
SIZE = 100


class Client:
    """A session fed frames, its output collected."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.output = b""

    def send(self, frames: bytes) -> bytes:
        self.session.data_received(frames)
        return self.session.take_output()

    async def request(self, frames: bytes, until: bytes, count: int = 1) -> bytes:
        """Send, then collect output until ``until`` was seen ``count`` times."""
        received = self.send(frames)
        while received.count(until) < count:
            await asyncio.sleep(0)
            received += self.session.take_output()
        return received

    async def create(self, kind: str, name: str, config: dict[str, object]) -> None:
        body = json.dumps(config).encode()
        frame = b"PUB $JS.API.%s.CREATE.%s _INBOX.c %d\r\n%s\r\n" % (kind.encode(), name.encode(), len(body), body)
        await self.request(frame, b"_INBOX.c")


async def setup(server: Server) -> Client:
    session = ClientSession(server.broker, KeptOutput(), "127.0.0.1", 1)
    session.start()
    client = Client(session)
    client.send(b'CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\nSUB _INBOX.> 1\r\n')
    await client.create("STREAM", "RAW", {"name": "RAW", "subjects": ["s.>"], "storage": "memory"})
    await client.create(
        "STREAM",
        "KV_B",
        {"name": "KV_B", "subjects": ["$KV.B.>"], "storage": "memory", "max_msgs_per_subject": 1, "allow_direct": True},
    )
    await client.create(
        "CONSUMER", "RAW.W", {"stream_name": "RAW", "config": {"durable_name": "W", "ack_policy": "explicit"}}
    )
    payload = b"x" * SIZE
    for key in range(100):
        client.send(b"PUB $KV.B.k%d %d\r\n%s\r\n" % (key, SIZE, payload))
    return client


def publish(client: Client, count: int) -> Callable[[], Awaitable[None]]:
    payload = b"x" * SIZE
    block = b"".join(b"PUB s.x _INBOX.r.%d %d\r\n%s\r\n" % (i, SIZE, payload) for i in range(count))

    async def run() -> None:
        client.send(block)

    return run


def fetch_ack(client: Client, count: int) -> Callable[[], Awaitable[None]]:
    payload = b"x" * SIZE
    client.send(b"".join(b"PUB s.x %d\r\n%s\r\n" % (SIZE, payload) for _ in range(count)))  # what it fetches

    async def run() -> None:
        body = b'{"batch":%d,"expires":5000000000}' % BATCH
        for _ in range(count // BATCH):
            received = await client.request(
                b"PUB $JS.API.CONSUMER.MSG.NEXT.RAW.W _INBOX.f %d\r\n%s\r\n" % (len(body), body), b"$JS.ACK.", BATCH
            )
            client.send(b"".join(b"PUB %s 4\r\n+ACK\r\n" % reply for reply in ACK_REPLY.findall(received)))

    return run


def msg_get(client: Client, count: int) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        for i in range(count):
            body = b'{"last_by_subj":"$KV.B.k%d"}' % (i % 100)
            client.send(b"PUB $JS.API.STREAM.MSG.GET.KV_B _INBOX.g %d\r\n%s\r\n" % (len(body), body))

    return run


def direct_get(client: Client, count: int) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        for i in range(count):
            client.send(b"PUB $JS.API.DIRECT.GET.KV_B.$KV.B.k%d _INBOX.d 0\r\n\r\n" % (i % 100))

    return run


PATHS = {"publish": publish, "fetch+ack": fetch_ack, "msg get": msg_get, "direct get": direct_get}


async def measure(count: int, only: str, profile: bool) -> None:
    server = Server(port=-1, jetstream=True, timeline=0)  # no timeline, as the command-line server
    await server.start()
    try:
        client = await setup(server)
        for name, path in PATHS.items():
            if only not in name:
                continue
            await path(client, count)()  # warm-up: the first delivery's one-off work left out
            run = path(client, count)
            profiler = cProfile.Profile()
            profiler.enable()
            await run()
            profiler.disable()
            stats = pstats.Stats(profiler)
            calls = sum(row[1] for row in stats.stats.values())  # type: ignore[attr-defined]
            print(f"{name:12} {calls / count:7.1f} Python calls per operation")
            if profile:
                stats.sort_stats("ncalls").print_stats(150)
    finally:
        await server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2_000)
    parser.add_argument("--only", default="", help="paths whose name contains this")
    parser.add_argument("--profile", action="store_true", help="cProfile's busiest functions by calls")
    args = parser.parse_args()
    tune_gc()
    asyncio.run(measure(args.count, args.only, args.profile))


if __name__ == "__main__":
    main()
