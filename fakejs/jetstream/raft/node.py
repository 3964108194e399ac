"""One member of one replicated group, sans-IO: inputs in, a :class:`~fakejs.jetstream.raft.outputs.Ready` out.

A :class:`RaftNode` never reads a clock, sleeps, or does I/O.  Its driver
feeds it messages from peers, fired timers, proposals and requests, and acts
on each returned ``Ready`` (see :mod:`fakejs.jetstream.raft.outputs` for the
order).  Timers are armed through the output and drawn from the ``rng`` the
driver gives, so a run under a manual clock with a seeded ``rng`` replays
exactly.  Bytes from a peer that do not decode, or messages no correct peer
sends, are counted in :attr:`RaftNode.counters` and dropped; they never raise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fakejs.jetstream.raft.codec import MalformedMessage, decode
from fakejs.jetstream.raft.core import Role
from fakejs.jetstream.raft.electing import Electing
from fakejs.jetstream.raft.entries import EntryKind, Snapshot
from fakejs.jetstream.raft.messages import (
    AppendEntries,
    AppendResponse,
    InstallSnapshot,
    Message,
    TimeoutNow,
    VoteRequest,
    VoteResponse,
)
from fakejs.jetstream.raft.outputs import Ready, Refused, SaveSnapshot, Timer, TimerKind


class RaftNode(Electing):
    """One member of one Raft group (nats-server's ``raft``): built from what its storage loaded
    (:class:`~fakejs.jetstream.raft.storage.PersistentState`), the group's first voters (``peers``, used until a
    membership is logged; a node joining a running group passes none), a seeded ``rng`` and its settings."""

    # -- inputs --------------------------------------------------------------------------------

    def start(self) -> Ready:
        """The first output: the snapshot to restore, and the election timer (a sole voter leads at once)."""
        self._begin()
        if self.log.snapshot.index:
            self._ready.restore = self.log.snapshot
        if self.membership.voters == {self.id}:
            self._campaign(pre_vote=False)
        else:
            self._arm_election()
        return self._finish()

    def receive(self, message: Message) -> Ready:
        """A message from a peer."""
        self._begin()
        self._step(message)
        return self._finish()

    def receive_bytes(self, data: bytes) -> Ready:
        """A message from a peer, as it came over the wire; bytes that do not decode are counted and dropped."""
        message = self.decode(data)
        return Ready() if message is None else self.receive(message)

    def decode(self, data: bytes) -> Message | None:
        """A message from its wire bytes; ``None`` (counted as malformed) when they do not decode."""
        try:
            return decode(data)
        except MalformedMessage:
            self.counters.malformed += 1
            return None

    def timer_fired(self, timer: Timer) -> Ready:
        """A timer this node armed has fired (pass back the object the output gave); stale ones are ignored."""
        self._begin()
        if self._timer_is_current(timer):
            if timer.kind is TimerKind.ELECTION:
                self._on_election_timeout()
            elif self.role is Role.LEADER and timer.kind is TimerKind.HEARTBEAT:
                self._on_heartbeat()
            elif self.role is Role.LEADER and timer.kind is TimerKind.QUORUM_CHECK:
                self._on_quorum_check()
            elif timer.kind is TimerKind.TRANSFER:
                self._on_transfer_timeout()
            elif timer.kind is TimerKind.LEASE:
                self._on_lease_timeout()
        return self._finish()

    def persisted(self, ticket: int) -> Ready:
        """The writes of the output with ``ticket``, and of every earlier one, are durable."""
        self._begin()
        self._ready.messages.extend(self.durability.confirm(ticket))
        if self.role is Role.LEADER:
            self._advance_commit()
        return self._finish()

    def propose(self, data: bytes) -> Ready:
        """Append ``data`` to the log (leader only); the output's ``outcome`` says where, or who leads."""
        return self.propose_many([data])

    def propose_many(self, items: Sequence[bytes]) -> Ready:
        """Append ``items`` in order as consecutive entries, sent to followers in as few appends as fit."""
        self._begin()
        self._ready.outcome = self._append_proposals(EntryKind.NORMAL, items)
        return self._finish()

    def add_peer(self, peer: str, *, voter: bool = True) -> Ready:
        """Log a membership with ``peer`` as a voter (or an observer); one change at a time."""
        self._begin()
        membership = self.membership.with_voter(peer) if voter else self.membership.with_observer(peer)
        self._ready.outcome = self._change_membership(membership)
        return self._finish()

    def remove_peer(self, peer: str) -> Ready:
        """Log a membership without ``peer``; one change at a time.  A leader that removes itself leads until the
        change commits, then steps down."""
        self._begin()
        self._ready.outcome = self._change_membership(self.membership.without(peer))
        return self._finish()

    def step_down(self, preferred: str | None = None) -> Ready:
        """Stop leading: hand over to ``preferred`` (or the best placed voter) with a timeout-now once it holds
        every entry, refusing proposals meanwhile; after ``transfer_timeout`` step down regardless."""
        self._begin()
        self._ready.outcome = self._step_down(preferred)
        return self._finish()

    def campaign(self) -> Ready:
        """Start a pre-vote round now rather than at the election timeout (nats-server's ``Campaign``)."""
        self._begin()
        if self.role is Role.LEADER:
            self._ready.outcome = Refused("already the leader")
        else:
            self.leader = None
            self._campaign(pre_vote=True)
        return self._finish()

    def peers_lost(self, peers: Iterable[str]) -> Ready:
        """The driver saw ``peers``' servers go down or be cut off (a failure it caused or was told of): what
        timers would tell in time, at once.  A follower of one of them forgets its leader (and its lease on it),
        so it grants pre-votes; a leader that reaches no quorum of voters without them steps down (as on its
        lost-quorum check).  Followed by :meth:`campaign` on a chosen survivor, an election takes no time."""
        self._begin()
        lost = set(peers) - {self.id}
        if self.role is Role.LEADER:
            if not self._has_quorum(set(self.membership.voters) - lost):
                self._become_follower(self.term, None)
        elif self.leader in lost:
            self.leader, self.lease = None, False
        return self._finish()

    def campaign_soon(self, immediately: bool = False) -> Ready:
        """Arm the election timer for a campaign timeout rather than an election timeout (nats-server's
        ``Campaign``, or ``CampaignImmediately``): a group just formed elects its first leader quickly."""
        self._begin()
        if self.role is Role.LEADER:
            self._ready.outcome = Refused("already the leader")
        else:
            self._arm(TimerKind.ELECTION, self.settings.campaign_timeout(self.rng, immediately))
        return self._finish()

    def compact(self, index: int, data: bytes) -> Ready:
        """The state machine's snapshot ``data`` of everything applied up to ``index``: the log before it goes."""
        if index > self.applied_index:
            raise ValueError(f"index {index} is past what was applied ({self.applied_index})")
        self._begin()
        if index <= self.log.snapshot.index:
            self._ready.outcome = Refused(f"the log is already compacted to {self.log.snapshot.index}")
            return self._finish()
        membership, _ = self.log.latest_membership(index)
        snapshot = Snapshot(index, self.log.term_at(index) or 0, membership, data)
        self._write(SaveSnapshot(snapshot))
        self.log.install(snapshot)
        return self._finish()

    # -- reading -------------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return self.role is Role.LEADER

    @property
    def last_index(self) -> int:
        return self.log.last_index

    # -- dispatch ------------------------------------------------------------------------------

    def _step(self, message: Message) -> None:
        if message.sender == self.id:
            self.counters.ignored += 1
            return
        if message.term > self.term and not self._adopt_term(message):
            return
        if message.term < self.term:
            self._answer_stale(message)
            return
        if isinstance(message, AppendEntries):
            self._on_append_entries(message)
        elif isinstance(message, AppendResponse):
            self._on_append_response(message)
        elif isinstance(message, VoteRequest):
            self._on_vote_request(message)
        elif isinstance(message, VoteResponse):
            self._on_vote_response(message)
        elif isinstance(message, InstallSnapshot):
            self._on_install_snapshot(message)
        else:
            self._on_timeout_now(message)

    def _adopt_term(self, message: Message) -> bool:
        """Move to a higher term seen in ``message``; ``False`` to ignore the message instead."""
        if isinstance(message, VoteRequest):
            if message.pre_vote:
                return True  # a pre-vote changes no term
            if self._in_lease() and not message.transfer:
                self.counters.ignored += 1
                return False
        if isinstance(message, VoteResponse) and message.pre_vote and message.granted:
            return True
        leader = message.sender if isinstance(message, (AppendEntries, InstallSnapshot, TimeoutNow)) else None
        self._become_follower(message.term, leader)
        return True

    def _answer_stale(self, message: Message) -> None:
        """Tell a peer of an older term about this one: a deposed leader steps down, a candidate gives up."""
        if isinstance(message, AppendEntries | InstallSnapshot):
            rejected = message.prev_index if isinstance(message, AppendEntries) else message.snapshot.index
            self._send(message.sender, AppendResponse(self.id, self.term, False, self.log.last_index, rejected))
        elif isinstance(message, VoteRequest):
            self._send(message.sender, VoteResponse(self.id, self.term, False, pre_vote=message.pre_vote))
        else:
            self.counters.ignored += 1
