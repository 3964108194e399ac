"""The wire form of the messages: a versioned msgpack array, and its strict reading.

``encode(message)`` gives ``[WIRE_VERSION, tag, sender, term, ...fields]``;
``decode(data)`` reverses it and raises :class:`MalformedMessage` (never
anything else) for bytes that are not a well-formed message of this version:
not msgpack, a wrong shape or type, an unknown tag or entry kind, entry terms
out of order, a peer state that does not decode.  A node counts and drops such
bytes (:meth:`~fakejs.jetstream.raft.node.RaftNode.receive_bytes`).
"""

from __future__ import annotations

from typing import Any

import msgpack

from fakejs.jetstream.raft.entries import UNPACK_ERRORS, Entry, EntryKind, InvalidMembership, Membership, Snapshot
from fakejs.jetstream.raft.messages import (
    AppendEntries,
    AppendResponse,
    InstallSnapshot,
    Message,
    TimeoutNow,
    VoteRequest,
    VoteResponse,
)

WIRE_VERSION = 1
MAX_INTEGER = 2**63 - 1
TAGS: dict[type, int] = {
    VoteRequest: 1,
    VoteResponse: 2,
    AppendEntries: 3,
    AppendResponse: 4,
    InstallSnapshot: 5,
    TimeoutNow: 6,
}


class MalformedMessage(ValueError):
    """Bytes from a peer that are not a message this version reads."""


def encode(message: Message) -> bytes:
    """``message`` as bytes for the wire."""
    fields = _fields(message)
    packed: bytes = msgpack.packb([WIRE_VERSION, TAGS[type(message)], message.sender, message.term, *fields])
    return packed


def _fields(message: Message) -> list[Any]:
    if isinstance(message, VoteRequest):
        return [message.last_index, message.last_term, message.pre_vote, message.transfer]
    if isinstance(message, VoteResponse):
        return [message.granted, message.pre_vote]
    if isinstance(message, AppendEntries):
        entries = [[entry.term, int(entry.kind), entry.data] for entry in message.entries]
        return [message.prev_index, message.prev_term, message.commit, entries]
    if isinstance(message, AppendResponse):
        return [message.success, message.match_index, message.rejected_prev]
    if isinstance(message, InstallSnapshot):
        return [_snapshot_fields(message.snapshot)]
    return []


def _snapshot_fields(snapshot: Snapshot) -> list[Any]:
    membership = snapshot.membership
    peers = None if membership is None else [sorted(membership.voters), sorted(membership.observers)]
    return [snapshot.index, snapshot.term, peers, snapshot.data]


def decode(data: bytes) -> Message:
    """The message ``data`` holds; :class:`MalformedMessage` for anything else."""
    try:
        value = msgpack.unpackb(data, raw=False, use_list=True, strict_map_key=True)
    except UNPACK_ERRORS as error:
        raise MalformedMessage(f"not msgpack: {type(error).__name__}") from None
    if not isinstance(value, list) or len(value) < 4:
        raise MalformedMessage("not a message array")
    if value[0] != WIRE_VERSION or isinstance(value[0], bool):
        raise MalformedMessage(f"unsupported wire version {value[0]!r}")
    tag, sender, term, rest = value[1], value[2], value[3], value[4:]
    if not isinstance(sender, str) or not sender:
        raise MalformedMessage("sender is not a non-empty string")
    reader = _READERS.get(tag) if isinstance(tag, int) and not isinstance(tag, bool) else None
    if reader is None:
        raise MalformedMessage(f"unknown message tag {tag!r}")
    return reader(sender, _integer(term, "term"), rest)


def _integer(value: Any, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_INTEGER:
        raise MalformedMessage(f"{name} is not a non-negative integer")
    return value


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise MalformedMessage(f"{name} is not a boolean")
    return value


def _arity(rest: list[Any], count: int, name: str) -> None:
    if len(rest) != count:
        raise MalformedMessage(f"{name} has {len(rest) + 4} fields, not {count + 4}")


def _vote_request(sender: str, term: int, rest: list[Any]) -> Message:
    _arity(rest, 4, "vote request")
    last_index, last_term = _integer(rest[0], "last index"), _integer(rest[1], "last term")
    if last_term > term:
        raise MalformedMessage("vote request's last term is past its term")
    return VoteRequest(sender, term, last_index, last_term, _flag(rest[2], "pre-vote"), _flag(rest[3], "transfer"))


def _vote_response(sender: str, term: int, rest: list[Any]) -> Message:
    _arity(rest, 2, "vote response")
    return VoteResponse(sender, term, _flag(rest[0], "granted"), _flag(rest[1], "pre-vote"))


def _append_entries(sender: str, term: int, rest: list[Any]) -> Message:
    _arity(rest, 4, "append")
    prev_index, prev_term = _integer(rest[0], "prev index"), _integer(rest[1], "prev term")
    commit = _integer(rest[2], "commit")
    if prev_term > term:
        raise MalformedMessage("append's prev term is past its term")
    if not isinstance(rest[3], list):
        raise MalformedMessage("entries are not an array")
    entries = tuple(_entries(rest[3], prev_index, prev_term, term))
    return AppendEntries(sender, term, prev_index, prev_term, commit, entries)


def _entries(items: list[Any], prev_index: int, prev_term: int, term: int) -> list[Entry]:
    entries, last_term = [], prev_term
    if prev_index + len(items) > MAX_INTEGER:
        raise MalformedMessage("entry index overflows")
    for offset, item in enumerate(items, start=1):
        if not isinstance(item, list) or len(item) != 3:
            raise MalformedMessage("entry is not [term, kind, data]")
        entry_term, kind, data = _integer(item[0], "entry term"), _kind(item[1]), item[2]
        if not isinstance(data, bytes):
            raise MalformedMessage("entry data is not bytes")
        if not last_term <= entry_term <= term:
            raise MalformedMessage("entry terms are out of order")
        if kind is EntryKind.PEER_STATE:
            _membership(data)
        entries.append(Entry(prev_index + offset, entry_term, kind, data))
        last_term = entry_term
    return entries


def _kind(value: Any) -> EntryKind:
    if isinstance(value, bool) or not isinstance(value, int) or value not in EntryKind._value2member_map_:
        raise MalformedMessage(f"unknown entry kind {value!r}")
    return EntryKind(value)


def _membership(data: bytes) -> Membership:
    try:
        return Membership.decode(data)
    except InvalidMembership as error:
        raise MalformedMessage(str(error)) from None


def _append_response(sender: str, term: int, rest: list[Any]) -> Message:
    _arity(rest, 3, "append response")
    success = _flag(rest[0], "success")
    return AppendResponse(sender, term, success, _integer(rest[1], "match index"), _integer(rest[2], "rejected prev"))


def _install_snapshot(sender: str, term: int, rest: list[Any]) -> Message:
    _arity(rest, 1, "snapshot")
    fields = rest[0]
    if not isinstance(fields, list) or len(fields) != 4:
        raise MalformedMessage("snapshot is not [index, term, peers, data]")
    index, snapshot_term = _integer(fields[0], "snapshot index"), _integer(fields[1], "snapshot term")
    if index == 0 or snapshot_term > term:
        raise MalformedMessage("snapshot index is zero or its term is past the message's")
    peers, data = fields[2], fields[3]
    if not isinstance(data, bytes):
        raise MalformedMessage("snapshot data is not bytes")
    membership = None if peers is None else _membership(msgpack.packb(peers))
    return InstallSnapshot(sender, term, Snapshot(index, snapshot_term, membership, data))


def _timeout_now(sender: str, term: int, rest: list[Any]) -> Message:
    _arity(rest, 0, "timeout-now")
    return TimeoutNow(sender, term)


_READERS = {
    1: _vote_request,
    2: _vote_response,
    3: _append_entries,
    4: _append_response,
    5: _install_snapshot,
    6: _timeout_now,
}
