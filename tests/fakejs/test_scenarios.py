"""The shipped fault scenarios, as a nats-py client sees them, and what an ADR-37 consume must do.

Each scenario in ``fakejs/scenarios/`` is started the way a test suite
would start it (the ``@pytest.mark.fakejs(scenario=...)`` marker, or
``fakejs_server.scenario(...)`` during a test) and then driven with
nats-py: raw pull requests where the wire matters, and the ADR-37
``Consume()`` of :mod:`tests.harness.consume` where the point is what the
consume algorithm has to do about it (stop, warn, reset its pending counts,
pull again).  Time-driven parts run on a manual clock moved with
``fakejs_server.advance``; real-time waits are bounded polls, never fixed
sleeps.  The last part covers scenario files that cannot run: they are
refused, naming file, line and key, by the loader and by ``fakejs
--scenario``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs.targets.handles import FakeJS
from fakejs.testkit.scenarios import ScenarioError, load_scenario, load_scenario_text, shipped_names
from tests.harness.consume import NS, STATUS, Consume
from tests.harness.js import api

SHIPPED = (
    "consumer-deleted",
    "disconnect",
    "heartbeats-stop",
    "leadership-change",
    "max-waiting-exceeded",
    "pin-timeout",
    "server-restart",
)


# -- helpers ----------------------------------------------------------------------------------


async def eventually(check: Callable[[], Any], timeout: float = 3.0, what: str = "condition") -> Any:
    """Poll ``check()`` in the test's loop until it is truthy (a bound on the test, not a delay)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = check()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"{what} not met within {timeout}s")
        await asyncio.sleep(0.005)


class Link:
    """A nats-py connection whose disconnect and reconnect events reach the consumes made on it.

    nats-py reports reconnects on the connection (``disconnected_cb`` /
    ``reconnected_cb``), not on subscriptions; an ADR-37 consume needs them,
    so they are forwarded to every :class:`Consume` started through
    :meth:`consume`.  Reconnect attempts are quick (50 ms apart) and never
    give up, so a test waits only for the server.
    """

    def __init__(self) -> None:
        self.nc: Client | None = None
        self.consumes: list[Consume] = []
        self.disconnects = 0
        self.reconnected_to: list[str] = []
        self.errors: list[Exception] = []
        self.before_repull: Callable[[], None] | None = None

    async def open(self, url: str) -> Client:
        self.nc = await nats.connect(
            url,
            reconnect_time_wait=0.05,
            max_reconnect_attempts=-1,
            disconnected_cb=self._disconnected,
            reconnected_cb=self._reconnected,
            error_cb=self._error,
        )
        return self.nc

    @property
    def url(self) -> str:
        assert self.nc is not None and self.nc.connected_url is not None
        return self.nc.connected_url.netloc

    async def consume(self, stream: str, consumer: str, **options: Any) -> Consume:
        assert self.nc is not None
        consume = Consume(self.nc, stream, consumer, **options)
        await consume.start()
        self.consumes.append(consume)
        return consume

    async def close(self) -> None:
        for consume in self.consumes:
            consume.done.set()
            await consume.stop()
        if self.nc is not None:
            await self.nc.close()

    async def _disconnected(self) -> None:
        self.disconnects += 1
        for consume in self.consumes:
            await consume.disconnected()

    async def _reconnected(self) -> None:
        self.reconnected_to.append(self.url)
        if self.before_repull is not None:
            self.before_repull()
        for consume in self.consumes:
            await consume.reconnected()

    async def _error(self, exc: Exception) -> None:
        self.errors.append(exc)  # the dropped connection (EOF, refused reconnects) is expected here


@pytest.fixture
async def link() -> AsyncIterator[Link]:
    handle = Link()
    try:
        yield handle
    finally:
        await handle.close()


class Puller:
    """One pull "client": raw ``CONSUMER.MSG.NEXT`` requests on its own inbox, collecting what comes back."""

    def __init__(self, nc: Client, stream: str, consumer: str) -> None:
        self.nc = nc
        self.subject = f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}"
        self.inbox = nc.new_inbox()
        self.got: list[Msg] = []

    async def start(self) -> Puller:
        async def on_msg(msg: Msg) -> None:
            self.got.append(msg)

        await self.nc.subscribe(self.inbox, cb=on_msg)
        return self

    async def pull(self, **body: Any) -> None:
        await self.nc.publish(self.subject, json.dumps(body).encode(), reply=self.inbox)
        await self.nc.flush()

    def messages(self) -> list[Msg]:
        return [m for m in self.got if not (m.headers and STATUS in m.headers)]

    def statuses(self) -> list[tuple[str, str]]:
        return [
            (m.headers[STATUS], m.headers.get("Description", "")) for m in self.got if m.headers and STATUS in m.headers
        ]


async def publish(nc: Client, subject: str, payloads: list[bytes]) -> None:
    js = nc.jetstream()
    for payload in payloads:
        await js.publish(subject, payload)


def payloads(consume: Consume) -> list[bytes]:
    return [m.data for m in consume.received]


# -- the shipped set --------------------------------------------------------------------------


def test_every_shipped_scenario_loads_and_is_covered_here() -> None:
    """Each shipped scenario file loads cleanly, and each has a test below."""
    assert tuple(shipped_names()) == SHIPPED
    for name in SHIPPED:
        scenario = load_scenario(name)
        assert scenario.name == name
        assert scenario.description.strip()
        assert scenario.streams and scenario.consumers


# -- consumer-deleted -------------------------------------------------------------------------


@pytest.mark.fakejs(scenario="consumer-deleted")
async def test_consumer_deleted_ends_the_consume(fakejs_server: FakeJS, link: Link) -> None:
    """The consumer goes away under a waiting pull: the pull gets "409 Consumer Deleted".

    ADR-37 lists it as a terminal error: the consume concludes with it and
    never pulls again.  The consumer is gone for good (``CONSUMER.INFO``
    answers 10014), while its stream stays.
    """
    nc = await link.open(fakejs_server.url)
    consume = await link.consume("ORDERS", "worker", max_messages=10, expires=30.0, heartbeat=5.0)
    await asyncio.wait_for(consume.done.wait(), 3)

    assert consume.error == "Consumer Deleted"
    assert consume.statuses == [("409", "Consumer Deleted")]
    assert consume.warnings == [] and consume.received == []
    await nc.flush()
    assert consume.requests == 1  # terminal: no new pull
    info = await api(nc, "$JS.API.CONSUMER.INFO.ORDERS.worker")
    assert info["error"] == {"code": 404, "err_code": 10014, "description": "consumer not found"}
    stream = await api(nc, "$JS.API.STREAM.INFO.ORDERS")
    assert stream["config"]["name"] == "ORDERS" and stream["state"]["consumer_count"] == 0


# -- disconnect -------------------------------------------------------------------------------


@pytest.mark.fakejs(clock="manual", scenario="disconnect")
async def test_disconnect_consume_repulls_after_reconnect(fakejs_server: FakeJS, link: Link) -> None:
    """The server drops the client after its second delivery; nats-py reconnects to the same URL.

    The pull made on the old connection died with it (the server holds no
    waiting pull when the client is back), so an ADR-37 consume must publish
    a new pull on reconnect -- with its pending counts reset, as the old
    pull will never answer -- and it then gets the rest.  Whatever delivery
    the server did not see acknowledged before the drop (acks sent as the
    connection goes down are usually lost with it) comes back once the
    scenario's 1 s ``ack_wait`` (plus the 1 ms nats-server adds to every
    ack deadline) has passed -- on the manual clock, at once.
    """
    nc = await link.open(fakejs_server.url)
    first_url = link.url
    waiting_at_reconnect: list[list[dict[str, Any]]] = []
    link.before_repull = lambda: waiting_at_reconnect.append(
        fakejs_server.consumer_state("ORDERS", "worker")["waiting"]
    )
    await publish(nc, "orders.new", [b"%d" % i for i in range(1, 6)])

    consume = await link.consume("ORDERS", "worker", max_messages=10, expires=30.0, heartbeat=5.0)
    await eventually(lambda: link.reconnected_to, what="reconnect")
    await eventually(lambda: len(consume.received) >= 5, what="the rest after the re-pull")

    assert link.disconnects == 1 and link.reconnected_to == [first_url]
    assert nc.stats["reconnects"] == 1
    fired = fakejs_server.call(lambda: list(fakejs_server.server.control.faults.fired_log))
    assert [(e["do"], e["point"], e["context"]["seq"]) for e in fired] == [("disconnect", "consumer.deliver", 2)]
    assert waiting_at_reconnect == [[]]  # nothing left to deliver on: the consume must pull again
    assert consume.reconnects == 1 and consume.requests == 2
    assert payloads(consume) == [b"1", b"2", b"3", b"4", b"5"]
    assert consume.error == "" and consume.missed_heartbeats == 0

    # Once the acks of the re-pulled messages are in, what the server still counts as unacknowledged predates the drop.
    await nc.flush()
    server = fakejs_server.server
    await fakejs_server.wait_for(
        lambda: all(p["stream_seq"] <= 2 for p in server.consumer_state("ORDERS", "worker")["pending_acks"])
    )
    unacked = {p["stream_seq"] for p in fakejs_server.consumer_state("ORDERS", "worker")["pending_acks"]}

    fakejs_server.advance(0.999)
    assert fakejs_server.consumer_state("ORDERS", "worker")["redeliveries_queued"] == []
    fakejs_server.advance(0.002)  # past ack_wait + 1 ms
    await eventually(lambda: len(consume.received) == 5 + len(unacked), what="redelivery")
    again = consume.received[5:]
    assert {m.metadata.sequence.stream for m in again} == unacked
    assert all(m.metadata.num_delivered == 2 for m in again)
    await nc.flush()
    await fakejs_server.wait_for(lambda: server.consumer_state("ORDERS", "worker")["pending_acks"] == [])
    info = await api(nc, "$JS.API.CONSUMER.INFO.ORDERS.worker")
    assert (info["num_pending"], info["num_ack_pending"]) == (0, 0)
    assert info["delivered"]["stream_seq"] == 5


# -- pin-timeout ------------------------------------------------------------------------------


@pytest.mark.fakejs(clock="manual", scenario="pin-timeout")
async def test_pin_timeout_old_pin_refused_next_pull_pinned(fakejs_server: FakeJS) -> None:
    """A pinned_client group's pin expires after the first delivery (ADR-42).

    Client 1 is pinned by its first pull (``Nats-Pin-Id`` on the delivery)
    and then loses the pin as after ``priority_timeout`` -- the UNPINNED
    advisory says ``"timeout"``.  Its next pull, still naming the old id,
    is refused with "423 Nats-Wrong-Pin-Id" once there is something to
    deliver, and client 2's pull without an id is pinned with a new id.
    What a consume must do about the 423: forget its pin id (and, as nats.go
    does, its pending counts) and pull again without an id -- that pull
    waits while another client holds the pin.
    """
    nc = await nats.connect(fakejs_server.url)
    try:
        advisories: list[Msg] = []

        async def on_advisory(msg: Msg) -> None:
            advisories.append(msg)

        await nc.subscribe("$JS.EVENT.ADVISORY.CONSUMER.*.JOBS.pool", cb=on_advisory)
        one = await Puller(nc, "JOBS", "pool").start()
        two = await Puller(nc, "JOBS", "pool").start()
        expires = 30 * NS  # manual clock: never, unless moved

        await one.pull(batch=1, expires=expires, group="A")
        await publish(nc, "jobs.a", [b"job-1"])
        await eventually(lambda: one.messages(), what="first delivery")
        first_pin = one.messages()[0].headers["Nats-Pin-Id"]
        assert first_pin
        await eventually(
            lambda: any(m.subject.startswith("$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.") for m in advisories),
            what="UNPINNED advisory",
        )
        assert fakejs_server.consumer_state("JOBS", "pool")["pinned_id"] == ""

        await one.pull(batch=1, expires=expires, group="A", id=first_pin)  # client 1 still believes it is pinned
        await two.pull(batch=5, expires=expires, group="A")
        await publish(nc, "jobs.a", [b"job-2"])
        await eventually(lambda: one.statuses() and two.messages(), what="423 and the new pin")

        assert one.statuses() == [("423", "Nats-Wrong-Pin-Id")]
        refused = next(m for m in one.got if m.headers and m.headers.get(STATUS) == "423")
        assert refused.headers["Nats-Pending-Messages"] == "1"
        delivered = two.messages()[0]
        second_pin = delivered.headers["Nats-Pin-Id"]
        assert delivered.data == b"job-2" and second_pin and second_pin != first_pin
        assert fakejs_server.consumer_state("JOBS", "pool")["pinned_id"] == second_pin

        # Client 1 drops its id and pulls again: it waits; client 2 keeps getting the work.
        await one.pull(batch=1, expires=expires, group="A")
        await publish(nc, "jobs.a", [b"job-3"])
        await eventually(lambda: len(two.messages()) == 2, what="third delivery")
        assert two.messages()[1].headers["Nats-Pin-Id"] == second_pin
        assert len(one.messages()) == 1
        assert [w["group"] for w in fakejs_server.consumer_state("JOBS", "pool")["waiting"]] == ["A", "A"]

        def pin_events() -> list[tuple[str, dict[str, Any]]]:
            kinds = [(m.subject.split(".")[4], m) for m in advisories]
            return [(kind, json.loads(m.data)) for kind, m in kinds if kind in ("PINNED", "UNPINNED")]

        await nc.flush()
        await eventually(lambda: len(pin_events()) == 3, what="advisories")
        kinds = pin_events()
        assert [kind for kind, _ in kinds] == ["PINNED", "UNPINNED", "PINNED"]
        assert kinds[0][1]["pinned_id"] == first_pin and kinds[2][1]["pinned_id"] == second_pin
        unpinned = kinds[1][1]
        assert unpinned["type"] == "io.nats.jetstream.advisory.v1.consumer_group_unpinned"
        assert (unpinned["stream"], unpinned["consumer"], unpinned["group"], unpinned["reason"]) == (
            "JOBS",
            "pool",
            "A",
            "timeout",
        )
    finally:
        await nc.close()


# -- server-restart ---------------------------------------------------------------------------


@pytest.mark.fakejs(clock="manual", scenario="server-restart")
async def test_server_restart_consume_continues_after_reconnect(fakejs_server: FakeJS, link: Link) -> None:
    """One second of server time in, the server restarts and stays down half a second.

    Before it goes, the server answers the waiting pull "409 Server
    Shutdown" with its pending counts (as nats-server does): not terminal,
    the consume subtracts them.  The file-backed stream and consumer
    survive with their messages and ack state; nats-py reconnects to the
    same URL, and the consume -- whose pulls died with the old server --
    pulls again and carries on.  The manual clock decides when the restart
    happens and when the server is back.
    """
    nc = await link.open(fakejs_server.url)
    first_url = link.url
    await publish(nc, "orders.new", [b"1", b"2", b"3"])
    consume = await link.consume("ORDERS", "worker", max_messages=10, expires=30.0, heartbeat=5.0)
    await eventually(lambda: len(consume.received) == 3, what="first deliveries")
    await nc.flush()
    await fakejs_server.wait_for(
        lambda: fakejs_server.server.consumer_state("ORDERS", "worker")["ack_floor"]["stream_seq"] == 3
    )

    fakejs_server.advance(1.0)  # the scenario's restart is due
    await eventually(lambda: link.disconnects == 1, what="disconnect")
    server = fakejs_server.server
    await fakejs_server.wait_for(lambda: not server.accepting and server.clock.next_deadline() == pytest.approx(1.5))
    assert link.reconnected_to == []  # down until the clock says otherwise
    fakejs_server.advance(0.5)  # down_for
    await eventually(lambda: link.reconnected_to, what="reconnect")

    assert link.reconnected_to == [first_url]
    assert consume.statuses == [("409", "Server Shutdown")] and consume.warnings == ["409 Server Shutdown"]
    # Pulls: the first; one after the 409 (its counts were subtracted), as the connection went down; one on reconnect.
    assert consume.reconnects == 1 and consume.requests == 3
    await publish(nc, "orders.new", [b"4", b"5", b"6"])
    await eventually(lambda: len(consume.received) == 6, what="deliveries after the restart")
    assert payloads(consume) == [b"1", b"2", b"3", b"4", b"5", b"6"]
    assert [m.metadata.num_delivered for m in consume.received] == [1] * 6
    assert consume.error == ""

    await nc.flush()
    await fakejs_server.wait_for(lambda: fakejs_server.server.consumer_state("ORDERS", "worker")["pending_acks"] == [])
    stream = await api(nc, "$JS.API.STREAM.INFO.ORDERS")
    assert stream["config"]["storage"] == "file"
    assert (stream["state"]["messages"], stream["state"]["last_seq"]) == (6, 6)
    info = await api(nc, "$JS.API.CONSUMER.INFO.ORDERS.worker")
    assert info["delivered"]["stream_seq"] == 6 and info["ack_floor"]["stream_seq"] == 6
    # The re-pull on reconnect waits on the new server, and so does the pull published after the 409
    # if nats-py had already buffered it for the reconnect (it is lost if it went out on the old socket).
    assert info["num_waiting"] in (1, 2)


# -- heartbeats-stop --------------------------------------------------------------------------


@pytest.mark.fakejs(scenario="heartbeats-stop")
async def test_heartbeats_stop_consume_warns_and_keeps_going(fakejs_server: FakeJS, link: Link) -> None:
    """Idle heartbeats stop after the first one.

    The consume's heartbeat timer (reset by anything that arrives) runs
    past twice the idle heartbeat: ADR-37 says warn, and that heartbeat
    errors are not terminal.  The pull itself is still there, so messages
    published later still arrive.  (Real clock: the heartbeat is 0.1 s.)
    """
    nc = await link.open(fakejs_server.url)
    consume = await link.consume("ORDERS", "worker", max_messages=10, expires=10.0, heartbeat=0.1)
    await eventually(lambda: consume.heartbeats == 1, what="the first heartbeat")
    await eventually(lambda: consume.missed_heartbeats >= 1, what="a missed-heartbeat warning")

    assert consume.heartbeats == 1
    assert not consume.done.is_set() and consume.error == ""
    assert consume.requests == 1 and consume.statuses == []
    dropped = fakejs_server.call(
        lambda: [e for e in fakejs_server.server.control.faults.fired_log if e["do"] == "drop"]
    )
    assert dropped and all(e["point"] == "consumer.heartbeat" for e in dropped)

    await publish(nc, "orders.new", [b"a", b"b", b"c"])
    await eventually(lambda: len(consume.received) == 3, what="messages after the warning")
    assert payloads(consume) == [b"a", b"b", b"c"]
    assert consume.error == "" and consume.heartbeats == 1


# -- leadership-change ------------------------------------------------------------------------


@pytest.mark.fakejs(scenario="leadership-change")
async def test_leadership_change_answers_the_first_pull(fakejs_server: FakeJS) -> None:
    """The first pull is answered "409 Leadership Change", with no pending counts; the next is served.

    Without ``Nats-Pending-Messages`` there is nothing to subtract: a consume
    that only subtracts would keep counting the whole batch as pending.
    """
    nc = await nats.connect(fakejs_server.url)
    try:
        await publish(nc, "orders.new", [b"x"])
        puller = await Puller(nc, "ORDERS", "worker").start()
        await puller.pull(batch=5, expires=NS)
        await eventually(lambda: puller.got, what="the answer to the first pull")
        assert puller.statuses() == [("409", "Leadership Change")] and puller.messages() == []
        refusal = puller.got[0].headers
        assert "Nats-Pending-Messages" not in refusal and "Nats-Pending-Bytes" not in refusal
        assert fakejs_server.consumer_state("ORDERS", "worker")["waiting"] == []  # the pull is gone

        await puller.pull(batch=1, expires=NS)
        await eventually(lambda: puller.messages(), what="the message, to the second pull")
        assert [m.data for m in puller.messages()] == [b"x"]
        assert puller.statuses() == [("409", "Leadership Change")]
    finally:
        await nc.close()


async def test_leadership_change_consume_resets_pending_and_repulls(fakejs_server: FakeJS, link: Link) -> None:
    """Started during the test with ``fakejs_server.scenario``: the consume's first pull hits the leader move.

    "409 Leadership Change" is a warning, not an error: the consume resets
    its pending counts (the old leader's pulls are gone; nats.go does the
    same), pulls again at once, and every message arrives.
    """
    started = fakejs_server.scenario("leadership-change")
    assert started["scenario"] == "leadership-change" and len(started["faults"]) == 1
    nc = await link.open(fakejs_server.url)
    await publish(nc, "orders.new", [b"%d" % i for i in range(1, 8)])

    consume = await link.consume("ORDERS", "worker", max_messages=10, expires=5.0, heartbeat=1.0)
    await eventually(lambda: len(consume.received) == 7, what="every message")

    assert consume.statuses[0] == ("409", "Leadership Change")
    assert consume.warnings == ["409 Leadership Change"]
    assert consume.error == "" and not consume.done.is_set()
    # The refused pull (10, forgotten on the 409); a full one (10); at the threshold, after 5 deliveries, 5 more.
    # Had the 409's batch stayed counted, pending would have stayed above the threshold and nothing been pulled.
    assert consume.requests == 3
    assert payloads(consume) == [b"%d" % i for i in range(1, 8)]
    assert consume.pending_messages == 10 - 5 + 5 - 2
    assert fakejs_server.state()["faults"] == []  # the scenario's one-shot fault is spent


# -- max-waiting-exceeded ---------------------------------------------------------------------


@pytest.mark.fakejs(scenario="max-waiting-exceeded")
async def test_max_waiting_exceeded_second_pull_refused(fakejs_server: FakeJS) -> None:
    """With ``max_waiting = 1`` a second waiting pull is answered "409 Exceeded MaxWaiting".

    A warning in ADR-37: the first pull is untouched and still served.
    """
    nc = await nats.connect(fakejs_server.url)
    try:
        one = await Puller(nc, "ORDERS", "worker").start()
        two = await Puller(nc, "ORDERS", "worker").start()
        await one.pull(batch=1, expires=5 * NS)
        await two.pull(batch=1, expires=5 * NS)
        await eventually(lambda: two.statuses(), what="the refusal")

        assert two.statuses() == [("409", "Exceeded MaxWaiting")]
        refusal = two.got[0].headers
        assert "Nats-Pending-Messages" not in refusal
        info = await api(nc, "$JS.API.CONSUMER.INFO.ORDERS.worker")
        assert info["config"]["max_waiting"] == 1 and info["num_waiting"] == 1

        await publish(nc, "orders.new", [b"first"])
        await eventually(lambda: one.messages(), what="delivery to the waiting pull")
        assert [m.data for m in one.messages()] == [b"first"] and one.statuses() == []
        assert two.messages() == []
    finally:
        await nc.close()


@pytest.mark.fakejs(scenario="max-waiting-exceeded")
async def test_max_waiting_exceeded_with_heartbeats_is_silent(fakejs_server: FakeJS, link: Link) -> None:
    """A consume always pulls with idle heartbeats -- and then nats-server drops an excess pull silently.

    No 409 reaches the consume: its only signal is missed heartbeats
    (a warning, not terminal).  To recover it must pull again on a missed
    heartbeat, with its pending counts reset (as nats.go does); once the
    only waiting slot is free, that pull is taken and messages flow.
    """
    nc = await link.open(fakejs_server.url)
    holder = await Puller(nc, "ORDERS", "worker").start()
    await holder.pull(batch=1, expires=30 * NS)  # takes the only slot

    consume = await link.consume(
        "ORDERS", "worker", max_messages=4, expires=10.0, heartbeat=0.1, repull_on_missed_heartbeat=True
    )
    await eventually(lambda: consume.missed_heartbeats >= 1, what="a missed heartbeat")
    assert consume.statuses == [] and consume.heartbeats == 0
    assert consume.error == "" and not consume.done.is_set()
    assert consume.requests >= 2  # pulled again after the missed heartbeat
    waiting = fakejs_server.consumer_state("ORDERS", "worker")["waiting"]
    assert [w["reply"] for w in waiting] == [holder.inbox]

    await publish(nc, "orders.new", [b"for-the-holder"])  # ends the holder's pull: the slot is free
    await eventually(lambda: holder.messages(), what="the holder's message")
    await fakejs_server.wait_for(
        lambda: (
            [w["reply"] for w in fakejs_server.server.consumer_state("ORDERS", "worker")["waiting"]] == [consume.inbox]
        )
    )
    await publish(nc, "orders.new", [b"a", b"b"])
    await eventually(lambda: len(consume.received) == 2, what="messages to the consume")
    assert payloads(consume) == [b"a", b"b"]
    assert consume.statuses == [] and consume.error == ""


# -- starting a scenario ----------------------------------------------------------------------


def _setup_and_faults(fakejs_server: FakeJS) -> tuple[list[tuple[str, list[str]]], list[dict[str, Any]]]:
    state = fakejs_server.state()
    streams = [(s["name"], [c["name"] for c in s["consumers"]]) for s in state["streams"]]
    faults = [{k: v for k, v in f.items() if k != "id"} for f in state["faults"]]
    return streams, faults


@pytest.mark.fakejs(scenario="consumer-deleted")
async def test_marker_starts_the_scenario_before_the_test(fakejs_server: FakeJS) -> None:
    """``@pytest.mark.fakejs(scenario=...)``: setup and faults are in place when the test body starts."""
    streams, faults = _setup_and_faults(fakejs_server)
    assert streams == [("ORDERS", ["worker"])]
    assert faults == [
        {
            "do": "delete_consumer",
            "on": "pull.request",
            "match": {"stream": "ORDERS", "consumer": "worker"},
            "args": {"stream": "ORDERS", "consumer": "worker"},
            "after": 0,
            "times": 1,
            "delay": 0.0,
            "fired": 0,
        }
    ]
    assert fakejs_server.call(lambda: fakejs_server.server.control.scenario.name) == "consumer-deleted"


async def test_scenario_method_starts_the_same_thing_mid_test(fakejs_server: FakeJS) -> None:
    """``fakejs_server.scenario(name)``: nothing before the call, then the same setup and faults as the marker gives."""
    assert _setup_and_faults(fakejs_server) == ([], [])
    started = fakejs_server.scenario("consumer-deleted")
    assert started["scenario"] == "consumer-deleted" and len(started["faults"]) == 1
    streams, faults = _setup_and_faults(fakejs_server)
    assert streams == [("ORDERS", ["worker"])]
    assert [(f["do"], f["on"]) for f in faults] == [("delete_consumer", "pull.request")]


async def test_scenario_from_a_file_path(fakejs_server: FakeJS, tmp_path: Path) -> None:
    """A scenario need not be shipped: a path to a TOML file works the same way, and its steps fire."""
    path = tmp_path / "slow-api.toml"
    path.write_text(
        'name = "slow-api"\n'
        '[[setup.streams]]\nname = "S"\nsubjects = ["s.>"]\nstorage = "memory"\n'
        '[[steps]]\non = "api.request"\nmatch = { subject = "$JS.API.STREAM.INFO.*" }\ndo = "fail_api"\nargs = { error = "unavailable" }\n'
    )
    assert fakejs_server.scenario(str(path))["scenario"] == "slow-api"
    nc = await nats.connect(fakejs_server.url)
    try:
        failed = await api(nc, "$JS.API.STREAM.INFO.S")
        assert failed["error"]["err_code"] == 10076  # JSNotEnabledErr
        assert (await api(nc, "$JS.API.STREAM.INFO.S"))["config"]["name"] == "S"  # one-shot
    finally:
        await nc.close()


# -- scenario files that cannot run -----------------------------------------------------------

STREAM = '[[setup.streams]]\nname = "S"\nsubjects = ["s.>"]\n\n'


@pytest.mark.parametrize(
    "text,line,key,words",
    [
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\non = "pull.request"\ndo = "explode"\n',
            8,
            "steps[0].do",
            "unknown action 'explode'",
            id="unknown-action",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\nat = 1.0\ndo = "restart"\n\n[[steps]]\nat = 2.0\ndo = "reboot"\n',
            12,
            "steps[1].do",
            "unknown action 'reboot'",
            id="unknown-action-in-second-step",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\non = "pull.request"\ndo = "drop"\n',
            8,
            "steps[0].do",
            "unknown action 'drop' for 'pull.request'",
            id="change-not-allowed-at-point",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\nat = 1.0\ndo = "restart"\nwhen = 2\n',
            9,
            "steps[0].when",
            "unknown step key 'when'",
            id="unknown-step-key",
        ),
        pytest.param(
            'name = "x"\nretries = 3\n' + STREAM,
            2,
            "",
            "unknown key 'retries'",
            id="unknown-top-key",
        ),
        pytest.param(
            'name = "x"\n[setup]\nstream = []\n',
            3,
            "",
            "unknown setup key 'stream'",
            id="unknown-setup-key",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\non = "pull.request"\nat = 1.0\ndo = "restart"\n',
            7,
            "steps[0].on",
            "exactly one trigger",
            id="both-on-and-at",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\ndo = "restart"\n',
            6,
            "steps[0].on",
            "exactly one trigger",
            id="no-trigger",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\non = "pull.requests"\ndo = "restart"\n',
            7,
            "steps[0].on",
            "unknown hook point 'pull.requests'",
            id="unknown-hook-point",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\nat = -1.0\ndo = "restart"\n',
            7,
            "steps[0].at",
            "'at' must be a number of seconds >= 0",
            id="negative-at",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\nat = 1.0\ndo = "restart"\n\ntimes = -1\n',
            10,
            "steps[0].times",
            "'times' must be >= 1",
            id="bad-times",
        ),
        pytest.param(
            'name = "x"\nclock = "fast"\n',
            2,
            "",
            "'clock' must be",
            id="bad-clock",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\non = "pull.request"\nmatch = { subject = "s.a" }\ndo = "ignore"\n',
            8,
            "steps[0].match",
            "cannot match on subject",
            id="unknown-match-key",
        ),
        pytest.param(
            'name = "x"\n' + STREAM + '[[steps]]\non = "pull.request"\nafter = "two"\ndo = "ignore"\n',
            8,
            "steps[0].after",
            "after",
            id="wrongly-typed-value",
        ),
    ],
)
def test_bad_scenario_file_is_refused_naming_file_line_and_key(
    tmp_path: Path, text: str, line: int, key: str, words: str
) -> None:
    """A scenario that cannot run is refused at load time; the error says where (file:line) and which key."""
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(str(path))
    message = str(caught.value)
    where = f"{path}:{line}"
    assert message.startswith(f"{where} ({key}): " if key else f"{where}: "), message
    assert words in message


def test_bad_scenario_is_refused_by_the_controller_too(fakejs_server: FakeJS, tmp_path: Path) -> None:
    """Starting a broken file on a running server raises the same error and changes nothing."""
    path = tmp_path / "bad.toml"
    path.write_text('name = "x"\n' + STREAM + '[[steps]]\non = "pull.request"\ndo = "explode"\n')
    with pytest.raises(ScenarioError, match=r"bad\.toml:8 \(steps\[0\]\.do\): unknown action 'explode'"):
        fakejs_server.scenario(str(path))
    assert fakejs_server.state()["streams"] == [] and fakejs_server.state()["faults"] == []


def test_unknown_scenario_name_lists_the_shipped_ones() -> None:
    """A name that is neither a file nor a shipped scenario is refused, listing what is shipped."""
    with pytest.raises(ScenarioError, match="no scenario file 'leader-change'") as caught:
        load_scenario("leader-change")
    assert all(name in str(caught.value) for name in SHIPPED)


def test_toml_syntax_error_names_the_file() -> None:
    """Not TOML at all: the file and tomllib's line and column."""
    with pytest.raises(ScenarioError, match=r"^here\.toml: .*line 2"):
        load_scenario_text('name = "x"\n[[steps]\n', "here.toml")


# -- fakejs --scenario ------------------------------------------------------------------------


def _fakejs(*args: str) -> list[str]:
    return [sys.executable, "-m", "fakejs", "-a", "127.0.0.1", "-p", "-1", *args]


async def _ready(process: subprocess.Popen[bytes], log_path: Path, timeout: float = 15.0) -> int:
    """Wait for "Server is ready" in the log file; returns the port from the listen line."""
    deadline = time.monotonic() + timeout
    log = ""
    while "Server is ready" not in log:
        if process.poll() is not None:
            raise AssertionError(f"fakejs exited with {process.returncode}:\n{log}")
        if time.monotonic() > deadline:
            raise AssertionError(f"not ready within {timeout}s:\n{log}")
        await asyncio.sleep(0.01)
        log = log_path.read_text() if log_path.exists() else ""
    return int(log.split("Listening for client connections on 127.0.0.1:")[1].split()[0])


async def _terminate(process: subprocess.Popen[bytes]) -> int:
    process.terminate()
    return int(await asyncio.to_thread(process.wait, 10))


def test_cli_refuses_a_bad_scenario_with_status_2(tmp_path: Path) -> None:
    """``fakejs --scenario FILE`` checks the file before listening: a bad one exits 2 with the error."""
    path = tmp_path / "bad.toml"
    path.write_text('name = "x"\n' + STREAM + '[[steps]]\nat = 1.0\non = "client.connect"\ndo = "disconnect"\n')
    done = subprocess.run(_fakejs("--scenario", str(path)), capture_output=True, text=True, timeout=20, check=False)
    assert done.returncode == 2
    assert f"{path}:8 (steps[0].on): a fault needs exactly one trigger" in done.stderr
    assert "Server is ready" not in done.stderr + done.stdout


async def test_cli_runs_a_good_scenario(tmp_path: Path) -> None:
    """A good file: the server starts ("Server is ready"), with the scenario's setup and faults in place for the first client."""
    path = tmp_path / "good.toml"
    path.write_text(
        'name = "good"\n'
        + STREAM
        + '[[steps]]\non = "pull.request"\ndo = "reply_status"\nargs = { code = 409, text = "Leadership Change" }\n'
    )
    log_path = tmp_path / "server.log"
    process = subprocess.Popen(_fakejs("-js", "-sd", str(tmp_path), "-l", str(log_path), "--scenario", str(path)))
    try:
        port = await _ready(process, log_path)
        nc = await nats.connect(f"nats://127.0.0.1:{port}")
        try:
            info = await api(nc, "$JS.API.STREAM.INFO.S")
            assert info["config"]["subjects"] == ["s.>"]
            created = await api(
                nc, "$JS.API.CONSUMER.CREATE.S.C", {"stream_name": "S", "config": {"durable_name": "C"}}
            )
            assert "error" not in created
            reply = await nc.request("$JS.API.CONSUMER.MSG.NEXT.S.C", b'{"batch":1,"no_wait":true}', timeout=2)
            assert reply.headers is not None and reply.headers["Description"] == "Leadership Change"
        finally:
            await nc.close()
    finally:
        rc = await _terminate(process)
    assert rc == 0


async def test_cli_scenario_with_a_store_dir_still_to_create(tmp_path: Path) -> None:
    """``-sd`` naming a directory that does not exist yet: created, as nats-server does, and the file-backed scenario runs."""
    log_path = tmp_path / "server.log"
    store = tmp_path / "new" / "store"
    process = subprocess.Popen(_fakejs("-js", "-sd", str(store), "-l", str(log_path), "--scenario", "server-restart"))
    try:
        port = await _ready(process, log_path)
        nc = await nats.connect(f"nats://127.0.0.1:{port}")
        try:
            info = await api(nc, "$JS.API.STREAM.INFO.ORDERS")
            assert info["config"]["storage"] == "file"
        finally:
            await nc.close()
        assert store.is_dir()
    finally:
        await _terminate(process)
