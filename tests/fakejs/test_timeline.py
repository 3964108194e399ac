"""The timeline: what the server did, as typed events on its clock, kept in a bounded ring."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from functools import partial
from typing import Any

import nats
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig

from fakejs import ManualClock, Server
from fakejs.core.recorder import EVENT_KINDS
from fakejs.protocol import headers
from fakejs.targets.fake import FakeJS
from fakejs.testkit.timeline import Timeline, decode_headers

pytestmark = pytest.mark.fake_only


def kinds(server: Server, **filters: Any) -> list[str]:
    return [event["kind"] for event in server.timeline(**filters)]


def check_fields(events: list[dict[str, Any]]) -> None:
    """Every event carries exactly the fields its kind declares."""
    for event in events:
        declared = set(EVENT_KINDS[event["kind"]][1])
        assert set(event) - {"index", "kind", "time_ns"} == declared, event


class Pulls:
    """Raw pull requests on one inbox: what a test needs to see every status line."""

    def __init__(self, nc: nats.NATS) -> None:
        self.nc = nc
        self.inbox = nc.new_inbox()
        self.received: list[Msg] = []

    async def start(self) -> None:
        async def got(msg: Msg) -> None:
            self.received.append(msg)

        await self.nc.subscribe(self.inbox, cb=got)

    async def pull(self, consumer: str, **body: Any) -> None:
        await self.nc.publish(f"$JS.API.CONSUMER.MSG.NEXT.S.{consumer}", json.dumps(body).encode(), reply=self.inbox)
        await self.nc.flush()

    def messages(self) -> list[Msg]:
        return [msg for msg in self.received if not msg.headers or "Status" not in msg.headers]


async def setup(server: Server, ack_wait: float = 5.0) -> tuple[nats.NATS, Any]:
    nc = await nats.connect(server.url, name="tl")
    js = nc.jetstream()
    await js.add_stream(name="S", subjects=["s.>"])
    await js.add_consumer("S", ConsumerConfig(durable_name="C", ack_policy=AckPolicy.EXPLICIT, ack_wait=ack_wait))
    return nc, js


async def test_a_pull_scenario_records_each_family_with_its_fields() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc, js = await setup(server)
        for n in range(3):
            await js.publish(f"s.{n}", b"x" * n)
        pulls = Pulls(nc)
        await pulls.start()
        await pulls.pull("C", batch=3, expires=10**9)
        await server.wait_for(lambda: len(pulls.messages()) == 3)
        first, second, third = pulls.messages()
        await first.ack()
        await second.nak()
        await third.term()
        await nc.flush()
        await server.wait_for(lambda: "term" in kinds(server))
        # the nak'd message comes back on the next pull; the 408 ends a pull that finds nothing more
        await pulls.pull("C", batch=1, expires=10**9)
        await server.wait_for(lambda: len(pulls.messages()) == 4)
        await pulls.pull("C", batch=1, expires=10**9)
        await nc.flush()
        await server.wait_for(lambda: kinds(server).count("pull.request") == 3)
        clock.advance(2)
        await server.wait_for(lambda: "pull.end" in kinds(server))
        # redelivery after the ack wait, on the virtual clock
        clock.advance(6)
        await server.wait_for(lambda: "redeliver" in kinds(server, kind="redeliver", consumer="C")[1:])
        events = server.timeline()
        check_fields(events)
        by_kind: dict[str, list[dict[str, Any]]] = {}
        for event in events:
            by_kind.setdefault(event["kind"], []).append(event)
        assert [e["seq"] for e in by_kind["publish"]] == [1, 2, 3]
        assert by_kind["publish"][2]["size"] == 2 and by_kind["publish"][0]["subject"] == "s.0"
        assert by_kind["stream.create"][0]["stream"] == "S"
        assert by_kind["consumer.create"][0]["consumer"] == "C"
        first_pull = by_kind["pull.request"][0]
        assert (first_pull["batch"], first_pull["expires"], first_pull["reply"]) == (3, 10**9, pulls.inbox)
        delivered = [(e["stream_seq"], e["consumer_seq"], e["delivery_count"]) for e in by_kind["deliver"]]
        assert delivered[:4] == [(1, 1, 1), (2, 2, 1), (3, 3, 1), (2, 4, 2)]
        assert by_kind["deliver"][0]["target"] == pulls.inbox
        assert by_kind["pull.filled"][0]["reply"] == pulls.inbox
        assert [e["stream_seq"] for e in by_kind["ack"]] == [1]
        assert by_kind["nak"][0]["stream_seq"] == 2 and by_kind["nak"][0]["delay"] is None
        assert by_kind["term"][0]["stream_seq"] == 3
        causes = [(e["stream_seq"], e["cause"]) for e in by_kind["redeliver"]]
        assert causes == [(2, "nak"), (2, "ack_wait")]
        ended = by_kind["pull.end"][0]
        assert (ended["code"], ended["text"]) == (408, "Request Timeout")
        assert by_kind["client.connect"][0]["name"] == "tl"
        assert [e["seconds"] for e in by_kind["clock.advance"]] == [2, 6]
        times = [e["time_ns"] for e in events]
        assert times == sorted(times)
        assert [e["index"] for e in events] == list(range(len(events)))
        await nc.close()
        await server.wait_for(lambda: "client.disconnect" in kinds(server))


async def test_no_wait_and_heartbeats_and_refusals_end_pulls_with_their_status() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc, js = await setup(server)
        pulls = Pulls(nc)
        await pulls.start()
        await pulls.pull("C", batch=1, no_wait=True)
        await pulls.pull("C", batch=1, expires=3 * 10**9, idle_heartbeat=10**9)
        await server.wait_for(lambda: kinds(server).count("pull.request") == 2)
        clock.advance(1.5)
        await server.wait_for(lambda: "pull.heartbeat" in kinds(server))
        ack = await js.publish("s.1", b"")
        assert ack.seq == 1
        with pytest.raises(nats.js.errors.BadRequestError):
            await js.publish("s.2", b"", headers={"Nats-Expected-Last-Sequence": "7"})
        await server.wait_for(lambda: "publish.error" in kinds(server))
        ended = server.timeline(kind="pull.end")
        assert [(e["code"], e["text"]) for e in ended] == [(404, "No Messages")]
        refused = server.timeline(kind="publish.error")[0]
        assert (refused["code"], refused["err_code"], refused["subject"]) == (400, 10071, "s.2")
        assert server.timeline(kind="pull.request")[1]["heartbeat"] == 10**9
        assert "pull.end" in kinds(server, kind="pull")
        check_fields(server.timeline())
        await nc.close()


async def test_publishes_and_deliveries_carry_their_headers() -> None:
    async with Server() as server:
        nc, js = await setup(server)
        await js.publish("s.1", b"one", headers={"Trace-Id": "t-1", "Nats-Msg-Id": "m-1"})
        await js.publish("s.2", b"two")
        await nc.publish("s.3", b"three", headers={"Empty": ""})
        psub = await js.pull_subscribe("s.>", durable="C")
        msgs = await psub.fetch(3, timeout=5)
        assert len(msgs) == 3
        published = server.timeline(kind="publish")
        assert [e["headers"] for e in published] == [
            {"Trace-Id": ["t-1"], "Nats-Msg-Id": ["m-1"]},
            None,
            {"Empty": [""]},
        ]
        delivered = server.timeline(kind="deliver")
        assert [e["headers"] for e in delivered] == [e["headers"] for e in published]
        check_fields(server.timeline())
        await nc.close()


def test_a_header_block_decodes_to_lists_of_values() -> None:
    block = headers.build([("A", "1"), ("B", " spaced "), ("A", "2"), ("ü", "é")])
    assert decode_headers(block) == {"A": ["1", "2"], "B": ["spaced"], "ü": ["é"]}
    assert decode_headers(headers.build()) is None
    assert decode_headers(b"NATS/1.0 503\r\n\r\n") is None


async def test_the_ring_keeps_the_newest_events() -> None:
    async with Server(timeline=5) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"])
        for n in range(10):
            await js.publish("s.x", str(n).encode())
        events = server.timeline()
        assert len(events) == 5
        assert [e["seq"] for e in events] == [6, 7, 8, 9, 10]
        assert server.recorded.dropped == events[0]["index"] > 0
        await nc.close()


async def test_a_cleared_ring_counts_as_dropped_only_what_it_let_go_since() -> None:
    async with Server(timeline=5) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"])
        for n in range(3):
            await js.publish("s.x", str(n).encode())
        server.control.reset()  # the stream goes, and the timeline's events
        await js.add_stream(name="S", subjects=["s.>"])
        assert server.recorded.dropped == 0 and [e["kind"] for e in server.timeline()] == ["stream.create"]
        for n in range(6):
            await js.publish("s.x", str(n).encode())
        events = server.timeline()
        assert [e["seq"] for e in events] == [2, 3, 4, 5, 6]
        assert server.recorded.dropped == 2  # the stream.create and the first publish after the reset
        assert events[0]["index"] > 2  # indexes go on across the reset
        await nc.close()


def test_fields_given_by_position_read_as_fields_given_by_name() -> None:
    """``record_values`` (the per-message points: publish, deliver, ack) names its values as EVENT_KINDS lists them."""
    named, positional = Timeline(ManualClock(start_ns=0)), Timeline(ManualClock(start_ns=0))
    fields = {"client": 3, "stream": "S", "subject": "s.x", "size": 5, "seq": 9, "duplicate": False, "headers": None}
    named.record("publish", **fields)
    positional.record_values("publish", tuple(fields.values()))
    assert tuple(fields) == EVENT_KINDS["publish"][1]
    assert positional.events() == named.events() == [{"index": 0, "kind": "publish", "time_ns": 0, **fields}]
    assert positional.events(stream="S", client=3) == named.events(stream="S", client=3) != []
    assert positional.events(stream="T") == named.events(stream="T") == []


async def test_size_zero_records_nothing() -> None:
    async with Server(timeline=0) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"])
        await js.publish("s.x", b"")
        assert not server.recorded
        assert server.timeline() == []
        assert not server.broker.timeline
        await nc.close()


async def test_filters() -> None:
    async with Server() as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="A", subjects=["a"])
        await js.add_stream(name="B", subjects=["b"])
        await js.publish("a", b"")
        middle = server.timeline()[-1]["time_ns"]
        await js.publish("b", b"")
        cid = server.timeline(kind="client.connect")[0]["client"]
        assert kinds(server, stream="A") == ["stream.create", "publish"]
        assert [e["stream"] for e in server.timeline(kind="publish")] == ["A", "B"]
        assert [e["stream"] for e in server.timeline(kind="publish", client=cid)] == ["A", "B"]
        assert server.timeline(kind="publish", client=cid + 1) == []
        assert [e["stream"] for e in server.timeline(kind="stream")] == ["A", "B"]
        assert all(e["time_ns"] >= middle for e in server.timeline(since=middle))
        with pytest.raises(ValueError, match="unknown event kind"):
            server.timeline(kind="nope")
        await nc.close()


async def test_the_control_api_serves_the_timeline_over_http_and_the_wire() -> None:
    async with Server(http_port=0) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s"])
        await js.publish("s", b"hello")
        reply = await nc.request("$FAKEJS.TIMELINE", json.dumps({"kind": "publish"}).encode(), timeout=2)
        doc = json.loads(reply.data)
        assert doc["size"] == 10_000 and doc["dropped"] == 0
        assert [(e["kind"], e["seq"]) for e in doc["events"]] == [("publish", 1)]

        def get(query: str) -> tuple[int, Any]:
            try:
                with urllib.request.urlopen(f"{server.http_url}/fakejs/timeline{query}", timeout=5) as response:
                    return response.status, json.loads(response.read())
            except urllib.error.HTTPError as exc:
                return exc.code, json.loads(exc.read())

        status, doc = await asyncio.to_thread(get, "?stream=S&kind=stream")
        assert status == 200 and [e["kind"] for e in doc["events"]] == ["stream.create"]
        status, doc = await asyncio.to_thread(get, "?since=0&client=1")
        assert status == 200 and doc["events"] and all(e.get("client") == 1 for e in doc["events"])
        status, doc = await asyncio.to_thread(get, "?colour=red")
        assert status == 400 and "colour" in doc["error"]
        status, doc = await asyncio.to_thread(get, "?client=one")
        assert status == 400 and "client" in doc["error"]
        status, doc = await asyncio.to_thread(get, "?kind=nope")
        assert status == 400 and "unknown event kind" in doc["error"]
        await nc.close()


async def test_a_guarded_control_api_refuses_the_timeline_without_credentials() -> None:
    async with Server(http_port=0, control_token="s3cret") as server:

        def get() -> int:
            try:
                with urllib.request.urlopen(f"{server.http_url}/fakejs/timeline", timeout=5) as response:
                    return int(response.status)
            except urllib.error.HTTPError as exc:
                return exc.code

        assert await asyncio.to_thread(get) == 401


async def test_faults_and_a_reset_show_in_the_timeline() -> None:
    async with Server(clock=ManualClock()) as server:
        nc, _ = await setup(server)
        server.control.add_fault(on="pull.request", do="reply_status", args={"code": 503, "text": "Busy"}, name="busy")
        pulls = Pulls(nc)
        await pulls.start()
        await pulls.pull("C", batch=1)
        await server.wait_for(lambda: "pull.end" in kinds(server))
        fired = server.timeline(kind="fault")[0]
        assert (fired["name"], fired["point"], fired["do"]) == ("busy", "pull.request", "reply_status")
        assert server.timeline(kind="pull.end")[0]["code"] == 503
        server.control.reset()
        assert kinds(server) == []
        await nc.close()


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("publish"), st.integers(0, 3)),
        st.tuples(st.just("fetch"), st.integers(1, 4)),
        st.tuples(st.just("ack"), st.integers(0, 20)),
        st.tuples(st.just("nak"), st.integers(0, 20)),
    ),
    max_size=12,
)


def _pulls_ended(server: Server, count: int) -> bool:
    return len(server.timeline(kind="pull.end")) + len(server.timeline(kind="pull.filled")) >= count


async def _client_view_run(operations: list[tuple[str, int]]) -> None:
    async with Server() as server:
        nc, js = await setup(server, ack_wait=60.0)
        pulls = Pulls(nc)
        await pulls.start()
        ended = 0
        for op, arg in operations:
            if op == "publish":
                await js.publish(f"s.{arg}", b"m")
            elif op == "fetch":
                await pulls.pull("C", batch=arg, no_wait=True)
                ended += 1
                await server.wait_for(partial(_pulls_ended, server, ended))
            elif pulls.messages():
                msg = pulls.messages()[arg % len(pulls.messages())]
                await nc.publish(msg.reply, b"+ACK" if op == "ack" else b"-NAK")  # again and again, if drawn
        await nc.flush()
        sent = lambda: [e for e in server.timeline(kind="deliver") if e["target"] == pulls.inbox]  # noqa: E731
        await server.wait_for(lambda: len(pulls.messages()) == len(sent()))
        seen = [
            (msg.metadata.sequence.stream, msg.metadata.sequence.consumer, msg.metadata.num_delivered)
            for msg in pulls.messages()
        ]
        assert seen == [(e["stream_seq"], e["consumer_seq"], e["delivery_count"]) for e in sent()]
        await nc.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(OPERATIONS)
def test_every_delivery_a_client_received_is_in_the_timeline_in_order(operations: list[tuple[str, int]]) -> None:
    asyncio.run(_client_view_run(operations))


async def test_the_fixtures_handle_gives_the_timeline() -> None:
    handle = FakeJS().start()
    try:
        nc = await nats.connect(handle.url)
        await nc.jetstream().add_stream(name="S", subjects=["s"])
        assert [e["kind"] for e in handle.timeline(stream="S")] == ["stream.create"]
        await nc.close()
    finally:
        handle.stop()
