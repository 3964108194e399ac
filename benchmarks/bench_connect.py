"""Connection bursts: N clients connect at the same instant; how many get INFO, and how fast.

    python benchmarks/bench_connect.py [--clients 1000] [--repeat 3]

Test suites open hundreds of connections at once (one per worker, per
fixture, per reconnect storm).  Each client opens a TCP connection, waits
for the server's INFO line and keeps the socket open until every client is
done, so the server holds all of them at the same time.  Reported per
server: INFOs received out of N, time from the first connect to the last
INFO, and connects per second (N / that time).  A client that gets no INFO
within the time-out counts as lost.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import start_server

TIMEOUT = 10.0


class Burst:
    """N clients released at once; each settles (INFO or failure), then all hang up together."""

    def __init__(self, host: str, port: int, clients: int) -> None:
        self.host, self.port, self.clients = host, port, clients
        self.start = asyncio.Event()
        self.all_settled = asyncio.Event()
        self.settled = 0
        self.arrivals: list[float] = []

    def _settle(self, arrived: float | None) -> None:
        if arrived is not None:
            self.arrivals.append(arrived)
        self.settled += 1
        if self.settled == self.clients:
            self.all_settled.set()

    async def client(self) -> None:
        await self.start.wait()
        writer = None
        arrived: float | None = None
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(self.host, self.port), TIMEOUT)
            line = await asyncio.wait_for(reader.readline(), TIMEOUT)
            if line.startswith(b"INFO "):
                arrived = time.monotonic()
        except (TimeoutError, OSError):
            pass
        self._settle(arrived)
        await self.all_settled.wait()
        if writer is not None:
            writer.close()

    async def run(self) -> tuple[int, float]:
        """INFOs received and seconds from the release to the last INFO."""
        tasks = [asyncio.create_task(self.client()) for _ in range(self.clients)]
        await asyncio.sleep(0)
        began = time.monotonic()
        self.start.set()
        await asyncio.gather(*tasks)
        last = max(self.arrivals) - began if self.arrivals else float("nan")
        return len(self.arrivals), last


async def burst(url: str, clients: int) -> tuple[int, float]:
    parts = urlsplit(url)
    return await Burst(parts.hostname or "127.0.0.1", parts.port or 4222, clients).run()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'server':12} {'INFOs':>11} {'last INFO':>10} {'connects/s':>11}")
    for kind in ("fakejs", "nats-server"):
        server = start_server(kind)
        try:
            for _ in range(args.repeat):
                got, seconds = asyncio.run(burst(server.url, args.clients))
                rate = got / seconds if seconds == seconds and seconds > 0 else 0.0
                print(f"{kind:12} {got:>5}/{args.clients:<5} {seconds:>9.3f}s {rate:>11,.0f}")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
