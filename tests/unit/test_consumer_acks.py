"""The ack tracker: pending acks, ack floors, redelivery on the ack-wait timer, max_deliver.

Time is a ManualClock; the consumer is a ``FakeConsumer`` whose ``stream_sequence`` and
``consumer_sequence`` move as :func:`deliver` sends messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from fakejs.gocompat.gotime import NS
from fakejs.jetstream.consumer.ack_tracker import AckTracker, ack_reply_info, nak_delay
from fakejs.testkit.clock import ManualClock
from tests.harness.consumer_parts import START_NS, FakeConsumer, Recorder, consumer_config


@dataclass
class Rig:
    consumer: FakeConsumer
    clock: ManualClock
    acks: AckTracker
    max_deliveries: Recorder
    first_seq: list[int]


def rig(**fields: Any) -> Rig:
    fields.setdefault("ack_policy", "explicit")
    consumer = FakeConsumer(consumer_config(**fields))
    clock = ManualClock(start_ns=START_NS)
    max_deliveries = Recorder()
    first_seq = [1]
    acks = AckTracker(consumer, clock, first_stream_seq=lambda: first_seq[0], on_max_deliveries=max_deliveries)
    acks.start_at(1)
    return Rig(consumer, clock, acks, max_deliveries, first_seq)


def deliver(r: Rig, stream_sequence: int, delivery_count: int = 1) -> int:
    """Send stream sequence ``stream_sequence`` as the delivery loop does; returns its delivery sequence."""
    consumer_sequence = r.consumer.next_consumer_sequence
    r.consumer.next_consumer_sequence += 1
    r.consumer.next_stream_sequence = max(r.consumer.next_stream_sequence, stream_sequence + 1)
    r.acks.record_delivery(consumer_sequence, stream_sequence, delivery_count, r.clock.time_ns())
    r.acks.track(stream_sequence, consumer_sequence)
    return consumer_sequence


def floor(r: Rig) -> tuple[int, int]:
    return r.acks.ack_floor_consumer, r.acks.ack_floor_stream


def test_explicit_acks_move_the_floor_over_contiguous_deliveries_only() -> None:
    r = rig(ack_policy="explicit")
    for seq in (1, 2, 3):
        deliver(r, seq)
    assert r.acks.ack(2, 2) == [2]
    assert floor(r) == (0, 0)  # 1 is still pending
    assert r.acks.ack(1, 1) == [1]
    assert floor(r) == (2, 2)  # over 1 and the already acked 2
    assert r.acks.ack(3, 3) == [3]
    assert floor(r) == (3, 3) and r.acks.pending == {}
    assert r.acks.state.ack_floor == [3, 3]
    assert r.acks.last_ack_ns == r.clock.time_ns()


def test_ack_all_acks_everything_below_and_ignores_acks_under_the_floor() -> None:
    r = rig(ack_policy="all")
    for seq in (1, 2, 3):
        deliver(r, seq)
    assert r.acks.ack(2, 2) == [1, 2]
    assert floor(r) == (2, 2) and list(r.acks.pending) == [3]
    assert r.acks.ack(1, 1) is None


def test_an_unacked_delivery_is_queued_for_redelivery_when_its_ack_wait_ends() -> None:
    r = rig(ack_wait=1 * NS)
    deliver(r, 1)
    r.clock.advance(0.9)
    assert list(r.acks.redelivery_queue) == [] and r.consumer.kicks == 0
    r.clock.advance(0.2)  # ack_wait plus nats-server's extra millisecond has passed
    assert list(r.acks.redelivery_queue) == [1] and r.consumer.kicks == 1
    assert r.acks.next_redelivery() == (1, 2)
    assert r.acks.delivery_count(1) == 1  # redelivered once
    assert list(r.acks.redelivery_queue) == []


def test_the_ack_timer_keeps_the_earliest_deadline() -> None:
    r = rig(ack_wait=2 * NS)
    deliver(r, 1)
    r.clock.advance(1.0)
    deliver(r, 2)
    r.clock.advance(1.1)
    assert list(r.acks.redelivery_queue) == [1]  # 2 has waited only 1.1s
    r.clock.advance(1.0)
    assert list(r.acks.redelivery_queue) == [1, 2]


def test_progress_restarts_the_ack_wait() -> None:
    r = rig(ack_wait=1 * NS)
    deliver(r, 1)
    r.clock.advance(0.8)
    r.acks.progress(1)
    r.clock.advance(0.9)
    assert list(r.acks.redelivery_queue) == []
    r.clock.advance(0.2)
    assert list(r.acks.redelivery_queue) == [1]


def test_max_deliver_gives_up_on_a_message_and_announces_it_once() -> None:
    r = rig(ack_wait=1 * NS, max_deliver=2)
    deliver(r, 1)
    r.clock.advance(1.1)
    seq, delivery_count = r.acks.next_redelivery() or (0, 0)
    assert (seq, delivery_count) == (1, 2)
    deliver(r, 1, delivery_count)
    r.clock.advance(1.1)
    assert list(r.acks.redelivery_queue) == [1]
    assert r.acks.next_redelivery() is None  # a third delivery would pass max_deliver
    assert r.max_deliveries.calls == [(1, 2)]
    assert r.acks.pending == {} and floor(r) == (2, 1)


def test_a_delivery_at_max_deliver_is_dropped_by_the_timer() -> None:
    r = rig(ack_wait=1 * NS, max_deliver=1)
    deliver(r, 1)
    deliver(r, 2)
    r.clock.advance(1.1)
    assert list(r.acks.redelivery_queue) == []
    assert r.max_deliveries.calls == [(1, 1), (2, 1)]
    assert r.acks.pending == {} and floor(r) == (2, 2)


def test_a_nak_redelivers_now_or_after_its_delay() -> None:
    r = rig(ack_wait=30 * NS)
    deliver(r, 1)
    deliver(r, 2)
    assert r.acks.can_nak(1, 1) and not r.acks.can_nak(1, 5) and not r.acks.can_nak(7, 1)
    r.acks.nak(1, None)
    assert list(r.acks.redelivery_queue) == [1]
    r.acks.nak(2, 2 * NS)
    r.clock.advance(1.9)
    assert list(r.acks.redelivery_queue) == [1]
    r.clock.advance(0.2)
    assert list(r.acks.redelivery_queue) == [1, 2]


def test_backoff_sets_the_ack_wait_by_redelivery_count() -> None:
    r = rig(backoff=[1 * NS, 5 * NS], max_deliver=5)
    deliver(r, 1)
    assert r.acks.ack_wait_ns(1) == 1 * NS + 1_000_000
    r.clock.advance(1.1)
    assert r.acks.next_redelivery() == (1, 2)
    assert r.acks.ack_wait_ns(1) == 5 * NS + 1_000_000
    deliver(r, 1, 2)
    r.clock.advance(4.9)
    assert list(r.acks.redelivery_queue) == []
    r.clock.advance(0.2)
    assert list(r.acks.redelivery_queue) == [1]


def test_deliveries_below_the_stream_start_are_dropped_by_the_timer() -> None:
    r = rig(ack_wait=1 * NS)
    deliver(r, 1)
    deliver(r, 2)
    r.first_seq[0] = 2  # the stream lost message 1
    r.clock.advance(1.1)
    assert list(r.acks.pending) == [2] and list(r.acks.redelivery_queue) == [2]
    assert floor(r) == (1, 1)


def test_a_purge_acks_what_it_removed() -> None:
    r = rig()
    for seq in (1, 2, 3):
        deliver(r, seq)
    assert r.acks.purged(3, wider=False, is_stored=lambda seq: True) is True
    assert list(r.acks.pending) == [3] and floor(r) == (2, 2)
    r.acks.settle_after_purge()
    assert r.acks.state.ack_floor == [2, 2]
    assert r.acks.purged(3, wider=False, is_stored=lambda seq: True) is False  # nothing more below 3


def test_a_wider_purge_also_acks_pending_messages_the_stream_lost() -> None:
    r = rig()
    for seq in (1, 2, 3):
        deliver(r, seq)
    assert r.acks.purged(2, wider=True, is_stored=lambda seq: seq != 3) is True
    assert list(r.acks.pending) == [2]


def test_latest_ack_deadline_is_the_last_pending_delivery_plus_its_ack_wait() -> None:
    r = rig(ack_wait=10 * NS)
    assert r.acks.latest_ack_deadline_ns() is None
    deliver(r, 1)
    r.clock.advance(2)
    deliver(r, 2)
    assert r.acks.latest_ack_deadline_ns() == START_NS + 12 * NS + 1_000_000


def test_reset_forgets_everything_and_stops_the_timer() -> None:
    r = rig(ack_wait=1 * NS)
    deliver(r, 1)
    r.acks.reset(5)
    assert r.acks.pending == {} and floor(r) == (0, 4)
    r.clock.advance(5)
    assert list(r.acks.redelivery_queue) == [] and r.consumer.kicks == 0


def test_info_reports_the_persisted_counters() -> None:
    r = rig()
    assert r.acks.delivered_info(1, 1) == {"consumer_seq": 0, "stream_seq": 0}
    deliver(r, 1)
    deliver(r, 2)
    r.acks.ack(1, 1)
    delivered = r.acks.delivered_info(3, 3)
    assert (delivered["consumer_seq"], delivered["stream_seq"]) == (2, 2)
    assert "last_active" in delivered
    floor_info = r.acks.ack_floor_info()
    assert (floor_info["consumer_seq"], floor_info["stream_seq"]) == (1, 1)


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ("$JS.ACK.S.C.1.5.7.1700000000.0", (5, 7, 1)),
        ("$JS.ACK.domain.hash.S.C.2.5.7.1700000000.0.token", (5, 7, 2)),
        ("$JS.ACK.S.C.1.5", (0, 0, 0)),
        ("$JS.NAK.S.C.1.5.7.1700000000.0", (0, 0, 0)),
        ("$JS.ACK.S.C.x.5.7.1700000000.0", (5, 7, 2**64 - 1)),
        ("$JS.ACK.S.C.1..7.1700000000.0", (2**64 - 1, 7, 1)),
        ("$JS.ACK.S.C.1.\u00b2.7.1700000000.0", (2**64 - 1, 7, 1)),  # a digit to str.isdigit, not to Go
        ("$JS.ACK.S.C.1.007.18446744073709551617.1700000000.0", (7, 1, 1)),  # wraps as Go's uint64 does
    ],
)
def test_ack_subjects_are_read_as_nats_server_reads_them(subject: str, expected: tuple[int, int, int]) -> None:
    assert ack_reply_info(subject) == expected


@pytest.mark.parametrize(
    ("payload", "delay"),
    [
        (b"-NAK", None),
        (b'-NAK {"delay": 5000000000}', 5 * NS),
        (b"-NAK 2s", 2 * NS),
        (b"-NAK bogus", None),
        (b'-NAK {"delay": true}', None),
        (b"-NAK {not json", None),
    ],
)
def test_nak_delays_are_json_or_go_durations(payload: bytes, delay: int | None) -> None:
    assert nak_delay(payload) == delay


def test_a_delivery_without_acks_is_recorded_and_acked_at_one_clock_reading() -> None:
    r = rig(ack_policy="none")
    r.clock.advance(2.5)
    r.acks.delivered_acked(1, 4, 1)
    now = r.clock.time_ns()
    assert floor(r) == (1, 4)
    assert r.acks.last_delivered_ns == now
    assert r.acks.state.delivered == [1, 4] and r.acks.state.ack_floor == [1, 4]
    assert r.acks.pending == {} and r.acks.state.pending == {}
    r.clock.advance(1)
    r.acks.delivered_acked(2, 9, 1)
    assert floor(r) == (2, 9) and r.acks.state.delivered == [2, 9]
    assert r.acks.last_delivered_ns == now + NS
