"""JetStream replicated across three routed servers, each on its own store: the ``_meta_`` group and the stream
groups run inside the servers, and nats-py's ``$JS.API`` requests are answered by the real leaders.

Streams are created through any node, published to through any node, and described from every node with
nats-server's ``cluster`` sections; a killed stream leader's successor serves every acknowledged message, a
killed meta leader's successor answers creates, and what is not built in this mode is refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import nats
import pytest

from fakejs.jetstream.replication import peer_id
from fakejs.server.local_cluster import Cluster
from tests.harness.replicated import (
    SUPPORTED,
    WAIT,
    all_joined,
    group_dir,
    meta_leader,
    publish,
    replicated_cluster,
    request,
    share,
    stream_config,
    wait,
    wait_for_leader,
)

pytestmark = pytest.mark.cluster


async def test_streams_are_created_published_and_described_through_any_node(cluster: Cluster) -> None:
    clients = [await nats.connect(url) for url in cluster.urls]
    try:
        created = await request(clients[0], "$JS.API.STREAM.CREATE.ONE", stream_config("ONE", 1))
        assert created["did_create"] is True and created["type"].endswith("stream_create_response")
        assert set(created["cluster"]) == {"name", "leader"} and created["cluster"]["name"] == "C"
        created = await request(clients[1], "$JS.API.STREAM.CREATE.THREE", stream_config("THREE", 3))
        assert created["did_create"] is True and created["config"]["num_replicas"] == 3
        assert list(created["cluster"]) == [
            "name", "raft_group", "leader", "leader_since", "system_account", "traffic_account", "replicas"
        ]  # fmt: skip
        assert created["cluster"]["raft_group"].startswith("S-R3F-")
        again = await request(clients[2], "$JS.API.STREAM.CREATE.THREE", stream_config("THREE", 3))
        assert "did_create" not in again and again["config"] == created["config"]
        other = {**stream_config("THREE", 3), "subjects": ["elsewhere"]}
        assert (await request(clients[2], "$JS.API.STREAM.CREATE.THREE", other))["error"]["err_code"] == 10058
        too_many = await request(clients[0], "$JS.API.STREAM.CREATE.FIVE", stream_config("FIVE", 5))
        assert too_many["error"] == {"code": 400, "err_code": 10005, "description": "no suitable peers for placement"}

        for index in range(6):
            ack = await publish(clients[index % 3], "three.a", b"m%d" % index)
            assert ack == {"stream": "THREE", "seq": index + 1}
        assert await publish(clients[2], "one.a", b"x") == {"stream": "ONE", "seq": 1}

        for nc in clients:  # the stream's leader answers, whichever node the client is on
            info = await request(nc, "$JS.API.STREAM.INFO.THREE")
            assert info["state"]["messages"] == 6 and info["state"]["last_seq"] == 6
            leader = info["cluster"]["leader"]
            replicas = info["cluster"]["replicas"]
            assert sorted(replica["name"] for replica in replicas) == sorted({"n1", "n2", "n3"} - {leader})
            assert all(replica["peer"] == peer_id(replica["name"]) for replica in replicas)
            assert (await request(nc, "$JS.API.STREAM.INFO.ONE"))["cluster"]["name"] == "C"
        await wait(lambda: all(held(cluster, name, "THREE") == 6 for name in ("n1", "n2", "n3")))
        three = (await request(clients[0], "$JS.API.STREAM.INFO.THREE"))["state"]["bytes"]
        one = (await request(clients[0], "$JS.API.STREAM.INFO.ONE"))["state"]["bytes"]
        account = await request(clients[2], "$JS.API.INFO")
        assert (account["streams"], account["storage"]) == (2, 3 * three + one)  # every replica counted

        names = await request(clients[1], "$JS.API.STREAM.NAMES")
        assert names["streams"] == ["ONE", "THREE"] and names["total"] == 2
        listing = await request(clients[2], "$JS.API.STREAM.LIST")
        assert [info["config"]["name"] for info in listing["streams"]] == ["ONE", "THREE"]
        assert [info["state"]["messages"] for info in listing["streams"]] == [1, 6]
        assert listing["streams"][1]["config"]["metadata"] == {"_nats.req.level": "0"}  # no dynamic metadata
        assert listing["streams"][1]["cluster"]["raft_group"] == created["cluster"]["raft_group"]
        missing = await request(clients[1], "$JS.API.STREAM.INFO.NOPE")
        assert missing["error"]["err_code"] == 10059
        got = await request(clients[0], "$JS.API.STREAM.MSG.GET.THREE", b'{"seq":2}')
        assert got["message"]["data"] == "bTE=" and got["message"]["subject"] == "three.a"
        assert (await request(clients[1], "$JS.API.STREAM.MSG.DELETE.THREE", b'{"seq":2}'))["success"] is True
        gone = await request(clients[2], "$JS.API.STREAM.MSG.GET.THREE", b'{"seq":2}')
        assert gone["error"]["err_code"] == 10037
        purged = await request(clients[0], "$JS.API.STREAM.PURGE.THREE", b'{"keep":1}')
        assert purged == {"type": "io.nats.jetstream.api.v1.stream_purge_response", "success": True, "purged": 4}
        await wait(lambda: all(held(cluster, name, "THREE") == 1 for name in ("n1", "n2", "n3")))

        update = {**stream_config("THREE", 3), "subjects": ["three.>", "third.>"]}
        updated = await request(clients[2], "$JS.API.STREAM.UPDATE.THREE", update)
        assert updated["config"]["subjects"] == ["three.>", "third.>"]
        # As nats-server: the configuration is checked before its name is compared with the subject's stream.
        invalid = {**stream_config("OTHER", 3), "discard": "new", "discard_new_per_subject": True}
        refused = await request(clients[0], "$JS.API.STREAM.UPDATE.THREE", invalid)
        assert refused["error"] == {
            "code": 500,
            "err_code": 10052,
            "description": "discard new per subject requires max msgs per subject > 0",
        }
        mismatched = await request(clients[0], "$JS.API.STREAM.UPDATE.THREE", stream_config("OTHER", 3))
        assert mismatched["error"]["err_code"] == 10056
        assert (await publish(clients[1], "third.x", b"y"))["seq"] == 7
        deleted = await request(clients[1], "$JS.API.STREAM.DELETE.ONE")
        assert deleted == {"type": "io.nats.jetstream.api.v1.stream_delete_response", "success": True}
        assert (await request(clients[1], "$JS.API.STREAM.DELETE.ONE"))["error"]["err_code"] == 10059
        await wait(
            lambda: all(share(cluster, name).replicas.replicas.get("ONE") is None for name in ("n1", "n2", "n3"))
        )
    finally:
        for nc in clients:
            await nc.close()


async def test_what_is_not_built_is_refused_by_name(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.url(0))
    try:
        await request(nc, "$JS.API.STREAM.CREATE.S", stream_config("S", 3))
        refused = await request(nc, "$JS.API.STREAM.SNAPSHOT.S", b'{"deliver_subject":"snap"}')
        assert refused["error"]["err_code"] == 10036
        assert refused["error"]["description"] == f"STREAM.SNAPSHOT in a JetStream cluster across servers: {SUPPORTED}"
        work = {**stream_config("W", 3), "retention": "workqueue"}
        await request(nc, "$JS.API.STREAM.CREATE.W", work)
        sourcing = {"name": "M", "mirror": {"name": "W"}}
        assert (await request(nc, "$JS.API.STREAM.CREATE.M", sourcing))["did_create"] is True
        await wait(lambda: mirror_error(cluster, "M"))
        assert mirror_error(cluster, "M") == (
            f"a mirror's or source's consumer of a work-queue or interest stream in a JetStream cluster across "
            f"servers: {SUPPORTED}"
        )
    finally:
        await nc.close()


def mirror_error(cluster: Cluster, stream: str) -> str:
    """The error the mirror of ``stream``'s leader got from its origin ("" while none)."""
    for name in ("n1", "n2", "n3"):
        replica = share(cluster, name).replicas.replicas.get(stream)
        if replica is not None and replica.is_leader and replica.stream.links.mirror is not None:
            return str((replica.stream.links.mirror.feed.error or {}).get("description", ""))
    return ""


def held(cluster: Cluster, name: str, stream: str) -> int:
    replica = share(cluster, name).replicas.replicas.get(stream)
    return -1 if replica is None else int(replica.stream.store.msgs)


async def test_a_killed_stream_leader_s_successor_serves_every_acknowledged_message(cluster: Cluster) -> None:
    nc = await nats.connect(cluster.url(0))
    try:
        await request(nc, "$JS.API.STREAM.CREATE.KEEP", stream_config("KEEP", 3))
        acks = [await publish(nc, "keep.x", b"%d" % index) for index in range(8)]
        assert [ack["seq"] for ack in acks] == list(range(1, 9))
        old = (await request(nc, "$JS.API.STREAM.INFO.KEEP"))["cluster"]["leader"]
        await nc.close()
        await cluster.kill(old)
        survivor = next(server for server in cluster.running)
        nc = await nats.connect(survivor.url)
        info = await wait_for_leader(nc, "KEEP", lambda leader: leader != old)
        assert info["state"]["messages"] == 8 and info["state"]["last_seq"] == 8
        for seq in range(1, 9):
            got = await request(nc, "$JS.API.STREAM.MSG.GET.KEEP", b'{"seq":%d}' % seq)
            assert got["message"]["seq"] == seq
        assert (await publish(nc, "keep.x", b"after"))["seq"] == 9
    finally:
        await nc.close()


async def test_a_killed_meta_leader_s_successor_answers_creates(cluster: Cluster) -> None:
    old = meta_leader(cluster)
    assert old is not None
    await cluster.kill(old)
    await wait(lambda: meta_leader(cluster) not in (None, old))
    nc = await nats.connect(cluster.running[0].url)
    try:
        created = await request(nc, "$JS.API.STREAM.CREATE.AFTER", stream_config("AFTER", 1))
        assert created["did_create"] is True and created["cluster"]["leader"] != old
        assert (await publish(nc, "after.x", b"x")) == {"stream": "AFTER", "seq": 1}
    finally:
        await nc.close()


async def test_a_restarted_replica_catches_up_from_its_store_and_a_deleted_stream_leaves_no_directory(
    tmp_path: Path,
) -> None:
    async with replicated_cluster(3, store=tmp_path) as cluster:
        await wait(lambda: meta_leader(cluster) is not None and all_joined(cluster))
        nc = await nats.connect(cluster.url(0))
        try:
            created = await request(nc, "$JS.API.STREAM.CREATE.KEPT", stream_config("KEPT", 3))
            group = created["cluster"]["raft_group"]
            assert all(group_dir(tmp_path, name, "_meta_").is_dir() for name in ("n1", "n2", "n3"))
            for index in range(5):
                await publish(nc, "kept.x", b"%d" % index)
            follower = next(name for name in ("n2", "n3") if name != created["cluster"]["leader"])
            await cluster.kill(follower)
            for index in range(5, 8):
                assert (await publish(nc, "kept.x", b"%d" % index))["seq"] == index + 1
            await cluster.restart(follower)
            await wait(lambda: held(cluster, follower, "KEPT") == 8)
            assert share(cluster, follower).assigned("KEPT").group.name == group
            assert group_dir(tmp_path, follower, group).is_dir()

            assert (await request(nc, "$JS.API.STREAM.DELETE.KEPT"))["success"] is True
            await wait(lambda: not any(group_dir(tmp_path, name, group).exists() for name in ("n1", "n2", "n3")))
        finally:
            await nc.close()
        assert cluster.errors == []


async def test_a_server_reading_its_meta_log_back_does_not_answer_its_requests_again(tmp_path: Path) -> None:
    async with replicated_cluster(3, store=tmp_path, tags=[[], [], ["here"]]) as cluster:
        await wait(lambda: meta_leader(cluster) is not None and all_joined(cluster))
        nc = await nats.connect(cluster.url("n1"))
        try:
            answers = await nc.subscribe("answers.create")
            config = {**stream_config("BACK", 1), "placement": {"tags": ["here"]}}
            await nc.publish("$JS.API.STREAM.CREATE.BACK", json.dumps(config).encode(), "answers.create")
            first = json.loads((await answers.next_msg(timeout=WAIT)).data)
            assert first["did_create"] is True and first["cluster"]["leader"] == "n3"
            await cluster.kill("n3")
            await cluster.restart("n3")  # reads the meta log back, and leads the stream again at once
            await wait_for_leader(nc, "BACK", lambda leader: leader == "n3")
            await nc.flush()
            assert answers.pending_msgs == 0  # n3 answered an info request since, and the create no more
            restarted = cluster.server("n3").jetstream
            assert (
                restarted is not None and restarted.api_total == 1
            )  # the info request (an answer may miss a route still forming)
        finally:
            await nc.close()
        assert cluster.errors == []
