"""The control API: the same operations over $FAKEJS.> requests and HTTP, plus introspection."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

import nats

from fakejs import ManualClock, Server
from fakejs.testkit.arguments import ACTION_NAMES
from fakejs.testkit.control import ACTIONS


async def control(nc: nats.NATS, subject: str, body: dict[str, Any] | None = None) -> Any:
    reply = await nc.request("$FAKEJS." + subject, json.dumps(body or {}).encode(), timeout=2)
    return json.loads(reply.data)


async def http(server: Server, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    def call() -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{server.http_url}/fakejs/{path}",
            data=data,
            method="GET" if body is None else "POST",
            headers={} if body is None else {"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            return exc.code, json.loads(raw) if raw.startswith(b"{") else raw

    return await asyncio.to_thread(call)


async def test_clock_over_nats_and_http() -> None:
    async with Server(clock=ManualClock(), http_port=0) as server:
        nc = await nats.connect(server.url)
        assert (await control(nc, "CLOCK"))["manual"] is True
        assert (await control(nc, "CLOCK.ADVANCE", {"seconds": 30}))["now"] == 30
        status, doc = await http(server, "clock/advance", {"seconds": 15})
        assert (status, doc["now"]) == (200, 45)
        status, doc = await http(server, "clock")
        assert doc["now"] == 45
        await nc.close()


async def test_clock_advances_to_the_next_timer_over_nats_and_http() -> None:
    async with Server(clock=ManualClock(), http_port=0) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s"], storage="memory", max_age=10)
        await js.publish("s", b"old")
        moved = await control(nc, "CLOCK.ADVANCE_TO_NEXT")
        assert 10 <= moved["seconds"] < 11 and moved["now"] == moved["seconds"]
        assert (await js.stream_info("S")).state.messages == 0
        status, doc = await http(server, "clock/advance_to_next", {})
        assert status == 200 and set(doc) == {"now", "seconds"}
        await nc.close()


async def test_real_clock_refuses_to_move() -> None:
    async with Server(http_port=0) as server:
        status, doc = await http(server, "clock/advance", {"seconds": 1})
        assert status == 400 and "manual clock" in doc["error"]


async def test_faults_actions_and_reset_over_nats() -> None:
    async with Server() as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"], storage="memory")
        await js.add_consumer("S", durable_name="C")
        added = await control(
            nc,
            "FAULTS.ADD",
            {
                "on": "pull.request",
                "match": {"consumer": "C"},
                "do": "reply_status",
                "args": {"code": 409, "text": "Leadership Change"},
            },
        )
        assert added["do"] == "reply_status" and added["fired"] == 0
        msg = await nc.request("$JS.API.CONSUMER.MSG.NEXT.S.C", b'{"batch":1,"no_wait":true}')
        assert (msg.headers["Status"], msg.headers["Description"]) == ("409", "Leadership Change")
        listing = await control(nc, "FAULTS")
        assert listing["faults"] == [] and listing["fired"][0]["do"] == "reply_status"
        result = await control(nc, "ACTION.DELETE_CONSUMER", {"stream": "S", "consumer": "C"})
        assert result == {"deleted": "S > C"}
        missing = await control(nc, "ACTION.DELETE_CONSUMER", {"stream": "S", "consumer": "C"})
        assert missing == {"error": "no consumer 'C' on stream 'S'"}
        assert "unknown action 'explode'" in (await control(nc, "ACTION.EXPLODE"))["error"]
        assert "unknown control operation" in (await control(nc, "NOPE"))["error"]
        await control(nc, "FAULTS.ADD", {"on": "api.request", "do": "fail_api", "times": 2})
        assert (await control(nc, "RESET")) == {"streams_deleted": 1}
        assert (await control(nc, "FAULTS"))["faults"] == []
        assert (await js.account_info()).streams == 0
        await nc.close()


async def test_scenario_over_http_and_bad_requests() -> None:
    async with Server(http_port=0) as server:
        status, doc = await http(server, "scenario/start", {"name": "leadership-change"})
        assert status == 200 and doc["scenario"] == "leadership-change"
        status, doc = await http(server, "state")
        assert [s["name"] for s in doc["streams"]] == ["ORDERS"]
        assert doc["faults"][0]["on"] == "pull.request"
        status, doc = await http(server, "scenario/start", {"toml": '[[steps]]\non = "pull.request"\ndo = "launch"\n'})
        assert status == 400 and "<request>:3 (steps[0].do)" in doc["error"] and "launch" in doc["error"]
        status, doc = await http(server, "faults/add", {"on": "nowhere", "do": "drop"})
        assert status == 400 and "unknown hook point" in doc["error"]


async def test_monitoring_still_served_next_to_control() -> None:
    async with Server(http_port=0) as server:

        def get(path: str) -> int:
            with urllib.request.urlopen(f"{server.http_url}{path}", timeout=5) as response:
                return int(response.status)

        assert await asyncio.to_thread(get, "/healthz") == 200


async def test_control_can_be_turned_off() -> None:
    async with Server(control=False, http_port=0) as server:
        nc = await nats.connect(server.url)
        try:
            await nc.request("$FAKEJS.STATE", b"", timeout=0.5)
            raise AssertionError("the control subjects should not answer")
        except nats.errors.NoRespondersError:
            pass
        status, _ = await http(server, "state")
        assert status == 404
        await nc.close()


async def test_introspection_of_consumers_and_transcripts() -> None:
    async with Server(transcripts=True) as server:
        nc = await nats.connect(server.url, name="worker")
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s.>"], storage="memory")
        for i in range(3):
            await js.publish("s.a", b"%d" % i)
        sub = await js.pull_subscribe("s.a", durable="C", stream="S")
        msgs = await sub.fetch(2)
        await msgs[0].ack_sync()
        state = server.consumer_state("S", "C")
        assert state["next_stream_seq"] == 3
        assert [(p["stream_seq"], p["deliveries"]) for p in state["pending_acks"]] == [(2, 1)]
        assert state["ack_floor"] == {"stream_seq": 1, "consumer_seq": 1}
        assert state["num_pending"] == 1
        inbox = nc.new_inbox()
        await nc.subscribe(inbox)
        await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.C", b'{"batch":5,"expires":60000000000}', reply=inbox)
        waiting = await server.wait_for(lambda: server.consumer_state("S", "C")["waiting"])
        assert waiting[0]["reply"] == inbox and waiting[0]["batch_left"] == 4  # one message went out
        whole = server.state()
        assert whole["streams"][0]["state"]["messages"] == 3
        assert [m["seq"] for m in whole["streams"][0]["messages"]] == [1, 2, 3]
        transcript = server.transcript("worker")
        assert any(line.startswith("C: CONNECT ") for line in transcript.lines())
        assert b"$JS.API.CONSUMER.MSG.NEXT.S.C" in transcript.sent_by_client()
        assert b"MSG s.a" in transcript.received_by_client()
        await nc.close()


def test_every_action_a_fault_may_name_is_a_controller_action() -> None:
    assert frozenset(ACTIONS) == ACTION_NAMES
