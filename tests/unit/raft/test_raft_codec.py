"""The wire form of Raft messages: every message reads back as written, and bytes that are not a message of
this version raise :class:`MalformedMessage` (nothing else), which a node counts and drops."""

from __future__ import annotations

import random

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakejs.jetstream.raft import (
    WIRE_VERSION,
    AppendEntries,
    AppendResponse,
    Entry,
    EntryKind,
    InstallSnapshot,
    MalformedMessage,
    Membership,
    Message,
    PersistentState,
    RaftNode,
    Snapshot,
    TimeoutNow,
    VoteRequest,
    VoteResponse,
    decode,
    encode,
)

names = st.text(min_size=1, max_size=8)
counts = st.integers(0, 2**63 - 1)
memberships = st.builds(Membership.of, st.frozensets(names, min_size=1, max_size=5), st.frozensets(names, max_size=3))


@st.composite
def appends(draw: st.DrawFn) -> AppendEntries:
    term = draw(st.integers(0, 1000))
    prev_term = draw(st.integers(0, term))
    prev_index = draw(st.integers(0, 10**6))
    terms = sorted(draw(st.lists(st.integers(prev_term, term), max_size=5)))
    entries = []
    for offset, entry_term in enumerate(terms, start=1):
        if draw(st.booleans()):
            entries.append(Entry(prev_index + offset, entry_term, EntryKind.NORMAL, draw(st.binary(max_size=20))))
        else:
            entries.append(Entry(prev_index + offset, entry_term, EntryKind.PEER_STATE, draw(memberships).encode()))
    return AppendEntries(draw(names), term, prev_index, prev_term, draw(counts), tuple(entries))


@st.composite
def snapshots(draw: st.DrawFn) -> InstallSnapshot:
    term = draw(st.integers(0, 1000))
    membership = draw(st.one_of(st.none(), memberships))
    snapshot = Snapshot(draw(st.integers(1, 10**6)), draw(st.integers(0, term)), membership, draw(st.binary()))
    return InstallSnapshot(draw(names), term, snapshot)


@st.composite
def vote_requests(draw: st.DrawFn) -> VoteRequest:
    term = draw(counts)
    last_term = draw(st.integers(0, term))
    return VoteRequest(draw(names), term, draw(counts), last_term, draw(st.booleans()), draw(st.booleans()))


messages = st.one_of(
    vote_requests(),
    st.builds(VoteResponse, names, counts, st.booleans(), st.booleans()),
    appends(),
    st.builds(AppendResponse, names, counts, st.booleans(), counts, counts),
    snapshots(),
    st.builds(TimeoutNow, names, counts),
)


@settings(max_examples=100)
@given(message=messages)
def test_every_message_reads_back_as_written(message: Message) -> None:
    assert decode(encode(message)) == message


@settings(max_examples=300)
@given(data=st.binary(max_size=64))
def test_random_bytes_raise_only_malformed_message(data: bytes) -> None:
    try:
        decode(data)
    except MalformedMessage:
        pass


@settings(max_examples=100)
@given(message=messages, position=st.integers(0, 10**6), byte=st.integers(0, 255))
def test_a_damaged_message_raises_only_malformed_message(message: Message, position: int, byte: int) -> None:
    data = bytearray(encode(message))
    data[position % len(data)] = byte
    try:
        decode(bytes(data[: position % (len(data) + 1)] if byte % 2 else data))
    except MalformedMessage:
        pass


def packed(*fields: object) -> bytes:
    data: bytes = msgpack.packb(list(fields))
    return data


PEERS = Membership.of(["a"]).encode()


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\xc1", "not msgpack"),
        (packed(1, 2, 3), "not a message array"),
        (packed(WIRE_VERSION + 1, 6, "a", 1), "unsupported wire version"),
        (packed(True, 6, "a", 1), "unsupported wire version"),
        (packed(WIRE_VERSION, 99, "a", 1), "unknown message tag"),
        (packed(WIRE_VERSION, 6, "", 1), "sender"),
        (packed(WIRE_VERSION, 6, "a", -1), "term"),
        (packed(WIRE_VERSION, 6, "a", 1, "extra"), "fields"),
        (packed(WIRE_VERSION, 1, "a", 1, 5, 2, False, False), "last term is past its term"),
        (packed(WIRE_VERSION, 2, "a", 1, 1, 0), "granted is not a boolean"),
        (packed(WIRE_VERSION, 3, "a", 2, 0, 0, 0, [[1, 7, b""]]), "unknown entry kind"),
        (packed(WIRE_VERSION, 3, "a", 2, 0, 0, 0, [[2, 0, b""], [1, 0, b""]]), "out of order"),
        (packed(WIRE_VERSION, 3, "a", 2, 0, 0, 0, [[3, 0, b""]]), "out of order"),
        (packed(WIRE_VERSION, 3, "a", 2, 0, 0, 0, [[1, 0, "text"]]), "entry data is not bytes"),
        (packed(WIRE_VERSION, 3, "a", 2, 0, 0, 0, [[1, 1, b"\x01"]]), "membership"),
        (packed(WIRE_VERSION, 3, "a", 2, 0, 0, 0, [[1, 1, packed([""], [])]]), "peer id"),
        (packed(WIRE_VERSION, 3, "a", 2, 0, 0, 0, {"entries": 1}), "entries are not an array"),
        (packed(WIRE_VERSION, 5, "a", 2, [0, 1, None, b""]), "snapshot index is zero"),
        (packed(WIRE_VERSION, 5, "a", 2, [1, 1, [["a"]], b""]), "membership"),
        (packed(WIRE_VERSION, 3, "a", 2, 0, 0, 0, [[1, 1, PEERS]]), None),
    ],
)
def test_malformed_messages_say_what_is_wrong(data: bytes, reason: str | None) -> None:
    if reason is None:  # the well-formed neighbour of the cases above
        assert isinstance(decode(data), AppendEntries)
        return
    with pytest.raises(MalformedMessage, match=reason):
        decode(data)


def test_a_node_counts_and_drops_malformed_bytes() -> None:
    node = RaftNode("a", PersistentState(), rng=random.Random(1), peers=["a", "b", "c"])
    node.start()
    before = (node.term, node.role, node.log.last_index)
    for data in (b"", b"\xc1", packed(WIRE_VERSION, 3, "b", 9, 0, 0, 0, [[1, 7, b""]]), packed(WIRE_VERSION + 1)):
        ready = node.receive_bytes(data)
        assert ready.empty
    assert node.counters.malformed == 4
    assert (node.term, node.role, node.log.last_index) == before


def test_a_node_ignores_messages_that_claim_to_come_from_itself() -> None:
    node = RaftNode("a", PersistentState(), rng=random.Random(1), peers=["a", "b", "c"])
    node.start()
    assert node.receive_bytes(encode(AppendEntries("a", 5, 0, 0, 0))).empty
    assert node.counters.ignored == 1
    assert node.term == 0
