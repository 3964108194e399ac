"""Whether a cluster carries messages: a message through every node reaches a subscriber on every node.

:func:`wait_connected` checks exactly that with bare sockets (no event loop
needed), republishing until every subscriber has heard from every node or
the deadline passes.  It needs no monitoring endpoint, it works the same on
nats-server and fakejs, and it is also what a client of the cluster needs.
"""

from __future__ import annotations

import secrets
import select
import socket
import time
from collections.abc import Sequence
from typing import Protocol

READY_TIMEOUT = 15.0  # seconds for a cluster's routes to carry messages between every two nodes
# Seconds for a meta leader on every node: a first election fails at worst once (a split vote), then nats-server's
# election timeouts (4 s to 9 s) come into play; a loaded machine may double it.
JETSTREAM_READY_TIMEOUT = 30.0
PROBE_INTERVAL = 0.02  # seconds between two rounds of probe messages


class Node(Protocol):
    """What a probe needs of a node: its client port on 127.0.0.1 and a name for messages."""

    @property
    def port(self) -> int: ...

    @property
    def name(self) -> str: ...


class Probe:
    """A bare-socket client on one node, subscribed to the probe subjects, counting whom it heard from."""

    def __init__(self, port: int, subject: str, deadline: float) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=max(deadline - time.monotonic(), 0.1))
        self.buffer = b""
        self.heard: set[str] = set()
        self.payloads: list[bytes] = []  # of the messages heard, oldest first
        self.pongs = 0
        self.sock.sendall(
            b'CONNECT {"verbose":false,"pedantic":false,"protocol":1}\r\n'
            + f"SUB {subject}.* 1\r\n".encode()
            + b"PING\r\n"
        )
        while not self.pongs and time.monotonic() < deadline:  # subscribed
            self.receive()

    def publish(self, subject: str) -> None:
        self.sock.sendall(f"PUB {subject} 0\r\n\r\n".encode())

    def receive(self) -> None:
        """Read what is there (waiting briefly) and note the senders of probe messages."""
        readable, _, _ = select.select([self.sock], [], [], PROBE_INTERVAL)
        if not readable:
            return
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("a node closed a probe connection")
        self.buffer += chunk
        self._parse()

    def _parse(self) -> None:
        while b"\r\n" in self.buffer:
            line, rest = self.buffer.split(b"\r\n", 1)
            if line.startswith(b"MSG "):
                parts = line.split()
                size = int(parts[-1])
                if len(rest) < size + 2:
                    return  # the payload has not all arrived
                self.heard.add(parts[1].decode().rsplit(".", 1)[1])
                self.payloads.append(rest[:size])
                rest = rest[size + 2 :]
            elif line == b"PING":
                self.sock.sendall(b"PONG\r\n")
            elif line == b"PONG":
                self.pongs += 1
            self.buffer = rest

    def payload(self) -> bytes | None:
        """The oldest message payload not taken yet, if any."""
        return self.payloads.pop(0) if self.payloads else None

    def close(self) -> None:
        self.sock.close()


def wait_connected(nodes: Sequence[Node], timeout: float = READY_TIMEOUT) -> None:
    """Return once a message published through each node has reached a subscriber on each node.

    Interest crosses routes asynchronously, so every round publishes again
    from every node until every subscriber has heard from all of them.
    """
    deadline = time.monotonic() + timeout
    subject = f"_CLUSTER_READY.{secrets.token_hex(6)}"
    probes = [Probe(node.port, subject, deadline) for node in nodes]
    try:
        everyone = {str(index) for index in range(len(nodes))}
        while not all(probe.heard >= everyone for probe in probes):
            if time.monotonic() > deadline:
                missing = {nodes[i].name: sorted(everyone - probe.heard) for i, probe in enumerate(probes)}
                raise TimeoutError(f"cluster not connected after {timeout}s; not heard from: {missing}")
            for index, probe in enumerate(probes):
                probe.publish(f"{subject}.{index}")
            for probe in probes:
                probe.receive()
                probe.payloads.clear()
    finally:
        for probe in probes:
            probe.close()


JETSTREAM_INFO = "$JS.API.INFO"


def jetstream_answers(port: int, deadline: float) -> bool:
    """Whether ``$JS.API.INFO`` through this node gets a reply without an ``error`` (one request, short wait).

    Before a meta leader is elected nats-server answers nothing (or an
    error); a bare-socket request keeps this usable without an event loop.
    """
    inbox = f"_JS_READY.{secrets.token_hex(6)}"
    probe = Probe(port, inbox, deadline)
    try:
        probe.sock.sendall(f"PUB {JETSTREAM_INFO} {inbox}.0 0\r\n\r\n".encode())
        waited_until = min(deadline, time.monotonic() + JETSTREAM_WAIT)
        while time.monotonic() < waited_until:
            reply = probe.payload()
            if reply is not None:
                return b'"error"' not in reply
            probe.receive()
        return False
    finally:
        probe.close()


JETSTREAM_WAIT = 0.5  # seconds one $JS.API.INFO request waits for its reply before asking again


def wait_jetstream(nodes: Sequence[Node], timeout: float = JETSTREAM_READY_TIMEOUT) -> None:
    """Return once ``$JS.API.INFO`` answers without an error through every node (a meta leader exists)."""
    deadline = time.monotonic() + timeout
    waiting = list(nodes)
    while waiting:
        waiting = [node for node in waiting if not jetstream_answers(node.port, deadline)]
        if waiting and time.monotonic() > deadline:
            names = [node.name for node in waiting]
            raise TimeoutError(f"JetStream not ready after {timeout}s on {names}")
        if waiting:
            time.sleep(PROBE_INTERVAL)
