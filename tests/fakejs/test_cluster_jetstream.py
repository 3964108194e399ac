"""JetStream in an in-process cluster: what only fakejs can show (seeded leaders, failures on cue).

The client-visible rules are pinned on both targets in
``tests/parity/test_js_cluster.py``; here the same cluster is driven on
cue and looked at from inside.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs import Cluster, ManualClock
from fakejs.gocompat.gotime import rfc3339
from tests.harness.wait import eventually

pytestmark = pytest.mark.cluster


async def api(nc: Client, subject: str, body: dict[str, Any] | None = None, timeout: float = 2.0) -> dict[str, Any]:
    reply = await nc.request(subject, json.dumps(body).encode() if body is not None else b"", timeout=timeout)
    answer: dict[str, Any] = json.loads(reply.data)
    return answer


async def _leaders(seed: int) -> list[str]:
    """The leaders a seeded cluster gives three streams and a consumer, and after two step-downs."""
    async with Cluster(size=3, jetstream=True, seed=seed) as cluster:
        nc = await nats.connect(cluster.url(0))
        try:
            seen = []
            for name in ("A", "B", "C"):
                created = await api(nc, f"$JS.API.STREAM.CREATE.{name}", {"name": name, "num_replicas": 3})
                seen.append(created["cluster"]["leader"])
            consumer = await api(
                nc, "$JS.API.CONSUMER.CREATE.A.D", {"stream_name": "A", "config": {"durable_name": "D"}}
            )
            seen.append(consumer["cluster"]["leader"])
            for _ in range(2):
                await api(nc, "$JS.API.STREAM.LEADER.STEPDOWN.A")
                seen.append((await api(nc, "$JS.API.STREAM.INFO.A"))["cluster"]["leader"])
            return seen
        finally:
            await nc.close()


async def test_a_seed_repeats_every_placement_and_election() -> None:
    first = await _leaders(11)
    assert await _leaders(11) == first
    assert first[0] != first[4] and first[4] != first[5]  # each step-down moved the leader of A


async def test_publishes_through_any_node_are_stored_once_and_served_everywhere() -> None:
    async with Cluster(size=3, jetstream=True, seed=3) as cluster:
        clients = [await nats.connect(url) for url in cluster.urls]
        try:
            await api(clients[0], "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "num_replicas": 3})
            for i, nc in enumerate(clients):
                ack = json.loads((await nc.request(f"s.{i}", b"x", timeout=2)).data)
                assert ack == {"stream": "S", "seq": i + 1}
            for nc in clients:
                got = await api(nc, "$JS.API.STREAM.MSG.GET.S", {"seq": 3})
                assert got["message"]["subject"] == "s.2"
            assert cluster.jetstream is not None and cluster.jetstream.lookup("S").store.msgs == 3
        finally:
            for nc in clients:
                await nc.close()
        assert cluster.errors == []


async def test_the_leaders_node_dies_and_another_replica_takes_over() -> None:
    async with Cluster(size=3, jetstream=True, seed=5) as cluster:
        nc = await nats.connect(cluster.urls, reconnect_time_wait=0.05)
        try:
            created = await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "num_replicas": 3})
            leader = created["cluster"]["leader"]
            await nc.request("s.a", b"1", timeout=2)
            await cluster.kill(leader)
            info = await api(nc, "$JS.API.STREAM.INFO.S", timeout=5)
            assert info["cluster"]["leader"] != leader and info["state"]["messages"] == 1
            dead = [r for r in info["cluster"]["replicas"] if r["name"] == leader]
            # the entries it missed (the new leader's first one at least) are its lag, as nats-server counts it
            assert dead == [
                {"name": leader, "current": False, "active": 0, "lag": dead[0]["lag"], "peer": dead[0]["peer"]}
            ]
            assert dead[0]["lag"] >= 1
            assert json.loads((await nc.request("s.b", b"2", timeout=2)).data)["seq"] == 2
            await cluster.restart(leader)
            info = await api(nc, "$JS.API.STREAM.INFO.S")
            assert all(replica["current"] for replica in info["cluster"]["replicas"])
        finally:
            await nc.close()


async def test_a_single_replica_on_a_dead_node_is_offline_until_it_returns() -> None:
    async with Cluster(size=3, jetstream=True, seed=2) as cluster:
        nc = await nats.connect(cluster.urls, reconnect_time_wait=0.05)
        try:
            created = await api(nc, "$JS.API.STREAM.CREATE.ONE", {"name": "ONE", "subjects": ["one.>"]})
            assert created["cluster"] == {"name": "C", "leader": created["cluster"]["leader"]}
            leader = created["cluster"]["leader"]
            await cluster.kill(leader)
            with pytest.raises(nats.errors.NoRespondersError):
                await nc.request("one.x", b"", timeout=1)
            with pytest.raises(nats.errors.TimeoutError):
                await api(nc, "$JS.API.STREAM.INFO.ONE", timeout=0.5)
            assert (await api(nc, "$JS.API.STREAM.NAMES"))["streams"] == ["ONE"]
            await cluster.restart(leader)
            assert json.loads((await nc.request("one.x", b"", timeout=2)).data)["seq"] == 1
        finally:
            await nc.close()


async def test_a_consumer_step_down_answers_waiting_pulls_and_a_stream_step_down_does_not() -> None:
    async with Cluster(size=3, jetstream=True, seed=8) as cluster:
        nc = await nats.connect(cluster.url(2))
        try:
            await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "num_replicas": 3})
            await api(nc, "$JS.API.CONSUMER.CREATE.S.C", {"stream_name": "S", "config": {"durable_name": "C"}})
            inbox = nc.new_inbox()
            sub = await nc.subscribe(inbox)
            pull = json.dumps({"batch": 1, "expires": 10_000_000_000}).encode()
            await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.C", pull, reply=inbox)
            await nc.flush()
            assert (await api(nc, "$JS.API.STREAM.LEADER.STEPDOWN.S")) == {
                "type": "io.nats.jetstream.api.v1.stream_leader_stepdown_response",
                "success": True,
            }
            with pytest.raises(nats.errors.TimeoutError):
                await sub.next_msg(timeout=0.2)
            await api(nc, "$JS.API.CONSUMER.LEADER.STEPDOWN.S.C")
            msg = await sub.next_msg(timeout=2)
            assert msg.headers is not None and msg.headers.get("Status") == "409"
        finally:
            await nc.close()


async def test_a_preferred_leader_is_honoured() -> None:
    async with Cluster(size=3, jetstream=True, seed=4) as cluster:
        nc = await nats.connect(cluster.url(0))
        try:
            created = await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "num_replicas": 3})
            other = next(name for name in ("n1", "n2", "n3") if name != created["cluster"]["leader"])
            await api(nc, "$JS.API.STREAM.LEADER.STEPDOWN.S", {"placement": {"preferred": other}})
            assert (await api(nc, "$JS.API.STREAM.INFO.S"))["cluster"]["leader"] == other
        finally:
            await nc.close()


async def test_placement_beyond_the_cluster_is_refused_as_nats_server_does() -> None:
    async with Cluster(size=3, jetstream=True) as cluster:
        nc = await nats.connect(cluster.url(0))
        try:
            for config, text in (
                ({"num_replicas": 5}, "no suitable peers for placement"),
                ({"placement": {"cluster": "X"}}, "no suitable peers for placement"),
                ({"placement": {"tags": ["az:9"]}}, "no suitable peers for placement, tags not matched ['az:9']"),
            ):
                refused = await api(nc, "$JS.API.STREAM.CREATE.P", {"name": "P", **config})
                assert refused["error"] == {"code": 400, "err_code": 10005, "description": text}
        finally:
            await nc.close()


async def test_on_a_manual_clock_the_cluster_runs_without_time_passing() -> None:
    clock = ManualClock()
    async with Cluster(size=3, jetstream=True, clock=clock, seed=1) as cluster:
        nc = await nats.connect(cluster.url(0))
        try:
            created = await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s"], "num_replicas": 3})
            leader = created["cluster"]["leader"]
            publisher = await nats.connect(cluster.url(next(n for n in ("n1", "n2", "n3") if n != leader)))
            await cluster.kill(leader)
            assert json.loads((await publisher.request("s", b"", timeout=2)).data)["seq"] == 1
            await publisher.close()
            assert clock.monotonic() == 0.0
        finally:
            await nc.close()
            await asyncio.sleep(0)


async def test_across_a_partition_only_the_majority_serves_jetstream() -> None:
    async with Cluster(size=3, jetstream=True, seed=6) as cluster:
        lonely, crowd = await nats.connect(cluster.url("n1")), await nats.connect(cluster.url("n3"))
        try:
            await api(crowd, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s"], "num_replicas": 3})
            await cluster.partition(["n1"], ["n2", "n3"])
            with pytest.raises(nats.errors.NoRespondersError):
                await lonely.request("s", b"", timeout=1)
            assert json.loads((await crowd.request("s", b"", timeout=2)).data)["seq"] == 1
            info = await api(crowd, "$JS.API.STREAM.INFO.S")
            assert info["cluster"]["leader"] in ("n2", "n3")
            await cluster.heal()
            assert json.loads((await lonely.request("s", b"", timeout=2)).data)["seq"] == 2
        finally:
            await lonely.close()
            await crowd.close()


async def _fails_over(fakejs_cluster: Any) -> None:
    """What the fixture's cluster gives: an R3 stream whose leader's node is killed, served by another."""
    nc = await nats.connect(fakejs_cluster.url(0), allow_reconnect=False)
    try:
        js = nc.jetstream()
        await js.add_stream(name="F", subjects=["f"], num_replicas=3)
        assert (await js.publish("f", b"1")).seq == 1
        info = await js.stream_info("F")
        assert info.cluster is not None and info.cluster.leader in ("n1", "n2", "n3")
        assert info.cluster.replicas is not None and len(info.cluster.replicas) == 2
        fakejs_cluster.kill(info.cluster.leader)
        survivor = await nats.connect(
            fakejs_cluster.url(next(n for n in ("n1", "n2", "n3") if n != info.cluster.leader))
        )
        try:
            js = survivor.jetstream()
            assert (await js.publish("f", b"2")).seq == 2
            after = await js.stream_info("F")
            assert after.cluster is not None and after.cluster.leader != info.cluster.leader
        finally:
            await survivor.close()
    finally:
        await nc.close()


@pytest.mark.fakejs_cluster(jetstream=True)
async def test_the_fixture_gives_a_replicated_jetstream_that_fails_over(fakejs_cluster: Any) -> None:
    await _fails_over(fakejs_cluster)


async def test_an_election_window_on_the_manual_clock() -> None:
    """With ``election=2``: for two seconds of cluster time after its leader's node dies, a stream has no leader."""
    clock = ManualClock()
    async with Cluster(size=3, jetstream=True, clock=clock, seed=9, election=2.0) as cluster:
        nc = await nats.connect(cluster.url(0))
        try:
            created = await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s"], "num_replicas": 3})
            leader = created["cluster"]["leader"]
            survivor = next(n for n in ("n1", "n2", "n3") if n != leader)
            publisher = await nats.connect(cluster.url(survivor))
            await cluster.kill(leader)
            with pytest.raises(nats.errors.NoRespondersError):
                await publisher.request("s", b"", timeout=0.5)
            with pytest.raises(nats.errors.TimeoutError):
                await api(publisher, "$JS.API.STREAM.INFO.S", timeout=0.3)
            clock.advance(2.0)
            assert json.loads((await publisher.request("s", b"", timeout=2)).data)["seq"] == 1
            assert (await api(publisher, "$JS.API.STREAM.INFO.S"))["cluster"]["leader"] != leader
            await publisher.close()
        finally:
            await nc.close()


async def test_leaders_move_on_cue() -> None:
    async with Cluster(size=3, jetstream=True, seed=12) as cluster:
        nc = await nats.connect(cluster.url(0))
        try:
            created = await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "num_replicas": 3})
            await api(nc, "$JS.API.CONSUMER.CREATE.S.C", {"stream_name": "S", "config": {"durable_name": "C"}})
            moved = cluster.step_down("S")
            assert moved != created["cluster"]["leader"]
            assert cluster.move_leader("S", "n3") == "n3"
            assert (await api(nc, "$JS.API.STREAM.INFO.S"))["cluster"]["leader"] == "n3"
            assert cluster.move_leader("S", "n1", consumer="C") == "n1"
            assert (await api(nc, "$JS.API.CONSUMER.INFO.S.C"))["cluster"]["leader"] == "n1"
            with pytest.raises(ValueError, match="already leader"):
                cluster.move_leader("S", "n3")
        finally:
            await nc.close()


async def test_a_removed_peer_is_replaced_when_a_server_is_free() -> None:
    async with Cluster(size=4, jetstream=True, seed=2) as cluster:
        nc = await nats.connect(cluster.url(0))
        try:
            created = await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "num_replicas": 3})
            members = {created["cluster"]["leader"]} | {r["name"] for r in created["cluster"]["replicas"]}
            outsider = ({"n1", "n2", "n3", "n4"} - members).pop()
            gone = sorted(members)[0]
            assert (await api(nc, "$JS.API.STREAM.PEER.REMOVE.S", {"peer": gone}))["success"] is True
            info = (await api(nc, "$JS.API.STREAM.INFO.S"))["cluster"]
            now = {info["leader"]} | {r["name"] for r in info["replicas"]}
            assert now == members - {gone} | {outsider}
            refused = await api(nc, "$JS.API.STREAM.PEER.REMOVE.S", {"peer": gone})
            assert refused["error"] == {"code": 400, "err_code": 10040, "description": "peer not a member"}
            assert (await api(nc, "$JS.API.STREAM.PEER.REMOVE.S", {"peer": ""}))["error"]["err_code"] == 10003
        finally:
            await nc.close()
    async with Cluster(size=3, jetstream=True, seed=2) as cluster:
        nc = await nats.connect(cluster.url(0))
        try:
            await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "num_replicas": 3})
            full = await api(nc, "$JS.API.STREAM.PEER.REMOVE.S", {"peer": "n1"})
            assert full["error"] == {"code": 503, "err_code": 10075, "description": "peer remap failed"}
        finally:
            await nc.close()


async def test_a_removed_consumer_peer_is_replaced_by_another_server_of_its_stream() -> None:
    """As nats-server 2.15.1 answers ``CONSUMER.PEER.REMOVE`` (seen on a four-node cluster)."""
    kind = "io.nats.jetstream.api.v1.consumer_remove_peer_response"
    async with Cluster(size=4, jetstream=True, seed=2) as cluster:
        nc = await nats.connect(cluster.url(0))
        try:
            created = await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "num_replicas": 3})
            streams = {created["cluster"]["leader"]} | {r["name"] for r in created["cluster"]["replicas"]}
            one = {"durable_name": "ONE", "ack_policy": "explicit", "num_replicas": 1}
            holder = (await api(nc, "$JS.API.CONSUMER.CREATE.S.ONE", {"stream_name": "S", "config": one}))["cluster"]
            moved = await api(nc, "$JS.API.CONSUMER.PEER.REMOVE.S.ONE", {"peer": holder["leader"]})
            assert moved == {"type": kind, "success": True}
            now = (await api(nc, "$JS.API.CONSUMER.INFO.S.ONE"))["cluster"]["leader"]
            assert now in streams and now != holder["leader"]
            three = {"durable_name": "D", "ack_policy": "explicit"}
            await api(nc, "$JS.API.CONSUMER.CREATE.S.D", {"stream_name": "S", "config": three})
            answers = [
                await api(nc, "$JS.API.CONSUMER.PEER.REMOVE.S.D", body)
                for body in (None, {"peer": ""}, {"peer": "n9"}, {"peer": sorted(streams)[0]})
            ]
            assert [answer["error"]["err_code"] for answer in answers] == [10003, 10003, 10040, 10075]
            assert answers[3]["error"] == {"code": 503, "err_code": 10075, "description": "peer remap failed"}
            missing = await api(nc, "$JS.API.CONSUMER.PEER.REMOVE.S.NONE", {"peer": "n1"})
            assert missing["error"] == {"code": 404, "err_code": 10014, "description": "consumer not found"}
        finally:
            await nc.close()


async def test_the_system_account_moves_the_meta_leader_and_removes_servers() -> None:
    """As nats-server 2.15.1 answers them (seen on a three-node cluster with a system account user)."""
    from fakejs.core.users import User

    users = [User(name="sys", password="sys", account="$SYS"), User(name="a", password="a")]
    async with Cluster(size=3, jetstream=True, seed=3, users=users) as cluster:
        system = await nats.connect(cluster.url(1), user="sys", password="sys")
        ordinary = await nats.connect(cluster.url(0), user="a", password="a")
        try:
            before = cluster.meta_leader
            moved = await api(system, "$JS.API.META.LEADER.STEPDOWN")
            assert moved == {"type": "io.nats.jetstream.api.v1.meta_leader_stepdown_response", "success": True}
            assert cluster.meta_leader not in ("", before)
            unknown = await api(system, "$JS.API.META.LEADER.STEPDOWN", {"placement": {"preferred": "n9"}})
            assert unknown["error"] == {
                "code": 400,
                "err_code": 10005,
                "description": 'preferred server "n9" not known',
            }
            empty = await system.request("$JS.API.SERVER.REMOVE", b"", timeout=2)
            assert json.loads(empty.data)["error"] == {"code": 400, "err_code": 10003, "description": "bad request"}
            stranger = await api(system, "$JS.API.SERVER.REMOVE", {"peer": "n9"})
            assert stranger["error"]["err_code"] == 10044
            with pytest.raises(nats.errors.TimeoutError):  # not the system account: no answer at all
                await api(ordinary, "$JS.API.META.LEADER.STEPDOWN", timeout=0.3)
        finally:
            await system.close()
            await ordinary.close()


@pytest.mark.parametrize("storage", ["file", "memory"])
async def test_replicated_logs_stay_compacted_and_a_restarted_node_catches_up_with_every_message(storage: str) -> None:
    """Every group snapshots its state and drops its log as it goes; a node down while the stream's log moved past
    what it held comes back with every message from the leader's snapshot and the entries after it."""
    from dataclasses import replace

    from fakejs.jetstream.replication import Compaction
    from fakejs.server.cluster_replication import groups_of, replicated_settings, shares_of

    settings = replace(replicated_settings(["n1", "n2", "n3"], 0.0), compaction=Compaction(entries=16))
    async with Cluster(size=3, jetstream=True, seed=7, jetstream_replicated=settings) as cluster:
        nc = await nats.connect(cluster.urls, reconnect_time_wait=0.05)
        try:
            config = {"name": "S", "subjects": ["s.>"], "num_replicas": 3, "storage": storage}
            created = await api(nc, "$JS.API.STREAM.CREATE.S", config)
            pulls = await nc.jetstream().pull_subscribe("s.>", durable="D", stream="S")
            follower = next(name for name in ("n1", "n2", "n3") if name != created["cluster"]["leader"])
            for i in range(60):
                await nc.request(f"s.{i % 3}", b"%d" % i, timeout=2)
            held = next(server for server in cluster.servers if server.broker.name == follower)
            lagging = shares_of(held)[0].replicas.replicas["S"].group
            assert lagging is not None and lagging.node.log.last_index < 70
            await cluster.kill(follower)
            for i in range(60, 150):
                await nc.request(f"s.{i % 3}", b"%d" % i, timeout=2)
            for msg in await pulls.fetch(40, timeout=5):
                await msg.ack_sync()  # the consumer's group logs each delivery and acknowledgement
            running = [server for server in cluster.servers if server.broker.name != follower]
            longest = max(len(group.node.log.entries) for server in running for group in groups_of(server))
            assert longest <= 20  # the threshold, the membership entries and what a heartbeat has not applied yet
            leading = [shares_of(server)[0].replicas.replicas["S"].group for server in running]
            assert all(group is not None and group.node.log.snapshot.index > 70 for group in leading)  # past its log
            await cluster.restart(follower)
            server = next(server for server in cluster.servers if server.broker.name == follower)
            stream = shares_of(server)[0].replicas.replicas["S"]
            await server.wait_for(lambda: stream.stream.store.last_seq == 150)
            assert [msg.data for msg in stream.stream.store] == [b"%d" % i for i in range(150)]
            assert stream.group is not None and stream.group.node.log.snapshot.index > 60
        finally:
            await nc.close()
        assert cluster.errors == []


async def test_batches_across_a_change_of_stream_leader() -> None:
    """An atomic batch is stored whole on every node; a staged one goes with its leader, a fast one carries on."""
    async with Cluster(size=3, jetstream=True, seed=5) as cluster:
        nc = await nats.connect(cluster.url(0))
        try:
            config = {"name": "B", "subjects": ["b.>"], "num_replicas": 3, "allow_atomic": True, "allow_batched": True}
            await api(nc, "$JS.API.STREAM.CREATE.B", config)
            assert (
                await nc.request("b.a", b"1", headers={"Nats-Batch-Id": "A", "Nats-Batch-Sequence": "1"})
            ).data == b""
            ending = {"Nats-Batch-Id": "A", "Nats-Batch-Sequence": "2", "Nats-Batch-Commit": "1"}
            reply = await nc.request("b.a", b"2", headers=ending)
            assert reply.data == b'{"stream":"B","seq":2,"batch":"A","count":2}'
            stores = [server.jetstream.streams["B"].store for server in cluster.servers]  # type: ignore[union-attr]
            assert [[message.data for message in store] for store in stores] == [[b"1", b"2"]] * 3
            staged = await nc.request("b.s", b"", headers={"Nats-Batch-Id": "S", "Nats-Batch-Sequence": "1"})
            assert staged.data == b""
            replies = await nc.subscribe("R.>")
            await nc.publish("b.f", b"f1", reply="R.F.10.ok.1.0.$FI")
            assert (await replies.next_msg(timeout=2)).data == b'{"type":"ack","seq":0,"msgs":10}'
            cluster.step_down("B")
            carried = await replies.next_msg(timeout=2)  # the new leader's flow ack on the last reply stored
            assert (carried.subject, carried.data) == ("R.F.10.ok.1.0.$FI", b'{"type":"ack","seq":1,"msgs":10}')
            commit = {"Nats-Batch-Id": "S", "Nats-Batch-Sequence": "2", "Nats-Batch-Commit": "1"}
            gone = json.loads((await nc.request("b.s", b"", headers=commit)).data)
            assert gone["error"]["err_code"] == 10176
            await nc.publish("b.f", b"f2", reply="R.F.10.ok.2.2.$FI")
            assert (await replies.next_msg(timeout=2)).data == b'{"stream":"B","seq":4,"batch":"F","count":2}'
        finally:
            await nc.close()


async def _heard(clients: list[Client], subject: str) -> list[list[bytes]]:
    """A subscriber on each node to ``subject``; returned once a probe from every client reached each of them."""
    heard: list[list[bytes]] = [[] for _ in clients]
    for index, client in enumerate(clients):

        async def keep(msg: Msg, index: int = index) -> None:
            heard[index].append(msg.data)

        await client.subscribe(subject, cb=keep)
        await client.flush()
    await _probed(clients, heard, subject)
    return heard


async def _probed(clients: list[Client], heard: list[list[bytes]], subject: str) -> None:
    """A probe from each client, sent again until every subscriber heard one from each since the call."""

    async def probe() -> list[int]:
        for index, client in enumerate(clients):
            await client.publish(subject, b"probe %d" % index)
            await client.flush()
        return [len({data for data in got[start:] if data.startswith(b"probe")}) for start, got in zip(starts, heard)]

    starts = [len(got) for got in heard]
    await eventually(probe, lambda counts: counts == [len(clients)] * len(heard), what="the probes")


async def test_a_replicated_stream_s_schedule_fires_once_across_a_step_down_and_is_republished_once() -> None:
    clock = ManualClock()
    async with Cluster(size=3, jetstream=True, clock=clock, seed=3) as cluster:
        clients = [await nats.connect(cluster.url(index)) for index in range(3)]
        try:
            heard = await _heard(clients, "out.F.>")
            config = {
                "name": "F",
                "subjects": ["F.>"],
                "num_replicas": 3,
                "allow_msg_schedules": True,
                "republish": {"src": ">", "dest": "out.>"},
            }
            created = await api(clients[0], "$JS.API.STREAM.CREATE.F", config)
            at = rfc3339(clock.time_ns() + 1_000_000_000)
            headers = {"Nats-Schedule": f"@at {at}", "Nats-Schedule-Target": "F.out"}
            reply = await clients[1].request("F.schedule", b"body", timeout=2, headers=headers)
            assert json.loads(reply.data)["seq"] == 1
            assert cluster.step_down("F") != created["cluster"]["leader"]
            clock.advance(2)
            fired = await eventually(
                lambda: api(clients[2], "$JS.API.STREAM.INFO.F"),
                lambda info: info["state"]["last_seq"] >= 2,
                what="the schedule fired",
            )
            assert (fired["state"]["messages"], fired["state"]["first_seq"], fired["state"]["last_seq"]) == (1, 2, 2)
            reply = await clients[0].request("F.after", b"after", timeout=2)
            assert json.loads(reply.data)["seq"] == 3
            await _probed(clients, heard, "out.F.>")
            assert [[data for data in got if not data.startswith(b"probe")] for got in heard] == [
                [b"body", b"body", b"after"]
            ] * 3
        finally:
            for client in clients:
                await client.close()


async def test_a_schedule_its_leader_fired_as_its_node_died_is_fired_by_the_next_leader() -> None:
    """The followers met the schedule too (in flight, waiting for the leader's message): the new leader fires it."""
    clock = ManualClock()
    async with Cluster(size=3, jetstream=True, clock=clock, seed=5) as cluster:
        config = {"name": "F", "subjects": ["F.>"], "num_replicas": 3, "allow_msg_schedules": True}
        nc = await nats.connect(cluster.url(0))
        created = await api(nc, "$JS.API.STREAM.CREATE.F", config)
        old = created["cluster"]["leader"]
        await nc.close()
        nc = await nats.connect(cluster.url(next(name for name in ("n1", "n2", "n3") if name != old)))
        try:
            at = rfc3339(clock.time_ns() + 1_000_000_000)
            headers = {"Nats-Schedule": f"@at {at}", "Nats-Schedule-Target": "F.out"}
            assert json.loads((await nc.request("F.schedule", b"body", timeout=2, headers=headers)).data)["seq"] == 1
            clock.advance(2)  # due on every replica at once: the leader's message not yet proposed
            await cluster.kill(old)
            clock.advance(1)
            fired = await eventually(
                lambda: api(nc, "$JS.API.STREAM.INFO.F"),
                lambda info: "state" in info and info["state"]["last_seq"] >= 2,
                what="the schedule fired",
            )
            assert (fired["state"]["messages"], fired["state"]["last_seq"]) == (1, 2)
            assert fired["cluster"]["leader"] != old
            assert json.loads((await nc.request("F.after", b"", timeout=2)).data)["seq"] == 3
        finally:
            await nc.close()
