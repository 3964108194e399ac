"""File persistence for streams (and their consumers): msgpack, append-only.

Each stream has a directory ``<store_dir>/fakejs/streams/<name>/`` with

* ``meta.json`` -- the config and creation time, replaced atomically;
* ``msgs.log`` -- one msgpack record per change: a stored message, a
  removal, a purge, a sequence skip.

A record is written with ``os.write`` on an ``O_APPEND`` descriptor before
the publisher is acknowledged, so a process killed right after a PubAck
loses nothing (the kernel holds the bytes).  On start the log is replayed
into a :class:`~fakejs.jetstream.storage.store.MessageStore`; a torn last record
(the process died mid-write, before acknowledging it) is dropped.  When
removals dominate, the log is rewritten with only the live messages.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import msgpack

from fakejs.jetstream.storage.consumer_state import ConsumerJournal, ConsumerState
from fakejs.jetstream.storage.journal import read_log, truncate_torn_tail
from fakejs.jetstream.storage.store import MessageStore, StoredMessage

META = "meta.json"
LOG = "msgs.log"
FORMAT = 1


def _write_atomic(path: str, data: bytes, *, sync: bool = True) -> None:
    """Replace ``path`` with ``data`` in one step; ``sync`` also waits for the disk (a process crash loses neither way)."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as handle:
        handle.write(data)
        if sync:
            handle.flush()
            os.fsync(handle.fileno())
    os.replace(tmp, path)


class StreamFiles:
    """The on-disk state of one stream; also the store's journal."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.log_path = os.path.join(directory, LOG)
        self._fd: int | None = None
        self._records = 0
        self._store: MessageStore | None = None
        self._packer = msgpack.Packer(use_bin_type=True)

    # -- meta ----------------------------------------------------------------

    def write_meta(self, config: Mapping[str, Any], created_ns: int) -> None:
        """Store the stream's config (a JSON document) and creation time."""
        os.makedirs(self.directory, exist_ok=True)
        meta = {"format": FORMAT, "config": config, "created": created_ns}
        _write_atomic(os.path.join(self.directory, META), json.dumps(meta).encode())

    def read_meta(self) -> dict[str, Any]:
        with open(os.path.join(self.directory, META), "rb") as handle:
            meta: dict[str, Any] = json.loads(handle.read())
        return meta

    # -- consumers ----------------------------------------------------------------

    def _consumer_dir(self, name: str) -> str:
        return os.path.join(self.directory, "consumers", name)

    def consumer_journal(
        self, name: str, state: ConsumerState, call_soon: Callable[[Callable[[], None]], object] | None = None
    ) -> ConsumerJournal:
        """The journal of consumer ``name``'s state (``call_soon``: see :class:`ConsumerJournal`)."""
        return ConsumerJournal(os.path.join(self._consumer_dir(name), "state.log"), state, call_soon)

    def write_consumer_meta(self, name: str, config: Mapping[str, Any], created_ns: int) -> None:
        """Store a consumer's config, already in its storable JSON form, and creation time.

        Not synced to disk, as nats-server writes it without ``sync_always``: a
        consumer create (a KV watch makes one each time) answers without waiting for the disk.
        """
        directory = self._consumer_dir(name)
        os.makedirs(directory, exist_ok=True)
        meta = {"config": config, "created": created_ns}
        _write_atomic(os.path.join(directory, META), json.dumps(meta).encode(), sync=False)

    def consumer_metas(self) -> Iterator[tuple[str, dict[str, Any]]]:
        root = os.path.join(self.directory, "consumers")
        if not os.path.isdir(root):
            return
        for name in sorted(os.listdir(root)):
            try:
                with open(os.path.join(root, name, META), "rb") as handle:
                    yield name, json.loads(handle.read())
            except (OSError, ValueError):
                continue

    def remove_consumer(self, name: str) -> None:
        shutil.rmtree(self._consumer_dir(name), ignore_errors=True)

    # -- journal ---------------------------------------------------------------

    def open(self, store: MessageStore) -> None:
        """Attach to ``store`` as its journal and open the log for appending."""
        os.makedirs(self.directory, exist_ok=True)
        self._store = store
        self._fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        store.journal = self

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._store is not None:
            self._store.journal = None

    def _append(self, record: list[Any]) -> None:
        if self._fd is None:
            return
        os.write(self._fd, self._packer.pack(record))
        self._records += 1

    def stored(self, msg: StoredMessage) -> None:
        self._append(["m", msg.seq, msg.subject, msg.hdr, msg.data, msg.ts, msg.ttl])

    def removed(self, seq: int) -> None:
        self._append(["d", seq])
        self._maybe_compact()

    def purged(self, filter_subject: str, seq: int, keep: int) -> None:
        self._append(["p", filter_subject, seq, keep])
        self._maybe_compact()

    def skipped(self, next_seq: int) -> None:
        self._append(["s", next_seq])

    # -- recovery and compaction ---------------------------------------------------

    def replay(self, store: MessageStore) -> None:
        """Rebuild ``store`` from the log (before :meth:`open`), dropping a torn last record."""
        records, good, size = read_log(self.log_path)
        for record in records:
            kind = record[0]
            if kind == "m":
                _, seq, subject, hdr, data, ts, ttl = record
                if seq > store.last_seq:
                    store.restore(StoredMessage(seq, subject, hdr, data, ts, ttl))
            elif kind == "d":
                store.restore_removed(record[1])
            elif kind == "p":
                store.restore_purge(record[1], record[2], record[3])
            elif kind == "s":
                store.restore_skip(record[1])
        self._records = len(records)
        truncate_torn_tail(self.log_path, good, size)

    def _maybe_compact(self) -> None:
        store = self._store
        if store is None or self._records < 10_000 or self._records < 2 * store.msgs + 10_000:
            return
        self.compact()

    def compact(self) -> None:
        """Rewrite the log with only the live messages."""
        store = self._store
        if store is None:
            return
        tmp = self.log_path + ".tmp"
        packer = msgpack.Packer(use_bin_type=True)
        count = 0
        with open(tmp, "wb") as handle:
            handle.write(packer.pack(["s", store.first_seq]))
            count += 1
            for msg in store:
                handle.write(packer.pack(["m", msg.seq, msg.subject, msg.hdr, msg.data, msg.ts, msg.ttl]))
                count += 1
            handle.write(packer.pack(["s", store.last_seq + 1]))
            count += 1
            handle.flush()
            os.fsync(handle.fileno())
        if self._fd is not None:
            os.close(self._fd)
        os.replace(tmp, self.log_path)
        self._fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND)
        self._records = count

    def destroy(self) -> None:
        self.close()
        shutil.rmtree(self.directory, ignore_errors=True)
