"""A consumer's replicated entries and its state machine: the codec, the apply, snapshots, retention.

Every entry decodes to itself and any bytes decode or raise
``MalformedConsumerEntry``; a leader's changes, proposed instead of applied and
then applied on replicas, give every replica the state a standalone store
reaches; snapshots restore to the same bytes; a replicated stream's leader
removes what the replicated acks released and no consumer needs.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakejs.jetstream.consumer.entries import (
    ConsumerAck,
    ConsumerDelivered,
    ConsumerEntry,
    ConsumerReset,
    ConsumerSkip,
    MalformedConsumerEntry,
    PendingRequestAdded,
    PendingRequestRemoved,
    decode_entry,
    encode_entry,
)
from fakejs.jetstream.consumer.replica import (
    ConsumerStateMachine,
    apply_entry,
    needs_ack,
    restore_snapshot,
    snapshot_of,
)
from fakejs.jetstream.consumer.replicated import entry_of
from fakejs.jetstream.consumer.retention import AckRetention
from fakejs.jetstream.raft import Entry, EntryKind
from fakejs.jetstream.storage.consumer_state import ConsumerState
from fakejs.jetstream.storage.store import MessageStore
from fakejs.jetstream.stream.stream import Stream
from tests.harness.stream_host import T0, Host, config

SEQ = st.integers(min_value=1, max_value=2**64 - 1)
SMALL = st.integers(min_value=1, max_value=12)
TEXT = st.text(max_size=20)

ENTRIES: st.SearchStrategy[ConsumerEntry] = st.one_of(
    st.builds(ConsumerDelivered, st.integers(0, 2**64 - 1), SEQ, SEQ, st.integers(-(2**63), 2**63 - 1)),
    st.builds(ConsumerAck, st.integers(0, 2**64 - 1), SEQ),
    st.builds(ConsumerSkip, SEQ),
    st.builds(ConsumerReset, SEQ, TEXT),
    st.builds(PendingRequestAdded, TEXT),
    st.builds(PendingRequestRemoved, TEXT),
)

# Entries a consumer of a short stream could see, in any order (small sequences, so that they meet).
SMALL_ENTRIES: st.SearchStrategy[ConsumerEntry] = st.one_of(
    st.builds(ConsumerDelivered, SMALL, SMALL, st.integers(1, 4), st.integers(0, 10)),
    st.builds(ConsumerAck, st.integers(0, 12), SMALL),
    st.builds(ConsumerSkip, SMALL),
    st.builds(ConsumerReset, SMALL),
)


def raft_entries(entries: list[ConsumerEntry]) -> list[Entry]:
    return [Entry(index, 1, EntryKind.NORMAL, encode_entry(entry)) for index, entry in enumerate(entries, 1)]


@given(ENTRIES)
def test_every_entry_decodes_to_itself(entry: ConsumerEntry) -> None:
    assert decode_entry(encode_entry(entry)) == entry


@given(st.binary(max_size=64))
def test_any_bytes_decode_or_raise_malformed(data: bytes) -> None:
    try:
        decode_entry(data)
    except MalformedConsumerEntry:
        pass


@pytest.mark.parametrize(
    "document",
    [
        [2, 1, {"dseq": 1, "sseq": 1, "dc": 1, "ts": 0}],
        [1, 9, {}],
        [1, True, {"seq": 1}],
        [1, 2, {"dseq": 1, "sseq": 0}],
        [1, 1, {"dseq": 1, "sseq": 1, "dc": 0, "ts": 0}],
        [1, 4, {"seq": 1, "reply": 5}],
        [1, 3, []],
        {"v": 1},
    ],
)
def test_entries_that_do_not_fit_are_malformed(document: Any) -> None:
    with pytest.raises(MalformedConsumerEntry):
        decode_entry(msgpack.packb(document))


def drive(state: ConsumerState) -> None:
    """A leader's store changes: a start, deliveries, a redelivery, acks out of order."""
    state.set_starting(0)
    for dseq, sseq in ((1, 1), (2, 2), (3, 3), (4, 4)):
        state.update_delivered(dseq, sseq, 1, 1000 + dseq)
    state.update_delivered(5, 2, 2, 2000)  # stream sequence 2 again, its second delivery
    state.update_acks(3, 3)
    state.update_acks(1, 1)
    state.update_acks(4, 4)


def test_proposed_changes_applied_on_replicas_reach_the_standalone_state() -> None:
    standalone = ConsumerState("explicit", 0)
    drive(standalone)

    leader, follower = ConsumerState("explicit", 0), ConsumerState("explicit", 0)
    leader.replicated = follower.replicated = True
    proposed: list[list[object]] = []
    leader.proposer = proposed.append
    drive(leader)
    drive(follower)  # a follower's own changes are dropped
    assert leader.delivered == follower.delivered == [0, 0] and not leader.pending  # proposed, not applied
    assert not leader.overwrite([9, 9], [0, 0], {}, {})  # nor is a whole state written over a replicated one
    replicas = [ConsumerStateMachine("S > C", state) for state in (leader, follower)]
    for machine in replicas:
        machine.apply(raft_entries([entry_of(record) for record in proposed]))
    assert leader.proposer is not None and leader.replicated  # applying left them as they were
    assert {machine.snapshot() for machine in replicas} == {snapshot_of(standalone)}
    assert leader.delivered == [5, 4] and leader.ack_floor == [1, 1]
    assert leader.pending == {2: [2, 2000]} and leader.redelivered == {2: 1}


def test_an_ack_all_releases_every_pending_sequence_below_it() -> None:
    state = ConsumerState("all", 0)
    released = [apply_entry(state, ConsumerSkip(1))]
    for seq in (1, 2, 3):
        released.append(apply_entry(state, ConsumerDelivered(seq, seq, 1, 0)))
    released.append(apply_entry(state, ConsumerAck(3, 3)))
    assert released[-1] == [1, 2, 3] and state.ack_floor == [3, 3] and not state.pending


def test_a_reset_forgets_what_was_delivered() -> None:
    state = ConsumerState("explicit", 0)
    for entry in (ConsumerSkip(1), ConsumerDelivered(1, 1, 1, 0), ConsumerReset(7)):
        apply_entry(state, entry)
    assert state.delivered == [0, 6] and state.ack_floor == [0, 6] and not state.pending


def test_needs_ack_reads_a_replica_state() -> None:
    state = ConsumerState("explicit", 0)
    for entry in (ConsumerSkip(1), ConsumerDelivered(1, 1, 1, 0), ConsumerDelivered(2, 2, 1, 0)):
        apply_entry(state, entry)
    apply_entry(state, ConsumerAck(2, 2))
    assert needs_ack(state, [], 1, "s.a")  # pending
    assert not needs_ack(state, [], 2, "s.a")  # acked
    assert needs_ack(state, [], 3, "s.a")  # not delivered yet
    assert not needs_ack(state, ["s.b"], 3, "s.a")  # not for it


def test_malformed_entries_are_counted_and_skipped() -> None:
    errors: list[str] = []
    machine = ConsumerStateMachine("S > C", ConsumerState("explicit", 0), lambda where, exc: errors.append(where))
    machine.apply([Entry(1, 1, EntryKind.NORMAL, b"\xc1"), *raft_entries([ConsumerSkip(3)])[:1]])
    assert machine.counters.malformed == 1 and machine.counters.applied == 1
    assert errors == ["consumer S > C: entry 1"] and machine.state.delivered == [0, 2]


@given(st.lists(SMALL_ENTRIES, max_size=30))
def test_any_entries_snapshot_and_restore_to_the_same_bytes(entries: list[ConsumerEntry]) -> None:
    state = ConsumerState("explicit", 3)
    for entry in entries:
        apply_entry(state, entry)
    data = snapshot_of(state)
    restored = ConsumerState("explicit", 3)
    restore_snapshot(restored, data)
    assert snapshot_of(restored) == data
    assert (restored.delivered, restored.ack_floor, restored.pending, restored.redelivered) == (
        state.delivered,
        state.ack_floor,
        dict(sorted(state.pending.items())),
        dict(sorted(state.redelivered.items())),
    )


@given(st.binary(max_size=64))
def test_a_malformed_snapshot_leaves_the_state_as_it_was(data: bytes) -> None:
    state = ConsumerState("explicit", 0)
    apply_entry(state, ConsumerSkip(4))
    before = snapshot_of(state)
    machine = ConsumerStateMachine("S > C", state, lambda where, exc: None)
    machine.restore(data)
    assert snapshot_of(state) == before or machine.counters.bad_snapshots == 0


def test_a_snapshot_with_pending_out_of_order_is_refused() -> None:
    document = {"v": 1, "delivered": [2, 2], "ack_floor": [0, 0], "pending": [[2, 2, 0], [1, 1, 0]], "redelivered": []}
    with pytest.raises(MalformedConsumerEntry):
        restore_snapshot(ConsumerState("explicit", 0), msgpack.packb(document))


# -- a replicated stream's retention from replicated acks ------------------------------------------


class StandInStream:
    """What ``AckRetention`` uses of a replicated stream: its leadership, its stream, its removals."""

    def __init__(self, retention: str) -> None:
        host = Host()
        self.stream = Stream(host, config(retention=retention), host.clock.time_ns(), MessageStore())
        for index in range(1, 4):
            self.stream.store.store(f"s.{index}", None, b"", T0 + index, 0)
        self.machine = SimpleNamespace(leader_observers=[])
        self.is_leader = True
        self.removed: list[int] = []

    async def delete_message(self, seq: int) -> None:
        self.removed.append(seq)
        self.stream.remove_message(seq)


def watched(retention: AckRetention, name: str, ack_policy: str, filters: list[str]) -> ConsumerStateMachine:
    machine = ConsumerStateMachine(f"S > {name}", ConsumerState(ack_policy, 0))
    retention.watch(name, machine, filters)
    machine.apply(raft_entries([ConsumerSkip(1)]))
    return machine


async def settle() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


async def test_an_interest_stream_leader_removes_a_message_once_every_consumer_acknowledged_it() -> None:
    stream = StandInStream("interest")
    retention = AckRetention(stream)  # type: ignore[arg-type]
    first = watched(retention, "A", "explicit", [])
    second = watched(retention, "B", "explicit", ["s.1", "s.2"])
    for machine in (first, second):
        machine.apply(raft_entries([ConsumerDelivered(1, 1, 1, 0), ConsumerDelivered(2, 3, 1, 0)]))
    first.apply(raft_entries([ConsumerAck(1, 1), ConsumerAck(2, 3)]))
    await settle()
    assert stream.removed == [3]  # 1 is still pending for B; 3 is not for B
    second.apply(raft_entries([ConsumerAck(1, 1)]))
    await settle()
    assert stream.removed == [3, 1] and [msg.seq for msg in stream.stream.store] == [2]


async def test_only_the_stream_leader_removes_and_a_new_leader_looks_over_the_stream() -> None:
    stream = StandInStream("workqueue")
    stream.is_leader = False
    retention = AckRetention(stream)  # type: ignore[arg-type]
    machine = watched(retention, "A", "explicit", [])
    machine.apply(raft_entries([ConsumerDelivered(1, 1, 1, 0), ConsumerDelivered(2, 2, 1, 0), ConsumerAck(1, 1)]))
    await settle()
    assert stream.removed == []
    stream.is_leader = True
    for observer in stream.machine.leader_observers:
        observer("me", 2)
    await settle()
    assert stream.removed == [1]  # 2 is pending, 3 not delivered yet


def test_a_leaders_copy_runs_ahead_of_the_committed_state() -> None:
    """The leader's copy takes a delivery and an ack at once and proposes each; the committed state takes them
    only as their entries are applied, and both end equal; a forgotten message is forgotten in both."""
    committed = ConsumerState("explicit", 0)
    committed.replicated = True
    proposed: list[list[object]] = []
    live = committed.copy_ahead(proposed.append)
    live.update_delivered(1, 5, 1, T0)
    live.update_delivered(2, 6, 1, T0)
    live.update_acks(1, 5)
    assert (live.delivered, list(live.pending)) == ([2, 6], [6])
    assert (committed.delivered, committed.pending) == ([0, 0], {})  # nothing applied yet
    for record in proposed:
        apply_entry(committed, entry_of(record))
    assert (committed.delivered, committed.ack_floor, committed.pending) == (
        live.delivered,
        live.ack_floor,
        live.pending,
    )
    live.forget(6)
    assert live.pending == committed.pending == {}
