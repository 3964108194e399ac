"""Running fakejs inside a test process: async context manager, thread handle, manual clock."""

from __future__ import annotations

import asyncio
import socket

import nats
import pytest

from fakejs import ManualClock, Server, ThreadedServer
from tests.harness.raw import RawClient


async def test_async_context_manager_on_a_free_port() -> None:
    async with Server() as server:
        assert server.port > 0
        assert server.url == f"nats://127.0.0.1:{server.port}"
        nc = await nats.connect(server.url)
        await nc.flush()
        await nc.close()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", server.port)) != 0


async def test_stop_disconnects_clients() -> None:
    server = Server()
    await server.start()
    client = await RawClient.connect(server.host, server.port)
    await client.read_until(b"\r\n")
    await server.stop()
    assert await client.wait_closed(timeout=2)
    await client.close()


def test_threaded_server_for_synchronous_code() -> None:
    with ThreadedServer() as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=2) as sock:
            assert sock.recv(4096).startswith(b"INFO {")
            sock.sendall(b'CONNECT {"verbose":false}\r\nSUB a 1\r\nPUB a 2\r\nhi\r\n')
            data = b""
            while b"hi\r\n" not in data:
                data += sock.recv(4096)
            assert data == b"MSG a 1 2\r\nhi\r\n"
        assert server.call(lambda: len(server.server.broker.clients)) in (0, 1)


def test_threaded_server_reports_start_errors() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError):
            ThreadedServer(port=port).start()


async def test_manual_clock_drives_pings_and_stale_detection() -> None:
    """A stale connection after 2 + 120 + 120 virtual seconds, in no real time."""
    clock = ManualClock()
    async with Server(clock=clock) as server:
        client = await RawClient.connect(server.host, server.port)
        await client.read_until(b"\r\n")
        start = len(client.received)
        await client.send(b'CONNECT {"verbose":false}\r\nPING\r\n')
        await client.read_until(b"PONG\r\n")
        clock.advance(2.5)  # first PING: 2s after CONNECT (+ up to 20%)
        await client.read_until(b"PING\r\n")
        clock.advance(120)  # one outstanding: still allowed (ping_max 2)
        clock.advance(120)
        assert await client.wait_closed(timeout=2)
        assert bytes(client.received[start:]) == b"PONG\r\nPING\r\nPING\r\n-ERR 'Stale Connection'\r\n"
        await client.close()


async def test_manual_clock_authentication_timeout() -> None:
    clock = ManualClock()
    async with Server(clock=clock, token="t") as server:
        client = await RawClient.connect(server.host, server.port)
        await client.read_until(b"\r\n")
        clock.advance(1.9)
        await asyncio.sleep(0.05)
        assert not client.closed
        clock.advance(0.2)
        assert await client.wait_closed(timeout=2)
        assert client.received.endswith(b"-ERR 'Authentication Timeout'\r\n")
        await client.close()
