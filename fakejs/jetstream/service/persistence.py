"""The store directory of an account's JetStream: stream files and consumer journals.

File-backed streams keep their config, their messages and their consumers
(config and state) on disk, in step with every change; on start they are
read back, streams first, then each stream's consumers.  Memory streams
leave nothing here.  The storage and stream modules are imported by the
first file-backed stream (created or found on start), not before.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from fakejs.jetstream.service import banner

if TYPE_CHECKING:
    from fakejs.jetstream.consumer.consumer import Consumer
    from fakejs.jetstream.storage.consumer_state import ConsumerJournal
    from fakejs.jetstream.storage.files import StreamFiles
    from fakejs.jetstream.stream.stream import Stream, StreamConsumer, StreamHost


def streams_dir(store_dir: str) -> str:
    """Where the store directory keeps its file-backed streams, one directory each."""
    return os.path.join(store_dir, "fakejs", "streams")


class Persistence:
    """An account's store directory: written as streams and consumers change, read back on start.

    ``account`` names the account in the recovery lines; ``monotonic`` is the
    server clock's (seconds), to say how long a stream took to restore;
    ``call_soon`` is the server clock's, for the consumer journals to write
    once per turn of the event loop.
    """

    def __init__(
        self,
        store_dir: str,
        log: logging.Logger,
        account: str = "$G",
        monotonic: Callable[[], float] | None = None,
        call_soon: Callable[[Callable[[], None]], object] | None = None,
    ) -> None:
        self.store_dir = store_dir
        self.log = log
        self.account = account
        self._monotonic = monotonic if monotonic is not None else (lambda: 0.0)
        self._call_soon = call_soon
        self.files: dict[str, StreamFiles] = {}
        self.journals: dict[tuple[str, str], ConsumerJournal] = {}

    # -- streams -----------------------------------------------------------------------

    def stream_created(self, stream: Stream) -> None:
        """A new file-backed stream gets its directory, its config on disk and its journal."""
        config = stream.config
        if config["storage"] != "file":
            return
        # Configurations and stream files come with the first file-backed stream
        from fakejs.jetstream.config import stream as streamconfig
        from fakejs.jetstream.storage.files import StreamFiles

        files = StreamFiles(os.path.join(streams_dir(self.store_dir), config["name"]))
        files.write_meta(streamconfig.to_storable(config), stream.created_ns)
        files.open(stream.store)
        self.files[config["name"]] = files
        if config["first_seq"] > 1:
            stream.store.skip_to(config["first_seq"])

    def config_changed(self, stream: Stream) -> None:
        files = self.files.get(stream.name)
        if files is not None:
            # The stream configuration's stored form comes with the first file-backed stream
            from fakejs.jetstream.config import stream as streamconfig

            files.write_meta(streamconfig.to_storable(stream.config), stream.created_ns)

    def stream_deleted(self, stream: Stream) -> None:
        files = self.files.pop(stream.name, None)
        if files is not None:
            files.destroy()

    # -- consumers ---------------------------------------------------------------------

    def consumer_added(self, stream: Stream, consumer: Consumer) -> None:
        """File-backed streams keep their consumers' config and state on disk."""
        files = self.files.get(stream.name)
        if files is None:
            return
        # Consumer configurations come with the first consumer of a file-backed stream
        from fakejs.jetstream.config import consumer as consumerconfig

        journal = files.consumer_journal(consumer.name, consumer.state, self._call_soon)
        journal.open()
        self.journals[(stream.name, consumer.name)] = journal
        files.write_consumer_meta(consumer.name, consumerconfig.to_storable(consumer.config), consumer.created_ns)

    def consumer_updated(self, stream: Stream, consumer: StreamConsumer) -> None:
        files = self.files.get(stream.name)
        if files is not None and (stream.name, consumer.name) in self.journals:
            # Consumer configurations come with the first consumer of a file-backed stream
            from fakejs.jetstream.config import consumer as consumerconfig

            files.write_consumer_meta(consumer.name, consumerconfig.to_storable(consumer.config), consumer.created_ns)

    def consumer_removed(self, stream: Stream, consumer: StreamConsumer) -> None:
        journal = self.journals.pop((stream.name, consumer.name), None)
        files = self.files.get(stream.name)
        if journal is not None:
            journal.destroy()
        if files is not None:
            files.remove_consumer(consumer.name)

    def consumer_closed(self, stream: Stream, consumer: StreamConsumer) -> None:
        """The consumer's stream is going: its journal is closed (the directory goes with the stream's)."""
        journal = self.journals.pop((stream.name, consumer.name), None)
        if journal is not None:
            journal.close()

    def close(self) -> None:
        for journal in self.journals.values():
            journal.close()
        for files in self.files.values():
            files.close()
        self.journals.clear()
        self.files.clear()

    # -- recovery ------------------------------------------------------------------------

    def has_streams(self) -> bool:
        """Whether the store has a streams directory to recover (nats-server logs its recovery then)."""
        return os.path.isdir(streams_dir(self.store_dir))

    def recover(self, host: StreamHost) -> Iterator[Stream]:
        """Each file-backed stream found in the store directory, one at a time (consumers not yet)."""
        root = streams_dir(self.store_dir)
        if not os.path.isdir(root):
            return
        for name in sorted(os.listdir(root)):
            started = self._monotonic()
            stream = self._recover_stream(host, os.path.join(root, name))
            if stream is not None:
                elapsed = round((self._monotonic() - started) * 1e9)
                banner.log_restored(self.log, self.account, stream.name, stream.store.msgs, elapsed)
                if stream.timeline:
                    stream.timeline.record("stream.restore", stream=stream.name)
                yield stream

    def _recover_stream(self, host: StreamHost, directory: str) -> Stream | None:
        # Stores and streams come with the first stream, or with one to recover
        from fakejs.jetstream.config import stream as streamconfig
        from fakejs.jetstream.storage.files import StreamFiles
        from fakejs.jetstream.storage.store import MessageStore
        from fakejs.jetstream.stream.stream import Stream

        files = StreamFiles(directory)
        try:
            meta = files.read_meta()
        except (OSError, ValueError):
            self.log.warning("Skipping unreadable stream directory %s", directory)
            return None
        config = streamconfig.from_storable(meta["config"])
        banner.log_restore_starting(self.log, self.account, config["name"])
        store = MessageStore(config["storage"], config["first_seq"])
        files.replay(store)
        files.open(store)
        stream = Stream(host, config, meta["created"], store)
        stream.restore_ids()
        self.files[config["name"]] = files
        return stream

    def recover_consumers(self, stream: Stream) -> None:
        """Start the stream's consumers where their journals left off."""
        # Consumers come with the first stream, or with one to recover
        from fakejs.jetstream.config import consumer as consumerconfig
        from fakejs.jetstream.consumer.consumer import Consumer

        files = self.files[stream.name]
        metas = list(files.consumer_metas())
        if metas:
            banner.log_consumers_recovering(self.log, self.account, stream.name, len(metas))
        for name, meta in metas:
            config = consumerconfig.from_storable(meta["config"])
            consumer = Consumer(stream, name, config, meta["created"])
            journal = files.consumer_journal(name, consumer.state, self._call_soon)
            journal.replay()
            consumer.restore()
            journal.open()
            self.journals[(stream.name, name)] = journal
            stream.register_consumer(consumer)
            consumer.start()
            if stream.timeline:
                stream.timeline.record("consumer.restore", stream=stream.name, consumer=name)
