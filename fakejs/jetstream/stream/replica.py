"""A stream's replica: the state machine a stream group's committed entries are applied to.

:class:`StreamStateMachine` is what a server's member of a stream group
(nats-server's ``S-R3F-...``) replicates into (a
:class:`~fakejs.jetstream.replication.StateMachine`): each committed entry
(:mod:`fakejs.jetstream.stream.entries`) is applied to the local
:class:`~fakejs.jetstream.stream.stream.Stream` with
:meth:`~fakejs.jetstream.stream.stream.Stream.apply`, as nats-server's
``applyStreamEntries`` does.  It never raises into the group: an entry that
does not decode is counted and recorded as a server error, and skipped; a
message (or committed atomic batch) at a sequence the store already holds
(applied before a snapshot was restored) is skipped.

Its snapshot is the store itself (:func:`snapshot_of`): first and last
sequence, the last time, every message, the stream's last ``Nats-Msg-Id``
and its duplicate window, in msgpack.  That is enough to bring a follower
up from nothing, at the cost of the whole stream in one document (memory and
one message on the routes): fine for small streams only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgpack

from fakejs.core.clock import ErrorSink
from fakejs.core.log import get_logger
from fakejs.jetstream.raft import Entry
from fakejs.jetstream.stream.entries import (
    MalformedStreamEntry,
    StreamBatch,
    StreamFastMessage,
    StreamMessage,
    decode_entry,
)
from fakejs.jetstream.stream.stream import Stream

__all__ = ["SNAPSHOT_VERSION", "ReplicaCounters", "StreamStateMachine", "restore_snapshot", "snapshot_of"]

SNAPSHOT_VERSION = 1


@dataclass
class ReplicaCounters:
    """Entries applied, skipped (already held) and malformed (they did not decode); snapshots refused."""

    applied: int = 0
    skipped: int = 0
    malformed: int = 0
    bad_snapshots: int = 0


def _log_error(where: str, exc: BaseException) -> None:
    get_logger().error("%s failed", where, exc_info=exc)


class StreamStateMachine:
    """The local replica of one stream (see the module docstring)."""

    def __init__(self, stream: Stream, record_error: ErrorSink | None = None) -> None:
        self.stream = stream
        self.leader: str | None = None
        self.term = 0
        self.counters = ReplicaCounters()
        self._record_error = record_error or _log_error
        # Told ``(leader, term)`` when the group's leader changes (a replicated stream's retention sweeps then).
        self.leader_observers: list[Callable[[str | None, int], None]] = []
        # Told of each fast batch message applied (every replica keeps track of the batches in flight).
        self.on_fast: Callable[[StreamFastMessage], None] = lambda entry: None

    def apply(self, entries: Sequence[Entry]) -> None:
        for entry in entries:
            try:
                decoded = decode_entry(entry.data)
            except MalformedStreamEntry as exc:
                self.counters.malformed += 1
                self._record_error(f"stream {self.stream.name}: entry {entry.index}", exc)
                continue
            if isinstance(decoded, StreamMessage) and decoded.seq <= self.stream.store.last_seq:
                self.counters.skipped += 1  # already held (a restored snapshot covers it)
                continue
            if isinstance(decoded, StreamBatch) and decoded.messages[-1].seq <= self.stream.store.last_seq:
                self.counters.skipped += 1  # a batch is stored whole: held whole, or not at all
                continue
            if isinstance(decoded, StreamFastMessage) and decoded.message.seq <= self.stream.store.last_seq:
                self.counters.skipped += 1
                continue
            self.stream.apply(decoded)
            self.counters.applied += 1
            if isinstance(decoded, StreamFastMessage):
                self.on_fast(decoded)

    def snapshot(self) -> bytes:
        return snapshot_of(self.stream)

    def restore(self, data: bytes) -> None:
        try:
            restore_snapshot(self.stream, data)
        except MalformedStreamEntry as exc:
            self.counters.bad_snapshots += 1
            self._record_error(f"stream {self.stream.name}: restoring a snapshot", exc)

    def leader_changed(self, leader: str | None, term: int) -> None:
        self.leader, self.term = leader, term
        for observer in list(self.leader_observers):
            observer(leader, term)


def snapshot_of(stream: Stream) -> bytes:
    """The stream's store and duplicate window as msgpack (what :func:`restore_snapshot` takes back)."""
    store = stream.store
    document = {
        "v": SNAPSHOT_VERSION,
        "first": store.first_seq,
        "last": store.last_seq,
        "last_ts": store.last_ts,
        "last_msg_id": stream.last_msg_id,
        "msgs": [[msg.seq, msg.subject, msg.hdr, msg.data, msg.ts, msg.ttl] for msg in store],
        "ids": [list(entry) for entry in stream.dedup.entries()],
    }
    packed: bytes = msgpack.packb(document, use_bin_type=True)
    return packed


def restore_snapshot(stream: Stream, data: bytes) -> None:
    """Bring the stream to a snapshot's messages and duplicate window.

    The store is a replica of the same log, behind the snapshot or level with
    it: what it holds that the snapshot does not was removed since and goes,
    what the snapshot holds past the store's last sequence is stored.  A store
    past the snapshot's last sequence (a restarted member whose stream kept what
    it applied after its last snapshot) applied every entry the snapshot covers,
    and is left as it is: the entries after the snapshot skip what it holds.
    Raises :class:`MalformedStreamEntry` (leaving the stream as it was) for
    bytes that are not a snapshot.
    """
    document = _decode_snapshot(data)
    store = stream.store
    if document["last"] < store.last_seq:
        return
    kept = {item[0] for item in document["msgs"]}
    for msg in list(store):
        if msg.seq not in kept:
            stream.remove_message(msg.seq)
    store.skip_to(document["first"])
    added = []
    for seq, subject, hdr, payload, ts, ttl in document["msgs"]:
        if seq <= store.last_seq:
            continue  # held already (or expired here: a replica's expiry is its own)
        store.skip_to(seq)
        msg = store.store(subject, hdr or None, payload, ts, ttl)
        stream.expiry.stored(msg.seq, msg.ts, ttl)
        added.append(msg)
    stream.schedules.recover(iter(added))  # the schedules among them, as a restart finds them
    store.skip_to(document["last"] + 1)
    store.last_ts = document["last_ts"]
    stream.last_msg_id = document["last_msg_id"]
    stream.dedup.clear()
    for msg_id, seq, ts in document["ids"]:
        stream.dedup.remember_at(msg_id, seq, ts)
    stream.expiry.rearm()


def _decode_snapshot(data: bytes) -> dict[str, Any]:
    try:
        document = msgpack.unpackb(data, raw=False, strict_map_key=True)
    except Exception as exc:  # noqa: BLE001 - msgpack raises many kinds; all mean "not one"
        raise MalformedStreamEntry(f"snapshot: not msgpack ({exc})") from None
    if not isinstance(document, dict) or document.get("v") != SNAPSHOT_VERSION:
        raise MalformedStreamEntry("snapshot: not a stream snapshot of a known version")
    for key in ("first", "last", "last_ts"):
        if type(document.get(key)) is not int or document[key] < 0:
            raise MalformedStreamEntry(f"snapshot: {key} is not a non-negative integer")
    if not isinstance(document.get("last_msg_id"), str):
        raise MalformedStreamEntry("snapshot: last_msg_id is not a string")
    msgs, ids = document.get("msgs"), document.get("ids")
    if not isinstance(msgs, list) or not all(_is_message(item) for item in msgs):
        raise MalformedStreamEntry("snapshot: msgs is not a list of [seq, subject, hdr, payload, ts, ttl]")
    if [item[0] for item in msgs] != sorted({item[0] for item in msgs}) or any(
        not document["first"] <= item[0] <= document["last"] for item in msgs
    ):
        raise MalformedStreamEntry("snapshot: message sequences out of order or outside [first, last]")
    if not isinstance(ids, list) or not all(_is_id(item) for item in ids):
        raise MalformedStreamEntry("snapshot: ids is not a list of [msg_id, seq, ts]")
    return document


def _is_message(item: object) -> bool:
    if not isinstance(item, list) or len(item) != 6:
        return False
    seq, subject, hdr, payload, ts, ttl = item
    return (
        type(seq) is int
        and seq > 0
        and isinstance(subject, str)
        and (hdr is None or isinstance(hdr, bytes))
        and isinstance(payload, bytes)
        and type(ts) is int
        and type(ttl) is int
    )


def _is_id(item: object) -> bool:
    return (
        isinstance(item, list)
        and len(item) == 3
        and isinstance(item[0], str)
        and type(item[1]) is int
        and type(item[2]) is int
    )
