"""ThreadedCluster: a fakejs cluster on its own thread, driven from synchronous code.

Pinned: the nodes mesh before ``start`` returns; a message published on one
node reaches a subscriber on another; ``kill``, ``restart`` (on the same
port), ``partition`` and ``heal`` return with the cluster meshed as asked;
``take_errors`` gathers every node's errors and forgets them; a shared
manual clock is moved through ``call``.
"""

from __future__ import annotations

import socket
import time

import pytest

from fakejs import ManualClock, ThreadedCluster


class Client:
    """A bare-socket client: subscribe, publish, and read the next MSG."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("nats://").split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=5)
        self.sock.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\nPING\r\n')
        self.buffer = b""
        self.read_until(b"PONG\r\n")

    def read_until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            self.buffer += self.sock.recv(65536)
        head, _, self.buffer = self.buffer.partition(marker)
        return head

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def close(self) -> None:
        self.sock.close()


def crosses(publisher: Client, subscriber: Client, subject: str, deadline: float = 5.0) -> bool:
    """Publish until the subscriber (already subscribed) gets a message: interest crosses routes asynchronously."""
    subscriber.sock.settimeout(0.05)
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        publisher.send(f"PUB {subject} 2\r\nhi\r\n".encode())
        try:
            subscriber.read_until(b"\r\nhi\r\n")
        except TimeoutError:
            continue
        return True
    return False


def test_a_message_crosses_and_failures_come_on_cue() -> None:
    with ThreadedCluster(3, seed=7) as cluster:
        assert cluster.meshed() and len(cluster.urls) == 3
        sub, pub = Client(cluster.url("n3")), Client(cluster.url(0))
        sub.send(b"SUB x 1\r\n")
        assert crosses(pub, sub, "x")
        port = cluster.url(1)
        cluster.kill(1)
        assert cluster.meshed()
        cluster.restart("n2")
        assert cluster.url(1) == port and cluster.meshed()
        cluster.partition([0], [1, 2])
        assert cluster.call(lambda: {p.name for p in cluster.server(0).broker.cluster.peers.values()}) == set()
        cluster.heal()
        assert cluster.meshed()
        assert cluster.take_errors() == [] and cluster.errors == []
        sub.close()
        pub.close()


def test_a_shared_manual_clock_is_moved_through_call() -> None:
    clock = ManualClock()
    with ThreadedCluster(2, clock=clock) as cluster:
        before = cluster.call(cluster.server(1).clock.monotonic)
        cluster.call(clock.advance, 60)
        assert cluster.call(cluster.server(1).clock.monotonic) == pytest.approx(before + 60)


def test_errors_of_every_node_are_gathered_once() -> None:
    def boom() -> None:
        raise RuntimeError("broken handler")

    with ThreadedCluster(2) as cluster:
        cluster.call(lambda: cluster.server("n2").clock.call_later(0, boom))
        deadline = time.monotonic() + 5
        while not cluster.errors and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(cluster.take_errors()) == 1
        assert cluster.errors == []


def test_calls_before_start_are_refused() -> None:
    cluster = ThreadedCluster(2)
    with pytest.raises(RuntimeError, match="not started"):
        cluster.call(cluster.meshed)
    cluster.stop()  # nothing to stop


def test_operations_before_start_are_refused() -> None:
    with pytest.raises(RuntimeError, match="not started"):
        ThreadedCluster(2).kill(0)
