"""JetStream in a three-node cluster: replicated streams and consumers, leaders, placement, failures.

Nodes ``n1``..``n3`` of cluster ``C`` (tagged ``az:1``..``az:3``), raw API
requests through different nodes, on both targets.  Facts pinned
(nats-server 2.15.1):

- a stream's and a consumer's ``cluster`` is ``{name, raft_group, leader,
  leader_since, system_account: true, traffic_account: "$SYS", replicas}``
  for R3 (``raft_group`` ``S-R3F-`` / ``C-R3F-`` and 8 letters or digits),
  ``{name, leader}`` for R1; the replicas are the two other nodes, by name,
  each ``{name, current, active[, lag], peer}`` (``lag`` only when not 0,
  ``active`` nanoseconds since last heard, 0 for a node never heard) with
  ``peer`` nats-server's hash of the node's name (sha256, the first 8 bytes
  each taken modulo 62 into ``0-9A-Za-z``); the leader is not listed;
- a consumer's ``num_replicas`` 0 stays 0 in its config and it is
  replicated like its stream (R3); ``num_replicas`` 0 of a stream becomes 1;
- a stream's ``consumer_count`` (STREAM.INFO, STREAM.LIST) counts its
  consumers on every server, R1 consumers on servers other than its leader too;
- stream and consumer leader stepdowns answer ``{"success":true}`` (R1
  too), then another node leads; unknown stream 10059, unknown consumer
  10014; ``{"placement":{"preferred":"nX"}}`` moves the stream leader to
  nX, naming the leader itself or an unknown node is a 10005 error;
- a pull request waiting on a consumer whose leader steps down gets
  ``NATS/1.0 409 Leadership Change`` with nothing else and is over; a
  stream leader stepdown leaves it waiting;
- placement: more replicas than nodes, an unknown cluster, tags that no
  (or too few) nodes carry are 10005 errors; above 5 replicas a 500
  10052 error; negative replicas 10133; tags place the stream on the tagged node;
- a message published through any node is stored once, acknowledged with
  the stream's name, and read through any other node;
- when the leader node of an R3 stream dies, one of the two others leads
  within seconds, nothing is lost, publishes go on, and the dead node is
  listed with ``current: false``, ``active: 0`` and a ``lag``; once back it
  is current again;
- when the node of an R1 stream dies (a crash), publishes get no
  responders, STREAM.INFO, CONSUMER.INFO and pulls get no reply (the
  server is taken for offline only minutes later), STREAM.NAMES still lists
  it; once back it answers again;
- when that node is shut down in order instead, it says so: STREAM.INFO
  gets ``500 10118 stream is offline`` (with ``total``, ``offset``,
  ``limit`` 0 after the error), CONSUMER.INFO ``500 10119 consumer is
  offline``, and an R3 stream lists it with ``offline: true`` (after
  ``current``);
- every node's ``/jsz`` ``meta_cluster`` names the cluster, the one meta
  leader and its ``peer`` id, the two nodes other than itself as replicas
  (the leader among them; a follower lists the other follower as
  ``current: false``, ``active: 0``), ``cluster_size`` 3, ``quorum_needed`` 2;
- META.LEADER.STEPDOWN from a user of an ordinary account gets no reply;
- an origin's STREAM.INFO lists itself and its mirrors with the cluster's
  name as ``alternates`` (after ``cluster``, before ``ts``; none without a
  mirror, nor in the mirror's info, a create reply or STREAM.LIST).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import urllib.request
from collections.abc import Callable

import pytest
from nats.aio.client import Client
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError

from tests.harness.cluster import interest_routed
from tests.harness.js import api, request
from tests.harness.js_cluster import ELECTION, NO_PEERS, Cluster, create, on_node, peer_of, unique
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON
from tests.harness.wait import WAIT, eventually

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module", params=["fake", "real"])
def js_cluster_kind(request: pytest.FixtureRequest) -> str:
    """The kinds of clusters here: fakejs's (its JetStream replicated across the nodes), nats-server."""
    if request.param == "real" and REAL_BINARY is None:
        pytest.skip(REAL_MISSING_REASON)
    return str(request.param)


MakeCluster = Callable[[], Cluster]

NODES = ("n1", "n2", "n3")
CLUSTER = "C"
REPLICA_KEYS = (["name", "current", "active", "peer"], ["name", "current", "active", "lag", "peer"])


async def stream_info(nc: Client, name: str) -> dict:
    """STREAM.INFO, asked again by the polling callers when a reply is lost (no leader yet)."""
    return await api(nc, f"$JS.API.STREAM.INFO.{name}", timeout=2.0)


async def leader_of(nc: Client, name: str) -> str:
    """The stream's leader, ``""`` while there is none (or while the request gets no reply)."""
    with contextlib.suppress(NatsTimeoutError):
        return str((await stream_info(nc, name))["cluster"].get("leader", ""))
    return ""


async def all_current(nc: Client, name: str, timeout: float = WAIT) -> dict:
    """The stream's info once a leader is known and both replicas are current."""

    async def fetch() -> dict:
        with contextlib.suppress(NatsTimeoutError):
            return await stream_info(nc, name)
        return {}

    def ready(info: dict) -> bool:
        replicas = info.get("cluster", {}).get("replicas", [])
        return len(replicas) == 2 and all(replica["current"] for replica in replicas)

    return await eventually(fetch, ready, what=f"{name}'s replicas current", timeout=timeout)


async def publish_acked(nc: Client, subject: str, payload: bytes = b"x", timeout: float = WAIT) -> bytes:
    """Publish and return the PubAck bytes, retrying while the stream's interest crosses the routes."""

    async def attempt() -> bytes:
        with contextlib.suppress(NoRespondersError):
            return (await request(nc, subject, payload)).data
        return b""

    return await eventually(attempt, what=f"a PubAck for {subject}", timeout=timeout)


def assert_replicated(cluster: dict, prefix: str) -> None:
    """An R3 ``cluster`` object: its keys in order, the raft group's pattern, the two others as replicas."""
    assert list(cluster) == [
        "name",
        "raft_group",
        "leader",
        "leader_since",
        "system_account",
        "traffic_account",
        "replicas",
    ], cluster
    assert cluster["name"] == CLUSTER
    assert re.fullmatch(rf"{prefix}-R3F-[A-Za-z0-9]{{8}}", cluster["raft_group"]), cluster
    assert cluster["leader"] in NODES
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", cluster["leader_since"])
    assert cluster["system_account"] is True
    assert cluster["traffic_account"] == "$SYS"
    others = [node for node in NODES if node != cluster["leader"]]
    assert [replica["name"] for replica in cluster["replicas"]] == others
    for replica in cluster["replicas"]:
        assert list(replica) in REPLICA_KEYS, replica
        assert replica["peer"] == peer_of(replica["name"])
        assert isinstance(replica["current"], bool) and isinstance(replica["active"], int)


# -- what a replicated stream and consumer say -------------------------------------------------------


def test_peer_ids_are_nats_server_hashes() -> None:
    assert [peer_of(node) for node in NODES] == ["fjFyEjc1", "44jzkV9D", "BXScrY9i"]


async def test_r3_stream_create_and_info_cluster(js_cluster: Cluster) -> None:
    name = unique("R")
    async with on_node(js_cluster, 0) as nc:
        reply = await create(nc, name, num_replicas=3)
        assert list(reply) == ["type", "config", "created", "state", "cluster", "ts", "did_create"]
        assert reply["config"]["num_replicas"] == 3
        assert_replicated(reply["cluster"], "S")
        info = await all_current(nc, name)
        assert list(info) == ["type", "total", "offset", "limit", "config", "created", "state", "cluster", "ts"]
        assert_replicated(info["cluster"], "S")
        assert info["cluster"]["raft_group"] == reply["cluster"]["raft_group"]
        assert [list(replica) for replica in info["cluster"]["replicas"]] == [REPLICA_KEYS[0]] * 2


async def test_r1_stream_cluster_is_name_and_leader(js_cluster: Cluster) -> None:
    async with on_node(js_cluster, 1) as nc:
        for replicas in (1, 0):
            name = unique("O")
            reply = await create(nc, name, num_replicas=replicas)
            assert reply["config"]["num_replicas"] == 1
            assert list(reply["cluster"]) == ["name", "leader"]
            assert reply["cluster"]["name"] == CLUSTER and reply["cluster"]["leader"] in NODES
            assert (await stream_info(nc, name))["cluster"] == reply["cluster"]


async def test_consumer_cluster_follows_its_stream(js_cluster: Cluster) -> None:
    name = unique("K")
    async with on_node(js_cluster, 2) as nc:
        await create(nc, name, num_replicas=3)
        subject = f"$JS.API.CONSUMER.CREATE.{name}"
        created = await api(nc, f"{subject}.D", {"stream_name": name, "config": {"durable_name": "D"}})
        assert created["config"]["num_replicas"] == 0
        assert_replicated(created["cluster"], "C")
        info = await api(nc, f"$JS.API.CONSUMER.INFO.{name}.D")
        assert info["cluster"]["raft_group"] == created["cluster"]["raft_group"]
        assert_replicated(info["cluster"], "C")
        single = await api(
            nc, f"{subject}.E", {"stream_name": name, "config": {"durable_name": "E", "num_replicas": 1}}
        )
        assert single["config"]["num_replicas"] == 1
        assert list(single["cluster"]) == ["name", "leader"] and single["cluster"]["leader"] in NODES


async def test_consumer_count_is_the_whole_clusters(js_cluster: Cluster) -> None:
    """R1 consumers of an R3 stream are spread over its servers; the stream's info and STREAM.LIST count them all."""
    name, count = unique("W"), 8
    async with on_node(js_cluster, 0) as nc:
        await create(nc, name, num_replicas=3)
        leaders = set()
        for number in range(count):
            config = {"durable_name": f"c{number}", "num_replicas": 1}
            created = await api(
                nc, f"$JS.API.CONSUMER.CREATE.{name}.c{number}", {"stream_name": name, "config": config}
            )
            leaders.add(created["cluster"]["leader"])
        assert len(leaders) > 1  # the consumers are not all on one server

        # a server counts the assignments it applied: nats-server's stream leader may not have the last one yet
        def counted(info: dict) -> bool:
            return info.get("state", {}).get("consumer_count") == count

        await eventually(lambda: stream_info(nc, name), counted, what=f"{count} consumers counted")
        listed = await api(nc, "$JS.API.STREAM.LIST", {"subject": f"{name}.>"})
        assert [stream["state"]["consumer_count"] for stream in listed["streams"]] == [count]


async def test_an_api_request_reaches_another_servers_subscriber_as_sent(js_cluster: Cluster) -> None:
    """The requester's info an API request carries over the routes to the server that answers is no header a
    subscriber of the account on another server sees: it gets the request as the client sent it."""
    name = unique("H")
    async with on_node(js_cluster, 1) as watcher, on_node(js_cluster, 0) as nc:
        await create(nc, name, num_replicas=3)
        sub = await watcher.subscribe(f"$JS.API.STREAM.INFO.{name}")
        await interest_routed(nc, watcher)
        await nc.request(f"$JS.API.STREAM.INFO.{name}", b"", timeout=WAIT)
        await nc.request(f"$JS.API.STREAM.INFO.{name}", b"", timeout=WAIT, headers={"X-Mine": "1"})
        plain, with_header = await sub.next_msg(timeout=WAIT), await sub.next_msg(timeout=WAIT)
        assert (plain.headers, with_header.headers) == (None, {"X-Mine": "1"})


# -- leader stepdowns --------------------------------------------------------------------------------

STREAM_STEPDOWN = "io.nats.jetstream.api.v1.stream_leader_stepdown_response"
CONSUMER_STEPDOWN = "io.nats.jetstream.api.v1.consumer_leader_stepdown_response"


def success(kind: str) -> bytes:
    return b'{"type":"' + kind.encode() + b'","success":true}'


def failure(kind: str, code: int, err_code: int, description: str) -> bytes:
    error = json.dumps({"code": code, "err_code": err_code, "description": description}, separators=(",", ":"))
    return b'{"type":"' + kind.encode() + b'","error":' + error.encode() + b"}"


async def raw(nc: Client, subject: str, body: bytes = b"") -> bytes:
    return (await request(nc, subject, body)).data


async def test_stepdown_replies(js_cluster: Cluster) -> None:
    name, single = unique("D"), unique("E")
    async with on_node(js_cluster, 0) as nc:
        await create(nc, name, num_replicas=3)
        await create(nc, single, num_replicas=1)
        before = (await all_current(nc, name))["cluster"]["leader"]
        assert await raw(nc, f"$JS.API.STREAM.LEADER.STEPDOWN.{name}") == success(STREAM_STEPDOWN)
        await eventually(
            lambda: leader_of(nc, name),
            lambda leader: leader not in ("", before),
            what="another leader",
            timeout=ELECTION,
        )
        assert await raw(nc, f"$JS.API.STREAM.LEADER.STEPDOWN.{single}") == success(STREAM_STEPDOWN)
        assert await raw(nc, "$JS.API.STREAM.LEADER.STEPDOWN.NOPE") == failure(
            STREAM_STEPDOWN, 404, 10059, "stream not found"
        )
        await api(nc, f"$JS.API.CONSUMER.CREATE.{name}.D", {"stream_name": name, "config": {"durable_name": "D"}})
        assert await raw(nc, f"$JS.API.CONSUMER.LEADER.STEPDOWN.{name}.D") == success(CONSUMER_STEPDOWN)
        assert await raw(nc, f"$JS.API.CONSUMER.LEADER.STEPDOWN.{name}.NOPE") == failure(
            CONSUMER_STEPDOWN, 404, 10014, "consumer not found"
        )
        assert await raw(nc, "$JS.API.CONSUMER.LEADER.STEPDOWN.NOPE.D") == failure(
            CONSUMER_STEPDOWN, 404, 10059, "stream not found"
        )


async def test_stepdown_to_a_preferred_node(js_cluster: Cluster) -> None:
    name = unique("P")
    async with on_node(js_cluster, 1) as nc:
        await create(nc, name, num_replicas=3)
        before = (await all_current(nc, name))["cluster"]["leader"]
        preferred = next(node for node in NODES if node != before)
        body = json.dumps({"placement": {"preferred": preferred}}).encode()
        assert await raw(nc, f"$JS.API.STREAM.LEADER.STEPDOWN.{name}", body) == success(STREAM_STEPDOWN)
        await eventually(
            lambda: leader_of(nc, name), lambda leader: leader == preferred, what=preferred, timeout=ELECTION
        )
        assert await raw(nc, f"$JS.API.STREAM.LEADER.STEPDOWN.{name}", body) == failure(
            STREAM_STEPDOWN, 400, 10005, f'preferred server "{preferred}" is already leader'
        )
        unknown = json.dumps({"placement": {"preferred": "n9"}}).encode()
        assert await raw(nc, f"$JS.API.STREAM.LEADER.STEPDOWN.{name}", unknown) == failure(
            STREAM_STEPDOWN, 400, 10005, 'preferred server "n9" not known'
        )


class RawInbox:
    """A bare protocol connection (headers on, protocol 0) subscribed to one inbox: the exact bytes received."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, url: str) -> RawInbox:
        host, port = url.removeprefix("nats://").rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        await reader.readline()  # INFO
        inbox = cls(reader, writer)
        await inbox.send(b'CONNECT {"verbose":false,"headers":true,"protocol":0}\r\nSUB inbox 1\r\nPING\r\n')
        assert await reader.readline() == b"PONG\r\n"
        return inbox

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def pull(self, subject: str, body: bytes) -> None:
        await self.send(b"PUB %s inbox %d\r\n%s\r\nPING\r\n" % (subject.encode(), len(body), body))
        assert await self.reader.readline() == b"PONG\r\n"

    async def read(self, size: int, timeout: float = WAIT) -> bytes:
        return await asyncio.wait_for(self.reader.readexactly(size), timeout)

    async def silent(self, wait: float = 0.5) -> None:
        with pytest.raises(asyncio.TimeoutError):
            data = await asyncio.wait_for(self.reader.read(1), wait)
            print("unexpected", data)

    def close(self) -> None:
        self.writer.close()


LEADERSHIP_CHANGE = b"HMSG inbox 1 34 34\r\nNATS/1.0 409 Leadership Change\r\n\r\n\r\n"


async def test_waiting_pull_and_leader_stepdowns(js_cluster: Cluster) -> None:
    name = unique("W")
    async with on_node(js_cluster, 0) as nc:
        await create(nc, name, num_replicas=3)
        await api(nc, f"$JS.API.CONSUMER.CREATE.{name}.D", {"stream_name": name, "config": {"durable_name": "D"}})
        inbox = await RawInbox.open(js_cluster.url(1))
        try:
            await inbox.pull(f"$JS.API.CONSUMER.MSG.NEXT.{name}.D", b'{"batch":5,"expires":30000000000}')
            info = f"$JS.API.CONSUMER.INFO.{name}.D"
            await eventually(lambda: api(nc, info), lambda i: i.get("num_waiting") == 1, what="the pull waiting")
            before = await leader_of(nc, name)
            assert await raw(nc, f"$JS.API.STREAM.LEADER.STEPDOWN.{name}") == success(STREAM_STEPDOWN)
            await eventually(lambda: leader_of(nc, name), lambda leader: leader not in ("", before), timeout=ELECTION)
            await inbox.silent()
            assert (await api(nc, info))["num_waiting"] == 1
            assert await raw(nc, f"$JS.API.CONSUMER.LEADER.STEPDOWN.{name}.D") == success(CONSUMER_STEPDOWN)
            assert await inbox.read(len(LEADERSHIP_CHANGE)) == LEADERSHIP_CHANGE
            await publish_acked(nc, f"{name}.x")
            await inbox.silent()  # the request is over: the new message is not sent to it
        finally:
            inbox.close()


# -- placement ---------------------------------------------------------------------------------------

CREATE = "io.nats.jetstream.api.v1.stream_create_response"


@pytest.mark.parametrize(
    ("config", "error"),
    [
        ({"num_replicas": 4}, (400, 10005, NO_PEERS)),
        ({"num_replicas": 5}, (400, 10005, NO_PEERS)),
        ({"num_replicas": 6}, (500, 10052, "maximum replicas is 5")),
        ({"num_replicas": -1}, (400, 10133, "replicas count cannot be negative")),
        ({"placement": {"cluster": "X"}}, (400, 10005, NO_PEERS)),
        ({"placement": {"tags": ["az:9", "az:8"]}}, (400, 10005, f"{NO_PEERS}, tags not matched ['az:9']")),
        ({"num_replicas": 3, "placement": {"tags": ["az:2"]}}, (400, 10005, f"{NO_PEERS}, tags not matched ['az:2']")),
    ],
    ids=["R4", "R5", "R6", "R-1", "cluster-X", "tags-unknown", "tags-too-few"],
)
async def test_placement_errors(js_cluster: Cluster, config: dict, error: tuple[int, int, str]) -> None:
    name = unique("X")
    body = json.dumps({"name": name, "subjects": [f"{name}.>"], **config}).encode()
    async with on_node(js_cluster, 0) as nc:
        assert await raw(nc, f"$JS.API.STREAM.CREATE.{name}", body) == failure(CREATE, *error)
        assert name not in ((await api(nc, "$JS.API.STREAM.NAMES"))["streams"] or [])


async def test_tags_and_cluster_place_the_stream(js_cluster: Cluster) -> None:
    async with on_node(js_cluster, 0) as nc:
        for index, node in enumerate(NODES):
            tagged = await create(nc, unique("T"), placement={"tags": [f"az:{index + 1}"]})
            assert tagged["config"]["placement"] == {"tags": [f"az:{index + 1}"]}
            assert tagged["cluster"] == {"name": CLUSTER, "leader": node}
        named = await create(nc, unique("T"), placement={"cluster": CLUSTER}, num_replicas=3)
        assert named["config"]["placement"] == {"cluster": CLUSTER}
        assert_replicated(named["cluster"], "S")


# -- messages through any node -----------------------------------------------------------------------


async def test_publishes_through_every_node_are_stored_once(js_cluster: Cluster) -> None:
    name = unique("M")
    async with on_node(js_cluster, 0) as first, on_node(js_cluster, 1) as second, on_node(js_cluster, 2) as third:
        await create(first, name, num_replicas=3)
        for seq, nc in enumerate((first, second, third), start=1):
            ack = await publish_acked(nc, f"{name}.n{seq}", f"via n{seq}".encode())
            assert ack == b'{"stream":"%s","seq":%d}' % (name.encode(), seq)
        state = (await stream_info(second, name))["state"]
        assert (state["messages"], state["first_seq"], state["last_seq"]) == (3, 1, 3)
        got = await api(first, f"$JS.API.STREAM.MSG.GET.{name}", {"seq": 3})
        assert got["message"]["subject"] == f"{name}.n3"
        assert got["message"]["data"] == "dmlhIG4z"  # b"via n3"


async def test_an_atomic_and_a_fast_batch_into_an_r3_stream(js_cluster: Cluster) -> None:
    name = unique("B")
    async with on_node(js_cluster, 1) as nc:
        await create(nc, name, num_replicas=3, allow_atomic=True, allow_batched=True)
        await all_current(nc, name)
        staged = await request(nc, f"{name}.a", b"atomic", headers={"Nats-Batch-Id": "A", "Nats-Batch-Sequence": "1"})
        assert staged.data == b""
        commit = {"Nats-Batch-Id": "A", "Nats-Batch-Sequence": "2", "Nats-Batch-Commit": "1"}
        acked = (await request(nc, f"{name}.a", b"atomic", headers=commit)).data
        assert acked == b'{"stream":"%s","seq":2,"batch":"A","count":2}' % name.encode()
        replies = await nc.subscribe("R.>")
        for seq, op in ((1, 0), (2, 2)):
            await nc.publish(f"{name}.f", b"fast", reply=f"R.F.10.ok.{seq}.{op}.$FI")
        answers = [(await replies.next_msg(timeout=WAIT)).data for _ in range(2)]
        assert answers == [
            b'{"type":"ack","seq":0,"msgs":10}',
            b'{"stream":"%s","seq":4,"batch":"F","count":2}' % name.encode(),
        ]
        assert (await stream_info(nc, name))["state"]["messages"] == 4


async def test_an_origin_lists_itself_and_its_mirrors_as_alternates(js_cluster: Cluster) -> None:
    origin, mirror = unique("A"), unique("B")
    async with on_node(js_cluster, 0) as nc:
        await create(nc, origin, num_replicas=3)
        assert "alternates" not in await stream_info(nc, origin)
        made = await api(nc, f"$JS.API.STREAM.CREATE.{mirror}", {"name": mirror, "mirror": {"name": origin}})
        assert made["did_create"] is True and "alternates" not in made
        info = await stream_info(nc, origin)
        assert list(info)[-3:] == ["cluster", "alternates", "ts"]
        assert sorted(info["alternates"], key=lambda alternate: alternate["name"]) == [
            {"name": origin, "cluster": CLUSTER},
            {"name": mirror, "cluster": CLUSTER},
        ]
        assert "alternates" not in await stream_info(nc, mirror)
        assert all("alternates" not in listed for listed in (await api(nc, "$JS.API.STREAM.LIST"))["streams"])
        await api(nc, f"$JS.API.STREAM.DELETE.{mirror}")
        assert "alternates" not in await stream_info(nc, origin)


# -- the meta group ----------------------------------------------------------------------------------


def jsz(cluster: Cluster, index: int) -> dict:
    with urllib.request.urlopen(f"{cluster.monitor_url(index)}/jsz", timeout=5) as reply:
        return dict(json.loads(reply.read()))


async def test_jsz_meta_cluster_on_every_node(js_cluster: Cluster) -> None:
    leaders = set()
    for index, node in enumerate(NODES):
        meta = (await asyncio.to_thread(jsz, js_cluster, index))["meta_cluster"]
        assert list(meta)[:4] == ["name", "leader", "peer", "replicas"]
        assert (meta["name"], meta["peer"], meta["cluster_size"], meta["quorum_needed"]) == (
            CLUSTER,
            peer_of(meta["leader"]),
            3,
            2,
        )
        leaders.add(meta["leader"])
        assert [replica["name"] for replica in meta["replicas"]] == [other for other in NODES if other != node]
        for replica in meta["replicas"]:
            assert replica["peer"] == peer_of(replica["name"])
    assert len(leaders) == 1 and leaders <= set(NODES)


async def test_meta_leader_stepdown_needs_the_system_account(js_cluster: Cluster) -> None:
    async with on_node(js_cluster, 0) as nc:
        with pytest.raises(NatsTimeoutError):
            await request(nc, "$JS.API.META.LEADER.STEPDOWN", timeout=1.0)


# -- nodes dying -------------------------------------------------------------------------------------


@pytest.mark.slow
async def test_r3_leader_node_dies_and_comes_back(make_js_cluster: MakeCluster) -> None:
    cluster = make_js_cluster()
    name = unique("F")
    async with on_node(cluster, 0) as nc:
        await create(nc, name, num_replicas=3)
        for _ in range(3):
            await publish_acked(nc, f"{name}.x")
        dead = NODES.index((await all_current(nc, name))["cluster"]["leader"])
    cluster.kill(dead)
    live = (dead + 1) % 3
    async with on_node(cluster, live) as nc:

        async def info() -> dict:
            with contextlib.suppress(NatsTimeoutError):
                return await stream_info(nc, name)
            return {}

        def new_leader(reply: dict) -> bool:
            return reply.get("cluster", {}).get("leader") not in (None, NODES[dead])

        after = await eventually(info, new_leader, what="a new leader", timeout=ELECTION)
        assert after["state"]["messages"] == 3
        assert_replicated(after["cluster"], "S")
        gone = next(replica for replica in after["cluster"]["replicas"] if replica["name"] == NODES[dead])
        assert list(gone) == REPLICA_KEYS[1] and gone["current"] is False and gone["active"] == 0
        assert await publish_acked(nc, f"{name}.x") == b'{"stream":"%s","seq":4}' % name.encode()
        cluster.restart(dead)
        back = await all_current(nc, name, timeout=ELECTION)
        assert back["state"]["messages"] == 4
    async with on_node(cluster, dead) as nc:
        got = await api(nc, f"$JS.API.STREAM.MSG.GET.{name}", {"seq": 4})
        assert got["message"]["seq"] == 4


async def test_r1_node_dies_and_comes_back(make_js_cluster: MakeCluster) -> None:
    cluster = make_js_cluster()
    name = unique("G")
    async with on_node(cluster, 0) as nc:
        created = await create(nc, name, num_replicas=1)
        await api(nc, f"$JS.API.CONSUMER.CREATE.{name}.D", {"stream_name": name, "config": {"durable_name": "D"}})
        await publish_acked(nc, f"{name}.x")
    dead = NODES.index(created["cluster"]["leader"])
    cluster.kill(dead)
    async with on_node(cluster, (dead + 1) % 3) as nc:

        async def names() -> list[str]:
            with contextlib.suppress(NatsTimeoutError):
                return list((await api(nc, "$JS.API.STREAM.NAMES", timeout=1.0))["streams"])
            return []

        assert name in await eventually(names, what="STREAM.NAMES (a meta leader)", timeout=ELECTION)
        with pytest.raises(NoRespondersError):
            await request(nc, f"{name}.x", b"x")
        for subject in (f"$JS.API.STREAM.INFO.{name}", f"$JS.API.CONSUMER.INFO.{name}.D"):
            with pytest.raises(NatsTimeoutError):
                await request(nc, subject, timeout=1.0)
        with pytest.raises(NoRespondersError):
            await request(nc, f"$JS.API.CONSUMER.MSG.NEXT.{name}.D", b'{"batch":1,"no_wait":true}')
        cluster.restart(dead)

        async def state() -> dict:
            with contextlib.suppress(NatsTimeoutError):
                return dict((await api(nc, f"$JS.API.STREAM.INFO.{name}", timeout=1.0))["state"])
            return {}

        assert (await eventually(state, what="STREAM.INFO again", timeout=ELECTION))["messages"] == 1


STREAM_OFFLINE = (
    b'{"type":"io.nats.jetstream.api.v1.stream_info_response","error":{"code":500,"err_code":10118,'
    b'"description":"stream is offline"},"total":0,"offset":0,"limit":0}'
)
CONSUMER_OFFLINE = (
    b'{"type":"io.nats.jetstream.api.v1.consumer_info_response","error":{"code":500,"err_code":10119,'
    b'"description":"consumer is offline"}}'
)


@pytest.mark.slow
async def test_r1_node_shut_down_is_offline(make_js_cluster: MakeCluster) -> None:
    cluster = make_js_cluster()
    name, replicated = unique("H"), unique("I")
    async with on_node(cluster, 0) as nc:
        created = await create(nc, name, num_replicas=1)
        await api(nc, f"$JS.API.CONSUMER.CREATE.{name}.D", {"stream_name": name, "config": {"durable_name": "D"}})
        await create(nc, replicated, num_replicas=3)
        await all_current(nc, replicated)
    down = NODES.index(created["cluster"]["leader"])
    cluster.shutdown(down)
    async with on_node(cluster, (down + 1) % 3) as nc:

        async def reply(subject: str) -> bytes:
            with contextlib.suppress(NatsTimeoutError):
                return await raw(nc, subject)
            return b""

        stream = f"$JS.API.STREAM.INFO.{name}"
        assert await eventually(lambda: reply(stream), what="stream offline", timeout=ELECTION) == STREAM_OFFLINE
        assert await reply(f"$JS.API.CONSUMER.INFO.{name}.D") == CONSUMER_OFFLINE
        with pytest.raises(NoRespondersError):
            await request(nc, f"{name}.x", b"x")

        def marked(info: dict) -> bool:
            replicas = info.get("cluster", {}).get("replicas", [])
            return any(replica["name"] == NODES[down] and replica.get("offline") for replica in replicas)

        async def info() -> dict:
            with contextlib.suppress(NatsTimeoutError):
                return await stream_info(nc, replicated)
            return {}

        listed = await eventually(info, marked, what="the replica offline", timeout=ELECTION)
        gone = next(replica for replica in listed["cluster"]["replicas"] if replica["name"] == NODES[down])
        assert list(gone)[:3] == ["name", "current", "offline"] and list(gone)[-1] == "peer"
        cluster.restart(down)
        assert await eventually(
            lambda: reply(stream), lambda data: data.startswith(b'{"type"') and b"error" not in data, timeout=ELECTION
        )
