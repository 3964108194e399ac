"""A replicated stream's batches: atomic and fast batches taken on its leader, proposed to its group.

An **atomic batch** (``allow_atomic``) is staged on the stream's leader as
on a standalone stream (:class:`~fakejs.jetstream.stream.batch.AtomicBatches`:
the same staging replies, refusals and commit checks).  At the commit the
leader decides every message (its sequence, time, TTL) as the stream will be
once the messages before it are in, and proposes them all as one
:class:`~fakejs.jetstream.stream.entries.StreamBatch` entry: a quorum stores
the whole batch or nothing of it, and the commit's PubAck is sent once the
leader applied it.  The batches being staged live on the leader only: a
change of leader lets them go (as nats-server's new leader knows nothing of
them), and their next message is answered ``batch is incomplete``.

A **fast batch** (``allow_batched``) runs through
:class:`~fakejs.jetstream.stream.fast_batch.FastBatches` on the leader, each
message decided and proposed as it arrives in a
:class:`~fakejs.jetstream.stream.entries.StreamFastMessage` that says where it
stands in its batch.  It is proposed without waiting for the messages before
it to be stored (:class:`~fakejs.jetstream.stream.pipeline.Pipeline`: decided
at the sequence after those in flight), unless what it is checked against
changes with what they store (:meth:`~fakejs.jetstream.stream.pipeline.Pipeline.takes`): then it
waits for them.  The flow-control acks, gaps, errors and the final PubAck
that message brought are sent once it is applied, in the order the messages
came, so an ack never counts a message a quorum has not stored.  Every replica keeps
track of the batches its applied messages belong to (:class:`FastTracks`,
nats-server's followers' ``fastBatchRegisterSequences``) until a stored commit
ends one, or its timeout passes; a new leader carries them on
(``fastBatchReset``): each publisher hears a flow ack on the last reply stored,
and the batch goes on.  A batch its leader ended without storing a message
(a gap, a refusal, an end marker) is ended there only: the other replicas
still track it, as nats-server's do (the leader does not, even when messages
of the batch it decided before are applied after it ended it).

A proposal that fails (the leadership moved meanwhile) answers nothing: the
publisher times out, as with a plain publish.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fakejs.jetstream.errors import ApiError
from fakejs.jetstream.stream import publish
from fakejs.jetstream.stream.batch import AtomicBatches, Staged, batch_id_in
from fakejs.jetstream.stream.entries import StreamBatch, StreamFastMessage, StreamMessage, encode_entry
from fakejs.jetstream.stream.fast_batch import OP_COMMIT, FastBatches, parse_reply
from fakejs.jetstream.stream.pipeline import Pipeline, Replies
from fakejs.jetstream.stream.publish import Outcome

if TYPE_CHECKING:
    from fakejs.jetstream.replication import ReplicatedGroup
    from fakejs.jetstream.stream.stream import Stream

__all__ = ["FastTracks", "LeaderAtomicBatches", "LeaderFastBatches", "ReplicatedBatches", "Replies"]


class LeaderAtomicBatches(AtomicBatches):
    """A replicated stream leader's atomic batches: a commit decides its messages without storing them
    (:attr:`decided`, for the caller to propose), each at the sequence after the one before."""

    decided: list[StreamMessage]

    def place(self, checked: list[Staged]) -> int:
        decided = []
        for index, msg in enumerate(checked):
            entry = self.decide(msg)  # decided against the store before the batch (raises what refuses it)
            decided.append(dataclasses.replace(entry, seq=entry.seq + index))
        self.decided = decided
        return decided[-1].seq


@dataclass
class _Track:
    """Where a fast batch stands, as a replica's applied messages tell."""

    gap_ok: bool
    flow: int
    seq: int  # the last batch sequence stored
    stream_seq: int
    reply: str
    deadline: float  # on the clock's monotonic time: let go after it


class FastTracks:
    """The fast batches a replica's applied messages belong to, by id (see the module docstring)."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self.tracks: dict[str, _Track] = {}
        # The batches the leader ended with messages still in flight: the last one's stream sequence.
        self.ending: dict[str, int] = {}

    def ended(self, batch_id: str, last_seq: int) -> None:
        """The leader ended the batch, its last message decided at stream sequence ``last_seq``: not tracked
        here, nor once its messages still in flight are applied."""
        self.tracks.pop(batch_id, None)
        if last_seq > self.stream.store.last_seq:
            self.ending[batch_id] = last_seq

    def applied(self, entry: StreamFastMessage) -> None:
        if self.ending:
            last_seq = self.ending.get(entry.batch)
            if last_seq is not None and entry.message.seq <= last_seq:
                if entry.message.seq == last_seq:
                    del self.ending[entry.batch]
                return
        if entry.commit:
            self.tracks.pop(entry.batch, None)
            return
        if entry.batch not in self.tracks:
            self.live()  # a new batch: those past their timeout go first (they are not kept for ever)
        deadline = self.stream.clock.monotonic() + self.stream.js.batch_limits.fast.timeout
        self.tracks[entry.batch] = _Track(
            entry.gap_ok, entry.flow, entry.batch_seq, entry.message.seq, entry.reply, deadline
        )

    def live(self) -> list[tuple[str, _Track]]:
        """The batches still in flight (those past their timeout are let go)."""
        now = self.stream.clock.monotonic()
        for batch_id in [batch_id for batch_id, track in self.tracks.items() if track.deadline <= now]:
            del self.tracks[batch_id]
        return list(self.tracks.items())


class LeaderFastBatches(FastBatches):
    """A replicated stream leader's fast batches: a batch it ends (or lets go) is no longer tracked here."""

    tracks: FastTracks
    handing_over = False  # the leadership changes: the batches are let go here, still tracked

    def _drop(self, batch_id: str) -> None:
        batch = self._batches.get(batch_id)
        super()._drop(batch_id)
        if not self.handing_over and batch is not None:
            self.tracks.ended(batch_id, batch.stream_seq)


class ReplicatedBatches:
    """The batches of one replicated stream's leader (see the module docstring); ``group`` is its member of the
    stream's group, ``stream`` its local :class:`~fakejs.jetstream.stream.stream.Stream`."""

    def __init__(self, stream: Stream, group: ReplicatedGroup) -> None:
        self.stream = stream
        self.group = group
        js = stream.js
        self.pipeline = Pipeline(group.propose_soon, js.reply, self.let_go)
        publisher = stream.publisher
        self.atomic = LeaderAtomicBatches(stream, js.batch_limits)
        self._replies: Replies = []
        self._decided: list[StreamMessage] = []
        self.tracks = FastTracks(stream)
        self.fast = LeaderFastBatches(
            js.clock,
            self._queue,
            self._decide_fast,
            publisher.pub_ack,
            publisher.error_ack,
            js.batch_limits.fast,
            js.recorder,
            stream.name,
        )
        self.fast.tracks = self.tracks
        stream.batches.clear()
        stream.fast.close()
        stream.batches, stream.fast = self.atomic, self.fast  # what the stream's update and close clear

    def applied(self, entry: StreamFastMessage) -> None:
        """A fast batch's message applied on this replica."""
        self.tracks.applied(entry)

    def reset(self, leads: bool) -> None:
        """The leadership changed: the batches being staged are let go; a new leader carries the fast batches
        on, each publisher told with a flow ack."""
        self.atomic.clear()
        self.let_go()
        self.pipeline.new_leadership()
        self.tracks.ending.clear()
        if not leads or not self.stream.config["allow_batched"]:
            return
        for batch_id, track in self.tracks.live():
            self.fast.adopt(batch_id, track.gap_ok, track.flow, track.seq, track.stream_seq, track.reply)
        self.fast.restart_flows()
        replies, self._replies = self._replies, []
        for subject, payload in replies:
            self.stream.js.reply(subject, payload)

    def let_go(self) -> None:
        """The leader's fast batches go; the replica still tracks them."""
        self.fast.handing_over = True
        self.fast.close()
        self.fast.handing_over = False

    @staticmethod
    def atomic_id(hdr: bytes | None) -> str:
        """The message's atomic batch id (empty: not one)."""
        return batch_id_in(hdr) if hdr else ""

    async def take_atomic(self, batch_id: str, subject: str, reply: str, hdr: bytes, payload: bytes) -> Replies:
        """One message of an atomic batch (the caller holds the stream's turn): staged, refused, or the commit
        proposed as one entry and acknowledged once applied."""
        stream = self.stream
        self.atomic.decided = []
        try:
            ack = self.atomic.receive(batch_id, subject, publish.clean_headers(hdr) or b"", payload)
        except ApiError as error:
            ack = stream.publisher.error_ack(error)
        if self.atomic.decided:
            decided, self.atomic.decided = self.atomic.decided, []
            await self.group.propose(encode_entry(StreamBatch(tuple(decided))))
        return [(reply, ack)] if reply and not stream.config["no_ack"] else []

    def take_fast(self, subject: str, reply: str, hdr: bytes | None, payload: bytes) -> None:
        """One message of a fast batch (the caller holds the stream's turn): the message it decided, if any, is
        proposed, and what it brings is sent once that message and those before it are applied."""
        self._replies, self._decided = [], []
        request = parse_reply(reply)
        try:
            self.fast.take(self.stream.config, subject, reply, hdr, payload)
            data, seq, msg_id = None, 0, ""
            for entry in self._decided:
                assert request is not None  # a message was decided: its reply subject parsed
                where = (request.batch_id, request.seq, request.gap_ok, request.flow, request.op == OP_COMMIT, reply)
                data, seq, msg_id = encode_entry(StreamFastMessage(entry, *where)), entry.seq, entry.msg_id
            self.pipeline.add(data, self._replies, seq, msg_id)
        except BaseException:
            self.let_go()  # its bookkeeping counted a message that was not stored
            raise
        finally:
            self._replies, self._decided = [], []

    def _queue(self, subject: str, payload: bytes) -> None:
        self._replies.append((subject, payload))

    def _decide_fast(self, subject: str, hdr: bytes | None, payload: bytes) -> Outcome:
        """A fast batch message checked and decided as a plain publish, after those in flight (a duplicate decides
        nothing)."""
        publisher = self.stream.publisher
        checked = publisher.check_publish(subject, hdr, payload)
        if isinstance(checked, Outcome):
            return checked
        seq = self.pipeline.next_seq(self.stream.store.last_seq)  # after the messages in flight
        entry = publisher.prepare_message(
            checked.subject, checked.hdr, checked.payload, checked.msg_id, checked.rollup, next_seq=seq
        )
        self._decided.append(entry)
        return Outcome(b"", entry.seq)
