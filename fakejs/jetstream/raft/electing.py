"""Elections: a pre-vote round, then the vote; and the rules for granting either.

When its election timer fires, a voter that heard no leader asks the voters
whether they would vote for it in the next term (a pre-vote: nobody's term
changes).  Only with a quorum of yes does it raise its term, vote for itself
(stored before any request leaves) and ask for real votes.  A voter grants a
pre-vote only when it knows no live leader itself and the candidate's log is
at least as up to date as its own; so a node cut off from the group, or one
rejoining it, cannot raise terms and depose a working leader.  The same rule
makes a voter that follows a live leader ignore vote requests, except the one
a leader asked for when it hands over (:class:`~fakejs.jetstream.raft.messages.TimeoutNow`).
A voter that refuses a candidate whose log is behind its own, while it knows
no live leader, campaigns itself after a campaign timeout instead of waiting
for its election timeout: so the better placed survivor leads soon.  A
candidate refused in its own term (a split vote) asks again after a campaign
timeout rather than its election timeout.  nats-server has no pre-vote, and
waits its election timeout after a split; everything else follows its
``processVoteRequest``.
"""

from __future__ import annotations

from fakejs.jetstream.raft.core import Role
from fakejs.jetstream.raft.following import Following
from fakejs.jetstream.raft.messages import TimeoutNow, VoteRequest, VoteResponse
from fakejs.jetstream.raft.outputs import TimerKind


class Electing(Following):
    """A node's conduct in elections (nats-server's ``runAsCandidate`` and ``processVoteRequest``)."""

    def _in_lease(self) -> bool:
        """Whether this node knows a live leader: it leads, or follows one it heard from within its lease (half
        the shortest election timeout to all of it), so that once a leader is gone the first follower to time
        out wins the others' pre-votes, as the first to time out wins nats-server's votes."""
        return self.role is Role.LEADER or (self.role is Role.FOLLOWER and self.leader is not None and self.lease)

    def _on_election_timeout(self) -> None:
        if self.role is not Role.LEADER:
            self.leader = None
            self._campaign(pre_vote=True)

    def _campaign(self, pre_vote: bool, transfer: bool = False) -> None:
        """Start a pre-vote round, or (``pre_vote`` false) an election in the next term (see :meth:`_may_campaign`
        for who may)."""
        self._arm_election()
        if not self._may_campaign():
            return
        self.votes, self.refusals = {self.id}, set()
        if pre_vote:
            self.role = Role.PRE_CANDIDATE
            request = VoteRequest(self.id, self.term + 1, self.log.last_index, self.log.last_term, pre_vote=True)
            if self._has_quorum(self.votes):
                self._campaign(pre_vote=False)
                return
        else:
            self.role, self.term, self.vote = Role.CANDIDATE, self.term + 1, self.id
            self.leader = None  # a candidate knows no leader (one handed over to still names the old one)
            self._save_hard_state()
            if self._has_quorum(self.votes):
                self._become_leader()
                return
            request = VoteRequest(self.id, self.term, self.log.last_index, self.log.last_term, transfer=transfer)
        for peer in sorted(self.membership.voters - {self.id}):
            self._send(peer, request)

    def _may_campaign(self) -> bool:
        """A voter may; so may a node whose removal is logged but not committed (it may hold the only log that
        has the change, and then only it can lead the group to commit it; it counts no vote of its own)."""
        if self.id in self.membership.voters:
            return True
        if self.membership_index <= self.commit_index:
            return False
        committed, _ = self.log.latest_membership(self.commit_index)
        return self.id in (committed or self.bootstrap).voters

    def _log_is_behind(self, request: VoteRequest) -> bool:
        return (request.last_term, request.last_index) < (self.log.last_term, self.log.last_index)

    def _on_vote_request(self, request: VoteRequest) -> None:
        behind = self._log_is_behind(request)
        if request.pre_vote:
            can_vote = request.term > self.term or self.vote in (None, request.sender)
            in_lease = self._in_lease()
            granted = can_vote and not in_lease and not behind
            term = request.term if granted else self.term
            self._send(request.sender, VoteResponse(self.id, term, granted, pre_vote=True))
            if behind and not in_lease:
                self._campaign_early()
            return
        can_vote = self.vote == request.sender or (self.vote is None and self.leader is None)
        granted = can_vote and not behind
        if not granted and behind and self.vote is None:
            self._campaign_early()
        if granted:
            if self.vote != request.sender:
                self.vote = request.sender
                self._save_hard_state()
            self.role = Role.FOLLOWER
            self.votes.clear()
            self._arm_election()
        self._send(request.sender, VoteResponse(self.id, self.term, granted))

    def _campaign_early(self) -> None:
        """A candidate whose log is behind this follower's asked for its vote: the leader is gone, and this node,
        better placed, campaigns after a campaign timeout rather than its election timeout (nats-server's
        ``processVoteRequest``: "we have a more up-to-date log, and haven't voted yet")."""
        if self.role is Role.FOLLOWER:
            self._arm(TimerKind.ELECTION, self.settings.campaign_timeout(self.rng))

    def _on_vote_response(self, response: VoteResponse) -> None:
        if not response.granted:
            if not response.pre_vote and self.role is Role.CANDIDATE and response.term == self.term:
                self._lost_if_refused(response.sender)
            return
        if response.pre_vote and self.role is Role.PRE_CANDIDATE and response.term == self.term + 1:
            self.votes.add(response.sender)
            if self._has_quorum(self.votes):
                self._campaign(pre_vote=False)
        elif not response.pre_vote and self.role is Role.CANDIDATE and response.term == self.term:
            self.votes.add(response.sender)
            if self._has_quorum(self.votes):
                self._become_leader()

    def _lost_if_refused(self, voter: str) -> None:
        """A candidate refused in its term by a voter that voted for another (two survivors that timed out
        together each voted for itself) campaigns again after a campaign timeout rather than its election
        timeout: the first of them to ask again wins, within a second rather than another 4 to 9.  nats-server
        waits its election timeout; fakejs's messages take longer under load, so its votes split more often.
        Once a term: the first refusal re-arms the timer."""
        if not self.refusals:
            self._arm(TimerKind.ELECTION, self.settings.campaign_timeout(self.rng))
        self.refusals.add(voter)

    def _on_timeout_now(self, message: TimeoutNow) -> None:
        """The leader hands over: campaign at once, without a pre-vote, in a way that voters heed."""
        if self.role is not Role.LEADER and message.term == self.term:
            self._campaign(pre_vote=False, transfer=True)
