"""Atomic batch publish (``allow_atomic``): staged messages stored all together, or not at all.

A publisher sends messages with ``Nats-Batch-Id`` and ``Nats-Batch-Sequence``
(1, 2, ...); the stream stages them (replying with an empty payload) until
the one with ``Nats-Batch-Commit: 1`` (stored too) or ``eob`` (an end marker,
not stored).  At the commit every message is checked against the stream as
it will be after the earlier ones (:mod:`fakejs.jetstream.stream.batch_checks`);
only if all pass are they stored, and the commit's PubAck carries
``"batch"`` and ``"count"``.  A gap, a batch too large, or no message for
the batch timeout abandons it (with an advisory).  Limits are the server's
(``jetstream { limits { batch { ... } } }``), counted across its streams.
The timeline hears of each message staged, the commit and an abandonment
(``batch.*`` events, mode ``atomic``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from fakejs.core.clock import Clock, TimerHandle
from fakejs.core.recorder import Recorder
from fakejs.jetstream import apilevel
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.storage.store import MessageStore
from fakejs.jetstream.stream import batch_checks, publish
from fakejs.jetstream.stream.batch_limits import BatchLimits
from fakejs.jetstream.stream.entries import StreamMessage
from fakejs.protocol import headers as hdrs
from fakejs.protocol.writer import go_quote

BATCH_ID = "Nats-Batch-Id"
BATCH_SEQ = "Nats-Batch-Sequence"
BATCH_COMMIT = "Nats-Batch-Commit"
MAX_ID_LENGTH = 64


class BatchStream(Protocol):
    """The stream a batch goes into, as its batches see it."""

    # The server's timeline (see fakejs.core.recorder).
    timeline: Recorder

    @property
    def name(self) -> str: ...

    @property
    def config(self) -> StreamConfig: ...

    @property
    def store(self) -> MessageStore: ...

    @property
    def clock(self) -> Clock: ...

    def seen_id(self, msg_id: str) -> int | None:
        """The sequence a message id in the duplicate window was stored at."""
        ...

    def storable(self, subject: str, hdr: bytes | None, payload: bytes) -> None:
        """Raise when the server or account has no room for the message."""
        ...

    def prepare_message(
        self, subject: str, hdr: bytes | None, payload: bytes, msg_id: str, rollup: str
    ) -> StreamMessage:
        """A message whose checks passed, as the stream would store it (raises what refuses it)."""
        ...

    def apply_message(self, entry: StreamMessage) -> int:
        """Store a prepared message; its sequence."""
        ...

    def pub_ack(self, seq: int) -> bytes: ...

    def batch_abandoned(self, batch_id: str, reason: str) -> None:
        """Send the ``BATCH_ABANDONED`` advisory."""
        ...


@dataclass
class Staged:
    """A message as it was received (or, after the checks, as it is to be stored)."""

    subject: str
    hdr: bytes | None
    payload: bytes


class _Batch:
    """One batch in flight: its staged messages (sequence = index + 1), its abandonment timer and the client
    that sent its latest message (for the timeline)."""

    def __init__(self) -> None:
        self.messages: list[Staged] = []
        self.timer: TimerHandle | None = None
        self.client: int | None = None


def batch_id_in(hdr: bytes | None) -> str:
    """The message's atomic batch id (empty: a plain publish)."""
    value = hdrs.get(hdr, BATCH_ID) if hdr else None
    return value.decode("utf-8", "surrogateescape") if value else ""


def _sequence(hdr: bytes) -> int | None:
    value = hdrs.get(hdr, BATCH_SEQ)
    if not value or not value.isascii() or not value.isdigit():
        return None
    return int(value)


class AtomicBatches:
    """A stream's batches in flight, by id."""

    def __init__(self, stream: BatchStream, limits: BatchLimits) -> None:
        self.stream = stream
        self.limits = limits
        self._batches: dict[str, _Batch] = {}

    def receive(self, batch_id: str, subject: str, hdr: bytes, payload: bytes, client: int | None = None) -> bytes:
        """One message of batch ``bid`` (from ``client``): the empty reply while staging, the PubAck at the commit;
        raises refusals."""
        seq = self._checked_sequence(batch_id, subject, hdr, payload)
        commit = hdrs.get(hdr, BATCH_COMMIT)
        end_marker = commit == b"eob"  # an end marker: not stored, not counted
        batch = self._batches.get(batch_id) or self._start(batch_id, seq, end_marker)
        batch.client = client
        if commit is not None and not end_marker and commit != b"1":
            self._drop(batch_id)
            raise api_error("JSAtomicPublishInvalidBatchCommitErr")
        if hdrs.get(hdr, apilevel.REQUIRED_API_LEVEL) is not None:
            if apilevel.required_level(hdr):
                self._abandon(batch_id, "unsupported")
                raise api_error("JSRequiredApiLevelErr")
            hdr = hdrs.remove(hdr, apilevel.REQUIRED_API_LEVEL) or b""
        if seq != len(batch.messages) + 1 or (seq == 1 and end_marker):
            self._abandon(batch_id, "incomplete")
            raise api_error("JSAtomicPublishIncompleteBatchErr")
        if seq - int(end_marker) > self.limits.max_msgs:
            self._abandon(batch_id, "large")
            raise api_error("JSAtomicPublishTooLargeBatchErrF", size=self.limits.max_msgs)
        self._arm(batch_id, batch)
        batch.messages.append(Staged(subject, hdr or None, payload))
        timeline = self.stream.timeline
        if timeline:
            where = {"client": client, "stream": self.stream.name, "batch": batch_id, "mode": "atomic"}
            timeline.record(
                "batch.message", **where, batch_seq=seq, subject=subject, size=len(hdr) + len(payload), seq=0
            )
        if commit is None:
            return b""
        return self._commit(batch_id, batch, end_marker)

    def check_trace_only(self, batch_id: str, subject: str, hdr: bytes, payload: bytes) -> None:
        """A trace-only message of batch ``bid``: the checks made before staging, nothing staged.

        A sequence other than 1 for a batch not staged here is an incomplete batch.
        """
        seq = self._checked_sequence(batch_id, subject, hdr, payload)
        if seq != 1 and batch_id not in self._batches:
            raise api_error("JSAtomicPublishIncompleteBatchErr")

    def _checked_sequence(self, batch_id: str, subject: str, hdr: bytes, payload: bytes) -> int:
        """The checks of every batch message before it is staged; its ``Nats-Batch-Sequence``."""
        stream = self.stream
        cfg = stream.config
        if cfg["sealed"]:
            raise api_error("JSStreamSealedErr")
        stream.storable(subject, hdr, payload)
        max_size = cfg["max_msg_size"]
        if max_size >= 0 and (len(hdr) > max_size or len(payload) > max_size - len(hdr)):
            raise api_error("JSStreamMessageExceedsMaximumErr")
        if not cfg["allow_atomic"]:
            raise api_error("JSAtomicPublishDisabledErr")
        if len(batch_id) > MAX_ID_LENGTH:
            raise api_error("JSAtomicPublishInvalidBatchIDErr")
        seq = _sequence(hdr)
        if seq is None:
            raise api_error("JSAtomicPublishMissingSeqErr")
        return seq

    def _start(self, batch_id: str, seq: int, end_marker: bool) -> _Batch:
        """A new batch (its first message must be sequence 1), within the inflight limits."""
        limits = self.limits
        if seq != 1:
            if seq - int(end_marker) > limits.max_msgs:
                raise api_error("JSAtomicPublishTooLargeBatchErrF", size=limits.max_msgs)
            raise api_error("JSAtomicPublishIncompleteBatchErr")
        if len(self._batches) + 1 > limits.max_inflight_per_stream or limits.inflight + 1 > limits.max_inflight_total:
            raise api_error("JSAtomicPublishTooManyInflight")
        limits.inflight += 1
        batch = self._batches[batch_id] = _Batch()
        return batch

    def _arm(self, batch_id: str, batch: _Batch) -> None:
        """(Re)start the abandonment timer: the batch goes if no message comes for the timeout."""
        if batch.timer is not None:
            batch.timer.cancel()
        batch.timer = self.stream.clock.call_later(self.limits.timeout, self._abandon, batch_id, "timeout")

    def _drop(self, batch_id: str) -> None:
        batch = self._batches.pop(batch_id, None)
        if batch is None:
            return
        self.limits.inflight -= 1
        if batch.timer is not None:
            batch.timer.cancel()

    def _abandon(self, batch_id: str, reason: str) -> None:
        batch = self._batches.get(batch_id)
        self._drop(batch_id)
        self._record_end("batch.abandon", batch_id, batch, reason=reason)
        self.stream.batch_abandoned(batch_id, reason)

    def _record_end(self, kind: str, batch_id: str, batch: _Batch | None, **fields: object) -> None:
        """The timeline's ``batch.commit`` (its count and seq) or ``batch.abandon`` (its reason)."""
        timeline = self.stream.timeline
        if timeline:
            client = batch.client if batch is not None else None
            timeline.record(kind, client=client, stream=self.stream.name, batch=batch_id, mode="atomic", **fields)

    def clear(self) -> None:
        """Drop every batch in flight (atomic publish turned off, the stream closed)."""
        for batch_id in list(self._batches):
            self._drop(batch_id)

    def _commit(self, batch_id: str, batch: _Batch, end_marker: bool) -> bytes:
        """Check every message against the stream plus the batch so far; store them all, or none."""
        self._drop(batch_id)
        stream = self.stream
        messages = batch.messages[:-1] if end_marker else batch.messages
        view = batch_checks.StreamView(stream.name, stream.config, stream.store, stream.seen_id, stream.clock.time_ns())
        diff = batch_checks.StagedDiff()
        checked: list[Staged] = []
        try:
            for index, msg in enumerate(messages):
                if msg.hdr and hdrs.get(msg.hdr, publish.EXPECTED_LAST_MSG_ID):
                    raise api_error("JSAtomicPublishUnsupportedHeaderBatchErr", header=publish.EXPECTED_LAST_MSG_ID)
                hdr, payload = batch_checks.check(view, diff, index, msg.subject, msg.hdr, msg.payload)
                checked.append(Staged(msg.subject, hdr, payload))
        except ApiError:
            self._record_end("batch.abandon", batch_id, batch, reason="refused")
            raise
        if end_marker:  # the last stored message is the commit
            last = checked[-1]
            last.hdr = hdrs.add(last.hdr, BATCH_COMMIT, "1")
        return self._store(batch_id, batch, checked)

    def _store(self, batch_id: str, batch: _Batch, checked: list[Staged]) -> bytes:
        """Store the checked messages in order; the commit's PubAck names the batch and its stored count."""
        seq = self.place(checked)
        count = _sequence(checked[-1].hdr or b"") or len(checked)
        self._record_end("batch.commit", batch_id, batch, count=count, seq=seq)
        return self.stream.pub_ack(seq)[:-1] + b',"batch":%s,"count":%d}' % (go_quote(batch_id).encode(), count)

    def place(self, checked: list[Staged]) -> int:
        """Store the checked messages in order (each decided as the one before it left the stream); the last
        one's sequence.  A replicated stream's leader decides them all and proposes them as one entry."""
        seq = 0
        for msg in checked:
            seq = self.stream.apply_message(self.decide(msg))
        return seq

    def decide(self, msg: Staged) -> StreamMessage:
        """The stream's decision for one checked message (it may still refuse it: resources, discard-new)."""
        rollup = (hdrs.get(msg.hdr, publish.ROLLUP) or b"").decode("utf-8", "surrogateescape")
        return self.stream.prepare_message(msg.subject, msg.hdr, msg.payload, publish.msg_id(msg.hdr), rollup)
