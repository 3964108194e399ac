"""Push flow control (window accounting, requests, answers) and idle heartbeats."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from fakejs.core.hooks import NoHooks
from fakejs.gocompat.gotime import NS
from fakejs.jetstream.consumer.push_flow import PushFlow
from fakejs.jetstream.consumer.view import ConsumerName
from fakejs.testkit.clock import ManualClock
from tests.harness.consumer_parts import START_NS, FakeConsumer, Recorder, consumer_config

MIB = 1024 * 1024
FC_REQUEST = b"NATS/1.0 100 FlowControl Request\r\n\r\n"


@dataclass
class Rig:
    consumer: FakeConsumer
    clock: ManualClock
    flow: PushFlow
    published: Recorder
    replies: Recorder
    acked: Recorder
    holding: list[bool]


def rig(**fields: Any) -> Rig:
    fields.setdefault("deliver_subject", "dlv")
    consumer = FakeConsumer(consumer_config(durable_name="C", **fields))
    clock = ManualClock(start_ns=START_NS)
    published, replies, acked = Recorder(), Recorder(), Recorder()
    holding = [False]
    flow = PushFlow(
        consumer,
        clock,
        NoHooks(),
        ConsumerName("S", "C"),
        random.Random(1),
        publish=lambda subject, reply_to, hdr, payload: published(subject, reply_to, hdr, payload),
        reply=lambda subject, payload, hdr=None: replies(subject, payload, hdr),
        ack_through=acked,
        holding=lambda: holding[0],
    )
    return Rig(consumer, clock, flow, published, replies, acked, holding)


def deliver(r: Rig, size: int) -> None:
    """Account for one push delivery of ``size`` bytes, as the delivery loop does."""
    r.flow.count(size)
    r.flow.after_delivery(size)


def test_a_flow_control_request_follows_the_delivery_past_half_the_window() -> None:
    r = rig(flow_control=True, idle_heartbeat=NS)
    assert (r.flow.window, r.flow.pending_bytes) == (2 * MIB, 0)
    deliver(r, MIB)
    assert r.published.calls == []
    deliver(r, 1)
    assert len(r.published.calls) == 1
    subject, reply_to, hdr, payload = r.published.calls[0]
    assert (subject, hdr, payload) == ("dlv", FC_REQUEST, b"")
    assert re.fullmatch(r"\$JS\.FC\.S\.C\.[0-9A-Za-z]{4}", reply_to)
    assert r.flow.request_reply == reply_to and r.flow.pending_at_request == MIB + 1
    deliver(r, MIB)
    assert len(r.published.calls) == 1  # one request outstanding at a time
    assert r.flow.stalled  # past the window: push delivery waits


def test_an_answer_to_the_latest_request_frees_its_bytes_and_doubles_the_window() -> None:
    r = rig(flow_control=True, idle_heartbeat=NS)
    deliver(r, MIB + 1)
    deliver(r, MIB)
    request_reply = r.flow.request_reply
    r.flow.on_answer("$JS.FC.S.C.zzzz", "", None, b"", None)  # not the latest request
    assert r.flow.request_reply == request_reply and r.consumer.kicks == 0
    r.flow.on_answer(request_reply, "", None, b"", None)
    assert (r.flow.window, r.flow.pending_bytes, r.flow.request_reply) == (4 * MIB, MIB, "")
    assert not r.flow.stalled and r.consumer.kicks == 1
    assert r.acked.calls == []  # acks ride on answers only with ack_policy flow_control


def test_the_window_stops_growing_at_32_mib() -> None:
    r = rig(flow_control=True, idle_heartbeat=NS)
    for _ in range(6):
        deliver(r, r.flow.window // 2 + 1)
        r.flow.on_answer(r.flow.request_reply, "", None, b"", None)
    assert r.flow.window == 32 * MIB


def test_with_ack_policy_flow_control_an_answer_acks_what_it_names() -> None:
    r = rig(ack_policy="flow_control", max_ack_pending=2)
    r.consumer.num_ack_pending = 2
    deliver(r, 10)  # max_ack_pending is reached: a request goes out early
    assert len(r.published.calls) == 1
    answer = b"NATS/1.0\r\nNats-Last-Consumer: 3\r\nNats-Last-Stream: 5\r\n\r\n"
    r.flow.on_answer(r.flow.request_reply, "", answer, b"", None)
    assert r.acked.calls == [(5, 3)]


def test_a_consumer_without_flow_control_never_asks() -> None:
    r = rig()
    deliver(r, 64 * MIB)
    assert r.published.calls == [] and not r.flow.stalled and r.flow.pending_bytes == 0


def test_idle_heartbeats_name_the_last_delivery_and_the_unanswered_request() -> None:
    r = rig(flow_control=True, idle_heartbeat=NS)
    r.consumer.next_consumer_sequence, r.consumer.next_stream_sequence = 3, 7
    r.flow.arm_heartbeat()
    r.clock.advance(1.0)
    first = b"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 2\r\nNats-Last-Stream: 6\r\n\r\n"
    assert r.replies.calls == [("dlv", b"", first)]
    deliver(r, MIB + 1)
    stalled = (
        b"NATS/1.0 100 Idle Heartbeat\r\nNats-Last-Consumer: 2\r\nNats-Last-Stream: 6\r\n"
        + f"Nats-Consumer-Stalled: {r.flow.request_reply}\r\n\r\n".encode()
    )
    r.clock.advance(1.0)
    assert r.replies.calls[-1] == ("dlv", b"", stalled)


def test_no_heartbeat_while_a_delivery_is_held_or_nobody_listens() -> None:
    r = rig(idle_heartbeat=NS)
    r.flow.arm_heartbeat()
    r.holding[0] = True
    r.clock.advance(1.5)
    assert r.replies.calls == []
    r.holding[0] = False
    r.flow.arm_heartbeat()  # the held delivery went out
    r.consumer.active = False
    r.clock.advance(1.0)
    assert r.replies.calls == []
    r.consumer.active = True
    r.clock.advance(1.0)
    assert len(r.replies.calls) == 1


def test_a_delivery_restarts_the_idle_countdown_and_stop_ends_it() -> None:
    r = rig(idle_heartbeat=NS)
    r.flow.arm_heartbeat()
    r.clock.advance(0.9)
    r.flow.arm_heartbeat()
    r.clock.advance(0.9)
    assert r.replies.calls == []
    r.flow.stop()
    r.clock.advance(10)
    assert r.replies.calls == []
