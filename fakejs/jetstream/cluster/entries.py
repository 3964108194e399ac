"""The meta group's entries: what its leader proposes, as typed operations encoded with msgpack.

An entry is a msgpack array ``[version, operation, body]``: the version of
this format (:data:`ENTRY_VERSION`), the operation's number
(:class:`MetaOp`; as nats-server's ``entryOp``, numbers are only ever added)
and its body, a map.  :func:`decode_entry` turns bytes back into the
operation, or raises :class:`~fakejs.jetstream.cluster.assignments.MalformedEntry`
(and nothing else) for bytes that are not one.

| Operation | Body | Applied |
| --- | --- | --- |
| :class:`AddPeer` | the peer | a server joins the meta group, or its record (cluster, tags, offline) changes |
| :class:`RemovePeer` | ``peer`` (an id) | the server is taken out (``$JS.API.SERVER.REMOVE``) |
| :class:`AssignStream` | a stream assignment | a new stream on a group |
| :class:`UpdateStream` | a stream assignment | its configuration (or group) replaced |
| :class:`RemoveStream` | ``account``, ``name`` | the stream and its consumers deleted |
| :class:`AssignConsumer` | a consumer assignment | a consumer on a group (or its configuration replaced) |
| :class:`RemoveConsumer` | ``account``, ``stream``, ``name`` | the consumer deleted |
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgpack

from fakejs.jetstream.cluster.assignments import ConsumerAssignment, MalformedEntry, MetaPeer, StreamAssignment
from fakejs.jetstream.replication.entry_codec import pack_entry, text, unpack_entry

__all__ = [
    "ENTRY_VERSION",
    "AddPeer",
    "AssignConsumer",
    "AssignStream",
    "MetaEntry",
    "MetaOp",
    "RemoveConsumer",
    "RemovePeer",
    "RemoveStream",
    "UpdateStream",
    "decode_entry",
    "encode_entry",
    "pack",
    "unpack",
]

ENTRY_VERSION = 1


class MetaOp(enum.IntEnum):
    """An entry's operation (only ever add numbers: a log keeps the old ones)."""

    ADD_PEER = 1
    REMOVE_PEER = 2
    ASSIGN_STREAM = 3
    UPDATE_STREAM = 4
    REMOVE_STREAM = 5
    ASSIGN_CONSUMER = 6
    REMOVE_CONSUMER = 7


@dataclass(frozen=True)
class AddPeer:
    """A server joins the meta group (or its record changes)."""

    peer: MetaPeer


@dataclass(frozen=True)
class RemovePeer:
    """The server with this peer id leaves the meta group."""

    peer: str


@dataclass(frozen=True)
class AssignStream:
    """A new stream, placed on its group."""

    assignment: StreamAssignment


@dataclass(frozen=True)
class UpdateStream:
    """A stream's new configuration (and group)."""

    assignment: StreamAssignment


@dataclass(frozen=True)
class RemoveStream:
    """A stream deleted, with its consumers."""

    account: str
    name: str


@dataclass(frozen=True)
class AssignConsumer:
    """A consumer placed on its group (or its configuration replaced)."""

    assignment: ConsumerAssignment


@dataclass(frozen=True)
class RemoveConsumer:
    """A consumer deleted."""

    account: str
    stream: str
    name: str


MetaEntry = AddPeer | RemovePeer | AssignStream | UpdateStream | RemoveStream | AssignConsumer | RemoveConsumer


def pack(document: object) -> bytes:
    """``document`` as msgpack (strings as str, lists as arrays)."""
    return bytes(msgpack.packb(document, use_bin_type=True))


def unpack(data: bytes, what: str) -> Any:
    """The msgpack document in ``data``; :class:`MalformedEntry` for anything else."""
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=True)
    except Exception as exc:  # noqa: BLE001 - msgpack raises many kinds; all mean "not one"
        raise MalformedEntry(f"{what}: not msgpack ({exc})") from None


def encode_entry(entry: MetaEntry) -> bytes:
    """The bytes proposed for ``entry``."""
    return pack_entry(ENTRY_VERSION, *_body(entry))


def _body(entry: MetaEntry) -> tuple[MetaOp, dict[str, Any]]:
    match entry:
        case AddPeer(peer):
            return MetaOp.ADD_PEER, peer.to_wire()
        case RemovePeer(peer):
            return MetaOp.REMOVE_PEER, {"peer": peer}
        case AssignStream(assignment):
            return MetaOp.ASSIGN_STREAM, assignment.to_wire()
        case UpdateStream(assignment):
            return MetaOp.UPDATE_STREAM, assignment.to_wire()
        case RemoveStream(account, name):
            return MetaOp.REMOVE_STREAM, {"account": account, "name": name}
        case AssignConsumer(assignment):
            return MetaOp.ASSIGN_CONSUMER, assignment.to_wire()
        case RemoveConsumer(account, stream, name):
            return MetaOp.REMOVE_CONSUMER, {"account": account, "stream": stream, "name": name}
    raise TypeError(f"not a meta entry: {entry!r}")


def decode_entry(data: bytes) -> MetaEntry:
    """The operation ``data`` encodes; raises :class:`MalformedEntry` (only) for anything else."""
    operation, body = unpack_entry(data, ENTRY_VERSION, MetaOp, _malformed)
    return _decode_body(operation, body)


def _malformed(reason: str) -> MalformedEntry:
    return MalformedEntry(f"meta entry: {reason}")


def _decode_body(op: MetaOp, body: Mapping[str, Any]) -> MetaEntry:
    match op:
        case MetaOp.ADD_PEER:
            return AddPeer(MetaPeer.from_wire(body))
        case MetaOp.REMOVE_PEER:
            return RemovePeer(_name(body, "peer"))
        case MetaOp.ASSIGN_STREAM:
            return AssignStream(StreamAssignment.from_wire(body))
        case MetaOp.UPDATE_STREAM:
            return UpdateStream(StreamAssignment.from_wire(body))
        case MetaOp.REMOVE_STREAM:
            return RemoveStream(_name(body, "account"), _name(body, "name"))
        case MetaOp.ASSIGN_CONSUMER:
            return AssignConsumer(ConsumerAssignment.from_wire(body))
        case MetaOp.REMOVE_CONSUMER:
            return RemoveConsumer(_name(body, "account"), _name(body, "stream"), _name(body, "name"))
    raise MalformedEntry(f"meta entry: unknown operation {op!r}")  # pragma: no cover - every MetaOp is matched


def _name(body: Mapping[str, Any], key: str) -> str:
    return text(body, key, _malformed, empty=False)
