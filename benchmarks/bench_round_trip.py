"""Sequential round trips on a raw socket: what one hop through the server costs, on each event loop.

    python benchmarks/bench_round_trip.py [--count 3000] [--rounds 5] [--tree DIR]

No client library: one TCP connection sends ``PING`` and waits for ``PONG``,
then publishes into a memory stream and waits for each PubAck, ``--count``
times each.  The servers, side by side in one run: nats-server, and fakejs
on asyncio's own loop (``--loop asyncio``) and on uvloop (``--loop
uvloop``), each started without the forkserver so that its process is the
server.  For each: the round trip in µs (median over ``--rounds``, and the
best) and the server process's CPU time per round trip (from
``/proc/PID/task/*/schedstat``, so Linux only), which a busy machine
disturbs less than the wall clock.  ``--tree`` runs fakejs from another
checkout (the compiled build's copy that ``bench_summary.py --compiled``
makes).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ROOT

from fakejs.targets.real import ServerProcess

LOOPS = ("asyncio", "uvloop")
STREAM = json.dumps({"name": "RT", "subjects": ["rt.>"], "storage": "memory"}).encode()


def server_cpu(pid: int) -> float:
    """Seconds of CPU the process's threads have run."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except OSError:
            pass  # a thread that ended meanwhile
    return total / 1e9


class Client:
    """A blocking socket past CONNECT, answering the server's own PINGs."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("nats://").rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.pending = b""
        self.until(b"\r\n")  # INFO
        self.sock.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\nSUB _INBOX.> 1\r\nPING\r\n')
        self.until(b"PONG\r\n")
        self.sock.sendall(b"PUB $JS.API.STREAM.CREATE.RT _INBOX.c %d\r\n%s\r\n" % (len(STREAM), STREAM))
        self.until(b"}\r\n")

    def until(self, mark: bytes) -> None:
        """Read up to and including ``mark``; a PING from the server is answered on the way."""
        while mark not in self.pending:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.pending += chunk
            if b"PING\r\n" in self.pending and mark != b"PING\r\n":
                self.pending = self.pending.replace(b"PING\r\n", b"", 1)
                self.sock.sendall(b"PONG\r\n")
        self.pending = self.pending.split(mark, 1)[1]

    def ping(self) -> None:
        self.sock.sendall(b"PING\r\n")
        self.until(b"PONG\r\n")

    def publish(self) -> None:
        self.sock.sendall(b"PUB rt.x _INBOX.a 5\r\nhello\r\n")
        self.until(b"}\r\n")


def start(kind: str, tree: str) -> ServerProcess:
    if kind == "nats-server":
        return ServerProcess().start()
    loop = kind.removeprefix("fakejs ")
    return ServerProcess(command=[sys.executable, "-m", "fakejs", "--loop", loop], cwd=tree).start()


def measure(
    servers: dict[str, ServerProcess], clients: dict[str, Client], name: str, count: int, rounds: int
) -> dict[str, list[tuple[float, float]]]:
    """Per server, each round's (µs per round trip, server CPU µs per round trip)."""
    samples: dict[str, list[tuple[float, float]]] = {kind: [] for kind in servers}
    for _ in range(rounds):
        for kind, server in servers.items():
            action: Callable[[], None] = getattr(clients[kind], name)
            assert server.process is not None
            pid = server.process.pid
            cpu, started = server_cpu(pid), time.perf_counter()
            for _ in range(count):
                action()
            elapsed, used = time.perf_counter() - started, server_cpu(pid) - cpu
            samples[kind].append((elapsed / count * 1e6, used / count * 1e6))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tree", default=ROOT, help="the checkout fakejs runs from")
    args = parser.parse_args()
    os.environ["FAKEJS_FORKSERVER"] = "0"  # the process measured is the server's own
    kinds = ["nats-server", *(f"fakejs {loop}" for loop in LOOPS)]
    servers = {kind: start(kind, args.tree) for kind in kinds}
    try:
        clients = {kind: Client(server.url) for kind, server in servers.items()}
        print(f"{'round trip':12} {'server':16} {'µs median':>10} {'µs best':>8} {'server CPU µs':>14}")
        for name, label in (("ping", "PING/PONG"), ("publish", "JS publish")):
            for kind, values in measure(servers, clients, name, args.count, args.rounds).items():
                wall = statistics.median(value[0] for value in values)
                best = min(value[0] for value in values)
                cpu = statistics.median(value[1] for value in values)
                print(f"{label:12} {kind:16} {wall:>10.1f} {best:>8.1f} {cpu:>14.1f}")
    finally:
        for server in servers.values():
            server.stop()


if __name__ == "__main__":
    main()
