"""Replicated groups on one router (members of one group delivered to one another at once) under a manual
clock: elections, proposals and their failures, snapshots, restarts from a directory, and the state machine's
exceptions recorded rather than raised."""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from fakejs.core.router import Router
from fakejs.jetstream.raft import DirectoryStorage, Entry, LogStorage, MemoryStorage, RaftSettings, Write
from fakejs.jetstream.replication import (
    Compaction,
    GroupStopped,
    InvalidGroupName,
    NotLeader,
    ProposalLost,
    ProposalRefused,
    ReplicatedGroup,
    group_directory,
    member_subject,
    peer_id,
)
from fakejs.testkit.clock import ManualClock

PEERS = ["p1", "p2", "p3"]


class Counter:
    """A state machine adding up the integers proposed; it raises on ``boom``."""

    def __init__(self) -> None:
        self.total = 0
        self.applied: list[int] = []
        self.leaders: list[tuple[str | None, int]] = []
        self.restored = 0

    def apply(self, entries: Sequence[Entry]) -> None:
        for entry in entries:
            if entry.data == b"boom":
                raise RuntimeError("boom")
            self.total += int(entry.data)
            self.applied.append(entry.index)

    def snapshot(self) -> bytes:
        return str(self.total).encode()

    def restore(self, data: bytes) -> None:
        self.total = int(data or b"0")
        self.restored += 1

    def leader_changed(self, leader: str | None, term: int) -> None:
        self.leaders.append((leader, term))


class OneRouter:
    """Three members of group ``g`` on one router: each message reaches its peer at once."""

    def __init__(
        self,
        storages: dict[str, LogStorage] | None = None,
        snapshot_every: int = 0,
        compaction: Compaction | None = None,
    ) -> None:
        self.clock = ManualClock()
        self.router = Router()
        self.errors: list[tuple[str, BaseException]] = []
        self.storages = storages or {peer: MemoryStorage() for peer in PEERS}
        self.machines: dict[str, Counter] = {}
        self.members: dict[str, ReplicatedGroup] = {}
        self.snapshot_every = snapshot_every
        self.compaction = compaction
        for peer in PEERS:
            self.start(peer)

    def start(self, peer: str, storage: LogStorage | None = None) -> ReplicatedGroup:
        if storage is not None:
            self.storages[peer] = storage
        self.machines[peer] = Counter()
        member = ReplicatedGroup(
            "g",
            peer=peer,
            peers=PEERS,
            state_machine=self.machines[peer],
            router=self.router,
            clock=self.clock,
            rng=random.Random(peer),
            storage=self.storages[peer],
            record_error=lambda where, exc: self.errors.append((where, exc)),
            snapshot_every=self.snapshot_every,
            compaction=self.compaction,
        )
        self.members[peer] = member.start()
        return member

    def leader(self) -> ReplicatedGroup:
        self.clock.advance_until(lambda: self.agreed() is not None, 60.0)
        leader = self.agreed()
        assert leader is not None
        return leader

    def agreed(self) -> ReplicatedGroup | None:
        """The leader every running member knows, once they all know the same one."""
        running = [member for member in self.members.values() if not member.stopped]
        leaders = {member.leader for member in running}
        if len(leaders) != 1 or None in leaders:
            return None
        return next((member for member in running if member.is_leader), None)


def test_members_listen_on_their_own_subject_by_peer_id() -> None:
    assert peer_id("n1") == "fjFyEjc1"  # nats-server's getHash("n1")
    assert member_subject("_meta_", "fjFyEjc1") == "$FJRG._meta_.fjFyEjc1"
    for bad in ("", "a.b", "*", ">", "a b"):
        with pytest.raises(InvalidGroupName):
            ReplicatedGroup(
                bad,
                peer="p",
                peers=["p"],
                state_machine=Counter(),
                router=Router(),
                clock=ManualClock(),
                rng=random.Random(0),
                storage=MemoryStorage(),
            )


def test_a_group_logs_under_the_system_account_as_nats_server_lays_it_out() -> None:
    assert group_directory("/data", "$SYS", "_meta_") == "/data/fakejs/$SYS/_js_/_meta_"


async def test_a_leader_is_elected_and_its_proposals_apply_everywhere_in_order() -> None:
    group = OneRouter()
    leader = group.leader()
    assert [machine.leaders[-1] for machine in group.machines.values()] == [(leader.peer, leader.term)] * 3
    futures = [leader.propose(str(value).encode()) for value in (1, 2, 3)]
    indexes = [await future for future in futures]
    assert indexes == sorted(indexes) and len(set(indexes)) == 3
    assert {peer: machine.total for peer, machine in group.machines.items()} == dict.fromkeys(PEERS, 6)
    for machine in group.machines.values():
        assert machine.applied == indexes  # the leader's first entry of its term (its membership) is not applied
    assert group.errors == []


async def test_a_follower_names_the_leader_and_a_step_down_hands_over() -> None:
    group = OneRouter()
    leader = group.leader()
    follower, other = [member for member in group.members.values() if member is not leader]
    with pytest.raises(NotLeader) as refused:
        await follower.propose(b"1")
    assert refused.value.leader == leader.peer
    with pytest.raises(NotLeader):
        follower.step_down()
    with pytest.raises(ProposalRefused):
        leader.step_down("nobody")
    term = leader.term
    leader.step_down(other.peer)
    assert group.leader() is other and other.term > term
    assert await other.propose(b"4") > 0


async def test_stopping_a_member_fails_what_waits_on_it() -> None:
    group = OneRouter()
    leader = group.leader()
    for member in group.members.values():
        if member is not leader:
            member.stop()  # no quorum left: nothing commits
    waiting = leader.propose(b"1")
    assert leader.pending == 1
    leader.stop()
    with pytest.raises(GroupStopped):
        await waiting
    with pytest.raises(GroupStopped):
        await leader.propose(b"2")


async def test_what_is_proposed_soon_in_one_pass_is_appended_at_once_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    group = OneRouter()
    leader = group.leader()
    appended: list[list[bytes]] = []
    propose_many = leader.node.propose_many

    def counted(items: Sequence[bytes]) -> object:
        appended.append(list(items))
        return propose_many(items)

    monkeypatch.setattr(leader.node, "propose_many", counted)
    soon = [leader.propose_soon(str(value).encode()) for value in (1, 2, 3)]
    assert appended == [] and leader.pending == 0  # not yet: the loop has not run its callbacks
    now = leader.propose(b"4")  # what was proposed soon goes first
    assert appended == [[b"1", b"2", b"3"], [b"4"]]
    indexes = [await future for future in [*soon, now]]
    assert indexes == list(range(indexes[0], indexes[0] + 4))
    later = [leader.propose_soon(str(value).encode()) for value in (5, 6)]
    assert [await future for future in later] == [indexes[-1] + 1, indexes[-1] + 2]
    assert appended[2:] == [[b"5", b"6"]]
    for machine in group.machines.values():
        assert machine.applied[-6:] == [*indexes, indexes[-1] + 1, indexes[-1] + 2] and machine.total == 21


async def test_what_is_proposed_soon_fails_as_a_proposal_does_and_with_the_term_it_was_made_in() -> None:
    group = OneRouter()
    leader = group.leader()
    follower, other = [member for member in group.members.values() if member is not leader]
    with pytest.raises(NotLeader):
        await follower.propose_soon(b"1")
    lost = leader.propose_soon(b"1")
    leader.step_down(other.peer)
    assert group.leader() is other  # a new term before the loop ran: it is not proposed in it
    with pytest.raises(ProposalLost):
        await lost
    assert await other.propose_soon(b"2") > 0
    stopped = other.propose_soon(b"3")
    other.stop()
    with pytest.raises(GroupStopped):
        await stopped
    with pytest.raises(GroupStopped):
        await other.propose_soon(b"4")
    assert {machine.total for machine in group.machines.values()} == {2}


async def test_the_state_machine_raising_is_recorded_and_the_group_goes_on() -> None:
    group = OneRouter()
    leader = group.leader()
    await leader.propose(b"boom")
    assert await leader.propose(b"5") > 0
    assert {machine.total for machine in group.machines.values()} == {5}
    assert len(group.errors) == 3  # once on each member
    assert all(where == "replicated group g: state machine apply" for where, _ in group.errors)


class FailingStorage(MemoryStorage):
    def __init__(self) -> None:
        super().__init__()
        self.failing = False

    def write(self, writes: Sequence[Write]) -> None:
        if self.failing:
            raise OSError("no space left on device")
        super().write(writes)


async def test_a_member_whose_store_fails_stops() -> None:
    storages: dict[str, LogStorage] = {peer: FailingStorage() for peer in PEERS}
    group = OneRouter(storages)
    leader = group.leader()
    failing = storages[leader.peer]
    assert isinstance(failing, FailingStorage)
    failing.failing = True
    with pytest.raises(GroupStopped):
        await leader.propose(b"1")
    assert leader.stopped and [where for where, _ in group.errors] == ["replicated group g: storing the log"]


async def test_a_restarted_member_reads_its_directory_and_a_lagging_one_gets_a_snapshot(tmp_path: Path) -> None:
    storages: dict[str, LogStorage] = {peer: DirectoryStorage(str(tmp_path / peer), fsync=False) for peer in PEERS}
    group = OneRouter(storages, snapshot_every=2)
    leader = group.leader()
    lagging = next(member for member in group.members.values() if member is not leader)
    lagging.stop()
    for value in range(1, 6):
        await leader.propose(str(value).encode())
    assert leader.snapshot_index >= 4  # compacted past what the stopped member holds
    term = lagging.term
    restarted = group.start(lagging.peer, DirectoryStorage(str(tmp_path / lagging.peer), fsync=False))
    assert restarted.node.term == term  # its term and vote came back from the directory
    group.clock.advance_until(lambda: group.machines[lagging.peer].total == 15, 10.0)
    assert group.machines[lagging.peer].restored == 1  # the leader's snapshot, then the entries after it
    assert restarted.applied_index == leader.applied_index
    for member in group.members.values():
        member.stop()
    again = group.start(leader.peer, DirectoryStorage(str(tmp_path / leader.peer), fsync=False))
    assert again.snapshot_index == leader.snapshot_index and group.machines[leader.peer].restored == 1


async def test_the_log_stays_bounded_by_entries_or_bytes_and_a_restart_reads_the_snapshot_back(
    tmp_path: Path,
) -> None:
    storages: dict[str, LogStorage] = {peer: DirectoryStorage(str(tmp_path / peer), fsync=False) for peer in PEERS}
    group = OneRouter(storages, compaction=Compaction(entries=50, size=16 * 40))  # 40 one-digit entries weigh that
    leader = group.leader()
    longest = 0
    for value in range(200):
        await leader.propose(str(value % 10).encode())
        group.clock.advance(0.1)  # the followers apply at the leader's next append
        longest = max(longest, *(len(member.node.log.entries) for member in group.members.values()))
    assert longest <= 42  # the bytes' threshold (and a membership entry or two not yet counted)
    assert all(os.path.getsize(tmp_path / peer / "log") < 42 * 64 for peer in PEERS)
    total = sum(value % 10 for value in range(200))
    group.clock.advance_until(lambda: all(machine.total == total for machine in group.machines.values()), 10.0)
    follower = next(member for member in group.members.values() if member is not leader)
    follower.stop()
    restarted = group.start(follower.peer, DirectoryStorage(str(tmp_path / follower.peer), fsync=False))
    assert group.machines[follower.peer].restored == 1 and restarted.node.log.snapshot.index >= 160
    group.clock.advance_until(lambda: group.machines[follower.peer].total == total, 10.0)  # the entries after it
    assert restarted.applied_index == leader.applied_index and group.machines[follower.peer].restored == 1


def test_compaction_counts_entries_or_bytes_and_a_stream_waits_for_its_log_to_outweigh_its_snapshot() -> None:
    assert not Compaction().due(10**6, 10**9)  # no threshold: only when asked
    both = Compaction(entries=10, size=1000)
    assert not both.due(9, 999) and both.due(10, 0) and both.due(1, 1000)
    stream = Compaction(entries=10, size=1000, outweigh_snapshot=True)  # its snapshot holds every message
    assert not stream.due(10, 900, snapshot_size=5000) and not stream.due(4000, 4999, snapshot_size=5000)
    assert stream.due(4000, 5000, snapshot_size=5000) and stream.due(10, 10, snapshot_size=0)
    with pytest.raises(ValueError):
        Compaction(entries=-1)


def test_the_election_timer_is_drawn_from_the_settings_on_the_clock() -> None:
    settings = RaftSettings(election_timeout_min=0.2, election_timeout_max=0.4, heartbeat_interval=0.05)
    clock = ManualClock()
    member = ReplicatedGroup(
        "g",
        peer="p1",
        peers=PEERS,
        state_machine=Counter(),
        router=Router(),
        clock=clock,
        rng=random.Random(1),
        storage=MemoryStorage(),
        settings=settings,
    ).start()
    deadline = clock.next_deadline()
    assert deadline is not None and 0.2 <= deadline < 0.4
    member.stop()
    assert clock.next_deadline() is None  # a stopped member leaves no timer behind


class Stopping(Counter):
    """A state machine that stops its own member from ``apply``."""

    member: ReplicatedGroup | None = None

    def apply(self, entries: Sequence[Entry]) -> None:
        super().apply(entries)
        if self.member is not None:
            self.member.stop()


async def test_a_state_machine_may_stop_its_member_while_it_applies() -> None:
    group = OneRouter()
    leader = group.leader()
    machine = Stopping()
    follower = next(member for member in group.members.values() if member is not leader)
    follower.state_machine = machine
    machine.member = follower
    await leader.propose(b"2")
    group.clock.advance_until(lambda: follower.stopped, 5.0)
    assert machine.total == 2 and group.errors == []
    assert await leader.propose(b"3") > 0  # two members of three still commit
