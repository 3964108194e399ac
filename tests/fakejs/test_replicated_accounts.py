"""A replicated JetStream serving two named accounts in an in-process cluster: what only fakejs can show.

Each server runs one member of ``_meta_`` shared by its accounts (as
nats-server's), and one share per account that hears the assignments of its
account only; the client-visible rules are pinned on both targets in
``tests/parity/js_processes/test_js_processes_accounts.py``.
"""

from __future__ import annotations

import json
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from fakejs import Cluster, ServerOptions
from fakejs.core.configfile.load import load_text
from fakejs.jetstream.cluster import META_GROUP
from fakejs.server.cluster_replication import groups_of, leader_name, shares_of

pytestmark = pytest.mark.cluster

CONFIG = """
accounts {
  SYS { users: [ {user: sys, password: sys} ] }
  A { jetstream: enabled, users: [ {user: a, password: a} ] }
  B { jetstream: enabled, users: [ {user: b, password: b} ] }
}
system_account: SYS
"""


def accounts_cluster(**settings: Any) -> Cluster:
    loaded = load_text(CONFIG, base=ServerOptions())
    assert not loaded.problem_text(), loaded.problem_text()
    options = loaded.options
    return Cluster(jetstream=True, accounts=options.accounts, system_account=options.system_account, **settings)


async def api(nc: Client, subject: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    reply = await nc.request(subject, json.dumps(body).encode() if body is not None else b"", timeout=5.0)
    answer: dict[str, Any] = json.loads(reply.data)
    return answer


def url_of(cluster: Cluster, node: str | int, user: str) -> str:
    return cluster.url(node).replace("nats://", f"nats://{user}:{user}@", 1)


async def test_one_meta_member_per_server_and_a_share_per_account() -> None:
    async with accounts_cluster(seed=3) as cluster:
        client_a = await nats.connect(url_of(cluster, 0, "a"))
        client_b = await nats.connect(url_of(cluster, 1, "b"))
        try:
            for client in (client_a, client_b):
                created = await api(client, "$JS.API.STREAM.CREATE.S", {"name": "S", "num_replicas": 3})
                assert created["cluster"]["leader"] in ("n1", "n2", "n3"), created
            for server in cluster.running:
                shares = shares_of(server)
                assert sorted(share.account for share in shares) == ["A", "B"]
                assert shares[0].member is shares[1].member
                assert [group.name for group in groups_of(server)].count(META_GROUP) == 1
                assert all("S" in share.replicas.replicas for share in shares)
            names_a = await api(client_a, "$JS.API.STREAM.NAMES")
            created_b = await api(client_b, "$JS.API.STREAM.CREATE.T", {"name": "T", "num_replicas": 3})
            assert "error" not in created_b, created_b
            assert names_a["streams"] == ["S"]
            assert (await api(client_a, "$JS.API.STREAM.INFO.T"))["error"]["err_code"] == 10059
            assert (await api(client_b, "$JS.API.STREAM.NAMES"))["streams"] == ["S", "T"]
            assert all("T" not in shares_of(server, "A")[0].replicas.replicas for server in cluster.running)
        finally:
            await client_a.close()
            await client_b.close()


async def test_a_stream_of_each_account_fails_over_on_cue() -> None:
    async with accounts_cluster(seed=5) as cluster:
        client_a = await nats.connect(url_of(cluster, 0, "a"))
        try:
            created = await api(
                client_a, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s"], "num_replicas": 3}
            )
            leader = created["cluster"]["leader"]
            assert leader_name(cluster.running, "S") == leader
        finally:
            await client_a.close()
        survivor = next(name for name in ("n1", "n2", "n3") if name != leader)
        client_b = await nats.connect(url_of(cluster, survivor, "b"))
        try:
            await api(client_b, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s"], "num_replicas": 3})
            await cluster.kill(leader)
            client_a = await nats.connect(url_of(cluster, survivor, "a"))
            try:
                assert json.loads((await client_a.request("s", b"1", timeout=5)).data)["seq"] == 1
                assert json.loads((await client_b.request("s", b"1", timeout=5)).data)["seq"] == 1
                info = await api(client_a, "$JS.API.STREAM.INFO.S")
                assert info["cluster"]["leader"] != leader and info["state"]["messages"] == 1
            finally:
                await client_a.close()
        finally:
            await client_b.close()
