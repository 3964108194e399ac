"""Raw protocol conversations, to compare what two servers say byte for byte.

:func:`record` connects, sends a script of byte chunks and returns a
:class:`Transcript` of everything the server answered and whether it hung
up.  INFO lines carry values that differ between any two servers (ids,
ports, versions of the build); :meth:`Transcript.normalized` replaces each
with only the fields clients act on, so ``fake.normalized() ==
real.normalized()`` is a byte-for-byte comparison of everything else.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tests.harness.wait import WAIT

# INFO fields whose values are inherently per-server or per-build.
VOLATILE_INFO_FIELDS = frozenset(
    {
        "server_id",
        "server_name",
        "port",
        "client_id",
        "client_ip",
        "xkey",
        "git_commit",
        "go",
        "nonce",
        "fakejs",
        "host",
    }
)

_INFO_LINE = re.compile(rb"INFO (\{.*?\}) \r\n")
SENTINEL = b"PING\r\nPING\r\n"  # what :func:`record` sends after a script to know when it is answered


@dataclass
class Transcript:
    data: bytes
    closed: bool

    def without_greeting(self) -> bytes:
        """The bytes after the first INFO line."""
        if self.data.startswith(b"INFO "):
            return self.data[self.data.index(b"\r\n") + 2 :]
        return self.data

    def normalized(self) -> tuple[bytes, bool]:
        """Bytes with INFO documents reduced to their stable fields, and the close flag."""

        def stable(match: re.Match[bytes]) -> bytes:
            info = json.loads(match.group(1))
            kept = {k: v for k, v in info.items() if k not in VOLATILE_INFO_FIELDS}
            return b"INFO " + json.dumps(kept, sort_keys=True).encode() + b" \r\n"

        return _INFO_LINE.sub(stable, self.data), self.closed

    def infos(self) -> list[dict]:
        return [json.loads(m.group(1)) for m in _INFO_LINE.finditer(self.data)]


class RawClient:
    """A bare TCP connection speaking raw bytes."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.received = bytearray()
        self.closed = False

    @classmethod
    async def connect(cls, host: str, port: int) -> RawClient:
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer)

    async def send(self, data: bytes) -> None:
        if self.closed:
            return
        try:
            self.writer.write(data)
            await self.writer.drain()
        except (ConnectionError, OSError):
            self.closed = True

    async def read_until(self, marker: bytes, timeout: float = WAIT) -> bytes:
        """Read until ``marker`` appears in what was received (or EOF/timeout)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while marker not in self.received and not self.closed:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            await self.read_some(remaining)
        return bytes(self.received)

    async def settle(self, quiet: float = 0.15, timeout: float = 5.0) -> bytes:
        """Read until nothing arrives for ``quiet`` seconds, or EOF."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.closed and loop.time() < deadline:
            if not await self.read_some(quiet):
                break
        return bytes(self.received)

    async def hung_up(self) -> bool:
        """Whether the server has closed the connection (reading what is there to find out)."""
        while await self.read_some(0.005):
            pass
        return self.closed

    async def read_some(self, timeout: float) -> bool:
        """Read what arrives within ``timeout`` seconds; False on silence or a closed connection."""
        try:
            chunk = await asyncio.wait_for(self.reader.read(65536), timeout)
        except TimeoutError:
            return False
        except (ConnectionError, OSError):
            self.closed = True
            return False
        if not chunk:
            self.closed = True
            return False
        self.received += chunk
        return True

    async def wait_closed(self, timeout: float = WAIT) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.closed and loop.time() < deadline:
            await self.read_some(deadline - loop.time())
        return self.closed

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except (ConnectionError, OSError):
            pass


def expected_pongs(script: Sequence[bytes]) -> int:
    """How many PONGs a server owes for the PINGs inside ``script``.

    Counted with fakejs's own parser, applying CONNECT settings as a server
    would; it only decides when a recording may stop (a wrong count makes
    the recording wait for its timeout, it never drops bytes that arrived).
    """
    from fakejs.protocol import Connect, Parser, Ping, ProtocolViolation

    parser = Parser()
    parser.receive_data(b"".join(script))
    pings = 0
    try:
        for event in parser.events():
            if isinstance(event, Ping):
                pings += 1
            elif isinstance(event, Connect):
                parser.headers = bool(event.options.get("headers", parser.headers))
                parser.pedantic = bool(event.options.get("pedantic", parser.pedantic))
    except ProtocolViolation:
        pass
    return pings


async def record(
    host: str,
    port: int,
    script: Sequence[bytes],
    *,
    sync: bool = True,
    separate_writes: bool = False,
    quiet: float = 0.15,
    timeout: float = WAIT,
) -> Transcript:
    """Play ``script`` against a server and return what it answered.

    With ``sync`` (default) two ``PING``s are sent after the script and the
    recording ends once every PONG owed has arrived (the sentinels' own
    ``PONG``s are then removed) or the server hangs up -- fast and exact.
    Two, because a protocol-1 client's first PONG is followed by an INFO
    that nats-server may write a moment later: the second PONG comes after
    it.  Without ``sync``, recording ends after ``quiet`` seconds of silence.

    The script and the sentinel go out in one write unless
    ``separate_writes``: a server that hangs up while unread bytes sit in
    its socket resets the connection, and a reset can discard the last
    bytes it sent (its ``-ERR``) before the client reads them.
    """
    client = await RawClient.connect(host, port)
    try:
        await client.read_until(b"\r\n", timeout)
        greeting = len(client.received)
        sentinel = SENTINEL if sync else b""
        if separate_writes:
            for chunk in script:
                await client.send(chunk)
            await client.send(sentinel)
        else:
            await client.send(b"".join(script) + sentinel)
        if not sync or client.closed:
            await client.settle(quiet, timeout)
            return Transcript(bytes(client.received), client.closed)
        owed = expected_pongs(script) + SENTINEL.count(b"PING")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not client.closed and client.received.count(b"PONG\r\n", greeting) < owed:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            await client.read_some(min(remaining, 0.5))
        if not client.closed:
            await client.settle(0.02, timeout)  # anything written right behind the last PONG
        data = bytes(client.received)
        if client.received.count(b"PONG\r\n", greeting) >= owed:
            for _ in range(SENTINEL.count(b"PING")):
                cut = data.rindex(b"PONG\r\n")
                data = data[:cut] + data[cut + len(b"PONG\r\n") :]
        return Transcript(data, client.closed)
    finally:
        await client.close()
