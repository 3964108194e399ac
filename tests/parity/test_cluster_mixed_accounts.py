"""A mixed cluster with accounts: the system account's dedicated route, whoever dials whom.

With route pooling (nats-server 2.10+), the system account travels on a
route of its own between every two servers: the dialling server opens it
beside the pool, its INFO naming the account (``route_account``), and the
account's interest and messages never take a pool connection.  A real node
and a fakejs node, each the seed in turn (the other dials it), must carry:

- ``$SYS.REQ.SERVER.PING`` from a system user on either node, answered by
  both servers;
- a request/reply between system users on the two nodes, both ways;
- a request/reply between users of an ordinary account, both ways, whether
  it travels on a pool connection or is pinned (``cluster { accounts }``)
  on a route of its own;

and ``/routez`` on both sides lists the pool (3 entries without
``account``) and one entry with ``account`` for each dedicated route.

Not parametrized over targets: it needs the real binary and fakejs at once
(two nats-servers, and two fakejs nodes, are checked the same way).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from tests.harness.cluster import Cluster, requests_answered, start_cluster
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON
from tests.harness.wait import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)]

SYSTEM = "SYS"
POOL = 3  # nats-server's default route pool size
CONFIG = """
accounts {
  SYS { users: [{user: sys, password: sys}] }
  APP { users: [{user: app, password: app}] }
}
system_account: SYS
no_auth_user: app
"""
PINNED = "cluster { accounts: [APP] }\n"


KINDS = {
    "real-seed": ["real", "fake"],
    "fake-seed": ["fake", "real"],
    "real-only": ["real"] * 2,
    "fake-only": ["fake"] * 2,
}


@pytest.fixture(scope="module", params=[f"{kinds}{pinned}" for kinds in KINDS for pinned in ("", "-pinned")])
def mixed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Two nodes, one of each kind, with accounts; the seed (node 0, the one dialled) is real or fakejs.

    ``pinned``: ``APP`` has a route of its own too (``cluster { accounts: [APP] }``).  The same checks
    hold on two nats-servers (the judge) and on two fakejs nodes.
    """
    config = tmp_path_factory.mktemp("accounts") / "accounts.conf"
    config.write_text(CONFIG + (PINNED if request.param.endswith("-pinned") else ""))
    kinds = KINDS[request.param.removesuffix("-pinned")]
    with start_cluster(kinds, extra=["-c", str(config)], monitor=True) as cluster:
        yield cluster


def token() -> str:
    return secrets.token_hex(4)


async def connect(cluster: Cluster, index: int, user: str) -> Client:
    return await nats.connect(cluster.url(index), user=user, password=user)


def routez(cluster: Cluster, index: int) -> dict[str, Any]:
    port = cluster.nodes[index].http_port
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/routez", timeout=5) as answer:
        doc: dict[str, Any] = json.loads(answer.read())
    return doc


def config_text(cluster: Cluster) -> str:
    """The configuration file the nodes were started with (``-c FILE`` among their flags)."""
    extra = cluster.extra
    return Path(extra[extra.index("-c") + 1]).read_text()


def route_shape(doc: dict[str, Any]) -> list[str]:
    """Each route entry's ``account`` ("" on a pool connection), sorted."""
    return sorted(str(route.get("account", "")) for route in doc["routes"])


async def ping_answered_by_all(cluster: Cluster, asker_index: int) -> None:
    """Return once ``$SYS.REQ.SERVER.PING`` from a system user on the node is answered by every server."""
    asker = await connect(cluster, asker_index, "sys")
    names = {node.name for node in cluster.nodes}
    try:

        async def answered_by() -> set[str]:
            inbox = asker.new_inbox()
            sub = await asker.subscribe(inbox)
            await asker.publish("$SYS.REQ.SERVER.PING", b"", reply=inbox)
            await asker.flush()
            seen: set[str] = set()
            try:
                while seen != names:
                    msg = await sub.next_msg(timeout=1)
                    seen.add(json.loads(msg.data)["server"]["name"])
            except nats.errors.TimeoutError:
                pass
            finally:
                await sub.unsubscribe()
            return seen

        await eventually(answered_by, lambda seen: seen == names, what="a PING answer from every server")
    finally:
        await asker.close()


@pytest.mark.parametrize("asker_index", [0, 1])
async def test_server_ping_reaches_both_servers(mixed: Cluster, asker_index: int) -> None:
    await ping_answered_by_all(mixed, asker_index)


def test_the_dedicated_route_comes_back_after_the_seed_restarts(tmp_path: Path) -> None:
    """fakejs dials the real seed again, its system account's route included, once the seed is back."""
    config = tmp_path / "accounts.conf"
    config.write_text(CONFIG)
    with start_cluster(["real", "fake"], extra=["-c", str(config)], monitor=True) as cluster:
        asyncio.run(ping_answered_by_all(cluster, 1))
        cluster.restart(0)
        asyncio.run(ping_answered_by_all(cluster, 1))
        asyncio.run(ping_answered_by_all(cluster, 0))


@pytest.mark.parametrize("user", ["sys", "app"])
@pytest.mark.parametrize("requester_index", [0, 1])
async def test_request_reply_in_an_account_both_ways(mixed: Cluster, user: str, requester_index: int) -> None:
    requester = await connect(mixed, requester_index, user)
    responder = await connect(mixed, 1 - requester_index, user)
    subject = f"acctsvc.{token()}"
    try:
        await requests_answered(requester, responder, subject)
    finally:
        await requester.close()
        await responder.close()


def test_routez_shows_the_pool_and_the_dedicated_route(mixed: Cluster) -> None:
    expected = [""] * POOL + (["APP", SYSTEM] if PINNED in config_text(mixed) else [SYSTEM])

    async def shapes() -> list[list[str]]:
        return [route_shape(routez(mixed, index)) for index in range(2)]

    asyncio.run(eventually(shapes, lambda got: got == [expected, expected], what="every route on both sides"))
    for index in range(2):
        doc = routez(mixed, index)
        assert doc["num_routes"] == len(expected)
        dedicated = [route for route in doc["routes"] if route.get("account")]
        assert {route["remote_name"] for route in dedicated} == {mixed.nodes[1 - index].name}
        assert {route["did_solicit"] for route in dedicated} == {index == 1}
