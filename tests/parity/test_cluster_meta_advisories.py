"""The meta group's advisories in a three-node cluster with a system account, on both targets.

Facts pinned (nats-server 2.15.1), as a client of the system account on
``n1`` sees them:

- ``$JS.API.META.LEADER.STEPDOWN`` is audited on ``$JS.EVENT.ADVISORY.API``
  in the system account by the leader that answered (``client`` empty, no
  ``request`` when it was empty); the new leader then publishes
  ``$JS.EVENT.ADVISORY.DOMAIN.LEADER_ELECTED`` (``domain_leader_elected``:
  type, id, timestamp, ``leader`` -- the new leader's peer id, not its
  name --, every server of the meta group as ``PeerInfo``, ``cluster``),
  and so does the one elected when the meta leader's server crashes
  (which is listed with ``current: false``);
- ``$JS.API.SERVER.REMOVE`` is audited the same way (with its request),
  and the removed server, while it runs, publishes
  ``$JS.EVENT.ADVISORY.SERVER.REMOVED`` (``server_removed``: type, id,
  timestamp, ``server``, ``server_id``, ``cluster``);
- a node that shuts down in order announces it on
  ``$SYS.SERVER.<id>.SHUTDOWN`` to the system account's clients of the
  other nodes (its ``ServerInfo`` names the ``cluster``).

Which server sends what is nats-server's to choose, so only each
advisory's own content is compared, not the order between servers.

fakejs runs twice: as its in-process cluster (one store simulated as a
cluster) and as three processes started from the same configuration file,
each running its share of a JetStream replicated across them
(``processes``).
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from tests.harness.heard import ADVISORY, Heard, assert_event
from tests.harness.js import api
from tests.harness.js_cluster import PEER_KEYS, create, peer_of
from tests.harness.meta_cluster import Cluster, running
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON
from tests.harness.wait import eventually

pytestmark = pytest.mark.cluster

NODES = ("n1", "n2", "n3")
ELECTION = 30.0  # seconds a meta leader may take on a busy machine


@pytest.fixture(scope="module", params=["fake", "real", "processes"])
def js_cluster_kind(request: pytest.FixtureRequest) -> str:
    """fakejs in-process, nats-server processes, fakejs processes (a JetStream replicated across them)."""
    if request.param == "real" and REAL_BINARY is None:
        pytest.skip(REAL_MISSING_REASON)
    return str(request.param)


@pytest.fixture
def cluster(js_cluster_kind: str, tmp_path: Path) -> Iterator[Cluster]:
    with running(js_cluster_kind, tmp_path) as started:
        yield started


@pytest.fixture
async def system(cluster: Cluster) -> AsyncIterator[Heard]:
    nc = await nats.connect(cluster.url(0), user="sys", password="sys", allow_reconnect=False)
    try:
        heard = Heard(nc)
        await nc.subscribe(ADVISORY + ">", cb=heard.add)
        await nc.flush()
        yield heard
    finally:
        await nc.close()


async def ask(nc: Client, subject: str, body: bytes = b"") -> dict[str, Any]:
    """The answer of the meta leader (asked again while the cluster has none yet)."""

    async def once() -> dict[str, Any]:
        try:
            return dict(json.loads((await nc.request(subject, body, timeout=2.0)).data))
        except nats.errors.TimeoutError:
            return {}

    return await eventually(once, what=f"an answer to {subject}", timeout=ELECTION)


def jsz(cluster: Cluster, node: int = 0) -> dict[str, Any]:
    with urllib.request.urlopen(f"{cluster.monitor_url(node)}/jsz", timeout=5) as reply:
        found: dict[str, Any] = json.loads(reply.read())
        return found


def meta_leader(cluster: Cluster) -> str:
    return str(jsz(cluster).get("meta_cluster", {}).get("leader", ""))


def meta_leader_of_three(cluster: Cluster) -> str:
    """The meta leader once the meta group counts the three servers ("" before: fakejs's processes add the
    servers its first voters left out a moment after the first election)."""
    group = jsz(cluster).get("meta_cluster") or {}
    return str(group.get("leader", "")) if group.get("cluster_size") == len(NODES) else ""


def assert_system_audit(doc: dict[str, Any], subject: str, server: str, request: str = "") -> dict[str, Any]:
    keys = ["server", "client", "subject", *(["request"] if request else []), "response"]
    assert_event(doc, "api_audit", keys)
    assert (doc["server"], doc["client"], doc["subject"], doc.get("request", "")) == (server, {}, subject, request)
    response: dict[str, Any] = json.loads(doc["response"])
    return response


async def test_meta_leader_stepdown_is_audited_and_the_new_leader_announced(cluster: Cluster, system: Heard) -> None:
    old = await eventually(
        lambda: asyncio.to_thread(meta_leader_of_three, cluster), what="a meta leader of three", timeout=ELECTION
    )
    answer = await ask(system.nc, "$JS.API.META.LEADER.STEPDOWN")
    assert answer == {"type": "io.nats.jetstream.api.v1.meta_leader_stepdown_response", "success": True}
    audit = await system.audit_of("$JS.API.META.LEADER.STEPDOWN")
    assert assert_system_audit(audit, "$JS.API.META.LEADER.STEPDOWN", old) == answer

    elected = await system.first(ADVISORY + "DOMAIN.LEADER_ELECTED", timeout=ELECTION)
    assert_event(elected, "domain_leader_elected", ["leader", "replicas", "cluster"])
    assert elected["leader"] in {peer_of(node) for node in NODES} - {peer_of(old)}
    assert elected["cluster"] == "C"
    replicas = sorted(elected["replicas"], key=lambda peer: peer["name"])
    assert [peer["name"] for peer in replicas] == list(NODES)
    for peer in replicas:
        assert list(peer) in PEER_KEYS, peer
        assert peer["peer"] == peer_of(peer["name"]) and isinstance(peer["active"], int)


async def test_a_removed_server_announces_it(cluster: Cluster, system: Heard) -> None:
    leader = await eventually(lambda: asyncio.to_thread(meta_leader, cluster), what="a meta leader", timeout=ELECTION)
    removed = next(node for node in reversed(NODES) if node != leader)
    other = await nats.connect(cluster.url(NODES.index(removed)), allow_reconnect=False)
    removed_id = other._server_info["server_id"]
    await other.close()
    request = json.dumps({"peer": removed})
    answer = await ask(system.nc, "$JS.API.SERVER.REMOVE", request.encode())
    assert answer == {"type": "io.nats.jetstream.api.v1.meta_server_remove_response", "success": True}
    audit = await system.audit_of("$JS.API.SERVER.REMOVE")
    assert assert_system_audit(audit, "$JS.API.SERVER.REMOVE", leader, request) == answer

    announced = await system.first(ADVISORY + "SERVER.REMOVED")
    assert_event(announced, "server_removed", ["server", "server_id", "cluster"])
    assert (announced["server"], announced["server_id"], announced["cluster"]) == (removed, removed_id, "C")


DISABLED_JSZ = [
    "memory",
    "storage",
    "reserved_memory",
    "reserved_storage",
    "accounts",
    "ha_assets",
    "api",
    "server_id",
    "now",
    "disabled",
    "config",
    "streams",
    "consumers",
    "messages",
    "bytes",
    "total",
]


async def test_a_removed_server_has_its_jetstream_disabled(
    cluster: Cluster, system: Heard, js_cluster_kind: str
) -> None:
    """Its ``/jsz`` says ``disabled``, the others' meta group leaves it out, its clients are answered by them."""
    leader = await eventually(lambda: asyncio.to_thread(meta_leader, cluster), what="a meta leader", timeout=ELECTION)
    removed = next(node for node in reversed(NODES) if node != leader)
    index = NODES.index(removed)
    answer = await ask(system.nc, "$JS.API.SERVER.REMOVE", json.dumps({"peer": removed}).encode())
    assert answer.get("success") is True, answer

    def disabled() -> dict[str, Any]:
        return jsz(cluster, index)

    found = await eventually(lambda: asyncio.to_thread(disabled), lambda doc: doc.get("disabled"), what="disabled")
    assert list(found) == DISABLED_JSZ, found
    assert (found["accounts"], found["api"], found["config"]) == (
        0,
        {"level": 0, "total": 0, "errors": 0},
        {"max_memory": 0, "max_storage": 0},
    )

    def meta_group() -> dict[str, Any]:
        return dict(jsz(cluster, NODES.index(leader)).get("meta_cluster") or {})

    group = await eventually(
        lambda: asyncio.to_thread(meta_group), lambda doc: doc.get("cluster_size") == 2, what="a meta group of two"
    )
    assert group["quorum_needed"] == 2
    assert [peer["name"] for peer in group["replicas"]] == [n for n in NODES if n not in (leader, removed)]
    assert group["leader"] != removed

    # Its INFO no longer offers JetStream (nats-server changes it a moment after /jsz says disabled).
    await eventually(
        lambda: first_info(cluster.url(index)), lambda info: "jetstream" not in info, what="an INFO without jetstream"
    )
    client = await nats.connect(cluster.url(index), allow_reconnect=False)
    try:
        assert "jetstream" not in client._server_info
        info = await ask(client, "$JS.API.INFO")
        assert info["type"] == "io.nats.jetstream.api.v1.account_info_response" and "error" not in info, info
        config = json.dumps({"name": "RM", "subjects": ["rm"]}).encode()
        created = await ask(client, "$JS.API.STREAM.CREATE.RM", config)
        assert created["cluster"]["leader"] != removed, created
    finally:
        await client.close()


async def test_a_node_shutting_down_is_heard_on_the_others(cluster: Cluster, system: Heard) -> None:
    await system.nc.subscribe("$SYS.SERVER.*.SHUTDOWN", cb=system.add)
    await system.nc.flush()
    other = await nats.connect(cluster.url(1), allow_reconnect=False)
    server_id = other._server_info["server_id"]
    await other.close()
    await asyncio.to_thread(cluster.shutdown, 1)
    found = await eventually(
        lambda: asyncio.sleep(0, [json.loads(m.data) for m in system.msgs if m.subject.endswith(".SHUTDOWN")]),
        what="the SHUTDOWN event of n2",
    )
    keys = ["name", "host", "id", "cluster", "ver", "feature_flags", "jetstream", "flags", "seq", "time"]
    assert list(found[0]) == keys, found[0]
    assert (found[0]["name"], found[0]["id"], found[0]["cluster"]) == ("n2", server_id, "C")
    assert [m.subject for m in system.msgs if m.subject.endswith(".SHUTDOWN")] == [f"$SYS.SERVER.{server_id}.SHUTDOWN"]


async def test_the_meta_leader_crashing_elects_an_announced_one(cluster: Cluster, system: Heard) -> None:
    await eventually(
        lambda: asyncio.to_thread(meta_leader_of_three, cluster), what="a meta leader of three", timeout=ELECTION
    )
    preferred = json.dumps({"placement": {"preferred": "n2"}}).encode()
    if await asyncio.to_thread(meta_leader, cluster) != "n2":
        await ask(system.nc, "$JS.API.META.LEADER.STEPDOWN", preferred)
    await eventually(
        lambda: asyncio.to_thread(meta_leader, cluster),
        lambda leader: leader == "n2",
        what="n2 leading",
        timeout=ELECTION,
    )
    await system.nc.subscribe("$SYS.SERVER.*.SHUTDOWN", cb=system.add)
    await system.nc.flush()
    system.msgs.clear()
    await asyncio.to_thread(cluster.kill, 1)

    async def successors() -> list[dict[str, Any]]:  # n2's own announcement may still be on its way to n1
        return [doc for doc in system.on(ADVISORY + "DOMAIN.LEADER_ELECTED") if doc["leader"] != peer_of("n2")]

    elected = (await eventually(successors, what="n2's successor announced", timeout=ELECTION))[0]
    assert not [m for m in system.msgs if m.subject.endswith(".SHUTDOWN")]  # a crash says nothing
    assert_event(elected, "domain_leader_elected", ["leader", "replicas", "cluster"])
    assert elected["leader"] in (peer_of("n1"), peer_of("n3"))
    by_name = {peer["name"]: peer for peer in elected["replicas"]}
    assert sorted(by_name) == list(NODES)
    assert by_name["n2"]["current"] is False
    for peer in by_name.values():
        assert list(peer) in PEER_KEYS, peer


async def test_an_account_purge_deletes_the_accounts_streams(
    cluster: Cluster, system: Heard, js_cluster_kind: str
) -> None:
    """The meta leader answers ``initiated`` and the account's streams (and consumers) go; a bad name is 10051."""
    app = await nats.connect(cluster.url(1), allow_reconnect=False)
    try:
        await create(app, "P1", num_replicas=3)
        await create(app, "P2")
        await api(app, "$JS.API.CONSUMER.CREATE.P1.C", {"stream_name": "P1", "config": {"durable_name": "C"}})
        purge = "$JS.API.ACCOUNT.PURGE.$G"
        assert await ask(system.nc, purge) == {
            "type": "io.nats.jetstream.api.v1.account_purge_response",
            "initiated": True,
        }

        async def names() -> list[str]:
            return list((await api(app, "$JS.API.STREAM.NAMES", {})).get("streams") or [])

        assert await eventually(names, lambda found: found == [], what="the purged account's streams") == []
        refused = await ask(system.nc, "$JS.API.ACCOUNT.PURGE.a/b")
        assert refused == {
            "type": "io.nats.jetstream.api.v1.account_purge_response",
            "error": {"code": 500, "err_code": 10051, "description": "account name can not contain path separators"},
        }
    finally:
        await app.close()


async def first_info(url: str) -> dict[str, Any]:
    """The INFO a new connection to ``url`` is greeted with."""
    host, port = url.removeprefix("nats://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        line = await asyncio.wait_for(reader.readline(), 10)
    finally:
        writer.close()
        await writer.wait_closed()
    return dict(json.loads(line.removeprefix(b"INFO ")))
