"""The websocket port over a raw connection: the upgrade request, client frames, the port a target listens on."""

from __future__ import annotations

import asyncio
import json
import re
import struct

from tests.harness.targets import FakeTarget, RealTarget, Target

KEY = "dGhlIHNhbXBsZSBub25jZQ=="
UPGRADE = f"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n"
PLAIN = "websocket { port: -1, no_tls: true }\n"
WAIT = 5.0


def ws_port(target: Target) -> int:
    if isinstance(target, FakeTarget):
        assert target.server is not None and target.server.websocket_url is not None
        return int(target.server.websocket_url.rsplit(":", 1)[1])
    assert isinstance(target, RealTarget) and target.process is not None
    found = re.search(r"Listening for websocket clients on wss?://\S+:(\d+)", target.process.log_text())
    assert found is not None
    return int(found.group(1))


def frame(opcode: int, payload: bytes, *, mask: bool = True, fin: bool = True, rsv: int = 0) -> bytes:
    """A client frame (masked unless told otherwise)."""
    head = bytes([(0x80 if fin else 0) | rsv | opcode])
    bit = 0x80 if mask else 0
    n = len(payload)
    if n < 126:
        head += bytes([bit | n])
    else:
        head += bytes([bit | 126]) + struct.pack(">H", n)
    if not mask:
        return head + payload
    key = b"\x11\x22\x33\x44"
    return head + key + bytes(c ^ key[i % 4] for i, c in enumerate(payload))


class Raw:
    """One raw TCP connection to the websocket port."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> Raw:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer)

    def send(self, data: bytes | str) -> None:
        self.writer.write(data.encode() if isinstance(data, str) else data)

    async def http_reply(self) -> bytes:
        """One HTTP reply: its head, and a body as long as Content-Length says."""
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), WAIT)
        length = re.search(rb"Content-Length: (\d+)", head)
        body = await asyncio.wait_for(self.reader.readexactly(int(length.group(1))), WAIT) if length else b""
        return re.sub(rb"Date: [^\r]*\r\n", b"Date: *\r\n", head) + body

    async def frame(self) -> tuple[int, bytes]:
        """The next server frame: (first byte, payload); server frames are never masked."""
        b0, b1 = await asyncio.wait_for(self.reader.readexactly(2), WAIT)
        assert not b1 & 0x80
        n = b1 & 0x7F
        if n == 126:
            (n,) = struct.unpack(">H", await self.reader.readexactly(2))
        elif n == 127:
            (n,) = struct.unpack(">Q", await self.reader.readexactly(8))
        return b0, await asyncio.wait_for(self.reader.readexactly(n), WAIT)

    async def upgraded(self) -> dict[str, object]:
        """Upgrade without extensions; returns the INFO of the first frame."""
        self.send(UPGRADE + "\r\n")
        assert (await self.http_reply()).startswith(b"HTTP/1.1 101 ")
        b0, payload = await self.frame()
        assert b0 == 0x82 and payload.startswith(b"INFO ") and payload.endswith(b"\r\n")
        info: dict[str, object] = json.loads(payload[5:])
        return info

    async def rest(self) -> bytes:
        """Everything until the server closes the connection."""
        return await asyncio.wait_for(self.reader.read(), WAIT)

    def close(self) -> None:
        self.writer.close()
