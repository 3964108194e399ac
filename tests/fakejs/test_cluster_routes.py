"""Routes between fakejs servers in one process: the mesh, pools, restarts, names and logins.

What clients see of a cluster is pinned on both targets in
``tests/parity/test_cluster_*.py``; this module looks inside fakejs (its
peers, pool slots and dialling) where a real server offers no view.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import nats
import pytest

from fakejs import Server, ServerOptions
from fakejs.core.cluster.peers import pool_index
from fakejs.core.cluster_config import ClusterConfig

pytestmark = pytest.mark.cluster


def _server(name: str, routes: list[str] | None = None, cluster: str = "C", **config: Any) -> Server:
    settings = ClusterConfig(name=cluster, host="127.0.0.1", port=config.pop("port", 0), routes=routes or [], **config)
    return Server(ServerOptions(port=0, name=name, jetstream=False, cluster=settings))


def _route_url(server: Server, credentials: str = "") -> str:
    assert server.routes is not None
    return f"nats-route://{credentials}127.0.0.1:{server.routes.port}"


async def _until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


def _peers(server: Server) -> set[str]:
    assert server.broker.cluster is not None
    return {peer.name for peer in server.broker.cluster.peers.values()}


def _full_pools(server: Server) -> bool:
    cluster = server.broker.cluster
    assert cluster is not None
    dedicated = {(link.account, link.remote_id) for link in cluster.route_links() if link.account}
    pinned = {(name, peer.server_id) for name in cluster.pinned for peer in cluster.peers.values()}
    return all(peer.full for peer in cluster.peers.values()) and pinned <= dedicated


@asynccontextmanager
async def _mesh(names: list[str]) -> AsyncIterator[list[Server]]:
    """A seed and servers routed to it only: gossip has to connect the others to each other."""
    seed = _server(names[0])
    await seed.start()
    servers = [seed]
    try:
        for name in names[1:]:
            server = _server(name, [_route_url(seed)])
            await server.start()
            servers.append(server)
        everyone = set(names)
        for server in servers:
            await _until(lambda s=server: _peers(s) == everyone - {s.broker.name} and _full_pools(s))
        yield servers
    finally:
        for server in reversed(servers):
            await server.stop()


async def test_gossip_meshes_the_servers_and_every_pool_fills() -> None:
    async with _mesh(["A", "B", "C"]) as (a, b, c):
        for server in (a, b, c):
            cluster = server.broker.cluster
            assert cluster is not None
            assert cluster.num_routes == 6  # two servers, three connections each
            assert server.errors == []
        b_cluster = b.broker.cluster
        assert b_cluster is not None
        to_c = next(peer for peer in b_cluster.peers.values() if peer.name == "C")
        assert not any(link.explicit for link in to_c.live_links())  # learned, not configured


async def test_messages_queues_and_requests_cross_the_mesh() -> None:
    async with _mesh(["A", "B", "C"]) as servers:
        clients = [await nats.connect(server.url) for server in servers]
        try:
            plain: list[bytes] = []
            counts = [0, 0, 0]

            async def member(i: int) -> Any:
                async def handler(msg: Any) -> None:
                    counts[i] += 1

                return handler

            async def record(msg: Any) -> None:
                plain.append(msg.data)

            async def respond(msg: Any) -> None:
                await msg.respond(b"from C")

            await clients[1].subscribe("news.>", cb=record)
            for i, client in enumerate(clients):
                await client.subscribe("work", queue="g", cb=await member(i))
            await clients[2].subscribe("service", cb=respond)
            for client in clients:
                await client.flush()
            # Interest travels asynchronously, as on nats-server: wait until A knows of B's and C's.
            router = servers[0].broker.accounts.default.router
            await _until(lambda: router.has_interest("news.x") and router.has_interest("service"))
            await _until(
                lambda: len(router.remote.index.match("work").qsubs.get("g", [])) == 2 if router.remote else False
            )
            await clients[0].publish("news.x", b"1")
            for _ in range(300):
                await clients[0].publish("work", b"")
            reply = await clients[0].request("service", b"", timeout=2)
            assert reply.data == b"from C"
            await _until(lambda: sum(counts) == 300 and plain == [b"1"])
            await asyncio.sleep(0.05)
            assert sum(counts) == 300 and all(counts)
        finally:
            for client in clients:
                await client.close()


async def test_the_control_subjects_stay_with_their_server() -> None:
    async with _mesh(["A", "B"]) as (a, _b):
        remote = a.broker.accounts.default.router.remote
        assert remote is not None
        assert not remote.index.match("$FAKEJS.STATE").psubs


async def _next_urls(reader: asyncio.StreamReader) -> set[str]:
    """The ``connect_urls`` of the next INFO a raw client reads (PINGs and PONGs skipped)."""
    while True:
        line = await asyncio.wait_for(reader.readline(), 5)
        if line.startswith(b"INFO "):
            return set(json.loads(line[5:]).get("connect_urls", []))


async def test_a_restarted_server_rejoins_and_clients_hear_of_it() -> None:
    async with _mesh(["A", "B", "C"]) as (a, b, c):
        reader, writer = await asyncio.open_connection("127.0.0.1", a.port)
        try:
            urls = {f"127.0.0.1:{s.port}" for s in (a, b, c)}
            assert await _next_urls(reader) == urls
            writer.write(b'CONNECT {"verbose":false,"protocol":1}\r\nPING\r\n')
            assert await _next_urls(reader) == urls  # the INFO after the first PONG
            # Down for a moment, back on the same ports: it dials the seed again, the seed gossips it to C.
            restart = asyncio.create_task(b.restart(down_for=0.5))
            assert await _next_urls(reader) == urls - {f"127.0.0.1:{b.port}"}
            assert _peers(a) == {"C"}
            await _until(lambda: _peers(c) == {"A"})
            assert await _next_urls(reader) == urls
            await restart
            await _until(lambda: _peers(a) == {"B", "C"} and _peers(c) == {"A", "B"} and _full_pools(c))
        finally:
            writer.close()


async def test_a_server_of_another_cluster_is_refused() -> None:
    async with _mesh(["A"]) as (a,):
        other = _server("D", [_route_url(a)], cluster="OTHER")
        await other.start()
        try:
            await asyncio.sleep(0.3)
            assert _peers(a) == set() and _peers(other) == set()
        finally:
            await other.stop()


async def test_a_generated_cluster_name_gives_way_to_a_configured_one() -> None:
    a = _server("A", cluster="")
    await a.start()
    assert a.broker.cluster is not None and a.broker.cluster.dynamic_name
    b = _server("B", [_route_url(a)], cluster="NAMED")
    await b.start()
    try:
        await _until(lambda: _peers(a) == {"B"} and _full_pools(a))
        assert a.broker.cluster.name == "NAMED" and not a.broker.cluster.dynamic_name
        client = await nats.connect(a.url)
        assert client._server_info["cluster"] == "NAMED"
        await client.close()
    finally:
        await b.stop()
        await a.stop()


async def test_routes_log_in_with_the_cluster_credentials() -> None:
    a = _server("A", username="ruser", password="rpass")
    await a.start()
    good = _server("B", [_route_url(a, "ruser:rpass@")])
    bad = _server("C", [_route_url(a, "ruser:wrong@")])
    await good.start()
    await bad.start()
    try:
        await _until(lambda: _peers(a) == {"B"} and _full_pools(a))
        await asyncio.sleep(0.2)
        assert _peers(a) == {"B"} and _peers(bad) == set()
    finally:
        for server in (bad, good, a):
            await server.stop()


async def test_a_client_on_the_route_port_is_told_so() -> None:
    async with _mesh(["A"]) as (a,):
        assert a.routes is not None
        reader, writer = await asyncio.open_connection("127.0.0.1", a.routes.port)
        info = await reader.readline()
        assert info.startswith(b"INFO {") and b'"cluster":"C"' in info
        writer.write(b'CONNECT {"verbose":false,"lang":"python","version":"1"}\r\n')
        assert await reader.readline() == b"-ERR 'attempted to connect to route port'\r\n"
        assert await reader.read() == b""
        writer.close()


async def test_a_route_to_itself_is_dropped_and_not_dialled_again() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    a = _server("A", [f"nats-route://127.0.0.1:{port}"], port=port)
    await a.start()
    try:
        cluster = a.broker.cluster
        assert cluster is not None
        await asyncio.sleep(0.3)
        assert cluster.peers == {} and not cluster.links
        assert a.errors == []
    finally:
        await a.stop()


@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_accounts_spread_over_the_pool_as_nats_server_spreads_them(size: int) -> None:
    # FNV-1a 32 of "a" is 0xe40c292c and of "foobar" 0xbf9cf968; a pool of one carries everything.
    assert pool_index(size, "a") == (0xE40C292C % size if size > 1 else 0)
    assert pool_index(size, "foobar") == (0xBF9CF968 % size if size > 1 else 0)


async def test_a_server_in_lame_duck_mode_leaves_the_other_servers_connect_urls() -> None:
    async with _mesh(["A", "B"]) as (a, b):
        reader, writer = await asyncio.open_connection("127.0.0.1", a.port)
        try:
            both = {f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"}
            assert await _next_urls(reader) == both
            writer.write(b'CONNECT {"verbose":false,"protocol":1}\r\nPING\r\n')
            assert await _next_urls(reader) == both
            lame = asyncio.create_task(b.lame_duck(duration=1.0, grace=0.1))
            assert await _next_urls(reader) == {f"127.0.0.1:{a.port}"}
            await lame
        finally:
            writer.close()


async def test_varz_counts_route_connections_and_remote_servers() -> None:
    from fakejs.monitoring.endpoints import respond

    async with _mesh(["A", "B", "C"]) as (a, _b, _c):
        status, _ctype, body = respond(a, "/varz")
        varz = json.loads(body)
        # Each remote: a pool of three, and the route dedicated to the system account.
        assert status == 200 and (varz["routes"], varz["remotes"]) == (8, 2)
        assert varz["cluster"]["name"] == "C" and varz["cluster"]["cluster_port"] == a.routes.port


async def test_thousands_of_subjects_cross_with_one_message_each() -> None:
    """5,000 subscriptions on B, announced to A one by one; each gets exactly its message from A."""
    async with _mesh(["A", "B"]) as (a, b):
        publisher, subscriber = await nats.connect(a.url), await nats.connect(b.url)
        try:
            got: dict[str, int] = {}

            async def count(msg: Any) -> None:
                got[msg.subject] = got.get(msg.subject, 0) + 1

            subjects = [f"many.{i}.x" for i in range(5000)]
            for subject in subjects:
                await subscriber.subscribe(subject, cb=count)
            await subscriber.flush()
            remote = a.broker.accounts.default.router.remote
            assert remote is not None
            await _until(lambda: remote.index.count >= 5000, timeout=20)
            for subject in subjects:
                await publisher.publish(subject, b"")
            await publisher.flush()
            await _until(lambda: len(got) == 5000, timeout=20)
            await asyncio.sleep(0.05)
            assert set(got.values()) == {1}
        finally:
            await publisher.close()
            await subscriber.close()
