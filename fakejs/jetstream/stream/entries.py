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
hole in its origin's sequences) are the other changes a stream's log carries;
:class:`StreamBatch` is a committed atomic batch, its messages in one entry so
that a replica applies all of them or none, and :class:`StreamFastMessage` a fast
batch's message with where it stands in its batch (every replica keeps track, so
that a new leader carries the batch on).

An entry is a msgpack array ``[version, operation, body]`` (:data:`ENTRY_VERSION`;
operation numbers are only ever added).  :func:`decode_entry` raises
:class:`MalformedStreamEntry`, and nothing else, for bytes that are not one.
"""

from __future__ import annotations

import enum
import functools
import itertools
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
    "StreamBatch",
    "StreamDelete",
    "StreamEntry",
    "StreamFastMessage",
    "StreamMessage",
    "StreamOp",
    "StreamPurge",
    "StreamSkip",
    "decode_entry",
    "encode_entry",
]

ENTRY_VERSION = 1
DECODED_KEPT = 16  # entries decoded last: the replicas of one process apply the same entry's bytes


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
    BATCH = 5
    FAST = 6


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


@dataclass(frozen=True)
class StreamBatch:
    """A committed atomic batch: its messages, at consecutive sequences, applied together."""

    messages: tuple[StreamMessage, ...]


@dataclass(frozen=True)
class StreamFastMessage:
    """A fast batch's message: ``batch_seq`` in batch ``batch`` (its publisher's ``gap_ok`` and ``flow``,
    ``commit`` when it ends the batch), sent with ``reply``."""

    message: StreamMessage
    batch: str
    batch_seq: int
    gap_ok: bool
    flow: int
    commit: bool
    reply: str


StreamEntry = StreamMessage | StreamPurge | StreamDelete | StreamSkip | StreamBatch | StreamFastMessage


def encode_entry(entry: StreamEntry) -> bytes:
    """The entry as the bytes a group replicates."""
    if isinstance(entry, StreamMessage):
        return _pack(StreamOp.MESSAGE, _message_body(entry))
    if isinstance(entry, StreamBatch):
        return _pack(StreamOp.BATCH, {"msgs": [_message_body(message) for message in entry.messages]})
    if isinstance(entry, StreamFastMessage):
        body = {
            "msg": _message_body(entry.message),
            "batch": entry.batch,
            "bseq": entry.batch_seq,
            "gap_ok": entry.gap_ok,
            "flow": entry.flow,
            "commit": entry.commit,
            "reply": entry.reply,
        }
        return _pack(StreamOp.FAST, body)
    if isinstance(entry, StreamPurge):
        return _pack(StreamOp.PURGE, {"filter": entry.filter_subject, "seq": entry.seq, "keep": entry.keep})
    if isinstance(entry, StreamSkip):
        return _pack(StreamOp.SKIP, {"next": entry.next_seq})
    return _pack(StreamOp.DELETE, {"seq": entry.seq})


def _message_body(entry: StreamMessage) -> dict[str, Any]:
    return {
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


def _pack(operation: StreamOp, body: dict[str, Any]) -> bytes:
    return pack_entry(ENTRY_VERSION, operation, body)


@functools.lru_cache(maxsize=DECODED_KEPT)
def decode_entry(data: bytes) -> StreamEntry:
    """The entry ``data`` encodes; :class:`MalformedStreamEntry` when it is not one.

    The entries are immutable, so the replicas of one process (an in-process cluster's) share the entry the
    first of them decoded from the same bytes rather than each decoding them again; bytes that do not decode
    are not remembered, and raise each time.
    """
    operation, body = unpack_entry(data, ENTRY_VERSION, StreamOp, MalformedStreamEntry)
    if operation == StreamOp.MESSAGE:
        return _message(body)
    if operation == StreamOp.PURGE:
        return StreamPurge(
            _text(body, "filter"), _number(body, "seq", 0, MAX_UINT64), _number(body, "keep", 0, MAX_UINT64)
        )
    if operation == StreamOp.SKIP:
        return StreamSkip(_number(body, "next", 1, MAX_UINT64))
    if operation == StreamOp.BATCH:
        return _batch(body)
    if operation == StreamOp.FAST:
        return _fast(body)
    return StreamDelete(_number(body, "seq", 1, MAX_UINT64))


def _batch(body: dict[str, Any]) -> StreamBatch:
    bodies = body.get("msgs")
    if not isinstance(bodies, list) or not bodies:
        raise MalformedStreamEntry("msgs is not a list of messages")
    if not all(isinstance(item, dict) for item in bodies):
        raise MalformedStreamEntry("a batch message is not a map")
    messages = tuple(_message(item) for item in bodies)
    if any(later.seq != earlier.seq + 1 for earlier, later in itertools.pairwise(messages)):
        raise MalformedStreamEntry("batch sequences are not consecutive")
    return StreamBatch(messages)


def _fast(body: dict[str, Any]) -> StreamFastMessage:
    message = body.get("msg")
    if not isinstance(message, dict):
        raise MalformedStreamEntry("msg is not a map")
    flags = body.get("gap_ok"), body.get("commit")
    if not all(isinstance(flag, bool) for flag in flags):
        raise MalformedStreamEntry("gap_ok or commit is not a boolean")
    return StreamFastMessage(
        _message(message),
        _text(body, "batch"),
        _number(body, "bseq", 1, MAX_UINT64),
        bool(flags[0]),
        _number(body, "flow", 0, MAX_UINT64),
        bool(flags[1]),
        _text(body, "reply"),
    )


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
