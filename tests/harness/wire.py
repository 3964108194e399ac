"""A raw client connection that parses what a server sends into frames.

Parity tests of pull requests, push consumers and Direct Get check bytes a
nats client library would hide (status lines, header order, heartbeats,
flow-control requests), so they speak the protocol themselves.  :class:`Wire`
is the shared part: connect with headers on, read MSG/HMSG into
:class:`Frame` objects, answer server PINGs, and wait for a condition or a
PONG.  :mod:`tests.harness.pull`, :mod:`tests.harness.push` and
:mod:`tests.harness.direct` subclass it with their request helpers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.harness.raw import RawClient
from tests.harness.targets import Target
from tests.harness.wait import WAIT


@dataclass
class Frame:
    """One MSG or HMSG as received, with its exact bytes in ``raw``."""

    subject: str
    sid: int
    reply: str
    header: bytes | None
    payload: bytes
    raw: bytes

    @property
    def status(self) -> str | None:
        """``"404 No Messages"`` for a status frame, else ``None``."""
        if self.header is None:
            return None
        first = self.header.split(b"\r\n", 1)[0]
        return first[len(b"NATS/1.0 ") :].decode() if first.startswith(b"NATS/1.0 ") else None

    @property
    def is_fc(self) -> bool:
        return self.status == "100 FlowControl Request"

    @property
    def is_hb(self) -> bool:
        return self.status == "100 Idle Heartbeat"

    def headers(self) -> dict[str, str]:
        out = {}
        for line in (self.header or b"").split(b"\r\n")[1:]:
            if b":" in line:
                key, value = line.split(b":", 1)
                out[key.decode()] = value.strip().decode()
        return out

    def short(self) -> Any:
        """The frame for a failure message: its bytes, or a summary when they are long."""
        return self.raw if len(self.raw) < 400 else (self.subject, self.reply, len(self.payload))


class Wire:
    """A raw connection; every MSG/HMSG lands in ``frames``, in arrival order.

    Waiting follows the target's clock: against fakejs on a manual clock,
    :meth:`until` moves the clock from timer to timer until the condition
    holds, and :meth:`quiet` moves it by the seconds asked for (see
    :meth:`Target.elapse_until` and :meth:`Target.elapse`); otherwise both
    read for that long in real time.
    """

    default_timeout = WAIT  # of :meth:`until`

    def __init__(self, client: RawClient, target: Target | None = None) -> None:
        self.client = client
        self.target = target
        self.buf = bytearray()
        self.frames: list[Frame] = []
        self.pongs = 0
        self.infos = 0
        self.errors: list[bytes] = []

    @classmethod
    async def open(cls, target: Target, *, no_responders: bool = True) -> Any:
        """Connect, send CONNECT (headers on, not verbose) and wait until the server has taken it."""
        wire = cls(await RawClient.connect(target.host, target.port))
        wire.target = target
        await wire.until(lambda: wire.infos >= 1, "INFO")
        options = {"verbose": False, "pedantic": False, "headers": True, "no_responders": no_responders, "protocol": 1}
        await wire.send(b"CONNECT " + json.dumps(options).encode() + b"\r\n")
        await wire.ping()
        return wire

    @property
    def closed(self) -> bool:
        return self.client.closed

    async def send(self, data: bytes) -> None:
        await self.client.send(data)

    async def close(self) -> None:
        await self.client.close()

    # -- reading

    async def pump(self, timeout: float) -> bool:
        """Read once (up to ``timeout``) and parse; False on silence or a closed connection."""
        if self.client.closed:
            return False
        try:
            chunk = await asyncio.wait_for(self.client.reader.read(1 << 20), timeout)
        except TimeoutError:
            return False
        except (ConnectionError, OSError):
            self.client.closed = True
            return False
        if not chunk:
            self.client.closed = True
            return False
        self.buf += chunk
        self.parse()
        return True

    def parse(self) -> None:
        while True:
            end = self.buf.find(b"\r\n")
            if end < 0:
                return
            line = bytes(self.buf[:end])
            if line.startswith((b"MSG ", b"HMSG ")):
                parts = line.split(b" ")
                has_header = parts[0] == b"HMSG"
                fixed = 5 if has_header else 4  # tokens without a reply subject
                reply = parts[3].decode() if len(parts) == fixed + 1 else ""
                total = int(parts[-1])
                hlen = int(parts[-2]) if has_header else 0
                need = end + 2 + total + 2
                if len(self.buf) < need:
                    return
                body = bytes(self.buf[end + 2 : end + 2 + total])
                raw = bytes(self.buf[:need])
                del self.buf[:need]
                header = body[:hlen] if has_header else None
                self.frames.append(Frame(parts[1].decode(), int(parts[2]), reply, header, body[hlen:], raw))
                continue
            del self.buf[: end + 2]
            if line == b"PING":
                self.client.writer.write(b"PONG\r\n")
            elif line == b"PONG":
                self.pongs += 1
            elif line.startswith(b"INFO "):
                self.infos += 1
            elif line.startswith(b"-ERR"):
                self.errors.append(line)

    @property
    def manual_clock(self) -> bool:
        return self.target is not None and self.target.manual_clock

    async def drain(self) -> None:
        """Read and parse whatever arrives until the connection has been silent for 10 ms."""
        while await self.pump(0.01):
            pass

    async def until(self, condition: Callable[[], bool], what: str, timeout: float | None = None) -> None:
        """Read until ``condition()`` holds; fail with the frames so far after ``timeout`` or a hang-up."""
        limit = self.default_timeout if timeout is None else timeout
        if self.manual_clock:
            assert self.target is not None

            async def ready() -> bool:
                await self.drain()
                return condition() or self.client.closed

            await self.target.elapse_until(ready, limit)
            if not condition():
                self.fail(what)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        while not condition():
            remaining = deadline - loop.time()
            if remaining <= 0 or self.client.closed:
                if condition():
                    return
                self.fail(what)
            await self.pump(remaining)

    def fail(self, what: str) -> None:
        state = "connection closed" if self.client.closed else "timed out"
        raise AssertionError(f"{state} waiting for {what}; frames so far: {[f.short() for f in self.frames]}")

    async def ping(self) -> None:
        """PING and wait for the PONG: the server has processed everything sent before."""
        seen = self.pongs
        await self.send(b"PING\r\n")
        await self.until(lambda: self.pongs > seen, "PONG")

    async def quiet(self, seconds: float) -> None:
        """Read whatever arrives during ``seconds`` (for absence checks after a known deadline)."""
        if self.manual_clock:
            assert self.target is not None
            await self.target.elapse(seconds)
            await self.drain()
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while (remaining := deadline - loop.time()) > 0 and not self.client.closed:
            await self.pump(remaining)
