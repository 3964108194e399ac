"""A consumer's replica: the state machine a consumer group's committed entries are applied to.

:class:`ConsumerStateMachine` is what a server's member of a consumer group
(nats-server's ``C-R3F-...``) replicates into (a
:class:`~fakejs.jetstream.replication.StateMachine`): each committed entry
(:mod:`fakejs.jetstream.consumer.entries`) is applied to the consumer's
stored state (:class:`~fakejs.jetstream.storage.consumer_state.ConsumerState`,
nats-server's consumer store) with the store's own rules, as nats-server's
``applyConsumerEntries`` does.  It never raises into the group: an entry that
does not decode is counted, recorded as a server error and skipped.

Observers (:class:`ConsumerObserver`) hear, in log order, what was applied:
an acknowledgement with the stream sequences it released (every one an
ack-all covers, as ``processReplicatedAck`` collects them), each entry, a
restored snapshot and the group's leader.  The replicated consumer answers
ack replies from there; a replicated stream's retention drops what the acks
released (:mod:`fakejs.jetstream.consumer.retention`).

Its snapshot is the consumer state (nats-server's ``encodeConsumerState``):
delivered and ack floor, pending deliveries and redelivery counts, in
msgpack, sequences in order, so that restoring one and snapshotting again
gives the same bytes.  Pending pull requests are not in it, as they are not
in nats-server's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import msgpack

from fakejs.core.clock import ErrorSink
from fakejs.core.log import get_logger
from fakejs.core.subjects import matches
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
)
from fakejs.jetstream.raft import Entry
from fakejs.jetstream.storage.consumer_state import ConsumerState

__all__ = [
    "SNAPSHOT_VERSION",
    "ConsumerObserver",
    "ConsumerReplicaCounters",
    "ConsumerStateMachine",
    "apply_entry",
    "needs_ack",
    "restore_snapshot",
    "snapshot_of",
]

SNAPSHOT_VERSION = 1


class ConsumerObserver(Protocol):
    """What hears a consumer replica's applied entries (all methods are called in log order)."""

    def entry_applied(self, entry: ConsumerEntry, released: list[int]) -> None:
        """``entry`` was applied; for an ack, ``released`` are the stream sequences it acknowledged."""
        ...

    def restored(self) -> None:
        """A snapshot replaced the state."""
        ...

    def leader_changed(self, leader: str | None, term: int) -> None: ...


@dataclass
class ConsumerReplicaCounters:
    """Entries applied and malformed (they did not decode); snapshots refused."""

    applied: int = 0
    malformed: int = 0
    bad_snapshots: int = 0


def _log_error(where: str, exc: BaseException) -> None:
    get_logger().error("%s failed", where, exc_info=exc)


class ConsumerStateMachine:
    """The local replica of one consumer's state (see the module docstring).

    ``name`` names it in errors ("stream > consumer"); ``state`` is the store the
    entries are applied to (the consumer's own, shared with it on this server).
    """

    def __init__(self, name: str, state: ConsumerState, record_error: ErrorSink | None = None) -> None:
        self.name = name
        self.state = state
        self.leader: str | None = None
        self.term = 0
        self.pending_requests: dict[str, None] = {}  # pull requests waiting at the leader (``prm``), in order
        self.counters = ConsumerReplicaCounters()
        self.observers: list[ConsumerObserver] = []
        self._record_error = record_error or _log_error

    def apply(self, entries: Sequence[Entry]) -> None:
        for entry in entries:
            try:
                decoded = decode_entry(entry.data)
            except MalformedConsumerEntry as exc:
                self.counters.malformed += 1
                self._record_error(f"consumer {self.name}: entry {entry.index}", exc)
                continue
            released = apply_entry(self.state, decoded)
            if isinstance(decoded, PendingRequestAdded):
                self.pending_requests[decoded.reply] = None
            elif isinstance(decoded, PendingRequestRemoved):
                self.pending_requests.pop(decoded.reply, None)
            self.counters.applied += 1
            for observer in list(self.observers):
                observer.entry_applied(decoded, released)

    def snapshot(self) -> bytes:
        return snapshot_of(self.state)

    def restore(self, data: bytes) -> None:
        try:
            restore_snapshot(self.state, data)
        except MalformedConsumerEntry as exc:
            self.counters.bad_snapshots += 1
            self._record_error(f"consumer {self.name}: restoring a snapshot", exc)
            return
        for observer in list(self.observers):
            observer.restored()

    def leader_changed(self, leader: str | None, term: int) -> None:
        self.leader, self.term = leader, term
        for observer in list(self.observers):
            observer.leader_changed(leader, term)


def apply_entry(state: ConsumerState, entry: ConsumerEntry) -> list[int]:
    """Apply one entry to ``state`` with the store's rules; the stream sequences an ack released."""
    with state.applying():
        if isinstance(entry, ConsumerDelivered):
            state.update_delivered(entry.dseq, entry.sseq, entry.dc, entry.ts)
        elif isinstance(entry, ConsumerAck):
            return _ack(state, entry)
        elif isinstance(entry, ConsumerSkip):
            if state.delivered[0] == 0:
                state.set_starting(entry.seq - 1)  # nothing delivered yet: the floor starts there too
            else:
                state.update_starting(entry.seq - 1)
        elif isinstance(entry, ConsumerReset):
            state.reset(entry.seq - 1)
    return []


def _ack(state: ConsumerState, entry: ConsumerAck) -> list[int]:
    """``processReplicatedAck``: the store's ack, and what it released (an ack-all's whole range)."""
    released = [entry.sseq]
    if state.ack_policy in ("all", "flow_control") and entry.sseq - state.ack_floor[1] > 1:
        released = sorted(seq for seq in state.pending if seq < entry.sseq) + released
    state.update_acks(entry.dseq, entry.sseq)
    return released


def needs_ack(state: ConsumerState, filters: Sequence[str], seq: int, subject: str) -> bool:
    """``needAck`` from a replica's stored state: whether the consumer still has to see or acknowledge ``seq``."""
    if filters and not any(matches(pattern, subject) for pattern in filters):
        return False
    ack_floor = state.ack_floor[1]
    needed = False
    if state.ack_policy in ("none", "all", "flow_control"):
        needed = seq > ack_floor
    elif seq > ack_floor:
        needed = seq > state.delivered[1] or seq in state.pending
    return needed or seq in state.redelivered


def snapshot_of(state: ConsumerState) -> bytes:
    """The consumer state as msgpack (what :func:`restore_snapshot` takes back)."""
    document = {
        "v": SNAPSHOT_VERSION,
        "delivered": list(state.delivered),
        "ack_floor": list(state.ack_floor),
        "pending": [[seq, *state.pending[seq]] for seq in sorted(state.pending)],
        "redelivered": [[seq, state.redelivered[seq]] for seq in sorted(state.redelivered)],
    }
    packed: bytes = msgpack.packb(document, use_bin_type=True)
    return packed


def restore_snapshot(state: ConsumerState, data: bytes) -> None:
    """Replace ``state`` with a snapshot's; :class:`MalformedConsumerEntry` (the state as it was) when not one.

    A snapshot from the group is never refused for being older than the state
    (nats-server's store refuses an older update): the group's log is the
    authority, and a reset makes a newer state look older.
    """
    document = _decode_snapshot(data)
    state.load(
        document["delivered"],
        document["ack_floor"],
        {seq: [dseq, ts] for seq, dseq, ts in document["pending"]},
        {seq: count for seq, count in document["redelivered"]},
    )


def _decode_snapshot(data: bytes) -> dict[str, Any]:
    try:
        document = msgpack.unpackb(data, raw=False, strict_map_key=True)
    except Exception as exc:  # noqa: BLE001 - msgpack raises many kinds; all mean "not one"
        raise MalformedConsumerEntry(f"snapshot: not msgpack ({type(exc).__name__})") from None
    if not isinstance(document, dict) or document.get("v") != SNAPSHOT_VERSION:
        raise MalformedConsumerEntry("snapshot: not a consumer snapshot of a known version")
    for key in ("delivered", "ack_floor"):
        if not _is_row(document.get(key), 2):
            raise MalformedConsumerEntry(f"snapshot: {key} is not [consumer seq, stream seq]")
    for key, width in (("pending", 3), ("redelivered", 2)):
        rows = document.get(key)
        if not isinstance(rows, list) or not all(_is_row(row, width) for row in rows):
            raise MalformedConsumerEntry(f"snapshot: {key} is not a list of {width} integers each")
        if [row[0] for row in rows] != sorted({row[0] for row in rows}):
            raise MalformedConsumerEntry(f"snapshot: {key} is not in sequence order")
    return document


def _is_row(value: object, width: int) -> bool:
    return (
        isinstance(value, list)
        and len(value) == width
        and all(type(item) is int and -(2**63) <= item < 2**64 for item in value)
    )
