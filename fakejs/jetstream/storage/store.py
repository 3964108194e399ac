"""The message store of one stream: messages by sequence and by subject.

Messages live in a list indexed by ``seq - base`` (sequences only grow, so
appends are O(1) and lookups by sequence are direct).  The subject index
(:mod:`fakejs.jetstream.storage.subject_index`: per-subject sorted lists of
sequences under a token trie) answers last/next-by-subject, per-subject
limits, counts and filtered purges without looking at subjects a filter
cannot match, and :class:`~fakejs.jetstream.storage.cursor.MatchCursor`
walks a wildcard filter's messages in amortised O(log n) each.  Byte
accounting follows nats-server (see :mod:`fakejs.jetstream.storage.message`).

Persistence is not done here: a journal (see :mod:`fakejs.jetstream.storage.files`)
is told about every change.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from sortedcontainers import SortedList

from fakejs.core.subjects import has_wildcard
from fakejs.gocompat import gotime
from fakejs.jetstream.storage.cursor import MatchCursor
from fakejs.jetstream.storage.message import StoredMessage, file_size, memory_size
from fakejs.jetstream.storage.subject_index import SubjectIndex

__all__ = ["Journal", "MatchCursor", "MessageStore", "StoredMessage", "file_size", "memory_size"]

# Wildcard look-ups by callers without a cursor of their own reuse one per filter set (the newest few).
_SHARED_CURSORS = 8


class Journal(Protocol):
    """Told about every change, to make it durable."""

    def stored(self, msg: StoredMessage) -> None: ...

    def removed(self, seq: int) -> None: ...

    def purged(self, filter_subject: str, seq: int, keep: int) -> None: ...

    def skipped(self, next_seq: int) -> None: ...


class MessageStore:
    """One stream's messages by sequence and subject, with nats-server's counts and byte sizes
    (its ``memStore``/``fileStore`` as a stream sees them); a :class:`Journal` makes changes durable."""

    def __init__(self, storage: str = "memory", first_seq: int = 0) -> None:
        """``first_seq`` is the stream config's (0: not set)."""
        # A stream that never held a message and has no configured first
        # sequence reports first_seq 0 (then last + 1 once emptied).
        self._pristine = first_seq == 0
        first_seq = max(first_seq, 1)
        self.storage = storage
        self._size = memory_size if storage == "memory" else file_size
        self._msgs: list[StoredMessage | None] = []
        self._base = first_seq  # sequence of _msgs[0]
        self._head = 0  # index of the first slot that may hold a message
        self.last_seq = first_seq - 1
        self.last_ts = 0
        self.msgs = 0
        self.bytes = 0
        self.index = SubjectIndex()
        self._cursors: dict[tuple[str, ...], MatchCursor] = {}
        self.journal: Journal | None = None

    # -- state -----------------------------------------------------------------

    def size_of(self, msg: StoredMessage) -> int:
        return self._size(msg.subject, msg.hdr, msg.data)

    def message_size(self, subject: str, hdr: bytes | None, data: bytes) -> int:
        return self._size(subject, hdr, data)

    @property
    def first_seq(self) -> int:
        first = self.first()
        if first is not None:
            return first.seq
        return 0 if self._pristine else self.last_seq + 1

    @property
    def first_ts(self) -> int:
        first = self.first()
        return first.ts if first is not None else 0

    def first(self) -> StoredMessage | None:
        msgs = self._msgs
        i = self._head
        n = len(msgs)
        while i < n and msgs[i] is None:
            i += 1
        self._head = i
        return msgs[i] if i < n else None

    @property
    def num_deleted(self) -> int:
        if self.msgs == 0:
            return 0
        return self.last_seq - self.first_seq + 1 - self.msgs

    def deleted(self) -> list[int]:
        """Interior sequences with no message (between first and last)."""
        first = self.first()
        if first is None:
            return []
        out = []
        for i in range(self._head, len(self._msgs)):
            if self._msgs[i] is None:
                out.append(self._base + i)
        # Sequences used after the last stored message (interest skips) count too.
        out.extend(range(self._base + len(self._msgs), self.last_seq + 1))
        return out

    @property
    def num_subjects(self) -> int:
        return len(self.index)

    def subject_counts(self, filter_subject: str = ">") -> dict[str, int]:
        """Messages per subject matching the filter: O(walk + matching subjects)."""
        return self.index.counts(filter_subject)

    def subjects(self) -> Iterator[str]:
        return iter(self.index)

    def count_for(self, subject: str) -> int:
        return self.index.count(subject)

    # -- reads -----------------------------------------------------------------

    def get(self, seq: int) -> StoredMessage | None:
        i = seq - self._base
        if 0 <= i < len(self._msgs):
            return self._msgs[i]
        return None

    def next_message(self, start: int, filter_subject: str = "") -> StoredMessage | None:
        """The first message with ``seq >= start`` whose subject matches the filter.

        No filter: a step over deleted slots.  A literal subject: O(log m).
        A wildcard: a shared :class:`MatchCursor` (amortised O(log n) when
        asked with a growing ``start``).
        """
        if not filter_subject or filter_subject == ">":
            i = max(start - self._base, self._head)
            msgs = self._msgs
            n = len(msgs)
            while i < n:
                msg = msgs[i]
                if msg is not None:
                    return msg
                i += 1
            return None
        msg = self.get(start)
        if msg is not None and msg.subject == filter_subject:
            return msg  # the message at ``start`` is on the filter's own subject: no search
        if not has_wildcard(filter_subject):
            seqs = self.index.get(filter_subject)
            if not seqs:
                return None
            k = seqs.bisect_left(start)
            return self.get(seqs[k]) if k < len(seqs) else None
        return self._shared_cursor([filter_subject]).next(start)

    def next_matching(self, start: int, filters: list[str]) -> StoredMessage | None:
        """Like :meth:`next_message` for several filters (any may match)."""
        if not filters:
            return self.next_message(start)
        if len(filters) == 1:
            return self.next_message(start, filters[0])
        if ">" in filters:
            return self.next_message(start)
        return self._shared_cursor(filters).next(start)

    def cursor(self, filters: list[str]) -> MatchCursor:
        """A cursor of one's own for :meth:`next_matching` (a consumer keeps one across deliveries)."""
        return MatchCursor(self, filters)

    def _shared_cursor(self, filters: list[str]) -> MatchCursor:
        key = tuple(filters)
        cursors = self._cursors
        found = cursors.pop(key, None)
        if found is None:
            found = MatchCursor(self, filters)
            if len(cursors) >= _SHARED_CURSORS:
                del cursors[next(iter(cursors))]
        cursors[key] = found  # the newest last
        return found

    def last_message(self, filter_subject: str = "") -> StoredMessage | None:
        """The newest message whose subject matches: O(walk + matching subjects).

        Without a filter (or with ``>``) nats-server looks only at the last
        sequence: if that message was deleted, there is no "last message".
        """
        if not filter_subject or filter_subject == ">":
            return self.get(self.last_seq)
        seq = self.index.last_of(filter_subject)
        if seq is None:
            return None
        i = seq - self._base  # get(seq), without the call
        msgs = self._msgs
        return msgs[i] if 0 <= i < len(msgs) else None

    def last_for_subjects(self, filters: list[str], up_to: int | None = None) -> list[StoredMessage]:
        """The last message of every subject matching any filter, in sequence order.

        O(walk + s log s) for s matching subjects.
        """
        out = []
        for seq in self.index.last_per_subject(filters, up_to):
            msg = self.get(seq)
            if msg is not None:
                out.append(msg)
        return out

    def filtered_count(self, start: int, filters: list[str]) -> int:
        """Messages with ``seq >= start`` matching any filter (all when none): O(walk + s log m); O(1) past the end."""
        if start > self.last_seq:
            return 0
        if not filters or ">" in filters:
            if start <= self.first_seq:
                return self.msgs
            return sum(1 for i in range(start - self._base, len(self._msgs)) if self._msgs[i] is not None)
        if start <= self.first_seq:
            if len(filters) == 1:
                return self.index.total(filters[0])
            return sum(len(seqs) for seqs in self.index.match_any(filters).values())
        return self.index.count_from(filters, start)

    def seq_from_time(self, ts: int) -> int:
        """``GetSeqFromTime``: the first sequence stored at or after ``ts`` (else last + 1).

        Stored times never decrease with the sequence, so this is a binary
        search (holes left by deletes are stepped over).  Times past 2262
        wrap around as Go's ``UnixNano`` does.
        """
        ts = gotime.unix_nano(ts)
        msgs = self._msgs
        lo, hi = self._head, len(msgs)
        while lo < hi:
            mid = (lo + hi) // 2
            probe = mid
            while probe < hi and msgs[probe] is None:
                probe += 1
            found = msgs[probe] if probe < hi else None
            if found is None or found.ts >= ts:
                hi = mid
            else:
                lo = probe + 1
        for i in range(lo, len(msgs)):
            msg = msgs[i]
            if msg is not None:
                return msg.seq
        return self.last_seq + 1

    def seqs_for(self, subject: str) -> SortedList | None:
        return self.index.get(subject)

    def __iter__(self) -> Iterator[StoredMessage]:
        for i in range(self._head, len(self._msgs)):
            msg = self._msgs[i]
            if msg is not None:
                yield msg

    # -- writes ----------------------------------------------------------------

    def store(self, subject: str, hdr: bytes | None, data: bytes, ts: int, ttl: int = 0) -> StoredMessage:
        seq = self.last_seq + 1
        msg = StoredMessage(seq, subject, hdr, data, ts, ttl)
        self._append(msg)
        if self.journal is not None:
            self.journal.stored(msg)
        return msg

    def _append(self, msg: StoredMessage) -> None:
        """Place a message at its sequence (gaps before it become deleted)."""
        i = msg.seq - self._base
        msgs = self._msgs
        if i < len(msgs):
            raise ValueError(f"sequence {msg.seq} is not after {self.last_seq}")
        if i > len(msgs):
            msgs.extend([None] * (i - len(msgs)))
        # One string object per subject, however many messages share it: the index's own.
        msg.subject = self.index.add(msg.subject, msg.seq)
        msgs.append(msg)
        self._pristine = False
        self.last_seq = msg.seq
        self.last_ts = msg.ts
        self.msgs += 1
        self.bytes += self._size(msg.subject, msg.hdr, msg.data)

    def remove(self, seq: int) -> StoredMessage | None:
        msg = self._take(seq)
        if msg is not None and self.journal is not None:
            self.journal.removed(seq)
        return msg

    def _take(self, seq: int) -> StoredMessage | None:
        i = seq - self._base
        if not 0 <= i < len(self._msgs):
            return None
        msg = self._msgs[i]
        if msg is None:
            return None
        self._msgs[i] = None
        self.msgs -= 1
        self.bytes -= self._size(msg.subject, msg.hdr, msg.data)
        self.index.discard(msg.subject, seq)
        if i == self._head:
            self.first()
        if self._head > 4096:  # _compact()'s first test, without the call
            self._compact()
        return msg

    def _compact(self) -> None:
        """Drop the empty front of the list once it is large."""
        head = self._head
        if head > 4096 and head * 2 > len(self._msgs):
            del self._msgs[:head]
            self._base += head
            self._head = 0

    def skip_to(self, next_seq: int) -> None:
        """Make ``next_seq`` the next sequence (an empty stream's first_seq, or a purge to a seq)."""
        if next_seq - 1 > self.last_seq:
            self._pristine = False
            if self.msgs == 0:
                self._msgs = []
                self._base = next_seq
                self._head = 0
            self.last_seq = next_seq - 1
            if self.journal is not None:
                self.journal.skipped(next_seq)

    def purge(self, filter_subject: str = "", seq: int = 0, keep: int = 0) -> list[StoredMessage]:
        """nats-server's purge options: everything, by subject filter, below a sequence, or keep N."""
        removed = self._purge(filter_subject, seq, keep)
        if self.journal is not None:
            self.journal.purged(filter_subject, seq, keep)
        return removed

    def _purge(self, filter_subject: str, seq: int, keep: int) -> list[StoredMessage]:
        """``PurgeEx``: ``seq`` purges below it (1: nothing), ``keep`` leaves the newest N.

        Without a filter, a ``seq`` compacts the stream (``keep`` is then
        ignored, as in nats-server) and a bare purge empties it; with a
        filter, or ``keep`` alone, matching messages go oldest first until
        only ``keep`` of all matches remain.
        """
        if seq == 1:
            return []
        whole = not filter_subject or filter_subject == ">"
        if whole and not keep and not seq:
            removed = self._remove_all([m.seq for m in self])
            self._reset_to(self.last_seq + 1)
            return removed
        if whole and seq > 1:
            return self._compact_to(seq)
        candidates = [m.seq for m in self] if whole else self.index.seqs_matching(filter_subject)
        limit = len(candidates)
        if keep:
            if keep >= len(candidates):
                return []
            limit = len(candidates) - keep
        if seq:
            candidates = [s for s in candidates if s < seq]
        return self._remove_all(candidates[:limit])

    def _compact_to(self, seq: int) -> list[StoredMessage]:
        """``Compact``: drop everything below ``seq``; past the end, the next message gets ``seq``."""
        if seq <= self.last_seq:
            return self._remove_all([m.seq for m in self if m.seq < seq])
        removed = self._remove_all([m.seq for m in self])
        self._reset_to(seq)
        return removed

    def _remove_all(self, seqs: list[int]) -> list[StoredMessage]:
        removed = []
        for victim in seqs:
            msg = self._take(victim)
            if msg is not None:
                removed.append(msg)
        return removed

    def _reset_to(self, next_seq: int) -> None:
        self._pristine = False
        self._msgs = []
        self._base = next_seq
        self._head = 0
        self.last_seq = max(self.last_seq, next_seq - 1)

    # -- recovery ----------------------------------------------------------------

    def restore(self, msg: StoredMessage) -> None:
        """Put back a message read from disk (no journal record)."""
        self._append(msg)

    def restore_removed(self, seq: int) -> None:
        self._take(seq)

    def restore_purge(self, filter_subject: str, seq: int, keep: int) -> None:
        self._purge(filter_subject, seq, keep)

    def restore_skip(self, next_seq: int) -> None:
        journal, self.journal = self.journal, None
        try:
            self.skip_to(next_seq)
        finally:
            self.journal = journal
