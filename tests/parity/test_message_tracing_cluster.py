"""Message tracing across routes: every server a traced message reaches sends its own trace event.

Three nodes of one kind (nats-py clients on different nodes), on both
targets.  Facts pinned (nats-server 2.15.1):

- the server the message entered on lists, after its own clients' egress
  events, one ``eg`` event per server it sent the message on to: kind 1,
  the route's ``cid``, the remote server's ``name`` and a ``hop``
  (``1``, ``2``... in sending order), and the document counts them in
  ``hops`` (between ``request`` and ``events``);
- the message goes on with a ``Nats-Trace-Hop`` header (appended after
  the others), and each receiving server sends its own document to the
  same destination: ``request.header`` has the hop, ``msgsize`` counts
  it, the ``in`` event is of kind 1 naming the sending server, its
  egress events are its own clients';
- a ``Nats-Trace-Only`` message is sent on too, and no server delivers it;
- a message with ``Nats-Trace-Origin-Account`` is not traced anywhere: the
  server logs ``Message tracing disabled because of header
  "Nats-Trace-Origin-Account" with value="A"`` and delivers it with
  ``Nats-Trace-Dest: trace disabled`` moved to the end of its headers;
- every server's ``server`` block names the cluster (after ``id``);
- ``Accept-Encoding`` (the publisher's) compresses every server's
  document: gzip, snappy (framed) or, for anything else, none with
  ``Content-Encoding: identity``.
"""

from __future__ import annotations

import gzip
import json
import secrets
from typing import Any

import cramjam
import nats
import pytest
from nats.aio.client import Client
from nats.aio.subscription import Subscription

from tests.harness.cluster import Cluster, interest_routed
from tests.harness.cluster_imports import ACCOUNTS
from tests.harness.wait import WAIT

pytestmark = pytest.mark.cluster

SERVER_KEYS = ["name", "host", "id", "cluster", "ver", "feature_flags", "jetstream", "flags", "seq", "time"]


def token() -> str:
    return secrets.token_hex(4)


class Nodes:
    """Three clients, one per node, and the names that stand for what differs from run to run."""

    def __init__(self, cluster: Cluster, clients: list[Client]) -> None:
        self.cluster = cluster
        self.clients = clients
        self.node_names = {f"{cluster.nodes[i].name}": f"n{i + 1}" for i in range(3)}
        self.cids = {(f"n{i + 1}", nc.client_id): f"c{i + 1}" for i, nc in enumerate(clients)}

    async def close(self) -> None:
        for nc in self.clients:
            await nc.close()


async def connect(cluster: Cluster) -> Nodes:
    clients = [await nats.connect(cluster.url(i), name=f"client{i + 1}") for i in range(3)]
    return Nodes(cluster, clients)


def decoded(headers: dict[str, str] | None, data: bytes) -> tuple[str, dict[str, Any]]:
    encoding = (headers or {}).get("Content-Encoding", "")
    if encoding == "gzip":
        data = gzip.decompress(data)
    elif encoding == "snappy":
        data = bytes(cramjam.snappy.decompress(data))
    return encoding, json.loads(data)


async def events(sub: Subscription, nodes: Nodes, count: int, encoding: str = "") -> dict[str, dict[str, Any]]:
    """``count`` trace documents by node, with names, cids and times replaced, hops checked and replaced."""
    found: dict[str, dict[str, Any]] = {}
    for _ in range(count):
        msg = await sub.next_msg(WAIT)
        got_encoding, event = decoded(msg.headers, msg.data)
        assert got_encoding == encoding
        server = event["server"]
        assert list(server) == SERVER_KEYS and server["ver"] == "2.15.1"
        node = nodes.node_names[server["name"]]
        event["server"] = node
        for item in event["events"]:
            item["ts"] = "TS"
            if "name" in item and item["name"] in nodes.node_names:
                item["name"] = nodes.node_names[item["name"]]
            if item["kind"] == 1:
                item["cid"] = "ROUTE"
            elif "cid" in item:
                item["cid"] = nodes.cids[(node, item["cid"])]
        found[node] = event
    hops = {
        item["name"]: item.pop("hop") for item in found["n1"]["events"] if item["type"] == "eg" and item["kind"] == 1
    }
    assert sorted(hops.values()) == [str(i + 1) for i in range(len(hops))]
    for node, hop in hops.items():
        assert found[node]["request"]["header"].pop("Nats-Trace-Hop") == [hop]
    return found


def routed(node: str, subject: str, size: int, headers: dict[str, list[str]], egress: list[Any]) -> dict[str, Any]:
    ingress = {"type": "in", "ts": "TS", "kind": 1, "cid": "ROUTE", "name": "n1", "acc": "$G", "subj": subject}
    return {"server": node, "request": {"header": headers, "msgsize": size}, "events": [ingress, *egress]}


def client_egress(cid: str, name: str, sub: str, queue: str = "") -> dict[str, Any]:
    event = {"type": "eg", "ts": "TS", "kind": 0, "cid": cid, "name": name, "sub": sub}
    if queue:
        event["queue"] = queue
    return event


def route_egress(node: str) -> dict[str, Any]:
    return {"type": "eg", "ts": "TS", "kind": 1, "cid": "ROUTE", "name": node}


def origin(subject: str, size: int, headers: dict[str, list[str]], egress: list[Any]) -> dict[str, Any]:
    ingress = {"type": "in", "ts": "TS", "kind": 0, "cid": "c1", "name": "client1", "acc": "$G", "subj": subject}
    return {
        "server": "n1",
        "request": {"header": headers, "msgsize": size},
        "hops": 2,
        "events": [ingress, *egress],
    }


HOP_LINE = len("Nats-Trace-Hop: 1\r\n")


async def scene(cluster3: Cluster) -> tuple[Nodes, str, Subscription, list[Subscription]]:
    """Client 1 listens to the traces and to ``base.x``, client 2 to ``base.x``, client 3 to ``base.*`` in a group."""
    nodes = await connect(cluster3)
    one, two, three = nodes.clients
    base = f"tr.{token()}"
    traces = await one.subscribe(f"{base}.traces.all")
    subs = [await one.subscribe(f"{base}.x"), await two.subscribe(f"{base}.x"), await three.subscribe(f"{base}.*", "q")]
    await interest_routed(one, two, three)
    return nodes, base, traces, subs


def expected_documents(base: str, headers: dict[str, list[str]], size: int) -> dict[str, dict[str, Any]]:
    subject = f"{base}.x"
    own = [client_egress("c1", "client1", subject)]
    return {
        "n1": origin(subject, size, headers, [*own, route_egress("n2"), route_egress("n3")]),
        "n2": routed("n2", subject, size + HOP_LINE, headers, [client_egress("c2", "client2", subject)]),
        "n3": routed("n3", subject, size + HOP_LINE, headers, [client_egress("c3", "client3", f"{base}.*", "q")]),
    }


def header_size(headers: dict[str, str], payload: bytes) -> int:
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return len(f"NATS/1.0\r\n{lines}\r\n") + len(payload)


async def test_every_server_traces_its_part(cluster3: Cluster) -> None:
    nodes, base, traces, subs = await scene(cluster3)
    headers = {"Nats-Trace-Dest": f"{base}.traces.all"}
    await nodes.clients[0].publish(f"{base}.x", b"hello", headers=headers)
    found = await events(traces, nodes, 3)
    assert found == expected_documents(
        base, {"Nats-Trace-Dest": [f"{base}.traces.all"]}, header_size(headers, b"hello")
    )
    assert list(found["n1"]) == ["server", "request", "hops", "events"]
    for sub in subs:
        assert (await sub.next_msg(WAIT)).data == b"hello"
    await nodes.close()


async def test_a_routed_message_carries_its_hop(cluster3: Cluster) -> None:
    nodes, base, traces, subs = await scene(cluster3)
    await nodes.clients[0].publish(f"{base}.x", b"m", headers={"Nats-Trace-Dest": f"{base}.traces.all", "A": "1"})
    found = await events(traces, nodes, 3)
    hop_of_n2 = [item for item in found["n1"]["events"] if item.get("name") == "n2"]
    assert len(hop_of_n2) == 1
    local, remote = await subs[0].next_msg(WAIT), await subs[1].next_msg(WAIT)
    assert local.headers == {"Nats-Trace-Dest": f"{base}.traces.all", "A": "1"}
    assert remote.headers is not None and list(remote.headers) == ["Nats-Trace-Dest", "A", "Nats-Trace-Hop"]
    assert remote.headers["Nats-Trace-Hop"] in ("1", "2")
    await nodes.close()


async def test_trace_only_goes_over_routes_and_is_delivered_nowhere(cluster3: Cluster) -> None:
    nodes, base, traces, subs = await scene(cluster3)
    headers = {"Nats-Trace-Dest": f"{base}.traces.all", "Nats-Trace-Only": "true"}
    await nodes.clients[0].publish(f"{base}.x", b"only", headers=headers)
    found = await events(traces, nodes, 3)
    expected = expected_documents(
        base, {"Nats-Trace-Dest": [f"{base}.traces.all"], "Nats-Trace-Only": ["true"]}, header_size(headers, b"only")
    )
    assert found == expected
    await nodes.clients[0].publish(f"{base}.x", b"after")
    for sub in subs:
        assert (await sub.next_msg(WAIT)).data == b"after"
    await nodes.close()


async def test_origin_account_header_disables_the_trace(cluster3: Cluster) -> None:
    nodes, base, traces, subs = await scene(cluster3)
    headers = {"Nats-Trace-Dest": f"{base}.traces.all", "Nats-Trace-Origin-Account": "A"}
    await nodes.clients[0].publish(f"{base}.x", b"m", headers=headers)
    for sub in subs:
        got = await sub.next_msg(WAIT)
        assert got.headers is not None
        assert list(got.headers.items()) == [("Nats-Trace-Origin-Account", "A"), ("Nats-Trace-Dest", "trace disabled")]
    await nodes.clients[0].publish(f"{base}.x", b"next", headers={"Nats-Trace-Dest": f"{base}.traces.all"})
    found = await events(traces, nodes, 3)
    assert found["n1"]["request"]["header"] == {"Nats-Trace-Dest": [f"{base}.traces.all"]}
    assert 'Message tracing disabled because of header "Nats-Trace-Origin-Account" with value="A"' in cluster3.logs()
    await nodes.close()


@pytest.mark.parametrize(
    ("accept", "encoding"), [("gzip", "gzip"), ("snappy", "snappy"), ("S2, gzip", "snappy"), ("br", "identity")]
)
async def test_accept_encoding_compresses_every_document(cluster3: Cluster, accept: str, encoding: str) -> None:
    nodes, base, traces, _ = await scene(cluster3)
    headers = {"Nats-Trace-Dest": f"{base}.traces.all", "Accept-Encoding": accept}
    await nodes.clients[0].publish(f"{base}.x", b"z", headers=headers)
    found = await events(traces, nodes, 3, encoding)
    expected = expected_documents(
        base,
        {"Accept-Encoding": [accept], "Nats-Trace-Dest": [f"{base}.traces.all"]},
        header_size(headers, b"z"),
    )
    assert found == expected
    await nodes.close()


async def test_across_accounts_and_routes(make_cluster: Any, tmp_path: Any) -> None:
    """A stream export is traced where the importer's subscriptions are; past a service import, untraced."""
    path = tmp_path / "accounts.conf"
    path.write_text(ACCOUNTS)
    cluster = make_cluster(size=2, extra=["-c", str(path)])
    a1 = await nats.connect(cluster.url(0), user="a", password="a", name="a1")
    b1 = await nats.connect(cluster.url(0), user="b", password="b", name="b1")
    a2 = await nats.connect(cluster.url(1), user="a", password="a", name="a2")
    b2 = await nats.connect(cluster.url(1), user="b", password="b", name="b2")
    traces_a, traces_b = await a1.subscribe("traces"), await b1.subscribe("traces")
    events, service = await b2.subscribe("from.a.ev.>"), await a2.subscribe("svc.>")
    await interest_routed(a1, a2)
    await interest_routed(b1, b2)
    await interest_routed(a2, a1)

    await a1.publish("ev.one", b"e", headers={"Nats-Trace-Dest": "traces"})
    names = {cluster.nodes[0].name: "n1", cluster.nodes[1].name: "n2"}
    found = {}
    for _ in range(2):
        doc = json.loads((await traces_a.next_msg(WAIT)).data)
        node = names[doc.pop("server")["name"]]
        found[node] = [(item["type"], item.get("kind"), item.get("acc"), item.get("to")) for item in doc["events"]]
        found[node + " hops"] = doc.get("hops", 0)
    assert found == {
        "n1": [("in", 0, "A", None), ("eg", 1, None, None)],
        "n1 hops": 1,
        "n2": [("in", 1, "A", None), ("se", None, "B", "from.a.ev.one")],
        "n2 hops": 0,
    }
    got = await events.next_msg(WAIT)
    assert got.headers == {"Nats-Trace-Dest": "traces", "Nats-Trace-Hop": "1"}

    await b1.publish("remote.x", b"req", headers={"Nats-Trace-Dest": "traces"})
    doc = json.loads((await traces_b.next_msg(WAIT)).data)
    assert [item["type"] for item in doc["events"]] == ["in", "si"] and "hops" not in doc
    request = await service.next_msg(WAIT)
    assert request.headers is not None
    assert list(request.headers) == ["Nats-Request-Info", "Nats-Trace-Dest"]
    assert request.headers["Nats-Trace-Dest"] == "trace disabled"
    await a1.publish("ev.two", b"e")
    assert (await events.next_msg(WAIT)).data == b"e"
    assert events.pending_msgs == 0 and traces_a.pending_msgs == 0 and traces_b.pending_msgs == 0
    for nc in (a1, b1, a2, b2):
        await nc.close()
