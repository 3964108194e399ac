"""A stream's replicated entries: what its leader decided, for every replica to apply the same way.

A published message passes the leader's checks (expected sequences, the
duplicate window, discard-new limits, counters...) and becomes a
:class:`StreamMessage`: the sequence and time it is stored at, its subject,
headers and payload as stored, its TTL, its ``Nats-Msg-Id`` and roll-up.
Applying one (:meth:`~fakejs.jetstream.stream.publish_path.StreamPublisher.apply_message`)
reads no clock and refuses nothing, so two stores applying the same entries
end up equal.  A standalone stream applies its own decisions at once; a
replicated one proposes them to its group (nats-server's ``streamMsgOp``).
:class:`StreamPurge` and :class:`StreamDelete` are the other changes a
stream's log carries.

An entry is a msgpack array ``[version, operation, body]`` (:data:`ENTRY_VERSION`;
operation numbers are only ever added).  :func:`decode_entry` raises
:class:`MalformedStreamEntry`, and nothing else, for bytes that are not one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import msgpack

__all__ = [
    "ENTRY_VERSION",
    "MalformedStreamEntry",
    "StreamDelete",
    "StreamEntry",
    "StreamMessage",
    "StreamOp",
    "StreamPurge",
    "decode_entry",
    "encode_entry",
]

ENTRY_VERSION = 1
_MAX_UINT64 = 2**64 - 1
_MAX_INT64 = 2**63 - 1


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


StreamEntry = StreamMessage | StreamPurge | StreamDelete


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
    return _pack(StreamOp.DELETE, {"seq": entry.seq})


def _pack(operation: StreamOp, body: dict[str, Any]) -> bytes:
    packed: bytes = msgpack.packb([ENTRY_VERSION, int(operation), body], use_bin_type=True)
    return packed


def decode_entry(data: bytes) -> StreamEntry:
    """The entry ``data`` encodes; :class:`MalformedStreamEntry` when it is not one."""
    try:
        document = msgpack.unpackb(data, raw=False, strict_map_key=True)
    except Exception as exc:  # noqa: BLE001 - msgpack raises many kinds; all mean "not one"
        raise MalformedStreamEntry(f"not msgpack ({type(exc).__name__})") from None
    if not isinstance(document, list) or len(document) != 3:
        raise MalformedStreamEntry("not a [version, operation, body] array")
    version, operation, body = document
    if version != ENTRY_VERSION or type(version) is not int:
        raise MalformedStreamEntry(f"unknown version {version!r}")
    if not isinstance(body, dict):
        raise MalformedStreamEntry("the body is not a map")
    if operation == StreamOp.MESSAGE and type(operation) is int:
        return _message(body)
    if operation == StreamOp.PURGE and type(operation) is int:
        return StreamPurge(
            _text(body, "filter"), _number(body, "seq", 0, _MAX_UINT64), _number(body, "keep", 0, _MAX_UINT64)
        )
    if operation == StreamOp.DELETE and type(operation) is int:
        return StreamDelete(_number(body, "seq", 1, _MAX_UINT64))
    raise MalformedStreamEntry(f"unknown operation {operation!r}")


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
        seq=_number(body, "seq", 1, _MAX_UINT64),
        ts=_number(body, "ts", -_MAX_INT64 - 1, _MAX_INT64),
        subject=_text(body, "subject"),
        hdr=hdr or None,
        payload=payload,
        ttl=_number(body, "ttl", -1, _MAX_INT64),
        msg_id=_text(body, "msg_id"),
        rollup=rollup,
        skipped=skipped,
    )


def _number(body: dict[str, Any], key: str, low: int, high: int) -> int:
    value = body.get(key)
    if type(value) is not int or not low <= value <= high:
        raise MalformedStreamEntry(f"{key} is not an integer in [{low}, {high}]")
    return value


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str):
        raise MalformedStreamEntry(f"{key} is not a string")
    return value
