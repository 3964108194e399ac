"""Sequential round trips on a raw socket: what one hop through the server costs, on each event loop.

    python benchmarks/bench_round_trip.py [--count 3000] [--rounds 5] [--think 0] [--spin US] [--tree DIR]

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

``--think US`` has the client work (spin) that many µs between round trips,
as a client library does (nats-py spends about 100 µs of its own on a
request): the server's core then goes idle, or to other work, between
requests, and each request finds it cold; the time spent thinking is not
counted in the round trip.  ``--spin US`` starts fakejs with ``--spin US``
(the microseconds its loop keeps polling after a read before it sleeps;
without it, the command line's default): its CPU column then counts the
polling too.

What a round trip waited for rather than worked on is shown too (medians
per round trip): the time the server's threads and this client spent
runnable but waiting for a core (the second field of schedstat), and how
often a core went idle (the cpuidle states' entries, where the kernel
has them).  A run whose waits are large measured the machine's other work;
idle entries mean a request found a core asleep and paid for waking it (on
a virtual machine, a halted vCPU).  nats-server's threads are summed: its
Go runtime's threads wait and spin beside the one that serves.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import socket
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ROOT

from fakejs.targets.real import ServerProcess

LOOPS = ("asyncio", "uvloop")
STREAM = json.dumps({"name": "RT", "subjects": ["rt.>"], "storage": "memory"}).encode()


def schedstat(pid: int) -> tuple[float, float]:
    """Seconds the process's threads have run, and seconds they waited runnable for a core."""
    ran = waited = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                fields = stat.read().split()
        except OSError:
            continue  # a thread that ended meanwhile
        ran += int(fields[0])
        waited += int(fields[1])
    return ran / 1e9, waited / 1e9


def idle_entries() -> int:
    """How many times the machine's cores have gone idle (0 where the kernel shows no cpuidle states)."""
    total = 0
    for state in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cpuidle/state[0-9]*/usage"):
        try:
            with open(state) as usage:
                total += int(usage.read())
        except (OSError, ValueError):
            pass
    return total


@dataclass(frozen=True)
class Sample:
    """One round of ``count`` round trips on one server, per round trip."""

    wall: float  # µs
    server_cpu: float  # µs the server's threads ran
    server_wait: float  # µs they waited runnable for a core
    client_wait: float  # µs this client waited runnable for a core
    idle: float  # times a core went idle


def think(seconds: float) -> None:
    """Keep this core busy for ``seconds`` (a client's own work between requests)."""
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


def measured(pid: int, count: int, action: Callable[[], None], thinking: float) -> Sample:
    """``count`` calls of ``action`` against the server process ``pid``, ``thinking`` seconds apart."""
    own = os.getpid()
    cpu, wait = schedstat(pid)
    _, own_wait = schedstat(own)
    idle, elapsed = idle_entries(), 0.0
    for _ in range(count):
        if thinking:
            think(thinking)
        started = time.perf_counter()
        action()
        elapsed += time.perf_counter() - started
    idle = idle_entries() - idle
    cpu_after, wait_after = schedstat(pid)
    _, own_wait_after = schedstat(own)
    per = 1e6 / count
    return Sample(
        elapsed * per,
        (cpu_after - cpu) * per,
        (wait_after - wait) * per,
        (own_wait_after - own_wait) * per,
        idle / count,
    )


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


def start(kind: str, tree: str, spin: str) -> ServerProcess:
    if kind == "nats-server":
        return ServerProcess().start()
    loop = kind.removeprefix("fakejs ")
    spinning = ["--spin", spin] if spin else []
    return ServerProcess(command=[sys.executable, "-m", "fakejs", "--loop", loop, *spinning], cwd=tree).start()


def measure(
    servers: dict[str, ServerProcess], clients: dict[str, Client], name: str, count: int, rounds: int, thinking: float
) -> dict[str, list[Sample]]:
    """Per server, each round's sample; the servers take turns, round by round."""
    samples: dict[str, list[Sample]] = {kind: [] for kind in servers}
    for _ in range(rounds):
        for kind, server in servers.items():
            assert server.process is not None
            samples[kind].append(measured(server.process.pid, count, getattr(clients[kind], name), thinking))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--think", type=float, default=0.0, help="µs the client works between round trips")
    parser.add_argument("--spin", default="", help="fakejs's --spin (µs; default: the command line's)")
    parser.add_argument("--tree", default=ROOT, help="the checkout fakejs runs from")
    args = parser.parse_args()
    os.environ["FAKEJS_FORKSERVER"] = "0"  # the process measured is the server's own
    kinds = ["nats-server", *(f"fakejs {loop}" for loop in LOOPS)]
    servers = {kind: start(kind, args.tree, args.spin) for kind in kinds}
    try:
        clients = {kind: Client(server.url) for kind, server in servers.items()}
        print(
            f"{'round trip':12} {'server':16} {'µs median':>10} {'µs best':>8} {'server CPU µs':>14}"
            f" {'server wait µs':>15} {'client wait µs':>15} {'idle/trip':>10}"
        )
        for name, label in (("ping", "PING/PONG"), ("publish", "JS publish")):
            for kind, values in measure(servers, clients, name, args.count, args.rounds, args.think / 1e6).items():
                wall, cpu, server_wait, client_wait, idle = (
                    statistics.median(getattr(value, field) for value in values)
                    for field in ("wall", "server_cpu", "server_wait", "client_wait", "idle")
                )
                best = min(value.wall for value in values)
                print(
                    f"{label:12} {kind:16} {wall:>10.1f} {best:>8.1f} {cpu:>14.1f}"
                    f" {server_wait:>15.1f} {client_wait:>15.1f} {idle:>10.2f}"
                )
    finally:
        for server in servers.values():
            server.stop()


if __name__ == "__main__":
    main()
