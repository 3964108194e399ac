"""A stream's publish path: a published message checked, decided, stored and acknowledged.

:class:`StreamPublisher` is nats-server's ``processJetStreamMsg`` in two steps:
what the leader decides (the ``Nats-*`` header checks in the same order, see
:mod:`fakejs.jetstream.stream.publish`, the resource and discard-new limits,
the sequence and time: a :class:`~fakejs.jetstream.stream.entries.StreamMessage`),
then what every replica applies (storing, the discard-old and per-subject
limits, expiry, rollups, schedules, the republish).  It belongs to one
:class:`~fakejs.jetstream.stream.stream.Stream` (seen as a :class:`PublishingStream`),
whose config, store, duplicate window and consumers it uses.
"""

from __future__ import annotations

from typing import Any, Protocol

from fakejs.core.recorder import EVENT_KINDS, Recorder
from fakejs.core.subject_transform import SubjectTransform
from fakejs.gocompat.gojson import dumps
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.storage.store import MessageStore, StoredMessage
from fakejs.jetstream.stream import counter, publish, store_limits
from fakejs.jetstream.stream.batch import AtomicBatches, batch_id_in
from fakejs.jetstream.stream.dedup import DuplicateWindow
from fakejs.jetstream.stream.entries import StreamMessage
from fakejs.jetstream.stream.expiry import MessageExpiry
from fakejs.jetstream.stream.fast_batch import SUFFIX as FAST_SUFFIX
from fakejs.jetstream.stream.fast_batch import FastBatches
from fakejs.jetstream.stream.host import StreamHost
from fakejs.jetstream.stream.publish import Outcome
from fakejs.jetstream.stream.schedules import MessageSchedules
from fakejs.jetstream.stream.transforms import Republisher
from fakejs.protocol.writer import go_quote


class PublishingStream(Protocol):
    """The stream a publisher belongs to, as its publish path sees it."""

    js: StreamHost
    config: StreamConfig
    store: MessageStore
    timeline: Recorder  # the server's (see fakejs.core.recorder)
    input: SubjectTransform | None  # the input transform
    republisher: Republisher | None
    fast: FastBatches
    batches: AtomicBatches
    dedup: DuplicateWindow
    expiry: MessageExpiry
    schedules: MessageSchedules
    fresh: list[StoredMessage]  # stored, consumers not yet told
    last_msg_id: str
    trace_error: str  # why the last message was not stored (a traced message's ``js`` event)
    trace_error_late: bool

    @property
    def name(self) -> str: ...

    def has_interest(self, subject: str) -> bool: ...

    def rollup(self, subject: str, kind: str, keep: int) -> None: ...

    def remove_message(self, seq: int) -> StoredMessage | None: ...

    def purge(self, filter_subject: str = "", seq: int = 0, keep: int = 0) -> int: ...


class StreamPublisher:
    """The publish path of one stream (``mset.processJetStreamMsg``): :meth:`ingest` answers a publish,
    :meth:`check_publish` and :meth:`prepare_message` are the leader's decision, :meth:`apply_message`
    what every replica stores."""

    def __init__(self, stream: PublishingStream) -> None:
        self.stream = stream
        js = stream.js
        # Every PubAck starts the same way: encoded once (a stream's name never changes).
        head = b'{"stream":' + go_quote(stream.config["name"]).encode()
        if js.domain:
            head += b',"domain":' + go_quote(js.domain).encode()
        self._ack_head = head + b',"seq":'
        # Whether the config lets a message without headers skip the header-driven steps (see _plain):
        # decided once per config (a stream's config is replaced, never changed in place, on update).
        self._plain_config: StreamConfig | None = None
        self._plain = False

    def pub_ack(self, seq: int) -> bytes:
        return self._ack_head + b"%d}" % seq

    def error_ack(self, error: ApiError) -> bytes:
        return dumps({"error": error.to_dict(), "stream": self.stream.name, "seq": 0}).encode()

    def acknowledge(self, seq: int, total: str = "") -> bytes:
        """The PubAck of a message stored at ``seq`` (a counter's with its ``total``)."""
        ack = self._ack_head + b"%d}" % seq  # pub_ack(seq), without the call
        return counter.ack(ack, total) if total else ack

    # -- a publish, answered -------------------------------------------------------------

    def ingest(
        self,
        subject: str,
        reply: str,
        hdr: bytes | None,
        payload: bytes,
        trace_only: bool = False,
        client: int = 0,
        recording: bool = False,
    ) -> bytes | None:
        """Store a published message; returns the PubAck (or error) payload to send.

        A trace-only message (``Nats-Trace-Only``) goes through every check
        of a plain publish but is not stored: the publisher hears only of a
        refusal or a duplicate (as from nats-server's processJetStreamMsg).
        ``recording``: the server keeps a timeline (the ``publish`` events).
        """
        stream = self.stream
        config = stream.config
        do_ack = not config["no_ack"] and bool(reply)
        if stream.input is not None:
            subject = stream.input.match(subject) or subject
        if trace_only:
            return self._trace_only(subject, hdr, payload, do_ack)
        if reply.endswith(FAST_SUFFIX) and stream.fast.take(config, subject, reply, hdr or None, payload, client):
            return None  # a fast batch message: the batch answers for itself
        try:
            if hdr and (batch_id := batch_id_in(hdr)):
                ack = stream.batches.receive(batch_id, subject, publish.clean_headers(hdr) or b"", payload, client)
            else:
                outcome = self.process(subject, hdr or None, payload)
                ack = outcome.ack
                if outcome.duplicate:
                    stream.trace_error = publish.DUPLICATE_TRACE
                if recording:
                    self.record_publish(client, subject, hdr, len(payload), outcome, None)
        except ApiError as error:
            stream.trace_error, stream.trace_error_late = error.trace_text, error.late
            if recording:
                self.record_publish(client, subject, hdr, len(payload), None, error)
            return self.error_ack(error) if do_ack else None
        return ack if do_ack else None

    def record_publish(
        self,
        client: int,
        subject: str,
        hdr: bytes | None,
        size: int,
        stored: Outcome | None,
        error: ApiError | None,
        client_node: str = "",
    ) -> None:
        """The timeline's ``publish`` (stored, or a duplicate; its header block as is) or ``publish.error`` event;
        ``client_node`` names the server a client of another server is connected to (a replicated stream's)."""
        stream = self.stream
        size += len(hdr) if hdr else 0
        if stored is not None:
            values = (client, stream.name, subject, size, stored.seq, stored.duplicate, hdr)
            if client_node:
                stream.timeline.record(
                    "publish", **dict(zip(EVENT_KINDS["publish"][1], values)), client_node=client_node
                )
            else:
                stream.timeline.record_values("publish", values)  # one per message: by position
        elif error is not None:
            where: dict[str, Any] = {"client": client, "stream": stream.name, "subject": subject, "size": size}
            if client_node:
                where["client_node"] = client_node
            stream.timeline.record(
                "publish.error", **where, code=error.code, err_code=error.err_code, description=error.description
            )

    def _trace_only(self, subject: str, hdr: bytes | None, payload: bytes, do_ack: bool) -> bytes | None:
        stream = self.stream
        try:
            if batch_id := batch_id_in(hdr):
                stream.batches.check_trace_only(batch_id, subject, publish.clean_headers(hdr or b"") or b"", payload)
                return None
            outcome = self.process(subject, hdr or None, payload, trace_only=True)
        except ApiError as error:
            stream.trace_error, stream.trace_error_late = error.trace_text, error.late
            return self.error_ack(error) if do_ack else None
        if not outcome.duplicate:
            return None
        stream.trace_error = publish.DUPLICATE_TRACE
        return outcome.ack if do_ack else None

    def process(
        self, subject: str, hdr: bytes | None, payload: bytes, sourced: bool = False, trace_only: bool = False
    ) -> Outcome:
        """Check, decide and store one message (one clock read for both); raises what refuses it."""
        stream = self.stream
        now = stream.js.clock.time_ns()
        config = stream.config
        if (
            hdr is None
            and not trace_only
            and (self._plain if config is self._plain_config else self._plain_for(config))
        ):
            return self._store_plain(config, subject, payload, now)
        checked = publish.check(
            config, stream.store, subject, hdr, payload, now, stream.last_msg_id, stream.dedup.lookup, sourced
        )
        if isinstance(checked, int):
            return self._duplicate(checked)
        if trace_only:
            if stream.js.limits_exceeded(stream.config["storage"] == "memory"):
                raise api_error("JSInsufficientResourcesErr")
            return Outcome(b"", 0)
        entry = self.prepare_message(
            checked.subject, checked.hdr, checked.payload, checked.msg_id, checked.rollup, sourced, now
        )
        seq = self.apply_message(entry)
        total = checked.total
        ack = self._ack_head + b"%d}" % seq  # acknowledge(seq, total), without the call
        return Outcome(counter.ack(ack, total) if total else ack, seq)

    def _plain_for(self, config: StreamConfig) -> bool:
        """Whether a message without headers needs no more than its size checks, the limits and its place
        under ``config``: no counter, no interest retention, no discard-new limit that could refuse a message
        without headers (see :func:`~fakejs.jetstream.stream.store_limits.refuse_new`: a KV bucket's discard-new
        policy, with no count, byte or per-subject refusal, refuses nothing), no schedules, no republish."""
        self._plain_config = config
        self._plain = not (
            config["allow_msg_counter"]
            or config["retention"] == "interest"
            or (config["discard"] == "new" and store_limits.may_refuse_new(config))
            or config["allow_msg_schedules"]
            or config["republish"] is not None
        )
        return self._plain

    def _store_plain(self, config: StreamConfig, subject: str, payload: bytes, now: int) -> Outcome:
        """:meth:`process` for a message without headers under a plain config (see :meth:`_plain_for`): the same
        checks and the same place, without the steps its headers or the config would have asked for."""
        stream = self.stream
        publish.check_message(config, stream.store, subject, None, payload)
        self.storable(subject, None, payload)
        msg = self.place(subject, None, payload, 0, now)
        stream.last_msg_id = ""
        stream.fresh.append(msg)  # consumers hear of it after its PubAck went out, as in nats-server
        seq = msg.seq
        return Outcome(self._ack_head + b"%d}" % seq, seq)

    # -- the leader's decision -----------------------------------------------------------

    def check_publish(
        self, subject: str, hdr: bytes | None, payload: bytes, sourced: bool = False
    ) -> publish.Checked | Outcome:
        """The leader's header checks (:func:`~fakejs.jetstream.stream.publish.check`): what to store, or the
        duplicate's outcome; raises the :class:`ApiError` the PubAck reports."""
        stream = self.stream
        now = stream.js.clock.time_ns()
        checked = publish.check(
            stream.config, stream.store, subject, hdr, payload, now, stream.last_msg_id, stream.dedup.lookup, sourced
        )
        if isinstance(checked, int):
            return self._duplicate(checked)
        return checked

    def _duplicate(self, seq: int) -> Outcome:
        return Outcome(self.pub_ack(seq)[:-1] + b',"duplicate": true}', seq, True)

    def prepare_message(
        self,
        subject: str,
        hdr: bytes | None,
        payload: bytes,
        msg_id: str,
        rollup: str,
        sourced: bool = False,
        now: int = 0,
        next_seq: int = 0,
    ) -> StreamMessage:
        """After the header checks (a committed batch's too), the leader's last refusals (resources, TTL,
        discard-new limits) and its decision, at ``now`` (0: the clock's) and ``next_seq`` (0: after the store's
        last; a replicated leader's messages in flight come before).  A sourced message keeps its ``Nats-TTL``
        unless TTLs are allowed."""
        stream = self.stream
        config, store = stream.config, stream.store
        self.storable(subject, hdr, payload)
        next_seq = next_seq or store.last_seq + 1
        if not now:
            now = stream.js.clock.time_ns()
        if config["retention"] == "interest" and not stream.has_interest(subject):  # the sequence is used, no more
            return StreamMessage(next_seq, now, subject, None, b"", 0, msg_id, rollup, skipped=True)
        ttl = 0
        if hdr and (config["allow_msg_ttl"] or not sourced):
            ttl, hdr = publish.message_ttl(config, hdr)
        if config["discard"] == "new":  # refuse_new's own test, without the call
            store_limits.refuse_new(config, store, subject, hdr, payload, bool(rollup))
        return StreamMessage(next_seq, now, subject, hdr, payload, ttl, msg_id, rollup)

    def storable(self, subject: str, hdr: bytes | None, payload: bytes) -> None:
        """Refused when the server's or the account's JetStream limits have no room for it."""
        stream = self.stream
        js = stream.js
        memory = stream.config["storage"] == "memory"
        if not js.limits_checked[0 if memory else 1]:  # no limit to meet: neither check is asked
            return
        if js.limits_exceeded(memory):
            raise api_error("JSInsufficientResourcesErr")
        if js.account_limits_exceeded(memory, subject, hdr, payload):  # the size is worked out only under a limit
            raise api_error("JSAccountResourcesExceededErr").traced_as(late=True)

    # -- what every replica applies ------------------------------------------------------

    def apply_message(self, entry: StreamMessage) -> int:
        """Store what the leader decided, as every replica does: no clock read, no refusal; its sequence."""
        stream = self.stream
        store = stream.store
        msg_id = entry.msg_id
        if entry.skipped:
            store.skip_to(entry.seq + 1)
            store.last_ts = entry.ts
            self._accepted(msg_id, entry.seq, entry.ts)
            stream.rollup(entry.subject, entry.rollup, 0)
            return entry.seq
        if entry.seq > store.last_seq + 1:
            store.skip_to(entry.seq)
        republish = stream.republisher
        then = republish.prepare(entry.subject, store) if republish is not None else None
        msg = self.place(entry.subject, entry.hdr, entry.payload, entry.ttl, entry.ts)
        stream.last_msg_id = msg_id  # _accepted(), without the call for a message without an id
        if msg_id:
            stream.dedup.remember(msg_id, msg.seq, msg.ts)
        if entry.rollup:
            stream.rollup(entry.subject, entry.rollup, 1)
        # A message without headers in a stream without schedules neither schedules nor purges
        if (msg.hdr is not None or stream.config["allow_msg_schedules"]) and (purged := stream.schedules.stored(msg)):
            stream.purge(purged)  # Nats-Schedule-Next: purge (a one-off fired): the schedule's subject goes
        if then is not None:
            then(msg)
        stream.fresh.append(msg)  # consumers hear of it after its PubAck went out, as in nats-server
        return msg.seq

    def _accepted(self, msg_id: str, seq: int, ts: int) -> None:
        stream = self.stream
        stream.last_msg_id = msg_id
        if msg_id:
            stream.dedup.remember(msg_id, seq, ts)

    def place(self, subject: str, hdr: bytes | None, payload: bytes, ttl: int, ts: int) -> StoredMessage:
        """Store at the next sequence, then the discard-old and per-subject limits, then expiry."""
        stream = self.stream
        store, config = stream.store, stream.config
        msg = store.store(subject, hdr, payload, ts, ttl)
        max_per = config["max_msgs_per_subject"]
        if max_per > 0:
            store_limits.trim_subject(store, subject, max_per, stream.remove_message)
        if config["discard"] == "old" and (config["max_msgs"] > 0 or config["max_bytes"] > 0):  # enforce_limits()
            store_limits.discard_old(config, store, stream.remove_message)
        if ttl or config["max_age"]:  # nothing to arm otherwise
            stream.expiry.stored(msg.seq, msg.ts, ttl)
        return msg
