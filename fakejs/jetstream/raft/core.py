"""A node's state and the plumbing every role shares: the step's output, writes, timers, following a leader.

:class:`NodeCore` holds what one member of one group knows (term, vote, log,
commit and applied indexes, membership, role) and builds the
:class:`~fakejs.jetstream.raft.outputs.Ready` of the input being handled:
writes go under the step's ticket, messages that must wait for durability are
held (see :mod:`~fakejs.jetstream.raft.durability`), committed entries are
handed out only once durable here.  The roles' logic sits on it:
``leading``, then ``following``, then ``electing``, then ``node``.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fakejs.jetstream.raft.durability import Durability
from fakejs.jetstream.raft.entries import Entry, EntryKind, Membership, Snapshot
from fakejs.jetstream.raft.log import RaftLog
from fakejs.jetstream.raft.messages import AppendEntries, InstallSnapshot, Message, TimeoutNow
from fakejs.jetstream.raft.outputs import (
    Envelope,
    LeaderChange,
    Ready,
    SaveHardState,
    Timer,
    TimerKind,
    Write,
    WriteEntries,
)
from fakejs.jetstream.raft.progress import Progress
from fakejs.jetstream.raft.settings import RaftSettings
from fakejs.jetstream.raft.storage import PersistentState

LEADER_MESSAGES = (AppendEntries, InstallSnapshot, TimeoutNow)


class Role(enum.Enum):
    """Where a node stands in its group (nats-server's ``RaftState``, with the pre-vote round of its own)."""

    FOLLOWER = "follower"
    PRE_CANDIDATE = "pre-candidate"
    CANDIDATE = "candidate"
    LEADER = "leader"


@dataclass(slots=True)
class RaftCounters:
    """What a node dropped: ``malformed`` bytes, messages ``ignored`` (from itself, from a stale term, a vote
    request while a leader is known), ``inconsistent`` ones (claims no correct peer makes); and, as a leader,
    followers found ``emptied`` (a log kept in memory, lost with its server, as a memory stream's)."""

    malformed: int = 0
    ignored: int = 0
    inconsistent: int = 0
    emptied: int = 0


class NodeCore:
    """The state of one member of one group, and the building of each step's output."""

    def __init__(
        self,
        node_id: str,
        state: PersistentState,
        *,
        rng: random.Random,
        peers: Iterable[str] = (),
        settings: RaftSettings | None = None,
    ) -> None:
        if not node_id:
            raise ValueError("a node needs an id")
        self.id = node_id
        self.rng = rng
        self.settings = settings or RaftSettings()
        self.bootstrap = Membership.of(peers)
        self.term, self.vote = state.term, state.vote
        self.log = RaftLog(state.snapshot, state.entries)
        self.applied_index = self.log.snapshot.index
        # What its member applied before it stopped was committed: handed out again at start, without a leader.
        self.commit_index = max(self.applied_index, min(state.applied, self.log.last_index))
        self.role = Role.FOLLOWER
        self.leader: str | None = None
        # A follower heard its leader within the last lease (see Electing._in_lease); contacts since it was armed.
        self.lease = False
        self.lease_contacts = 0
        self.membership, self.membership_index = self.bootstrap, 0
        self._refresh_membership()
        self.durability = Durability(self.log.last_index)
        self.counters = RaftCounters()
        self.votes: set[str] = set()
        self.refusals: set[str] = set()  # the voters that refused this candidate in its term
        self.progress: dict[str, Progress] = {}
        self.transfer_target: str | None = None
        self.term_start = 0  # the index of the leader's first entry of its term
        self._timer_tokens: dict[TimerKind, int] = {}
        self._last_token = 0
        self._reported: tuple[str | None, int] = (None, 0)
        self._pending_restore: tuple[int, Snapshot] | None = None
        self._ready = Ready()
        self._outbox: list[tuple[Envelope, bool]] = []

    # -- the step's output ---------------------------------------------------------------

    def _begin(self) -> None:
        self._ready, self._outbox = Ready(), []

    def _finish(self) -> Ready:
        ready = self._ready
        if ready.ticket is not None:
            self.durability.close(self.log.last_index)
        for envelope, leader_message in self._outbox:
            if leader_message or not self.durability.pending:
                ready.messages.append(envelope)
            else:
                self.durability.hold(envelope)
        if self.commit_index > self.applied_index or self._pending_restore is not None:
            self._hand_out_committed(ready)
        self._report_leader(ready)
        return ready  # the next step's _begin starts another

    def _send(self, to: str, message: Message) -> None:
        """Send now if the message may leave before pending writes are durable (a leader's replication), else
        once they are."""
        leader_message = self.role is Role.LEADER and isinstance(message, LEADER_MESSAGES)
        self._outbox.append((Envelope(to, message), leader_message))

    def _write(self, write: Write) -> int:
        if self._ready.ticket is None:
            self._ready.ticket = self.durability.open()
        self._ready.writes.append(write)
        return self._ready.ticket

    def _hand_out_committed(self, ready: Ready) -> None:
        if self._pending_restore is not None:
            ticket, snapshot = self._pending_restore
            if ticket > self.durability.confirmed:
                return
            ready.restore, self.applied_index, self._pending_restore = snapshot, snapshot.index, None
        limit = min(self.commit_index, self.durability.durable_index)
        if limit > self.applied_index:
            ready.committed.extend(self.log.between(self.applied_index + 1, limit))
            self.applied_index = limit

    def _report_leader(self, ready: Ready) -> None:
        """Report who leads when it changes; this node reports itself once its first entry of the term is
        applied, so that it serves with everything committed before it applied (as nats-server waits)."""
        if self.role is Role.LEADER:
            leader = self.id if self.applied_index >= self.term_start else None
        else:
            leader = self.leader
        reported_leader, reported_term = self._reported
        if leader != reported_leader or (leader is not None and self.term != reported_term):
            self._reported = (leader, self.term)
            ready.leader_change = LeaderChange(leader, self.term)

    # -- timers ----------------------------------------------------------------------------

    def _arm(self, kind: TimerKind, seconds: float) -> None:
        self._last_token += 1
        self._timer_tokens[kind] = self._last_token
        if self._ready.timers:  # this step armed one already: the newer replaces it
            self._ready.timers = [timer for timer in self._ready.timers if timer.kind is not kind]
        self._ready.timers.append(Timer(kind, seconds, self._last_token))

    def _cancel(self, kind: TimerKind) -> None:
        if self._timer_tokens.pop(kind, None) is not None:
            self._ready.timers = [timer for timer in self._ready.timers if timer.kind is not kind]
            self._ready.timers.append(Timer(kind, None, 0))

    def _arm_election(self) -> None:
        self._arm(TimerKind.ELECTION, self.settings.election_timeout(self.rng))

    def _timer_is_current(self, timer: Timer) -> bool:
        if self._timer_tokens.get(timer.kind) != timer.token:
            return False
        del self._timer_tokens[timer.kind]
        return True

    # -- term, role, log -----------------------------------------------------------------

    def _save_hard_state(self) -> None:
        writes = self._ready.writes
        if writes and isinstance(writes[-1], SaveHardState):
            writes.pop()  # the newer term and vote replace it
        self._write(SaveHardState(self.term, self.vote))

    def _become_follower(self, term: int, leader: str | None) -> None:
        """Follow ``leader`` (``None``: unknown) in ``term``, stepping down from any other role."""
        if term > self.term:
            self.term, self.vote = term, None
            self._save_hard_state()
        if self.role is Role.LEADER:
            for kind in (TimerKind.HEARTBEAT, TimerKind.QUORUM_CHECK, TimerKind.TRANSFER):
                self._cancel(kind)
            self.progress.clear()
            self.transfer_target = None
        self.role, self.leader = Role.FOLLOWER, leader
        self.votes.clear()
        self._arm_election()

    def _write_entries(self, first_index: int, entries: Sequence[Entry]) -> None:
        """Replace the log from ``first_index`` on with ``entries``, here and in storage."""
        truncating = first_index <= self.log.last_index
        self._write(WriteEntries(first_index, tuple(entries)))
        if truncating:
            self.durability.truncated(first_index)
        self.log.write(first_index, entries)
        if truncating and first_index <= self.membership_index:
            self._refresh_membership()
        else:
            for entry in reversed(entries):
                if entry.kind is EntryKind.PEER_STATE:
                    self.membership, self.membership_index = Membership.decode(entry.data), entry.index
                    break

    def _refresh_membership(self) -> None:
        logged, index = self.log.latest_membership(self.log.last_index)
        self.membership, self.membership_index = logged or self.bootstrap, index

    def _has_quorum(self, peers: set[str]) -> bool:
        """Whether ``peers`` hold a quorum of the voters of the membership in force."""
        return len(peers & self.membership.voters) >= self.membership.quorum
