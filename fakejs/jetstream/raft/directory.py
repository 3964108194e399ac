"""A node's durable state in a directory: ``state`` (term and vote), ``snapshot``, ``log`` (entries), and
``applied`` (how far the member applied: a hint).

``state`` and ``snapshot`` are msgpack documents, each replaced whole through
a synced temporary file and a rename, so either the old or the new one is
read back.  ``log`` is append-only: one frame per entry, a big-endian length
and CRC-32 of the body, then the body (msgpack ``[index, term, kind, data]``).
:meth:`DirectoryStorage.write` syncs the log before it returns, so a node
acknowledges nothing a crash could take back.  A crash in the middle of an
append leaves a torn last frame (short, or failing its CRC, or out of
sequence): :meth:`DirectoryStorage.load` drops it and cuts the file there.
After a snapshot the log is rewritten with only the entries that follow it.
``applied`` is one index and its CRC-32, written over in place without a
sync (:meth:`DirectoryStorage.note_applied`); one that does not read back is
no hint (the node then waits for its leader, as without the file).
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Sequence
from typing import Any

import msgpack

from fakejs.jetstream.raft.entries import EMPTY_SNAPSHOT, UNPACK_ERRORS, Entry, EntryKind, Membership, Snapshot
from fakejs.jetstream.raft.log import RaftLog
from fakejs.jetstream.raft.outputs import SaveHardState, SaveSnapshot, Write, WriteEntries
from fakejs.jetstream.raft.storage import PersistentState

STATE = "state"
SNAPSHOT = "snapshot"
LOG = "log"
APPLIED = "applied"
FORMAT = 1
FRAME = struct.Struct(">II")
APPLIED_RECORD = struct.Struct(">QI")  # the index, and the CRC-32 of its 8 bytes


class CorruptStorage(Exception):
    """A state or snapshot file that does not read back (these are never torn: they are replaced whole)."""


class DirectoryStorage:
    """A :class:`~fakejs.jetstream.raft.storage.LogStorage` in ``directory``; ``fsync=False`` skips the syncs (a
    process crash still loses nothing written, a machine crash may)."""

    def __init__(self, directory: str, *, fsync: bool = True) -> None:
        self.directory = directory
        self.fsync = fsync
        self._fd: int | None = None
        self._applied_fd: int | None = None
        self._snapshot = EMPTY_SNAPSHOT
        self._base = 0  # the index before the log file's first entry
        self._terms: list[int] = []
        self._offsets: list[int] = []
        self._end = 0

    def _path(self, name: str) -> str:
        return os.path.join(self.directory, name)

    # -- loading -----------------------------------------------------------------

    def load(self) -> PersistentState:
        """What the directory holds; a torn last frame of the log is dropped from the file."""
        os.makedirs(self.directory, exist_ok=True)
        state = self._read_document(STATE)
        term, vote = (0, None) if state is None else _hard_state(state)
        document = self._read_document(SNAPSHOT)
        self._snapshot = EMPTY_SNAPSHOT if document is None else _snapshot(document)
        entries, offsets, good = read_frames(self._path(LOG))
        log = RaftLog(self._snapshot, entries)
        if len(log.entries) != len(entries):  # entries the snapshot covers or contradicts
            self._rewrite(list(log.entries))
        else:
            self._cut(good)
            base = entries[0].index - 1 if entries else self._snapshot.index
            self._base, self._terms, self._offsets, self._end = base, [e.term for e in entries], offsets, good
        return PersistentState(term, vote, self._snapshot, tuple(log.entries), self._read_applied())

    def _read_applied(self) -> int:
        try:
            with open(self._path(APPLIED), "rb") as handle:
                data = handle.read(APPLIED_RECORD.size)
        except FileNotFoundError:
            return 0
        if len(data) != APPLIED_RECORD.size:
            return 0
        index, crc = APPLIED_RECORD.unpack(data)
        return index if zlib.crc32(data[:8]) == crc else 0

    def _read_document(self, name: str) -> Any:
        try:
            with open(self._path(name), "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            return None
        try:
            return msgpack.unpackb(data, raw=False)
        except UNPACK_ERRORS as error:
            raise CorruptStorage(f"{self._path(name)} does not read back: {error}") from None

    def _cut(self, good: int) -> None:
        path = self._path(LOG)
        if os.path.exists(path) and os.path.getsize(path) > good:
            with open(path, "r+b") as handle:
                handle.truncate(good)
                self._sync(handle.fileno())

    # -- writing -----------------------------------------------------------------

    def write(self, writes: Sequence[Write]) -> None:
        """Apply ``writes`` in order; durable on return."""
        appended = False
        for write in writes:
            if isinstance(write, SaveHardState):
                self._replace(STATE, [FORMAT, write.term, write.vote])
            elif isinstance(write, WriteEntries):
                self._write_entries(write.first_index, write.entries)
                appended = True
            elif isinstance(write, SaveSnapshot):
                if appended:
                    self._sync(self._log_fd())
                    appended = False
                self._save_snapshot(write.snapshot)
        if appended:
            self._sync(self._log_fd())

    def note_applied(self, index: int) -> None:
        """Write ``index`` over the ``applied`` file's record (no sync: see the module docstring)."""
        if self._applied_fd is None:
            self._applied_fd = os.open(self._path(APPLIED), os.O_WRONLY | os.O_CREAT, 0o644)
        os.pwrite(self._applied_fd, APPLIED_RECORD.pack(index, zlib.crc32(index.to_bytes(8, "big"))), 0)

    def _log_fd(self) -> int:
        if self._fd is None:
            self._fd = os.open(self._path(LOG), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return self._fd

    def _write_entries(self, first_index: int, entries: Sequence[Entry]) -> None:
        fd = self._log_fd()
        keep = max(first_index - self._base - 1, 0)
        if keep < len(self._terms):
            os.ftruncate(fd, self._offsets[keep])
            self._end = self._offsets[keep]
            del self._terms[keep:], self._offsets[keep:]
        if not self._terms:
            self._base = first_index - 1
        frames = []
        for entry in entries:
            frame = _frame(entry)
            self._terms.append(entry.term)
            self._offsets.append(self._end)
            self._end += len(frame)
            frames.append(frame)
        if frames:
            os.write(fd, b"".join(frames))

    def _save_snapshot(self, snapshot: Snapshot) -> None:
        membership = snapshot.membership
        peers = None if membership is None else [sorted(membership.voters), sorted(membership.observers)]
        self._replace(SNAPSHOT, [FORMAT, snapshot.index, snapshot.term, peers, snapshot.data])
        position = snapshot.index - self._base  # of the snapshot's last entry in the file, from 1
        holds = 1 <= position <= len(self._terms) and self._terms[position - 1] == snapshot.term
        kept = self._read_entries_from(position) if holds else []
        self._snapshot = snapshot
        self._rewrite(kept)

    def _read_entries_from(self, position: int) -> list[Entry]:
        entries, _, _ = read_frames(self._path(LOG))
        return entries[position:]

    def _rewrite(self, entries: list[Entry]) -> None:
        """Replace the log file with ``entries`` (the ones after the snapshot)."""
        self._close_log()
        path, tmp = self._path(LOG), self._path(LOG + ".tmp")
        frames = [_frame(entry) for entry in entries]
        with open(tmp, "wb") as handle:
            handle.write(b"".join(frames))
            handle.flush()
            self._sync(handle.fileno())
        os.replace(tmp, path)
        self._sync_directory()
        self._base, self._terms, self._offsets, self._end = self._snapshot.index, [], [], 0
        for entry, frame in zip(entries, frames):
            self._terms.append(entry.term)
            self._offsets.append(self._end)
            self._end += len(frame)

    def _replace(self, name: str, document: list[Any]) -> None:
        tmp = self._path(name + ".tmp")
        with open(tmp, "wb") as handle:
            handle.write(msgpack.packb(document, use_bin_type=True))
            handle.flush()
            self._sync(handle.fileno())
        os.replace(tmp, self._path(name))
        self._sync_directory()

    def _sync(self, fd: int) -> None:
        if self.fsync:
            os.fsync(fd)

    def _sync_directory(self) -> None:
        if self.fsync:
            fd = os.open(self.directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def _close_log(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        """Close the log and ``applied`` files (a later write opens them again)."""
        self._close_log()
        if self._applied_fd is not None:
            os.close(self._applied_fd)
            self._applied_fd = None


def _frame(entry: Entry) -> bytes:
    body: bytes = msgpack.packb([entry.index, entry.term, int(entry.kind), entry.data], use_bin_type=True)
    return FRAME.pack(len(body), zlib.crc32(body)) + body


def read_frames(path: str) -> tuple[list[Entry], list[int], int]:
    """The whole, consecutive entries at the start of the log file at ``path``, where each starts, and the bytes
    they fill."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return [], [], 0
    entries: list[Entry] = []
    offsets: list[int] = []
    offset = 0
    while offset + FRAME.size <= len(data):
        length, crc = FRAME.unpack_from(data, offset)
        body = data[offset + FRAME.size : offset + FRAME.size + length]
        entry = _entry(body) if len(body) == length and zlib.crc32(body) == crc else None
        if entry is None or (entries and entry.index != entries[-1].index + 1):
            break
        entries.append(entry)
        offsets.append(offset)
        offset += FRAME.size + length
    return entries, offsets, offset


def _entry(body: bytes) -> Entry | None:
    try:
        index, term, kind, data = msgpack.unpackb(body, raw=False)
        return Entry(index, term, EntryKind(kind), data)
    except (*UNPACK_ERRORS, KeyError):  # a body that is not an entry although its CRC matched: the torn tail
        return None


def _hard_state(document: Any) -> tuple[int, str | None]:
    if not (isinstance(document, list) and len(document) == 3 and document[0] == FORMAT):
        raise CorruptStorage(f"unreadable term and vote: {document!r}")
    return int(document[1]), document[2]


def _snapshot(document: Any) -> Snapshot:
    if not (isinstance(document, list) and len(document) == 5 and document[0] == FORMAT):
        raise CorruptStorage("unreadable snapshot")
    _, index, term, peers, data = document
    membership = None if peers is None else Membership.of(peers[0], peers[1])
    return Snapshot(index, term, membership, data)
