"""Faults at hook points and server actions, as a client sees them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nats
import pytest
from nats.aio.msg import Msg

from fakejs import ManualClock, Server
from fakejs.gocompat.gotime import NS
from fakejs.testkit.faults import FaultError


async def setup_js(nc: nats.NATS, consumer: dict[str, Any] | None = None, storage: str = "memory") -> None:
    reply = await nc.request(
        "$JS.API.STREAM.CREATE.S", json.dumps({"name": "S", "subjects": ["s.>"], "storage": storage}).encode()
    )
    assert "error" not in json.loads(reply.data)
    config = {"durable_name": "C", "ack_policy": "explicit", **(consumer or {})}
    reply = await nc.request("$JS.API.CONSUMER.CREATE.S.C", json.dumps({"stream_name": "S", "config": config}).encode())
    assert "error" not in json.loads(reply.data), reply.data


class Inbox:
    """Collects what arrives on one inbox (messages and status lines)."""

    def __init__(self, nc: nats.NATS) -> None:
        self.nc = nc
        self.subject = nc.new_inbox()
        self.got: list[Msg] = []

    async def start(self) -> Inbox:
        async def on_msg(msg: Msg) -> None:
            self.got.append(msg)

        await self.nc.subscribe(self.subject, cb=on_msg)
        return self

    def statuses(self) -> list[tuple[str, str]]:
        return [
            ((m.headers or {}).get("Status", ""), (m.headers or {}).get("Description", ""))
            for m in self.got
            if m.headers and "Status" in m.headers
        ]

    def data(self) -> list[bytes]:
        return [m.data for m in self.got if not (m.headers and "Status" in m.headers)]

    async def pull(self, body: dict[str, Any]) -> None:
        await self.nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.C", json.dumps(body).encode(), reply=self.subject)
        await self.nc.flush()


async def eventually(check: Any, timeout: float = 3.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met")
        await asyncio.sleep(0.005)


# -- pulls ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "text"),
    [(409, "Leadership Change"), (408, "Request Timeout"), (503, "")],
)
async def test_next_pulls_answered_with_a_chosen_status(code: int, text: str) -> None:
    async with Server() as server:
        nc = await nats.connect(server.url)
        await setup_js(nc)
        await nc.jetstream().publish("s.a", b"m")
        server.control.answer_pulls("S", "C", code, text, count=2)
        inbox = await Inbox(nc).start()
        for _ in range(3):
            await inbox.pull({"batch": 1, "expires": NS})
        await eventually(lambda: len(inbox.got) == 3)
        assert inbox.statuses() == [(str(code), text)] * 2 or inbox.statuses()[:2] == [(str(code), text)] * 2
        assert inbox.data() == [b"m"]  # the third pull is served normally
        await nc.close()


async def test_consumer_deleted_under_a_waiting_pull() -> None:
    async with Server() as server:
        nc = await nats.connect(server.url)
        await setup_js(nc)
        inbox = await Inbox(nc).start()
        await inbox.pull({"batch": 5, "expires": 30 * NS})
        await server.wait_for(lambda: server.consumer_state("S", "C")["waiting"])
        server.control.delete_consumer("S", "C")
        await eventually(lambda: inbox.got)
        assert inbox.statuses() == [("409", "Consumer Deleted")]
        await nc.close()


async def test_stream_deleted_under_a_waiting_pull() -> None:
    async with Server() as server:
        nc = await nats.connect(server.url)
        await setup_js(nc)
        inbox = await Inbox(nc).start()
        await inbox.pull({"batch": 5, "expires": 30 * NS})
        await server.wait_for(lambda: server.consumer_state("S", "C")["waiting"])
        server.control.delete_stream("S")
        await eventually(lambda: inbox.got)
        assert inbox.statuses() == [("409", "Consumer Deleted")]
        info = json.loads((await nc.request("$JS.API.STREAM.INFO.S", b"")).data)
        assert info["error"]["err_code"] == 10059
        await nc.close()


# -- deliveries and heartbeats ---------------------------------------------------------------------


async def test_dropped_delivery_comes_back_after_ack_wait() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        await setup_js(nc, {"ack_wait": 5 * NS})
        js = nc.jetstream()
        await js.publish("s.a", b"one")
        server.control.drop_deliveries("S", "C", count=1)
        inbox = await Inbox(nc).start()
        await inbox.pull({"batch": 1, "expires": 60 * NS})
        await server.wait_for(lambda: server.consumer_state("S", "C")["pending_acks"])
        assert inbox.got == []  # counted as delivered, never arrived
        await inbox.pull({"batch": 1, "expires": 60 * NS})
        clock.advance(5.1)
        await eventually(lambda: inbox.data())
        assert inbox.got[0].metadata.num_delivered == 2
        await nc.close()


async def test_delayed_delivery_waits_on_the_server_clock() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        await setup_js(nc)
        await nc.jetstream().publish("s.a", b"late")
        server.control.delay_deliveries(2.0, "S", "C", count=1)
        inbox = await Inbox(nc).start()
        await inbox.pull({"batch": 1, "expires": 60 * NS})
        await server.wait_for(lambda: server.consumer_state("S", "C")["next_stream_seq"] == 2)
        await asyncio.sleep(0.05)
        assert inbox.got == []
        clock.advance(2)
        await eventually(lambda: inbox.data() == [b"late"])
        await nc.close()


async def test_heartbeats_stop() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        await setup_js(nc)
        inbox = await Inbox(nc).start()
        await inbox.pull({"batch": 1, "expires": 60 * NS, "idle_heartbeat": 5 * NS})
        await server.wait_for(lambda: server.consumer_state("S", "C")["waiting"])
        clock.advance(5)
        await eventually(lambda: inbox.statuses() == [("100", "Idle Heartbeat")])
        server.control.stop_heartbeats("S", "C")
        clock.advance(30)
        await nc.flush()
        await asyncio.sleep(0.05)
        assert inbox.statuses() == [("100", "Idle Heartbeat")]
        await nc.close()


async def test_after_n_deliveries_trigger_runs_an_action() -> None:
    async with Server() as server:
        nc = await nats.connect(server.url)
        await setup_js(nc)
        js = nc.jetstream()
        for i in range(5):
            await js.publish("s.a", b"%d" % i)
        server.control.add_fault(
            on="consumer.deliver",
            match={"consumer": "C"},
            after=2,
            do="delete_consumer",
            args={"stream": "S", "consumer": "C"},
        )
        inbox = await Inbox(nc).start()
        await inbox.pull({"batch": 5, "expires": 5 * NS})
        await eventually(lambda: inbox.statuses())
        # The third delivery went out; right after it the consumer was deleted.
        assert inbox.data() == [b"0", b"1", b"2"]
        assert inbox.statuses() == [("409", "Consumer Deleted")]
        await nc.close()


# -- API failures --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "code", "err_code", "description"),
    [
        ("unavailable", 503, 10076, "JetStream not enabled"),
        ("insufficient_resources", 503, 10023, "insufficient resources"),
    ],
)
async def test_api_requests_fail(error: str, code: int, err_code: int, description: str) -> None:
    async with Server() as server:
        nc = await nats.connect(server.url)
        fault = server.control.fail_api(error, subject="$JS.API.STREAM.CREATE.>", count=1)
        reply = json.loads((await nc.request("$JS.API.STREAM.CREATE.S", b'{"name":"S"}')).data)
        assert reply == {
            "type": "io.nats.jetstream.api.v1.stream_create_response",
            "error": {"code": code, "err_code": err_code, "description": description},
        }
        assert fault.fired == 1
        reply = json.loads((await nc.request("$JS.API.STREAM.CREATE.S", b'{"name":"S"}')).data)
        assert reply["config"]["name"] == "S"  # only the next request failed
        await nc.close()


async def test_api_reply_rewrite_for_divergence_checks() -> None:
    async with Server() as server:
        nc = await nats.connect(server.url)
        server.control.add_fault(
            on="api.reply", match={"subject": "$JS.API.INFO"}, do="rewrite", args={"set": {"streams": 99}}, times=None
        )
        info = json.loads((await nc.request("$JS.API.INFO", b"")).data)
        assert info["streams"] == 99
        await nc.close()


# -- clients ------------------------------------------------------------------------------------


async def test_disconnect_clean_and_abrupt_then_reconnect() -> None:
    async with Server() as server:
        events: list[str] = []

        async def disconnected() -> None:
            events.append("disconnected")

        async def reconnected() -> None:
            events.append("reconnected")

        nc = await nats.connect(
            server.url, name="app", reconnect_time_wait=0.05, disconnected_cb=disconnected, reconnected_cb=reconnected
        )
        other = await nats.connect(server.url, name="bystander")
        result = server.control.disconnect("app")
        assert len(result["disconnected"]) == 1
        await eventually(lambda: events == ["disconnected", "reconnected"])
        server.control.disconnect("app", abrupt=True)
        await eventually(lambda: events.count("reconnected") == 2)
        assert other.is_connected and nc.is_connected
        await nc.close()
        await other.close()


async def test_a_connect_trigger_drops_new_clients() -> None:
    async with Server() as server:
        server.control.add_fault(on="client.connect", match={"name": "flaky"}, do="drop", times=1)
        reader, writer = await asyncio.open_connection(server.host, server.port)
        await reader.readline()  # INFO
        writer.write(b'CONNECT {"name":"flaky","verbose":false}\r\nPING\r\n')
        await writer.drain()
        rest = await reader.read()
        assert b"PONG" not in rest
        writer.close()
        fine = await nats.connect(server.url, name="flaky")  # the fault fired once
        await fine.close()


async def test_a_stalled_server_stops_answering_pings() -> None:
    async with Server() as server:
        server.control.stall()
        reader, writer = await asyncio.open_connection(server.host, server.port)
        await reader.readline()
        writer.write(b'CONNECT {"verbose":false}\r\nPING\r\n')
        await writer.drain()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(reader.readline(), 0.2)
        server.control.clear_faults()
        writer.write(b"PING\r\n")
        await writer.drain()
        assert await asyncio.wait_for(reader.readline(), 1) == b"PONG\r\n"
        writer.close()


# -- server lifecycle ------------------------------------------------------------------------------


async def test_restart_keeps_file_streams_and_the_port() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        port = server.port
        reconnected = asyncio.Event()

        async def on_reconnect() -> None:
            reconnected.set()

        nc = await nats.connect(server.url, reconnect_time_wait=0.05, reconnected_cb=on_reconnect)
        await setup_js(nc, storage="file")
        await nc.jetstream().publish("s.a", b"kept")
        server.control.restart(down_for=2)
        await eventually(lambda: not server.accepting)
        clock.advance(2)
        await asyncio.wait_for(reconnected.wait(), 5)
        assert server.port == port
        info = await nc.jetstream().consumer_info("S", "C")
        assert info.num_pending == 1
        await nc.close()


async def test_lame_duck_mode() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        reader, writer = await asyncio.open_connection(server.host, server.port)
        await reader.readline()
        writer.write(b'CONNECT {"verbose":false,"protocol":1}\r\nPING\r\n')
        await writer.drain()
        assert (await reader.readline()).startswith(b"PONG")
        await reader.readline()  # the INFO sent after the first PONG
        server.control.lame_duck(duration=30, grace=10)
        line = await asyncio.wait_for(reader.readline(), 2)
        assert line.startswith(b"INFO ") and json.loads(line[5:])["ldm"] is True
        with pytest.raises(OSError):
            await asyncio.open_connection(server.host, server.port)  # no new clients
        clock.advance(10)  # the grace period: then clients are closed
        rest = await asyncio.wait_for(reader.read(), 2)  # (a server PING may come first)
        assert reader.at_eof() and rest in (b"", b"PING\r\n")
        await asyncio.wait_for(server.finished.wait(), 2)
        writer.close()


async def test_a_timed_fault() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        await setup_js(nc)
        server.control.add_fault(at=10, do="delete_stream", args={"stream": "S"})
        clock.advance(9.9)
        assert "S" in server.jetstream.streams
        clock.advance(0.1)
        assert "S" not in server.jetstream.streams
        await nc.close()


# -- pins ---------------------------------------------------------------------------------------


async def test_expire_pin_and_unpin_send_their_advisories() -> None:
    async with Server() as server:
        nc = await nats.connect(server.url)
        await setup_js(nc, {"priority_policy": "pinned_client", "priority_groups": ["A"], "priority_timeout": 120 * NS})
        advisories: list[dict[str, Any]] = []

        async def on_advisory(msg: Msg) -> None:
            advisories.append(json.loads(msg.data))

        await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.PINNED.S.C", cb=on_advisory)
        await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.S.C", cb=on_advisory)
        await nc.jetstream().publish("s.a", b"m")
        inbox = await Inbox(nc).start()
        await inbox.pull({"batch": 1, "expires": 5 * NS, "group": "A"})
        await eventually(lambda: inbox.data())
        pinned = server.consumer_state("S", "C")["pinned_id"]
        assert pinned == inbox.got[0].headers["Nats-Pin-Id"]
        server.control.expire_pin("S", "C")
        assert server.consumer_state("S", "C")["pinned_id"] == ""
        server.control.unpin("S", "C", "A")
        await eventually(lambda: len(advisories) == 3)
        assert [(a["type"].rsplit(".", 1)[-1], a.get("reason")) for a in advisories] == [
            ("consumer_group_pinned", None),
            ("consumer_group_unpinned", "timeout"),
            ("consumer_group_unpinned", "admin"),
        ]
        await nc.close()


# -- validation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"on": "pull.arrived", "do": "drop"}, "unknown hook point 'pull.arrived'"),
        ({"on": "pull.request", "do": "explode"}, "unknown action 'explode'"),
        ({"on": "pull.request", "do": "drop"}, "unknown action 'drop' for 'pull.request'"),
        ({"on": "pull.request", "match": {"client": "x"}, "do": "ignore"}, "cannot match on client"),
        ({"do": "restart"}, "exactly one trigger"),
        ({"on": "pull.request", "at": 1, "do": "restart"}, "exactly one trigger"),
        ({"at": -1, "do": "restart"}, "'at' must be"),
        ({"on": "pull.request", "do": "ignore", "times": 0}, "'times' must be"),
    ],
)
async def test_impossible_faults_are_refused(spec: dict[str, Any], message: str) -> None:
    async with Server() as server:
        with pytest.raises(FaultError, match=message.replace("(", r"\(")):
            server.control.add_fault(**spec)
