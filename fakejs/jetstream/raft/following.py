"""The follower's side: storing the leader's entries and snapshots, and answering with where its log stands.

An append is checked against the entry before it (same index, same term:
Raft's log matching); entries already held are kept, a conflicting suffix is
dropped and replaced.  What is committed here never conflicts with a leader,
so the part of an append at or below the commit index is skipped.  A refusal
says where the leader should look next: the last index here, or the last one
whose term could still match.  A snapshot past the commit index replaces the
log it covers and is handed to the state machine to restore once stored.
"""

from __future__ import annotations

from fakejs.jetstream.raft.core import Role
from fakejs.jetstream.raft.entries import Entry
from fakejs.jetstream.raft.leading import Leading
from fakejs.jetstream.raft.messages import AppendEntries, AppendResponse, InstallSnapshot
from fakejs.jetstream.raft.outputs import SaveSnapshot, TimerKind


class Following(Leading):
    """A node's conduct toward its leader (nats-server's ``processAppendEntry``)."""

    def _follow(self, leader: str) -> bool:
        """Follow ``leader`` in the current term and restart the election timer; ``False`` if this node leads
        (two leaders in one term: an inconsistent peer)."""
        if self.role is Role.LEADER:
            self.counters.inconsistent += 1
            return False
        if self.role is not Role.FOLLOWER or self.leader != leader:
            self._become_follower(self.term, leader)
        else:
            self._arm_election()
        self._renew_lease()
        return True

    def _renew_lease(self) -> None:
        """The leader was heard: the lease holds for at least half the shortest election timeout from now (one
        lease timer a period, not one a message: a period with contacts arms the next)."""
        self.lease_contacts += 1
        if not self.lease:
            self.lease, self.lease_contacts = True, 0
            self._arm(TimerKind.LEASE, self.settings.election_timeout_min / 2)

    def _on_lease_timeout(self) -> None:
        if self.lease_contacts and self.role is Role.FOLLOWER and self.leader is not None:
            self.lease_contacts = 0
            self._arm(TimerKind.LEASE, self.settings.election_timeout_min / 2)
        else:
            self.lease = False

    def _on_append_entries(self, append: AppendEntries) -> None:
        if not self._follow(append.sender):
            return
        prev_index, prev_term, entries = append.prev_index, append.prev_term, append.entries
        if prev_index < self.commit_index:  # the committed prefix matches every leader's log
            skip = self.commit_index - prev_index
            if skip >= len(entries):
                self._answer(append, True, prev_index + len(entries))
                return
            prev_index, prev_term, entries = self.commit_index, entries[skip - 1].term, entries[skip:]
        if self.log.term_at(prev_index) != prev_term:
            self._answer(append, False, self._refusal_hint(append))
            return
        self._store(entries)
        last_new = prev_index + len(entries)
        if append.commit > self.commit_index:
            self.commit_index = max(self.commit_index, min(append.commit, last_new))
        self._answer(append, True, last_new)

    def _store(self, entries: tuple[Entry, ...]) -> None:
        """Append what the log lacks, dropping the suffix from the first entry whose term differs."""
        for position, entry in enumerate(entries):
            if self.log.term_at(entry.index) != entry.term:
                self._write_entries(entry.index, entries[position:])
                return

    def _refusal_hint(self, append: AppendEntries) -> int:
        """The last index here whose term could still match the leader's: none past ``prev_term`` can."""
        hint = min(append.prev_index, self.log.last_index)
        while hint > self.commit_index and (self.log.term_at(hint) or 0) > append.prev_term:
            hint -= 1
        return hint

    def _answer(self, append: AppendEntries, success: bool, match_index: int) -> None:
        rejected = 0 if success else append.prev_index
        self._send(append.sender, AppendResponse(self.id, self.term, success, match_index, rejected))

    def _on_install_snapshot(self, message: InstallSnapshot) -> None:
        if not self._follow(message.sender):
            return
        snapshot = message.snapshot
        if snapshot.index <= self.commit_index:
            self._send(message.sender, AppendResponse(self.id, self.term, True, self.commit_index))
            return
        keeps_log = self.log.term_at(snapshot.index) == snapshot.term
        ticket = self._write(SaveSnapshot(snapshot))
        if not keeps_log:
            self.durability.truncated(snapshot.index + 1)
        self.log.install(snapshot)
        self.commit_index = snapshot.index
        self._refresh_membership()
        self._pending_restore = (ticket, snapshot)
        self._send(message.sender, AppendResponse(self.id, self.term, True, snapshot.index))
