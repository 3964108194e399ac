"""Servers that know only their routes, as a configuration file or flags give them, form the ``_meta_`` group
the way nats-server's do: started one at a time in any order they find each other over the routes and elect a
meta leader, a server started later joins the running group, a restarted one rejoins from its store, and the
stream API is served across them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import nats
import pytest

from fakejs.jetstream.replication import peer_id
from tests.harness.replicated import LearningServers, formed, publish, request, wait

pytestmark = pytest.mark.cluster


@pytest.fixture
async def servers(tmp_path: Path) -> AsyncIterator[LearningServers]:
    started = LearningServers(tmp_path)
    try:
        yield started
        for server in started.running():
            assert server.errors == []
    finally:
        await started.stop()


@pytest.mark.parametrize("order", [["n1", "n2", "n3"], ["n3", "n1", "n2"]])
async def test_servers_started_one_by_one_form_the_meta_group_and_serve_streams(
    servers: LearningServers, order: list[str]
) -> None:
    for name in order:
        await servers.start(name)
    await wait(lambda: formed(servers, order))
    nc = await nats.connect(servers.servers[order[-1]].url)
    try:
        created = await request(
            nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "num_replicas": 3, "storage": "file"}
        )
        assert created.get("error") is None, created
        ack = await publish(nc, "s.1", b"one")
        assert ack == {"stream": "S", "seq": 1}
        info = await request(nc, "$JS.API.STREAM.INFO.S")
        assert info["state"]["messages"] == 1
        assert {replica["name"] for replica in info["cluster"]["replicas"]} | {info["cluster"]["leader"]} == set(order)
    finally:
        await nc.close()


async def test_a_server_started_later_joins_the_running_group(servers: LearningServers) -> None:
    await servers.start("n1")
    await servers.start("n2")
    await wait(lambda: formed(servers, ["n1", "n2"]))  # two routed servers: the size their routes expect
    nc = await nats.connect(servers.servers["n1"].url)
    try:
        created = await request(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "num_replicas": 2})
        assert created.get("error") is None, created
        await servers.start("n3")
        await wait(lambda: formed(servers, ["n1", "n2", "n3"]))
        assert servers.share("n3").machine.state.stream("$G", "S") is not None  # the log came with the membership
        await servers.start("n4")
        await wait(lambda: formed(servers, ["n1", "n2", "n3", "n4"]))
        created = await request(nc, "$JS.API.STREAM.CREATE.T", {"name": "T", "subjects": ["t.>"], "num_replicas": 4})
        assert created.get("error") is None, created
        assert (await publish(nc, "t.1", b"x"))["seq"] == 1
    finally:
        await nc.close()


async def test_a_restarted_server_rejoins_from_its_store(servers: LearningServers) -> None:
    for name in ("n2", "n1", "n3"):
        await servers.start(name)
    names = ["n1", "n2", "n3"]
    await wait(lambda: formed(servers, names))
    nc = await nats.connect(servers.servers["n1"].url)
    try:
        restarted = next(name for name in names if not servers.share(name).is_meta_leader and name != "n1")
        await servers.kill(restarted)
        leader = next(name for name in names if name != restarted and servers.share(name).is_meta_leader)
        # Placed only where the meta leader's messages go: once its route to the killed server is down
        await wait(lambda: not servers.share(leader).group.reaches(peer_id(restarted)))
        created = await request(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "num_replicas": 1})
        assert created.get("error") is None, created
        await servers.start(restarted)
        share = servers.share(restarted)
        assert share.group.voters == {peer_id(name) for name in names}  # its stored membership, not learned again
        await wait(lambda: formed(servers, names) and share.machine.state.stream("$G", "S") is not None)
    finally:
        await nc.close()
