"""Where a node's log lives between runs: the :class:`LogStorage` interface and the in-memory store.

A store keeps what a node must not forget: the term and its vote, the latest
snapshot and the entries after it.  The node never calls it: it lists writes
in each :class:`~fakejs.jetstream.raft.outputs.Ready`, the driver hands them to
:meth:`LogStorage.write`, and at start the driver builds the node from
:meth:`LogStorage.load`.  :class:`MemoryStorage` keeps everything in memory (a
process that ends loses it); :class:`~fakejs.jetstream.raft.directory.DirectoryStorage`
keeps it in files.
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
    """What a store gives back at start: the term, the vote cast in it, the snapshot and the entries after it."""

    term: int = 0
    vote: str | None = None
    snapshot: Snapshot = EMPTY_SNAPSHOT
    entries: tuple[Entry, ...] = ()


class LogStorage(Protocol):
    """A node's durable state.  ``write`` applies writes in order and returns once they are durable."""

    def load(self) -> PersistentState: ...

    def write(self, writes: Sequence[Write]) -> None: ...


class MemoryStorage:
    """A :class:`LogStorage` in memory: durable for as long as the object lives (tests keep it across a
    simulated crash of the node that used it)."""

    def __init__(self) -> None:
        self.term = 0
        self.vote: str | None = None
        self.log = RaftLog()

    def load(self) -> PersistentState:
        return PersistentState(self.term, self.vote, self.log.snapshot, tuple(self.log.entries))

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
