"""Raft's safety properties, checked as a simulation runs (Figure 3 of the Raft paper).

- election safety: at most one leader per term;
- leader completeness: a new leader's log holds every entry known to be committed;
- state machine safety: no two nodes apply different entries at one index (a node's
  later incarnations included, and the snapshots they restore);
- log matching (:meth:`Invariants.check_logs`): two logs with an entry of the same
  index and term hold the same entries up to it;
- durability: when an entry is first applied, a quorum of the stores already holds it
  (so no crash, of any number of nodes, can take it back).

What any node applied is the record of what was committed; the tests check at the
end that every live node holds all of it, so a committed entry is never lost.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping

from fakejs.jetstream.raft import Entry, EntryKind, RaftNode, Role, Snapshot


class Invariants:
    """Everything applied anywhere, and the leader of each term, with a check per step."""

    def __init__(self, copies: Callable[[int, int], int] | None = None, quorum: int = 1) -> None:
        self.copies = copies  # how many stores hold the entry of this index and term, or a snapshot past it
        self.quorum = quorum
        self.committed: dict[int, tuple[int, bytes]] = {}  # index -> (term, data) of every entry applied anywhere
        self.normal: set[int] = set()  # the indexes of those that are state machine entries
        self.leaders: dict[int, str] = {}
        self._checked_terms: set[int] = set()
        self.steps = 0

    def applied(self, name: str, entry: Entry) -> None:
        if entry.index not in self.committed and self.copies is not None:
            stored = self.copies(entry.index, entry.term)
            assert stored >= self.quorum, f"{name} applied {entry.index} which {stored} stores hold"
        known = self.committed.setdefault(entry.index, (entry.term, entry.data))
        assert known == (entry.term, entry.data), f"{name} applied {entry} where {known} was applied"
        if entry.kind is EntryKind.NORMAL:
            self.normal.add(entry.index)

    def restored(self, name: str, snapshot: Snapshot, values: Mapping[int, tuple[int, bytes]]) -> None:
        for index, value in values.items():
            known = self.committed.setdefault(index, value)
            assert known == value, f"{name} restored {index}={value} where {known} was applied"
            self.normal.add(index)

    def stepped(self, node: RaftNode) -> None:
        self.steps += 1
        if node.role is not Role.LEADER:
            return
        leader = self.leaders.setdefault(node.term, node.id)
        assert leader == node.id, f"two leaders in term {node.term}: {leader} and {node.id}"
        if node.term not in self._checked_terms:
            self._checked_terms.add(node.term)
            self._check_complete(node)

    def _check_complete(self, leader: RaftNode) -> None:
        """The log of a leader that just took office holds every entry applied anywhere."""
        for index, (term, _) in self.committed.items():
            if index > leader.log.snapshot.index:
                assert leader.log.term_at(index) == term, f"leader {leader.id} lacks committed entry {index}"

    def check_logs(self, nodes: Iterable[RaftNode]) -> None:
        """Log matching between every two nodes."""
        for first, second in itertools.combinations(list(nodes), 2):
            low = max(first.log.first_index, second.log.first_index)
            high = min(first.log.last_index, second.log.last_index)
            agreed = next((i for i in range(high, low - 1, -1) if first.log.term_at(i) == second.log.term_at(i)), None)
            if agreed is None:
                continue
            for index in range(low, agreed + 1):
                assert first.log.entry(index) == second.log.entry(index), (
                    f"{first.id} and {second.id} agree at {agreed} but differ at {index}"
                )

    def check_nothing_lost(self, name: str, values: Mapping[int, tuple[int, bytes]], applied_index: int) -> None:
        """A node that applied up to ``applied_index`` holds every state machine entry committed up to there, and
        nothing else; at the end of a run, with every node caught up, no committed entry was lost."""
        expected = {index: self.committed[index] for index in self.normal if index <= applied_index}
        assert dict(values) == expected, f"{name} holds {len(values)} entries, {len(expected)} were committed"
        assert max(self.committed, default=0) <= applied_index, f"{name} has not applied everything committed"
