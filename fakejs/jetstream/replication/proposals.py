"""Proposals waiting to be applied: each a future, settled by what is applied at its index.

The leader's node accepts a proposal at an index and term (an
:class:`~fakejs.jetstream.raft.Accepted`); the future resolves with the index
once an entry of that index and term is applied here, and fails with
:class:`~fakejs.jetstream.replication.errors.ProposalLost` when an entry of
another term is applied there (another leader's entry won the place), or when
a snapshot from the leader covers it (whether it made it cannot be told).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from fakejs.jetstream.raft import Entry
from fakejs.jetstream.replication.errors import ProposalFailed, ProposalLost


class PendingProposals:
    """The futures of the proposals accepted here and not yet applied, by log index."""

    def __init__(self) -> None:
        self._waiting: dict[int, tuple[int, asyncio.Future[int]]] = {}

    def __len__(self) -> int:
        return len(self._waiting)

    def add(self, index: int, term: int, future: asyncio.Future[int]) -> None:
        """Wait for the entry at ``index`` of ``term``; an older wait for that index was lost."""
        older = self._waiting.pop(index, None)
        if older is not None:
            _fail(older[1], ProposalLost(f"the entry at {index} of term {older[0]} was replaced"))
        self._waiting[index] = (term, future)

    def applied(self, entries: Iterable[Entry]) -> None:
        """Settle the proposals at the indexes of ``entries``, now applied."""
        if not self._waiting:
            return
        for entry in entries:
            waiting = self._waiting.pop(entry.index, None)
            if waiting is None:
                continue
            term, future = waiting
            if entry.term == term:
                if not future.done():
                    future.set_result(entry.index)
            else:
                lost = ProposalLost(f"the entry at {entry.index} is of term {entry.term}, not {term}: it was lost")
                _fail(future, lost)

    def restored(self, index: int) -> None:
        """A snapshot up to ``index`` replaced the state: what waits at or below it cannot be told."""
        for waiting_index in [i for i in self._waiting if i <= index]:
            _, future = self._waiting.pop(waiting_index)
            _fail(future, ProposalLost(f"a snapshot from the leader covers index {waiting_index}: its fate is unknown"))

    def fail_all(self, error: ProposalFailed) -> None:
        waiting, self._waiting = self._waiting, {}
        for _, future in waiting.values():
            _fail(future, error)


def _fail(future: asyncio.Future[int], error: ProposalFailed) -> None:
    if not future.done():
        future.set_exception(error)
