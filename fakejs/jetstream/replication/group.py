"""One member of one replicated group on a server: a :class:`~fakejs.jetstream.raft.RaftNode` driven over the routes.

:class:`ReplicatedGroup` feeds the node what comes in (a peer's message on the
member's subject, a timer firing on the server's clock, a proposal or a
step-down from its caller) and acts on each
:class:`~fakejs.jetstream.raft.Ready` the node hands back, in the order the
node asks for:

1. the writes go to the log store, synchronously on the server's loop (a
   directory store syncs them to disk before it returns), and only then is
   the node told ``persisted(ticket)``: what it held back behind them (a
   vote, an acknowledgement) comes out of that call;
2. the messages are published to the peers' subjects;
3. the timers are armed on the clock;
4. a snapshot is restored into the state machine, then the committed entries
   are applied to it, and the proposals waiting on them are settled;
5. a change of leader is told to the state machine.

**Lost quorum.**  As nats-server's Raft tells its upper layer when a group
lost its quorum, the member calls ``on_quorum_lost`` (when set) when it
stops leading while it reaches no quorum of voters, and when its election
timer fires while it reaches none, once it has reached none for
:data:`QUORUM_LOST_INTERVAL` seconds (``lostQuorumInterval``: from when it
was told of lost peers or first saw none), at most once each
:data:`QUORUM_LOST_SIGNAL` seconds (``lostQuorumSignal``).  A voter is
reached when a message to it would find it (a route to its server is up).

Readies are acted on one at a time in the order the node made them: one
made while another is being acted on (a state machine that proposes from
``apply``, a message delivered on the same server) waits its turn, so entries
are applied in log order.  An exception inside the state machine is recorded
as a server error and the group goes on; a write the store refuses is
recorded and stops the member, which must not go on with a log it could
not keep.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from collections.abc import Callable, Iterable, Sequence

from fakejs.core.clock import Clock, ErrorSink
from fakejs.core.log import get_logger
from fakejs.jetstream.raft import (
    ENTRY_OVERHEAD,
    Accepted,
    AppendResponse,
    Entry,
    EntryKind,
    LeaderChange,
    LogStorage,
    Message,
    Outcome,
    RaftNode,
    RaftSettings,
    Ready,
    Refused,
    Snapshot,
    Timer,
    TimerKind,
    VoteResponse,
    Write,
)
from fakejs.jetstream.replication.compaction import Compaction
from fakejs.jetstream.replication.errors import GroupStopped, NotLeader, ProposalFailed, ProposalLost, ProposalRefused
from fakejs.jetstream.replication.exchange import LocalWire
from fakejs.jetstream.replication.proposals import PendingProposals
from fakejs.jetstream.replication.state_machine import StateMachine
from fakejs.jetstream.replication.stores import close_storage
from fakejs.jetstream.replication.subjects import check_group_name
from fakejs.jetstream.replication.timers import NodeTimers
from fakejs.jetstream.replication.transport import Transport, TransportCounters, Wire

QUORUM_LOST_SIGNAL = 20.0  # seconds between two signals of a lost quorum (nats-server's lostQuorumSignal)
QUORUM_LOST_INTERVAL = 10.0  # seconds without a quorum before it is signalled (nats-server's lostQuorumInterval)


def _fail_batch(futures: Iterable[asyncio.Future[int]], error: ProposalFailed) -> None:
    """Fail each proposal still waiting (one its proposer cancelled is left as it is)."""
    for future in futures:
        if not future.done():
            future.set_exception(error)


def _log_error(where: str, exc: BaseException) -> None:
    get_logger().error("%s failed", where, exc_info=exc)


class ReplicatedGroup:
    """The member ``peer`` (a peer id) of the group ``name``, replicating into ``state_machine``.

    ``peers`` are the group's first voters (``peer`` among them; a member
    joining a running group passes none); ``router`` is the system account's (or an in-process exchange's wire),
    ``clock`` the server's, ``rng`` a generator derived from the server's
    seeded one, ``storage`` the member's log store (see
    :mod:`~fakejs.jetstream.replication.stores`).  ``record_error`` receives
    what the state machine raised (the server's ``record_error``).  The state
    machine is snapshotted and the log compacted each time the entries applied
    since the last snapshot reach ``compaction``'s thresholds (by count or by
    bytes, see :mod:`~fakejs.jetstream.replication.compaction`), or, with
    ``snapshot_every``, that many entries (never, without either).
    :meth:`start` sets it going; :func:`~fakejs.jetstream.replication.hosting.start_group`
    builds and starts one from a server.
    """

    def __init__(
        self,
        name: str,
        *,
        peer: str,
        peers: Iterable[str],
        state_machine: StateMachine,
        router: Wire,
        clock: Clock,
        rng: random.Random,
        storage: LogStorage,
        settings: RaftSettings | None = None,
        record_error: ErrorSink | None = None,
        snapshot_every: int = 0,
        compaction: Compaction | None = None,
    ) -> None:
        self.name = check_group_name(name)
        self.peer = peer
        self.state_machine = state_machine
        self.storage = storage
        self.compaction = compaction if compaction is not None else Compaction(entries=snapshot_every)
        self._record_error = record_error or _log_error
        self.node = RaftNode(peer, storage.load(), rng=rng, peers=peers, settings=settings)
        self.leader: str | None = None  # the member known to lead (reported by the node), and its term
        self.term = 0
        self.applied_index = 0  # the last entry applied to the state machine
        self.snapshot_index = 0  # what the last snapshot (made here or restored) covers
        self.applied_since_snapshot = 0  # entries applied since that snapshot, and their bytes
        self.bytes_since_snapshot = 0
        self.snapshot_size = 0  # the bytes of that snapshot
        self.stopped = False
        self.heard: dict[str, float] = {}  # the clock's time each peer last answered this member
        self._pending = PendingProposals()
        self._queue: deque[Ready] = deque()
        self._batch: list[tuple[bytes, asyncio.Future[int]]] = []  # proposed with propose_soon, not yet appended
        self._batch_term = 0  # the node's term when the first of them was proposed
        self._acting = False
        self._timers = NodeTimers(clock, self._timer_fired)
        self.transport = Transport(router, self.name, peer, self._received)
        self.clock = clock
        self.created = clock.monotonic()  # nats-server's node.Created()
        self.on_quorum_lost: Callable[[], None] | None = None
        self._quorum_signalled: float | None = None  # the clock's time of the last signal
        self._quorum_missing_since: float | None = None  # the clock's time this member was seen without a quorum

    def start(self) -> ReplicatedGroup:
        """The node's first step: restore its snapshot, arm its election timer (a sole voter leads at once)."""
        self._handle(self.node.start())
        return self

    # -- for callers -------------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        """Whether this member leads and has applied everything committed before its term (it may serve)."""
        return not self.stopped and self.leader == self.peer

    @property
    def counters(self) -> TransportCounters:
        return self.transport.counters

    @property
    def pending(self) -> int:
        """Proposals accepted here and not yet applied."""
        return len(self._pending)

    def propose(self, data: bytes) -> asyncio.Future[int]:
        """Propose ``data``; the future resolves with its log index once it is committed and applied here.

        It fails at once with :class:`~fakejs.jetstream.replication.errors.NotLeader` on a member that does
        not lead, or :class:`~fakejs.jetstream.replication.errors.ProposalRefused`; later with
        :class:`~fakejs.jetstream.replication.errors.ProposalLost` or
        :class:`~fakejs.jetstream.replication.errors.GroupStopped`.  Call it on the server's loop.
        """
        return self._submit(lambda: self.node.propose(data))

    def propose_soon(self, data: bytes) -> asyncio.Future[int]:
        """Propose ``data`` with the others proposed this way in the same pass of the loop, as one append.

        They become consecutive entries in the order proposed (nats-server's consumer queues its proposals and
        forwards them with one ``ProposeMulti``), appended when the loop next runs its callbacks, or before a
        :meth:`propose` (which keeps the order).  Those of a term that ended before they were appended fail with
        :class:`~fakejs.jetstream.replication.errors.ProposalLost`; otherwise the future settles as
        :meth:`propose`'s does.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[int] = loop.create_future()
        if self.stopped:
            future.set_exception(GroupStopped(f"group {self.name} is stopped here"))
            return future
        if self._batch and self._batch_term != self.node.term:
            self._propose_batch()
        if not self._batch:
            self._batch_term = self.node.term
            loop.call_soon(self._propose_batch)
        self._batch.append((data, future))
        return future

    def _propose_batch(self) -> None:
        """Append what :meth:`propose_soon` gathered, in one call of the node."""
        batch, self._batch = self._batch, []
        if not batch or self.stopped:
            return  # a stopped member failed them
        if self._batch_term != self.node.term:
            _fail_batch(
                (future for _, future in batch),
                ProposalLost(f"group {self.name}: term {self._batch_term} ended before they were proposed"),
            )
            return
        self._track(self.node.propose_many([data for data, _ in batch]), [future for _, future in batch])

    def add_peer(self, peer: str, *, voter: bool = True) -> asyncio.Future[int]:
        """Propose the membership with ``peer`` (a peer id) as a voter, or an observer (leader only).

        The future resolves with the index of the membership entry once it is committed and applied here
        (the peer counts in quorums from the moment the leader logs it, as the node does); it fails as
        :meth:`propose` does, with :class:`~fakejs.jetstream.replication.errors.ProposalRefused` while
        another change is under way, or for a membership that would not change.  One change at a time,
        as nats-server's ``ProposeAddPeer``.
        """
        return self._submit(lambda: self.node.add_peer(peer, voter=voter))

    def remove_peer(self, peer: str) -> asyncio.Future[int]:
        """Propose the membership without ``peer`` (nats-server's ``ProposeRemovePeer``); as :meth:`add_peer`.

        A leader that removes itself leads until the change commits, then steps down.
        """
        return self._submit(lambda: self.node.remove_peer(peer))

    @property
    def voters(self) -> frozenset[str]:
        """The voters of the membership in force here (the last one logged)."""
        return self.node.membership.voters

    @property
    def members(self) -> frozenset[str]:
        """Every peer of the membership in force here, voters and observers."""
        return self.node.membership.members

    def _submit(self, request: Callable[[], Ready]) -> asyncio.Future[int]:
        """Hand the node a request that appends an entry; the future settles as the entry is applied."""
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        if self.stopped:
            future.set_exception(GroupStopped(f"group {self.name} is stopped here"))
            return future
        if self._batch:
            self._propose_batch()  # what was proposed before goes first
        self._track(request(), [future])
        return future

    def _track(self, ready: Ready, futures: list[asyncio.Future[int]]) -> None:
        """Settle each future as its entry (the ones ``ready`` appended, in order) is applied, or fail them all
        with the node's refusal; then act on ``ready``."""
        outcome = ready.outcome
        if isinstance(outcome, Accepted):
            for offset, future in enumerate(futures):
                self._pending.add(outcome.first_index + offset, outcome.term, future)
        else:
            _fail_batch(futures, self._failure(outcome))
        self._handle(ready)

    def step_down(self, preferred: str | None = None) -> None:
        """Hand leadership over to ``preferred`` (a peer id) or the best placed voter (nats-server's ``StepDown``).

        Raises :class:`~fakejs.jetstream.replication.errors.NotLeader` on a member that does not lead,
        :class:`~fakejs.jetstream.replication.errors.ProposalRefused` for a peer that is not another voter.
        """
        if self.stopped:
            raise GroupStopped(f"group {self.name} is stopped here")
        ready = self.node.step_down(preferred)
        outcome = ready.outcome
        self._handle(ready)
        if outcome is not None and not isinstance(outcome, Accepted):
            raise self._failure(outcome)

    def first_to_act(self, request: str) -> bool:
        """Whether this member is the first of its group to act on ``request`` (a request's reply subject).

        Every server hears a request and its group's leader acts on it; in one process, a hand-over of
        leadership is quicker than a route, so the member handed over to could hear the request it was handed
        over for, and act on it again: the servers of one process note who acted first (across processes, as
        between nats-server's servers, the first leader to hear it is the only one).
        """
        router = self.transport.router
        return not request or not isinstance(router, LocalWire) or router.exchange.claim(self.name, request)

    def campaign(self) -> None:
        """Campaign now (a pre-vote round first), unless this member leads or is stopped."""
        if not self.stopped and not self.node.is_leader:
            self._handle(self.node.campaign())

    def peers_lost(self, peers: Iterable[str]) -> None:
        """Tell the node ``peers`` are gone (see :meth:`~fakejs.jetstream.raft.RaftNode.peers_lost`)."""
        if not self.stopped:
            self._handle(self.node.peers_lost(peers))
            self._without_quorum_for()  # from now on, a quorum is missing

    def campaign_soon(self, immediately: bool = False) -> None:
        """Campaign after a campaign timeout (see :meth:`~fakejs.jetstream.raft.RaftNode.campaign_soon`), unless
        this member leads or is stopped."""
        if not self.stopped and not self.node.is_leader:
            self._handle(self.node.campaign_soon(immediately))

    def compact(self) -> None:
        """Snapshot the state machine now and drop the log it covers."""
        if self.stopped or self.applied_index <= self.node.log.snapshot.index:
            return
        try:
            data = self.state_machine.snapshot()
        except Exception as exc:  # noqa: BLE001 - recorded on the server; the log stays as it is
            self._record_error(f"replicated group {self.name}: state machine snapshot", exc)
            return
        self._snapshotted(self.applied_index, len(data))
        self._handle(self.node.compact(self.applied_index, data))

    def reaches(self, peer: str) -> bool:
        """Whether a message to ``peer`` would find it now."""
        return self.transport.reaches(peer)

    def has_quorum(self) -> bool:
        """Whether this member reaches a quorum of the group's voters (itself included)."""
        voters = self.node.membership.voters
        reached = sum(1 for voter in voters if voter == self.peer or self.reaches(voter))
        return reached >= len(voters) // 2 + 1

    def _without_quorum_for(self) -> float | None:
        """How long this member has reached no quorum of voters, as far as it looked (None: it reaches one)."""
        now = self.clock.monotonic()
        if self.has_quorum():
            self._quorum_missing_since = None
            return None
        if self._quorum_missing_since is None:
            self._quorum_missing_since = now
        return now - self._quorum_missing_since

    def _signal_lost_quorum(self) -> None:
        """Tell ``on_quorum_lost`` when this member has reached no quorum for a while (see the module docstring)."""
        if self.on_quorum_lost is None or self.stopped:
            return
        missing = self._without_quorum_for()
        if missing is None or missing < QUORUM_LOST_INTERVAL:
            return
        now = self.clock.monotonic()
        if self._quorum_signalled is not None and now - self._quorum_signalled < QUORUM_LOST_SIGNAL:
            return
        self._quorum_signalled = now
        self._call("quorum lost", self.on_quorum_lost)

    def stop(self) -> None:
        """Stop as a crash would: no more messages or timers; proposals not yet applied fail."""
        if self.stopped:
            return
        self.stopped = True
        self._queue.clear()
        self._timers.cancel_all()
        self.transport.close()
        self._pending.fail_all(GroupStopped(f"group {self.name} stopped here"))
        batch, self._batch = self._batch, []
        _fail_batch((future for _, future in batch), GroupStopped(f"group {self.name} stopped here"))
        close_storage(self.storage)

    def _failure(self, outcome: Outcome | None) -> ProposalFailed:
        if isinstance(outcome, Refused):
            return ProposalRefused(outcome.reason)
        if outcome is None or isinstance(outcome, Accepted):
            return ProposalRefused("the node gave no answer")
        return NotLeader(outcome.leader)

    # -- inputs ------------------------------------------------------------------------------------

    def _received(self, data: bytes | Message) -> None:
        if self.stopped:
            return
        message = self.node.decode(data) if isinstance(data, bytes) else data
        if message is None:
            return
        if isinstance(message, AppendResponse | VoteResponse):  # nats-server's trackPeer
            self.heard[message.sender] = self.clock.monotonic()
        self._handle(self.node.receive(message))

    def last_heard(self, peer: str) -> float | None:
        """Seconds since ``peer`` last answered this member (an append's or a vote's response), ``None`` if never."""
        heard = self.heard.get(peer)
        return None if heard is None else max(self.clock.monotonic() - heard, 0.0)

    def _timer_fired(self, timer: Timer) -> None:
        if not self.stopped:
            if timer.kind is TimerKind.ELECTION and self.leader != self.peer:
                self._signal_lost_quorum()  # nats-server's candidate signals it as it campaigns
            self._handle(self.node.timer_fired(timer))

    # -- acting on the node's output ---------------------------------------------------------------

    def _handle(self, ready: Ready) -> None:
        """Act on ``ready`` now, or after the one being acted on (outputs are acted on in the order made)."""
        if ready.empty:
            return
        self._queue.append(ready)
        if self._acting:
            return
        self._acting = True
        try:
            while self._queue and not self.stopped:
                self._act(self._queue.popleft())
        finally:
            self._acting = False

    def _act(self, ready: Ready) -> None:
        if ready.writes:
            if not self._store(ready.writes):
                return
            assert ready.ticket is not None
            self._queue.append(self.node.persisted(ready.ticket))  # what waited for these writes
        for envelope in ready.messages:
            self.transport.send(envelope.to, envelope.message)
        if ready.timers:
            self._timers.arm(ready.timers)
        if ready.restore is not None:
            self._restore(ready.restore)
        if ready.committed and not self.stopped:  # a state machine may stop its member
            self._apply(ready.committed)
        if ready.leader_change is not None and not self.stopped:
            self._leader_changed(ready.leader_change)

    def _store(self, writes: Sequence[Write]) -> bool:
        """Make ``writes`` durable; a store that fails stops the member (it cannot keep its promises)."""
        try:
            self.storage.write(writes)
        except Exception as exc:  # noqa: BLE001 - recorded on the server; the member stops rather than lie
            self._record_error(f"replicated group {self.name}: storing the log", exc)
            self.stop()
            return False
        return True

    def _restore(self, snapshot: Snapshot) -> None:
        self._call("restore", self.state_machine.restore, snapshot.data)
        self.applied_index = snapshot.index
        self._snapshotted(snapshot.index, len(snapshot.data))
        self._pending.restored(snapshot.index)

    def _snapshotted(self, index: int, size: int) -> None:
        self.snapshot_index, self.snapshot_size = index, size
        self.applied_since_snapshot = self.bytes_since_snapshot = 0

    def _apply(self, entries: list[Entry]) -> None:
        normal = []
        for entry in entries:
            self.bytes_since_snapshot += len(entry.data) + ENTRY_OVERHEAD
            if entry.kind is EntryKind.NORMAL:
                normal.append(entry)
        if normal:
            self._call("apply", self.state_machine.apply, normal)
        self.applied_index = entries[-1].index
        self._note_applied()
        self._pending.applied(entries)
        self.applied_since_snapshot += len(entries)
        if self.compaction.due(self.applied_since_snapshot, self.bytes_since_snapshot, self.snapshot_size):
            self.compact()

    def _note_applied(self) -> None:
        """Tell the store how far this member applied (a restart hands those entries out at once)."""
        try:
            self.storage.note_applied(self.applied_index)
        except OSError as exc:  # only a hint lost: recorded, the member goes on
            self._record_error(f"replicated group {self.name}: noting the applied index", exc)

    def _leader_changed(self, change: LeaderChange) -> None:
        stepped_down = self.leader == self.peer and change.leader != self.peer
        self.leader, self.term = change.leader, change.term
        self._call("leader_changed", self.state_machine.leader_changed, change.leader, change.term)
        if stepped_down:
            self._signal_lost_quorum()

    def _call(self, what: str, method: Callable[..., object], *args: object) -> None:
        try:
            method(*args)
        except Exception as exc:  # noqa: BLE001 - recorded on the server; the group goes on
            self._record_error(f"replicated group {self.name}: state machine {what}", exc)

    def __repr__(self) -> str:
        return f"<ReplicatedGroup {self.name!r} {self.peer} leader={self.leader} term={self.term}>"
