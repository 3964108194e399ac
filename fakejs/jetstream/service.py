"""JetStream for the server's one account: its streams, API accounting and wiring.

:class:`JetStream` attaches to the router the way nats-server's JetStream
attaches to its account: an internal subscription on ``$JS.API.>`` feeds
the API dispatcher, each stream subscribes to its own subjects, and replies
and advisories are published as internal messages.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fakejs.core.options import API_LEVEL
from fakejs.core.router import EMPTY_REPLY
from fakejs.gocompat import gotime, ids
from fakejs.jetstream.api import dispatch as api
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.config import stream as streamconfig
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.storage.files import StreamFiles, streams_dir
from fakejs.jetstream.storage.store import MessageStore
from fakejs.jetstream.stream.stream import Stream

if TYPE_CHECKING:
    from fakejs.core.broker import Broker

ADVISORY_PREFIX = "$JS.EVENT.ADVISORY."


def _system_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 8 * 1024**3


# Requests served by a stream's or consumer's own subscription, answered by the API layer
# (which registers its handlers here, so the domain never imports it).
ASSET_HANDLERS: dict[str, Callable[..., None]] = {}


class JetStream:
    def __init__(self, broker: Broker, store_dir: str = "", own_store: bool | None = None) -> None:
        self.broker = broker
        self.router = broker.router
        self.clock = broker.clock
        self.log = broker.log
        self._own_store = not store_dir if own_store is None else own_store
        self.store_dir = store_dir or tempfile.mkdtemp(prefix="fakejs-store-")
        os.makedirs(self.store_dir, exist_ok=True)  # nats-server creates a missing store directory
        self.streams: dict[str, Stream] = {}
        self.files: dict[str, StreamFiles] = {}
        self.consumer_journals: dict[tuple[str, str], Any] = {}
        self.api_total = 0
        self.api_errors = 0
        self._api_sub: Any = None
        # nats-server's defaults: 75% of the machine's memory and of the store's free disk.
        self.max_memory = int(_system_memory() * 0.75)
        self.max_storage = int(shutil.disk_usage(self.store_dir).free * 0.75)

    def asset_request(self, kind: str, *args: Any) -> None:
        """A request a stream or consumer serves on its own subject, answered by the API layer's handler."""
        ASSET_HANDLERS[kind](*args)

    def nuid(self) -> str:
        """A fresh NUID from the server's seeded generator."""
        return ids.nuid(self.broker.random)

    @property
    def server_name(self) -> str:
        return self.broker.name

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> None:
        self.broker.jetstream_enabled = True
        self._recover()
        self._api_sub = self.router.subscribe_internal("$JS.API.>", self._api)

    def stop(self, keep_store: bool = False) -> None:
        """Shut down; a store fakejs made itself is removed unless ``keep_store`` (a restart)."""
        if self._api_sub is not None:
            self.router.unsubscribe(self._api_sub)
            self._api_sub = None
        for stream in list(self.streams.values()):
            for consumer in list(stream.consumers.values()):
                consumer.stop()
            stream.close()
        for journal in self.consumer_journals.values():
            journal.close()
        for files in self.files.values():
            files.close()
        self.consumer_journals.clear()
        self.streams.clear()
        self.files.clear()
        if self._own_store and not keep_store:
            shutil.rmtree(self.store_dir, ignore_errors=True)

    def _api(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any) -> bool:
        return api.dispatch(self, subject, reply, hdr, payload)

    # -- replies and advisories ----------------------------------------------------------

    def reply(self, subject: str, payload: bytes, hdr: bytes | None = None, empty_reply: bool = False) -> None:
        """Publish an internal message (a reply, a delivery, an advisory).

        ``empty_reply`` marks the messages nats-server sends with an empty
        reply-to field (see :data:`fakejs.core.router.EMPTY_REPLY`).
        """
        self.router.publish(subject, EMPTY_REPLY if empty_reply else "", hdr, payload, None)

    def api_reply(self, request: api.Request, doc: dict[str, Any], error: bool) -> None:
        payload = api.encode(doc)
        self.api_total += 1
        if error:
            self.api_errors += 1
        if request.reply:
            self.reply(request.reply, payload, request.reply_headers)
        audit = ADVISORY_PREFIX + "API"
        if self.router.has_interest(audit):
            now = gotime.rfc3339(self.clock.time_ns())
            self.reply(audit, api.audit_advisory(self, request, payload, now, self.nuid()), empty_reply=True)

    def advisory(self, subject: str, doc: dict[str, Any]) -> None:
        """Publish an advisory if anyone listens (they are fire and forget)."""
        if self.router.has_interest(subject):
            self.reply(subject, api.encode(doc))

    # -- account information ----------------------------------------------------------------

    def usage(self) -> tuple[int, int]:
        memory = storage = 0
        for stream in self.streams.values():
            if stream.config["storage"] == "memory":
                memory += stream.store.bytes
            else:
                storage += stream.store.bytes
        return memory, storage

    def reservations(self) -> tuple[int, int]:
        """Bytes reserved by streams' max_bytes, per storage type."""
        memory = storage = 0
        for stream in self.streams.values():
            reserved = max(stream.config["max_bytes"], 0)
            if stream.config["storage"] == "memory":
                memory += reserved
            else:
                storage += reserved
        return memory, storage

    def check_resources(self, config: dict[str, Any], exclude: str = "") -> None:
        """Refuse a max_bytes reservation the server could not honour."""
        wanted = config["max_bytes"]
        if wanted <= 0:
            return
        memory = config["storage"] == "memory"
        reserved = 0
        for stream in self.streams.values():
            if stream.name != exclude and (stream.config["storage"] == "memory") == memory:
                reserved += max(stream.config["max_bytes"], 0)
        if memory and reserved + wanted > self.max_memory:
            raise api_error("JSMemoryResourcesExceededErr")
        if not memory and reserved + wanted > self.max_storage:
            raise api_error("JSStorageResourcesExceededErr")

    def account_info(self) -> dict[str, Any]:
        memory, storage = self.usage()
        reserved_memory, reserved_storage = self.reservations()
        return {
            "memory": memory,
            "storage": storage,
            "reserved_memory": reserved_memory,
            "reserved_storage": reserved_storage,
            "streams": len(self.streams),
            "consumers": sum(len(s.consumers) for s in self.streams.values()),
            "limits": {
                "max_memory": -1,
                "max_storage": -1,
                "max_streams": -1,
                "max_consumers": -1,
                "max_ack_pending": -1,
                "memory_max_stream_bytes": -1,
                "storage_max_stream_bytes": -1,
                "max_bytes_required": False,
            },
            "api": {"level": API_LEVEL, "total": self.api_total, "errors": self.api_errors},
        }

    # -- streams ---------------------------------------------------------------------

    def lookup(self, name: str) -> Stream:
        stream = self.streams.get(name)
        if stream is None:
            raise api_error("JSStreamNotFoundErr")
        return stream

    def subjects_overlap(self, subjects: list[str], exclude: str = "") -> bool:
        from fakejs.core.subjects import overlap

        for stream in self.streams.values():
            if stream.name == exclude:
                continue
            for mine in subjects:
                for theirs in stream.config["subjects"]:
                    if overlap(mine, theirs):
                        return True
        return False

    def create_stream(self, config: dict[str, Any]) -> Stream:
        """Make a new stream from a checked config."""
        created = self.clock.time_ns()
        store = MessageStore(config["storage"], config["first_seq"])
        stream = Stream(self, config, created, store)
        if config["storage"] == "file":
            files = StreamFiles(os.path.join(streams_dir(self.store_dir), config["name"]))
            files.write_meta(config, created)
            files.open(store)
            self.files[config["name"]] = files
            if config["first_seq"] > 1:
                store.skip_to(config["first_seq"])
        self.streams[config["name"]] = stream
        stream.attach()
        return stream

    def save_config(self, stream: Stream) -> None:
        files = self.files.get(stream.name)
        if files is not None:
            files.write_meta(stream.config, stream.created_ns)

    # -- consumer bookkeeping (persistence hooks) --------------------------------------------

    def consumer_added(self, stream: Stream, consumer: Any) -> None:
        """File-backed streams keep their consumers' config and state on disk."""
        files = self.files.get(stream.name)
        if files is None:
            return
        journal = files.consumer_journal(consumer.name, consumer.state)
        journal.open()
        self.consumer_journals[(stream.name, consumer.name)] = journal
        files.write_consumer_meta(consumer.name, consumerconfig.to_storable(consumer.config), consumer.created_ns)

    def consumer_updated(self, stream: Stream, consumer: Any) -> None:
        files = self.files.get(stream.name)
        if files is not None and (stream.name, consumer.name) in self.consumer_journals:
            files.write_consumer_meta(consumer.name, consumerconfig.to_storable(consumer.config), consumer.created_ns)

    def consumer_removed(self, stream: Stream, consumer: Any) -> None:
        journal = self.consumer_journals.pop((stream.name, consumer.name), None)
        files = self.files.get(stream.name)
        if journal is not None:
            journal.destroy()
        if files is not None:
            files.remove_consumer(consumer.name)

    def delete_stream(self, stream: Stream) -> None:
        for consumer in list(stream.consumers.values()):
            consumer.delete()
            journal = self.consumer_journals.pop((stream.name, consumer.name), None)
            if journal is not None:
                journal.close()
        stream.close()
        self.streams.pop(stream.name, None)
        files = self.files.pop(stream.name, None)
        if files is not None:
            files.destroy()

    def _recover(self) -> None:
        """Load every file-backed stream found in the store directory."""
        root = streams_dir(self.store_dir)
        if not os.path.isdir(root):
            return
        for name in sorted(os.listdir(root)):
            directory = os.path.join(root, name)
            files = StreamFiles(directory)
            try:
                meta = files.read_meta()
            except (OSError, ValueError):
                self.log.warning("Skipping unreadable stream directory %s", directory)
                continue
            config = streamconfig.from_request(meta["config"])
            store = MessageStore(config["storage"], config["first_seq"])
            files.replay(store)
            files.open(store)
            stream = Stream(self, config, meta["created"], store)
            stream.restore_ids()
            self.streams[config["name"]] = stream
            self.files[config["name"]] = files
            stream.attach()
            self.log.info("  Restored %d messages for stream '$G > %s'", store.msgs, config["name"])
            self._recover_consumers(stream, files)

    def _recover_consumers(self, stream: Stream, files: StreamFiles) -> None:
        from fakejs.jetstream.consumer.consumer import Consumer

        for name, meta in files.consumer_metas():
            config = consumerconfig.from_storable(meta["config"])
            consumer = Consumer(stream, name, config, meta["created"])
            journal = files.consumer_journal(name, consumer.state)
            journal.replay()
            consumer.restore()
            journal.open()
            self.consumer_journals[(stream.name, name)] = journal
            stream.consumers[name] = consumer
            consumer.start()
        if stream.consumers:
            self.log.info("  Restored %d consumers for stream '$G > %s'", len(stream.consumers), stream.name)
