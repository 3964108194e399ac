"""The test kit as a test uses it: moving virtual time to what is due, and a handle that never hangs.

Pinned:

- ``ManualClock.advance_to_next()`` moves to the next timer that does work (an unacknowledged
  message's redelivery at ``ack_wait`` + 1 ms, as nats-server has it), passing over keepalive
  PINGs, fires everything due at that instant and returns the seconds moved (``None`` when
  nothing is pending); ``advance_until(condition, limit)`` walks timer by timer until the
  condition holds, or says what it waited for;
- the pytest handle (``fakejs_server``) offers both, and the redelivery example of the docs passes;
- every handle method may be called from code the server thread runs (a ``wait_for`` predicate,
  a ``call``): it runs at once; what would wait for that thread itself fails at once, saying why;
- a condition that never holds fails with its own text, the time waited and its last value.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import nats
import pytest
from nats.js.api import ConsumerConfig

from fakejs import ManualClock, Server, ThreadedServer

pytestmark = pytest.mark.fake_only


# -- ManualClock: moving to what is due ------------------------------------------------------------


def test_advance_to_next_moves_to_the_next_timer_and_fires_all_due_then() -> None:
    clock = ManualClock()
    fired: list[str] = []
    clock.call_later(0.5, fired.append, "early")
    clock.call_later(2, lambda: clock.call_later(0, fired.append, "chained"))
    clock.call_later(2, fired.append, "same instant")
    assert clock.advance_to_next() == 0.5
    assert fired == ["early"]
    assert clock.advance_to_next() == 1.5
    assert fired == ["early", "same instant", "chained"]  # scheduled for that instant by a callback: fired too
    assert clock.monotonic() == 2
    assert clock.advance_to_next() is None  # nothing pending: time stays
    assert clock.monotonic() == 2


def test_advance_to_next_lands_exactly_on_an_awkward_deadline() -> None:
    clock = ManualClock()
    clock.advance(0.1)
    fired: list[float] = []
    clock.call_at(30.101, lambda: fired.append(clock.monotonic()))
    moved = clock.advance_to_next()
    assert moved == pytest.approx(30.001)
    assert fired == [30.101]


def test_advance_to_next_passes_over_keepalive_pings_but_fires_them_on_the_way() -> None:
    clock = ManualClock()
    fired: list[str] = []
    clock.call_background(2, fired.append, "ping")
    assert clock.advance_to_next() is None  # only keepalive pending: no work to move to
    clock.call_later(30, fired.append, "redelivery")
    assert clock.advance_to_next() == 30
    assert fired == ["ping", "redelivery"]


def test_one_advance_to_next_counts_as_one_advance() -> None:
    clock = ManualClock()
    clock.call_later(5, lambda: None)
    before = clock.advances
    clock.advance_to_next()
    assert clock.advances == before + 1


def test_advance_until_walks_timer_by_timer_until_the_condition_holds() -> None:
    clock = ManualClock()
    ticks: list[float] = []
    for when in (1, 2, 3, 4):
        clock.call_later(when, lambda: ticks.append(clock.monotonic()))
    assert clock.advance_until(lambda: len(ticks) == 2, limit=60) == 2
    assert ticks == [1, 2]
    assert clock.advance_until(lambda: ticks, limit=60) == 0  # already true: time does not move


def test_advance_until_says_what_it_waited_for_past_its_limit() -> None:
    clock = ManualClock()
    ticks: list[float] = []
    clock.call_later(1, ticks.append, 1.0)
    clock.call_later(100, ticks.append, 100.0)
    with pytest.raises(TimeoutError) as failure:
        clock.advance_until(lambda: len(ticks) == 2, limit=10)
    message = str(failure.value)
    assert "lambda: len(ticks) == 2" in message and "limit 10 s" in message and "last value: False" in message
    assert clock.monotonic() == 1  # stopped at the last timer it fired, not past the limit


async def test_advance_to_next_redelivers_an_unacknowledged_message() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="ORDERS", subjects=["orders.>"])
        await js.publish("orders.new", b"pizza")
        worker = await js.pull_subscribe("orders.>", "worker", config=ConsumerConfig(ack_wait=30))
        (first,) = await worker.fetch(1)
        clock.advance(30)  # the deadline is ack_wait + 1 ms, as on nats-server: not yet
        assert server.consumer_state("ORDERS", "worker")["redeliveries_queued"] == []
        assert clock.advance_to_next() == pytest.approx(0.001)
        assert server.consumer_state("ORDERS", "worker")["redeliveries_queued"] == [1]
        (again,) = await worker.fetch(1)
        assert (first.metadata.num_delivered, again.metadata.num_delivered) == (1, 2)
        await nc.close()


# -- the pytest handle ----------------------------------------------------------------------------


@pytest.mark.fakejs(clock="manual")
async def test_the_handle_moves_to_the_redelivery(fakejs_server: Any, fakejs_client: Any) -> None:
    js = fakejs_client.jetstream()
    await js.add_stream(name="ORDERS", subjects=["orders.>"])
    await js.publish("orders.new", b"pizza")
    worker = await js.pull_subscribe("orders.>", "worker", config=ConsumerConfig(ack_wait=30))
    await worker.fetch(1)
    assert fakejs_server.advance_to_next() == pytest.approx(30.001)
    (again,) = await worker.fetch(1)
    assert again.metadata.num_delivered == 2


@pytest.mark.fakejs(clock="manual")
async def test_the_handle_advances_until_the_server_state_says_so(fakejs_server: Any, fakejs_client: Any) -> None:
    js = fakejs_client.jetstream()
    await js.add_stream(name="ORDERS", subjects=["orders.>"], max_age=60)
    await js.publish("orders.new", b"pizza")
    moved = fakejs_server.advance_until(lambda: fakejs_server.state()["streams"][0]["messages"] == [], limit=3600)
    assert 60 <= moved < 61


@pytest.mark.fakejs_cluster(size=2, clock="manual")
def test_a_cluster_moves_its_shared_clock_to_what_is_due(fakejs_cluster: Any) -> None:
    assert fakejs_cluster.advance_to_next() is None  # only route and client PINGs pending
    fired: list[float] = []
    clock = fakejs_cluster.server(0).clock
    fakejs_cluster.call(lambda: clock.call_later(5, lambda: fired.append(clock.monotonic())))
    assert fakejs_cluster.advance_to_next() == 5
    assert fakejs_cluster.advance_until(lambda: fired, limit=1) == 0
    assert fired == [5]


def test_the_time_helpers_need_a_manual_clock(fakejs_server: Any) -> None:
    from fakejs.targets import FakeOnly

    with pytest.raises(FakeOnly, match="advance_to_next\\(\\) needs a manual clock"):
        fakejs_server.advance_to_next()


# -- the handle from the server's own thread ------------------------------------------------------


async def test_wait_for_a_condition_that_reads_the_handle(fakejs_server: Any, fakejs_client: Any) -> None:
    await fakejs_client.jetstream().add_stream(name="ORDERS", subjects=["orders.>"])
    started = time.monotonic()
    streams = await fakejs_server.wait_for(lambda: fakejs_server.state()["streams"])
    assert [stream["name"] for stream in streams] == ["ORDERS"]
    assert time.monotonic() - started < 1


@pytest.mark.fakejs(clock="manual")
async def test_every_handle_method_runs_at_once_from_the_server_thread(fakejs_server: Any, fakejs_client: Any) -> None:
    js = fakejs_client.jetstream()
    await js.add_stream(name="ORDERS", subjects=["orders.>"])
    await js.add_consumer("ORDERS", durable_name="worker", ack_policy="explicit")

    def inside() -> dict[str, Any]:
        return {
            "state": fakejs_server.state(),
            "consumer": fakejs_server.consumer_state("ORDERS", "worker"),
            "fired": fakejs_server.advance(1),
            "fault": fakejs_server.fault(at=10, do="clear_faults"),
            "moved": fakejs_server.advance_to_next(),
            "now": fakejs_server.now(),
            "errors": fakejs_server.take_errors(),
            "deleted": fakejs_server.control.delete_consumer("ORDERS", "worker"),
        }

    started = time.monotonic()
    seen = fakejs_server.call(inside)
    assert time.monotonic() - started < 1
    assert [stream["name"] for stream in seen["state"]["streams"]] == ["ORDERS"]
    assert seen["consumer"]["name"] == "worker"
    assert (seen["moved"], seen["now"], seen["errors"]) == (10, 11, [])  # the fault was due 10 s after it was added
    assert fakejs_server.state()["streams"][0]["consumers"] == []  # deleted there; the test's thread sees it


def test_wait_until_on_the_server_thread_fails_at_once(fakejs_server: Any) -> None:
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="wait_until\\(\\) on the server thread would block the server"):
        fakejs_server.call(lambda: fakejs_server.wait_until(lambda: False))
    assert time.monotonic() - started < 1


def test_what_waits_for_the_server_thread_fails_at_once_there() -> None:
    async def nothing() -> int:
        return 1

    with ThreadedServer(port=0) as threaded:
        started = time.monotonic()
        with pytest.raises(RuntimeError, match="on the server's own thread, which would have to run it"):
            threaded.call(lambda: threaded.run(nothing()))
        with pytest.raises(RuntimeError, match="cannot stop the server from its own thread"):
            threaded.call(threaded.stop)
        assert time.monotonic() - started < 1
        assert threaded.call(lambda: threaded.call(lambda: 7)) == 7  # a nested call runs at once
        assert threaded.run(nothing()) == 1  # the server still serves


# -- what a timeout says ---------------------------------------------------------------------------


async def test_a_wait_for_that_times_out_says_what_and_how_long(fakejs_server: Any) -> None:
    with pytest.raises(TimeoutError) as failure:
        await fakejs_server.wait_for(lambda: fakejs_server.state()["streams"], timeout=0.05)
    assert str(failure.value) == (
        'lambda: fakejs_server.state()["streams"] was still false after 0.05 s (last value: [])'
    )


def test_a_wait_until_that_times_out_names_a_function_condition(fakejs_server: Any) -> None:
    def no_streams_yet() -> bool:
        return False

    with pytest.raises(TimeoutError, match=r"no_streams_yet\(\) was still false after 0.02 s \(last value: False\)"):
        fakejs_server.wait_until(no_streams_yet, timeout=0.02)


async def test_server_wait_for_says_what_it_waited_for() -> None:
    async with Server() as server:
        with pytest.raises(TimeoutError, match=r"lambda: server.state\(\)\[.streams.\] was still false after 0.02 s"):
            await server.wait_for(lambda: server.state()["streams"], timeout=0.02)


async def test_a_wait_names_a_lambda_followed_by_a_comment() -> None:
    async with Server() as server:
        no_streams = lambda: server.state()["streams"]  # noqa: E731 (a comment after the lambda)
        with pytest.raises(TimeoutError, match=r"^lambda: server.state\(\)\[.streams.\] was still false"):
            await server.wait_for(no_streams, timeout=0.02)


def test_a_blocked_server_thread_makes_a_call_time_out_saying_so() -> None:
    release = threading.Event()
    with ThreadedServer(port=0) as threaded:
        blocker = threading.Thread(target=threaded.call, args=(release.wait, 5))
        blocker.start()
        try:
            with pytest.raises(TimeoutError, match=r"did not finish within 0.05 s on the server's thread"):
                threaded.call(lambda: 1, timeout=0.05)
        finally:
            release.set()
            blocker.join()
