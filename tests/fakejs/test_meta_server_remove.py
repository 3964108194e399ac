"""What the meta leader hears of the servers of a JetStream replicated across servers: a server stopped is shown
``offline`` in the stream infos (and not once it runs again), and ``$JS.API.SERVER.REMOVE`` from the system
account takes a server out of ``_meta_`` with nats-server's answers and errors."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from fakejs.core.users import User
from fakejs.jetstream.replication import peer_id
from tests.harness.replicated import LearningServers, formed, publish, request, wait

pytestmark = pytest.mark.cluster

NAMES = ["n1", "n2", "n3"]
USERS = [User(name="sys", password="sys", account="$SYS"), User(name="a", password="a")]


@pytest.fixture
async def servers(tmp_path: Path) -> AsyncIterator[LearningServers]:
    started = LearningServers(tmp_path, users=USERS)
    try:
        for name in NAMES:
            await started.start(name)
        await wait(lambda: formed(started, NAMES))
        yield started
        for server in started.running():
            assert server.errors == []
    finally:
        await started.stop()


def meta_leader(servers: LearningServers) -> str:
    return next(name for name in NAMES if name not in servers.down and servers.share(name).is_meta_leader)


async def remove(system: Client, body: Any) -> dict[str, Any]:
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    reply = await system.request("$JS.API.SERVER.REMOVE", payload, timeout=5)
    answer: dict[str, Any] = json.loads(reply.data)
    return answer


async def test_server_remove_answers_as_nats_server_and_takes_the_server_out_of_meta(
    servers: LearningServers,
) -> None:
    leader = meta_leader(servers)
    system = await nats.connect(servers.servers[leader].url, user="sys", password="sys")
    ordinary = await nats.connect(servers.servers[leader].url, user="a", password="a")
    try:
        kind = "io.nats.jetstream.api.v1.meta_server_remove_response"
        empty = await remove(system, b"")
        assert empty == {"type": kind, "error": {"code": 400, "err_code": 10003, "description": "bad request"}}
        invalid = await remove(system, b"nope")  # nats-server 2.15.1's text
        assert invalid["error"] == {
            "code": 400,
            "err_code": 10025,
            "description": "invalid JSON: invalid character 'o' in literal null (expecting 'u') at offset 2",
        }
        stranger = await remove(system, {"peer": "n9"})
        assert stranger == {
            "type": kind,
            "error": {"code": 400, "err_code": 10044, "description": "server is not a member of the cluster"},
        }
        with pytest.raises(nats.errors.TimeoutError):  # not the system account: no answer at all
            await ordinary.request("$JS.API.SERVER.REMOVE", b'{"peer": "n1"}', timeout=0.5)
        gone = next(name for name in NAMES if name != leader)
        advisories = await system.subscribe("$JS.EVENT.ADVISORY.SERVER.REMOVED")
        await system.flush()
        assert await remove(system, {"peer": gone}) == {"type": kind, "success": True}
        advisory = json.loads((await advisories.next_msg(timeout=5)).data)  # sent by the removed server
        assert advisory["type"] == "io.nats.jetstream.advisory.v1.server_removed"
        assert (advisory["server"], advisory["cluster"]) == (gone, "C")
        staying = [name for name in NAMES if name != gone]
        assert servers.share(leader).group.voters == {peer_id(name) for name in staying}
        await wait(lambda: all(servers.share(name).machine.state.peers[peer_id(gone)].removed for name in NAMES))
        await wait(lambda: all(servers.share(name).group.voters == {peer_id(n) for n in staying} for name in staying))
        again = await remove(system, {"peer_id": peer_id(gone)})
        assert again["error"]["err_code"] == 10044
    finally:
        await system.close()
        await ordinary.close()


async def test_a_stopped_server_is_shown_offline_in_stream_info(servers: LearningServers) -> None:
    leader = meta_leader(servers)
    nc = await nats.connect(servers.servers[leader].url, user="a", password="a")
    try:
        created = await request(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "num_replicas": 3})
        assert created.get("error") is None, created
        info = await request(nc, "$JS.API.STREAM.INFO.S")
        stopped = next(replica["name"] for replica in info["cluster"]["replicas"] if replica["name"] != leader)
        assert all("offline" not in replica for replica in info["cluster"]["replicas"])
        await servers.kill(stopped, orderly=True)
        await wait(lambda: servers.share(leader).machine.state.peers[peer_id(stopped)].offline)
        info = await request(nc, "$JS.API.STREAM.INFO.S")
        shown = {replica["name"]: replica for replica in info["cluster"]["replicas"]}
        assert shown[stopped]["offline"] is True
        # nats-server 2.15.1 after a SIGTERM: {"name", "current", "offline": true, "active", "peer"} ("lag" when behind)
        assert [key for key in shown[stopped] if key != "lag"] == ["name", "current", "offline", "active", "peer"]
        await servers.start(stopped)
        await wait(lambda: not servers.share(leader).machine.state.peers[peer_id(stopped)].offline)
        info = await request(nc, "$JS.API.STREAM.INFO.S")
        assert all("offline" not in replica for replica in info["cluster"]["replicas"])
    finally:
        await nc.close()


async def test_a_removed_server_s_streams_move_to_another_server(tmp_path: Path) -> None:
    servers = LearningServers(tmp_path / "four", users=USERS)
    names = [*NAMES, "n4"]
    try:
        for name in names:
            await servers.start(name)
        await wait(lambda: formed(servers, names))
        leader = next(name for name in names if servers.share(name).is_meta_leader)
        nc = await nats.connect(servers.servers[leader].url, user="a", password="a")
        system = await nats.connect(servers.servers[leader].url, user="sys", password="sys")
        try:
            created = await request(
                nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "num_replicas": 3}
            )
            assert created.get("error") is None, created
            durable = {"stream_name": "S", "config": {"durable_name": "D", "ack_policy": "explicit"}}
            assert (await request(nc, "$JS.API.CONSUMER.CREATE.S.D", durable)).get("error") is None
            for index in range(2):
                assert (await publish(nc, f"s.{index}", b"x"))["seq"] == index + 1
            peers = servers.share(leader).assigned("S").group.peers
            held = [name for name in names if peer_id(name) in peers]
            gone = next(name for name in held if name != leader)
            spare = next(name for name in names if name not in held)
            assert (await remove(system, {"peer": gone}))["success"] is True
            wanted = {peer_id(name) for name in held if name != gone} | {peer_id(spare)}

            def moved() -> bool:
                assignment = servers.share(leader).assigned("S")
                replica = servers.share(spare).replicas.replicas.get("S")
                return (
                    set(assignment.group.peers) == wanted
                    and replica is not None
                    and replica.stream.state()["messages"] == 2
                )

            await wait(moved)
            info = await request(nc, "$JS.API.STREAM.INFO.S")
            shown = {replica["name"] for replica in info["cluster"]["replicas"]} | {info["cluster"]["leader"]}
            assert shown == {name for name in names if peer_id(name) in wanted}
            await wait(lambda: servers.share(spare).consumers.replicas.get(("S", "D")) is not None)
            consumer = servers.share(leader).consumer_assignment("S", "D")
            assert set(consumer.group.peers) == wanted  # the consumer follows its stream
            assert (await publish(nc, "s.2", b"x"))["seq"] == 3
        finally:
            await nc.close()
            await system.close()
    finally:
        await servers.stop()


async def test_meta_leader_step_down_hands_the_meta_group_over(servers: LearningServers) -> None:
    leader = meta_leader(servers)
    system = await nats.connect(servers.servers[leader].url, user="sys", password="sys")
    try:
        kind = "io.nats.jetstream.api.v1.meta_leader_stepdown_response"

        async def step_down(body: Any) -> dict[str, Any]:
            payload = json.dumps(body).encode() if body is not None else b""
            reply = await system.request("$JS.API.META.LEADER.STEPDOWN", payload, timeout=5)
            answer: dict[str, Any] = json.loads(reply.data)
            return answer

        itself = await step_down({"placement": {"preferred": leader}})
        assert itself == {
            "type": kind,
            "error": {"code": 400, "err_code": 10005, "description": f'preferred server "{leader}" is already leader'},
        }
        target = next(name for name in NAMES if name != leader)
        assert await step_down({"placement": {"preferred": target}}) == {"type": kind, "success": True}
        await wait(lambda: servers.share(target).is_meta_leader)
        assert await step_down(None) == {"type": kind, "success": True}
        await wait(lambda: any(servers.share(name).is_meta_leader for name in NAMES if name != target))
    finally:
        await system.close()
