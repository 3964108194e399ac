"""Configuration reload of ``cluster { }``, on both servers.

Routes added to the file are dialled, routes taken out are closed (every
connection of the pool, each logged ``Removed route <url>``) and not
dialled again; a new cluster port is refused with nats-server's text.
"""

from __future__ import annotations

import re
from pathlib import Path

import nats
import nats.errors
import pytest

from fakejs.targets import ServerProcess
from fakejs.targets.cluster import free_port
from tests.harness.reload import TARGETS, failure, reload, start
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON
from tests.harness.wait import eventually

pytestmark = pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)


def _cluster(name: str, port: int, routes: list[int]) -> str:
    listed = ", ".join(f'"nats-route://127.0.0.1:{route}"' for route in routes)
    return f"server_name: {name}\ncluster {{ name: C, host: 127.0.0.1, port: {port}, routes: [{listed}] }}\n"


async def _crosses(first: ServerProcess, second: ServerProcess) -> None:
    """A message published on ``second`` reaches a subscriber on ``first``: the route is up."""
    receiver, sender = await nats.connect(first.url), await nats.connect(second.url)
    try:
        sub = await receiver.subscribe("over")
        await receiver.flush()

        async def arrived() -> bool:
            await sender.publish("over", b"x")
            try:
                await sub.next_msg(timeout=0.2)
            except nats.errors.TimeoutError:
                return False
            return True

        await eventually(arrived, what="a message over the new route")
    finally:
        await receiver.close()
        await sender.close()


@pytest.mark.parametrize("kind", TARGETS)
async def test_route_added_then_removed(kind: str, tmp_path: Path) -> None:
    first_port, second_port = free_port(), free_port()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = start(kind, _cluster("A", first_port, []), tmp_path / "a")
    second = start(kind, _cluster("B", second_port, []), tmp_path / "b")
    try:
        log = await reload(second, _cluster("B", second_port, [first_port]))
        assert re.findall(r"\[INF\] (Reloaded: .*)\n", log) == [
            "Reloaded: authorization users",
            "Reloaded: accounts",
            "Reloaded: cluster routes",
        ]
        await _crosses(first, second)
        log = await reload(second, _cluster("B", second_port, []), count=2)
        last = log.rsplit("Trapped", 1)[1]
        url = f"nats-route://127.0.0.1:{first_port}"
        lines = re.findall(r"\[INF\] (Removed route .*|Reloaded: .*)\n", last)
        assert lines[:2] + lines[-1:] == [
            "Reloaded: authorization users",
            "Reloaded: accounts",
            "Reloaded: cluster routes",
        ]
        # Every connection to the server is closed: the pool's three (nats-server's dedicated $SYS route too,
        # once it is up).
        assert len(lines) - 3 >= 3 and set(lines[2:-1]) == {f"Removed route {url}"}
        log = await reload(second, _cluster("B", second_port + 1, []), count=3)
        assert failure(log) == f"config reload not supported for cluster port: old={second_port}, new={second_port + 1}"
    finally:
        first.stop()
        second.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_cluster_renamed(kind: str, tmp_path: Path) -> None:
    port = free_port()
    server = start(kind, _cluster("A", port, []), tmp_path)
    try:
        log = await reload(server, _cluster("A", port, []).replace("name: C", "name: D"))
        assert re.findall(r"\[INF\] (Cluster name updated .*|Reloaded: .*)\n", log) == [
            "Reloaded: authorization users",
            "Reloaded: accounts",
            "Cluster name updated to D",
            "Reloaded: cluster",
        ]
        nc = await nats.connect(server.url)
        assert nc._server_info["cluster"] == "D"  # new clients are told the new name
        await nc.close()
    finally:
        server.stop()


def _guarded(name: str, port: int, routes: list[str], password: str) -> str:
    listed = ", ".join(f'"{route}"' for route in routes)
    return (
        f"server_name: {name}\ncluster {{\n  name: C, host: 127.0.0.1, port: {port}, routes: [{listed}]\n"
        f"  authorization {{ user: u, password: {password} }}\n}}\n"
    )


@pytest.mark.parametrize("kind", TARGETS)
async def test_new_cluster_password_refuses_the_routes_logged_in_with_the_old_one(kind: str, tmp_path: Path) -> None:
    first_port, second_port = free_port(), free_port()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = start(kind, _guarded("A", first_port, [], "p"), tmp_path / "a")
    second = start(kind, _guarded("B", second_port, [f"nats-route://u:p@127.0.0.1:{first_port}"], "p"), tmp_path / "b")
    try:
        await _crosses(first, second)
        log = await reload(first, _guarded("A", first_port, [], "q"))
        last = log.rsplit("Trapped", 1)[1]
        last = last[: last.index("Reloaded server configuration")]  # B dials again later, and is refused again
        assert re.findall(r"\[INF\] (Reloaded: .*)\n", last) == [
            "Reloaded: authorization users",
            "Reloaded: accounts",
            "Reloaded: cluster",
        ]
        refused = re.findall(r"\[ERR\] (.*)\n", last)  # every route B opened, refused before the reload is done
        assert len(refused) >= 3
        assert all(
            re.fullmatch(r'127\.0\.0\.1:\d+ - rid:\d+ - authentication error - User "u"', line) for line in refused
        )
        assert last.index("Reloaded: cluster") < last.index("[ERR]")
        # B dials with the new password once its own file has it.
        await reload(second, _guarded("B", second_port, [f"nats-route://u:q@127.0.0.1:{first_port}"], "p"))
        await _crosses(first, second)
    finally:
        first.stop()
        second.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_dial_retries_reloaded_and_pool_size_refused(kind: str, tmp_path: Path) -> None:
    port = free_port()
    server = start(kind, _cluster("A", port, []), tmp_path)
    try:
        log = await reload(server, _cluster("A", port, []).replace("routes:", "connect_retries: 5, routes:"))
        assert re.findall(r"\[INF\] (Reloaded: .*)\n", log)[2:] == ["Reloaded: cluster"]
        log = await reload(server, _cluster("A", port, []).replace("routes:", "pool_size: 5, routes:"), count=2)
        if kind == "real":
            assert re.findall(r"\[INF\] (Reloaded: .*)\n", log.rsplit("Trapped", 1)[1])[2:] == ["Reloaded: cluster"]
        else:
            assert failure(log) == "config reload of cluster pool_size is not supported by fakejs yet"
    finally:
        server.stop()
