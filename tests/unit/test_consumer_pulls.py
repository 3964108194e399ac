"""The pull side: request bodies, the wait queue's order and limits, and the pull dispatch.

The dispatch answers on a recorded ``reply`` callback; statuses are compared
as the bytes nats-server sends.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from fakejs.core.hooks import NoHooks
from fakejs.core.router import Router
from fakejs.gocompat.gotime import NS
from fakejs.jetstream.consumer.pull_dispatch import PullDispatch
from fakejs.jetstream.consumer.pull_requests import BadPullRequest, WaitingRequest, WaitQueue, parse_request
from fakejs.jetstream.consumer.view import ConsumerName
from fakejs.testkit.clock import ManualClock
from tests.harness.consumer_parts import START_NS, FakeConsumer, Recorder, consumer_config


def pending_status(status: str, messages: int, nbytes: int) -> bytes:
    return f"NATS/1.0 {status}\r\nNats-Pending-Messages: {messages}\r\nNats-Pending-Bytes: {nbytes}\r\n\r\n".encode()


# -- request bodies ------------------------------------------------------------------------


def test_a_pull_body_is_a_batch_size_or_json() -> None:
    assert parse_request(b"").batch == 1
    assert parse_request(b" 10 ").batch == 10
    assert parse_request(b"abc").batch == 1  # not a number: one message
    request = parse_request(b'{"batch": 5, "expires": 2000000000, "no_wait": true, "group": "G", "priority": 3}')
    assert (request.batch, request.expires, request.no_wait) == (5, 2 * NS, True)
    assert request.group is not None and (request.group["group"], request.group["priority"]) == ("G", 3)


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b'{"batch": "x"}', "json: cannot unmarshal string into Go struct field .batch of type int"),
        (b'{"batch": 5, "expires": 1000000000, "idle_heartbeat": 600000000}', "heartbeat value too large"),
        (b"{", "unexpected end of JSON input"),
    ],
)
def test_bad_pull_bodies_are_refused_with_go_s_words(body: bytes, error: str) -> None:
    with pytest.raises(BadPullRequest) as raised:
        parse_request(body)
    assert str(raised.value) == error


# -- the wait queue ----------------------------------------------------------------------------


def waiting(reply: str, n: int = 1, priority: int | None = None) -> WaitingRequest:
    group = None if priority is None else {"group": "G", "priority": priority, "id": ""}
    return WaitingRequest(reply=reply, batch_left=n, bytes_left=0, expires=None, group=group)


def test_waiting_requests_share_messages_round_robin() -> None:
    queue = WaitQueue(max_waiting=10)
    queue.add(waiting("A", n=2))
    queue.add(waiting("B", n=2))
    taken = [request.reply for request in iter(queue.pop, None)]
    assert taken == ["A", "B", "A", "B"]
    assert len(queue) == 0


def test_prioritized_requests_are_served_lowest_priority_first() -> None:
    queue = WaitQueue(max_waiting=10, prioritized=True)
    queue.add(waiting("none"))
    queue.add(waiting("five", priority=5))
    queue.add(waiting("one", n=2, priority=1))
    queue.add(waiting("five-again", priority=5))
    taken = [request.reply for request in iter(queue.pop, None)]
    assert taken == ["one", "one", "five", "five-again", "none"]


def test_prioritized_queue_removes_cycles_and_switches_policy() -> None:
    queue = WaitQueue(max_waiting=100, prioritized=True)
    requests = [waiting(f"r{i}", n=2, priority=i % 3) for i in range(30)]
    for request in requests:
        queue.add(request)
    for request in requests[::2]:
        queue.remove(request)
    assert len(queue) == 15 and [r.reply for r in queue][:3] == ["r3", "r9", "r15"]
    queue.cycle()  # the head goes behind every priority
    assert [r.reply for r in queue][-1] == "r3" and queue.peek() is requests[9]
    assert len(queue._heap) <= 2 * len(queue) + 16  # removed entries do not pile up
    queue.prioritized = False  # the same requests, now round robin in the order they were served
    assert [r.reply for r in queue][:2] == ["r9", "r15"] and len(queue) == 15


def test_the_queue_holds_at_most_max_waiting_requests() -> None:
    queue = WaitQueue(max_waiting=2)
    assert queue.add(waiting("A")) and queue.add(waiting("B"))
    assert queue.is_full() and not queue.add(waiting("C"))
    queue.cycle()
    assert [request.reply for request in queue] == ["B", "A"]
    assert [request.reply for request in queue.clear()] == ["B", "A"] and len(queue) == 0


# -- the pull dispatch ---------------------------------------------------------------------------


@dataclass
class Rig:
    consumer: FakeConsumer
    clock: ManualClock
    dispatch: PullDispatch
    replies: Recorder
    touches: Recorder
    gone: set[str] = field(default_factory=set)
    available: list[int] = field(default_factory=lambda: [0])

    def statuses(self, reply: str) -> list[bytes]:
        return [hdr for (subject, _, hdr) in self.replies.calls if subject == reply]


def rig(**fields: Any) -> Rig:
    consumer = FakeConsumer(consumer_config(durable_name="D", ack_policy="explicit", **fields))
    clock = ManualClock(start_ns=START_NS)
    replies, touches = Recorder(), Recorder()
    gone: set[str] = set()
    available = [0]
    dispatch = PullDispatch(
        consumer,
        clock,
        NoHooks(),
        ConsumerName("S", "D"),
        reply=lambda subject, payload, hdr=None: replies(subject, payload, hdr),
        has_interest=lambda subject: subject not in gone,
        touch=touches,
        available=lambda: available[0],
        priority=lambda: None,
    )
    return Rig(consumer, clock, dispatch, replies, touches, gone, available)


def test_a_pull_is_queued_counted_as_activity_and_starts_delivery() -> None:
    r = rig()
    r.dispatch.request("inbox.1", b'{"batch": 3}')
    assert [w.reply for w in r.dispatch.queue] == ["inbox.1"]
    assert r.touches.calls == [()] and r.consumer.kicks == 1
    assert r.replies.calls == []


def test_an_expired_pull_gets_408_with_what_it_still_wanted() -> None:
    r = rig()
    r.dispatch.request("inbox.1", b'{"batch": 3, "expires": 1000000000}')
    r.dispatch.process(eos=False)  # what the delivery loop does after a round
    r.clock.advance(0.999)
    assert r.replies.calls == []
    r.clock.advance(0.002)
    assert r.statuses("inbox.1") == [pending_status("408 Request Timeout", 3, 0)]
    assert len(r.dispatch.queue) == 0


def test_a_no_wait_pull_with_nothing_to_deliver_gets_404_at_once() -> None:
    r = rig()
    r.dispatch.request("inbox.1", b'{"batch": 1, "no_wait": true}')
    assert r.statuses("inbox.1") == [b"NATS/1.0 404 No Messages\r\n\r\n"]
    assert len(r.dispatch.queue) == 0 and r.consumer.kicks == 0


def test_a_no_wait_pull_behind_pulls_that_want_everything_gets_408_requests_pending() -> None:
    r = rig()
    r.available[0] = 2
    r.dispatch.request("inbox.1", b'{"batch": 5}')
    r.dispatch.request("inbox.2", b'{"batch": 1, "no_wait": true}')
    assert r.statuses("inbox.2") == [b"NATS/1.0 408 Requests Pending\r\n\r\n"]


def test_limits_refuse_a_pull_in_nats_server_s_order() -> None:
    r = rig(max_batch=5, max_bytes=100)
    r.dispatch.request("inbox.1", b"10")
    r.dispatch.request("inbox.2", b'{"batch": 10, "max_bytes": 1000}')
    r.dispatch.request("inbox.3", b'{"batch": 1, "max_bytes": 1000}')
    assert r.statuses("inbox.1") == [b"NATS/1.0 409 Exceeded MaxRequestBatch of 5\r\n\r\n"]
    assert r.statuses("inbox.2") == [b"NATS/1.0 409 Exceeded MaxRequestBatch of 5\r\n\r\n"]
    assert r.statuses("inbox.3") == [b"NATS/1.0 409 Exceeded MaxRequestMaxBytes of 100\r\n\r\n"]
    assert len(r.dispatch.queue) == 0 and r.touches.calls == []


def test_a_pull_beyond_max_waiting_gets_409() -> None:
    r = rig(max_waiting=1)
    r.dispatch.request("inbox.1", b"1")
    r.dispatch.request("inbox.2", b"1")
    assert r.statuses("inbox.2") == [b"NATS/1.0 409 Exceeded MaxWaiting\r\n\r\n"]
    assert [w.reply for w in r.dispatch.queue] == ["inbox.1"]


def test_a_bad_body_gets_400() -> None:
    r = rig()
    r.dispatch.request("inbox.1", b'{"batch": "x"}')
    expected = (
        b"NATS/1.0 400 Bad Request - json: cannot unmarshal string into Go struct field .batch of type int\r\n\r\n"
    )
    assert r.statuses("inbox.1") == [expected]


def test_max_bytes_is_charged_per_delivery_and_ends_the_pull_when_exceeded() -> None:
    r = rig()
    r.dispatch.request("inbox.1", b'{"batch": 5, "max_bytes": 100}')
    request = r.dispatch.next_waiting(60)
    assert request is not None and (request.batch_left, request.bytes_left) == (4, 40)
    assert r.dispatch.next_waiting(60) is None
    assert r.statuses("inbox.1") == [pending_status("409 Message Size Exceeds MaxBytes", 4, 40)]
    assert len(r.dispatch.queue) == 0


def test_a_pull_whose_client_left_is_dropped_silently() -> None:
    r = rig()
    r.dispatch.request("inbox.1", b"1")
    r.dispatch.request("inbox.2", b"1")
    r.gone.add("inbox.1")
    request = r.dispatch.next_waiting(10)
    assert request is not None and request.reply == "inbox.2"
    assert r.replies.calls == [] and len(r.dispatch.queue) == 0


def test_a_pull_through_an_import_waits_on_the_requesters_interest() -> None:
    r = rig()
    elsewhere = Router()  # where the requester listens, past the import
    listener = elsewhere.subscribe_internal("inbox.app", lambda *message: None)
    r.dispatch._track_interest = lambda reply: (elsewhere, "inbox.app") if reply.startswith("_R_.") else (None, reply)  # type: ignore[assignment,return-value]
    r.dispatch.request("_R_.abc.1", b"2")
    r.gone.add("_R_.abc.1")  # the reply's own interest does not count
    assert r.dispatch.process(eos=False) == 2
    elsewhere.unsubscribe(listener)
    assert r.dispatch.next_waiting(10) is None
    assert r.statuses("_R_.abc.1") == [pending_status("408 Interest Expired", 2, 0)]
    assert len(r.dispatch.queue) == 0


def test_a_delivery_nobody_received_is_given_back_to_its_pull() -> None:
    r = rig()
    r.dispatch.request("inbox.1", b"3")
    request = r.dispatch.next_waiting(10)
    assert request is not None and (request.batch_left, request.delivered) == (2, 1)
    r.dispatch.not_received("inbox.1")
    assert (request.batch_left, request.delivered) == (3, 0)


def test_idle_heartbeats_go_to_a_waiting_pull_until_it_expires() -> None:
    r = rig()
    r.consumer.next_consumer_sequence, r.consumer.next_stream_sequence = 4, 9
    r.dispatch.request("inbox.1", b'{"batch": 1, "expires": 3500000000, "idle_heartbeat": 1000000000}')
    r.dispatch.process(eos=False)
    r.clock.advance(3.6)
    heartbeat = b"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 3\r\nNats-Last-Stream: 8\r\n\r\n"
    assert r.statuses("inbox.1") == [heartbeat] * 3 + [pending_status("408 Request Timeout", 1, 0)]


def test_a_finished_no_wait_pull_ends_when_the_stream_has_nothing_more() -> None:
    r = rig()
    r.available[0] = 1
    r.dispatch.request("inbox.1", b'{"batch": 5, "no_wait": true}')
    request = r.dispatch.next_waiting(10)
    assert request is not None
    assert r.dispatch.still_waiting() is False
    assert r.statuses("inbox.1") == [b"NATS/1.0 404 No Messages\r\n\r\n"]


def test_a_no_wait_pull_with_expires_waits_for_its_first_message() -> None:
    r = rig()
    r.available[0] = 1
    r.dispatch.request("inbox.1", b'{"batch": 5, "no_wait": true, "expires": 5000000000}')
    assert r.dispatch.still_waiting() is True  # nothing delivered yet: it waits until it expires
    assert r.replies.calls == []
    assert r.dispatch.next_waiting(10) is not None
    assert r.dispatch.still_waiting() is False
    assert r.statuses("inbox.1") == [b"NATS/1.0 404 No Messages\r\n\r\n"]


async def test_prioritized_pulls_expiring_together_are_answered_in_serving_order() -> None:
    r = rig(priority_policy="prioritized", priority_groups=["G"])
    for name, priority in (("inbox.5", 5), ("inbox.0", 0), ("inbox.3", 3), ("inbox.0b", 0)):
        r.dispatch.request(name, b'{"batch": 1, "expires": 1000000000, "group": "G", "priority": %d}' % priority)
    assert r.consumer.kicks == 0  # delivery waits until the pulls read together are all queued
    await asyncio.sleep(0)
    assert r.consumer.kicks == 1
    r.dispatch.process(eos=False)
    r.clock.advance(1)
    assert [subject for subject, _, _ in r.replies.calls] == ["inbox.0", "inbox.0b", "inbox.3", "inbox.5"]
    assert len(r.dispatch.queue) == 0
