"""The meta group's state: entries encoded and decoded, applied, snapshotted and restored, malformed input
refused with MalformedEntry only, and observers told what changed for their server."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakejs.gocompat.ids import get_hash
from fakejs.jetstream.cluster import (
    AddPeer,
    AssignConsumer,
    AssignStream,
    ConsumerAssignment,
    MalformedEntry,
    MetaEntry,
    MetaObserver,
    MetaPeer,
    MetaState,
    MetaStateMachine,
    RaftGroup,
    RemoveConsumer,
    RemovePeer,
    RemoveStream,
    StreamAssignment,
    UpdateStream,
    decode_entry,
    encode_entry,
)
from fakejs.jetstream.raft import Entry, EntryKind

SERVERS = ["n1", "n2", "n3", "n4"]
PEERS = [get_hash(name) for name in SERVERS]


def entries(*operations: MetaEntry, first: int = 1) -> list[Entry]:
    return [Entry(first + i, 1, EntryKind.NORMAL, encode_entry(op)) for i, op in enumerate(operations)]


def stream(name: str, peers: tuple[str, ...] = tuple(PEERS[:3]), account: str = "A", **config: Any) -> StreamAssignment:
    group = RaftGroup(f"S-R{len(peers)}F-{name}", peers, "file", "c1")
    return StreamAssignment(account, {"name": name, "subjects": [f"{name}.>"], **config}, group, 7, {}, "_INBOX.r")


def consumer(stream_name: str, name: str, peers: tuple[str, ...] = tuple(PEERS[:3])) -> ConsumerAssignment:
    group = RaftGroup(f"C-R{len(peers)}F-{name}", peers, "file", "c1")
    return ConsumerAssignment("A", stream_name, name, {"durable_name": name}, group, 9)


class Recorder(MetaObserver):
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def stream_assigned(self, assignment: StreamAssignment) -> None:
        self.events.append(("stream+", assignment.name))

    def stream_removed(self, assignment: StreamAssignment) -> None:
        self.events.append(("stream-", assignment.name))

    def consumer_assigned(self, assignment: ConsumerAssignment) -> None:
        self.events.append(("consumer+", assignment.name))

    def consumer_removed(self, assignment: ConsumerAssignment) -> None:
        self.events.append(("consumer-", assignment.name))

    def peers_changed(self, peers: Any) -> None:
        self.events.append(("peers", ",".join(peer.name for peer in peers)))


def test_entries_apply_in_order_and_skip_what_does_not_fit() -> None:
    machine = MetaStateMachine(PEERS[0])
    machine.apply(
        entries(
            AddPeer(MetaPeer("n1", "c1", ("az:1",))),
            AssignStream(stream("ORDERS")),
            AssignStream(stream("ORDERS", retention="work")),  # the first applied wins
            AssignConsumer(consumer("ORDERS", "D")),
            AssignConsumer(consumer("GONE", "D")),  # no such stream
            UpdateStream(stream("ORDERS", max_msgs=5)),
            RemoveStream("A", "NOPE"),
        )
    )
    state = machine.state
    assert list(state.peers) == [get_hash("n1")] and state.peers[get_hash("n1")].tags == ("az:1",)
    assert state.stream("A", "ORDERS") == stream("ORDERS", max_msgs=5)
    assert state.consumer("A", "ORDERS", "D") == consumer("ORDERS", "D")
    assert (machine.counters.applied, machine.counters.skipped, machine.counters.malformed) == (4, 3, 0)
    machine.apply(entries(RemoveStream("A", "ORDERS"), RemovePeer(get_hash("n1")), first=8))
    assert state.streams == {} and state.consumers == {}  # the stream went with its consumers
    assert state.peers[get_hash("n1")].removed and state.active_peers() == []
    assert state.find_peer("n1") is state.find_peer(get_hash("n1"))


def test_each_stream_counts_its_own_consumers_through_adds_removes_deletes_and_restores() -> None:
    machine = MetaStateMachine(PEERS[0])
    machine.apply(
        entries(
            AssignStream(stream("ORDERS")),
            AssignStream(stream("AUDIT")),
            AssignConsumer(consumer("ORDERS", "D1")),
            AssignConsumer(consumer("ORDERS", "D2")),
            AssignConsumer(consumer("ORDERS", "D1")),  # assigned again: still one consumer
            AssignConsumer(consumer("AUDIT", "D1")),
            AssignConsumer(consumer("GONE", "D1")),  # no such stream: counted nowhere
        )
    )
    state = machine.state
    assert (state.consumer_count("A", "ORDERS"), state.consumer_count("A", "AUDIT")) == (2, 1)
    assert [ca.name for ca in state.consumers_of("A", "ORDERS")] == ["D1", "D2"]
    assert state.consumer_count("A", "GONE") == state.consumer_count("B", "ORDERS") == 0
    machine.apply(entries(RemoveConsumer("A", "ORDERS", "D1"), RemoveConsumer("A", "ORDERS", "D1"), first=8))
    assert state.consumer_count("A", "ORDERS") == 1 and [ca.name for ca in state.consumers_of("A", "ORDERS")] == ["D2"]
    machine.apply(entries(RemoveStream("A", "ORDERS"), AssignStream(stream("ORDERS")), first=10))
    assert state.consumer_count("A", "ORDERS") == 0 and list(state.consumers_of("A", "ORDERS")) == []
    machine.apply(entries(AssignConsumer(consumer("ORDERS", "D3")), first=12))
    restored = MetaState.from_snapshot(state.snapshot())
    for held in (state, restored):
        assert (held.consumer_count("A", "ORDERS"), held.consumer_count("A", "AUDIT")) == (1, 1)
        assert [ca.name for ca in held.consumers_of("A", "ORDERS")] == ["D3"]


def test_malformed_entries_are_counted_recorded_and_skipped() -> None:
    errors: list[tuple[str, BaseException]] = []
    machine = MetaStateMachine(PEERS[0], record_error=lambda where, exc: errors.append((where, exc)))
    bad = [
        b"",
        b"\xc1",  # never used in msgpack
        msgpack.packb([2, 3, {}]),  # another version
        msgpack.packb([1, 99, {}]),  # an unknown operation
        msgpack.packb([1, 3, {"account": "A", "stream": {"name": "S"}}]),  # no group
        msgpack.packb([1, 3, {"account": "A", "stream": {}, "group": {"name": "g", "peers": ["p"], "store": "file"}}]),
        msgpack.packb([1, 1, {"name": "n1", "tags": "az"}]),
        msgpack.packb([1, 5, {"account": "A"}]),
        msgpack.packb([True, 1, {"name": "n1"}]),
        msgpack.packb({"v": 1}),
    ]
    good = encode_entry(AddPeer(MetaPeer("n2", "c1")))
    machine.apply([Entry(i + 1, 1, EntryKind.NORMAL, data) for i, data in enumerate([*bad, good])])
    assert machine.counters.malformed == len(bad) and machine.counters.applied == 1
    assert all(isinstance(exc, MalformedEntry) for _, exc in errors) and len(errors) == len(bad)
    assert "group" in str(errors[4][1]) and "version" in str(errors[2][1])
    machine.restore(b"\x93\x01")  # a torn snapshot leaves the state as it was
    assert list(machine.state.peers) == [get_hash("n2")]


def test_observers_hear_what_concerns_their_server() -> None:
    machine = MetaStateMachine(PEERS[0])
    recorder = machine.observe(Recorder())
    assert isinstance(recorder, Recorder)
    elsewhere = tuple(PEERS[1:4])
    machine.apply(
        entries(
            AddPeer(MetaPeer("n1", "c1")),
            AssignStream(stream("MINE")),
            AssignStream(stream("THEIRS", peers=elsewhere)),
            AssignConsumer(consumer("MINE", "D")),
            UpdateStream(stream("MINE", peers=elsewhere)),  # this server leaves the stream's group
            AssignConsumer(consumer("THEIRS", "E", peers=elsewhere)),
        )
    )
    assert recorder.events == [("peers", "n1"), ("stream+", "MINE"), ("consumer+", "D"), ("stream-", "MINE")]
    recorder.events.clear()
    machine.apply(entries(UpdateStream(stream("MINE")), RemoveStream("A", "MINE"), first=7))
    assert recorder.events == [("stream+", "MINE"), ("consumer-", "D"), ("stream-", "MINE")]


def test_a_restored_snapshot_is_told_as_the_difference() -> None:
    source = MetaStateMachine(PEERS[0])
    source.apply(entries(AddPeer(MetaPeer("n1", "c1")), AssignStream(stream("KEPT")), AssignStream(stream("NEW"))))
    target = MetaStateMachine(PEERS[0])
    target.apply(
        entries(AssignStream(stream("KEPT")), AssignStream(stream("OLD")), AssignConsumer(consumer("OLD", "D")))
    )
    recorder = target.observe(Recorder())
    target.restore(source.snapshot())
    assert recorder.events == [("consumer-", "D"), ("stream-", "OLD"), ("stream+", "NEW"), ("peers", "n1")]
    assert target.state == source.state


def test_an_observer_that_raises_is_recorded_and_the_others_are_told() -> None:
    errors: list[str] = []
    machine = MetaStateMachine(PEERS[0], record_error=lambda where, exc: errors.append(where))

    class Broken(MetaObserver):
        def stream_assigned(self, assignment: StreamAssignment) -> None:
            raise RuntimeError("boom")

    machine.observe(Broken())
    recorder = machine.observe(Recorder())
    assert isinstance(recorder, Recorder)
    machine.apply(entries(AssignStream(stream("S1")), AssignStream(stream("S2"))))
    assert errors == ["meta group: observer stream_assigned"] * 2
    assert recorder.events == [("stream+", "S1"), ("stream+", "S2")]
    assert set(machine.state.streams) == {("A", "S1"), ("A", "S2")}


def test_snapshots_refuse_what_is_not_one() -> None:
    assert MetaState.from_snapshot(b"") == MetaState()
    for data in (b"\xc1", msgpack.packb({"v": 2}), msgpack.packb({"v": 1, "peers": {}}), msgpack.packb([1])):
        with pytest.raises(MalformedEntry):
            MetaState.from_snapshot(data)
    orphan = {"v": 1, "consumers": [consumer("NONE", "D").to_wire()]}
    with pytest.raises(MalformedEntry, match="unknown stream"):
        MetaState.from_snapshot(msgpack.packb(orphan))
    twice = {"v": 1, "streams": [stream("S").to_wire(), stream("S").to_wire()]}
    with pytest.raises(MalformedEntry, match="twice"):
        MetaState.from_snapshot(msgpack.packb(twice))


# -- properties ----------------------------------------------------------------------------------------

names = st.text(alphabet="ABCDEFGHIJ", min_size=1, max_size=3)
json_scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
groups = st.builds(
    RaftGroup,
    name=names.map(lambda n: f"S-R3F-{n}"),
    peers=st.lists(st.sampled_from(PEERS), min_size=1, max_size=4, unique=True).map(tuple),
    storage=st.sampled_from(["file", "memory"]),
    cluster=st.sampled_from(["", "c1"]),
    preferred=st.sampled_from(["", *PEERS]),
)
accounts = st.sampled_from(["A", "B"])
configs = st.dictionaries(st.text(max_size=6), json_values, max_size=3)
streams = st.builds(
    lambda account, name, extra, group, created, reply: StreamAssignment(
        account, {**extra, "name": name}, group, created, {}, reply
    ),
    accounts,
    names,
    configs,
    groups,
    st.integers(0, 2**63 - 1),
    st.text(max_size=8),
)
consumers = st.builds(
    ConsumerAssignment, accounts, names, names, configs, groups, st.integers(0, 2**63 - 1), configs, st.text(max_size=4)
)
peers = st.builds(
    MetaPeer,
    st.sampled_from(SERVERS),
    st.sampled_from(["c1", "c2"]),
    st.lists(names, max_size=2).map(tuple),
    st.booleans(),
)
operations: st.SearchStrategy[MetaEntry] = st.one_of(
    peers.map(AddPeer),
    st.sampled_from(PEERS).map(RemovePeer),
    streams.map(AssignStream),
    streams.map(UpdateStream),
    st.builds(RemoveStream, accounts, names),
    consumers.map(AssignConsumer),
    st.builds(RemoveConsumer, accounts, names, names),
)


@settings(max_examples=150, deadline=None)
@given(operations)
def test_every_entry_decodes_to_itself(operation: MetaEntry) -> None:
    assert decode_entry(encode_entry(operation)) == operation


@settings(max_examples=100, deadline=None)
@given(st.lists(operations, max_size=25))
def test_a_snapshot_restores_the_same_state_and_the_same_bytes(operations_applied: list[MetaEntry]) -> None:
    machine = MetaStateMachine(PEERS[0])
    machine.apply(entries(*operations_applied))
    data = machine.snapshot()
    restored = MetaStateMachine(PEERS[1])
    restored.restore(data)
    assert restored.state == machine.state and restored.snapshot() == data
    assert restored.counters.malformed == 0
    for state in (machine.state, restored.state):  # each stream's count and list agree with the consumers held
        for account, name in state.streams:
            held = [ca for (owner, of, _), ca in state.consumers.items() if (owner, of) == (account, name)]
            assert list(state.consumers_of(account, name)) == held and state.consumer_count(account, name) == len(held)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64) | st.builds(lambda doc: msgpack.packb(doc), st.lists(json_values, max_size=3)))
def test_any_bytes_decode_or_raise_malformed_entry_only(data: bytes) -> None:
    try:
        decode_entry(data)
    except MalformedEntry:
        pass
    try:
        MetaState.from_snapshot(data)
    except MalformedEntry:
        pass
