"""fakejs's websocket port on its own: server clock deadlines, TLS underneath, shutdown close frames."""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path

import websockets

from fakejs.core.transport_config import WebSocketConfig
from fakejs.server.server import Server
from fakejs.testkit.certs import TestCertificates
from fakejs.testkit.clock import ManualClock

UPGRADE = (
    "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


async def test_shutdown_sends_going_away() -> None:
    async with Server(websocket=WebSocketConfig(no_tls=True)) as server:
        assert server.websocket_url is not None
        async with websockets.connect(server.websocket_url) as ws:
            assert (await ws.recv()).startswith(b"INFO ")
            await ws.send(b'CONNECT {"verbose":false}\r\nPING\r\n')
            assert await ws.recv() == b"PONG\r\n"
            await server.stop()
            await ws.wait_closed()
            assert ws.close_code == 1001 and ws.close_reason == "Server Shutdown"
        assert server.errors == []


async def test_handshake_timeout_is_on_the_server_clock() -> None:
    clock = ManualClock()
    async with Server(clock=clock, websocket=WebSocketConfig(no_tls=True, handshake_timeout=2.0)) as server:
        port = int(str(server.websocket_url).rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n")  # never finished
        await asyncio.sleep(0.05)
        assert not reader.at_eof()
        clock.advance(2.5)
        assert await asyncio.wait_for(reader.read(), 5) == b""  # closed silently, as Go's read timeout does
        writer.close()


async def test_websocket_over_tls(tmp_path: Path) -> None:
    certs = TestCertificates(tmp_path)
    async with Server(websocket=WebSocketConfig(tls=certs.tls_config())) as server:
        url = str(server.websocket_url)
        assert url.startswith("wss://")
        async with websockets.connect(url, ssl=certs.client_ssl_context()) as ws:
            info = await ws.recv()
            assert b'"tls_required":true' in info and b'"tls_available":true' in info
            await ws.send(b'CONNECT {"verbose":false}\r\nSUB a 1\r\nPUB a 2\r\nhi\r\n')
            assert await ws.recv() == b"MSG a 1 2\r\nhi\r\n"


async def test_large_output_in_browser_frames() -> None:
    """A browser (User-Agent Mozilla/...) gets output in frames of at most 4 KiB."""
    async with Server(websocket=WebSocketConfig(no_tls=True)) as server:
        port = int(str(server.websocket_url).rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(UPGRADE.replace("\r\n\r\n", "\r\nUser-Agent: Mozilla/5.0\r\n\r\n").encode())
        await reader.readuntil(b"\r\n\r\n")
        header = await reader.readexactly(4)
        await reader.readexactly(struct.unpack(">H", header[2:])[0])  # INFO
        key = b"\x01\x02\x03\x04"
        data = b'CONNECT {"verbose":false}\r\nSUB a 1\r\nPUB a 10000\r\n' + b"x" * 10000 + b"\r\n"
        masked = bytes(c ^ key[i % 4] for i, c in enumerate(data))
        writer.write(bytes([0x82, 0x80 | 127]) + struct.pack(">Q", len(data)) + key + masked)
        received = b""
        sizes = []
        while len(received) < len(b"MSG a 1 10000\r\n") + 10002:
            _, b1 = await reader.readexactly(2)
            n = b1 if b1 < 126 else struct.unpack(">H", await reader.readexactly(2))[0]
            sizes.append(n)
            received += await reader.readexactly(n)
        assert max(sizes) <= 4096 and received.startswith(b"MSG a 1 10000\r\n")
        writer.close()
