"""Scenarios on a cluster: steps on named nodes, cluster actions on cue, the shipped cluster scenarios.

Pinned: a cluster scenario's setup is created through the shared
JetStream; a step naming a node fires only for the events that node
handles (a consumer's pulls on the node leading it, an API request on the
node it arrived on); the cluster actions (``kill``, ``shutdown``,
``restart``, ``partition``, ``heal``, ``step_down``, ``move_leader``) run
on the cluster's clock; unknown nodes are refused naming file, line and
key; a single server refuses a cluster scenario naming the feature.  The
shipped cluster scenarios do what their descriptions say, as a nats-py
client sees it: ``409 Leadership Change`` on waiting pulls at each
step-down and nothing lost on re-pulls; a pull the crashed leader held
hears nothing (no status, no heartbeat) until the election window is over,
then ``409 Leadership Change``, and a re-pull on a surviving node gets
every message; clients on a minority node get no
JetStream answers until the partition heals.  Time moves on a shared
:class:`~fakejs.ManualClock`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from fakejs import Cluster, ManualClock, Server
from fakejs.server.cluster_replication import leader_name
from fakejs.targets.fake_cluster import FakeCluster
from fakejs.testkit.scenarios import ScenarioError, load_scenario, load_scenario_text
from tests.fakejs.clients import Puller, eventually

pytestmark = pytest.mark.cluster

NODES = ("n1", "n2", "n3")
SETUP = """
cluster = { size = 3, jetstream = true }
[[setup.streams]]
name = "ORDERS"
subjects = ["orders.>"]
storage = "memory"
num_replicas = 3
[[setup.consumers]]
stream = "ORDERS"
config = { durable_name = "worker", ack_policy = "explicit" }
"""
CLUSTER_SCENARIOS = ("cluster-leader-stepdown-under-load", "cluster-node-loss-during-pull", "cluster-split-brain-heal")


async def api(nc: Client, subject: str, body: dict[str, Any] | None = None, timeout: float = 2.0) -> dict[str, Any]:
    reply = await nc.request(subject, json.dumps(body).encode() if body is not None else b"", timeout=timeout)
    answer: dict[str, Any] = json.loads(reply.data)
    return answer


async def consumer_leader(nc: Client) -> str:
    return str((await api(nc, "$JS.API.CONSUMER.INFO.ORDERS.worker"))["cluster"]["leader"])


def js_cluster(clock: ManualClock, seed: int = 1) -> Cluster:
    return Cluster(size=3, jetstream=True, clock=clock, seed=seed)


# -- loading and refusing ----------------------------------------------------------------------


def test_the_shipped_cluster_scenarios_load_as_cluster_only() -> None:
    for name in CLUSTER_SCENARIOS:
        scenario = load_scenario(name)
        assert scenario.name == name and scenario.description.strip()
        assert {key: scenario.cluster[key] for key in ("size", "jetstream")} == {"size": 3, "jetstream": True}
        assert scenario.cluster_feature() == "the 'cluster' table"
        assert scenario.streams[0]["num_replicas"] == 3 and scenario.consumers


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('cluster = { size = "3" }', "<t>:1: cluster 'size' must be a number of nodes >= 1"),
        ("cluster = { nodes = 3 }", "<t>:1: unknown cluster key 'nodes'"),
        ('[[steps]]\nat = 1.0\ndo = "heal"\nnode = 2', "<t>:4 (steps[0].node): 'node' must be a node's name"),
        ('[[steps]]\nat = 1.0\ndo = "explode"', "<t>:3 (steps[0].do): unknown action 'explode'"),
    ],
)
def test_broken_cluster_keys_are_refused_with_file_and_line(text: str, error: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        load_scenario_text(text, "<t>")
    assert str(caught.value).startswith(error), caught.value


@pytest.mark.parametrize(
    ("step", "feature"),
    [
        ('[[steps]]\nat = 1.0\ndo = "heal"', "the cluster action 'heal' (steps[0])"),
        ('[[steps]]\nat = 1.0\ndo = "kill"\nargs = { node = "n2" }', "the cluster action 'kill' (steps[0])"),
        ('[[steps]]\nat = 1.0\ndo = "restart"\nargs = { node = "n2" }', "the cluster action 'restart' (steps[0])"),
        ('[[steps]]\nat = 1.0\ndo = "disconnect"\nnode = "n2"', "steps[0].node"),
        ("cluster = { size = 3 }", "the 'cluster' table"),
    ],
)
async def test_a_single_server_refuses_a_cluster_scenario_naming_the_feature(step: str, feature: str) -> None:
    async with Server() as server:
        with pytest.raises(ScenarioError) as caught:
            server.control.start_scenario(text=step)
        assert str(caught.value) == (
            f"<request>: {feature} needs a cluster: start the scenario on a fakejs.Cluster "
            "(start_scenario) or with fakejs --cluster_size N -js --scenario"
        )
        assert server.control.state()["faults"] == []


async def test_unknown_nodes_and_a_wrong_size_are_refused_by_the_cluster() -> None:
    async with js_cluster(ManualClock()) as cluster:
        with pytest.raises(ScenarioError) as caught:
            await cluster.start_scenario(text='[[steps]]\nat = 1.0\ndo = "disconnect"\nnode = "n7"')
        assert str(caught.value) == "<request>:4 (steps[0].node): unknown node 'n7' (nodes: n1, n2, n3)"
        with pytest.raises(ScenarioError) as caught:
            await cluster.start_scenario(
                text='[[steps]]\nat = 1.0\ndo = "partition"\nargs = { groups = [["n1"], ["x"]] }'
            )
        assert str(caught.value) == "<request>:4 (steps[0].args): unknown node 'x' in args (nodes: n1, n2, n3)"
        with pytest.raises(ScenarioError, match="the scenario needs 5 nodes, the cluster has 3"):
            await cluster.start_scenario(text="cluster = { size = 5 }")
    async with Cluster(size=3, clock=ManualClock()) as plain:
        with pytest.raises(ScenarioError, match="needs the cluster's JetStream"):
            await plain.start_scenario("cluster-split-brain-heal")


# -- node targeting ---------------------------------------------------------------------------------


async def test_a_pull_fires_the_steps_of_the_node_leading_the_consumer() -> None:
    """Steps per node answer with their node's name: the answer names the consumer's leader, before and after a move."""
    steps = "".join(
        f'[[steps]]\non = "pull.request"\nnode = "{node}"\ntimes = 0\ndo = "reply_status"\n'
        f'args = {{ code = 408, text = "{node}" }}\n'
        for node in NODES
    )
    async with js_cluster(ManualClock()) as cluster:
        started = await cluster.start_scenario(text=SETUP + steps)
        assert [fault["node"] for fault in started["faults"]] == list(NODES)
        nc = await nats.connect(cluster.url("n1"))
        try:
            puller = await Puller(nc, "ORDERS", "worker").start()
            for _ in range(2):
                leader = await consumer_leader(nc)
                await puller.pull(batch=1, expires=30_000_000_000)
                await eventually(lambda: puller.got, what="the answer")
                assert puller.statuses() == [("408", leader)]
                puller.got.clear()
                other = next(node for node in NODES if node != leader)
                cluster.move_leader("ORDERS", other, "worker")
        finally:
            await nc.close()


async def test_an_api_step_fires_on_the_node_the_request_arrived_on() -> None:
    step = '[[steps]]\non = "api.request"\nnode = "n3"\ntimes = 0\ndo = "fail_api"\nargs = { error = "unavailable" }\n'
    async with js_cluster(ManualClock()) as cluster:
        await cluster.start_scenario(text=SETUP + step)
        clients = {node: await nats.connect(cluster.url(node)) for node in NODES}
        try:
            for node, nc in clients.items():
                info = await api(nc, "$JS.API.STREAM.INFO.ORDERS")
                failed = "error" in info
                assert failed == (node == "n3"), (node, info)
        finally:
            for nc in clients.values():
                await nc.close()


async def test_a_server_action_on_a_named_node_acts_there_only() -> None:
    step = '[[steps]]\nat = 1.0\nnode = "n2"\ndo = "disconnect"\n'
    clock = ManualClock()
    async with js_cluster(clock) as cluster:
        await cluster.start_scenario(text=step)
        closed: list[str] = []
        clients = []
        for node in NODES:

            async def gone(node: str = node) -> None:
                closed.append(node)

            clients.append(await nats.connect(cluster.url(node), allow_reconnect=False, closed_cb=gone))
        clock.advance(1.0)
        await eventually(lambda: closed, what="a client closed")
        await asyncio.sleep(0.05)
        assert closed == ["n2"]
        for nc in clients:
            await nc.close()


# -- the cluster actions ----------------------------------------------------------------------------

ACTIONS = """
[[steps]]
at = 1.0
do = "kill"
args = { node = "n3" }
[[steps]]
at = 2.0
do = "restart"
args = { node = "n3" }
[[steps]]
at = 3.0
do = "partition"
args = { groups = [["n1"], ["n2", "n3"]] }
[[steps]]
at = 4.0
do = "heal"
[[steps]]
at = 5.0
do = "step_down"
args = { stream = "ORDERS" }
[[steps]]
at = 6.0
do = "move_leader"
args = { stream = "ORDERS", consumer = "worker", node = "n2" }
[[steps]]
at = 7.0
do = "shutdown"
node = "n2"
"""


async def test_every_cluster_action_runs_on_the_cluster_clock() -> None:
    clock = ManualClock()
    async with js_cluster(clock) as cluster:
        await cluster.start_scenario(text=SETUP + ACTIONS)

        def running() -> list[str]:
            return [server.broker.name for server in cluster.running]

        def stream_leader() -> str:
            return leader_name(cluster.running, "ORDERS")

        clock.advance(1.0)
        await eventually(lambda: running() == ["n1", "n2"] and cluster.meshed(), what="n3 killed")
        clock.advance(1.0)
        await eventually(lambda: running() == list(NODES) and cluster.meshed(), what="n3 back")
        clock.advance(1.0)
        await eventually(lambda: "n1: no routes" in cluster.describe() and cluster.meshed(), what="n1 cut off")
        clock.advance(1.0)
        await eventually(lambda: "n1: n2, n3" in cluster.describe() and cluster.meshed(), what="healed")
        before = stream_leader()
        clock.advance(1.0)
        assert stream_leader() not in ("", before)
        clock.advance(1.0)
        assert leader_name(cluster.running, "ORDERS", "worker") == "n2"
        clock.advance(1.0)  # the step's node is the one shut down
        await eventually(lambda: running() == ["n1", "n3"] and cluster.meshed(), what="n2 shut down")
        await eventually(lambda: leader_name(cluster.running, "ORDERS", "worker") in ("n1", "n3"), what="a successor")
        assert cluster.errors == []


async def test_a_failing_cluster_action_is_recorded() -> None:
    clock = ManualClock()
    async with js_cluster(clock) as cluster:
        await cluster.start_scenario(text='[[steps]]\nat = 1.0\ndo = "step_down"\nargs = { stream = "NONE" }\n')
        clock.advance(1.0)
        assert [str(error.exception) for error in cluster.errors] == ["\"no running server leads the stream 'NONE'\""]
        cluster.servers[0].take_errors()


# -- the shipped cluster scenarios ------------------------------------------------------------------


async def test_leader_stepdowns_under_load_answer_waiting_pulls_and_lose_nothing() -> None:
    clock = ManualClock()
    async with js_cluster(clock, seed=5) as cluster:
        await cluster.start_scenario("cluster-leader-stepdown-under-load")
        nc = await nats.connect(cluster.url("n1"))
        try:
            js = nc.jetstream()
            puller = await Puller(nc, "ORDERS", "worker").start()
            leaders = [await consumer_leader(nc)]
            await puller.pull(batch=100, expires=60_000_000_000)
            sent = 0
            for tick in range(4):
                for _ in range(5):
                    sent += 1
                    await js.publish("orders.new", str(sent).encode())
                await eventually(lambda sent=sent: len(puller.messages()) == sent, what="the messages so far")
                if tick == 3:
                    break
                clock.advance(0.5)
                await eventually(lambda tick=tick: len(puller.statuses()) == tick + 1, what="409 Leadership Change")
                leaders.append(await consumer_leader(nc))
                await puller.pull(batch=100, expires=60_000_000_000)  # re-pull at once, as ADR-37 says
            assert puller.statuses() == [("409", "Leadership Change")] * 3
            assert [int(m.data) for m in puller.messages()] == list(range(1, 21))
            assert all(a != b for a, b in itertools.pairwise(leaders))
        finally:
            await nc.close()


async def test_node_loss_silences_the_pull_until_the_election_and_a_repull_elsewhere_gets_everything() -> None:
    """The crashed leader's pull hears nothing (no heartbeat) for the 5 s election, then 409; a re-pull gets all."""
    clock = ManualClock()
    async with js_cluster(clock, seed=2) as cluster:
        await cluster.start_scenario("cluster-node-loss-during-pull")
        probe = await nats.connect(cluster.url("n1"))
        leader = await consumer_leader(probe)
        await probe.close()
        survivor = next(node for node in NODES if node != leader)
        nc = await nats.connect(cluster.url(survivor))
        try:
            held = await Puller(nc, "ORDERS", "worker").start()
            await held.pull(batch=10, expires=30_000_000_000, idle_heartbeat=1_000_000_000)
            await eventually(lambda: leader not in [s.broker.name for s in cluster.running], what="the leader killed")
            await cluster.wait_meshed()
            await nc.jetstream().publish("orders.1", b"one")
            await nc.jetstream().publish("orders.2", b"two")
            clock.advance(2.5)  # past 2 x idle_heartbeat: an ADR-37 consume warns now
            await nc.flush()
            await asyncio.sleep(0.05)
            assert held.got == []  # no status, no heartbeat, no message: the dead leader held that pull
            clock.advance(2.6)  # the election is over
            await eventually(lambda: held.got, what="the new leader's word")
            assert held.statuses() == [("409", "Leadership Change")] and held.messages() == []
            new_leader = await consumer_leader(nc)
            assert new_leader not in ("", leader)
            repull = await Puller(nc, "ORDERS", "worker").start()
            await repull.pull(batch=10, expires=30_000_000_000)
            await eventually(lambda: len(repull.messages()) == 2, what="the re-pull's messages")
            assert [m.data for m in repull.messages()] == [b"one", b"two"]
            info = await api(nc, "$JS.API.STREAM.INFO.ORDERS")
            assert info["state"]["messages"] == 2 and info["cluster"]["leader"] != leader
        finally:
            await nc.close()


async def test_split_brain_minority_gets_no_jetstream_answers_until_healed() -> None:
    clock = ManualClock()
    async with js_cluster(clock, seed=3) as cluster:
        await cluster.start_scenario("cluster-split-brain-heal")
        minority = await nats.connect(cluster.url("n1"))
        majority = await nats.connect(cluster.url("n2"))
        try:
            assert (await api(minority, "$JS.API.STREAM.INFO.ORDERS"))["config"]["name"] == "ORDERS"
            clock.advance(1.0)
            await eventually(lambda: "n1: no routes" in cluster.describe() and cluster.meshed(), what="the cut")
            with pytest.raises((nats.errors.NoRespondersError, nats.errors.TimeoutError)):
                await api(minority, "$JS.API.STREAM.INFO.ORDERS", timeout=0.3)
            with pytest.raises((nats.errors.NoRespondersError, nats.errors.TimeoutError)):
                await minority.request("orders.x", b"lost", timeout=0.3)
            assert (await majority.jetstream().publish("orders.y", b"kept")).seq == 1
            info = await api(majority, "$JS.API.STREAM.INFO.ORDERS")
            assert info["cluster"]["leader"] in ("n2", "n3")
            clock.advance(5.0)
            await eventually(lambda: "n1: n2, n3" in cluster.describe() and cluster.meshed(), what="healed")
            healed = await api(minority, "$JS.API.STREAM.INFO.ORDERS")
            assert healed["state"]["messages"] == 1
        finally:
            await minority.close()
            await majority.close()


# -- the command line ----------------------------------------------------------------------------------


async def _ports(directory: Path, process: subprocess.Popen[bytes]) -> dict[str, list[str]]:
    path = directory / f"nats-server_{process.pid}.ports"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 20
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert loop.time() < deadline, "no ports file"
        await asyncio.sleep(0.05)
    ports: dict[str, list[str]] = json.loads(path.read_text())
    return ports


async def test_the_command_line_starts_a_cluster_scenario(tmp_path: Path) -> None:
    argv = ["--cluster_size", "3", "-js", "--scenario", "cluster-split-brain-heal", "-p", "-1"]
    process = subprocess.Popen(
        [sys.executable, "-m", "fakejs", *argv, "--ports_file_dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    try:
        ports = await _ports(tmp_path, process)
        assert len(ports["nats"]) == 3
        nc = await nats.connect(ports["nats"][1])  # n2: on the majority side of the coming cut
        info = await api(nc, "$JS.API.STREAM.INFO.ORDERS")
        assert info["config"]["num_replicas"] == 3
        await nc.close()
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
    assert process.returncode == 0


def test_the_command_line_refuses_a_cluster_scenario_on_one_server() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fakejs", "-js", "--scenario", "cluster-split-brain-heal", "-p", "-1"],
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1
    assert b"the 'cluster' table needs a cluster: give --cluster_size N -js" in done.stderr


# -- the thread handle and the fixture's handle ------------------------------------------------------


def test_the_fixture_handle_starts_a_scenario_and_its_steps_follow_advance() -> None:
    """``FakeCluster.scenario`` (what ``fakejs_cluster`` gives a test) goes through ``ThreadedCluster.start_scenario``."""
    cluster = FakeCluster(3, clock="manual", jetstream=True, seed=4).start()
    try:
        started = cluster.scenario("cluster-leader-stepdown-under-load")
        assert started["scenario"] == "cluster-leader-stepdown-under-load" and len(started["faults"]) == 3

        def leader() -> str:
            return leader_name(cluster.threaded.cluster.running, "ORDERS", "worker")

        seen = [cluster.call(leader)]
        for _ in range(3):
            cluster.advance(0.5)
            seen.append(cluster.call(leader))
        assert all(a != b for a, b in itertools.pairwise(seen))
        assert cluster.take_errors() == []
    finally:
        cluster.stop()
