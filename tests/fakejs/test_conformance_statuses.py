"""The conformance watch's rules on what a client does after a status, each broken and kept.

A status is provoked server-side (``answer_pulls``, ``delete_consumer``,
``expire_pin``, ``stop_heartbeats``, a disconnect, ``max_waiting``); the
hand-rolled client then does the wrong thing or the right one.  Windows pass
on a :class:`~fakejs.testkit.clock.ManualClock`; a pull that follows a status
within ``race`` may have crossed it on the wire, so the wrong clients wait
past it first.

Pinned: ``pending-reconcile``, ``heartbeat-missed``, ``terminal-stops``,
``leadership-repull``, ``reconnect-repull``, ``max-waiting-backoff``,
``pin-dropped-on-423``, ``pin-id-echoed``.
"""

from __future__ import annotations

from typing import Any

from nats.aio.msg import Msg

from fakejs import ManualClock, Server
from tests.fakejs.clients import eventually
from tests.fakejs.conformance_kit import (
    CONSUMER,
    STREAM,
    Puller,
    check,
    connect,
    only,
    publish,
    seconds,
    setup,
    watch_of,
)

LOOP = {"batch": 10, "expires": seconds(2), "idle_heartbeat": seconds(0.5)}


async def consume_loop(server: Server, name: str, **consumer: Any) -> Puller:
    """A declared consume loop with one pull of 10 out."""
    watch_of(server).expect(STREAM, CONSUMER, consume=True)
    nc = await connect(server.url, name)
    await setup(nc, **consumer)
    puller = await Puller(nc).start()
    await puller.pull(**LOOP)
    return puller


def status_frame(puller: Puller, status: str) -> bytes:
    """The ``HMSG`` of a bare status (no other headers) on the puller's inbox."""
    headers = f"NATS/1.0 {status}\r\n\r\n".encode()
    return f"HMSG {puller.inbox} {len(headers)} {len(headers)}\r\n".encode() + headers + b"\r\n"


def past_window(server: Server) -> float:
    return watch_of(server).settings.window + 0.1


# -- pending-reconcile ---------------------------------------------------------------------------


async def test_loop_owed_nothing_after_408_that_never_pulls_breaks_pending_reconcile() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller = await consume_loop(server, "stalled")
        clock.advance(2)  # the pull expires: 408 with Nats-Pending-Messages: 10
        await puller.wait_status("408 Request Timeout")
        clock.advance(past_window(server))
        violation = only(server.conformance(), "pending-reconcile")
        check(violation, "stalled", f"HMSG {puller.inbox} ".encode())
        assert b"NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 10\r\n" in violation.evidence
        await puller.nc.close()


async def test_over_pull_after_a_pending_status_breaks_pending_reconcile() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        watch_of(server).expect(STREAM, CONSUMER, consume=True)
        nc = await connect(server.url, "no-subtract")
        await setup(nc)
        await publish(nc, 6)
        puller = await Puller(nc).start()
        await puller.pull(batch=10, expires=seconds(1), idle_heartbeat=seconds(0.25))  # buffer 10; 6 come
        await puller.wait_messages(6)
        await puller.pull(batch=5, expires=seconds(30), idle_heartbeat=seconds(5))  # 9 owed
        clock.advance(1)  # the first ends: 408 with 4 pending, 5 still owed by the second
        await puller.wait_status("408")
        sent = await puller.pull(batch=10, expires=seconds(30), idle_heartbeat=seconds(5))
        violation = only(server.conformance(), "pending-reconcile")
        check(violation, "no-subtract", sent)
        assert "15 over a buffer of 10" in violation.detail
        await nc.close()


async def test_loop_that_pulls_after_408_keeps_pending_reconcile() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller = await consume_loop(server, "refiller")
        clock.advance(2)
        await puller.wait_status("408 Request Timeout")
        await puller.pull(**LOOP)
        clock.advance(past_window(server))
        assert not server.conformance(), server.conformance().text()
        await puller.nc.close()


# -- heartbeat-missed -------------------------------------------------------------------------------


async def test_loop_that_ignores_missed_heartbeats_breaks_heartbeat_missed() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        watch_of(server).expect(STREAM, CONSUMER, consume=True)
        nc = await connect(server.url, "oblivious")
        await setup(nc)
        server.control.run("stop_heartbeats", {"stream": STREAM, "consumer": CONSUMER})
        puller = await Puller(nc).start()
        sent = await puller.pull(batch=10, expires=seconds(30), idle_heartbeat=seconds(1))
        clock.advance(2 + past_window(server))
        violation = only(server.conformance(), "heartbeat-missed")
        check(violation, "oblivious", sent)
        await nc.close()


async def test_loop_that_pulls_after_two_missed_heartbeats_keeps_heartbeat_missed() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        watch_of(server).expect(STREAM, CONSUMER, consume=True)
        nc = await connect(server.url, "watchful")
        await setup(nc)
        server.control.run("stop_heartbeats", {"stream": STREAM, "consumer": CONSUMER})
        puller = await Puller(nc).start()
        await puller.pull(batch=10, expires=seconds(30), idle_heartbeat=seconds(1))
        clock.advance(2.1)  # two heartbeats missed: the client gives its pull up and pulls afresh
        await puller.pull(batch=10, expires=seconds(30), idle_heartbeat=seconds(1))
        clock.advance(past_window(server))
        assert not server.conformance(), server.conformance().text()
        await nc.close()


async def test_heartbeats_arriving_keep_heartbeat_missed() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller = await consume_loop(server, "heard")
        clock.advance(1.9)
        await eventually(lambda: any(s.startswith("100") for s in puller.statuses()), what="an idle heartbeat")
        assert not server.conformance(), server.conformance().text()
        await puller.nc.close()


# -- terminal-stops ------------------------------------------------------------------------------


async def test_pull_after_consumer_deleted_breaks_terminal_stops() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller = await consume_loop(server, "stubborn")
        server.control.run("delete_consumer", {"stream": STREAM, "consumer": CONSUMER})
        await puller.wait_status("409 Consumer Deleted")
        clock.advance(0.1)  # past the race: this pull was sent after reading the 409
        sent = await puller.pull(**LOOP)
        check(only(server.conformance(), "terminal-stops"), "stubborn", sent)
        await puller.nc.close()


async def test_loop_that_stops_after_consumer_deleted_keeps_terminal_stops() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller = await consume_loop(server, "obedient")
        server.control.run("delete_consumer", {"stream": STREAM, "consumer": CONSUMER})
        await puller.wait_status("409 Consumer Deleted")
        clock.advance(past_window(server) + 5)
        assert not server.conformance(), server.conformance().text()
        await puller.nc.close()


# -- leadership-repull ------------------------------------------------------------------------------


async def leadership_change(server: Server, name: str) -> Puller:
    watch_of(server).expect(STREAM, CONSUMER, consume=True)
    nc = await connect(server.url, name)
    await setup(nc)
    server.control.run(
        "answer_pulls", {"stream": STREAM, "consumer": CONSUMER, "code": 409, "text": "Leadership Change"}
    )
    puller = await Puller(nc).start()
    await puller.pull(**LOOP)
    await puller.wait_status("409 Leadership Change")
    return puller


async def test_loop_silent_after_leadership_change_breaks_leadership_repull() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller = await leadership_change(server, "orphaned")
        clock.advance(past_window(server))
        check(
            only(server.conformance(), "leadership-repull"), "orphaned", status_frame(puller, "409 Leadership Change")
        )
        await puller.nc.close()


async def test_loop_that_pulls_after_leadership_change_keeps_leadership_repull() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller = await leadership_change(server, "follower")
        await puller.pull(**LOOP)
        clock.advance(past_window(server))
        assert not server.conformance(), server.conformance().text()
        await puller.nc.close()


# -- reconnect-repull ------------------------------------------------------------------------------


async def reconnected(server: Server, name: str) -> Puller:
    """A consume loop whose connection the server closes; nats-py reconnects and subscribes its inbox again."""
    puller = await consume_loop(server, name)
    server.control.run("disconnect", {"client": name})
    await eventually(lambda: puller.nc.stats["reconnects"] and puller.nc.is_connected, what="the reconnect")
    await puller.nc.flush()  # the SUBs sent again on reconnect have reached the server
    return puller


async def test_loop_silent_after_reconnect_breaks_reconnect_repull() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller = await reconnected(server, "forgetful")
        clock.advance(past_window(server))
        check(only(server.conformance(), "reconnect-repull"), "forgetful", f"SUB {puller.inbox}".encode())
        await puller.nc.close()


async def test_loop_that_pulls_after_reconnect_keeps_reconnect_repull() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller = await reconnected(server, "resilient")
        await puller.pull(**LOOP)
        clock.advance(past_window(server))
        assert not server.conformance(), server.conformance().text()
        await puller.nc.close()


# -- max-waiting-backoff ----------------------------------------------------------------------------


async def max_waiting_refused(server: Server, name: str) -> Puller:
    """One pull waits on a max_waiting 1 consumer; another gets 409 Exceeded MaxWaiting.

    nats-server answers it only to pulls without idle heartbeats (those wait silently).
    """
    nc = await connect(server.url, name)
    await setup(nc, max_waiting=1)
    await (await Puller(nc).start()).pull(batch=1, expires=seconds(5))
    second = await Puller(nc).start()
    await second.pull(batch=1, expires=seconds(5))
    await second.wait_status("409 Exceeded MaxWaiting")
    return second


async def test_pull_right_after_exceeded_max_waiting_breaks_max_waiting_backoff() -> None:
    async with Server(conformance=True, clock=ManualClock()) as server:
        second = await max_waiting_refused(server, "impatient")
        sent = await second.pull(batch=1, expires=seconds(5))
        check(only(server.conformance(), "max-waiting-backoff"), "impatient", sent)
        await second.nc.close()


async def test_pull_after_a_backoff_keeps_max_waiting_backoff() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        second = await max_waiting_refused(server, "polite")
        clock.advance(watch_of(server).settings.backoff)
        await second.pull(batch=1, expires=seconds(5))
        assert not server.conformance(), server.conformance().text()
        await second.nc.close()


# -- pin-dropped-on-423 and pin-id-echoed ------------------------------------------------------------

PINNED = {"priority_policy": "pinned_client", "priority_groups": ["A"], "priority_timeout": seconds(120)}


async def pinned(server: Server, name: str) -> tuple[Puller, str]:
    """A client pinned in group A by its first message; returns the pin id."""
    nc = await connect(server.url, name)
    await setup(nc, **PINNED)
    await publish(nc, 2)
    puller = await Puller(nc).start()
    await puller.pull(batch=1, expires=seconds(5), group="A")
    first: Msg = (await puller.wait_messages(1))[0]
    await nc.publish(first.reply, b"+ACK")
    pin = (first.headers or {})["Nats-Pin-Id"]
    return puller, pin


async def refused_pin(server: Server, clock: ManualClock, name: str) -> tuple[Puller, str]:
    puller, pin = await pinned(server, name)
    server.control.run("expire_pin", {"stream": STREAM, "consumer": CONSUMER, "group": "A"})
    await puller.pull(batch=1, expires=seconds(5), group="A", id=pin)
    await puller.wait_status("423")
    clock.advance(0.1)  # past the race
    return puller, pin


async def test_pull_with_the_refused_pin_breaks_pin_dropped_on_423() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller, pin = await refused_pin(server, clock, "clingy")
        sent = await puller.pull(batch=1, expires=seconds(5), group="A", id=pin)
        violation = only(server.conformance(), "pin-dropped-on-423")
        check(violation, "clingy", sent)
        assert pin in violation.detail
        await puller.nc.close()


async def test_pull_without_the_refused_pin_keeps_pin_dropped_on_423() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller, _ = await refused_pin(server, clock, "letting-go")
        await puller.pull(batch=1, expires=seconds(5), group="A")
        await puller.wait_messages(2)  # pinned again, with a new id
        assert not server.conformance(), server.conformance().text()
        await puller.nc.close()


async def test_pull_without_the_pin_id_breaks_pin_id_echoed() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller, pin = await pinned(server, "amnesiac")
        clock.advance(0.1)
        sent = await puller.pull(batch=1, expires=seconds(5), group="A")
        violation = only(server.conformance(), "pin-id-echoed")
        check(violation, "amnesiac", sent)
        assert violation.detail == f"pulled with no id after Nats-Pin-Id {pin}"
        await puller.nc.close()


async def test_pull_echoing_the_pin_id_keeps_pin_id_echoed() -> None:
    clock = ManualClock()
    async with Server(conformance=True, clock=clock) as server:
        puller, pin = await pinned(server, "loyal")
        clock.advance(0.1)
        await puller.pull(batch=1, expires=seconds(5), group="A", id=pin)
        await puller.wait_messages(2)
        assert not server.conformance(), server.conformance().text()
        await puller.nc.close()
