"""The message store without a server: sequences, the subject index, sizes, deletes, purges, recovery."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from fakejs.jetstream.storage.consumer_state import ConsumerState
from fakejs.jetstream.storage.files import StreamFiles
from fakejs.jetstream.storage.store import MessageStore, StoredMessage, file_size, memory_size

T0 = 1_700_000_000_000_000_000


def filled(*subjects: str, storage: str = "memory", first_seq: int = 0) -> MessageStore:
    """A store holding one message per subject, one nanosecond apart."""
    store = MessageStore(storage, first_seq)
    for i, subject in enumerate(subjects):
        store.store(subject, None, f"m{i}".encode(), T0 + i)
    return store


def seqs(messages: list[StoredMessage] | None) -> list[int]:
    return [m.seq for m in messages or []]


# -- sequences ------------------------------------------------------------------------------


def test_a_fresh_store_reports_first_seq_zero_until_a_message_arrives() -> None:
    store = MessageStore()
    assert (store.first_seq, store.last_seq, store.msgs, store.bytes) == (0, 0, 0, 0)
    store.store("a", None, b"x", T0)
    assert (store.first_seq, store.last_seq, store.msgs) == (1, 1, 1)


def test_sequences_only_grow_and_a_configured_first_seq_is_the_first() -> None:
    store = filled("a", "b", "c", first_seq=10)
    assert seqs(list(store)) == [10, 11, 12]
    assert (store.first_seq, store.last_seq) == (10, 12)
    assert store.get(9) is None and store.get(13) is None
    assert store.get(11) is not None and store.get(11).data == b"m1"  # type: ignore[union-attr]


def test_an_emptied_store_reports_first_seq_after_the_last() -> None:
    store = filled("a", "b")
    store.remove(1)
    store.remove(2)
    assert (store.msgs, store.first_seq, store.last_seq) == (0, 3, 2)
    assert store.store("c", None, b"", T0).seq == 3


def test_skip_to_moves_the_next_sequence_and_counts_the_gap_as_deleted() -> None:
    store = filled("a")
    store.skip_to(5)
    assert store.last_seq == 4
    assert store.store("b", None, b"", T0).seq == 5
    assert store.deleted() == [2, 3, 4]
    assert store.num_deleted == 3
    store.skip_to(3)  # never backwards
    assert store.last_seq == 5


def test_seq_from_time_finds_the_first_message_at_or_after_a_time() -> None:
    store = filled("a", "b", "c", "d")
    store.remove(2)
    assert store.seq_from_time(T0) == 1
    assert store.seq_from_time(T0 + 1) == 3  # seq 2 is gone
    assert store.seq_from_time(T0 + 3) == 4
    assert store.seq_from_time(T0 + 100) == 5  # after everything: last + 1


# -- the subject index ------------------------------------------------------------------------


def test_the_subject_index_counts_and_finds_messages_by_subject() -> None:
    store = filled("kv.a", "kv.b", "kv.a", "other", "kv.a")
    assert store.num_subjects == 3
    assert store.count_for("kv.a") == 3
    assert store.count_for("nothing") == 0
    assert store.subject_counts("kv.*") == {"kv.a": 3, "kv.b": 1}
    assert store.subject_counts() == {"kv.a": 3, "kv.b": 1, "other": 1}
    assert list(store.seqs_for("kv.a") or []) == [1, 3, 5]
    assert sorted(store.subjects()) == ["kv.a", "kv.b", "other"]


def test_next_message_by_literal_and_wildcard_filter() -> None:
    store = filled("kv.a", "kv.b", "kv.a", "other", "kv.c")
    assert store.next_message(0).seq == 1  # type: ignore[union-attr]
    assert store.next_message(2, "kv.a").seq == 3  # type: ignore[union-attr]
    assert store.next_message(4, "kv.a") is None
    assert store.next_message(2, "kv.*").seq == 2  # type: ignore[union-attr]
    assert store.next_message(4, "kv.>").seq == 5  # type: ignore[union-attr]
    assert store.next_matching(2, ["other", "kv.c"]).seq == 4  # type: ignore[union-attr]
    assert store.next_matching(0, []).seq == 1  # type: ignore[union-attr]


def test_filtered_count_counts_from_a_sequence() -> None:
    store = filled("kv.a", "kv.b", "kv.a", "other")
    assert store.filtered_count(1, []) == 4
    assert store.filtered_count(2, []) == 3
    assert store.filtered_count(1, ["kv.a"]) == 2
    assert store.filtered_count(2, ["kv.*"]) == 2
    assert store.filtered_count(1, ["kv.a", "other"]) == 3


def test_subjects_leave_the_index_with_their_last_message() -> None:
    store = filled("a", "b", "a")
    store.remove(2)
    assert store.num_subjects == 1
    assert store.count_for("b") == 0
    assert store.next_message(0, "b") is None


# -- last per subject -------------------------------------------------------------------------


def test_last_message_per_subject() -> None:
    store = filled("kv.a", "kv.b", "kv.a", "kv.c")
    assert store.last_message("kv.a").seq == 3  # type: ignore[union-attr]
    assert store.last_message("kv.*").seq == 4  # type: ignore[union-attr]
    assert store.last_message("nope") is None
    assert store.last_message().seq == 4  # type: ignore[union-attr]


def test_last_message_without_filter_looks_only_at_the_last_sequence() -> None:
    store = filled("a", "b")
    store.remove(2)
    assert store.last_message() is None  # as nats-server: the last sequence is gone
    assert store.last_message("a").seq == 1  # type: ignore[union-attr]


def test_last_for_subjects_in_sequence_order_and_up_to_a_sequence() -> None:
    store = filled("kv.b", "kv.a", "kv.b", "x", "kv.a")
    assert seqs(store.last_for_subjects(["kv.*"])) == [3, 5]
    assert seqs(store.last_for_subjects([])) == [3, 4, 5]
    assert seqs(store.last_for_subjects(["kv.*"], up_to=3)) == [2, 3]
    assert seqs(store.last_for_subjects(["kv.a"], up_to=1)) == []


# -- sizes (the limits read them) ---------------------------------------------------------------


def test_byte_accounting_follows_nats_server_per_storage_type() -> None:
    assert memory_size("abc", None, b"12345") == 3 + 5 + 16
    assert memory_size("abc", b"NATS/1.0\r\n\r\n", b"") == 3 + 12 + 16
    assert file_size("abc", None, b"12345") == 22 + 3 + 5 + 8
    assert file_size("abc", b"hh", b"12345") == 22 + 3 + 5 + 8 + 4 + 2
    memory = filled("abc", "abc")
    assert memory.bytes == 2 * memory_size("abc", None, b"m0")
    disk = filled("abc", storage="file")
    assert disk.bytes == file_size("abc", None, b"m0")
    assert disk.message_size("abc", None, b"m0") == disk.size_of(disk.get(1))  # type: ignore[arg-type]
    memory.remove(1)
    assert memory.bytes == memory_size("abc", None, b"m1")


# -- deletes -----------------------------------------------------------------------------------


def test_deleting_leaves_interior_holes_and_moves_the_first_sequence() -> None:
    store = filled("a", "b", "c", "d")
    assert store.remove(2).seq == 2  # type: ignore[union-attr]
    assert store.remove(2) is None
    assert store.remove(99) is None
    assert (store.msgs, store.first_seq, store.num_deleted, store.deleted()) == (3, 1, 1, [2])
    store.remove(1)
    assert (store.first_seq, store.num_deleted, store.deleted()) == (3, 0, [])
    assert seqs(list(store)) == [3, 4]


def test_a_long_deleted_front_is_compacted_without_changing_sequences() -> None:
    store = filled(*["s"] * 10_000)
    for seq in range(1, 9_001):
        store.remove(seq)
    assert store.first_seq == 9_001
    assert store.get(9_001).seq == 9_001  # type: ignore[union-attr]
    assert store.get(100) is None
    assert store.store("s", None, b"", T0).seq == 10_001


# -- purge ---------------------------------------------------------------------------------------


def test_purge_everything_keeps_the_sequence() -> None:
    store = filled("a", "b", "c")
    assert seqs(store.purge()) == [1, 2, 3]
    assert (store.msgs, store.bytes, store.first_seq, store.last_seq, store.num_subjects) == (0, 0, 4, 3, 0)
    assert store.store("d", None, b"", T0).seq == 4


def test_purge_by_subject_removes_only_matching_messages() -> None:
    store = filled("kv.a", "kv.b", "kv.a", "other")
    assert seqs(store.purge("kv.a")) == [1, 3]
    assert seqs(list(store)) == [2, 4]
    assert seqs(store.purge("kv.*")) == [2]
    assert seqs(list(store)) == [4]


def test_purge_by_subject_keeping_the_newest() -> None:
    store = filled("kv.a", "kv.a", "kv.b", "kv.a")
    assert seqs(store.purge("kv.a", keep=1)) == [1, 2]
    assert seqs(list(store)) == [3, 4]
    assert store.purge("kv.a", keep=5) == []


def test_purge_below_a_sequence_compacts() -> None:
    store = filled("a", "b", "c", "d")
    assert seqs(store.purge(seq=3)) == [1, 2]
    assert store.first_seq == 3
    assert store.purge(seq=1) == []  # seq 1: nothing below it


def test_purge_to_a_sequence_past_the_end_sets_the_next_sequence() -> None:
    store = filled("a", "b")
    assert seqs(store.purge(seq=10)) == [1, 2]
    assert (store.first_seq, store.last_seq) == (10, 9)
    assert store.store("c", None, b"", T0).seq == 10


def test_purge_by_subject_below_a_sequence() -> None:
    store = filled("a", "b", "a", "a")
    assert seqs(store.purge("a", seq=4)) == [1, 3]
    assert seqs(list(store)) == [2, 4]


def test_purge_keep_without_filter_keeps_the_newest_messages() -> None:
    store = filled("a", "b", "c", "d")
    assert seqs(store.purge(keep=2)) == [1, 2]
    assert seqs(list(store)) == [3, 4]


# -- the journal and recovery -----------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.records: list[tuple[object, ...]] = []

    def stored(self, msg: StoredMessage) -> None:
        self.records.append(("stored", msg.seq))

    def removed(self, seq: int) -> None:
        self.records.append(("removed", seq))

    def purged(self, filter_subject: str, seq: int, keep: int) -> None:
        self.records.append(("purged", filter_subject, seq, keep))

    def skipped(self, next_seq: int) -> None:
        self.records.append(("skipped", next_seq))


def test_every_change_is_told_to_the_journal() -> None:
    store = MessageStore()
    journal = Recorder()
    store.journal = journal
    store.store("a", None, b"", T0)
    store.store("b", None, b"", T0)
    store.remove(1)
    store.remove(1)  # nothing removed: nothing recorded
    store.purge("b", 0, 0)
    store.skip_to(10)
    assert journal.records == [("stored", 1), ("stored", 2), ("removed", 1), ("purged", "b", 0, 0), ("skipped", 10)]


def test_a_file_backed_store_replays_to_the_same_state(tmp_path: os.PathLike[str]) -> None:
    directory = os.path.join(tmp_path, "S")
    store = MessageStore("file")
    files = StreamFiles(directory)
    files.open(store)
    for i, subject in enumerate(["kv.a", "kv.b", "kv.a", "kv.c", "kv.a"]):
        store.store(
            subject, b"NATS/1.0\r\nk: v\r\n\r\n" if i == 1 else None, b"d%d" % i, T0 + i, ttl=5 if i == 3 else 0
        )
    store.remove(2)
    store.purge("kv.a", 0, 1)
    store.skip_to(8)
    files.close()

    again = MessageStore("file")
    StreamFiles(directory).replay(again)
    assert [(m.seq, m.subject, m.data, m.ts, m.ttl) for m in again] == [
        (m.seq, m.subject, m.data, m.ts, m.ttl) for m in store
    ]
    assert (again.first_seq, again.last_seq, again.msgs, again.bytes) == (
        store.first_seq,
        store.last_seq,
        store.msgs,
        store.bytes,
    )
    assert again.deleted() == store.deleted()


def test_a_torn_last_record_is_dropped_on_replay(tmp_path: os.PathLike[str]) -> None:
    directory = os.path.join(tmp_path, "S")
    store = MessageStore("file")
    files = StreamFiles(directory)
    files.open(store)
    store.store("a", None, b"kept", T0)
    store.store("a", None, b"torn" * 10, T0)
    files.close()
    with open(files.log_path, "r+b") as handle:
        handle.truncate(os.path.getsize(files.log_path) - 3)

    again = MessageStore("file")
    StreamFiles(directory).replay(again)
    assert [m.data for m in again] == [b"kept"]


def test_a_consumer_journal_writes_a_turns_records_once_and_everything_at_close(tmp_path: os.PathLike[str]) -> None:
    directory = os.path.join(tmp_path, "S")
    turn_ends: list[Callable[[], None]] = []
    state = ConsumerState("explicit", -1)
    journal = StreamFiles(directory).consumer_journal("C", state, turn_ends.append)
    journal.open()
    written = os.path.getsize(journal.path)
    state.update_delivered(1, 1, 1, T0)
    state.update_delivered(2, 2, 1, T0 + 1)
    assert os.path.getsize(journal.path) == written  # gathered until the loop's turn is over
    assert len(turn_ends) == 1
    turn_ends.pop()()
    written = os.path.getsize(journal.path)
    state.update_acks(1, 1)
    journal.close()  # a clean stop writes what the turn gathered
    assert os.path.getsize(journal.path) > written

    again = ConsumerState("explicit", -1)
    StreamFiles(directory).consumer_journal("C", again).replay()
    assert (again.delivered, again.ack_floor, again.pending) == ([2, 2], [1, 1], {2: [2, T0 + 1]})


@pytest.mark.parametrize("storage", ["memory", "file"])
def test_restoring_a_message_does_not_write_the_journal(storage: str) -> None:
    store = MessageStore(storage)
    journal = Recorder()
    store.journal = journal
    store.restore(StoredMessage(3, "a", None, b"x", T0))
    store.restore_removed(3)
    store.restore_skip(9)
    assert journal.records == []
    assert (store.last_seq, store.msgs, store.deleted()) == (8, 0, [])
