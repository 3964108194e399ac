"""The route protocol byte by byte: a test plays another server of the cluster on a raw socket.

The same script runs against fakejs and nats-server 2.15.1 (one server
with a ``cluster {}`` block); the peer announces no route pool, so one
connection carries every account.  Facts pinned:

* the route port greets with ``INFO`` (``cluster``, ``route_pool_size`` 3,
  ``lnoc``/``lnocu``, a ``nonce``, the client URL in ``connect_urls``);
  nats-server also says ``compression: accept`` and ``ln``, fakejs
  neither (it does not compress routes);
* local interest is announced as ``RS+ $G <subject>`` once per subject and
  ``RS+ $G <subject> <queue> <members>`` at every change of a queue,
  withdrawn with ``RS-``;
* a client's message for the peer's interest leaves as ``RMSG $G <subject>
  [reply] <size>``, ``RMSG $G <subject> | <queue> <size>`` for a queue the
  peer holds, ``HMSG`` with headers;
* ``RMSG`` from the peer reaches plain subscribers, and one member of each
  queue it names (none of a queue it does not name);
* a PING on the route gets a PONG.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tests.harness.configured import configured_servers
from tests.harness.targets import RealTarget, Settings, Target
from tests.harness.wait import eventually

pytestmark = pytest.mark.cluster

CONFIG = 'cluster { name: C, listen: "127.0.0.1:-1" }\n'
ROUTE_LISTENER = re.compile(r"Listening for route connections on 127\.0\.0\.1:(\d+)")
PEER_CONNECT = b'CONNECT {"echo":true,"verbose":false,"pedantic":false,"tls_required":false,"headers":true,"name":"NPEER","cluster":"C","lnoc":true}\r\n'
PEER_INFO = (
    b'INFO {"server_id":"NPEER","server_name":"peer","version":"2.15.1","proto":3,"host":"127.0.0.1",'
    b'"port":1,"headers":true,"max_payload":1048576,"cluster":"C","lnoc":true,"lnocu":true}\r\n'
)
PEER_INFO_WITH_URLS = PEER_INFO.replace(b'"cluster":"C",', b'"cluster":"C","connect_urls":["127.0.0.1:1"],')


class Wire:
    """One raw connection: lines in, bytes out."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.greeting: dict[str, object] = {}

    def send(self, data: bytes) -> None:
        self.writer.write(data)

    async def line(self) -> bytes:
        return await asyncio.wait_for(self.reader.readline(), 5)

    async def until(
        self, wanted: bytes, skip: tuple[bytes, ...] = (b"PING", b"PONG", b"RS+ $SYS", b"RS- $SYS", b"INFO ")
    ) -> None:
        """Read up to the line ``wanted``; only keepalives, INFO and the system account's interest may come first."""
        while True:
            line = (await self.line()).rstrip(b"\r\n")
            if line == wanted:
                return
            assert line.startswith(skip), f"{line!r} before {wanted!r}"

    async def message(self) -> bytes:
        """The next MSG/HMSG/RMSG with its payload line (keepalives and system interest skipped)."""
        while True:
            line = await self.line()
            if line.startswith((b"MSG ", b"HMSG ", b"RMSG ")):
                size = int(line.split()[-1])
                return line + await asyncio.wait_for(self.reader.readexactly(size + 2), 5)
            assert line.startswith((b"PING", b"PONG", b"RS+ $SYS", b"RS- $SYS", b"INFO ")), line


async def _cluster_port(target: Target) -> int:
    """The route port (both servers listen on a free one), once the route listener is up.

    nats-server serves clients and monitoring a moment before its route
    listener is up, and its /varz keeps the cluster port it showed first
    (-1 when asked that early): the real server's port is read from its
    log line instead.
    """
    if isinstance(target, RealTarget):
        process = target.process
        assert process is not None

        async def logged() -> int:
            found = ROUTE_LISTENER.search(process.log_text())
            return int(found.group(1)) if found else 0

        return await eventually(logged, lambda port: port > 0, what="the route listener's log line")
    assert target.http_port is not None
    url = f"http://127.0.0.1:{target.http_port}/varz"

    async def port() -> int:
        body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read())
        return int(json.loads(body)["cluster"]["cluster_port"])

    return await eventually(port, lambda found: found > 0, what="the route listener's port in /varz")


@asynccontextmanager
async def _route_peer(
    target_kind: str, tmp_path: Path, peer_info: bytes = PEER_INFO
) -> AsyncIterator[tuple[Target, Wire, dict[str, object]]]:
    async with configured_servers(target_kind, tmp_path, Settings(jetstream=False, monitor=True)) as start:
        target = await start(CONFIG)
        reader, writer = await asyncio.open_connection("127.0.0.1", await _cluster_port(target))
        peer = Wire(reader, writer)
        greeting = await peer.line()
        assert greeting.startswith(b"INFO ") and greeting.endswith(b"\r\n")
        info = json.loads(greeting[5:])
        peer.send(PEER_CONNECT + peer_info + b"PING\r\n")
        await peer.until(b"PONG")
        try:
            yield target, peer, info
        finally:
            writer.close()


async def _client(target: Target, protocol: int = 1) -> Wire:
    reader, writer = await asyncio.open_connection("127.0.0.1", target.port)
    client = Wire(reader, writer)
    client.greeting = json.loads((await client.line())[5:])
    connect = b'CONNECT {"verbose":false,"pedantic":false,"protocol":%d,"headers":true}\r\nPING\r\n' % protocol
    client.send(connect)
    await client.until(b"PONG")
    if protocol >= 1:  # the INFO answering CONNECT comes after the first PONG
        assert (await _next_info(client))["connect_info"] is True
    return client


async def _next_info(wire: Wire) -> dict[str, object]:
    while True:
        line = await wire.line()
        if line.startswith(b"INFO "):
            info: dict[str, object] = json.loads(line[5:])
            return info
        assert line.startswith((b"PING", b"PONG")), line


async def test_clients_learn_the_other_servers_client_urls(target_kind: str, tmp_path: Path) -> None:
    """``connect_urls`` appears once another server brings URLs (this server's first), and stays after it goes."""
    async with configured_servers(target_kind, tmp_path, Settings(jetstream=False, monitor=True)) as start:
        target = await start(CONFIG)
        client = await _client(target)
        assert client.greeting["cluster"] == "C" and "connect_urls" not in client.greeting
        quiet = await _client(target, protocol=0)
        reader, writer = await asyncio.open_connection("127.0.0.1", await _cluster_port(target))
        await reader.readline()
        writer.write(PEER_CONNECT + PEER_INFO_WITH_URLS + b"PING\r\n")
        own = f"127.0.0.1:{target.port}"
        update = await _next_info(client)
        assert update["connect_urls"] == [own, "127.0.0.1:1"]
        assert "nonce" not in update and "connect_info" not in update and update["client_id"]
        later = await _client(target)
        assert later.greeting["connect_urls"] == [own, "127.0.0.1:1"]
        writer.close()
        assert (await _next_info(client))["connect_urls"] == [own]
        quiet.send(b"PING\r\n")
        assert await quiet.line() == b"PONG\r\n"  # no async INFO for a client of protocol 0


async def test_the_route_port_greets_with_its_info(target_kind: str, tmp_path: Path) -> None:
    async with _route_peer(target_kind, tmp_path) as (target, _peer, info):
        assert info["cluster"] == "C"
        assert info["route_pool_size"] == 3
        assert info["headers"] is True and info["lnoc"] is True and info["lnocu"] is True
        assert info["proto"] == 3 and info["version"] == "2.15.1"
        assert isinstance(info["nonce"], str) and info["nonce"]
        assert info["connect_urls"] == [f"127.0.0.1:{target.port}"]
        assert (info["host"], info["port"]) == ("127.0.0.1", await _cluster_port(target))
        expected = {"server_id", "server_name", "version", "proto", "go", "host", "port", "headers"}
        expected |= {"max_payload", "nonce", "cluster", "connect_urls", "lnoc", "lnocu", "route_pool_size"}
        assert expected <= set(info) <= expected | {"compression", "ln"}


async def test_interest_is_announced_once_per_subject_and_per_queue_change(target_kind: str, tmp_path: Path) -> None:
    async with _route_peer(target_kind, tmp_path) as (target, peer, _info):
        client = await _client(target)
        client.send(b"SUB foo 1\r\nSUB foo 2\r\nSUB bar q1 3\r\nSUB bar q1 4\r\nPING\r\n")
        await peer.until(b"RS+ $G foo")
        await peer.until(b"RS+ $G bar q1 1")
        await peer.until(b"RS+ $G bar q1 2")
        client.send(b"UNSUB 1\r\nUNSUB 2\r\nUNSUB 3\r\nUNSUB 4\r\nPING\r\n")
        await peer.until(b"RS- $G foo")
        await peer.until(b"RS+ $G bar q1 1")
        await peer.until(b"RS- $G bar q1")


async def test_messages_for_the_peer_leave_as_rmsg_and_hmsg(target_kind: str, tmp_path: Path) -> None:
    async with _route_peer(target_kind, tmp_path) as (target, peer, _info):
        peer.send(b"RS+ $G zzz\r\nRS+ $G qq grp 4\r\nPING\r\n")
        await peer.until(b"PONG")
        client = await _client(target)
        client.send(b"PUB zzz r1 2\r\nhi\r\nPUB qq 2\r\nho\r\nHPUB zzz 12 14\r\nNATS/1.0\r\n\r\nhe\r\n")
        assert await peer.message() == b"RMSG $G zzz r1 2\r\nhi\r\n"
        assert await peer.message() == b"RMSG $G qq | grp 2\r\nho\r\n"
        assert await peer.message() == b"HMSG $G zzz 12 14\r\nNATS/1.0\r\n\r\nhe\r\n"


async def test_messages_from_the_peer_reach_subscribers_and_named_queues(target_kind: str, tmp_path: Path) -> None:
    async with _route_peer(target_kind, tmp_path) as (target, peer, _info):
        client = await _client(target)
        client.send(b"SUB foo 1\r\nSUB bar q1 2\r\nSUB bar 3\r\nPING\r\n")
        await client.until(b"PONG")
        await peer.until(b"RS+ $G foo")
        await peer.until(b"RS+ $G bar q1 1")
        await peer.until(b"RS+ $G bar")
        peer.send(
            b"RMSG $G foo 2\r\nab\r\n"
            b"RMSG $G bar + rep q1 2\r\ncd\r\n"
            b"RMSG $G bar | other 2\r\nef\r\n"
            b"HMSG $G foo rr 12 14\r\nNATS/1.0\r\n\r\ngh\r\n"
        )
        assert await client.message() == b"MSG foo 1 2\r\nab\r\n"
        received = {await client.message(), await client.message(), await client.message()}
        assert received == {b"MSG bar 2 rep 2\r\ncd\r\n", b"MSG bar 3 rep 2\r\ncd\r\n", b"MSG bar 3 2\r\nef\r\n"}
        assert await client.message() == b"HMSG foo 1 rr 12 14\r\nNATS/1.0\r\n\r\ngh\r\n"


async def test_a_client_dialling_the_route_port_is_refused(target_kind: str, tmp_path: Path) -> None:
    async with configured_servers(target_kind, tmp_path, Settings(jetstream=False, monitor=True)) as start:
        target = await start(CONFIG)
        reader, writer = await asyncio.open_connection("127.0.0.1", await _cluster_port(target))
        await reader.readline()
        writer.write(b'CONNECT {"verbose":false,"lang":"python","version":"1"}\r\n')
        assert await asyncio.wait_for(reader.readline(), 5) == b"-ERR 'attempted to connect to route port'\r\n"
        assert await asyncio.wait_for(reader.read(), 5) == b""
        writer.close()
