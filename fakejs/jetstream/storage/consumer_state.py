"""A consumer's persisted state: delivered and ack-floor counters, pending and redelivered sets.

This is nats-server's consumer store (``consumerMemStore`` / the file
consumer store): ConsumerInfo's ``delivered`` and ``ack_floor`` come from
here, and a restart with file storage restores the consumer from it.  Every
change can be written to a journal (msgpack records) and replayed through
the same methods.  As nats-server's consumer store flushes its state in the
background, the journal gathers the records of one turn of the event loop
and writes them once when the turn is over; closing it (a clean stop)
writes what is gathered.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import msgpack

from fakejs.jetstream.storage.journal import read_log


class ConsumerState:
    """What a consumer store keeps: the delivered and ack-floor counters, pending and redelivered deliveries.

    ``delivered`` and ``ack_floor`` are [consumer sequence, stream sequence]
    pairs; ``pending`` maps a stream sequence awaiting its ack to [consumer
    sequence, delivery time ns], ``redelivered`` a stream sequence to how
    often it was redelivered.  The update rules are nats-server's
    ``consumerMemStore`` (``UpdateDelivered``, ``UpdateAcks``); with a
    ``journal`` every change is recorded before it applies.

    A replicated consumer's state is ``replicated``: it changes only by its
    group's committed entries, applied inside :meth:`applying`.  A change made
    outside is handed to ``proposer`` as its record (``["d", ...]``,
    ``["a", ...]``, ``["start", ...]``, ``["reset", ...]``) on the leader, and
    dropped on the other replicas (their consumers do not deliver); a whole
    state written over it (:meth:`overwrite`, after a purge) is dropped.

    A leader runs its consumer on a copy of the committed state that is
    ``ahead`` (:meth:`copy_ahead`): each change applies to it at once and goes
    to the proposer, as nats-server's leader updates its in-memory state as it
    delivers and acks and replicates the change, so that its infos show a
    delivery at once; the committed state moves as the entries are applied.
    What is not replicated (a message forgotten) is forgotten in both.
    """

    def __init__(self, ack_policy: str, max_deliver: int) -> None:
        self.ack_policy = ack_policy
        self.max_deliver = max_deliver
        self.delivered = [0, 0]  # consumer seq, stream seq
        self.ack_floor = [0, 0]
        self.pending: dict[int, list[int]] = {}  # stream seq -> [delivery seq, timestamp ns]
        self.redelivered: dict[int, int] = {}
        self.journal: ConsumerJournal | None = None
        self.replicated = False
        self.proposer: Callable[[list[object]], None] | None = None
        self.ahead = False
        self.committed: ConsumerState | None = None  # what a copy ahead runs ahead of

    def copy_ahead(self, proposer: Callable[[list[object]], None]) -> ConsumerState:
        """A leader's copy of this committed state: changed at once, each change proposed (see the class)."""
        copy = ConsumerState(self.ack_policy, self.max_deliver)
        copy.delivered, copy.ack_floor = list(self.delivered), list(self.ack_floor)
        copy.pending = {seq: list(entry) for seq, entry in self.pending.items()}
        copy.redelivered = dict(self.redelivered)
        copy.replicated, copy.ahead, copy.proposer, copy.committed = True, True, proposer, self
        return copy

    def has_state(self) -> bool:
        """Whether the delivered counters left zero (a delivery, or a start past sequence 0).

        Until then ConsumerInfo reports the consumer's position instead.
        """
        return self.delivered[0] != 0 or self.delivered[1] != 0

    def _record(self, *record: object) -> None:
        if self.journal is not None:
            self.journal.append(list(record))

    def _proposed(self, *record: object) -> bool:
        """Whether the change is not applied now: a replicated state's goes to the proposer, if any."""
        if not self.replicated:
            return False
        if self.proposer is not None:
            self.proposer(list(record))
        return not self.ahead

    @contextmanager
    def applying(self) -> Iterator[ConsumerState]:
        """Apply changes here, replicated or not (a committed entry of the consumer's group)."""
        replicated, self.replicated = self.replicated, False
        try:
            yield self
        finally:
            self.replicated = replicated

    def set_starting(self, stream_sequence: int) -> None:
        """``SetStarting``: nothing delivered before ``stream_sequence`` + 1."""
        if self._proposed("start", stream_sequence):
            return
        self.delivered = [0, stream_sequence]
        self.ack_floor = [0, stream_sequence]
        self._record("start", stream_sequence)

    def reset(self, stream_sequence: int) -> None:
        """``Reset``: a fresh state starting after ``stream_sequence``."""
        if self._proposed("reset", stream_sequence):
            return
        self.pending.clear()
        self.redelivered.clear()
        self.delivered = [0, stream_sequence]
        self.ack_floor = [0, stream_sequence]
        self._record("reset", stream_sequence)

    def update_delivered(self, consumer_sequence: int, stream_sequence: int, delivery_count: int, ts: int) -> None:
        """``UpdateDelivered``: a delivery (the ``delivery_count``-th of ``stream_sequence``) went out at ``ts``."""
        if self.replicated:  # _proposed() and _record(), without the calls on every delivery
            if self.proposer is not None:
                self.proposer(["d", consumer_sequence, stream_sequence, delivery_count, ts])
            if not self.ahead:
                return
        journal = self.journal
        if journal is not None:
            if self.ack_policy == "none":
                journal.append_delivered(consumer_sequence, stream_sequence, delivery_count, ts)
            else:
                journal.append(["d", consumer_sequence, stream_sequence, delivery_count, ts])
        if consumer_sequence <= self.ack_floor[0]:
            return
        if self.ack_policy != "none":
            if stream_sequence <= self.delivered[1]:
                entry = self.pending.get(stream_sequence)
                if entry is not None:
                    entry[1] = ts
            else:
                self.pending[stream_sequence] = [consumer_sequence, ts]
            if consumer_sequence > self.delivered[0]:
                self.delivered[0] = consumer_sequence
            if stream_sequence > self.delivered[1]:
                self.delivered[1] = stream_sequence
            if delivery_count > 1:
                if self.max_deliver > 0 and delivery_count > self.max_deliver:
                    self.pending.pop(stream_sequence, None)
                if self.redelivered.get(stream_sequence, 0) < delivery_count - 1:
                    self.redelivered[stream_sequence] = delivery_count - 1
        else:
            if consumer_sequence > self.delivered[0]:
                self.delivered[0] = self.ack_floor[0] = consumer_sequence
            if stream_sequence > self.delivered[1]:
                self.delivered[1] = self.ack_floor[1] = stream_sequence

    def update_acks(self, consumer_sequence: int, stream_sequence: int) -> None:
        """``UpdateAcks``: the delivery ``consumer_sequence`` of ``stream_sequence`` was acked."""
        if self.replicated:  # _proposed() and _record(), without the calls on every ack
            if self.proposer is not None:
                self.proposer(["a", consumer_sequence, stream_sequence])
            if not self.ahead:
                return
        if self.journal is not None:
            self.journal.append(["a", consumer_sequence, stream_sequence])
        if self.ack_policy == "none":
            return
        self.redelivered.pop(stream_sequence, None)
        floor = self.ack_floor
        if consumer_sequence <= floor[0]:
            return
        if not self.pending or stream_sequence not in self.pending:
            return
        if self.ack_policy in ("all", "flow_control"):
            floor[0], floor[1] = consumer_sequence, stream_sequence
            for seq in [s for s in self.pending if s <= stream_sequence]:
                del self.pending[seq]
                self.redelivered.pop(seq, None)
            return
        original = self.pending.pop(stream_sequence)
        if consumer_sequence > original[0] > 0:
            consumer_sequence = original[0]
        if not self.pending:
            floor[0], floor[1] = self.delivered[0], self.delivered[1]
        elif consumer_sequence == floor[0] + 1:
            floor[0], floor[1] = consumer_sequence, stream_sequence
            if self.delivered[0] > consumer_sequence:
                for ss in range(stream_sequence + 1, self.delivered[1] + 1):
                    entry = self.pending.get(ss)
                    if entry is not None:
                        if entry[0] > 0:
                            floor[0], floor[1] = entry[0] - 1, ss - 1
                        break

    def update_starting(self, stream_sequence: int) -> None:
        """``UpdateStarting``: delivery starts past ``stream_sequence`` (a replicated consumer's first position)."""
        self._record("s", stream_sequence)
        if stream_sequence > self.delivered[1]:
            self.delivered[1] = stream_sequence
            if self.ack_policy == "none":
                self.ack_floor[1] = stream_sequence

    def load(
        self, delivered: list[int], ack_floor: list[int], pending: dict[int, list[int]], redelivered: dict[int, int]
    ) -> None:
        """Replace the whole state (a replicated snapshot: its group's log is the authority, older or not)."""
        self.delivered, self.ack_floor = list(delivered), list(ack_floor)
        self.pending = {seq: list(entry) for seq, entry in pending.items()}
        self.redelivered = dict(redelivered)
        self._record(*self.snapshot())

    def overwrite(
        self, delivered: list[int], ack_floor: list[int], pending: dict[int, list[int]], redelivered: dict[int, int]
    ) -> bool:
        """``Update``: replace the whole state with the consumer's (refused when inconsistent or older)."""
        if self.replicated:
            return False
        if ack_floor[0] > delivered[0] or ack_floor[1] > delivered[1]:
            return False
        if any(seq <= ack_floor[1] or seq > delivered[1] for seq in pending):
            return False
        if delivered[0] < self.delivered[0] or ack_floor[1] < self.ack_floor[1]:
            return False
        self.delivered, self.ack_floor = list(delivered), list(ack_floor)
        self.pending = {seq: list(entry) for seq, entry in pending.items()}
        self.redelivered = dict(redelivered)
        self._record(*self.snapshot())
        return True

    def forget(self, stream_sequence: int) -> None:
        """A pending message is gone (removed from the stream, dropped at max deliveries)."""
        if self.committed is not None:
            self.committed.forget(stream_sequence)
        self._record("x", stream_sequence)
        self.pending.pop(stream_sequence, None)
        self.redelivered.pop(stream_sequence, None)

    def snapshot(self) -> list[object]:
        return ["snap", self.delivered, self.ack_floor, list(self.pending.items()), list(self.redelivered.items())]

    def apply(self, record: list[Any]) -> None:
        """Replay one journal record, as msgpack decoded it (no new journal entry is written)."""
        journal, self.journal = self.journal, None
        try:
            kind = record[0]
            if kind == "snap":
                self.delivered, self.ack_floor = list(record[1]), list(record[2])
                self.pending = {int(k): list(v) for k, v in record[3]}
                self.redelivered = {int(k): int(v) for k, v in record[4]}
            elif kind == "start":
                self.set_starting(record[1])
            elif kind == "reset":
                self.reset(record[1])
            elif kind == "d":
                self.update_delivered(*record[1:])
            elif kind == "a":
                self.update_acks(*record[1:])
            elif kind == "x":
                self.forget(record[1])
            elif kind == "s":
                self.update_starting(record[1])
        finally:
            self.journal = journal


class ConsumerJournal:
    """Append-only msgpack log of a consumer's state changes, compacted to a snapshot.

    ``call_soon(callback)`` runs ``callback`` once the event loop's current
    turn is over (the server clock's ``call_soon``): records are gathered
    and written once per turn.  Without it every record is written at once.
    """

    COMPACT_AFTER = 20_000

    def __init__(
        self, path: str, state: ConsumerState, call_soon: Callable[[Callable[[], None]], object] | None = None
    ) -> None:
        self.path = path
        self.state = state
        self._packer = msgpack.Packer(use_bin_type=True)
        self._records = 0
        self._fd: int | None = None
        self._call_soon = call_soon
        self._unwritten = bytearray()  # records not written yet
        self._flush_due = False  # a flush waits for the end of the loop's turn
        self._delivered: tuple[int, int, int, int] | None = None  # the newest ack-none delivery, not packed yet

    def replay(self) -> None:
        for record in read_log(self.path)[0]:
            self.state.apply(record)

    def open(self) -> None:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.compact(sync=False)  # a new consumer's first snapshot: its create does not wait for the disk
        self.state.journal = self

    def append(self, record: list[object]) -> None:
        if self._fd is None:
            return
        if self._delivered is not None:
            self._pack_delivered()
        self._unwritten += self._packer.pack(record)
        self._records += 1
        self._flush_soon()

    def append_delivered(self, consumer_sequence: int, stream_sequence: int, delivery_count: int, ts: int) -> None:
        """An ack-none delivery's ``d`` record; it replaces the previous one when nothing came between and both
        sequences moved up, as replaying the newest of such a run is replaying all of it (an ack-none
        delivery only raises the delivered sequences and the ack floor to its own)."""
        if self._fd is None:
            return
        held = self._delivered
        if held is not None and (consumer_sequence < held[0] or stream_sequence < held[1]):
            self._pack_delivered()
        self._delivered = (consumer_sequence, stream_sequence, delivery_count, ts)
        self._flush_soon()

    def _pack_delivered(self) -> None:
        assert self._delivered is not None
        self._unwritten += self._packer.pack(["d", *self._delivered])
        self._records += 1
        self._delivered = None

    def _flush_soon(self) -> None:
        if self._call_soon is None:
            self.flush()
        elif not self._flush_due:
            self._flush_due = True
            self._call_soon(self.flush)

    def flush(self) -> None:
        """Write the gathered records (a snapshot instead, once the log is long)."""
        self._flush_due = False
        if self._delivered is not None:
            self._pack_delivered()
        if self._fd is None or not self._unwritten:
            return
        if self._records > self.COMPACT_AFTER:
            self.compact()  # the snapshot holds every change gathered so far
            return
        os.write(self._fd, self._unwritten)
        self._unwritten.clear()

    def compact(self, sync: bool = True) -> None:
        """Replace the log with one snapshot record; ``sync`` waits for the disk first."""
        tmp = self.path + ".tmp"
        self._unwritten.clear()
        self._delivered = None  # the snapshot holds it
        with open(tmp, "wb") as handle:
            handle.write(self._packer.pack(self.state.snapshot()))
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        if self._fd is not None:
            os.close(self._fd)
        os.replace(tmp, self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        self._records = 1

    def close(self) -> None:
        """Write what is gathered and close the log."""
        self.flush()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.state.journal = None

    def destroy(self) -> None:
        self.close()
        try:
            os.remove(self.path)
        except FileNotFoundError:
            pass
