"""Raw-socket pipelined JetStream publishes with acks into a memory stream.

    python benchmarks/bench_publish_raw.py [--count 1000000] [--size 100]

No client library: one TCP connection subscribes to ``_INBOX.>``, creates a
memory stream on ``s.>``, then writes ``PUB s.x _INBOX.r.N 100`` frames as
fast as the socket takes them while a second thread reads and counts the
PubAck ``MSG`` frames.  The rate is publishes per second from the first
byte written to the last ack read; the ratio is fakejs / nats-server.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import start_server

ACK_MARK = b"MSG _INBOX.r."
CHUNK = 2_000


def connect(url: str) -> socket.socket:
    """A TCP connection past INFO/CONNECT/PING, subscribed to the ack inbox."""
    host, port = url.removeprefix("nats://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    read_until(sock, b"\r\n")
    sock.sendall(b'CONNECT {"verbose":false,"pedantic":false}\r\nSUB _INBOX.> 1\r\nPING\r\n')
    read_until(sock, b"PONG\r\n")
    return sock


def read_until(sock: socket.socket, mark: bytes) -> bytes:
    data = b""
    while mark not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        data += chunk
    return data


def create_stream(sock: socket.socket) -> None:
    config = json.dumps({"name": "RAW", "subjects": ["s.>"], "storage": "memory"}).encode()
    sock.sendall(b"PUB $JS.API.STREAM.CREATE.RAW _INBOX.c %d\r\n%s\r\n" % (len(config), config))
    reply = read_until(sock, b"}\r\n")
    if b'"error"' in reply:
        raise RuntimeError(reply.decode())


def count_acks(sock: socket.socket, expected: int, done: threading.Event) -> None:
    """Count ack frames by their prefix; a tail is kept so a split prefix still counts once."""
    seen = 0
    tail = b""
    keep = len(ACK_MARK) - 1
    while seen < expected:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        data = tail + chunk
        seen += data.count(ACK_MARK)
        tail = data[-keep:]
        if ACK_MARK in tail:
            seen -= 1
    done.set()


def publish(url: str, count: int, size: int) -> float:
    sock = connect(url)
    create_stream(sock)
    payload = b"x" * size
    frames = [b"PUB s.x _INBOX.r.%d %d\r\n%s\r\n" % (i, size, payload) for i in range(count)]
    blocks = [b"".join(frames[i : i + CHUNK]) for i in range(0, count, CHUNK)]
    done = threading.Event()
    reader = threading.Thread(target=count_acks, args=(sock, count, done), daemon=True)
    reader.start()
    start = time.perf_counter()
    for block in blocks:
        sock.sendall(block)
    if not done.wait(600):
        raise TimeoutError("acks did not all arrive")
    elapsed = time.perf_counter() - start
    sock.close()
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=100)
    args = parser.parse_args()
    rates = {}
    for kind in ("fakejs", "nats-server"):
        server = start_server(kind)
        try:
            rates[kind] = publish(server.url, args.count, args.size)
        finally:
            server.stop()
        print(f"{kind:12} {rates[kind]:>12,.0f} msg/s")
    print(f"ratio fakejs / nats-server: {rates['fakejs'] / rates['nats-server']:.2f}")


if __name__ == "__main__":
    main()
