"""A deterministic network of Raft nodes under virtual time, for the tests.

:class:`Simulation` runs N :class:`~fakejs.jetstream.raft.RaftNode` objects
with one seeded ``random.Random``: every message goes through
:func:`~fakejs.jetstream.raft.encode` and ``receive_bytes``, after a seeded
delay, and may be dropped, duplicated or held back long enough to arrive out
of order (:class:`Faults`); a partition cuts the links between groups.  Writes
reach a node's store after a seeded delay; a crash loses the node object, its
timers, the messages it had not sent, and every write not yet stored except a
random prefix of them (a crash in the middle of writing).  A restart builds a
new node from what the store kept.  :class:`~tests.unit.raft.invariants.Invariants`
watches every step.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import msgpack

from fakejs.jetstream.raft import (
    Accepted,
    Entry,
    EntryKind,
    LogStorage,
    MemoryStorage,
    RaftNode,
    RaftSettings,
    Ready,
    Role,
    Snapshot,
    Timer,
    TimerKind,
    Write,
    encode,
)
from tests.unit.raft.invariants import Invariants


@dataclass
class Faults:
    """What the network and the disks do to a run; all draws come from the simulation's one ``rng``."""

    drop: float = 0.0
    duplicate: float = 0.0
    late: float = 0.0  # the chance a message is held back up to ``late_delay``, arriving out of order
    min_delay: float = 0.001
    max_delay: float = 0.02
    late_delay: float = 2.0
    max_write_delay: float = 0.01


@dataclass
class StateMachine:
    """What one incarnation of a node applied: the bytes of each normal entry, by index."""

    applied_index: int = 0
    values: dict[int, tuple[int, bytes]] = field(default_factory=dict)

    def snapshot_data(self) -> bytes:
        data: bytes = msgpack.packb([[index, term, value] for index, (term, value) in sorted(self.values.items())])
        return data

    def restore(self, snapshot: Snapshot) -> None:
        self.values = {index: (term, value) for index, term, value in msgpack.unpackb(snapshot.data)}
        self.applied_index = snapshot.index


@dataclass
class SimNode:
    """One member: its store (kept across crashes), and while up, its node, timers and pending writes."""

    id: str
    storage: LogStorage
    peers: list[str]
    node: RaftNode | None = None
    incarnation: int = 0
    timers: dict[TimerKind, Timer] = field(default_factory=dict)
    pending: list[tuple[int, list[Write]]] = field(default_factory=list)
    machine: StateMachine = field(default_factory=StateMachine)


class Simulation:
    """N nodes, a virtual clock, a seeded network; see the module docstring."""

    def __init__(
        self,
        size: int = 3,
        seed: int = 0,
        faults: Faults | None = None,
        settings: RaftSettings | None = None,
        storage: Callable[[str], LogStorage] | None = None,
        compact_every: int = 0,
        peers: Iterable[str] | None = None,
    ) -> None:
        self.rng = random.Random(seed)
        self.faults = faults or Faults()
        self.settings = settings or RaftSettings()
        self.compact_every = compact_every
        ids = [f"n{number}" for number in range(1, size + 1)]
        self.peers = list(ids if peers is None else peers)
        self.make_storage = storage or (lambda _name: MemoryStorage())
        self.nodes = {name: SimNode(name, self.make_storage(name), self.peers) for name in ids}
        self.now = 0.0
        self._queue: list[tuple[float, int, Callable[[], None]]] = []
        self._sequence = itertools.count()
        self.blocked: set[frozenset[str]] = set()
        in_memory = storage is None and self.peers == ids  # then the stores can be counted (Invariants.copies)
        self.invariants = Invariants(self.copies, len(ids) // 2 + 1) if in_memory else Invariants()
        self.accepted: list[Accepted] = []
        self.sent: Counter[str] = Counter()  # messages sent, by type name
        for name in ids:
            self.start(name)

    # -- the clock -----------------------------------------------------------------------

    def at(self, delay: float, action: Callable[[], None]) -> None:
        heapq.heappush(self._queue, (self.now + delay, next(self._sequence), action))

    def run_for(self, seconds: float) -> None:
        self.run_until(lambda: False, seconds)

    def run_until(self, condition: Callable[[], bool], seconds: float) -> bool:
        """Run events until ``condition`` holds (checked after each) or ``seconds`` of virtual time pass."""
        deadline = self.now + seconds
        while not condition():
            if not self._queue or self._queue[0][0] > deadline:
                self.now = deadline
                return condition()
            when, _, action = heapq.heappop(self._queue)
            self.now = when
            action()
        return True

    # -- lifecycle -------------------------------------------------------------------------

    def add_node(self, name: str) -> None:
        """Start a node that joins the running group: it knows no peers until the log tells it."""
        self.nodes[name] = SimNode(name, self.make_storage(name), [])
        self.start(name)

    def start(self, name: str) -> None:
        member = self.nodes[name]
        member.incarnation += 1
        member.machine = StateMachine()
        member.node = RaftNode(
            name,
            member.storage.load(),
            rng=random.Random(self.rng.random()),
            peers=member.peers,
            settings=self.settings,
        )
        self.handle(member, member.node.start())

    def crash(self, name: str) -> None:
        """Kill the node: it stops, and only a random prefix of its pending writes reaches its store."""
        member = self.nodes[name]
        if member.node is None:
            return
        writes = [write for _, batch in member.pending for write in batch]
        member.storage.write(writes[: self.rng.randint(0, len(writes))])
        member.node, member.pending, member.timers = None, [], {}

    def restart(self, name: str) -> None:
        if self.nodes[name].node is None:
            self.start(name)

    def partition(self, *groups: Iterable[str]) -> None:
        """Cut every link between members of different ``groups`` (nodes in no group are cut from all)."""
        side = {name: number for number, group in enumerate(groups) for name in group}
        self.blocked = {
            frozenset(pair)
            for pair in itertools.combinations(self.nodes, 2)
            if pair[0] not in side or side.get(pair[0]) != side.get(pair[1])
        }

    def heal(self) -> None:
        self.blocked = set()

    # -- reading -------------------------------------------------------------------------

    def copies(self, index: int, term: int) -> int:
        """How many in-memory stores hold entry ``index`` of ``term``, or a snapshot that covers it."""
        count = 0
        for member in self.nodes.values():
            if isinstance(member.storage, MemoryStorage):
                log = member.storage.log
                count += log.snapshot.index >= index or log.term_at(index) == term
        return count

    def up(self) -> list[RaftNode]:
        return [member.node for member in self.nodes.values() if member.node is not None]

    def leader(self) -> RaftNode | None:
        """The node that leads in the highest term, if one does."""
        leaders = [node for node in self.up() if node.role is Role.LEADER]
        return max(leaders, key=lambda node: node.term) if leaders else None

    def node(self, name: str) -> RaftNode:
        node = self.nodes[name].node
        assert node is not None, f"{name} is down"
        return node

    # -- inputs ------------------------------------------------------------------------------

    def propose(self, data: bytes, to: str | None = None) -> Ready | None:
        """Propose ``data`` to ``to`` (default: the leader); ``None`` when there is nobody to take it."""
        target = self.node(to) if to is not None else self.leader()
        if target is None:
            return None
        return self.act(target.id, lambda node: node.propose(data))

    def act(self, name: str, action: Callable[[RaftNode], Ready]) -> Ready:
        member = self.nodes[name]
        assert member.node is not None
        ready = action(member.node)
        self.handle(member, ready)
        return ready

    # -- outputs -----------------------------------------------------------------------------

    def handle(self, member: SimNode, ready: Ready) -> None:
        node = member.node
        assert node is not None
        if ready.writes:
            assert ready.ticket is not None
            member.pending.append((ready.ticket, list(ready.writes)))
            self._after_write(member, ready.ticket)
        for envelope in ready.messages:
            self.sent[type(envelope.message).__name__] += 1
            self._send(member.id, envelope.to, encode(envelope.message))
        for timer in ready.timers:
            self._arm(member, timer)
        if ready.restore is not None:
            member.machine.restore(ready.restore)
            self.invariants.restored(member.id, ready.restore, member.machine.values)
        for entry in ready.committed:
            self._apply(member, entry)
        if isinstance(ready.outcome, Accepted):
            self.accepted.append(ready.outcome)
        self.invariants.stepped(node)
        if self.compact_every and node.applied_index - node.log.snapshot.index >= self.compact_every:
            self.handle(member, node.compact(node.applied_index, member.machine.snapshot_data()))

    def _apply(self, member: SimNode, entry: Entry) -> None:
        machine = member.machine
        assert entry.index == machine.applied_index + 1, (
            f"{member.id} applied {entry.index} after {machine.applied_index}"
        )
        machine.applied_index = entry.index
        if entry.kind is EntryKind.NORMAL:
            machine.values[entry.index] = (entry.term, entry.data)
        self.invariants.applied(member.id, entry)

    def _after_write(self, member: SimNode, ticket: int) -> None:
        incarnation = member.incarnation

        def stored() -> None:
            if member.incarnation != incarnation or member.node is None:
                return
            while member.pending and member.pending[0][0] <= ticket:
                member.storage.write(member.pending.pop(0)[1])
            self.handle(member, member.node.persisted(ticket))

        self.at(self.rng.uniform(0, self.faults.max_write_delay), stored)

    def _arm(self, member: SimNode, timer: Timer) -> None:
        if timer.seconds is None:
            member.timers.pop(timer.kind, None)
            return
        member.timers[timer.kind] = timer
        incarnation = member.incarnation

        def fire() -> None:
            if member.incarnation == incarnation and member.node is not None and member.timers.get(timer.kind) is timer:
                del member.timers[timer.kind]
                self.handle(member, member.node.timer_fired(timer))

        self.at(timer.seconds, fire)

    def _send(self, sender: str, to: str, data: bytes) -> None:
        faults = self.faults
        copies = 2 if self.rng.random() < faults.duplicate else 1
        for _ in range(copies):
            if self.rng.random() < faults.drop:
                continue
            delay = self.rng.uniform(faults.min_delay, faults.max_delay)
            if self.rng.random() < faults.late:
                delay += self.rng.uniform(0, faults.late_delay)
            self.at(delay, lambda: self._deliver(sender, to, data))

    def _deliver(self, sender: str, to: str, data: bytes) -> None:
        member = self.nodes.get(to)
        if member is None or member.node is None or frozenset((sender, to)) in self.blocked:
            return
        self.handle(member, member.node.receive_bytes(data))
