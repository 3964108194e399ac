"""The leader's side: taking proposals, replicating them, committing on a quorum, and giving leadership up.

A new leader writes the membership as the first entry of its term (nats-server
sends its peer state the same way); nothing of an earlier term counts as
committed until an entry of the leader's own term is stored by a quorum.  Each
follower is sent batches of entries (at most ``max_append_entries`` or
``max_append_bytes``), pipelined up to ``max_inflight_appends``, or the
snapshot when it needs entries the leader no longer keeps.  Heartbeats repeat
the last append (a follower that missed one answers with where it stands); a
leader that heard from no quorum of voters for ``lost_quorum_interval`` steps
down (nats-server's ``lostQuorum``), so a minority side stops serving.
"""

from __future__ import annotations

from collections.abc import Sequence

from fakejs.jetstream.raft.core import NodeCore, Role
from fakejs.jetstream.raft.entries import Entry, EntryKind, Membership
from fakejs.jetstream.raft.messages import AppendEntries, AppendResponse, InstallSnapshot, TimeoutNow
from fakejs.jetstream.raft.outputs import Accepted, NotLeader, Outcome, Refused, TimerKind
from fakejs.jetstream.raft.progress import Progress, quorum_index


class Leading(NodeCore):
    """A node's conduct while it leads (nats-server's ``runAsLeader``)."""

    def _become_leader(self) -> None:
        self.role, self.leader, self.transfer_target = Role.LEADER, self.id, None
        self.votes.clear()
        self._cancel(TimerKind.ELECTION)
        first_new = self.log.last_index + 1
        self.progress = {peer: Progress(first_new) for peer in sorted(self.membership.members - {self.id})}
        self.term_start = first_new
        self._write_entries(first_new, [Entry(first_new, self.term, EntryKind.PEER_STATE, self.membership.encode())])
        self._arm(TimerKind.HEARTBEAT, self.settings.heartbeat_interval)
        self._arm(TimerKind.QUORUM_CHECK, self.settings.lost_quorum_interval)
        self._broadcast()
        self._advance_commit()

    def _leading_without_transfer(self) -> NotLeader | None:
        """``NotLeader`` unless this node leads and hands over to nobody."""
        if self.role is not Role.LEADER:
            return NotLeader(self.leader)
        return NotLeader(None) if self.transfer_target is not None else None

    # -- proposals ---------------------------------------------------------------------------

    def _append_proposals(self, kind: EntryKind, items: Sequence[bytes]) -> Outcome:
        refusal = self._leading_without_transfer()
        if refusal is not None:
            return refusal
        if not items:
            return Refused("nothing was proposed")
        first = self.log.last_index + 1
        entries = [Entry(first + offset, self.term, kind, data) for offset, data in enumerate(items)]
        self._write_entries(first, entries)
        self._broadcast()
        self._advance_commit()
        return Accepted(first, self.log.last_index, self.term)

    def _change_membership(self, membership: Membership) -> Outcome:
        """Log ``membership`` (one peer more or less than now); it is in force from the moment it is logged."""
        refusal = self._leading_without_transfer()
        if refusal is not None:
            return refusal
        if self.commit_index < self.term_start:
            return Refused("the leader has not yet committed an entry of its term")
        if self.membership_index > self.commit_index:
            return Refused("a membership change is under way")
        if membership == self.membership:
            return Refused("the membership would not change")
        if not membership.voters:
            return Refused("a group needs a voter")
        outcome = self._append_proposals(EntryKind.PEER_STATE, [membership.encode()])
        for peer in sorted(membership.members - {self.id} - set(self.progress)):
            self.progress[peer] = Progress(self.log.last_index)
            self._replicate(peer)
        for peer in set(self.progress) - membership.members:
            del self.progress[peer]
        return outcome

    # -- replication -------------------------------------------------------------------------

    def _broadcast(self) -> None:
        for peer in self.progress:
            self._replicate(peer)

    def _replicate(self, peer: str, force: bool = False) -> bool:
        """Send ``peer`` what it lacks, in as many appends as its limit of appends in flight allows (one while
        probing); ``force`` sends one even when there is nothing new or no room (a heartbeat, a new commit index):
        while probing it repeats the probe, otherwise it carries no entries."""
        progress = self.progress[peer]
        if progress.next_index <= self.log.snapshot.index:
            if force or not progress.snapshot_sent:
                self._send(peer, InstallSnapshot(self.id, self.term, self.log.snapshot))
                progress.snapshot_sent = True
                return True
            return False
        limits = self.settings.max_append_entries, self.settings.max_append_bytes
        room = 1 if progress.probing else self.settings.max_inflight_appends
        sent = False
        while (
            progress.inflight < room
            and progress.next_index <= self.log.last_index  # else the peer was sent every entry there is
            and (entries := self.log.batch(progress.next_index, *limits))
        ):
            self._send_append(peer, progress, entries)
            sent = True
        if force and not sent:
            self._send_append(peer, progress, self.log.batch(progress.next_index, *limits) if progress.probing else [])
        return sent or force

    def _send_append(self, peer: str, progress: Progress, entries: list[Entry]) -> None:
        prev_index = progress.next_index - 1
        prev_term = self.log.term_at(prev_index) or 0
        self._send(peer, AppendEntries(self.id, self.term, prev_index, prev_term, self.commit_index, tuple(entries)))
        progress.commit_sent = max(progress.commit_sent, self.commit_index)
        if entries and progress.probing:
            progress.inflight = 1
        elif entries:
            progress.inflight += 1
            progress.next_index = entries[-1].index + 1

    def _on_append_response(self, response: AppendResponse) -> None:
        progress = self.progress.get(response.sender)
        if self.role is not Role.LEADER or progress is None:
            return
        progress.active = True
        if not response.success:
            self._on_refusal(response, progress)
            return
        if response.match_index > self.log.last_index:
            self.counters.inconsistent += 1
            return
        progress.match_index = max(progress.match_index, response.match_index)
        progress.snapshot_sent = progress.snapshot_sent and progress.match_index < self.log.snapshot.index
        progress.next_index = max(progress.next_index, progress.match_index + 1)
        if progress.probing:
            progress.probing, progress.inflight = False, 0
            progress.next_index = progress.match_index + 1
        progress.inflight = 0 if progress.match_index >= self.log.last_index else max(progress.inflight - 1, 0)
        self._advance_commit()
        if self.role is not Role.LEADER:
            return
        if response.sender == self.transfer_target and progress.match_index == self.log.last_index:
            self._hand_over(response.sender)
            return
        if not self._replicate(response.sender) and progress.lacks_commit(self.commit_index):
            self._replicate(response.sender, force=True)

    def _on_refusal(self, response: AppendResponse, progress: Progress) -> None:
        if response.rejected_prev <= progress.match_index:
            if response.rejected_prev != progress.next_index - 1 or response.match_index >= progress.match_index:
                return  # an answer to an older append: the follower has matched past it since
            # The latest append refused below what the follower had matched: it lost its log (kept in memory,
            # lost with its server), and starts over from what it holds, as nats-server catches it up.
            self.counters.emptied += 1
            progress.match_index = response.match_index
        progress.probing, progress.inflight = True, 0
        progress.next_index = max(progress.match_index + 1, min(response.rejected_prev, response.match_index + 1))
        self._replicate(response.sender)

    def _advance_commit(self) -> None:
        """Commit what a quorum of voters stored, once it includes an entry of this term (Raft's rule)."""
        if self.log.last_index <= self.commit_index:
            return  # everything logged is committed (no copy is counted past the leader's log)
        voters = self.membership.voters
        matches = [
            self.durability.durable_index if peer == self.id else self.progress[peer].match_index
            for peer in voters
            if peer == self.id or peer in self.progress
        ]
        index = quorum_index(matches, self.membership.quorum)
        if index <= self.commit_index or self.log.term_at(index) != self.term:
            return
        self.commit_index = index
        for peer, progress in self.progress.items():
            if progress.inflight == 0 and progress.lacks_commit(index):
                self._replicate(peer, force=True)
        if self.id not in voters and self.membership_index <= self.commit_index:
            self._become_follower(self.term, None)  # this leader's removal is committed

    # -- timers ------------------------------------------------------------------------------

    def _on_heartbeat(self) -> None:
        for peer in self.progress:
            self._replicate(peer, force=True)
        self._arm(TimerKind.HEARTBEAT, self.settings.heartbeat_interval)

    def _on_quorum_check(self) -> None:
        """Step down unless a quorum of voters (this one included) was heard from since the last check."""
        heard = {peer for peer, progress in self.progress.items() if progress.active} | {self.id}
        for progress in self.progress.values():
            progress.active = False
        if len(heard & self.membership.voters) < self.membership.quorum:
            self._become_follower(self.term, None)
            return
        self._arm(TimerKind.QUORUM_CHECK, self.settings.lost_quorum_interval)

    # -- giving leadership up ----------------------------------------------------------------

    def _step_down(self, preferred: str | None) -> Outcome | None:
        """Hand leadership to ``preferred`` (or the most up-to-date voter) once it has every entry, then follow;
        without another voter, just step down (nats-server's ``StepDown``)."""
        if self.role is not Role.LEADER:
            return NotLeader(self.leader)
        candidates = sorted(self.membership.voters - {self.id})
        if preferred is not None and preferred not in candidates:
            return Refused(f"{preferred} is not another voter of the group")
        if preferred is None and candidates:
            preferred = max(candidates, key=self._transfer_rank)
        if preferred is None:
            self._become_follower(self.term, None)
            return None
        self.transfer_target = preferred
        self._arm(TimerKind.TRANSFER, self.settings.transfer_timeout)
        if self.progress[preferred].match_index == self.log.last_index:
            self._hand_over(preferred)
        else:
            self._replicate(preferred, force=True)
        return None

    def _transfer_rank(self, peer: str) -> tuple[bool, int]:
        progress = self.progress[peer]
        return progress.active, progress.match_index

    def _hand_over(self, peer: str) -> None:
        self._send(peer, TimeoutNow(self.id, self.term))
        self._become_follower(self.term, None)

    def _on_transfer_timeout(self) -> None:
        """The chosen peer did not catch up in time: step down all the same."""
        if self.role is Role.LEADER:
            self._become_follower(self.term, None)
