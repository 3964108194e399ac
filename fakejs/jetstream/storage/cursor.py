"""Walking a stream in sequence order through the messages a wildcard filter matches.

A consumer asks again and again for "the first message at or after ``start``
matching my filters", with ``start`` moving forward.  Answering each time by
looking at every matching subject costs O(subjects) per delivered message;
a :class:`MatchCursor` answers in amortised O(log s + log m) (s: matching
subjects, m: messages of one subject) and stays right while the stream
changes underneath it:

* ``heap`` holds one ``(seq, subject)`` entry per *live* subject: a
  sequence that is at most the subject's first message at or after
  ``pos`` (it may be stale-low after removals, never too high);
* every matching subject with a message in ``[pos, horizon]`` is live.

Moving forward only weakens the second rule.  A removed or passed-over
entry is fixed when it reaches the top of the heap (one bisect of that
subject's list).  Messages stored after ``horizon`` may be on subjects the
heap has never seen (new subjects only ever get sequences above the last
one): when an answer could lie past ``horizon``, the messages between are
scanned once, their unseen matching subjects joining the heap, and
``horizon`` moves up — each stored message is scanned at most once per
cursor.  Going back a little (a delivery put back) is a short scan; going
back further rebuilds the heap (O(s log m)).

Building costs O(t + visited + s log m) (see
:class:`~fakejs.jetstream.storage.subject_index.SubjectIndex`), so a cursor
starts without a heap, as nats-server does when a filter covers most of a
stream: it steps through the messages from ``start``, testing each subject
(once per subject, then from a dict) — O(1) per delivered message while
most messages match.  The first time a step meets ``dense_budget``
messages it cannot use, the cursor builds its heap and stays with it.
"""

from __future__ import annotations

import heapq
from typing import Protocol

from fakejs.core.subjects import has_wildcard
from fakejs.jetstream.storage.message import StoredMessage
from fakejs.jetstream.storage.subject_index import SubjectIndex, filter_matcher

# How far back a cursor may be asked before it rebuilds rather than scans.
BACK_SCAN = 64
# Messages a scan from ``start`` may pass over before the cursor builds its heap.
DENSE_BUDGET = 64


class CursorStore(Protocol):
    """What a cursor reads from its store."""

    @property
    def last_seq(self) -> int: ...

    @property
    def index(self) -> SubjectIndex: ...

    def get(self, seq: int) -> StoredMessage | None: ...

    def next_matching(self, start: int, filters: list[str]) -> StoredMessage | None: ...


class MatchCursor:
    """The next message matching a fixed set of filters, for a ``start`` that mostly moves forward."""

    __slots__ = (
        "_budget",
        "_filter_list",
        "_heap",
        "_horizon",
        "_live",
        "_matched",
        "_matcher",
        "_pos",
        "_simple",
        "_source",
        "filters",
        "store",
    )

    def __init__(self, store: CursorStore, filters: list[str], dense_budget: int = DENSE_BUDGET) -> None:
        self.store = store
        self.filters = tuple(filters)
        self._filter_list = list(filters)
        self._source = filters  # the list last asked with (see serves)
        self._budget = dense_budget  # 0: the heap is built (or to be built)
        self._heap: list[tuple[int, str]] = []
        self._live: set[str] = set()
        self._matched: dict[str, bool] = {}  # scanned subjects: whether they match
        self._matcher = filter_matcher(filters)
        self._pos = 0
        self._horizon = -1  # not built
        # No filter, ``>`` or one literal subject: the store answers directly (a step or a bisect).
        self._simple = not filters or ">" in filters or (len(filters) == 1 and not has_wildcard(filters[0]))

    def serves(self, store: CursorStore, filters: list[str]) -> bool:
        """Whether this cursor answers for ``store`` and ``filters`` (the same list, or an equal one)."""
        if store is not self.store:
            return False
        if filters is self._source:
            return True
        if tuple(filters) != self.filters:
            return False
        self._source = filters  # asked with this list from now on: the next answer is one identity test
        return True

    def next(self, start: int) -> StoredMessage | None:
        """The first message with ``seq >= start`` matching any filter."""
        if self._simple:
            return self.store.next_matching(start, self._filter_list)
        if start < 1:
            start = 1
        if self._budget:
            found = self._scan_dense(start)
            if self._budget:
                return found
            start = self._pos  # where the scan gave up
        if self._horizon < 0 or start < self._pos - BACK_SCAN:
            self._build(start)
        elif start < self._pos:
            behind = self._scan_back(start)
            if behind is not None:
                return behind
        else:
            self._pos = start
        seq = self._top()
        if seq is None or seq > self._horizon:
            seq = self._extend(seq)
        return self.store.get(seq) if seq is not None else None

    # -- the heap ----------------------------------------------------------------------

    def _build(self, start: int) -> None:
        """One entry per matching subject that has a message at or after ``start``."""
        store = self.store
        heap: list[tuple[int, str]] = []
        for subject, seqs in store.index.match_any(self.filters).items():
            k = seqs.bisect_left(start)
            if k < len(seqs):
                heap.append((seqs[k], subject))
        heapq.heapify(heap)
        self._heap = heap
        self._live = {subject for _, subject in heap}
        self._matched = {}
        self._pos = start
        self._horizon = store.last_seq

    def _top(self) -> int | None:
        """The smallest valid entry, fixing stale ones on the way: O(log s + log m) per fix."""
        heap = self._heap
        store = self.store
        pos = self._pos
        while heap:
            seq, subject = heap[0]
            if seq >= pos and store.get(seq) is not None:
                return seq
            seqs = store.index.get(subject)
            k = seqs.bisect_left(max(seq, pos)) if seqs is not None else 0
            if seqs is None or k == len(seqs):
                heapq.heappop(heap)
                self._live.discard(subject)
            else:
                heapq.heapreplace(heap, (seqs[k], subject))
        return None

    # -- scans -------------------------------------------------------------------------

    def _extend(self, found: int | None) -> int | None:
        """Scan past ``horizon`` up to ``found`` (or the end) for subjects the heap has not seen."""
        store = self.store
        end = store.last_seq if found is None else min(found - 1, store.last_seq)
        seq = max(self._horizon, self._pos - 1) + 1
        live = self._live
        while seq <= end:
            msg = store.get(seq)
            if msg is not None and msg.subject not in live and self._matches(msg.subject):
                heapq.heappush(self._heap, (seq, msg.subject))
                live.add(msg.subject)
                found = seq
                end = seq - 1  # nothing later can come first
            seq += 1
        self._horizon = max(self._horizon, end)
        return found

    def _scan_dense(self, start: int) -> StoredMessage | None:
        """Step from ``start`` to the first match; past the budget, give up where the step stopped.

        A subject seen before is one dict look-up; a new one is tested once and
        remembered.  Giving up leaves ``_pos`` at the sequence the step stopped at.
        """
        get = self.store.get
        matched = self._matched
        last = self.store.last_seq
        budget = self._budget
        seq = start
        while seq <= last:
            msg = get(seq)
            if msg is not None:
                subject = msg.subject
                known = matched.get(subject)
                if known is None:
                    known = matched[subject] = self._matcher(subject) is not None
                if known:
                    return msg
            budget -= 1
            if not budget:
                self._budget = 0  # too sparse: the heap from here on
                self._pos = seq
                return None
            seq += 1
        return None

    def _scan_back(self, start: int) -> StoredMessage | None:
        """A step back (a delivery put back): look at ``[start, pos)`` one message at a time."""
        store = self.store
        for seq in range(start, self._pos):
            msg = store.get(seq)
            if msg is not None and self._matches(msg.subject):
                return msg
        return None

    def _matches(self, subject: str) -> bool:
        known = self._matched.get(subject)
        if known is None:
            known = self._matched[subject] = self._matcher(subject) is not None
        return known
