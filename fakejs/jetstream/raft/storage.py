"""Where a node's log lives between runs: the :class:`LogStorage` interface and the in-memory store.

A store keeps what a node must not forget: the term and its vote, the latest
snapshot and the entries after it.  The node never calls it: it lists writes
in each :class:`~fakejs.jetstream.raft.outputs.Ready`, the driver hands them to
:meth:`LogStorage.write`, and at start the driver builds the node from
:meth:`LogStorage.load`.

A store also keeps, as a hint, how far the node's member applied its log
(:meth:`LogStorage.note_applied`, told by the driver): those entries were
committed, so a node started again takes them as committed at once and hands
them out before it hears a leader (as nats-server replays its log up to the
commit its entries carry).  The hint is written without a sync: one lost in a
crash leaves the node waiting for its leader to say what is committed.

:class:`MemoryStorage` keeps everything in memory (a process that ends loses
it); :class:`~fakejs.jetstream.raft.directory.DirectoryStorage` keeps it in
files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from fakejs.jetstream.raft.entries import EMPTY_SNAPSHOT, Entry, Snapshot
from fakejs.jetstream.raft.log import RaftLog
from fakejs.jetstream.raft.outputs import SaveHardState, SaveSnapshot, Write, WriteEntries


@dataclass(frozen=True, slots=True)
class PersistentState:
    """What a store gives back at start: the term, the vote cast in it, the snapshot and the entries after it,
    and the last index its member had applied (a hint, see the module docstring)."""

    term: int = 0
    vote: str | None = None
    snapshot: Snapshot = EMPTY_SNAPSHOT
    entries: tuple[Entry, ...] = ()
    applied: int = 0


class LogStorage(Protocol):
    """A node's durable state.  ``write`` applies writes in order and returns once they are durable."""

    def load(self) -> PersistentState: ...

    def write(self, writes: Sequence[Write]) -> None: ...

    def note_applied(self, index: int) -> None:
        """Remember that the member applied the log up to ``index`` (no sync: a hint, see the module docstring)."""


class MemoryStorage:
    """A :class:`LogStorage` in memory: durable for as long as the object lives (tests keep it across a
    simulated crash of the node that used it)."""

    def __init__(self) -> None:
        self.term = 0
        self.vote: str | None = None
        self.log = RaftLog()
        self.applied = 0

    def load(self) -> PersistentState:
        return PersistentState(self.term, self.vote, self.log.snapshot, tuple(self.log.entries), self.applied)

    def note_applied(self, index: int) -> None:
        self.applied = index

    def write(self, writes: Sequence[Write]) -> None:
        for write in writes:
            apply_write(self.log, write, self)

    def save_hard_state(self, term: int, vote: str | None) -> None:
        self.term, self.vote = term, vote


class HardStateHolder(Protocol):
    """Where :func:`apply_write` puts a term and vote."""

    def save_hard_state(self, term: int, vote: str | None) -> None: ...


def apply_write(log: RaftLog, write: Write, hard_state: HardStateHolder) -> None:
    """Apply one write to an in-memory log (and its term and vote holder)."""
    if isinstance(write, SaveHardState):
        hard_state.save_hard_state(write.term, write.vote)
    elif isinstance(write, WriteEntries):
        log.write(write.first_index, write.entries)
    elif isinstance(write, SaveSnapshot):
        log.install(write.snapshot)
