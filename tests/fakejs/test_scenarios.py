"""The shipped fault scenarios, as a nats-py client sees them, and what an ADR-37 consume must do.

Each scenario in ``fakejs/scenarios/`` is started the way a test suite
would start it (the ``@pytest.mark.fakejs(scenario=...)`` marker, or
``fakejs_server.scenario(...)`` during a test) and then driven with
nats-py: raw pull requests where the wire matters, and the ADR-37
``Consume()`` of :mod:`tests.harness.consume` where the point is what the
consume algorithm has to do about it (stop, warn, reset its pending counts,
pull again).  Time-driven parts run on a manual clock moved with
``fakejs_server.advance``; real-time waits are bounded polls, never fixed
sleeps.  How scenarios are started and how broken files are refused is in
:mod:`tests.fakejs.test_scenario_files`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import nats
import pytest
from nats.aio.msg import Msg

from fakejs.targets.handles import FakeJS
from fakejs.testkit.scenarios import load_scenario, shipped_names
from tests.fakejs.clients import Link, Puller, eventually, payloads, publish
from tests.harness.consume import NS, STATUS
from tests.harness.js import api
from tests.harness.scenarios import SHIPPED

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


async def _check_pin_advisories(advisories: list[Msg], first_pin: str, second_pin: str) -> None:
    """PINNED (first pin), UNPINNED (timeout), PINNED (second pin), in that order."""

    def pin_events() -> list[tuple[str, dict[str, Any]]]:
        kinds = [(m.subject.split(".")[4], m) for m in advisories]
        return [(kind, json.loads(m.data)) for kind, m in kinds if kind in ("PINNED", "UNPINNED")]

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

        await nc.flush()
        await _check_pin_advisories(advisories, first_pin, second_pin)
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
    errors are not terminal; the consume also pulls again (pending counts
    reset, as nats.go does: the conformance rule ``heartbeat-missed``).
    Messages published later still arrive.  (Real clock: the heartbeat is
    0.1 s.)
    """
    nc = await link.open(fakejs_server.url)
    consume = await link.consume("ORDERS", "worker", max_messages=10, expires=10.0, heartbeat=0.1)
    await eventually(lambda: consume.heartbeats == 1, what="the first heartbeat")
    await eventually(lambda: consume.missed_heartbeats >= 1, what="a missed-heartbeat warning")

    assert consume.heartbeats == 1
    assert not consume.done.is_set() and consume.error == ""
    assert consume.requests >= 2 and consume.statuses == []  # pulled again on the silence
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
