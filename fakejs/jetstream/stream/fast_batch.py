"""Fast-ingest batch publishing (``allow_batched``): many messages, few replies.

A fast batch is announced in the publish's reply subject,
``<prefix>.<batch id>.<initial flow>.<ok|fail>.<batch seq>.<op>.$FI``, with
``op`` 0 start (sequence 1), 1 append, 2 commit (store this message and end),
3 commit without storing it (end of batch) and 4 ping.  Unlike an atomic
batch, every message is checked and stored as it arrives, like a plain
publish; the publisher hears back only now and then:

* ``{"type":"ack","seq":N,"msgs":F}``: messages up to batch sequence ``N``
  are stored, the next flow-control ack comes after ``F`` more.  The first
  message is answered with ``seq`` 0 and the flow the server grants
  (``min(500, initial flow)``, 1 when the stream has other batches in flight);
  later acks move the flow towards ``500 / batches in flight`` (doubling or
  halving, never above what the publisher asked for).
* ``{"type":"gap","last_seq":E,"seq":C}``: sequence ``C`` came when ``E`` was
  expected.  In ``ok`` mode a forward gap is let through; in ``fail`` mode, or
  going backwards, the batch ends there, as a commit.
* ``{"type":"err","seq":N,"error":{...}}``: message ``N`` was refused (in
  ``fail`` mode this ends the batch; a refused first message is answered
  with the plain error PubAck instead).
* The final PubAck, ``{"stream":"S","seq":N,"batch":"<id>","count":K}``:
  ``seq`` the stream sequence of the batch's last stored message, ``count``
  the batch sequence the batch ended at.

``Nats-Required-Api-Level`` is checked on every batch message (asking too
much ends the batch) and never stored.  A batch nobody publishes to for 10
seconds is dropped silently (its next message is then answered ``batch
publish ID unknown``).  Limits are the server's: 1000 batches in flight per
stream, 50,000 across its streams, the 10 seconds; ``jetstream { limits {
batch { max_inflight_per_stream, max_inflight_total, timeout } } }`` set
them for fast batches as for atomic ones (``max_msgs`` is atomic only).  Where the 2.15.1 binary and the Go source differ
(a sequence going backwards is reported as a gap; a ping never starts a
batch) the binary is followed.  This is nats-server's parsing and bookkeeping (``getFastBatch``, ``processJetStreamFastBatchMsg``,
``fastBatchRegisterSequences``, ``checkFlowControl``) for a non-clustered
stream, where a message is stored before the next one is looked at.
The timeline hears of each message, the end of a batch and a batch let go
(``batch.*`` events, mode ``fast``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fakejs.core.clock import Clock, TimerHandle
from fakejs.core.recorder import NO_RECORDER, Recorder
from fakejs.gocompat.gojson import dumps
from fakejs.jetstream.apilevel import REQUIRED_API_LEVEL, required_level
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.stream.batch_limits import FastBatchLimits
from fakejs.jetstream.stream.publish import Outcome
from fakejs.protocol import headers as hdrs
from fakejs.protocol.writer import go_quote

SUFFIX = ".$FI"
OP_START, OP_APPEND, OP_COMMIT, OP_COMMIT_EOB, OP_PING = range(5)
MAX_ID_LEN = 64
DEFAULT_FLOW = 10  # an initial flow of 0 or less (or garbage)
MAX_FLOW = 65535
SERVER_FLOW = 500  # the most messages between flow-control acks the server hands out
_MAX_UINT64 = 2**64 - 1


def _digits(text: str) -> int:
    """ASCII digits as a number, -1 for anything else (empty included)."""
    return int(text) if text and text.isascii() and text.isdigit() else -1


def _int64(text: str) -> int:
    """nats-server's ``parseInt64``: -1 unless all digits, wrapping around like a Go int64."""
    value = _digits(text)
    return value if value < 2**63 else (value + 2**63) % 2**64 - 2**63


@dataclass(frozen=True)
class BatchRequest:
    """What one publish's reply subject asks of a fast batch."""

    batch_id: str
    seq: int
    flow: int  # the most messages between flow-control acks the publisher allows
    gap_ok: bool
    op: int

    @property
    def ping(self) -> bool:
        return self.op == OP_PING

    @property
    def commit(self) -> bool:
        return self.op in (OP_COMMIT, OP_COMMIT_EOB)

    @property
    def end_of_batch(self) -> bool:
        return self.op == OP_COMMIT_EOB


def is_fast_batch(reply: str) -> bool:
    """Whether a publish's reply subject makes it part of a fast batch (valid or not)."""
    return len(reply) > len(SUFFIX) and reply.endswith(SUFFIX)


def parse_reply(reply: str) -> BatchRequest | None:
    """The request a ``...$FI`` reply subject encodes; ``None`` when the pattern is invalid."""
    tokens = reply[: -len(SUFFIX)].split(".")
    if len(tokens) < 6:
        return None
    batch_id, flow_text, gap_mode, seq_text, op_text = tokens[-5:]
    op = _int64(op_text)
    if not OP_START <= op <= OP_PING:
        return None
    seq = _digits(seq_text)
    if seq <= 0 or seq >= _MAX_UINT64:  # 2^64-1 is refused too (the next sequence would overflow)
        return None
    if (seq == 1 and op == OP_COMMIT_EOB) or (op == OP_START and seq != 1) or (op == OP_APPEND and seq <= 1):
        return None
    if gap_mode not in ("ok", "fail"):
        return None
    flow = _int64(flow_text)
    flow = DEFAULT_FLOW if flow <= 0 else min(flow, MAX_FLOW)
    return BatchRequest(batch_id, seq, flow, gap_mode == "ok", op)


def flow_ack(seq: int, every: int) -> bytes:
    return b'{"type":"ack","seq":%d,"msgs":%d}' % (seq, every)


def gap_notice(expected: int, current: int) -> bytes:
    return b'{"type":"gap","last_seq":%d,"seq":%d}' % (expected, current)


def error_notice(seq: int, error: ApiError) -> bytes:
    return dumps({"type": "err", "seq": seq, "error": error.to_dict()}).encode()


@dataclass
class _Batch:
    """One batch in flight: what was seen, what is stored, when the publisher last heard."""

    gap_ok: bool
    client_flow: int  # the publisher's ceiling for ``ack_every``
    ack_every: int = 1
    last: int = 0  # highest batch sequence accepted (``lseq``)
    stored: int = 0  # highest batch sequence known stored (``pseq``)
    acked: int = 0  # batch sequence of the last flow-control ack (``fseq``)
    stream_seq: int = 0  # stream sequence of the batch's last stored message
    committing: bool = False
    deadline: float = 0.0
    timer: TimerHandle | None = None
    client: int | None = None  # who sent its latest message (for the timeline)


# Stores one message as a plain publish would: what came of it (a duplicate is stored nowhere); raises ApiError.
StoreMessage = Callable[[str, "bytes | None", bytes], Outcome]


class FastBatches:
    """A stream's fast batches in flight, by batch id."""

    def __init__(
        self,
        clock: Clock,
        send: Callable[[str, bytes], None],
        store: StoreMessage,
        pub_ack: Callable[[int], bytes],
        error_ack: Callable[[ApiError], bytes],
        limits: FastBatchLimits,
        recorder: Recorder = NO_RECORDER,
        stream: str = "",
    ) -> None:
        """``limits`` is shared by every stream of the server (their batches in flight are counted there);
        ``recorder`` is the server's timeline, ``stream`` the stream's name there."""
        self._limits = limits
        self._recorder = recorder
        self._stream = stream
        self._clock = clock
        self._send = send
        self._store = store
        self._pub_ack = pub_ack
        self._error_ack = error_ack
        self._batches: dict[str, _Batch] = {}
        self._adopted: list[tuple[_Batch, str]] = []  # batches carried on from another leader, with their reply

    def __len__(self) -> int:
        return len(self._batches)

    def __contains__(self, batch_id: object) -> bool:
        return batch_id in self._batches

    # -- lifecycle -----------------------------------------------------------------------

    def updated(self, config: StreamConfig) -> None:
        """A config update turning ``allow_batched`` off drops every batch in flight."""
        if not config["allow_batched"]:
            self.close()

    def close(self) -> None:
        for batch_id in list(self._batches):
            self._drop(batch_id)

    def adopt(self, batch_id: str, gap_ok: bool, client_flow: int, seq: int, stream_seq: int, reply: str) -> None:
        """Carry on a batch another leader took, stored up to batch sequence ``seq`` (stream sequence
        ``stream_seq``), as nats-server's new leader does: its flow starts over, and the publisher hears a flow
        ack on the last reply stored (call it for every batch, then :meth:`restart_flows`)."""
        if batch_id in self._batches:
            return
        self._limits.inflight += 1
        batch = _Batch(gap_ok, client_flow, last=seq, stored=seq, acked=seq, stream_seq=stream_seq)
        self._batches[batch_id] = batch
        self._touch(batch_id, batch)
        self._adopted.append((batch, reply))

    def restart_flows(self) -> None:
        """The adopted batches' flow acks (the flow of each as for a new batch among them all)."""
        for batch, reply in self._adopted:
            batch.ack_every = min(SERVER_FLOW, batch.client_flow) if len(self._batches) == 1 else 1
            self._send(reply, flow_ack(batch.stored, batch.ack_every))
        self._adopted = []

    def _drop(self, batch_id: str) -> None:
        batch = self._batches.pop(batch_id, None)
        if batch is None:
            return
        self._limits.inflight -= 1
        if batch.timer is not None:
            batch.timer.cancel()

    def _touch(self, batch_id: str, batch: _Batch) -> None:
        """Push the batch's abandonment back (the timer re-arms itself lazily, once per period)."""
        timeout = self._limits.timeout
        batch.deadline = self._clock.monotonic() + timeout
        if batch.timer is None:
            batch.timer = self._clock.call_later(timeout, self._expire, batch_id, batch)

    def _expire(self, batch_id: str, batch: _Batch) -> None:
        if self._batches.get(batch_id) is not batch:
            return
        left = batch.deadline - self._clock.monotonic()
        if left > 0:
            batch.timer = self._clock.call_later(left, self._expire, batch_id, batch)
            return
        batch.timer = None
        self._drop(batch_id)
        if self._recorder:
            self._record("batch.abandon", batch_id, batch, reason="timeout")

    def _record(self, kind: str, batch_id: str, batch: _Batch, **fields: object) -> None:
        self._recorder.record(kind, client=batch.client, stream=self._stream, batch=batch_id, mode="fast", **fields)

    # -- publishing ----------------------------------------------------------------------

    def take(
        self, config: StreamConfig, subject: str, reply: str, hdr: bytes | None, payload: bytes, client: int = 0
    ) -> bool:
        """Handle a publish (from ``client``) if its reply subject ends in ``.$FI`` (whether it was one).

        Checked, stored and answered as nats-server does; a publish with any
        other reply is left to the stream.
        """
        if not is_fast_batch(reply):
            return False
        can_respond = not config["no_ack"]
        request = parse_reply(reply)
        try:
            batch = self._admit(config, request, hdr, payload)
            assert request is not None
            hdr = self._required_level(request.batch_id, hdr)
        except ApiError as error:
            if can_respond:
                self._send(reply, self._error_ack(error))
            return True
        self._touch(request.batch_id, batch)
        batch.client = client
        if request.ping:
            self._ping(request, batch, reply)
        elif not batch.committing:
            self._message(request, batch, subject, reply, hdr, payload, can_respond)
        return True

    def _admit(self, config: StreamConfig, request: BatchRequest | None, hdr: bytes | None, payload: bytes) -> _Batch:
        """The checks before a batch message is looked at, in nats-server's order; the batch it joins."""
        if config["sealed"]:
            raise api_error("JSStreamSealedErr")
        max_size, header_length = config["max_msg_size"], len(hdr) if hdr else 0
        if max_size >= 0 and (header_length > max_size or len(payload) > max_size - header_length):
            raise api_error("JSStreamMessageExceedsMaximumErr")
        if not config["allow_batched"]:
            raise api_error("JSBatchPublishDisabledErr")
        if request is None:
            raise api_error("JSBatchPublishInvalidPatternErr")
        if len(request.batch_id) > MAX_ID_LEN:
            raise api_error("JSBatchPublishInvalidBatchIDErr")
        batch = self._batches.get(request.batch_id)
        if batch is not None:
            return batch
        if request.seq != 1 or request.ping:  # a ping never starts a batch (the 2.15.1 binary)
            raise api_error("JSBatchPublishUnknownBatchIDErr")
        limits = self._limits
        if len(self._batches) + 1 > limits.max_inflight_per_stream or limits.inflight + 1 > limits.max_inflight_total:
            raise api_error("JSBatchPublishTooManyInflight")
        limits.inflight += 1
        batch = _Batch(request.gap_ok, request.flow)
        self._batches[request.batch_id] = batch
        # Alone, the publisher gets the flow it asked for; with company it starts slow.
        batch.ack_every = min(SERVER_FLOW, request.flow) if len(self._batches) == 1 else 1
        return batch

    def _required_level(self, batch_id: str, hdr: bytes | None) -> bytes | None:
        """``Nats-Required-Api-Level`` is never stored; asking too much ends the batch (10185)."""
        if not hdr or not hdrs.get(hdr, REQUIRED_API_LEVEL):
            return hdr
        if required_level(hdr):
            batch = self._batches.get(batch_id)
            self._drop(batch_id)
            if self._recorder and batch is not None:
                self._record("batch.abandon", batch_id, batch, reason="unsupported")
            raise api_error("JSRequiredApiLevelErr")
        return hdrs.remove(hdr, REQUIRED_API_LEVEL) or None

    def _ping(self, request: BatchRequest, batch: _Batch, reply: str) -> None:
        """Re-send the last flow-control ack; a ping ahead of what arrived reports the gap."""
        if request.seq > batch.last:
            self._send(reply, gap_notice(batch.last + 1, request.seq + 1))
            if not batch.gap_ok:
                self._commit(request.batch_id, batch, reply)
                return
            batch.last = batch.stored = request.seq
            if self._flow_control(batch, reply):
                return
        self._send(reply, flow_ack(batch.acked, batch.ack_every))

    def _message(
        self,
        request: BatchRequest,
        batch: _Batch,
        subject: str,
        reply: str,
        hdr: bytes | None,
        payload: bytes,
        can_respond: bool,
    ) -> None:
        expected = batch.last + 1
        if request.seq != expected:
            # Reported either way: a sequence going backwards too (the 2.15.1 binary does).
            self._send(reply, gap_notice(expected, request.seq))
            if not batch.gap_ok or request.seq < expected:
                self._commit(request.batch_id, batch, reply)
                return
        batch.last = request.seq
        if request.commit:
            if request.end_of_batch:
                batch.last -= 1
                batch.stored = batch.last
                self._commit(request.batch_id, batch, reply)
                return
            batch.committing = True
        elif request.seq == 1 and can_respond:
            self._send(reply, flow_ack(0, batch.ack_every))
        try:
            outcome = self._store(subject, hdr, payload)
        except ApiError as error:
            if self._recorder:
                self._record_message(request, batch, subject, hdr, payload, 0)
            self._refused(request, batch, reply, error)
            return
        if self._recorder:
            self._record_message(request, batch, subject, hdr, payload, outcome.seq)
        if outcome.duplicate:
            self._duplicate(request, batch, reply, outcome.seq)
            return
        batch.stream_seq = outcome.seq
        batch.stored = batch.last
        if batch.committing:
            self._commit(request.batch_id, batch, reply)
        else:
            self._flow_control(batch, reply)

    def _record_message(
        self, request: BatchRequest, batch: _Batch, subject: str, hdr: bytes | None, payload: bytes, seq: int
    ) -> None:
        size = len(payload) + (len(hdr) if hdr else 0)
        self._record(
            "batch.message", request.batch_id, batch, batch_seq=request.seq, subject=subject, size=size, seq=seq
        )

    def _refused(self, request: BatchRequest, batch: _Batch, reply: str, error: ApiError) -> None:
        """A message the stream refused: reported, and the end of the batch unless gaps are fine."""
        if not batch.gap_ok and batch.last == 1:
            self._drop(request.batch_id)
            if self._recorder:
                self._record("batch.abandon", request.batch_id, batch, reason="refused")
            self._send(reply, self._error_ack(error))
            return
        self._send(reply, error_notice(request.seq, error))
        if batch.gap_ok and not request.commit:
            return
        batch.last -= 1
        batch.stored = batch.last
        self._commit(request.batch_id, batch, reply)

    def _duplicate(self, request: BatchRequest, batch: _Batch, reply: str, seq: int) -> None:
        """A message already in the stream (``Nats-Msg-Id``): counted as stored, nothing added."""
        batch.stored = request.seq
        self._flow_control(batch, reply)
        if not request.commit:
            return
        if not batch.gap_ok and batch.last == 1:
            self._drop(request.batch_id)
            if self._recorder:
                self._record("batch.commit", request.batch_id, batch, count=request.seq, seq=seq)
            ack = self._pub_ack(seq)[:-1] + b',"duplicate": true' + self._batch_tail(request.batch_id, request.seq)
            self._send(reply, ack)
            return
        self._commit(request.batch_id, batch, reply)

    def _commit(self, batch_id: str, batch: _Batch, reply: str) -> None:
        """End the batch: the PubAck names its last stored message and where the batch ended."""
        self._drop(batch_id)
        if self._recorder:
            self._record("batch.commit", batch_id, batch, count=batch.last, seq=batch.stream_seq)
        ack = self._pub_ack(batch.stream_seq)[:-1] + self._batch_tail(batch_id, batch.last)
        self._send(reply, ack)

    @staticmethod
    def _batch_tail(batch_id: str, count: int) -> bytes:
        return b',"batch":' + go_quote(batch_id).encode() + b',"count":%d}' % count

    def _flow_control(self, batch: _Batch, reply: str) -> bool:
        """Ack once ``ack_every`` more messages are stored, steering the flow; whether an ack went out."""
        every = batch.ack_every
        if batch.stored < batch.acked + every:
            return False
        batch.acked += (batch.stored - batch.acked) // every * every
        target = min(max(1, SERVER_FLOW // max(1, len(self._batches))), batch.client_flow)
        if every < target:
            batch.ack_every = min(every * 2, target)
        elif every > target:
            batch.ack_every = max(every // 2, target)
        self._send(reply, flow_ack(batch.acked, batch.ack_every))
        return True
