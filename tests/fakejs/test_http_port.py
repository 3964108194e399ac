"""The HTTP port's connections across a stop and a restart of an in-process server."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from fakejs import Server

GET = b"GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n"


async def open_idle(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A keep-alive connection that has had one request answered and now waits."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(GET)
    assert (await reader.readuntil(b'{"status":"ok"}')).startswith(b"HTTP/1.1 200 OK")
    return reader, writer


async def test_stop_closes_idle_connections_quietly(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    loop = asyncio.get_running_loop()
    unhandled: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _, context: unhandled.append(context))
    server = Server(http_port=0)
    await server.start()
    assert server.http_port is not None
    idle = [await open_idle(server.http_port) for _ in range(3)]
    await asyncio.wait_for(server.stop(), 5)
    for reader, writer in idle:
        assert await asyncio.wait_for(reader.read(), 2) == b""
        writer.close()
    await asyncio.sleep(0.05)
    assert unhandled == [] and server.errors == []
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


async def test_restart_serves_http_again_on_the_same_port() -> None:
    async with Server(http_port=0) as server:
        port = server.http_port
        assert port is not None
        reader, writer = await open_idle(port)
        await server.restart()
        assert await asyncio.wait_for(reader.read(), 2) == b""
        writer.close()
        assert server.http_port == port
        reader, writer = await open_idle(port)
        writer.close()
