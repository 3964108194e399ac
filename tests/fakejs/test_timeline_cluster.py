"""One timeline for an in-process cluster: every node's events, on the shared clock, each with its node."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from html.parser import HTMLParser
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from fakejs import Cluster, ManualClock, Server
from fakejs.core.recorder import EVENT_KINDS
from fakejs.testkit.timeline_page import lane_keys, lanes

pytestmark = [pytest.mark.cluster, pytest.mark.fake_only]


async def api(nc: Client, subject: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    reply = await nc.request(subject, json.dumps(body).encode() if body is not None else b"", timeout=5)
    answer: dict[str, Any] = json.loads(reply.data)
    assert "error" not in answer, answer
    return answer


def node_of(cluster: Cluster, cid_server: int) -> str:
    return str(cluster.servers[cid_server].broker.name)


async def test_an_r3_stream_s_events_are_on_its_leader_s_node_and_every_node_is_merged_in_time_order() -> None:
    clock = ManualClock()
    async with Cluster(size=3, jetstream=True, seed=7, clock=clock) as cluster:
        clients = [await nats.connect(url, name=f"c{i}") for i, url in enumerate(cluster.urls)]
        try:
            created = await api(
                clients[0], "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"], "num_replicas": 3}
            )
            leader = created["cluster"]["leader"]
            consumer = await api(
                clients[1], "$JS.API.CONSUMER.CREATE.S.C", {"stream_name": "S", "config": {"durable_name": "C"}}
            )
            consumer_leader = consumer["cluster"]["leader"]
            publisher = next(i for i in range(3) if node_of(cluster, i) != leader)  # a client away from the leader
            await clients[publisher].request("s.1", b"one", timeout=5)
            inbox = clients[2].new_inbox()
            await clients[2].subscribe(inbox)
            await clients[2].publish("$JS.API.CONSUMER.MSG.NEXT.S.C", b'{"batch":2,"expires":1000000000}', reply=inbox)
            await cluster.servers[0].wait_for(lambda: cluster.timeline(kind="deliver"))
            clock.advance(2)
            await cluster.servers[0].wait_for(lambda: cluster.timeline(kind="pull.end"))

            events = cluster.timeline()
            assert {event.get("node") for event in events} >= {"n1", "n2", "n3"}
            assert [(e["time_ns"], e["index"]) for e in events] == sorted((e["time_ns"], e["index"]) for e in events)
            [publish] = cluster.timeline(kind="publish")
            assert (publish["node"], publish["seq"]) == (leader, 1)
            # the leader hears another server's client over a route: that server's name, not its client id
            assert (publish["client"], publish["client_node"]) == (0, node_of(cluster, publisher))
            assert cluster.timeline(kind="stream.create")[0]["node"] == leader
            assert cluster.timeline(kind="consumer.create")[0]["node"] == consumer_leader
            [pull] = cluster.timeline(kind="pull.request")
            assert (pull["node"], pull["client_node"]) == (consumer_leader, "n3")
            assert cluster.timeline(kind="deliver")[0]["node"] == consumer_leader
            assert [e["kind"] for e in cluster.timeline(kind="clock.advance")] == [
                "clock.advance"
            ]  # once, not per node
            assert "node" not in cluster.timeline(kind="clock.advance")[0]
            connects = {(e["node"], e["name"]) for e in cluster.timeline(kind="client.connect")}
            assert connects >= {("n1", "c0"), ("n2", "c1"), ("n3", "c2")}
            for event in events:  # each kind's fields, and the node; a client's node with a client
                extra = {"index", "kind", "time_ns", "node", "client_node"}
                assert set(event) - extra == set(EVENT_KINDS[event["kind"]][1]), event
            only_leader = cluster.timeline(node=leader, kind="publish")
            assert only_leader == cluster.timeline(kind="publish")
            assert cluster.servers[cluster.index(leader)].timeline(kind="publish")[0]["seq"] == 1  # the node's own ring
        finally:
            for nc in clients:
                await nc.close()
        assert cluster.errors == []


async def test_the_cluster_page_groups_lanes_by_node() -> None:
    clock = ManualClock()
    async with Cluster(size=3, jetstream=True, seed=7, clock=clock) as cluster:
        admin = await nats.connect(cluster.url(1))
        created = await api(admin, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s"], "num_replicas": 3})
        await admin.close()
        leader = created["cluster"]["leader"]
        nc = await nats.connect(cluster.url(leader), name="pub")  # a client of the leader's: its id is known there
        try:
            await nc.request("s", b"x", timeout=5)
            events = cluster.timeline()
            [publish] = cluster.timeline(kind="publish")
            assert lane_keys(publish) == [f"stream:S@{leader}", f"client:{publish['client']}@{leader}"]
            drawn = lanes(events)
            labels = dict(drawn)
            assert labels[f"stream:S@{leader}"] == f"{leader} · stream S"
            assert labels[f"client:{publish['client']}@{leader}"] == f"{leader} · client {publish['client']} · pub"
            nodes = [key for key, _ in drawn if key.startswith("node:") or "@" in key]
            by_node = [key.rpartition("@")[2] if "@" in key else key.partition(":")[2] for key in nodes]
            assert by_node == sorted(by_node)  # each node's lanes together, in node order

            page = cluster.timeline_page("three nodes")
            found: list[str] = []

            class Lanes(HTMLParser):
                def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
                    if tag == "div" and ("class", "lane") in attrs:
                        found.append("")

                def handle_data(self, data: str) -> None:
                    if found and not found[-1]:
                        found[-1] = data

            Lanes().feed(page)
            assert found == [label for _, label in drawn]
            assert "<title>three nodes</title>" in page
        finally:
            await nc.close()


async def test_each_node_keeps_its_own_ring_and_the_merge_keeps_their_sizes() -> None:
    async with Cluster(size=3, timeline=50) as cluster:
        clients = [await nats.connect(url) for url in cluster.urls]
        try:
            for nc in clients:
                await nc.flush()
            events = cluster.timeline(kind="client.connect")
            assert sorted(e["node"] for e in events) == ["n1", "n2", "n3"]
            indexes = [e["index"] for e in cluster.timeline()]
            assert len(set(indexes)) == len(indexes)  # one count for every node
        finally:
            for nc in clients:
                await nc.close()


async def test_a_cluster_scenario_step_is_recorded_on_its_node() -> None:
    clock = ManualClock()
    async with Cluster(size=3, jetstream=True, seed=7, clock=clock) as cluster:
        await cluster.start_scenario(
            text="""
name = "cut"

[[steps]]
name = "crash n2"
at = 1.0
do = "kill"
args = { node = "n2" }
"""
        )
        clock.advance(1)
        await cluster.servers[0].wait_for(lambda: cluster.timeline(kind="scenario.step"))
        [step] = cluster.timeline(kind="scenario.step")
        assert (step["scenario"], step["step"], step["name"], step["do"]) == ("cut", 0, "crash n2", "kill")
        assert step["node"] in ("n1", "n3")  # recorded where the cluster records its own, a running node


@pytest.mark.fakejs_cluster(jetstream=True)
async def test_the_fixtures_cluster_handle_gives_the_timeline_and_its_page(fakejs_cluster: Any) -> None:
    nc = await nats.connect(fakejs_cluster.url(0))
    try:
        created = await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "num_replicas": 3})
        events = fakejs_cluster.timeline(stream="S")
        assert [(e["kind"], e["node"]) for e in events] == [("stream.create", created["cluster"]["leader"])]
        assert "stream S" in fakejs_cluster.timeline_page("fixture", stream="S")
    finally:
        await nc.close()


async def test_a_node_s_control_api_serves_the_cluster_s_timeline() -> None:
    async with Cluster(size=3, jetstream=True, seed=7, http_port=0) as cluster:
        clients = [await nats.connect(url) for url in cluster.urls]
        try:
            await api(clients[0], "$JS.API.STREAM.CREATE.S", {"name": "S", "num_replicas": 3})

            def get(node: int, query: str) -> tuple[int, Any]:
                url = f"{cluster.servers[node].http_url}/fakejs/timeline{query}"
                try:
                    with urllib.request.urlopen(url, timeout=5) as response:
                        return response.status, json.loads(response.read())
                except urllib.error.HTTPError as exc:
                    return exc.code, json.loads(exc.read())

            status, doc = await asyncio.to_thread(get, 2, "?cluster=true&kind=client.connect")
            assert status == 200 and sorted(e["node"] for e in doc["events"]) == ["n1", "n2", "n3"]
            assert doc["size"] == 3 * 10_000
            status, doc = await asyncio.to_thread(get, 2, "?kind=client.connect")
            assert status == 200 and [e["client"] for e in doc["events"]] and "node" not in doc["events"][0]
            status, doc = await asyncio.to_thread(get, 2, "?cluster=yes")
            assert status == 400 and "cluster" in doc["error"]
            reply = await clients[1].request("$FAKEJS.TIMELINE", b'{"cluster": true, "kind": "stream"}', timeout=5)
            assert [(e["kind"], e["stream"]) for e in json.loads(reply.data)["events"]] == [("stream.create", "S")]
        finally:
            for nc in clients:
                await nc.close()


async def test_a_single_server_refuses_the_cluster_s_timeline() -> None:
    async with Server() as server:
        nc = await nats.connect(server.url)
        reply = await nc.request("$FAKEJS.TIMELINE", b'{"cluster": true}', timeout=5)
        assert "not a node of an in-process cluster" in json.loads(reply.data)["error"]
        await nc.close()
