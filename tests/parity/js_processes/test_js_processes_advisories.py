"""Advisories of a JetStream across three server processes, on both targets.

Three nodes ``n1``..``n3`` started from flags (see
:mod:`tests.parity.js_processes.test_js_processes`), the same nats-py client code against
nats-server and fakejs processes, a listener on ``$JS.EVENT.ADVISORY.>``
connected to ``n1``.  Facts pinned (nats-server 2.15.1):

- a stream's create, update and delete and a consumer's create and delete
  are each announced once (``STREAM.CREATED|UPDATED|DELETED.<stream>``,
  ``CONSUMER.CREATED|DELETED.<stream>.<consumer>``), not once per replica;
- a replicated stream's or consumer's new leader announces itself
  (``STREAM.LEADER_ELECTED.<stream>``,
  ``CONSUMER.LEADER_ELECTED.<stream>.<consumer>``: the leader's name and
  every server of the group as ``PeerInfo``), on its creation and after a
  step-down; an R1 stream announces no leader;
- a replica that can no longer reach a quorum of its group (two of the three
  servers killed) says so, once its group has run for five seconds:
  ``STREAM.QUORUM_LOST.<stream>`` and
  ``CONSUMER.QUORUM_LOST.<stream>.<consumer>``, with every server of the
  group as ``PeerInfo``;
- each answered request is audited once on ``$JS.EVENT.ADVISORY.API`` by the
  server that answered it: a stream's or consumer's leader for its info and
  its create (without the request, carried out as a proposal), the meta
  leader for the names and for a stream that does not exist; the client (of
  ``n1``) is named in full by every server, as ``n1`` sends its ``ClientInfo``
  with the request (``Nats-Request-Info``), which no subscriber of the
  account on another server sees.

Which server answers and when are nats-server's to choose, so ids, times and
the replicas' ``current``/``lag``/``active`` are not compared, nor the order
between servers.  A barrier (a message published through every node after
the last request) stands for "nothing more is coming" before counting.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from fakejs.targets.cluster import ProcessCluster
from tests.harness.heard import ADVISORY, AUDIT, Heard, assert_event
from tests.harness.js_cluster import PEER_KEYS, peer_of
from tests.harness.js_processes import create_r3, process_cluster, stream_leader
from tests.harness.wait import eventually

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

NODES = ("n1", "n2", "n3")
BARRIER = "barrier"
ELECTION = 30.0  # seconds an election may take on a busy machine


@pytest.fixture
def cluster(target_kind: str) -> Iterator[ProcessCluster]:
    with process_cluster(target_kind, monitor=True).start() as started:
        yield started


@pytest.fixture
async def heard(clients: list[Client]) -> Heard:
    listener = Heard(clients[0])
    await clients[0].subscribe(ADVISORY + ">", cb=listener.add)
    await clients[0].subscribe(BARRIER, cb=listener.add)
    await clients[0].flush()
    return listener


async def ask(client: Client, subject: str, body: object = None) -> tuple[bytes, dict[str, Any]]:
    """The reply's bytes and document (asked again while the cluster elects)."""
    payload = b"" if body is None else json.dumps(body).encode()

    async def once() -> bytes:
        try:
            return bytes((await client.request(subject, payload, timeout=3.0)).data)
        except nats.errors.TimeoutError:
            return b""

    data = await eventually(once, what=f"an answer to {subject}", timeout=ELECTION)
    return data, dict(json.loads(data))


async def barrier(clients: list[Client], heard: Heard) -> None:
    """A message through every node, heard by the listener: what the nodes sent before has arrived."""
    for index, client in enumerate(clients):
        await client.publish(BARRIER, str(index).encode())
        await client.flush()
    await eventually(
        lambda: asyncio.sleep(0, [m for m in heard.msgs if m.subject == BARRIER]),
        lambda found: len(found) == len(clients),
        what="the barrier through every node",
    )


def advisories_on(heard: Heard, prefix: str) -> list[str]:
    return [m.subject for m in heard.msgs if m.subject.startswith(prefix)]


def assert_peers(replicas: list[dict[str, Any]]) -> None:
    assert sorted(peer["name"] for peer in replicas) == list(NODES), replicas
    for peer in replicas:
        assert list(peer) in PEER_KEYS, peer
        assert peer["peer"] == peer_of(peer["name"]) and isinstance(peer["current"], bool)


def meta_leader(cluster: ProcessCluster) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{cluster.nodes[0].http_port}/jsz", timeout=5) as reply:
        return str(json.loads(reply.read()).get("meta_cluster", {}).get("leader", ""))


async def test_each_action_is_announced_once(clients: list[Client], heard: Heard) -> None:
    client = clients[1]  # through another node than the listener's
    await create_r3(client, "ACT")
    await ask(client, "$JS.API.STREAM.UPDATE.ACT", {"name": "ACT", "subjects": ["ACT.>", "more"], "num_replicas": 3})
    durable = {"stream_name": "ACT", "config": {"durable_name": "C", "num_replicas": 3}}
    created = (await ask(client, "$JS.API.CONSUMER.CREATE.ACT.C", durable))[1]
    assert created.get("name") == "C", created
    assert (await ask(client, "$JS.API.CONSUMER.DELETE.ACT.C"))[1].get("success") is True
    assert (await ask(client, "$JS.API.STREAM.DELETE.ACT"))[1].get("success") is True
    await heard.first(ADVISORY + "STREAM.DELETED.ACT")
    await barrier(clients, heard)

    actions = [
        subject
        for subject in advisories_on(heard, ADVISORY)
        if subject != AUDIT and ".LEADER_ELECTED." not in subject and ".QUORUM_LOST." not in subject
    ]
    assert sorted(actions) == sorted(
        [
            ADVISORY + "STREAM.CREATED.ACT",
            ADVISORY + "STREAM.UPDATED.ACT",
            ADVISORY + "CONSUMER.CREATED.ACT.C",
            ADVISORY + "CONSUMER.DELETED.ACT.C",
            ADVISORY + "STREAM.DELETED.ACT",
        ]
    ), actions
    for verb, action in (("CREATED", "create"), ("UPDATED", "modify"), ("DELETED", "delete")):
        doc = heard.on(f"{ADVISORY}STREAM.{verb}.ACT")[0]
        assert_event(doc, "stream_action", ["stream", "action"])
        assert (doc["stream"], doc["action"]) == ("ACT", action)
    for verb, action in (("CREATED", "create"), ("DELETED", "delete")):
        doc = heard.on(f"{ADVISORY}CONSUMER.{verb}.ACT.C")[0]
        assert_event(doc, "consumer_action", ["stream", "consumer", "action"])
        assert (doc["stream"], doc["consumer"], doc["action"]) == ("ACT", "C", action)


async def test_a_new_leader_announces_itself_after_a_step_down(clients: list[Client], heard: Heard) -> None:
    client = clients[0]
    await create_r3(client, "LEAD")
    durable = {"stream_name": "LEAD", "config": {"durable_name": "C", "num_replicas": 3}}
    consumer_leader = (await ask(client, "$JS.API.CONSUMER.CREATE.LEAD.C", durable))[1]["cluster"]["leader"]
    await ask(client, "$JS.API.STREAM.CREATE.ONE", {"name": "ONE", "subjects": ["one"], "num_replicas": 1})
    elected = await heard.first(ADVISORY + "STREAM.LEADER_ELECTED.LEAD", timeout=ELECTION)
    assert_event(elected, "stream_leader_elected", ["stream", "leader", "replicas"])
    old = await stream_leader(client, "LEAD")
    assert elected["stream"] == "LEAD" and elected["leader"] == old
    assert_peers(elected["replicas"])
    consumer_elected = await heard.first(ADVISORY + "CONSUMER.LEADER_ELECTED.LEAD.C", timeout=ELECTION)
    assert consumer_elected["leader"] == consumer_leader

    heard.msgs.clear()
    assert (await ask(client, "$JS.API.STREAM.LEADER.STEPDOWN.LEAD"))[1].get("success") is True
    elected = await heard.first(ADVISORY + "STREAM.LEADER_ELECTED.LEAD", timeout=ELECTION)
    assert_event(elected, "stream_leader_elected", ["stream", "leader", "replicas"])
    assert elected["leader"] in set(NODES) - {old}
    assert elected["leader"] == await stream_leader(client, "LEAD", other_than=old)
    assert_peers(elected["replicas"])

    assert (await ask(client, "$JS.API.CONSUMER.LEADER.STEPDOWN.LEAD.C"))[1].get("success") is True
    elected = await heard.first(ADVISORY + "CONSUMER.LEADER_ELECTED.LEAD.C", timeout=ELECTION)
    assert_event(elected, "consumer_leader_elected", ["stream", "consumer", "leader", "replicas"])
    assert (elected["stream"], elected["consumer"]) == ("LEAD", "C")
    assert elected["leader"] in set(NODES) - {consumer_leader}
    assert_peers(elected["replicas"])
    await barrier(clients, heard)
    assert advisories_on(heard, ADVISORY + "STREAM.LEADER_ELECTED.ONE") == []
    assert len(advisories_on(heard, ADVISORY + "STREAM.LEADER_ELECTED.LEAD")) == 1


async def test_a_replica_without_quorum_says_so(cluster: ProcessCluster, clients: list[Client], heard: Heard) -> None:
    client = clients[0]
    await create_r3(client, "LOST")
    durable = {"stream_name": "LOST", "config": {"durable_name": "C", "num_replicas": 3}}
    assert (await ask(client, "$JS.API.CONSUMER.CREATE.LOST.C", durable))[1]["name"] == "C"

    async def age() -> float:
        info = (await ask(client, "$JS.API.STREAM.INFO.LOST"))[1]
        return seconds(info["ts"]) - seconds(info["created"])

    await eventually(age, lambda seconds_old: seconds_old > 6, what="a stream group older than five seconds")
    cluster.kill(1)
    cluster.kill(2)
    lost = await heard.first(ADVISORY + "STREAM.QUORUM_LOST.LOST", timeout=60)
    assert_event(lost, "stream_quorum_lost", ["stream", "replicas"])
    assert lost["stream"] == "LOST"
    assert_peers(lost["replicas"])
    lost = await heard.first(ADVISORY + "CONSUMER.QUORUM_LOST.LOST.C", timeout=60)
    assert_event(lost, "consumer_quorum_lost", ["stream", "consumer", "replicas"])
    assert (lost["stream"], lost["consumer"]) == ("LOST", "C")
    assert_peers(lost["replicas"])


def seconds(rfc3339: str) -> float:
    """A timestamp's seconds (to the second)."""
    return datetime.fromisoformat(rfc3339[:19]).timestamp()


async def test_the_answering_server_audits_each_request(
    cluster: ProcessCluster, clients: list[Client], heard: Heard
) -> None:
    client = clients[0]
    create = {"name": "AUD", "subjects": ["aud"], "num_replicas": 3}
    created_bytes, created = await ask(client, "$JS.API.STREAM.CREATE.AUD", create)
    audit = await heard.audit_of("$JS.API.STREAM.CREATE.AUD")
    assert_audit(audit, "$JS.API.STREAM.CREATE.AUD", created["cluster"]["leader"])
    assert "request" not in audit  # carried out as a proposal
    assert json.loads(audit["response"]) == json.loads(created_bytes)

    leader = await stream_leader(client, "AUD")
    await barrier(clients, heard)  # the audits of stream_leader's own STREAM.INFO requests arrived before the clear
    heard.msgs.clear()
    asked = {"subjects_filter": ">"}
    info_bytes, _ = await ask(client, "$JS.API.STREAM.INFO.AUD", asked)
    audit = await heard.audit_of("$JS.API.STREAM.INFO.AUD")
    assert_audit(audit, "$JS.API.STREAM.INFO.AUD", leader, request=json.dumps(asked))
    assert audit["response"].encode() == info_bytes

    durable = {"stream_name": "AUD", "config": {"durable_name": "C", "num_replicas": 3}}
    consumer_bytes, consumer = await ask(client, "$JS.API.CONSUMER.CREATE.AUD.C", durable)
    audit = await heard.audit_of("$JS.API.CONSUMER.CREATE.AUD.C")
    assert_audit(audit, "$JS.API.CONSUMER.CREATE.AUD.C", consumer["cluster"]["leader"])
    assert json.loads(audit["response"]) == json.loads(consumer_bytes)

    meta = await eventually(lambda: asyncio.to_thread(meta_leader, cluster), what="a meta leader", timeout=ELECTION)
    names_bytes, _ = await ask(client, "$JS.API.STREAM.NAMES")
    audit = await heard.audit_of("$JS.API.STREAM.NAMES")
    assert_audit(audit, "$JS.API.STREAM.NAMES", meta)
    assert audit["response"].encode() == names_bytes
    missing_bytes, missing = await ask(client, "$JS.API.STREAM.INFO.NOPE")
    assert missing["error"]["err_code"] == 10059
    audit = await heard.audit_of("$JS.API.STREAM.INFO.NOPE")
    assert_audit(audit, "$JS.API.STREAM.INFO.NOPE", meta)
    assert audit["response"].encode() == missing_bytes

    await barrier(clients, heard)
    subjects = [doc["subject"] for doc in heard.on(AUDIT)]
    assert sorted(set(subjects)) == sorted(subjects), subjects  # one audit per request


def assert_audit(audit: dict[str, Any], subject: str, server: str, request: str = "") -> None:
    keys = ["server", "client", "subject", *(["request"] if request else []), "response"]
    assert_event(audit, "api_audit", keys)
    assert (audit["server"], audit["subject"], audit.get("request", "")) == (server, subject, request), audit
    client = audit["client"]
    assert list(client) == CLIENT_KEYS, client
    assert (client["acc"], client["server"], client["kind"]) == ("$G", "n1", "Client") and client["cluster"], client


CLIENT_KEYS = ["start", "host", "id", "acc", "lang", "ver", "rtt", "server", "cluster", "kind", "client_type"]
