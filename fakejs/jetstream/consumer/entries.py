"""A consumer's replicated entries: what its leader did, for every replica's consumer state to apply the same way.

The leader delivers and takes acks; each change to the consumer's stored state
(:class:`~fakejs.jetstream.storage.consumer_state.ConsumerState`) becomes an
entry of the consumer's group, applied on every replica once committed
(nats-server's consumer entry operations):

* :class:`ConsumerDelivered` (``updateDeliveredOp``): delivery ``dseq`` of
  stream sequence ``sseq``, its ``dc``-th, went out at ``ts``;
* :class:`ConsumerAck` (``updateAcksOp``): delivery ``dseq`` of ``sseq`` was acknowledged;
* :class:`ConsumerSkip` (``updateSkipOp``): delivery starts at stream sequence ``seq``;
* :class:`ConsumerReset` (``resetSeqOp``): delivery starts again at ``seq``, forgetting
  what was delivered (``reply``: the reset request's, answered once applied);
* :class:`PendingRequestAdded` and :class:`PendingRequestRemoved`
  (``addPendingRequest``, ``removePendingRequest``): a pull request waiting at the
  leader, which followers keep to tell it when leadership moves.

An entry is a msgpack array ``[version, operation, body]`` (:data:`ENTRY_VERSION`;
operation numbers are only ever added).  :func:`decode_entry` raises
:class:`MalformedConsumerEntry`, and nothing else, for bytes that are not one.
nats-server packs them as varints after an operation byte; the format here is
fakejs's own.
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
    "ConsumerAck",
    "ConsumerDelivered",
    "ConsumerEntry",
    "ConsumerOp",
    "ConsumerReset",
    "ConsumerSkip",
    "MalformedConsumerEntry",
    "PendingRequestAdded",
    "PendingRequestRemoved",
    "decode_entry",
    "encode_entry",
]

ENTRY_VERSION = 1


class MalformedConsumerEntry(ValueError):
    """Bytes that are not a consumer entry of a known version (``reason`` says what is wrong)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"malformed consumer entry: {reason}")
        self.reason = reason


class ConsumerOp(enum.IntEnum):
    """The operation an entry carries (numbers are only ever added)."""

    DELIVERED = 1
    ACK = 2
    SKIP = 3
    RESET = 4
    REQUEST_ADDED = 5
    REQUEST_REMOVED = 6


@dataclass(frozen=True)
class ConsumerDelivered:
    """Delivery ``dseq`` of stream sequence ``sseq`` (its ``dc``-th) went out at ``ts`` (ns)."""

    dseq: int
    sseq: int
    dc: int
    ts: int


@dataclass(frozen=True)
class ConsumerAck:
    """Delivery ``dseq`` of stream sequence ``sseq`` was acknowledged (``dseq`` 0: the message left the stream)."""

    dseq: int
    sseq: int


@dataclass(frozen=True)
class ConsumerSkip:
    """Delivery starts at stream sequence ``seq`` (a new consumer's first position)."""

    seq: int


@dataclass(frozen=True)
class ConsumerReset:
    """Delivery starts again at stream sequence ``seq``; ``reply`` is the reset request's ("" for none)."""

    seq: int
    reply: str = ""


@dataclass(frozen=True)
class PendingRequestAdded:
    """A pull request (its reply subject) waits at the leader."""

    reply: str


@dataclass(frozen=True)
class PendingRequestRemoved:
    """A pull request no longer waits at the leader."""

    reply: str


ConsumerEntry = (
    ConsumerDelivered | ConsumerAck | ConsumerSkip | ConsumerReset | PendingRequestAdded | PendingRequestRemoved
)


def encode_entry(entry: ConsumerEntry) -> bytes:
    """The entry as the bytes a group replicates."""
    return pack_entry(ENTRY_VERSION, *_body(entry))


def _body(entry: ConsumerEntry) -> tuple[ConsumerOp, dict[str, Any]]:
    if isinstance(entry, ConsumerDelivered):
        return ConsumerOp.DELIVERED, {"dseq": entry.dseq, "sseq": entry.sseq, "dc": entry.dc, "ts": entry.ts}
    if isinstance(entry, ConsumerAck):
        return ConsumerOp.ACK, {"dseq": entry.dseq, "sseq": entry.sseq}
    if isinstance(entry, ConsumerSkip):
        return ConsumerOp.SKIP, {"seq": entry.seq}
    if isinstance(entry, ConsumerReset):
        return ConsumerOp.RESET, {"seq": entry.seq, "reply": entry.reply}
    if isinstance(entry, PendingRequestAdded):
        return ConsumerOp.REQUEST_ADDED, {"reply": entry.reply}
    return ConsumerOp.REQUEST_REMOVED, {"reply": entry.reply}


def decode_entry(data: bytes) -> ConsumerEntry:
    """The entry ``data`` encodes; :class:`MalformedConsumerEntry` when it is not one."""
    operation, body = unpack_entry(data, ENTRY_VERSION, ConsumerOp, MalformedConsumerEntry)
    return _DECODERS[operation](body)


def _delivered(body: dict[str, Any]) -> ConsumerEntry:
    return ConsumerDelivered(
        _number(body, "dseq", 0, MAX_UINT64),
        _number(body, "sseq", 1, MAX_UINT64),
        _number(body, "dc", 1, MAX_UINT64),
        _number(body, "ts", MIN_INT64, MAX_INT64),
    )


def _ack(body: dict[str, Any]) -> ConsumerEntry:
    return ConsumerAck(_number(body, "dseq", 0, MAX_UINT64), _number(body, "sseq", 1, MAX_UINT64))


def _skip(body: dict[str, Any]) -> ConsumerEntry:
    return ConsumerSkip(_number(body, "seq", 1, MAX_UINT64))


def _reset(body: dict[str, Any]) -> ConsumerEntry:
    return ConsumerReset(_number(body, "seq", 1, MAX_UINT64), _text(body, "reply"))


def _request_added(body: dict[str, Any]) -> ConsumerEntry:
    return PendingRequestAdded(_text(body, "reply"))


def _request_removed(body: dict[str, Any]) -> ConsumerEntry:
    return PendingRequestRemoved(_text(body, "reply"))


_DECODERS = {
    ConsumerOp.DELIVERED: _delivered,
    ConsumerOp.ACK: _ack,
    ConsumerOp.SKIP: _skip,
    ConsumerOp.RESET: _reset,
    ConsumerOp.REQUEST_ADDED: _request_added,
    ConsumerOp.REQUEST_REMOVED: _request_removed,
}


def _number(body: dict[str, Any], key: str, low: int, high: int) -> int:
    return number(body, key, low, high, MalformedConsumerEntry)


def _text(body: dict[str, Any], key: str) -> str:
    return text(body, key, MalformedConsumerEntry)
