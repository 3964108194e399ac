"""A stream: what happens to a message published on its subjects, and to its stored messages.

:meth:`Stream.inbound` hands a published message to the stream's publisher
(:class:`~fakejs.jetstream.stream.publish_path.StreamPublisher`, nats-server's
``processJetStreamMsg``: the leader's checks and decision, then what every
replica applies), sends its PubAck and tells the consumers.  Retention beyond
the limits (interest, work queue) is decided with the stream's consumers.
Expiry by ``max_age`` and per-message TTL, the duplicate window and message
schedules run on the server clock.  The stream sees its JetStream through
:class:`~fakejs.jetstream.stream.host.StreamHost` and its consumers through
:class:`~fakejs.jetstream.stream.consumer_view.StreamConsumer`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from functools import partial
from typing import Any

from fakejs.core.clock import Clock
from fakejs.core.recorder import Recorder
from fakejs.core.router import Subscription
from fakejs.core.subject_transform import SubjectTransform
from fakejs.gocompat import gotime, ids
from fakejs.gocompat.gotime import NS
from fakejs.jetstream import advisories
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.internal_client import STREAM_KIND, InternalClient
from fakejs.jetstream.storage.store import MessageStore, StoredMessage
from fakejs.jetstream.stream import info, publish, recovery, store_limits
from fakejs.jetstream.stream.batch import AtomicBatches
from fakejs.jetstream.stream.consumer_view import StreamConsumer as StreamConsumer
from fakejs.jetstream.stream.dedup import DuplicateWindow
from fakejs.jetstream.stream.direct import DirectGet
from fakejs.jetstream.stream.entries import (
    StreamBatch,
    StreamEntry,
    StreamFastMessage,
    StreamMessage,
    StreamPurge,
    StreamSkip,
)
from fakejs.jetstream.stream.expiry import MessageExpiry
from fakejs.jetstream.stream.fast_batch import FastBatches
from fakejs.jetstream.stream.host import StreamHost as StreamHost
from fakejs.jetstream.stream.links import Links
from fakejs.jetstream.stream.publish_path import StreamPublisher
from fakejs.jetstream.stream.schedules import MessageSchedules, Produced
from fakejs.jetstream.stream.traced import traced_inbound
from fakejs.jetstream.stream.transforms import Republisher, input_transform

MARKER_RETRY = 2 * NS  # a refused subject delete marker is tried again after this long


class Stream:
    """One stream (nats-server's ``stream``, ``mset``): its config, store and consumers; it captures
    its subjects, stores what is published there (:meth:`ingest`) and applies limits, retention and expiry."""

    def __init__(self, js: StreamHost, config: StreamConfig, created_ns: int, store: MessageStore) -> None:
        self.js = js
        self.config = config
        self.created_ns = created_ns
        self.store = store
        # Consumers by name (the JetStream adds and removes them; the stream uses them as StreamConsumer).
        self.consumers: dict[str, StreamConsumer] = {}
        self.subscriptions: list[Subscription] = []
        self.last_msg_id = ""
        self.dedup = DuplicateWindow(js.clock, self)
        self.expiry = MessageExpiry(store, js.clock, self, self._expire)
        self.schedules = MessageSchedules(store, js.clock, self._schedules_allowed, self._scheduled, publish.parse_ttl)
        self.fresh: list[StoredMessage] = []  # stored, consumers not yet told
        self.closed = False
        # Why the last message ingested was not stored (read by a traced message's ``js`` event).
        self.trace_error = ""
        self.trace_error_late = False
        self.direct = DirectGet(config["name"], store, js)
        self.batches: AtomicBatches = AtomicBatches(self, js.batch_limits)
        self.publisher: StreamPublisher = StreamPublisher(self)  # the publish path: checks, decision, storing, PubAcks
        publisher = self.publisher
        self._transforms(config)
        fast = js.batch_limits.fast
        self.fast: FastBatches = FastBatches(
            js.clock, js.reply, publisher.process, publisher.pub_ack, publisher.error_ack, fast, js.recorder, self.name
        )
        self.links = Links(self)  # its mirror or sources
        self._internal_client: InternalClient | None = None
        self.timeline: Recorder = js.recorder  # the server's recorder (see fakejs.core.recorder)
        self.recording = bool(self.timeline)  # the server's recorder stays for the stream's life: asked once

    @property
    def name(self) -> str:
        return self.config["name"]

    @property
    def clock(self) -> Clock:
        return self.js.clock

    def internal_client(self) -> InternalClient:
        """The stream's own client (``mset.client``, for its mirror's or sources' consumer requests), numbered on
        first use and started with the stream (or the server, for a stream it loaded)."""
        if self._internal_client is None:
            broker = self.js.broker
            started = max(self.created_ns, broker.started_ns)
            cid = broker.next_client_id()
            self._internal_client = InternalClient(STREAM_KIND, cid, started, self.js.account_name)
        return self._internal_client

    def identity(self) -> str:
        """A hash of the creation time: tells a recreated stream from the old one."""
        return ids.get_hash(gotime.rfc3339(self.created_ns))

    def _listening(self) -> list[StreamConsumer]:
        return list(self.consumers.values())

    # -- lifecycle -------------------------------------------------------------------

    def attach(self) -> None:
        """Capture the stream's subjects (an internal subscription per subject)."""
        router = self.js.router
        for subject in self.config["subjects"]:
            capture = router.subscribe_internal(subject, self.inbound)
            capture.owner.trace_hop = partial(traced_inbound, self)
            self.subscriptions.append(capture)
        self._sync_direct()
        self.expiry.rearm()
        self.links.sync()

    def detach(self) -> None:
        router = self.js.router
        for sub in self.subscriptions:
            router.unsubscribe(sub)
        self.subscriptions = []

    def close(self, deleted: bool = False) -> None:
        """Stop everything the stream runs (``deleted``: for good, not for a server stop)."""
        self.closed = True
        self.links.close(deleted)
        self.detach()
        self.direct.close()
        self.batches.clear()
        self.dedup.close()
        self.expiry.close()
        self.fast.close()
        self.schedules.close()

    def _transforms(self, config: StreamConfig) -> None:
        """The input transform and the republisher of a checked config (``None`` when unused)."""
        self.input: SubjectTransform | None = None
        self.republisher: Republisher | None = None
        if config["subject_transform"] is not None or config["republish"] is not None:
            js = self.js
            self.input = input_transform(config, js.rng)
            self.republisher = Republisher.build(config, js.router, js.clock, js.rng)

    def _sync_direct(self) -> None:
        self.direct.sync(bool(self.config["allow_direct"]) and not self.closed)

    def update(self, config: StreamConfig) -> None:
        """Run under a new, checked config: retention, subjects, Direct Get, limits and expiry follow it."""
        old = self.config
        self.config = config
        self._transforms(config)
        if (
            config["retention"] == "interest"
            and old["retention"] != "interest"
            and not self.consumers
            and self.store.msgs
        ):
            self.purge()  # an interest stream without consumers keeps nothing
        if config["subjects"] != old["subjects"]:
            self.detach()
            self.attach()
        self._sync_direct()
        self.fast.updated(config)
        self.links.sync()
        if not config["allow_atomic"]:
            self.batches.clear()
        self.enforce_subject_limit()
        self.enforce_limits()
        self.expiry.rearm()

    def inbound(
        self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object, trace_only: bool = False
    ) -> bool:
        """A message published on the stream's subjects (``trace_only``: checked, answered when refused, not stored)."""
        if self.closed:
            return True
        if not self.js.online(self.config["name"]):
            return False  # no leader to store it: not delivered (a request gets no responders)
        recording = self.recording
        client = getattr(origin, "cid", 0) if recording else 0
        ack = self.publisher.ingest(subject, reply, hdr, payload, trace_only, client, recording)
        if ack is not None and reply:
            self.js.router.publish(reply, "", None, ack, None)  # the PubAck: JetStream.reply, one call less
        if self.consumers:
            self._signal_consumers()
        else:  # nobody to tell: what was stored is forgotten here (_signal_consumers' own test, without the call)
            self.fresh.clear()
        return True

    # -- publishing (the publisher's, as the stream's batches and callers see it) --------

    def ingest(
        self, subject: str, reply: str, hdr: bytes | None, payload: bytes, trace_only: bool = False, client: int = 0
    ) -> bytes | None:
        """Store a published message; the PubAck (or error) payload to send (see :meth:`StreamPublisher.ingest`)."""
        return self.publisher.ingest(subject, reply, hdr, payload, trace_only, client, self.recording)

    def storable(self, subject: str, hdr: bytes | None, payload: bytes) -> None:
        self.publisher.storable(subject, hdr, payload)

    def prepare_message(
        self, subject: str, hdr: bytes | None, payload: bytes, msg_id: str, rollup: str
    ) -> StreamMessage:
        return self.publisher.prepare_message(subject, hdr, payload, msg_id, rollup)

    def apply_message(self, entry: StreamMessage) -> int:
        return self.publisher.apply_message(entry)

    def pub_ack(self, seq: int) -> bytes:
        return self.publisher.pub_ack(seq)

    def input_subject(self, subject: str) -> str:
        """The subject a message published on ``subject`` is stored under (the input transform applied)."""
        if self.input is not None:
            return self.input.match(subject) or subject
        return subject

    def store_sourced(self, subject: str, hdr: bytes | None, payload: bytes) -> bool:
        """A message from a source: the target's own rules, but not the checks the origin made.

        Whether it was stored (not a duplicate, nor dropped by interest retention).
        """
        outcome = self.publisher.process(subject, hdr, payload, sourced=True)
        self._signal_consumers()
        return not outcome.duplicate and self.store.get(outcome.seq) is not None

    @property
    def mirrored_last_seq(self) -> int:
        """The last sequence of the mirror, stored or on its way to the store."""
        return self.store.last_seq

    def skip_mirrored(self, next_seq: int) -> None:
        """The origin has nothing before ``next_seq``: the mirror's sequences go on from there."""
        self.store.skip_to(next_seq)

    def store_mirrored(self, subject: str, hdr: bytes | None, payload: bytes, seq: int, ts: int) -> bool:
        """The origin's message ``seq`` with its time; False when ``seq`` does not follow the last."""
        store = self.store
        if seq - 1 != store.last_seq:
            if store.msgs:
                return False
            store.skip_to(seq)
        if self.config["retention"] == "interest" and not self.has_interest(subject):
            store.skip_to(seq + 1)  # nobody would ever see it: the sequence is used, nothing is stored
            store.last_ts = ts
            return True
        try:
            ttl = publish.message_ttl(self.config, hdr)[0] if hdr and self.config["allow_msg_ttl"] else 0
            store_limits.refuse_new(self.config, self.store, subject, hdr, payload, False)
            self.fresh.append(self.publisher.place(subject, hdr, payload, ttl, ts or self.clock.time_ns()))
        except ApiError:
            pass  # refused by a limit: nats-server logs it and the mirror goes on
        self._signal_consumers()
        return True

    def apply(self, entry: StreamEntry) -> None:
        """A replicated entry, applied as on every replica; the consumers hear of what changed."""
        if isinstance(entry, StreamMessage):
            self.publisher.apply_message(entry)
        elif isinstance(entry, StreamBatch):
            for message in entry.messages:
                self.publisher.apply_message(message)
        elif isinstance(entry, StreamFastMessage):
            self.publisher.apply_message(entry.message)
        elif isinstance(entry, StreamPurge):
            self.purge(entry.filter_subject, entry.seq, entry.keep)
        elif isinstance(entry, StreamSkip):
            self.store.skip_to(entry.next_seq)
        else:
            self.remove_message(entry.seq)
        self._signal_consumers()

    def seen_id(self, msg_id: str) -> int | None:
        return self.dedup.lookup(msg_id)

    def batch_abandoned(self, batch_id: str, reason: str) -> None:
        advisories.batch_abandoned(self.js, self.name, batch_id, reason)

    def _schedules_allowed(self) -> bool:
        return self.config["allow_msg_schedules"]

    def _scheduled(self, out: Produced) -> None:
        """A due schedule's message, stored as nats-server stores a sourced one (no PubAck)."""
        with contextlib.suppress(ApiError):
            self.publisher.process(out.subject, out.hdr, out.payload, sourced=True)
        self._signal_consumers()

    def enforce_limits(self) -> None:
        """Discard-old limits on count and bytes (also after a config update)."""
        store_limits.discard_old(self.config, self.store, self.remove_message)

    def enforce_subject_limit(self) -> None:
        store_limits.trim_subjects(self.config, self.store, self.remove_message)

    def rollup(self, subject: str, kind: str, keep: int) -> None:
        """A ``Nats-Rollup`` (``sub`` or ``all``) of a stored message: purge what it replaces, ``keep`` left."""
        if not kind:
            return
        if kind == "sub":
            self.purge(subject, 0, keep)
        else:
            self.purge("", 0, keep)

    def _signal_consumers(self) -> None:
        if not self.fresh:
            return
        fresh, self.fresh = self.fresh, []
        if not self.consumers:
            return
        for msg in fresh:
            for consumer in self._listening():
                consumer.message_stored(msg)

    # -- consumers ----------------------------------------------------------------------

    def register_consumer(self, consumer: StreamConsumer) -> None:
        """The JetStream made ``consumer`` on this stream: it hears of stored and removed messages."""
        self.consumers[consumer.name] = consumer

    def unregister_consumer(self, consumer: StreamConsumer) -> None:
        """The JetStream removed ``consumer``: forget it, unless another took its name meanwhile."""
        if self.consumers.get(consumer.name) is consumer:
            del self.consumers[consumer.name]

    def remove_consumer(self, consumer: StreamConsumer, cause: str = "api") -> None:
        """The consumer goes (``cause``: ``api``, ``inactive``...): the JetStream removes it and applies retention."""
        self.js.remove_consumer(self, consumer, cause)

    def acked(self, consumer: StreamConsumer, seq: int) -> None:
        """A consumer is done with ``seq``: the JetStream applies interest or work-queue retention."""
        self.js.consumer_acked(self, consumer, seq)

    def has_interest(self, subject: str) -> bool:
        """Interest retention keeps a message only if a consumer is signaled for its subject."""
        return any(consumer.signaled(subject) for consumer in self._listening())

    # -- recovery and expiry ---------------------------------------------------------------

    def restore_ids(self) -> None:
        """Rebuild the duplicate window and the TTLs from stored messages (after a restart)."""
        parts = (self.dedup, self.expiry, self.schedules)
        last_id = recovery.recover(self.store, self.config["duplicate_window"], self.clock.time_ns(), parts)
        if last_id is not None:
            self.last_msg_id = last_id

    def _expire(self) -> None:
        if self.closed:
            return
        marker_ttl = self.config["subject_delete_marker_ttl"]
        for seq in self.expiry.due(self.clock.time_ns()):
            msg = self.store.get(seq)
            if msg is None:
                continue
            if marker_ttl > 0 and self.store.count_for(msg.subject) == 1 and not publish.is_marker(msg.hdr):
                # The subject's last message leaves a delete marker in its place (republished like any message).
                try:
                    self.publisher.process(msg.subject, publish.delete_marker(marker_ttl), b"")
                except ApiError:
                    # Refused (a counter stream wants Nats-Incr): the message stays, retried later.
                    self.expiry.hold(seq, self.clock.time_ns() + MARKER_RETRY)
                    continue
                self._signal_consumers()
            else:
                self.remove_message(seq)
        self.expiry.rearm()

    # -- removal, purge, reads -------------------------------------------------------------

    def remove_message(self, seq: int) -> StoredMessage | None:
        msg = self.store.remove(seq)
        if msg is not None and self.consumers:
            for consumer in self._listening():
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
        for consumer in self._listening():
            if not filter_subject or consumer.is_equal_or_subset_match(filter_subject):
                consumer.purged(start, last, False)
            elif consumer.is_filtered_match(filter_subject):
                consumer.purged(first, last, True)
        self.expiry.rearm()
        return len(removed)

    def purge_on_request(self, filter_subject: str, seq: int, keep: int) -> int:
        """A purge asked for through the API: refused on a sealed stream or with ``deny_purge``."""
        if self.config["sealed"]:
            raise api_error("JSStreamSealedErr")
        if self.config["deny_purge"]:
            raise api_error("JSStreamPurgeFailedF", err="stream purge not permitted")
        purged = self.purge(filter_subject, seq, keep)
        if self.timeline:
            self.timeline.record(
                "stream.purge", stream=self.name, filter=filter_subject, seq=seq, keep=keep, purged=purged
            )
        return purged

    def erase_message(self, seq: int) -> ApiError | None:
        """A delete asked for through the API.

        Refusals (sealed, ``deny_delete``) raise.  A sequence holding no
        message is not a refusal: the reason is returned, and nats-server
        answers it as an error while counting the call as a success.
        """
        if self.config["sealed"]:
            raise api_error("JSStreamSealedErr")
        if self.config["deny_delete"]:
            raise api_error("JSStreamMsgDeleteFailedF", err="message delete not permitted")
        if self.remove_message(seq) is not None:
            return None
        return info.missing_message(self.store, seq)

    def find_message(self, seq: int, last_by_subject: str, next_by_subject: str, start_ns: int | None) -> StoredMessage:
        """``STREAM.MSG.GET``: by sequence, first after a time, next or last on a subject."""
        return info.find_message(self.store, seq, last_by_subject, next_by_subject, start_ns)

    # -- state and info ----------------------------------------------------------------------

    def subjects_page(self, subjects_filter: str, offset: int) -> tuple[int, dict[str, int]]:
        """Subjects matching the filter: how many, and the page of them (with counts) from ``offset``."""
        return info.subjects_page(self.store, subjects_filter, offset)

    def state(self, deleted_details: bool = False, subjects: Mapping[str, int] | None = None) -> dict[str, Any]:
        """``StreamState`` in nats-server's field order (``subjects``: a page of per-subject counts)."""
        return info.state(self.store, self.links.consumer_count(self.consumers), deleted_details, subjects)

    def info(
        self,
        *,
        deleted_details: bool = False,
        subjects: Mapping[str, int] | None = None,
        cluster: bool = True,
        dynamic_metadata: bool = True,
        domain: bool = True,
    ) -> dict[str, Any]:
        """``StreamInfo`` (a create reply leaves ``domain`` out, as nats-server does)."""
        js = self.js
        out = info.stream_info(
            self.config,
            self.created_ns,
            self.state(deleted_details, subjects),
            now_ns=self.clock.time_ns(),
            dynamic_metadata=dynamic_metadata,
            domain=js.domain if domain else "",
            cluster=js.cluster_section(self.name) if cluster else None,
        )
        return self.links.add_info(out)
