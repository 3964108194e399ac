"""What a spinning loop costs when cores are scarce: clients side by side, each with its own server.

    python benchmarks/bench_spin.py [--clients 1,2,3] [--rounds 2]

Each of ``--clients N`` processes runs nats-py's sync ``js.publish`` loop
(``bench_jetstream.py``'s, 3 s) against a server of its own, all at once:
N clients and N servers share this machine's cores.  The servers: fakejs
with ``--spin 0`` (the loop sleeps as soon as it has nothing to do), fakejs
as the command line starts it (it polls for a while after each read, giving
the core away on each turn), and nats-server.  Printed per server and N:
the publishes per second of all clients together (the best of ``--rounds``)
and each client's.  With one client a core is free, and polling saves the
server's wake-up; with more processes than cores, what the polling takes
from the others shows as a lower total.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_jetstream
from harness import PLAIN, FakejsRun, start_server
from nats.js.api import StorageType

SERVERS = {
    "fakejs --spin 0": ("fakejs", FakejsRun(arguments=("--spin", "0"))),
    "fakejs": ("fakejs", PLAIN),
    "nats-server": ("nats-server", PLAIN),
}


def client(url: str, rates: multiprocessing.Queue[float]) -> None:
    """One client process: the sync publish workload, its rate put on ``rates``."""
    rates.put(asyncio.run(bench_jetstream.publish_sync(StorageType.MEMORY)(url)))


def side_by_side(urls: list[str]) -> list[float]:
    """Each url's client run at once; their rates."""
    rates: multiprocessing.Queue[float] = multiprocessing.Queue()
    processes = [multiprocessing.Process(target=client, args=(url, rates)) for url in urls]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    return [rates.get() for _ in processes]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="1,2,3", help="how many clients (and servers) side by side, each run")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(f"{'server':18} {'clients':>7} {'msgs/s, all':>12}  each")
    for count in (int(text) for text in args.clients.split(",")):
        for label, (kind, fakejs) in SERVERS.items():
            servers = [start_server(kind, fakejs) for _ in range(count)]
            try:
                best = max((side_by_side([server.url for server in servers]) for _ in range(args.rounds)), key=sum)
            finally:
                for server in servers:
                    server.stop()
            print(f"{label:18} {count:>7} {sum(best):>12,.0f}  {', '.join(f'{rate:,.0f}' for rate in best)}")


if __name__ == "__main__":
    main()
