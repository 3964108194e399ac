"""A consumer's parts on their own: no server, no sockets, time on a ManualClock.

Each part sees its consumer through the ``ConsumerView`` protocol, so a
:class:`FakeConsumer` (a plain object of that shape, in tests/harness/consumer_parts.py
with the other shared fakes) stands in for it here.  This module has the delivery
position, the lifecycle timers and pacing; the ack tracker, the pull side, priority
groups and push flow control have their own ``test_consumer_*`` modules.
"""

from __future__ import annotations

import ast
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fakejs.gocompat.gotime import NS, GoTime
from fakejs.jetstream.consumer.lifecycle import Inactivity, PauseTimer
from fakejs.jetstream.consumer.pacing import HeldDelivery, Pacer, TokenBucket, rate_limiter
from fakejs.jetstream.consumer.position import DeliveryPosition, reset_start
from fakejs.jetstream.consumer.view import ConsumerView
from fakejs.jetstream.errors import ApiError
from fakejs.jetstream.storage.store import MessageStore, StoredMessage
from fakejs.testkit.clock import ManualClock
from tests.harness.consumer_parts import START_NS, FakeConsumer, Recorder, consumer_config


def test_the_fake_consumer_is_a_consumer_view() -> None:
    view: ConsumerView = FakeConsumer(consumer_config())  # mypy checks the shape; this checks it runs
    view.kick()
    assert view.next_stream_sequence == 1 and not view.closed


def test_no_part_imports_the_consumer_module() -> None:
    package = Path(__file__).resolve().parents[2] / "fakejs" / "jetstream" / "consumer"
    offenders = []
    for path in sorted(package.glob("*.py")):
        # the consumer, what reads consumers back as such, and a replicated consumer's leader (it runs one)
        if path.name in ("consumer.py", "registry.py", "replicated.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):  # module level, in functions, under TYPE_CHECKING
            if isinstance(node, ast.Import):
                modules = {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                modules = {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
            else:
                continue
            if "fakejs.jetstream.consumer.consumer" in modules:
                offenders.append(path.name)
    assert offenders == []


# -- the delivery position ----------------------------------------------------------------


def store_with(*subjects: str) -> MessageStore:
    store = MessageStore()
    for i, subject in enumerate(subjects):
        store.store(subject, None, str(i + 1).encode(), START_NS + i * NS)
    return store


def started(store: MessageStore, filters: list[str] | None = None, **fields: Any) -> DeliveryPosition:
    position = DeliveryPosition()
    position.select_start(consumer_config(**fields), store, filters or [], 0)
    return position


def test_deliver_all_starts_at_the_first_message_and_counts_everything() -> None:
    position = started(store_with("a", "b", "a"))
    assert (position.next_stream_sequence, position.next_consumer_sequence, position.num_pending) == (1, 1, 3)


def test_deliver_new_starts_after_the_last_message() -> None:
    position = started(store_with("a", "b"), deliver_policy="new")
    assert (position.next_stream_sequence, position.num_pending) == (3, 0)


def test_deliver_last_with_a_filter_starts_at_its_last_message() -> None:
    position = started(store_with("a", "b", "a", "b", "c"), ["a"], deliver_policy="last")
    assert position.next_stream_sequence == 3
    assert position.num_pending == 1  # only "a" messages from 3 on


def test_start_sequence_past_the_end_is_kept() -> None:
    position = started(store_with("a", "b"), deliver_policy="by_start_sequence", opt_start_seq=9)
    assert position.next_stream_sequence == 9 and position.num_pending == 0


def test_an_empty_stream_starts_at_one() -> None:
    position = started(MessageStore(), deliver_policy="new")
    assert (position.next_stream_sequence, position.num_pending) == (1, 0)


def test_next_new_walks_the_filter_and_put_back_undoes_the_last_pick() -> None:
    store = store_with("a", "b", "a", "b")
    position = started(store, ["b"])
    assert position.num_pending == 2
    msg = position.next_new(store, ["b"])
    assert msg is not None and msg.seq == 2
    assert (position.next_stream_sequence, position.num_pending) == (3, 1)
    assert position.put_back(1) is False  # not the message just taken
    assert position.put_back(2) is True
    assert (position.next_stream_sequence, position.num_pending) == (2, 2)
    assert [m.seq for m in iter(lambda: position.next_new(store, ["b"]), None)] == [2, 4]
    assert position.next_new(store, ["b"]) is None
    assert position.next_stream_sequence == 5


def test_last_per_subject_walks_the_last_of_each_subject_then_resumes() -> None:
    store = store_with("a", "b", "a", "c")
    position = started(store, deliver_policy="last_per_subject")
    assert (
        position.last_per_subject_seqs == [4, 3, 2] and position.next_stream_sequence == 2 and position.num_pending == 3
    )
    picked = [position.next_new(store, []) for _ in range(3)]
    assert [m.seq for m in picked if m is not None] == [2, 3, 4]
    assert position.last_per_subject_seqs is None and position.next_stream_sequence == 5 and position.num_pending == 0
    store.store("a", None, b"new", START_NS + 10 * NS)
    position.stored(5)
    assert position.num_pending == 1
    new = position.next_new(store, [])
    assert new is not None and new.seq == 5


def test_counting_follows_stored_removed_and_clamped_messages() -> None:
    store = store_with("a", "a", "a")
    position = started(store)
    position.stored(3)  # already counted by the start
    assert position.num_pending == 3
    store.store("a", None, b"4", START_NS + 4 * NS)
    position.stored(4)
    assert position.num_pending == 4
    position.removed(4)
    assert position.num_pending == 3
    store.remove(2)
    store.remove(3)
    store.remove(4)
    position.clamp(store)  # never more than the stream holds
    assert position.num_pending == 1


def test_purge_moves_the_position_past_the_purge_and_up_to_the_acked_deliveries() -> None:
    position = started(store_with("a", "a", "a"))
    position.next_stream_sequence, position.next_consumer_sequence = 2, 2
    position.purged(start=4, acked_dseq=0)
    assert (position.next_stream_sequence, position.next_consumer_sequence) == (4, 2)
    position.purged(start=3, acked_dseq=7)
    assert (position.next_stream_sequence, position.next_consumer_sequence) == (4, 7)


def test_reset_start_checks_the_deliver_policy() -> None:
    store = store_with("a", "a", "a")
    assert reset_start(consumer_config(), 0, 2, store) == 3  # 0: after the ack floor
    assert reset_start(consumer_config(), 2, 0, store) == 2
    config = consumer_config(deliver_policy="by_start_sequence", opt_start_seq=2)
    with pytest.raises(ApiError, match="below start seq"):
        reset_start(config, 1, 0, store)
    with pytest.raises(ApiError, match="not allowed"):
        reset_start(consumer_config(deliver_policy="new"), 2, 0, store)


# -- inactivity and pauses ----------------------------------------------------------------


@dataclass
class InactivityRig:
    consumer: FakeConsumer
    clock: ManualClock
    inactivity: Inactivity
    removed: Recorder
    waiting: list[bool]
    ack_deadline: list[int | None]


def inactivity_rig(seed: int = 7, **fields: Any) -> InactivityRig:
    consumer = FakeConsumer(consumer_config(**fields))
    clock = ManualClock(start_ns=START_NS)
    removed = Recorder()
    waiting = [False]
    ack_deadline: list[int | None] = [None]
    inactivity = Inactivity(
        consumer,
        clock,
        random.Random(seed),
        remove=removed,
        pulls_waiting=lambda: waiting[0],
        latest_ack_deadline_ns=lambda: ack_deadline[0],
    )
    return InactivityRig(consumer, clock, inactivity, removed, waiting, ack_deadline)


def test_a_pull_consumer_threshold_gets_jitter_from_the_seeded_generator() -> None:
    rig = inactivity_rig(seed=7, inactive_threshold=5 * NS)
    jitter = 100_000_000 + random.Random(7).randrange(900) * 1_000_000
    assert rig.inactivity.threshold == 5 * NS + jitter
    assert inactivity_rig(seed=7, inactive_threshold=5 * NS).inactivity.threshold == rig.inactivity.threshold
    push = inactivity_rig(inactive_threshold=5 * NS, deliver_subject="dlv")
    assert push.inactivity.threshold == 5 * NS  # push consumers get none


def test_an_idle_pull_consumer_is_removed_after_its_threshold() -> None:
    rig = inactivity_rig(inactive_threshold=2 * NS)
    rig.inactivity.touch()
    seconds = rig.inactivity.threshold / NS
    rig.clock.advance(seconds - 0.01)
    rig.inactivity.touch()  # activity starts the countdown again
    rig.clock.advance(seconds - 0.01)
    assert rig.removed.calls == []
    rig.clock.advance(0.02)
    assert rig.removed.calls == [()]


def test_waiting_pulls_and_outstanding_acks_hold_off_the_removal() -> None:
    rig = inactivity_rig(inactive_threshold=1 * NS)
    seconds = rig.inactivity.threshold / NS
    rig.waiting[0] = True
    rig.inactivity.touch()
    rig.clock.advance(seconds + 0.001)
    assert rig.removed.calls == []  # a pull still waits: the countdown restarted
    rig.waiting[0] = False
    rig.ack_deadline[0] = rig.clock.time_ns() + 3 * NS  # a delivery may still be acked for 3s
    rig.clock.advance(seconds)
    assert rig.removed.calls == []  # it waits for the ack deadline plus the threshold
    rig.clock.advance(2.99)
    assert rig.removed.calls == []
    rig.clock.advance(0.02)
    assert rig.removed.calls == [()]


def test_a_push_consumer_with_interest_is_never_timed_out() -> None:
    rig = inactivity_rig(inactive_threshold=1 * NS, deliver_subject="dlv")
    rig.inactivity.touch()
    rig.inactivity.ack_seen()
    rig.clock.advance(10)
    assert rig.removed.calls == []
    rig.consumer.active = False  # the subscriber left
    rig.inactivity.touch()
    rig.clock.advance(1.001)
    assert rig.removed.calls == [()]


def test_a_closed_consumer_is_not_removed_again() -> None:
    rig = inactivity_rig(inactive_threshold=1 * NS)
    rig.inactivity.touch()
    rig.consumer.closed = True
    rig.clock.advance(5)
    assert rig.removed.calls == []


def test_the_pause_timer_resumes_delivery_at_pause_until() -> None:
    clock = ManualClock(start_ns=START_NS)
    consumer = FakeConsumer(consumer_config(pause_until=GoTime(START_NS + 2 * NS)))
    resumed = Recorder()
    pause = PauseTimer(consumer, clock, on_resumed=resumed)
    assert pause.is_paused() and pause.remaining_ns() == 2 * NS
    pause.arm()
    clock.advance(1.999)
    assert resumed.calls == [] and consumer.kicks == 0
    clock.advance(0.002)
    assert resumed.calls == [()] and consumer.kicks == 1
    assert not pause.is_paused() and pause.remaining_ns() < 0


def test_clearing_pause_until_cancels_the_timer() -> None:
    clock = ManualClock(start_ns=START_NS)
    consumer = FakeConsumer(consumer_config(pause_until=GoTime(START_NS + 2 * NS)))
    resumed = Recorder()
    pause = PauseTimer(consumer, clock, on_resumed=resumed)
    pause.arm()
    consumer.config["pause_until"] = None
    pause.arm()
    clock.advance(5)
    assert resumed.calls == [] and not pause.is_paused()


# -- pacing ------------------------------------------------------------------------------


def delivery(seq: int, ts: int, size: int = 10) -> HeldDelivery:
    msg = StoredMessage(seq, "a", None, b"x", ts)
    return HeldDelivery("replay", "inbox", f"ack.{seq}", msg, None, b"x", 1, size, 0, 0)


def test_the_token_bucket_reserves_what_the_rate_allows() -> None:
    bucket = TokenBucket(rate=100, burst=100)
    assert bucket.reserve(0.0, 100) == 0.0
    assert bucket.reserve(0.0, 50) == pytest.approx(0.5)
    assert bucket.reserve(1.0, 50) == 0.0  # refilled 100 tokens after one second, owed 50
    assert bucket.reserve(1.0, 101) == float("inf")


def test_the_rate_limit_burst_is_the_largest_message_allowed() -> None:
    assert rate_limiter(consumer_config(), {"max_msg_size": -1}, 1024) is None
    bucket = rate_limiter(consumer_config(rate_limit_bps=800), {"max_msg_size": -1}, 1024)
    assert bucket is not None and (bucket.rate, bucket.burst) == (100, 1024)
    bucket = rate_limiter(consumer_config(rate_limit_bps=800), {"max_msg_size": 64}, 1024)
    assert bucket is not None and bucket.burst == 64


def test_replay_original_holds_a_delivery_for_the_gap_between_stored_times() -> None:
    clock = ManualClock(start_ns=START_NS)
    consumer = FakeConsumer(consumer_config(replay_policy="original"))
    sent = Recorder()
    pacer = Pacer(consumer, clock, send=sent, rate_limiter=None)
    pacer.start(last_seq=2)
    assert pacer.pace(delivery(1, START_NS)) is False
    assert pacer.pace(delivery(2, START_NS + NS // 2)) is True
    assert pacer.holding
    clock.advance(0.499)
    assert sent.calls == []
    clock.advance(0.002)
    assert [d.msg.seq for (d,) in sent.calls] == [2] and consumer.kicks == 1
    assert not pacer.holding
    pacer.caught_up(next_seq=3)
    assert pacer.replay is False
    assert pacer.pace(delivery(3, START_NS + 9 * NS)) is False  # instant once caught up


def test_a_rate_limited_delivery_waits_for_its_tokens() -> None:
    clock = ManualClock(start_ns=START_NS)
    consumer = FakeConsumer(consumer_config())
    sent = Recorder()
    pacer = Pacer(consumer, clock, send=sent, rate_limiter=TokenBucket(rate=100, burst=100))
    assert pacer.pace(delivery(1, START_NS, size=100)) is False
    assert pacer.pace(delivery(2, START_NS, size=50)) is True
    clock.advance(0.51)
    assert [(d.msg.seq, d.stage) for (d,) in sent.calls] == [(2, "sending")]


def test_a_delivery_larger_than_the_burst_is_held_forever_and_dropped_on_stop() -> None:
    clock = ManualClock(start_ns=START_NS)
    consumer = FakeConsumer(consumer_config())
    sent = Recorder()
    pacer = Pacer(consumer, clock, send=sent, rate_limiter=TokenBucket(rate=100, burst=100))
    assert pacer.pace(delivery(1, START_NS, size=101)) is True
    clock.advance(3600)
    assert sent.calls == [] and pacer.holding
    pacer.stop()
    assert not pacer.holding
