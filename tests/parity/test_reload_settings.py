"""Configuration reload of the JetStream, websocket and cluster settings, on both servers.

Facts pinned (nats-server 2.15.1):

- ``sync_interval: always``, ``max_outstanding_catchup`` and
  ``info_queue_limit`` are refused by their Go names (``SyncAlways``,
  ``JetStreamMaxCatchup``, ``JetStreamInfoQueueLimit``, the last one shown
  as the request queue's limit while unset);
- the atomic batch limits (``jetstream { limits { batch {} } }``) reload,
  logged once ``Reloaded: JetStream limits``, and apply to the next message;
- a new ``ping_interval`` reaches the connected clients at their next PING;
- any change of the ``websocket {}`` block is refused with the block as Go
  prints its ``WebsocketOpts`` (``config reload not supported for
  Websocket: old={...}, new={...}``);
- the cluster's ``advertise``, ``no_advertise`` and ``ping_interval`` reload
  (``Reloaded: cluster``): the next route INFO carries the new address and
  leaves out the client URLs (the clients' ``connect_urls`` stay as they
  were), a route connected afterwards is pinged at the new interval; an
  ``advertise`` that is no ``host:port`` is refused; a route is stale after
  the cluster's own ``ping_max`` unanswered PINGs (the server's when unset).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from fakejs.targets import ServerProcess
from fakejs.targets.cluster import free_port
from tests.harness.atomic_batch import batch_hdr, msg
from tests.harness.publish import Raw, err
from tests.harness.reload import TARGETS, failure, reload, start
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON
from tests.harness.wait import eventually

pytestmark = pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)

REFUSED = "config reload not supported for "


def reloaded(log: str) -> list[str]:
    """The ``Reloaded:`` lines of the last reload."""
    return re.findall(r"\[INF\] (Reloaded: .*)\n", log.rsplit("Trapped", 1)[1])


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ("sync_interval: always", "SyncAlways: old=false, new=true"),
        ("max_outstanding_catchup: 64MB", "JetStreamMaxCatchup: old=0, new=67108864"),
        ("info_queue_limit: 500", "JetStreamInfoQueueLimit: old=10000, new=500"),
    ],
)
@pytest.mark.parametrize("kind", TARGETS)
async def test_jetstream_settings_nats_server_keeps(kind: str, tmp_path: Path, change: str, error: str) -> None:
    server = start(kind, "jetstream { }\n", tmp_path)
    try:
        log = await reload(server, f"jetstream {{ {change} }}\n")
        assert failure(log) == REFUSED + error
    finally:
        server.stop()


class _Address:
    """Where a server started from a file listens, as the raw publisher wants it."""

    def __init__(self, server: ServerProcess) -> None:
        self.host, self.port, self.manual_clock = "127.0.0.1", server.port, False


def _batch_limits(max_msgs: int) -> str:
    return f"jetstream {{ limits {{ batch {{ max_msgs: {max_msgs} }} }} }}\n"


@pytest.mark.parametrize("kind", TARGETS)
async def test_atomic_batch_limits_reload_at_once(kind: str, tmp_path: Path) -> None:
    server = start(kind, _batch_limits(3), tmp_path)
    try:
        raw = await Raw.open(_Address(server))  # type: ignore[arg-type]
        stream = {"name": "S", "subjects": ["s.>"], "storage": "memory", "allow_atomic": True}
        await raw.pub("$JS.API.STREAM.CREATE.S", json.dumps(stream).encode())
        assert b'"did_create":true' in await raw.frame()
        too_large = msg(err("S", 400, 10199, "atomic publish batch is too large: 3"))
        assert await raw.request("s.a", b"", batch_hdr("T", 4)) == too_large
        assert reloaded(await reload(server, _batch_limits(5)))[2:] == ["Reloaded: JetStream limits"]
        incomplete = msg(err("S", 400, 10176, "atomic publish batch is incomplete"))
        assert await raw.request("s.a", b"", batch_hdr("T", 4)) == incomplete  # no longer too large
        assert await raw.request("s.a", b"", batch_hdr("U", 6)) == msg(
            err("S", 400, 10199, "atomic publish batch is too large: 5")
        )
        # Unchanged limits are not reloaded again.
        assert reloaded(await reload(server, _batch_limits(5), count=2))[2:] == []
        await raw.close()
    finally:
        server.stop()


WEBSOCKET = "websocket { port: %d, no_tls: true%s }\n"
EMPTY_STRINGS = " " * 9  # advertise, no_auth_user, the four cookies, username, password, token: all empty


def _websocket_struct(port: int, tail: str = "false 0s 0s map[]", host: str = "0.0.0.0") -> str:
    no_tls = "true" if port else "false"
    return f"{{{host} {port}{EMPTY_STRINGS} 0 {no_tls} <nil> false map[] false [] {tail} <nil>}}"


@pytest.mark.parametrize("kind", TARGETS)
async def test_a_websocket_change_is_refused_with_the_block_as_go_prints_it(kind: str, tmp_path: Path) -> None:
    port = free_port()
    server = start(kind, WEBSOCKET % (port, ""), tmp_path)
    try:
        log = await reload(server, WEBSOCKET % (port, ", compression: true"))
        before = _websocket_struct(port)
        assert failure(log) == f"{REFUSED}Websocket: old={before}, new={_websocket_struct(port, 'true 0s 0s map[]')}"
        extra = ', handshake_timeout: "3s", ping_interval: "90s", headers: { X-B: "2", X-A: "1" }'
        log = await reload(server, WEBSOCKET % (port, extra), count=2)
        after = _websocket_struct(port, "false 3s 1m30s map[X-A:1 X-B:2]")
        assert failure(log) == f"{REFUSED}Websocket: old={before}, new={after}"
        log = await reload(server, "", count=3)
        assert failure(log) == f"{REFUSED}Websocket: old={before}, new={_websocket_struct(0, host='')}"
        # The same block again reloads (the running listener stays).
        assert reloaded(await reload(server, WEBSOCKET % (port, ""), count=4)) == [
            "Reloaded: authorization users",
            "Reloaded: accounts",
        ]
    finally:
        server.stop()


def _cluster(port: int, extra: str = "") -> str:
    return f"server_name: A\ncluster {{ name: C, host: 127.0.0.1, port: {port}{extra} }}\n"


async def _route_connection(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to the route port, once it listens (nats-server opens it a moment after the client port)."""

    async def attempt() -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        try:
            return await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            return None

    connection = await eventually(attempt, what="the route listener")
    assert connection is not None
    return connection


async def _route_greeting(port: int) -> dict[str, object]:
    """The INFO the route port greets a new connection with."""
    reader, writer = await _route_connection(port)
    try:
        line = await asyncio.wait_for(reader.readline(), 5)
    finally:
        writer.close()
    info: dict[str, object] = json.loads(line[5:])
    return info


@pytest.mark.parametrize("kind", TARGETS)
async def test_cluster_advertise_and_no_advertise_reload_into_the_next_route_info(kind: str, tmp_path: Path) -> None:
    port = free_port()
    server = start(kind, _cluster(port), tmp_path)
    try:
        greeting = await _route_greeting(port)
        assert (greeting["host"], greeting["port"], "ip" in greeting) == ("127.0.0.1", port, False)
        assert greeting["connect_urls"]
        log = await reload(server, _cluster(port, ', advertise: "10.0.0.1:7000", no_advertise: true'))
        assert reloaded(log)[2:] == ["Reloaded: cluster"]
        greeting = await _route_greeting(port)
        assert (greeting["host"], greeting["port"], greeting["ip"]) == ("10.0.0.1", 7000, "nats-route://10.0.0.1:7000/")
        assert "connect_urls" not in greeting
        log = await reload(server, _cluster(port, ', advertise: "10.0.0.2"'), count=2)
        greeting = await _route_greeting(port)
        assert (greeting["host"], greeting["port"], greeting["ip"]) == (
            "10.0.0.2",
            port,
            f"nats-route://10.0.0.2:{port}/",
        )
        assert greeting["connect_urls"]
        log = await reload(server, _cluster(port, ', advertise: "10.0.0.1:x"'), count=3)
        assert (
            failure(log)
            == 'invalid Cluster.Advertise value of 10.0.0.1:x, err=strconv.Atoi: parsing "x": invalid syntax'
        )
    finally:
        server.stop()


ROUTE_CONNECT = (
    b'CONNECT {"echo":true,"verbose":false,"pedantic":false,"tls_required":false,"headers":true,'
    b'"name":"NPEER","cluster":"C","lnoc":true}\r\n'
    b'INFO {"server_id":"NPEER","server_name":"peer","version":"2.15.1","proto":3,"host":"127.0.0.1",'
    b'"port":1,"headers":true,"max_payload":1048576,"cluster":"C","lnoc":true,"lnocu":true}\r\n'
)


@pytest.mark.parametrize("kind", TARGETS)
async def test_cluster_ping_interval_reloads_for_the_routes(kind: str, tmp_path: Path) -> None:
    """Three PINGs in a few seconds: routes ping every 30 s at most before, every second after the reload."""
    port = free_port()
    server = start(kind, _cluster(port), tmp_path)
    try:
        log = await reload(server, _cluster(port, ', ping_interval: "1s"'))
        assert reloaded(log)[2:] == ["Reloaded: cluster"]
        reader, writer = await _route_connection(port)
        writer.write(ROUTE_CONNECT)
        pings = 0

        async def pinged() -> int:
            nonlocal pings
            line = await asyncio.wait_for(reader.readline(), 5)
            if line == b"PING\r\n":
                pings += 1
                writer.write(b"PONG\r\n")
            return pings

        await eventually(pinged, lambda count: count >= 3, what="three route PINGs", timeout=15)
        writer.close()
    finally:
        server.stop()


async def _connect_urls(server: ServerProcess, other: ServerProcess) -> list[str]:
    """The ``connect_urls`` a new client of ``server`` is told, once they list both servers' client ports."""

    async def told() -> list[str]:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        try:
            info = json.loads((await asyncio.wait_for(reader.readline(), 5))[5:])
        finally:
            writer.close()
        return list(info.get("connect_urls") or [])

    def both(urls: list[str]) -> bool:
        return {url.rsplit(":", 1)[1] for url in urls} == {str(server.port), str(other.port)}

    return await eventually(told, both, what="both servers' client URLs")


@pytest.mark.parametrize("kind", TARGETS)
async def test_no_advertise_reloaded_leaves_the_clients_connect_urls_as_they_were(kind: str, tmp_path: Path) -> None:
    first_port, second_port = free_port(), free_port()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    route = f', routes: ["nats-route://127.0.0.1:{first_port}"]'
    first = start(kind, _cluster(first_port), tmp_path / "a")
    second = start(kind, _cluster(second_port, route).replace("server_name: A", "server_name: B"), tmp_path / "b")
    try:
        before = await _connect_urls(first, second), await _connect_urls(second, first)
        log = await reload(second, _cluster(second_port, route + ", no_advertise: true").replace("A\n", "B\n"))
        assert reloaded(log)[2:] == ["Reloaded: cluster"]
        assert (await _connect_urls(first, second), await _connect_urls(second, first)) == before
    finally:
        first.stop()
        second.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_a_new_ping_interval_reaches_the_connected_clients_at_their_next_ping(kind: str, tmp_path: Path) -> None:
    """A silent client is stale after two unanswered PINGs: 4 s after it connected, not 42 s (at 20 s a PING)."""
    server = start(kind, 'ping_interval: "20s"\n', tmp_path)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        await reader.readline()
        writer.write(b'CONNECT {"verbose":false}\r\n')
        log = await reload(server, 'ping_interval: "1s"\n')
        assert reloaded(log)[2:] == ["Reloaded: ping_interval = 1s"]
        lines = []

        async def line() -> bytes:
            lines.append(await asyncio.wait_for(reader.readline(), 15))
            return lines[-1]

        await eventually(line, lambda last: last.startswith(b"-ERR"), what="the stale connection", timeout=15)
        assert lines == [b"PING\r\n", b"PING\r\n", b"-ERR 'Stale Connection'\r\n"]
        writer.close()
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_a_route_is_stale_after_the_clusters_own_ping_max(kind: str, tmp_path: Path) -> None:
    """A route that answers no PING is closed after the cluster's ``ping_max`` (1), not the server's (2)."""
    port = free_port()
    server = start(kind, _cluster(port, ', ping_interval: "1s", ping_max: 1'), tmp_path)
    try:
        reader, writer = await _route_connection(port)
        writer.write(ROUTE_CONNECT)
        lines: list[bytes] = []

        async def line() -> bytes:
            lines.append(await asyncio.wait_for(reader.readline(), 15))
            return lines[-1]

        await eventually(line, lambda last: last.startswith(b"-ERR"), what="the stale route", timeout=15)
        pings = [line for line in lines if line == b"PING\r\n"]
        assert (len(pings), lines[-1]) == (1, b"-ERR 'Stale Connection'\r\n")
        writer.close()
    finally:
        server.stop()
