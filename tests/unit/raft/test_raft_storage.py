"""The log stores: what is written loads back, in memory and in a directory, and the directory survives a
crash in the middle of a write (a torn last frame is dropped) or of a compaction."""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from fakejs.jetstream.raft import (
    DirectoryStorage,
    Entry,
    EntryKind,
    LogStorage,
    Membership,
    MemoryStorage,
    SaveHardState,
    SaveSnapshot,
    Snapshot,
    WriteEntries,
)
from fakejs.jetstream.raft.directory import APPLIED, LOG, SNAPSHOT, CorruptStorage


def entries(first: int, last: int, term: int = 1) -> tuple[Entry, ...]:
    return tuple(Entry(index, term, EntryKind.NORMAL, b"v%d" % index) for index in range(first, last + 1))


@pytest.fixture(params=["memory", "directory"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], LogStorage]:
    """A store, and for a directory a fresh object on the same directory at each call (a restart)."""
    if request.param == "memory":
        store = MemoryStorage()
        return lambda: store
    return lambda: DirectoryStorage(str(tmp_path / "group"))


def test_an_empty_store_loads_empty(make_store: Callable[[], LogStorage]) -> None:
    state = make_store().load()
    assert (state.term, state.vote, state.snapshot.index, state.entries) == (0, None, 0, ())


def test_writes_load_back(make_store: Callable[[], LogStorage]) -> None:
    store = make_store()
    store.load()
    store.write([SaveHardState(3, "b"), WriteEntries(1, entries(1, 5))])
    store.write([WriteEntries(4, entries(4, 6, term=3))])  # replaces 4 and 5, adds 6
    state = make_store().load()
    assert (state.term, state.vote) == (3, "b")
    assert state.entries == entries(1, 3) + entries(4, 6, term=3)


def test_the_applied_index_loads_back(make_store: Callable[[], LogStorage]) -> None:
    store = make_store()
    store.load()
    store.write([WriteEntries(1, entries(1, 5))])
    store.note_applied(2)
    store.note_applied(4)
    assert make_store().load().applied == 4


@pytest.mark.parametrize("damage", ["flipped", "short"])
def test_an_applied_record_that_does_not_read_back_is_no_hint(tmp_path: Path, damage: str) -> None:
    store = directory_with(tmp_path, 3)
    store.note_applied(3)
    store.close()
    record = bytearray((tmp_path / APPLIED).read_bytes())
    if damage == "flipped":
        record[7] ^= 0xFF
    else:
        del record[-1]
    (tmp_path / APPLIED).write_bytes(bytes(record))
    state = DirectoryStorage(str(tmp_path)).load()
    assert (state.applied, state.entries) == (0, entries(1, 3, term=2))


def test_a_snapshot_drops_the_entries_it_covers(make_store: Callable[[], LogStorage]) -> None:
    store = make_store()
    store.load()
    store.write([WriteEntries(1, entries(1, 6))])
    snapshot = Snapshot(4, 1, Membership.of(["a", "b"], ["c"]), b"state")
    store.write([SaveSnapshot(snapshot), WriteEntries(7, entries(7, 7))])
    state = make_store().load()
    assert state.snapshot == snapshot
    assert state.entries == entries(5, 7)


def test_a_snapshot_that_contradicts_the_log_replaces_it(make_store: Callable[[], LogStorage]) -> None:
    store = make_store()
    store.load()
    store.write([WriteEntries(1, entries(1, 6))])
    store.write([SaveSnapshot(Snapshot(4, 2, None, b"state"))])  # entry 4 here is of term 1
    state = make_store().load()
    assert state.snapshot.index == 4
    assert state.entries == ()
    store = make_store()
    store.load()
    store.write([WriteEntries(5, entries(5, 5, term=2))])
    assert make_store().load().entries == entries(5, 5, term=2)


def test_a_snapshot_past_the_log_replaces_it(make_store: Callable[[], LogStorage]) -> None:
    store = make_store()
    store.load()
    store.write([WriteEntries(1, entries(1, 2))])
    store.write([SaveSnapshot(Snapshot(10, 1, None, b"state"))])
    state = make_store().load()
    assert (state.snapshot.index, state.entries) == (10, ())


# -- the directory across crashes -------------------------------------------------------------


def directory_with(path: Path, count: int) -> DirectoryStorage:
    store = DirectoryStorage(str(path))
    store.load()
    store.write([SaveHardState(2, "a"), WriteEntries(1, entries(1, count, term=2))])
    store.close()
    return store


@pytest.mark.parametrize("cut", [1, 5, 8, 9, 12])
def test_a_torn_last_frame_is_dropped_at_load(tmp_path: Path, cut: int) -> None:
    directory_with(tmp_path, 3)
    log = tmp_path / LOG
    size = log.stat().st_size
    with open(log, "r+b") as handle:
        handle.truncate(size - cut)  # the last frame is 8 bytes of header and a short body
    state = DirectoryStorage(str(tmp_path)).load()
    assert state.entries == entries(1, 2, term=2)
    assert log.stat().st_size < size - cut or cut >= size
    store = DirectoryStorage(str(tmp_path))
    store.load()
    store.write([WriteEntries(3, entries(3, 4, term=2))])  # appends after the cut land where they belong
    assert DirectoryStorage(str(tmp_path)).load().entries == entries(1, 4, term=2)


def test_a_last_frame_that_fails_its_checksum_is_dropped(tmp_path: Path) -> None:
    directory_with(tmp_path, 3)
    log = tmp_path / LOG
    data = bytearray(log.read_bytes())
    data[-1] ^= 0xFF
    log.write_bytes(bytes(data))
    assert DirectoryStorage(str(tmp_path)).load().entries == entries(1, 2, term=2)


def test_garbage_after_the_last_frame_is_dropped(tmp_path: Path) -> None:
    directory_with(tmp_path, 2)
    log = tmp_path / LOG
    with open(log, "ab") as handle:
        handle.write(struct.pack(">II", 1 << 30, 0) + b"\x00" * 5)
    assert DirectoryStorage(str(tmp_path)).load().entries == entries(1, 2, term=2)
    assert DirectoryStorage(str(tmp_path)).load().entries == entries(1, 2, term=2)


def test_a_crash_between_snapshot_and_log_rewrite_loads_consistently(tmp_path: Path) -> None:
    directory_with(tmp_path, 6)
    old_log = (tmp_path / LOG).read_bytes()
    store = DirectoryStorage(str(tmp_path))
    store.load()
    store.write([SaveSnapshot(Snapshot(4, 2, None, b"state"))])
    store.close()
    (tmp_path / LOG).write_bytes(old_log)  # as if the process died before the rewrite
    state = DirectoryStorage(str(tmp_path)).load()
    assert (state.snapshot.index, state.entries) == (4, entries(5, 6, term=2))
    assert DirectoryStorage(str(tmp_path)).load().entries == entries(5, 6, term=2)


def test_a_damaged_snapshot_file_is_reported(tmp_path: Path) -> None:
    directory_with(tmp_path, 1)
    (tmp_path / SNAPSHOT).write_bytes(b"\xc1")
    with pytest.raises(CorruptStorage):
        DirectoryStorage(str(tmp_path)).load()


def test_temporary_files_do_not_outlive_a_write(tmp_path: Path) -> None:
    store = directory_with(tmp_path, 3)
    store.write([SaveSnapshot(Snapshot(2, 2, None, b"s"))])
    store.close()
    assert sorted(os.listdir(tmp_path)) == ["log", "snapshot", "state"]
