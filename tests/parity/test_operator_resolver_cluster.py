"""Full and cache account resolvers in a cluster: accounts asked of the other servers, updates and deletes shared.

Each test starts a cluster of the test's kind (nats-server or fakejs
processes joined by routes), each node in operator mode with a resolver of
its own directory (``full`` or ``cache``).  A login whose account a node
does not hold waits while the node asks the others
(``$SYS.REQ.ACCOUNT.<account>.CLAIMS.LOOKUP``); a JWT pushed on one node,
and a delete, reach the other full resolvers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import nats
import pytest
from nats.aio.client import Client

from fakejs.core.jwt.claims import decode
from fakejs.gocompat.ids import get_hash
from fakejs.targets.cluster import ClusterNode, ProcessCluster
from fakejs.testkit.jwt import Operator, User, push_account
from tests.harness.cluster import interest_routed
from tests.harness.operator import login_connect
from tests.harness.raw import RawClient
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON
from tests.harness.wait import eventually

AUTH_VIOLATION = b"-ERR 'Authorization Violation'\r\n"
pytestmark = pytest.mark.cluster


class ResolverCluster(ProcessCluster):
    """A cluster whose node ``i`` also reads the configuration file ``configs[i]``."""

    def __init__(self, kind: str | Sequence[str], configs: Sequence[Path]) -> None:
        super().__init__([kind] * len(configs) if isinstance(kind, str) else kind)
        self.configs = list(configs)

    def __enter__(self) -> ResolverCluster:
        """The nodes started, each routed to the first (:func:`routed` waits until they reach each other)."""
        try:
            for index, kind in enumerate(self.kinds):
                self.nodes.append(self.node(kind, index, [self.seed_route] if index else []).start())
        except BaseException:
            self.stop()
            raise
        return self

    def node(self, kind: str, index: int, routes: Sequence[str] = (), extra: Sequence[str] = ()) -> ClusterNode:
        return super().node(kind, index, routes, [*extra, "-c", str(self.configs[index])])


class Setup:
    """An operator, its system account and one account to push, and the cluster's configuration files."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.operator = Operator("O")
        self.system = self.operator.account("SYS")
        self.app = self.operator.account("APP")

    def configs(self, resolvers: Sequence[str], timeout: str = "", interval: str = "") -> list[Path]:
        paths = []
        for index, resolver in enumerate(resolvers):
            directory = self.tmp_path / f"jwt{index}"
            config = self.operator.server_config(
                system_account=self.system,
                accounts=[self.system],
                resolver=resolver,
                resolver_dir=directory,
                allow_delete=resolver == "full",
            )
            for name, value in (("timeout", timeout), ("interval", interval)):
                if value:
                    config = config.replace(f'dir: "{directory}"', f'dir: "{directory}", {name}: "{value}"')
            path = self.tmp_path / f"node{index}.conf"
            path.write_text(config)
            paths.append(path)
        return paths


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


async def connect(node: ClusterNode, user: User) -> Client:
    return await nats.connect(
        node.url, user_jwt_cb=user.jwt_callback(), signature_cb=user.signature_callback(), allow_reconnect=False
    )


async def routed(cluster: ResolverCluster, user: User) -> None:
    """Wait until the system account's messages cross every route (an anonymous probe is refused here)."""
    clients = [await connect(node, user) for node in cluster.nodes]
    try:
        for index, publisher in enumerate(clients):
            await interest_routed(publisher, *(c for other, c in enumerate(clients) if other != index))
    finally:
        for client in clients:
            await client.close()


async def login(node: ClusterNode, user: User) -> bytes:
    """What the node answers ``user``'s login and a PING: a PONG, or the refusal."""
    client = await RawClient.connect("127.0.0.1", node.port)
    try:
        await client.send(await login_connect(client, user) + b"PING\r\n")
        await client.read_until(b"PONG\r\n")  # or the end of a refused connection
        return bytes(client.received)
    finally:
        await client.close()


async def logged(node: ClusterNode, line: str) -> None:
    await eventually(lambda: asyncio.sleep(0, node.log_text()), lambda text: line in text, what=line)


async def stored(path: Path) -> None:
    await eventually(lambda: asyncio.sleep(0, path.exists()), bool, what=f"{path.name} stored")


async def test_a_cache_resolver_asks_a_full_one_for_an_account(target_kind: str, setup: Setup) -> None:
    with ResolverCluster(target_kind, setup.configs(["full", "cache"])) as cluster:
        await routed(cluster, setup.system.user("probe"))
        full, cache = cluster.nodes
        admin = await connect(full, setup.system.user("admin"))
        try:
            await push_account(admin, setup.app)
            lookups = await admin.subscribe("$SYS.REQ.ACCOUNT.*.CLAIMS.LOOKUP")
            watcher = await connect(cache, setup.system.user("watcher"))
            await interest_routed(watcher, admin)  # the cache node knows of the subscription
            await watcher.close()
            assert b"PONG\r\n" in await login(cache, setup.app.user("alice"))
            lookup = await lookups.next_msg(timeout=5)
        finally:
            await admin.close()
        assert lookup.subject == f"$SYS.REQ.ACCOUNT.{setup.app.public_key}.CLAIMS.LOOKUP" and lookup.data == b""
        prefix, server_hash, suffix = lookup.reply.rsplit(".", 2)
        assert (prefix, server_hash, len(suffix)) == ("$SYS._INBOX", get_hash(cache.name), 8)
        cached = (setup.tmp_path / "jwt1" / f"{setup.app.public_key}.jwt").read_text()
        assert decode(cached).subject == setup.app.public_key  # the JWT the full resolver answered with
        missing = setup.operator.account("NEVER-PUSHED")
        assert AUTH_VIOLATION in await login(cache, missing.user("bob"))
        await logged(cache, "Account fetch failed: account jwt not found")


async def test_full_resolvers_share_a_push_and_a_delete(target_kind: str, setup: Setup) -> None:
    with ResolverCluster(target_kind, setup.configs(["full", "full", "full"])) as cluster:
        await routed(cluster, setup.system.user("probe"))
        first, _, last = cluster.nodes
        admin = await connect(first, setup.system.user("admin"))
        try:
            await push_account(admin, setup.app)
            for index in range(3):
                await stored(setup.tmp_path / f"jwt{index}" / f"{setup.app.public_key}.jwt")
            alice = await RawClient.connect("127.0.0.1", last.port)
            await alice.send(await login_connect(alice, setup.app.user("alice")) + b"PING\r\n")
            assert b"PONG\r\n" in await alice.read_until(b"PONG\r\n")
            inbox = admin.new_inbox()
            replies = await admin.subscribe(inbox)
            await admin.publish("$SYS.REQ.CLAIMS.DELETE", setup.operator.delete_request(setup.app).encode(), inbox)
            for _ in range(3):
                await replies.next_msg(timeout=5)
            for index in range(3):
                await stored(setup.tmp_path / f"jwt{index}" / f"{setup.app.public_key}.jwt.deleted")
            expired = b"-ERR 'Account Authentication Expired'\r\n"
            assert expired in await alice.read_until(expired)  # a client of the last node
            assert await alice.wait_closed()
            await alice.close()
        finally:
            await admin.close()


async def test_a_login_waits_for_the_timeout_when_no_server_answers(target_kind: str, setup: Setup) -> None:
    with ResolverCluster(target_kind, setup.configs(["cache", "cache"], timeout="300ms")) as cluster:
        await routed(cluster, setup.system.user("probe"))
        assert AUTH_VIOLATION in await login(cluster.nodes[1], setup.app.user("alice"))
        await logged(cluster.nodes[1], "Account fetch failed: fetching jwt timed out")


async def test_full_resolvers_sync_their_directories_every_interval(target_kind: str, setup: Setup) -> None:
    configs = setup.configs(["full", "full"], interval="250ms")
    written_before = setup.tmp_path / "jwt1" / f"{setup.app.public_key}.jwt"
    written_before.parent.mkdir()
    token = setup.app.jwt  # minted at each read
    written_before.write_text(token)
    with ResolverCluster(target_kind, configs) as cluster:
        await routed(cluster, setup.system.user("probe"))
        merged = setup.tmp_path / "jwt0" / f"{setup.app.public_key}.jwt"
        await stored(merged)  # node 1 answered one of node 0's pack requests
        assert merged.read_text() == token
        assert b"PONG\r\n" in await login(cluster.nodes[0], setup.app.user("alice"))


@pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)
@pytest.mark.parametrize("resolvers", [("full", "cache"), ("cache", "full")], ids=["fake-full", "real-full"])
async def test_a_mixed_cluster_answers_each_others_lookups(resolvers: tuple[str, str], setup: Setup) -> None:
    """nats-server and fakejs ask each other for an account, as two servers of one kind do.

    The fakejs node is the seed: nats-server dials it, with the route it dedicates to the system account.
    """
    with ResolverCluster(["fake", "real"], setup.configs(resolvers)) as cluster:
        await routed(cluster, setup.system.user("probe"))
        full, cache = cluster.nodes if resolvers[0] == "full" else reversed(cluster.nodes)
        admin = await connect(full, setup.system.user("admin"))
        try:
            await push_account(admin, setup.app)
        finally:
            await admin.close()
        assert b"PONG\r\n" in await login(cache, setup.app.user("alice"))
        assert AUTH_VIOLATION in await login(cache, setup.operator.account("NEVER-PUSHED").user("bob"))
        await logged(cache, "Account fetch failed: account jwt not found")


async def test_an_empty_answer_counts_once_every_other_server_answered(target_kind: str, setup: Setup) -> None:
    """With a full resolver and two caches, a cache's lookup gets one empty answer of two: it waits the timeout."""
    with ResolverCluster(target_kind, setup.configs(["full", "cache", "cache"], timeout="500ms")) as cluster:
        await routed(cluster, setup.system.user("probe"))
        cache = cluster.nodes[2]
        assert AUTH_VIOLATION in await login(cache, setup.operator.account("NEVER-PUSHED").user("bob"))
        await logged(cache, "Account fetch failed: fetching jwt timed out")
        admin = await connect(cluster.nodes[0], setup.system.user("admin"))
        try:
            await push_account(admin, setup.app)
        finally:
            await admin.close()
        assert b"PONG\r\n" in await login(cache, setup.app.user("alice"))
