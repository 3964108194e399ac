"""A stream's replicated entries and its replica: the codec, deterministic apply, snapshots.

Streams run on a manual clock with the small stand-in JetStream of
``tests/unit/test_stream.py``; a leader's decisions are applied to other streams
as a stream group's followers apply them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakejs.gocompat import gotime
from fakejs.jetstream.raft import Entry, EntryKind
from fakejs.jetstream.storage.store import MessageStore
from fakejs.jetstream.stream.entries import (
    MalformedStreamEntry,
    StreamBatch,
    StreamDelete,
    StreamEntry,
    StreamFastMessage,
    StreamMessage,
    StreamPurge,
    StreamSkip,
    decode_entry,
    encode_entry,
)
from fakejs.jetstream.stream.publish import Outcome
from fakejs.jetstream.stream.replica import StreamStateMachine, snapshot_of
from fakejs.jetstream.stream.stream import Stream
from fakejs.protocol import headers as hdrs
from tests.harness.stream_host import SECOND, Host, config

messages = st.builds(
    StreamMessage,
    seq=st.integers(1, 2**64 - 1),
    ts=st.integers(-(2**63), 2**63 - 1),
    subject=st.text(max_size=20),
    hdr=st.none() | st.binary(min_size=1, max_size=40),
    payload=st.binary(max_size=40),
    ttl=st.integers(-1, 2**40),
    msg_id=st.text(max_size=10),
    rollup=st.sampled_from(["", "sub", "all"]),
    skipped=st.booleans(),
)
entries = (
    messages
    | st.builds(StreamPurge, st.text(max_size=10), st.integers(0, 2**64 - 1), st.integers(0, 99))
    | st.builds(StreamDelete, st.integers(1, 2**64 - 1))
    | st.builds(StreamSkip, st.integers(1, 2**64 - 1))
    | st.lists(messages, min_size=1, max_size=3).map(
        lambda batch: StreamBatch(
            tuple(replace(message, seq=min(batch[0].seq, 2**64 - 4) + index) for index, message in enumerate(batch))
        )
    )
    | st.builds(
        StreamFastMessage,
        messages,
        st.text(max_size=10),
        st.integers(1, 2**64 - 1),
        st.booleans(),
        st.integers(0, 65535),
        st.booleans(),
        st.text(max_size=20),
    )
)


@given(entries)
def test_every_entry_decodes_to_itself(entry: StreamEntry) -> None:
    assert decode_entry(encode_entry(entry)) == entry


@given(st.binary(max_size=64))
def test_any_bytes_decode_or_raise_malformed(data: bytes) -> None:
    try:
        decode_entry(data)
    except MalformedStreamEntry:
        pass


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\xc1", "not msgpack"),
        (msgpack.packb([2, 1, {}]), "unknown version 2"),
        (msgpack.packb([1, 9, {}]), "unknown operation 9"),
        (msgpack.packb([1, 3, {"seq": 0}]), "seq is not an integer"),
        (msgpack.packb([1, 1, {"seq": 1}]), "payload is not bytes"),
        (msgpack.packb([1, 5, {"msgs": []}]), "msgs is not a list of messages"),
        (
            encode_entry(StreamBatch((StreamMessage(1, 0, "a", None, b""), StreamMessage(3, 0, "a", None, b"")))),
            "batch sequences are not consecutive",
        ),
        (msgpack.packb([1, 6, {"msg": 1}]), "msg is not a map"),
    ],
)
def test_malformed_entries_say_why(data: bytes, reason: str) -> None:
    with pytest.raises(MalformedStreamEntry, match=reason):
        decode_entry(data)


def make_stream(host: Host | None = None, **fields: Any) -> Stream:
    host = host or Host()
    return Stream(host, config(**fields), host.clock.time_ns(), MessageStore())


def decide(stream: Stream, subject: str, payload: bytes, hdr: bytes | None = None) -> StreamMessage | Outcome:
    """What a leader decides for a publish (without applying it)."""
    checked = stream.publisher.check_publish(subject, hdr, payload)
    if isinstance(checked, Outcome):
        return checked
    return stream.publisher.prepare_message(
        checked.subject, checked.hdr, checked.payload, checked.msg_id, checked.rollup
    )


def contents(stream: Stream) -> list[tuple[int, str, bytes | None, bytes, int, int]]:
    return [(msg.seq, msg.subject, msg.hdr, msg.data, msg.ts, msg.ttl) for msg in stream.store]


def as_log(items: list[StreamEntry]) -> list[Entry]:
    return [Entry(index, 1, EntryKind.NORMAL, encode_entry(item)) for index, item in enumerate(items, start=1)]


LIMITS = {"max_msgs_per_subject": 2, "max_msgs": 5, "duplicate_window": 60 * SECOND, "allow_rollup_hdrs": True}
publishes = st.lists(
    st.tuples(
        st.sampled_from(["s.a", "s.b", "s.c"]),
        st.binary(max_size=8),
        st.sampled_from([None, "id1", "id2", "id3"]),
        st.sampled_from(["", "sub"]),
        st.integers(0, 3),
    ),
    max_size=25,
)


@settings(max_examples=40, deadline=None)
@given(publishes)
def test_replicas_applying_a_leaders_entries_end_up_equal_to_it(
    steps: list[tuple[str, bytes, str | None, str, int]],
) -> None:
    leader_host = Host()
    leader = make_stream(leader_host, **LIMITS)
    followers = [StreamStateMachine(make_stream(**LIMITS)) for _ in range(2)]
    log: list[StreamEntry] = []
    for subject, payload, msg_id, rollup, delete in steps:
        leader_host.clock.advance(0.5)
        fields = ([("Nats-Msg-Id", msg_id)] if msg_id else []) + ([("Nats-Rollup", rollup)] if rollup else [])
        decided = decide(leader, subject, payload, hdrs.build(fields) if fields else None)
        if isinstance(decided, Outcome):
            continue
        log.append(decided)
        leader.apply(decided)
        if delete and leader.store.get(leader.store.last_seq - delete):
            log.append(StreamDelete(leader.store.last_seq - delete))
            leader.apply(log[-1])
    for follower in followers:  # the replicas' clocks are not the leader's: nothing they store reads theirs
        follower.apply(as_log(log))
    assert {snapshot_of(follower.stream) for follower in followers} == {snapshot_of(leader)}
    assert contents(followers[0].stream) == contents(leader)


def test_a_leaders_decision_is_stored_at_its_sequence_and_time_with_the_standalone_ack() -> None:
    standalone, leader = make_stream(), make_stream()
    expected = standalone.ingest("s.x", "reply", hdrs.build([("Nats-Msg-Id", "a")]), b"one")
    decided = decide(leader, "s.x", b"one", hdrs.build([("Nats-Msg-Id", "a")]))
    assert isinstance(decided, StreamMessage) and (decided.seq, decided.msg_id) == (1, "a")
    follower = StreamStateMachine(make_stream())
    follower.apply(as_log([decided]))
    assert leader.publisher.acknowledge(decided.seq) == expected
    assert contents(follower.stream) == contents(standalone) == [(1, "s.x", decided.hdr, b"one", decided.ts, 0)]
    assert follower.stream.seen_id("a") == 1  # the duplicate window came with the entry
    duplicate = decide(follower.stream, "s.x", b"one", hdrs.build([("Nats-Msg-Id", "a")]))
    assert isinstance(duplicate, Outcome) and duplicate.duplicate


def test_a_malformed_entry_is_counted_and_recorded_and_the_others_apply() -> None:
    errors: list[str] = []
    follower = StreamStateMachine(make_stream(), record_error=lambda where, exc: errors.append(where))
    good = StreamMessage(1, 5, "s.x", None, b"x")
    follower.apply([Entry(1, 1, EntryKind.NORMAL, b"\x00junk"), *as_log([good])])
    follower.apply(as_log([good]))  # the same sequence again: already held
    assert (follower.counters.malformed, follower.counters.applied, follower.counters.skipped) == (1, 1, 1)
    assert errors == ["stream S: entry 1"] and contents(follower.stream) == [(1, "s.x", None, b"x", 5, 0)]


def test_a_snapshot_brings_a_lagging_replica_level_and_restores_to_the_same_bytes() -> None:
    leader = make_stream(duplicate_window=60 * SECOND)
    behind = StreamStateMachine(make_stream(duplicate_window=60 * SECOND))
    log: list[StreamEntry] = []
    for index in range(6):
        decided = decide(leader, f"s.{index % 2}", b"%d" % index, hdrs.build([("Nats-Msg-Id", f"m{index}")]))
        assert isinstance(decided, StreamMessage)
        log.append(decided)
        leader.apply(decided)
    behind.apply(as_log(log[:3]))
    for item in (StreamDelete(2), StreamPurge("s.0", 0, 1)):
        log.append(item)
        leader.apply(item)
    behind.restore(snapshot_of(leader))
    assert behind.snapshot() == snapshot_of(leader) and contents(behind.stream) == contents(leader)
    assert [msg.seq for msg in leader.store] == [4, 5, 6] and behind.stream.last_msg_id == "m5"
    fresh = StreamStateMachine(make_stream(duplicate_window=60 * SECOND))
    fresh.restore(behind.snapshot())
    assert fresh.snapshot() == behind.snapshot()
    fresh.restore(b"not a snapshot")
    assert fresh.counters.bad_snapshots == 1 and fresh.snapshot() == behind.snapshot()


def test_a_snapshot_older_than_the_store_leaves_it_as_it_is() -> None:
    """A restarted member reads back its last snapshot while its stream kept what it applied after it."""
    replica = StreamStateMachine(make_stream())
    first = StreamMessage(1, 5, "s.x", None, b"one")
    replica.apply(as_log([first]))
    older = replica.snapshot()
    replica.apply(as_log([first, StreamMessage(2, 6, "s.y", None, b"two")])[1:])
    held = contents(replica.stream)
    replica.restore(older)
    assert contents(replica.stream) == held and len(held) == 2 and replica.counters.bad_snapshots == 0


def test_a_snapshot_arms_the_schedules_it_brings() -> None:
    leader = make_stream(allow_msg_schedules=True)
    at = gotime.rfc3339(leader.clock.time_ns() + 60 * SECOND)
    decided = decide(
        leader, "s.later", b"x", hdrs.build([("Nats-Schedule", f"@at {at}"), ("Nats-Schedule-Target", "s.out")])
    )
    assert isinstance(decided, StreamMessage)
    leader.apply(decided)
    behind = StreamStateMachine(make_stream(allow_msg_schedules=True))
    behind.restore(snapshot_of(leader))
    assert len(behind.stream.schedules) == len(leader.schedules) == 1


def test_a_fired_schedule_waits_in_flight_until_the_leadership_moves() -> None:
    host = Host()
    stream = make_stream(host, allow_msg_schedules=True)
    fired: list[str] = []
    stream.schedules.publish = lambda out: fired.append(out.subject)  # a follower's: nothing stored
    at = gotime.rfc3339(host.clock.time_ns() + SECOND)
    decided = decide(
        stream, "s.later", b"x", hdrs.build([("Nats-Schedule", f"@at {at}"), ("Nats-Schedule-Target", "s.out")])
    )
    assert isinstance(decided, StreamMessage)
    stream.apply(decided)
    host.clock.advance(2)
    host.clock.advance(2)
    assert fired == ["s.out"]
    stream.schedules.clear_inflight()
    host.clock.advance(1)
    assert fired == ["s.out", "s.out"]
