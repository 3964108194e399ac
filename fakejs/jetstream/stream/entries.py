"""A stream's replicated entries: what its leader decided, for every replica to apply the same way.

A published message passes the leader's checks (expected sequences, the
duplicate window, discard-new limits, counters...) and becomes a
:class:`StreamMessage`: the sequence and time it is stored at, its subject,
headers and payload as stored, its TTL, its ``Nats-Msg-Id`` and roll-up.
Applying one (:meth:`~fakejs.jetstream.stream.publish_path.StreamPublisher.apply_message`)
reads no clock and refuses nothing, so two stores applying the same entries
end up equal.  A standalone stream applies its own decisions at once; a
replicated one proposes them to its group (nats-server's ``streamMsgOp``).
:class:`StreamPurge`, :class:`StreamDelete` and :class:`StreamSkip` (a mirror's
hole in its origin's sequences) are the other changes a stream's log carries.

An entry is a msgpack array ``[version, operation, body]`` (:data:`ENTRY_VERSION`;
operation numbers are only ever added).  :func:`decode_entry` raises
:class:`MalformedStreamEntry`, and nothing else, for bytes that are not one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from fakejs.jetstream.replication.entry_codec import (
    MAX_INT64,
    MAX_UINT64,
    MIN_INT64,
    number,
    pack_entry,
    text,
    unpack_entry,
)

__all__ = [
    "ENTRY_VERSION",
    "MalformedStreamEntry",
    "StreamDelete",
    "StreamEntry",
    "StreamMessage",
    "StreamOp",
    "StreamPurge",
    "StreamSkip",
    "decode_entry",
    "encode_entry",
]

ENTRY_VERSION = 1


class MalformedStreamEntry(ValueError):
    """Bytes that are not a stream entry of a known version (``reason`` says what is wrong)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"malformed stream entry: {reason}")
        self.reason = reason


class StreamOp(enum.IntEnum):
    """The operation an entry carries (numbers are only ever added)."""

    MESSAGE = 1
    PURGE = 2
    DELETE = 3
    SKIP = 4


@dataclass(frozen=True)
class StreamMessage:
    """A message the leader accepted: stored at ``seq`` with time ``ts`` (``skipped``: the sequence is used and
    nothing is stored, as interest retention without interest does)."""

    seq: int
    ts: int
    subject: str
    hdr: bytes | None
    payload: bytes
    ttl: int = 0  # seconds (-1: never expires)
    msg_id: str = ""
    rollup: str = ""  # "", "sub" or "all"
    skipped: bool = False


@dataclass(frozen=True)
class StreamPurge:
    """A purge: by subject filter, below a sequence, or keeping the newest ``keep`` (``STREAM.PURGE``)."""

    filter_subject: str = ""
    seq: int = 0
    keep: int = 0


@dataclass(frozen=True)
class StreamDelete:
    """One message removed (``STREAM.MSG.DELETE``)."""

    seq: int


@dataclass(frozen=True)
class StreamSkip:
    """The sequences before ``next_seq`` used, nothing stored (a mirror's origin had no message there)."""

    next_seq: int


StreamEntry = StreamMessage | StreamPurge | StreamDelete | StreamSkip


def encode_entry(entry: StreamEntry) -> bytes:
    """The entry as the bytes a group replicates."""
    if isinstance(entry, StreamMessage):
        body: dict[str, Any] = {
            "seq": entry.seq,
            "ts": entry.ts,
            "subject": entry.subject,
            "hdr": entry.hdr,
            "payload": entry.payload,
            "ttl": entry.ttl,
            "msg_id": entry.msg_id,
            "rollup": entry.rollup,
            "skipped": entry.skipped,
        }
        return _pack(StreamOp.MESSAGE, body)
    if isinstance(entry, StreamPurge):
        return _pack(StreamOp.PURGE, {"filter": entry.filter_subject, "seq": entry.seq, "keep": entry.keep})
    if isinstance(entry, StreamSkip):
        return _pack(StreamOp.SKIP, {"next": entry.next_seq})
    return _pack(StreamOp.DELETE, {"seq": entry.seq})


def _pack(operation: StreamOp, body: dict[str, Any]) -> bytes:
    return pack_entry(ENTRY_VERSION, operation, body)


def decode_entry(data: bytes) -> StreamEntry:
    """The entry ``data`` encodes; :class:`MalformedStreamEntry` when it is not one."""
    operation, body = unpack_entry(data, ENTRY_VERSION, StreamOp, MalformedStreamEntry)
    if operation == StreamOp.MESSAGE:
        return _message(body)
    if operation == StreamOp.PURGE:
        return StreamPurge(
            _text(body, "filter"), _number(body, "seq", 0, MAX_UINT64), _number(body, "keep", 0, MAX_UINT64)
        )
    if operation == StreamOp.SKIP:
        return StreamSkip(_number(body, "next", 1, MAX_UINT64))
    return StreamDelete(_number(body, "seq", 1, MAX_UINT64))


def _message(body: dict[str, Any]) -> StreamMessage:
    hdr = body.get("hdr")
    if hdr is not None and not isinstance(hdr, bytes):
        raise MalformedStreamEntry("hdr is not bytes")
    payload = body.get("payload")
    if not isinstance(payload, bytes):
        raise MalformedStreamEntry("payload is not bytes")
    rollup = _text(body, "rollup")
    if rollup not in ("", "sub", "all"):
        raise MalformedStreamEntry(f"unknown rollup {rollup!r}")
    skipped = body.get("skipped")
    if not isinstance(skipped, bool):
        raise MalformedStreamEntry("skipped is not a boolean")
    return StreamMessage(
        seq=_number(body, "seq", 1, MAX_UINT64),
        ts=_number(body, "ts", MIN_INT64, MAX_INT64),
        subject=_text(body, "subject"),
        hdr=hdr or None,
        payload=payload,
        ttl=_number(body, "ttl", -1, MAX_INT64),
        msg_id=_text(body, "msg_id"),
        rollup=rollup,
        skipped=skipped,
    )


def _number(body: dict[str, Any], key: str, low: int, high: int) -> int:
    return number(body, key, low, high, MalformedStreamEntry)


def _text(body: dict[str, Any], key: str) -> str:
    return text(body, key, MalformedStreamEntry)
