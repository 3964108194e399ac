"""JetStream for the server's one account: its streams, their consumers, its store and usage.

:class:`JetStream` attaches to the router the way nats-server's JetStream
attaches to its account: each stream subscribes to its own subjects, and
replies and advisories are published as internal messages.  The
``$JS.API`` front end is not part of it: it attaches from above
(:meth:`JetStream.attach`) and answers the requests streams and consumers
serve themselves through the handlers it registers (:meth:`JetStream.serve_asset`).

A server started with JetStream makes one at start, but the rules, the
consumer machinery and the message store are imported when the first
stream is created or recovered: a test process that starts a server per
test pays for them only in the tests that use them.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from fakejs.core.empty_reply import EMPTY_REPLY
from fakejs.core.jetstream_limits import JetStreamLimits
from fakejs.core.options import API_LEVEL, SYSTEM_ACCOUNT
from fakejs.core.recorder import Recorder
from fakejs.core.router import Router
from fakejs.core.subjects import overlap
from fakejs.gocompat import ids
from fakejs.jetstream import advisories
from fakejs.jetstream.consumer.registry import consumers_of
from fakejs.jetstream.internal_client import ACCOUNT_KIND, InternalClient
from fakejs.jetstream.service import banner, limits
from fakejs.jetstream.service.persistence import Persistence
from fakejs.jetstream.service.server_limits import server_limits
from fakejs.jetstream.stream.batch_limits import BatchLimits

if TYPE_CHECKING:
    from fakejs.core.accounts import Account
    from fakejs.core.broker import Broker
    from fakejs.jetstream.config.consumer import ConsumerConfig
    from fakejs.jetstream.config.stream import StreamConfig
    from fakejs.jetstream.consumer.consumer import Consumer
    from fakejs.jetstream.consumer.view import ConsumerName
    from fakejs.jetstream.errors import ApiError
    from fakejs.jetstream.service.consumers import ConsumerAdmin
    from fakejs.jetstream.stream.stream import Stream, StreamConsumer

AssetHandler = Callable[..., None]


class Attachment(Protocol):
    """A front end riding on the JetStream (the ``$JS.API``): started after recovery, stopped first."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


def api_error(name: str, **fields: Any) -> ApiError:
    """:func:`fakejs.jetstream.errors.api_error`, its table imported by the first error."""
    # The error table comes with the first error (start-up stays lean)
    from fakejs.jetstream.errors import api_error as make

    return make(name, **fields)


# The tier of a single server's streams (nats-server's tierName of one replica).
SINGLE_SERVER_TIER = "R1"
# A tiered account's own ``limits`` in ``$JS.API.INFO``: Go's zero value, every limit 0.
NO_LIMITS_SET = JetStreamLimits(0, 0, 0, 0, 0, 0, 0, False)
# nats-server logs "resource limits exceeded" at most this often (seconds).
LIMIT_LOG_INTERVAL = 10.0


def server_batch_limits(broker: Broker) -> BatchLimits:
    """The atomic batch limits of the server's options."""
    options = broker.options
    return BatchLimits.configured(
        options.jetstream_batch_inflight_per_stream,
        options.jetstream_batch_inflight_total,
        options.jetstream_batch_max_msgs,
        options.jetstream_batch_timeout,
    )


class JetStream:
    """An account's JetStream (nats-server's ``jsAccount``): its streams and their consumers, store
    directory, limits and usage, without the ``$JS.API`` front end (attached from above)."""

    def __init__(
        self,
        broker: Broker,
        store_dir: str = "",
        own_store: bool | None = None,
        account: Account | None = None,
        limits: JetStreamLimits | None = None,
        batch_limits: BatchLimits | None = None,
        router: Router | None = None,
    ) -> None:
        self.broker = broker
        # The account this JetStream serves (the global one unless told otherwise): its
        # router carries the API, the streams' subjects and every reply.
        self.account = account if account is not None else broker.accounts.default
        self.router = router if router is not None else self.account.router
        # The account's JetStream limits (``accounts { A { jetstream { ... } } }``); unlimited by default.
        self.limits = limits if limits is not None else JetStreamLimits()
        # Atomic batch limits, shared by every account's JetStream on the server.
        self.batch_limits = batch_limits if batch_limits is not None else server_batch_limits(broker)
        self.clock = broker.clock
        self.log = broker.log
        # The timeline (fakejs.core.recorder): the server's, or a cluster's; set before any stream (each keeps it).
        self.recorder: Recorder = broker.timeline
        self._account_client: InternalClient | None = None
        # A store directory fakejs made itself is removed on stop (unless kept for a restart).
        self.owns_store = not store_dir if own_store is None else own_store
        if not store_dir:
            store_dir = tempfile.mkdtemp(prefix="fakejs-store-")
        self.store_dir = store_dir
        # ``jetstream { domain: D }``: named in PubAcks, stream info and ``$JS.API.INFO``.
        self.domain = broker.options.jetstream_domain
        os.makedirs(self.store_dir, exist_ok=True)  # nats-server creates a missing store directory
        self.streams: dict[str, Stream] = {}
        self.persistence = Persistence(
            self.store_dir, self.log, self.account.name, broker.clock.monotonic, broker.clock.call_soon
        )
        self.api_total = 0
        self.api_errors = 0
        self._answering = 0  # API requests being handled and answered (nested ones included)
        self._after_answer: list[Callable[[], None]] = []
        self._attachments: list[Attachment] = []
        self._asset_handlers: dict[str, AssetHandler] = {}
        self._asset_registrars: list[Callable[[], object]] = []
        # nats-server's defaults: 75% of the machine's memory and of the store's free disk.
        # A configuration file's jetstream { max_mem_store, max_file_store } replaces them.
        options = broker.options
        server = server_limits(options, self.store_dir)
        self.max_memory, self.max_storage = server.max_memory, server.max_storage
        # Only configured limits are checked on every publish (the defaults are the machine's).
        self._limited = (options.jetstream_max_memory >= 0, options.jetstream_max_store >= 0)
        self._note_limits()
        self._limit_logged = -LIMIT_LOG_INTERVAL
        self._account_limit_logged = -LIMIT_LOG_INTERVAL
        # Tiered limits by tier name (``R1``, ``R3``): see :meth:`use_tiers`; empty: the limits are the account's.
        self.tiers: dict[str, JetStreamLimits] = {}

    def use_tiers(self, tiers: Mapping[str, JetStreamLimits]) -> None:
        """Tiered limits (an account JWT's ``tiered_limits``): a single server's streams are R1, under that tier.

        Without an ``R1`` tier no stream can be created (``JSNoLimitsErr``).
        """
        self.tiers = dict(tiers)
        self.update_limits(self.tiers.get(SINGLE_SERVER_TIER, JetStreamLimits()))

    def update_limits(self, limits: JetStreamLimits) -> None:
        """A reload gave the account new JetStream limits: the next streams, consumers and messages meet them."""
        self.limits = limits
        self._note_limits()
        if "consumer_admin" in self.__dict__:  # made already: it holds the limits too
            self.consumer_admin.limits = limits

    def _note_limits(self) -> None:
        """Which stores' publishes have a limit to meet (read on every publish): a configured server limit or the
        account's.  Without one, :meth:`limits_exceeded` and :meth:`account_limits_exceeded` answer False."""
        self.limits_checked = (
            self._limited[0] or self.limits.max_memory >= 0,
            self._limited[1] or self.limits.max_storage >= 0,
        )

    def raise_server_limits(self, max_memory: int, max_storage: int) -> None:
        """A reload raised the server's ``max_mem_store`` / ``max_file_store`` (-1: left as it was)."""
        if max_memory > 0:
            self.max_memory = max_memory
        if max_storage > 0:
            self.max_storage = max_storage

    @cached_property
    def consumer_admin(self) -> ConsumerAdmin:
        """The consumer rules, made (and imported) when the first consumer is created or recovered."""
        # Consumer administration comes with the first consumer
        from fakejs.jetstream.service.consumers import ConsumerAdmin

        return ConsumerAdmin(self.router, self.clock, self.broker.random, self.persistence, self.limits)

    @property
    def rng(self) -> random.Random:
        """The server's seeded generator."""
        return self.broker.random

    def account_client(self) -> InternalClient:
        """The account's internal client (nats-server's ``acc.ic``, started with the server): it asks an origin to
        delete a mirror's or source's consumer.  Numbered from the server's client ids on first use."""
        if self._account_client is None:
            cid = self.broker.next_client_id()
            self._account_client = InternalClient(ACCOUNT_KIND, cid, self.broker.started_ns, self.account_name)
        return self._account_client

    def nuid(self) -> str:
        """A fresh NUID from the server's seeded generator."""
        return ids.nuid(self.broker.random)

    @property
    def account_name(self) -> str:
        return self.account.name

    @property
    def server_name(self) -> str:
        return self.broker.name

    def reply_interest(self, reply: str, within: ConsumerName | None = None) -> tuple[Router, str]:
        """Where interest in a pull request's reply is watched: through imports, the requester's subject.

        A JetStream on a router of its own (a replicated group's) watches the
        reply as it is.
        """
        imports = self.broker.imports
        if imports is None or self.router is not self.account.router:
            return self.router, reply
        target, subject = imports.reply_interest(self.account, reply)
        return (self.router, reply) if subject == reply else (target.router, subject)

    def online(self, stream: str, consumer: str = "") -> bool:
        """A single server's assets are always online."""
        return True

    def cluster_section(self, stream: str, consumer: str = "") -> dict[str, Any] | None:
        """A single server is its streams' leader (consumers have none)."""
        return None if consumer else {"leader": self.server_name}

    # -- front ends ----------------------------------------------------------------------

    def attach(self, front: Attachment) -> None:
        self._attachments.append(front)

    def serve_asset(self, kind: str, handler: AssetHandler) -> None:
        """Register the answer to a request a stream or consumer serves on its own subscription."""
        self._asset_handlers[kind] = handler

    def serve_assets_later(self, register: Callable[[], object]) -> None:
        """A front end whose :meth:`serve_asset` calls wait until a stream or consumer first hands a request over."""
        self._asset_registrars.append(register)

    def asset_request(self, kind: str, *args: object) -> None:
        """A stream or consumer hands over a request it received (``consumer.reset``...)."""
        handler = self._asset_handlers.get(kind)
        if handler is None:
            registrars, self._asset_registrars = self._asset_registrars, []
            for register in registrars:
                register()
            handler = self._asset_handlers[kind]
        handler(*args)

    def record_api_call(self, error: bool) -> None:
        """Count a ``$JS.API`` call for ``$JS.API.INFO`` and the monitoring endpoints."""
        self.api_total += 1
        if error:
            self.api_errors += 1

    # -- answers first -----------------------------------------------------------------

    @contextmanager
    def answering(self) -> Iterator[None]:
        """Handle and answer an API request; what it sets in motion waits until the answer is out: nats-server
        writes a consumer create or update reply before anything the consumer sends (clients may drop deliveries
        ahead of it); the waiting actions are queued behind the reply's flush, so thousands do not hold it back."""
        self.begin_answer()
        try:
            yield
        finally:
            self.end_answer()

    def begin_answer(self) -> None:
        """:meth:`answering` without a context manager; :meth:`end_answer` follows, even after a failure."""
        self._answering += 1

    def end_answer(self) -> None:
        """The answer is out: what the request set in motion may run."""
        self._answering -= 1
        if not self._answering and self._after_answer:
            waiting, self._after_answer = self._after_answer, []
            for action in waiting:
                self.clock.call_soon(action)

    def after_answer(self, action: Callable[[], None]) -> None:
        """Run ``action`` once the API request being handled is answered (now, outside of one)."""
        if self._answering:
            self._after_answer.append(action)
        else:
            action()

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> None:
        self.broker.jetstream_enabled = True
        if self.domain:
            for source, target in (("$KV.", "$KV."), ("$OBJ.", "$OBJ."), ("", "$JS.API.")):  # nats-server's domain maps
                self.router.add_prefix_mapping(f"$JS.{self.domain}.API.{source}", target)
        account = self.account.name
        banner.log_account_enabled(self.log, account, self.limits)
        if self.persistence.has_streams():
            banner.log_recovering(self.log, account)
        for stream in self.persistence.recover(self):
            self.streams[stream.name] = stream
            stream.attach()
            self.persistence.recover_consumers(stream)
        banner.log_recovered(self.log, account)
        for front in self._attachments:
            front.start()

    def stop(self, keep_store: bool = False) -> None:
        """Shut down; a store fakejs made itself is removed unless ``keep_store`` (a restart)."""
        for front in self._attachments:
            front.stop()
        consumers = sum(len(stream.consumers) for stream in self.streams.values())
        banner.log_internal_clients_closed(self.log, len(self.streams), consumers)
        for stream in list(self.streams.values()):
            for consumer in list(consumers_of(stream).values()):
                consumer.stop()
            stream.close()
        self.persistence.close()
        self.streams.clear()
        if self.owns_store and not keep_store:
            shutil.rmtree(self.store_dir, ignore_errors=True)

    def reply(self, subject: str, payload: bytes, hdr: bytes | None = None, empty_reply: bool = False) -> None:
        """Publish an internal message (a reply, a delivery, an advisory).

        ``empty_reply`` marks the messages nats-server sends with an empty
        reply-to field (see :data:`fakejs.core.router.EMPTY_REPLY`).
        """
        self.router.publish(subject, EMPTY_REPLY if empty_reply else "", hdr, payload, None)

    @property
    def system_router(self) -> Router | None:
        """The system account's router (where nats-server copies some advisories), if the server has one."""
        options = self.broker.options
        account = self.broker.accounts.get(options.system_account or SYSTEM_ACCOUNT)
        return account.router if account is not None else None

    # -- account information ----------------------------------------------------------------

    def usage(self) -> tuple[int, int]:
        """Bytes stored, in memory and on disk."""
        memory = storage = 0
        for stream in self.streams.values():
            if stream.config["storage"] == "memory":
                memory += stream.store.bytes
            else:
                storage += stream.store.bytes
        return memory, storage

    def limits_exceeded(self, memory: bool) -> bool:
        """nats-server's check before storing: is the store of that kind already over the server's limit?

        Then the message is refused (``insufficient resources``), and the
        server logs it at most every ten seconds.
        """
        if not self._limited[0 if memory else 1]:
            return False
        used_memory, used_storage = self.usage()
        over = used_memory > self.max_memory if memory else used_storage > self.max_storage
        if over:
            now = self.clock.monotonic()
            if now - self._limit_logged > LIMIT_LOG_INTERVAL:
                self._limit_logged = now
                self.log.error("JetStream %s resource limits exceeded for server", "memory" if memory else "file")
        return over

    def reservations(self) -> tuple[int, int]:
        """Bytes reserved by streams' max_bytes: (memory, file)."""
        return self.reserved_bytes(memory=True), self.reserved_bytes(memory=False)

    def account_info(self) -> dict[str, Any]:
        memory, storage = self.usage()
        reserved_memory, reserved_storage = self.reservations()
        info: dict[str, Any] = {
            "memory": memory,
            "storage": storage,
            "reserved_memory": reserved_memory,
            "reserved_storage": reserved_storage,
            "streams": len(self.streams),
            "consumers": sum(len(s.consumers) for s in self.streams.values()),
            "limits": limits.limits_json(self.limits if not self.tiers else NO_LIMITS_SET),
        }
        if self.domain:
            info["domain"] = self.domain
        info["api"] = {"level": API_LEVEL, "total": self.api_total, "errors": self.api_errors}
        if self.tiers:
            info["tiers"] = limits.tiers_json(info, self.tiers, SINGLE_SERVER_TIER)
        return info

    # -- streams ---------------------------------------------------------------------

    def lookup(self, name: str) -> Stream:
        stream = self.streams.get(name)
        if stream is None:
            raise api_error("JSStreamNotFoundErr")
        return stream

    def stream_config(self, name: str) -> StreamConfig | None:
        """The stored config of one of the account's streams (``None`` when there is none by that name)."""
        stream = self.streams.get(name)
        return None if stream is None else stream.config

    def streams_matching(self, subject_filter: str) -> list[Stream]:
        """Streams by name whose subjects (or name, without subjects) overlap the filter (all when empty)."""
        chosen = []
        for stream in self.streams.values():
            if subject_filter:
                subjects = stream.config["subjects"] or [stream.name]
                if not any(overlap(subject_filter, subject) for subject in subjects):
                    continue
            chosen.append(stream)
        return sorted(chosen, key=lambda s: s.name)

    def add_stream(self, config: StreamConfig, pedantic: bool) -> Stream:
        """``STREAM.CREATE``: a new stream, or the existing one when its config is the same."""
        # The stream rules come with the first stream created
        from fakejs.jetstream.config import stream_rules, stream_sources
        from fakejs.jetstream.config.stream import copy_static_metadata

        checked = stream_rules.check_create(config, pedantic, self.stream_config, clustered=False)
        if self.tiers and SINGLE_SERVER_TIER not in self.tiers:
            raise api_error("JSNoLimitsErr")
        limits.stream_bytes_rules(self.limits, checked)
        existing = self.streams.get(checked["name"])
        if existing is not None:
            # Creating again with the same config is a success (did_create and all).
            copy_static_metadata(checked, existing.config)
            if checked != existing.config:
                raise api_error("JSStreamNameExistErr")
            return existing
        unsupported = stream_rules.unsupported_feature(checked)
        if unsupported is not None:
            raise unsupported
        limits.new_stream(self.limits, checked, self._stream_configs())
        self._check_resources(checked)
        stream_sources.check_filters(checked)
        if self._subjects_overlap(checked["subjects"]):
            raise api_error("JSStreamSubjectOverlapErr")
        stream = self._create_stream(checked)
        if self.recorder:
            self.recorder.record("stream.create", stream=stream.name)
        advisories.stream_action(self, stream.name, "create")
        return stream

    def update_stream(self, name: str, config: StreamConfig, pedantic: bool) -> Stream:
        """``STREAM.UPDATE`` with a checked config: what may change, within resources and consumer limits."""
        # The update rules come with the first stream updated
        from fakejs.jetstream.config import consumer_rules, stream_rules, stream_transforms
        from fakejs.jetstream.config.stream import set_static_metadata

        stream = self.lookup(name)
        set_static_metadata(config)
        checked = stream_rules.check_update(stream.config, config, pedantic, self.stream_config)
        unsupported = stream_rules.unsupported_feature(checked)
        if unsupported is not None:
            raise unsupported
        limits.stream_bytes_rules(self.limits, checked)
        limits.reservation(self.limits, checked, self._stream_configs(), update=True)
        self._check_resources(checked, exclude=name, update=True)
        consumer_configs = ((c.name, c.config) for c in stream.consumers.values())
        violators = consumer_rules.consumers_over_limits(stream.config, checked, consumer_configs)
        if violators:
            raise api_error("JSStreamUpdateErrF", err="change to limits violates consumers: " + ", ".join(violators))
        if self._subjects_overlap(checked["subjects"], exclude=name):
            raise api_error("JSStreamSubjectOverlapErr")
        stream_transforms.prepare_update(checked)
        stream.update(checked)
        self.persistence.config_changed(stream)
        if self.recorder:
            self.recorder.record("stream.update", stream=name)
        advisories.stream_action(self, name, "modify")
        return stream

    def delete_stream(self, stream: Stream, cause: str = "api") -> None:
        """Delete ``stream`` and its consumers (``cause``, for the timeline: ``api``, ``control``, ``account_purge``)."""
        for consumer in list(stream.consumers.values()):
            consumer.delete("stream_delete")
            self.persistence.consumer_closed(stream, consumer)
        if self.recorder:
            self.recorder.record("stream.delete", stream=stream.name, cause=cause)
        advisories.stream_action(self, stream.name, "delete")
        stream.close(deleted=True)
        self.streams.pop(stream.name, None)
        self.persistence.stream_deleted(stream)

    def _create_stream(self, config: StreamConfig) -> Stream:
        # The store and the stream come with the first stream created
        from fakejs.jetstream.storage.store import MessageStore
        from fakejs.jetstream.stream.stream import Stream

        created = self.clock.time_ns()
        stream = Stream(self, config, created, MessageStore(config["storage"], config["first_seq"]))
        self.persistence.stream_created(stream)
        self.streams[config["name"]] = stream
        stream.attach()
        return stream

    def _check_resources(self, config: StreamConfig, exclude: str = "", update: bool = False) -> None:
        """Refuse a max_bytes reservation the server could not honour (every account's reservations count).

        As nats-server, a new stream without ``max_bytes`` reserves one byte.
        """
        wanted = config["max_bytes"] if config["max_bytes"] >= 0 else (0 if update else 1)
        memory = config["storage"] == "memory"
        held = 0
        for account in self.broker.accounts:
            js = account.jetstream
            if js is not None:
                held += js.reserved_bytes(memory, exclude if js is self else "")
        cap = self.max_memory if memory else self.max_storage
        if held > cap or wanted > cap - held:
            raise api_error("JSMemoryResourcesExceededErr" if memory else "JSStorageResourcesExceededErr")

    def reserved_bytes(self, memory: bool, exclude: str = "") -> int:
        """What this account's streams of one storage type reserve (``exclude``: a stream being updated)."""
        return limits.reserved(self._stream_configs(), memory, exclude)

    def _stream_configs(self) -> list[StreamConfig]:
        return [stream.config for stream in self.streams.values()]

    def account_limits_exceeded(self, memory: bool, subject: str, hdr: bytes | None, payload: bytes) -> bool:
        """Would storing the message take the account over its limit (sized only under one)?  Logged at most every 10 s."""
        cap = self.limits.max_memory if memory else self.limits.max_storage
        if cap < 0:
            return False
        stored = self.usage()[0 if memory else 1]
        if not limits.publish_exceeds(self.limits, memory, stored, limits.message_size(memory, subject, hdr, payload)):
            return False
        now = self.clock.monotonic()
        if now - self._account_limit_logged > LIMIT_LOG_INTERVAL:
            self._account_limit_logged = now
            kind = "memory" if memory else "file"
            self.log.warning('JetStream %s resource limits exceeded for account: "%s"', kind, self.account.name)
        return True

    def _subjects_overlap(self, subjects: list[str], exclude: str = "") -> bool:
        others = (stream.config["subjects"] for stream in self.streams.values() if stream.name != exclude)
        return any(overlap(mine, theirs) for taken in others for mine in subjects for theirs in taken)

    # -- consumers ---------------------------------------------------------------------

    def lookup_consumer(self, stream_name: str, consumer_name: str) -> Consumer:
        consumer = consumers_of(self.lookup(stream_name)).get(consumer_name)
        if consumer is None:
            raise api_error("JSConsumerNotFoundErr")
        return consumer

    def add_consumer(
        self, stream_name: str, config: ConsumerConfig, action: str, pedantic: bool, asked_identity: str
    ) -> tuple[Consumer, str]:
        """``CONSUMER.CREATE`` once the request agrees with its subject: see :meth:`ConsumerAdmin.create`."""
        if config["num_replicas"] > 1:
            raise api_error("JSStreamReplicasNotSupportedErr")
        stream = self.lookup(stream_name)
        known = set(stream.consumers)
        consumer, identity = self.consumer_admin.create(stream, config, action, pedantic, asked_identity)
        if consumer.name not in known:  # created (else updated, and ConsumerAdmin.update recorded it)
            if self.recorder:  # once placed: a cluster records it on its leader's server
                self.recorder.record("consumer.create", stream=stream.name, consumer=consumer.name)
            advisories.consumer_action(consumer, "create")
        return consumer, identity

    def remove_consumer(self, stream: Stream, consumer: StreamConsumer, cause: str = "api") -> None:
        self.consumer_admin.remove(stream, consumer, cause)

    def consumer_acked(self, stream: Stream, consumer: StreamConsumer, seq: int) -> None:
        self.consumer_admin.acked(stream, consumer, seq)

    def consumer_updated(self, stream: Stream, consumer: StreamConsumer) -> None:
        self.persistence.consumer_updated(stream, consumer)
