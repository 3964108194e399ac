"""A stream: what happens to a message published on its subjects.

:meth:`Stream.ingest` is nats-server's ``processJetStreamMsg``: the checks on
``Nats-*`` headers in the same order (expected stream, TTL, expected last
subject sequence, expected last sequence, duplicate id, expected last id,
rollup), then the message size, the discard-new limits, storing, the
discard-old limits, rollups and the PubAck.  Retention beyond the limits
(interest, work queue) is decided with the stream's consumers.  Expiry by
``max_age`` and per-message TTL, and the duplicate window, run on the
server clock.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from fakejs.gocompat import gotime, ids
from fakejs.gocompat.gojson import dumps
from fakejs.jetstream.config import stream as streamconfig
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.storage.store import MessageStore, StoredMessage
from fakejs.jetstream.stream.direct import DirectGet
from fakejs.protocol import headers as hdrs
from fakejs.protocol.writer import go_quote

if TYPE_CHECKING:
    from fakejs.core.clock import TimerHandle
    from fakejs.core.router import Subscription
    from fakejs.jetstream.service import JetStream

MSG_ID = "Nats-Msg-Id"
EXPECTED_STREAM = "Nats-Expected-Stream"
EXPECTED_LAST_SEQ = "Nats-Expected-Last-Sequence"
EXPECTED_LAST_SUBJECT_SEQ = "Nats-Expected-Last-Subject-Sequence"
EXPECTED_LAST_SUBJECT_SEQ_SUBJECT = "Nats-Expected-Last-Subject-Sequence-Subject"
EXPECTED_LAST_MSG_ID = "Nats-Expected-Last-Msg-Id"
ROLLUP = "Nats-Rollup"
MSG_TTL = "Nats-TTL"
MARKER_REASON = "Nats-Marker-Reason"
INCR = "Nats-Incr"
BATCH_ID = "Nats-Batch-Id"
SCHEDULE = "Nats-Schedule"
SCHEDULER = "Nats-Scheduler"
SCHEDULE_NEXT = "Nats-Schedule-Next"
STREAM_SOURCE = "Nats-Stream-Source"
CLIENT_INFO = "Nats-Request-Info"
MAX_HEADER_SIZE = 65535

NS = 1_000_000_000


class StoreLimitError(Exception):
    """A discard-new limit refused the message (``maximum messages exceeded``...)."""


def parse_ttl(value: bytes) -> int:
    """``Nats-TTL``: seconds (>= 1s), ``-1`` for "never"; raises ``ValueError`` when invalid."""
    text = value.decode("utf-8", "replace")
    if text.lower() == "never":
        return -1
    try:
        duration = gotime.parse_duration(text)
    except ValueError:
        if not text or not text.isdigit() or not text.isascii():
            raise
        return int(text)
    if duration < NS:
        raise ValueError("ttl below one second")
    return duration // NS


def _uint(value: bytes) -> int:
    """nats-server's ``parseInt64`` cast to uint64: garbage becomes 2^64-1."""
    if value and value.isdigit() and value.isascii():
        return int(value) & (2**64 - 1)
    return 2**64 - 1


class Stream:
    def __init__(self, js: JetStream, config: dict[str, Any], created_ns: int, store: MessageStore) -> None:
        self.js = js
        self.config = config
        self.created_ns = created_ns
        self.store = store
        self.consumers: dict[str, Any] = {}
        self.subscriptions: list[Subscription] = []
        self.last_msg_id = ""
        self._dedup: OrderedDict[str, tuple[int, int]] = OrderedDict()
        self._dedup_timer: TimerHandle | None = None
        self._age_timer: TimerHandle | None = None
        self._age_deadline: float | None = None
        self._ttls: list[tuple[int, int]] = []  # (expires_ns, seq)
        self._fresh: list[StoredMessage] = []  # stored, consumers not yet told
        self.closed = False
        self.direct = DirectGet(self)

    @property
    def name(self) -> str:
        return str(self.config["name"])

    @property
    def clock(self) -> Any:
        return self.js.clock

    def identity(self) -> str:
        """A hash of the creation time: tells a recreated stream from the old one."""
        return ids.get_hash(gotime.rfc3339(self.created_ns))

    # -- lifecycle -------------------------------------------------------------------

    def attach(self) -> None:
        """Capture the stream's subjects (an internal subscription per subject)."""
        router = self.js.router
        for subject in self.config["subjects"]:
            self.subscriptions.append(router.subscribe_internal(subject, self._inbound))
        self.direct.sync()
        self._rearm_expiry()

    def detach(self) -> None:
        router = self.js.router
        for sub in self.subscriptions:
            router.unsubscribe(sub)
        self.subscriptions = []

    def close(self) -> None:
        self.closed = True
        self.detach()
        self.direct.close()
        for timer in (self._dedup_timer, self._age_timer):
            if timer is not None:
                timer.cancel()
        self._dedup_timer = self._age_timer = None

    def _inbound(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any) -> None:
        if self.closed:
            return
        ack = self.ingest(subject, reply, hdr, payload)
        if ack is not None and reply:
            self.js.reply(reply, ack)
        self._signal_consumers()

    # -- publishing ------------------------------------------------------------------

    def _pub_ack(self, seq: int) -> bytes:
        return b'{"stream":' + go_quote(self.name).encode() + b',"seq":%d}' % seq

    def _error_ack(self, error: ApiError) -> bytes:
        return dumps({"error": error.to_dict(), "stream": self.name, "seq": 0}).encode()

    def ingest(self, subject: str, reply: str, hdr: bytes | None, payload: bytes) -> bytes | None:
        """Store a published message; returns the PubAck (or error) payload to send."""
        cfg = self.config
        do_ack = not cfg["no_ack"] and bool(reply)
        try:
            ack = self._process(subject, hdr or None, payload)
        except ApiError as error:
            return self._error_ack(error) if do_ack else None
        return ack if do_ack else None

    def _process(self, subject: str, hdr: bytes | None, payload: bytes) -> bytes | None:
        cfg = self.config
        name = self.name
        store = self.store
        if store.storage == "file" and store.message_size(subject, hdr, payload) > 512 * 1024 * 1024:
            raise api_error("JSStreamStoreFailedF", err="message too large")
        if cfg["sealed"]:
            raise api_error("JSStreamSealedErr")
        max_size = cfg["max_msg_size"]
        hlen = len(hdr) if hdr else 0
        if max_size >= 0 and (hlen > max_size or len(payload) > max_size - hlen):
            raise api_error("JSStreamMessageExceedsMaximumErr")
        if hdr and hdrs.get(hdr, BATCH_ID):
            # An atomic batch message: nats-server takes another path, which
            # stops here on every stream fakejs can create (no allow_atomic).
            raise api_error("JSAtomicPublishDisabledErr")
        if hlen > MAX_HEADER_SIZE:
            raise api_error("JSStreamHeaderExceedsMaximumErr")
        msg_id = ""
        rollup = ""
        if hdr:
            hdr = hdrs.without_status(hdr) or None
        if hdr:
            hdr = hdrs.remove(hdr, CLIENT_INFO) or None
        if hdr:
            if hdrs.get(hdr, INCR) is not None:
                incr = hdrs.get(hdr, INCR) or b""
                text = incr.decode("utf-8", "replace")
                if not _is_big_int(text):
                    raise api_error("JSMessageIncrInvalidErr")
                raise api_error("JSMessageIncrDisabledErr")
            expected = hdrs.get(hdr, EXPECTED_STREAM)
            if expected and expected.decode("utf-8", "surrogateescape") != name:
                raise api_error("JSStreamNotMatchErr")
            ttl_value = hdrs.get(hdr, MSG_TTL)
            if ttl_value:
                try:
                    ttl_check = parse_ttl(ttl_value)
                except ValueError:
                    ttl_check = 0
                if ttl_check != 0 and not cfg["allow_msg_ttl"]:
                    raise api_error("JSMessageTTLDisabledErr")
            last_subject_seq = hdrs.get(hdr, EXPECTED_LAST_SUBJECT_SEQ)
            seq_subject_override = hdrs.get(hdr, EXPECTED_LAST_SUBJECT_SEQ_SUBJECT)
            if last_subject_seq:
                want = _uint(last_subject_seq)
                check_subject = (
                    seq_subject_override.decode("utf-8", "surrogateescape") if seq_subject_override else subject
                )
                last = store.last_message(check_subject)
                actual = last.seq if last is not None else 0
                if actual != want:
                    raise api_error("JSStreamWrongLastSequenceErrF", seq=actual)
            elif seq_subject_override:
                raise api_error("JSStreamExpectedLastSeqPerSubjectInvalid")
            last_seq = hdrs.get(hdr, EXPECTED_LAST_SEQ)
            if last_seq:
                want = _uint(last_seq)
                if want != store.last_seq:
                    raise api_error("JSStreamWrongLastSequenceErrF", seq=store.last_seq)
            if hdrs.get(hdr, SCHEDULE):
                raise api_error("JSMessageSchedulesDisabledErr")
            if hdrs.get(hdr, SCHEDULE_NEXT) or hdrs.get(hdr, SCHEDULER):
                raise api_error("JSMessageSchedulesSchedulerInvalidErr")
            if hdrs.get(hdr, STREAM_SOURCE):
                raise api_error("JSMessageSourceHdrNotAllowedErr")
            msg_id = (hdrs.get(hdr, MSG_ID) or b"").decode("utf-8", "surrogateescape")
            if msg_id:
                seen = self._dedup_lookup(msg_id)
                if seen is not None:
                    return self._pub_ack(seen)[:-1] + b',"duplicate": true}'
            last_id = hdrs.get(hdr, EXPECTED_LAST_MSG_ID)
            if last_id:
                if last_id.decode("utf-8", "surrogateescape") != self.last_msg_id:
                    raise api_error("JSStreamWrongLastMsgIDErrF", id=self.last_msg_id)
            rollup_value = hdrs.get(hdr, ROLLUP)
            if rollup_value:
                if not cfg["allow_rollup_hdrs"] or cfg["deny_purge"]:
                    raise api_error("JSStreamRollupFailedF", err="rollup not permitted")
                rollup = rollup_value.decode("utf-8", "surrogateescape").lower()
                if rollup not in ("sub", "all"):
                    raise api_error("JSStreamRollupFailedF", err=f"rollup value invalid: {go_quote(rollup)}")
        if cfg["retention"] == "interest" and not self._has_interest(subject):
            # Nobody would ever see it: the sequence is used, nothing is stored.
            store.skip_to(store.last_seq + 2)
            store.last_ts = self.clock.time_ns()
            self.last_msg_id = msg_id
            if msg_id:
                self._remember_id(msg_id, store.last_seq)
            if rollup:
                self._rollup(subject, rollup, 0)
            return self._pub_ack(store.last_seq)
        ttl = 0
        if hdr:
            ttl_value = hdrs.get(hdr, MSG_TTL)
            if ttl_value:
                try:
                    ttl = parse_ttl(ttl_value)
                except ValueError:
                    raise api_error("JSMessageTTLInvalidErr") from None
                marker_ttl = cfg["subject_delete_marker_ttl"] // NS
                if ttl > 0 and marker_ttl > 0 and cfg["max_msgs_per_subject"] != 1 and ttl < marker_ttl:
                    ttl = marker_ttl
                    hdr = hdrs.add(hdrs.remove(hdr, MSG_TTL) or None, MSG_TTL, str(ttl))
        try:
            msg = self._store(subject, hdr, payload, ttl, bool(rollup))
        except StoreLimitError as exc:
            raise api_error("JSStreamStoreFailedF", err=str(exc)) from None
        self.last_msg_id = msg_id
        if msg_id:
            self._remember_id(msg_id, msg.seq)
        if rollup:
            self._rollup(subject, rollup, 1)
        self._stored(msg)
        return self._pub_ack(msg.seq)

    def _store(self, subject: str, hdr: bytes | None, payload: bytes, ttl: int, rollup: bool) -> StoredMessage:
        """Limits as the stores apply them: discard-new refusals first, discard-old after."""
        cfg = self.config
        store = self.store
        max_per = cfg["max_msgs_per_subject"]
        at_subject_limit = max_per > 0 and store.count_for(subject) >= max_per
        if cfg["discard"] == "new":
            if at_subject_limit and cfg["discard_new_per_subject"] and not rollup:
                raise StoreLimitError("maximum messages per subject exceeded")
            if cfg["max_msgs"] > 0 and store.msgs >= cfg["max_msgs"] and not at_subject_limit:
                raise StoreLimitError("maximum messages exceeded")
            if cfg["max_bytes"] > 0 and store.bytes + store.message_size(subject, hdr, payload) > cfg["max_bytes"]:
                if not at_subject_limit:
                    raise StoreLimitError("maximum bytes exceeded")
                oldest = store.next_message(0, subject)
                if oldest is None or store.size_of(oldest) < store.message_size(subject, hdr, payload):
                    raise StoreLimitError("maximum bytes exceeded")
        msg = store.store(subject, hdr, payload, self.clock.time_ns(), ttl)
        if max_per > 0:
            seqs = store.seqs_for(subject)
            while seqs is not None and len(seqs) > max_per:
                self.remove_message(seqs[0])
                seqs = store.seqs_for(subject)
        self.enforce_limits()
        if ttl > 0:
            heapq.heappush(self._ttls, (msg.ts + ttl * NS, msg.seq))
        self._rearm_expiry()
        return msg

    def enforce_limits(self) -> None:
        """Discard-old limits on count and bytes (also after a config update)."""
        cfg = self.config
        if cfg["discard"] != "old":
            return
        store = self.store
        while cfg["max_msgs"] > 0 and store.msgs > cfg["max_msgs"]:
            first = store.first()
            if first is None:
                break
            self.remove_message(first.seq)
        while cfg["max_bytes"] > 0 and store.bytes > cfg["max_bytes"]:
            first = store.first()
            if first is None:
                break
            self.remove_message(first.seq)

    def enforce_subject_limit(self) -> None:
        max_per = self.config["max_msgs_per_subject"]
        if max_per <= 0:
            return
        for subject in list(self.store.subjects()):
            seqs = self.store.seqs_for(subject)
            while seqs is not None and len(seqs) > max_per:
                self.remove_message(seqs[0])
                seqs = self.store.seqs_for(subject)

    def _rollup(self, subject: str, kind: str, keep: int) -> None:
        if kind == "sub":
            self.purge(subject, 0, keep)
        else:
            self.purge("", 0, keep)

    def _stored(self, msg: StoredMessage) -> None:
        """Consumers hear of a new message after its PubAck went out, as in nats-server."""
        self._fresh.append(msg)

    def _signal_consumers(self) -> None:
        fresh, self._fresh = self._fresh, []
        for msg in fresh:
            for consumer in list(self.consumers.values()):
                consumer.message_stored(msg)

    # -- consumers ----------------------------------------------------------------------

    def add_consumer(self, config: dict[str, Any], action: str, pedantic: bool) -> Any:
        from fakejs.jetstream.consumer import admin as consumer_admin

        return consumer_admin.add_consumer(self, config, action, pedantic)

    def remove_consumer(self, consumer: Any) -> None:
        from fakejs.jetstream.consumer import admin as consumer_admin

        consumer_admin.remove_consumer(self, consumer)

    def acked(self, consumer: Any, seq: int) -> None:
        from fakejs.jetstream.consumer import admin as consumer_admin

        consumer_admin.message_acked(self, consumer, seq)

    def _has_interest(self, subject: str) -> bool:
        """Interest retention keeps a message only if a consumer is signaled for its subject."""
        return any(consumer.signaled(subject) for consumer in self.consumers.values())

    # -- duplicate window ------------------------------------------------------------------

    def _dedup_lookup(self, msg_id: str) -> int | None:
        entry = self._dedup.get(msg_id)
        if entry is None:
            return None
        seq, ts = entry
        if self.clock.time_ns() - ts >= self.config["duplicate_window"]:
            return None
        return seq

    def _remember_id(self, msg_id: str, seq: int) -> None:
        window = self.config["duplicate_window"]
        if window <= 0:
            return
        self._dedup.pop(msg_id, None)
        self._dedup[msg_id] = (seq, self.clock.time_ns())
        if self._dedup_timer is None:
            self._dedup_timer = self.clock.call_later(window / NS, self._purge_ids)

    def _purge_ids(self) -> None:
        self._dedup_timer = None
        now = self.clock.time_ns()
        window = self.config["duplicate_window"]
        while self._dedup:
            msg_id, (seq, ts) = next(iter(self._dedup.items()))
            if now - ts >= window:
                del self._dedup[msg_id]
            else:
                self._dedup_timer = self.clock.call_later((window - (now - ts)) / NS, self._purge_ids)
                break

    def restore_ids(self) -> None:
        """Rebuild the duplicate window from stored messages (after a restart)."""
        window = self.config["duplicate_window"]
        now = self.clock.time_ns()
        for msg in self.store:
            if msg.hdr and now - msg.ts < window:
                msg_id = hdrs.get(msg.hdr, MSG_ID)
                if msg_id:
                    self._remember_id_at(msg_id.decode("utf-8", "surrogateescape"), msg.seq, msg.ts)
            if msg.ttl > 0:
                heapq.heappush(self._ttls, (msg.ts + msg.ttl * NS, msg.seq))
        last = self.store.last_message()
        if last is not None and last.hdr:
            self.last_msg_id = (hdrs.get(last.hdr, MSG_ID) or b"").decode("utf-8", "surrogateescape")

    def _remember_id_at(self, msg_id: str, seq: int, ts: int) -> None:
        self._dedup[msg_id] = (seq, ts)
        if self._dedup_timer is None:
            delay = max(self.config["duplicate_window"] - (self.clock.time_ns() - ts), 0)
            self._dedup_timer = self.clock.call_later(delay / NS, self._purge_ids)

    # -- expiry ------------------------------------------------------------------------

    def _next_expiry_ns(self) -> int | None:
        candidates = []
        max_age = self.config["max_age"]
        if max_age > 0:
            for msg in self.store:
                if msg.ttl >= 0:  # messages with "Nats-TTL: never" outlive max_age
                    candidates.append(msg.ts + max_age)
                    break
        while self._ttls and self.store.get(self._ttls[0][1]) is None:
            heapq.heappop(self._ttls)
        if self._ttls:
            candidates.append(self._ttls[0][0])
        return min(candidates) if candidates else None

    def _rearm_expiry(self) -> None:
        due = self._next_expiry_ns()
        if due is None:
            if self._age_timer is not None:
                self._age_timer.cancel()
                self._age_timer = None
            return
        delay = max(due - self.clock.time_ns(), 0) / NS
        when = self.clock.monotonic() + delay
        if self._age_timer is not None and self._age_deadline is not None and self._age_deadline <= when:
            return
        if self._age_timer is not None:
            self._age_timer.cancel()
        self._age_deadline = when
        self._age_timer = self.clock.call_later(delay, self._expire)

    def _expire(self) -> None:
        self._age_timer = None
        self._age_deadline = None
        if self.closed:
            return
        now = self.clock.time_ns()
        max_age = self.config["max_age"]
        expired: list[int] = []
        if max_age > 0:
            for msg in self.store:
                if msg.ts + max_age > now:
                    break
                if msg.ttl < 0:
                    continue
                expired.append(msg.seq)
        while self._ttls and self._ttls[0][0] <= now:
            expired.append(heapq.heappop(self._ttls)[1])
        marker_ttl = self.config["subject_delete_marker_ttl"]
        for seq in sorted(set(expired)):
            msg = self.store.get(seq)
            if msg is None:
                continue
            if marker_ttl > 0 and self.store.count_for(msg.subject) == 1 and not _is_marker(msg.hdr):
                self._place_marker(msg.subject, marker_ttl)
            else:
                self.remove_message(seq)
        self._rearm_expiry()

    def _place_marker(self, subject: str, marker_ttl: int) -> None:
        """Replace the last expired message of a subject with a delete marker."""
        block = hdrs.build([(MARKER_REASON, "MaxAge"), (MSG_TTL, gotime.format_duration(marker_ttl)), (ROLLUP, "sub")])
        self._process(subject, block, b"")
        self._signal_consumers()

    # -- removal, purge, reads -------------------------------------------------------------

    def remove_message(self, seq: int) -> StoredMessage | None:
        msg = self.store.remove(seq)
        if msg is not None:
            for consumer in list(self.consumers.values()):
                consumer.message_removed(seq, msg.subject)
        return msg

    def purge(self, filter_subject: str = "", seq: int = 0, keep: int = 0) -> int:
        """``purgeLocked``: purge the store, then move every consumer the purge concerns."""
        store = self.store
        removed = store.purge(filter_subject, seq, keep)
        first, last = store.first_seq, store.last_seq
        start = first
        if filter_subject:
            remaining = store.next_message(first, filter_subject)
            start = remaining.seq if remaining is not None else 0
        for consumer in list(self.consumers.values()):
            if not filter_subject or consumer.is_equal_or_subset_match(filter_subject):
                consumer.purged(start, last, False)
            elif consumer.is_filtered_match(filter_subject):
                consumer.purged(first, last, True)
        self._rearm_expiry()
        return len(removed)

    def state(self, deleted_details: bool = False, subjects_filter: str = "") -> dict[str, Any]:
        store = self.store
        state: dict[str, Any] = {
            "messages": store.msgs,
            "bytes": store.bytes,
            "first_seq": store.first_seq,
            "first_ts": gotime.rfc3339(store.first_ts),
            "last_seq": store.last_seq,
            "last_ts": gotime.rfc3339(store.last_ts),
        }
        if store.num_subjects:
            state["num_subjects"] = store.num_subjects
        if subjects_filter:
            counts = store.subject_counts(subjects_filter)
            if counts:
                state["subjects"] = counts
        num_deleted = store.num_deleted
        if num_deleted:
            if deleted_details:
                state["deleted"] = store.deleted()
            state["num_deleted"] = num_deleted
        elif deleted_details and store.storage == "file" and store.first_seq == 0 and store.last_seq == 0:
            # nats-server's file store counts the never-used sequence 0 of a
            # fresh stream as deleted when asked for details.
            state["num_deleted"], state["deleted"] = 1, [0]
        state["consumer_count"] = len(self.consumers)
        return _state_order(state)

    def info(
        self,
        *,
        deleted_details: bool = False,
        subjects_filter: str = "",
        cluster: bool = True,
        dynamic_metadata: bool = True,
    ) -> dict[str, Any]:
        info: dict[str, Any] = {
            "config": streamconfig.to_json(self.config, dynamic_metadata),
            "created": gotime.rfc3339(self.created_ns),
            "state": self.state(deleted_details, subjects_filter),
        }
        if cluster:
            info["cluster"] = {"leader": self.js.server_name}
        info["ts"] = gotime.rfc3339(self.clock.time_ns())
        return info


_STATE_ORDER = (
    "messages",
    "bytes",
    "first_seq",
    "first_ts",
    "last_seq",
    "last_ts",
    "num_subjects",
    "subjects",
    "num_deleted",
    "deleted",
    "lost",
    "consumer_count",
)


def _state_order(state: dict[str, Any]) -> dict[str, Any]:
    return {key: state[key] for key in _STATE_ORDER if key in state}


def _is_marker(hdr: bytes | None) -> bool:
    return bool(hdr) and hdrs.get(hdr, MARKER_REASON) is not None


def _is_big_int(text: str) -> bool:
    body = text[1:] if text[:1] in "+-" else text
    return body.isdigit() and body.isascii()
