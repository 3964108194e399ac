"""JetStream advisories in a three-node cluster (``n1``..``n3`` of cluster ``C``), on both targets.

Facts pinned (nats-server 2.15.1), as a client of ``n1`` sees them:

- a replicated (R3) stream's or consumer's election is announced on
  ``$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.<stream>`` /
  ``CONSUMER.LEADER_ELECTED.<stream>.<consumer>``
  (``stream_leader_elected`` / ``consumer_leader_elected``: type, id,
  timestamp, stream[, consumer], leader, and every server of the group as
  ``{name, current[, offline], active[, lag], peer}``), when it is created
  and again after a leader step-down; a single-replica one has no election;
- ``STREAM.CREATED`` / ``UPDATED`` / ``DELETED`` and ``CONSUMER.CREATED``
  as on a single server;
- the API audit names the server that answered (a stream's leader for its
  info), the requester's server and cluster in its client info, and leaves the request out of what the cluster carries out through
  its meta layer (stream create, update and delete, consumer create), not
  out of a stream info.

Which server sends what, and so the order in which advisories from
different servers arrive, is nats-server's to choose: only what one server
sends in order is compared in order.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest

from tests.harness.cluster import interest_routed
from tests.harness.heard import ADVISORY, Heard, assert_event
from tests.harness.js import api
from tests.harness.js_cluster import PEER_KEYS, peer_of, unique
from tests.harness.wait import WAIT, eventually

pytestmark = pytest.mark.cluster

Cluster = Any
NODES = ("n1", "n2", "n3")
ELECTION = 30.0  # seconds a new leader may take on a busy machine


@pytest.fixture
async def watch(js_cluster: Cluster) -> AsyncIterator[Heard]:
    nc = await nats.connect(js_cluster.url(0), allow_reconnect=False)
    others = [await nats.connect(js_cluster.url(i), allow_reconnect=False) for i in (1, 2)]
    try:
        watching = Heard(nc)
        await nc.subscribe(ADVISORY + ">", cb=watching.add)
        for other in others:
            await interest_routed(other, nc)
        yield watching
    finally:
        for other in others:
            await other.close()
        await nc.close()


def assert_election(doc: dict[str, Any], kind: str, stream: str, consumer: str = "") -> str:
    """A leader-elected advisory: its fields in order, the leader among the nodes, every node a replica."""
    names = ["stream", "consumer"] if consumer else ["stream"]
    assert_event(doc, kind, [*names, "leader", "replicas"])
    assert doc["stream"] == stream and doc.get("consumer", "") == consumer
    assert doc["leader"] in NODES
    replicas = sorted(doc["replicas"], key=lambda peer: peer["name"])
    assert [peer["name"] for peer in replicas] == list(NODES)
    for peer in replicas:
        assert list(peer) in PEER_KEYS, peer
        assert peer["peer"] == peer_of(peer["name"]) and isinstance(peer["current"], bool)
    return str(doc["leader"])


def assert_audit(kind: str, doc: dict[str, Any], subject: str, with_request: bool) -> None:
    """An API audit; the requester (a client of n1) named in full by whichever server answered, as n1 carries its
    ``ClientInfo`` with the request."""
    keys = ["server", "client", "subject", *(["request"] if with_request else []), "response"]
    assert_event(doc, "api_audit", keys)
    assert doc["subject"] == subject and doc["server"] in NODES
    client = doc["client"]
    assert list(client) == [
        "start",
        "host",
        "id",
        "acc",
        "lang",
        "ver",
        "rtt",
        "server",
        "cluster",
        "kind",
        "client_type",
    ], client
    assert (client["acc"], client["server"], client["cluster"], client["kind"]) == ("$G", "n1", "C", "Client")


async def delete_advisories(cluster: Cluster, watch: Heard, name: str) -> list[dict[str, Any]]:
    """A deleted stream's ``STREAM.DELETED`` advisory (asked after the delete's audit).

    nats-server 2.15.1 sends it through the deleted stream's own send queue,
    which the delete stops, now and then before the advisory has gone: on
    nats-server it may be missing (and may come after the audit); fakejs
    always sends it.
    """
    subject = f"{ADVISORY}STREAM.DELETED.{name}"
    if cluster.kind == "fake":
        await watch.first(subject)
    return watch.on(subject)


async def test_replicated_stream_and_consumer_elections(js_cluster: Cluster, watch: Heard) -> None:
    name = unique("A")
    nc = watch.nc
    reply = await api(nc, f"$JS.API.STREAM.CREATE.{name}", {"name": name, "subjects": [f"{name}.>"], "num_replicas": 3})
    elected = await watch.first(f"{ADVISORY}STREAM.LEADER_ELECTED.{name}")
    assert assert_election(elected, "stream_leader_elected", name) == reply["cluster"]["leader"]
    created = await watch.first(f"{ADVISORY}STREAM.CREATED.{name}")
    assert_event(created, "stream_action", ["stream", "action"])
    assert (created["stream"], created["action"]) == (name, "create")
    assert_audit(
        js_cluster.kind, await watch.audit_of(f"$JS.API.STREAM.CREATE.{name}"), f"$JS.API.STREAM.CREATE.{name}", False
    )

    await api(nc, f"$JS.API.STREAM.INFO.{name}", {})
    info_audit = await watch.audit_of(f"$JS.API.STREAM.INFO.{name}")
    assert_audit(js_cluster.kind, info_audit, f"$JS.API.STREAM.INFO.{name}", True)
    assert info_audit["server"] == reply["cluster"]["leader"]  # the stream's leader answers

    await api(nc, f"$JS.API.CONSUMER.CREATE.{name}.D", {"stream_name": name, "config": {"durable_name": "D"}})
    consumer_elected = await watch.first(f"{ADVISORY}CONSUMER.LEADER_ELECTED.{name}.D")
    assert_election(consumer_elected, "consumer_leader_elected", name, "D")
    consumer_created = await watch.first(f"{ADVISORY}CONSUMER.CREATED.{name}.D")
    assert (consumer_created["stream"], consumer_created["consumer"]) == (name, "D")

    leader = elected["leader"]
    assert json.loads((await nc.request(f"$JS.API.STREAM.LEADER.STEPDOWN.{name}", b"", timeout=WAIT)).data)["success"]
    subject = f"{ADVISORY}STREAM.LEADER_ELECTED.{name}"
    moved = await eventually(
        lambda: asyncio.sleep(0, [doc for doc in watch.on(subject) if doc["leader"] != leader]),
        what="the election after the step-down",
        timeout=ELECTION,
    )
    assert_election(moved[0], "stream_leader_elected", name)

    await nc.request(f"$JS.API.STREAM.DELETE.{name}", b"", timeout=WAIT)
    assert_audit(
        js_cluster.kind, await watch.audit_of(f"$JS.API.STREAM.DELETE.{name}"), f"$JS.API.STREAM.DELETE.{name}", False
    )
    for deleted in await delete_advisories(js_cluster, watch, name):
        assert (deleted["stream"], deleted["action"]) == (name, "delete")


async def test_a_single_replica_stream_has_no_election(js_cluster: Cluster, watch: Heard) -> None:
    name = unique("B")
    nc = watch.nc
    await api(nc, f"$JS.API.STREAM.CREATE.{name}", {"name": name, "subjects": [f"{name}.>"], "num_replicas": 1})
    await watch.first(f"{ADVISORY}STREAM.CREATED.{name}")
    await api(nc, f"$JS.API.STREAM.UPDATE.{name}", {"name": name, "subjects": [f"{name}.>", f"x{name}.>"]})
    updated = await watch.first(f"{ADVISORY}STREAM.UPDATED.{name}")
    assert (updated["stream"], updated["action"]) == (name, "modify")
    assert_audit(
        js_cluster.kind, await watch.audit_of(f"$JS.API.STREAM.UPDATE.{name}"), f"$JS.API.STREAM.UPDATE.{name}", False
    )
    await nc.request(f"$JS.API.STREAM.LEADER.STEPDOWN.{name}", b"", timeout=WAIT)
    await nc.request(f"$JS.API.STREAM.DELETE.{name}", b"", timeout=WAIT)
    await watch.audit_of(f"$JS.API.STREAM.DELETE.{name}")
    await delete_advisories(js_cluster, watch, name)
    assert not watch.on(f"{ADVISORY}STREAM.LEADER_ELECTED.{name}")
