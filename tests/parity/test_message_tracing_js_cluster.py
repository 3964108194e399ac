"""Message tracing of JetStream publishes in a three-node cluster: the stream leader's server traces the store.

Nodes ``n1``..``n3`` (tagged ``az:1``..``az:3``), a client on ``n1``, on
both targets.  Facts pinned (nats-server 2.15.1):

- a traced publish to a stream led by another server is sent there over
  the route: ``n1``'s document has an ``eg`` event of kind 1 naming the
  leader's server with hop ``1`` (and ``hops: 1``); the leader's server
  sends its own document, ``in`` of kind 1 from ``n1``, then the ``js``
  event (the subject stored under, or the error);
- a trace-only publish goes there too, is not stored, and gets no PubAck;
- the leader stores the message with the hop header, and its
  ``Nats-Trace-Dest`` set to ``trace disabled``;
- a stream led by the publisher's own server records ``js`` in that
  server's document, with no hop.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from nats.aio.subscription import Subscription

from tests.harness.cluster import interest_routed
from tests.harness.js import api
from tests.harness.js_cluster import Cluster, create, on_node, unique
from tests.harness.wait import WAIT

pytestmark = pytest.mark.cluster

SIZE = len("NATS/1.0\r\nNats-Trace-Dest: traces.x\r\n\r\n")
HOP_LINE = len("Nats-Trace-Hop: 1\r\n")


async def documents(sub: Subscription, count: int) -> dict[str, dict[str, Any]]:
    """``count`` trace documents by server name, with times and connection ids replaced."""
    found: dict[str, dict[str, Any]] = {}
    for _ in range(count):
        event = json.loads((await sub.next_msg(WAIT)).data)
        name = event["server"]["name"]
        assert event["server"]["cluster"] == "C"
        event["server"] = name
        for item in event["events"]:
            item["ts"] = "TS"
            if "cid" in item:
                item["cid"] = "ROUTE" if item["kind"] == 1 else "CLIENT"
        found[name] = event
    return found


def in_event(kind: int, name: str, subject: str) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "in", "ts": "TS", "kind": kind, "cid": "ROUTE" if kind == 1 else "CLIENT"}
    if name:
        event["name"] = name
    return event | {"acc": "$G", "subj": subject}


def js_event(stream: str, **fields: Any) -> dict[str, Any]:
    return {"type": "js", "ts": "TS", "stream": stream, **fields}


def request_block(size: int, hop: bool = False, **extra: str) -> dict[str, Any]:
    header = {"Nats-Trace-Dest": ["traces.x"], **{key: [value] for key, value in extra.items()}}
    if hop:
        header["Nats-Trace-Hop"] = ["1"]
    return {"header": dict(sorted(header.items())), "msgsize": size}


async def test_the_stream_leader_server_traces_the_store(js_cluster: Cluster) -> None:
    async with on_node(js_cluster, 0) as nc:
        stream = unique("TR")
        await create(nc, stream, placement={"tags": ["az:2"]})
        subject = f"{stream}.x"
        traces = await nc.subscribe("traces.x")
        async with on_node(js_cluster, 1) as leader_side:
            await interest_routed(leader_side, nc)  # the leader's server sends its document to n1
        ack = await nc.request(subject, b"hello", headers={"Nats-Trace-Dest": "traces.x"}, timeout=WAIT)
        assert json.loads(ack.data) == {"stream": stream, "seq": 1}
        found = await documents(traces, 2)
        route_out = {"type": "eg", "ts": "TS", "kind": 1, "cid": "ROUTE", "name": "n2", "hop": "1"}
        assert found == {
            "n1": {
                "server": "n1",
                "request": request_block(SIZE + 5),
                "hops": 1,
                "events": [in_event(0, "", subject), route_out],
            },
            "n2": {
                "server": "n2",
                "request": request_block(SIZE + 5 + HOP_LINE, hop=True),
                "events": [in_event(1, "n1", subject), js_event(stream, subject=subject)],
            },
        }
        stored = await api(nc, f"$JS.API.STREAM.MSG.GET.{stream}", {"seq": 1})
        stored_headers = b"NATS/1.0\r\nNats-Trace-Dest: trace disabled\r\nNats-Trace-Hop: 1\r\n\r\n"
        assert base64.b64decode(stored["message"]["hdrs"]) == stored_headers
        await nc.publish(subject, b"x", headers={"Nats-Trace-Dest": "traces.x", "Nats-Expected-Last-Sequence": "9"})
        found = await documents(traces, 2)
        assert found["n2"]["events"][1] == js_event(stream, error="last sequence mismatch: 9 vs 1")
        await nc.publish(subject, b"only", headers={"Nats-Trace-Dest": "traces.x", "Nats-Trace-Only": "1"})
        found = await documents(traces, 2)
        assert found["n2"]["request"]["header"]["Nats-Trace-Only"] == ["1"]
        assert found["n2"]["events"][1] == js_event(stream, subject=subject)
        refused = {"Nats-Trace-Dest": "traces.x", "Nats-Trace-Only": "1", "Nats-Expected-Last-Sequence": "9"}
        reply = await nc.request(subject, b"only", headers=refused, timeout=WAIT)
        assert json.loads(reply.data)["error"]["err_code"] == 10071
        found = await documents(traces, 2)
        assert found["n2"]["events"][1] == js_event(stream, error="last sequence mismatch: 9 vs 1")
        info = await api(nc, f"$JS.API.STREAM.INFO.{stream}", {})
        assert info["state"]["messages"] == 1


async def test_a_stream_led_here_is_traced_here(js_cluster: Cluster) -> None:
    async with on_node(js_cluster, 0) as nc:
        stream = unique("TL")
        await create(nc, stream, placement={"tags": ["az:1"]})
        subject = f"{stream}.x"
        traces = await nc.subscribe("traces.x")
        await nc.flush()
        await nc.request(subject, b"hello", headers={"Nats-Trace-Dest": "traces.x"}, timeout=WAIT)
        found = await documents(traces, 1)
        assert found["n1"]["events"][1:] == [js_event(stream, subject=subject)]
        assert "hops" not in found["n1"]
