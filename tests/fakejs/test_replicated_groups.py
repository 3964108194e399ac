"""A replicated group across three servers routed together: its members speak over the routes, in the system
account.  A leader is elected and serves, a killed leader is replaced and comes back caught up, a partition
leaves only the majority serving, and under a manual clock with a seed a run replays exactly."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from fakejs.core.clock import Clock
from fakejs.jetstream.raft import Entry, RaftSettings
from fakejs.jetstream.replication import (
    NotLeader,
    ProposalFailed,
    ReplicatedGroup,
    group_directory,
    member_subject,
    peer_id,
    start_group,
)
from fakejs.server.local_cluster import Cluster
from fakejs.testkit.clock import ManualClock
from tests.harness.replicated import FAST, WAIT, wait

pytestmark = pytest.mark.cluster

GROUP = "counter"


class Counter:
    """A state machine adding up the integers proposed, remembering every leader it was told of."""

    def __init__(self) -> None:
        self.total = 0
        self.leaders: list[tuple[str | None, int]] = []
        self.restored: list[int] = []  # the totals snapshots brought

    def apply(self, entries: Sequence[Entry]) -> None:
        for entry in entries:
            if entry.data == b"boom":
                raise RuntimeError("boom")
            self.total += int(entry.data)

    def snapshot(self) -> bytes:
        return str(self.total).encode()

    def restore(self, data: bytes) -> None:
        self.total = int(data or b"0")
        self.restored.append(self.total)

    def leader_changed(self, leader: str | None, term: int) -> None:
        self.leaders.append((leader, term))


class Members:
    """The member of the group on each server of ``cluster``, its counter, and failures on cue."""

    def __init__(self, cluster: Cluster, store: Path | None, settings: RaftSettings | None, **options: Any) -> None:
        self.cluster = cluster
        self.store = store
        self.settings = settings
        self.options = options
        self.peers = [peer_id(server.broker.name) for server in cluster.servers]
        self.groups: dict[str, ReplicatedGroup] = {}
        self.counters: dict[str, Counter] = {}

    def start(self, name: str) -> ReplicatedGroup:
        self.counters[name] = Counter()
        store = None if self.store is None else str(self.store / name)
        self.groups[name] = start_group(
            self.cluster.server(name).broker,
            GROUP,
            self.peers,
            self.counters[name],
            store_dir=store,
            settings=self.settings,
            fsync=False,
            **self.options,
        )
        return self.groups[name]

    def start_all(self) -> Members:
        for server in self.cluster.servers:
            self.start(server.broker.name)
        return self

    def stop_all(self) -> None:
        for group in self.groups.values():
            group.stop()

    async def kill(self, name: str) -> None:
        """The server crashes, and its member with it."""
        self.groups[name].stop()
        await self.cluster.kill(name)

    async def restart(self, name: str) -> ReplicatedGroup:
        await self.cluster.restart(name)
        return self.start(name)

    def running(self) -> list[str]:
        return [name for name, group in self.groups.items() if not group.stopped]

    def leader(self, among: Sequence[str] | None = None) -> str | None:
        """The server whose member leads, once every member of ``among`` (the running ones) knows it."""
        names = list(among) if among is not None else self.running()
        leaders = {self.groups[name].leader for name in names}
        if len(leaders) != 1 or None in leaders:
            return None
        return next((name for name in names if self.groups[name].is_leader), None)

    def name_of(self, peer: str | None) -> str:
        return next(name for name, group in self.groups.items() if group.peer == peer)

    def totals(self, names: Sequence[str] | None = None) -> set[int]:
        return {self.counters[name].total for name in (names if names is not None else self.running())}

    async def commit(self, value: int, among: Sequence[str] | None = None) -> int:
        """Propose ``value`` through the leader (found again if it changes meanwhile); its index once applied."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT
        while True:
            leader = await wait(lambda: self.leader(among))
            try:
                return await self.groups[leader].propose(str(value).encode())
            except ProposalFailed:
                if loop.time() > deadline:
                    raise


def meshed(members: Members) -> bool:
    """Every running member reaches every other running member (their subscriptions crossed the routes)."""
    running = members.running()
    return all(members.groups[a].reaches(members.groups[b].peer) for a in running for b in running if a != b)


async def test_a_leader_serves_and_proposals_apply_on_every_server(tmp_path: Path) -> None:
    async with Cluster(size=3, seed=1) as cluster:
        members = Members(cluster, tmp_path, FAST).start_all()
        try:
            leader = await wait(members.leader)
            assert members.groups["n1"].transport.subject == member_subject(GROUP, peer_id("n1"))
            assert members.groups["n1"].transport.subject == "$FJRG.counter.fjFyEjc1"
            for value in (1, 2, 3):
                await members.commit(value)
            await wait(lambda: members.totals() == {6})
            leader = await wait(members.leader)
            follower = next(name for name in members.groups if name != leader)
            with pytest.raises(NotLeader) as refused:
                await members.groups[follower].propose(b"4")
            assert refused.value.leader == members.groups[leader].peer
            system = cluster.server("n1").options.system_account or "$SYS"
            assert (Path(group_directory(str(tmp_path / "n1"), system, GROUP)) / "log").is_file()
            assert sum(group.counters.received for group in members.groups.values()) > 0
        finally:
            members.stop_all()
        assert cluster.errors == []


async def test_a_killed_leader_is_replaced_and_comes_back_caught_up(tmp_path: Path) -> None:
    async with Cluster(size=3, seed=2) as cluster:
        members = Members(cluster, tmp_path, FAST, snapshot_every=4).start_all()
        try:
            for value in (1, 2, 3):
                await members.commit(value)
            old = await wait(members.leader)
            term, applied = members.groups[old].term, members.groups[old].applied_index
            await members.kill(old)
            survivors = members.running()
            new = await wait(lambda: members.leader(survivors))
            assert new != old and members.groups[new].term > term
            assert members.totals(survivors) == {6}  # nothing committed was lost with the leader
            for value in range(4, 11):  # past a snapshot: the old leader's log no longer reaches the new one's
                await members.commit(value, survivors)
            assert members.groups[new].snapshot_index > applied
            restarted = await members.restart(old)
            assert restarted.node.term >= term  # its term came back from its directory
            await wait(lambda: members.totals() == {55} and members.leader() == new)
            assert max(members.counters[old].restored) > 6  # it caught up from the leader's snapshot, not its own
        finally:
            members.stop_all()
        assert cluster.errors == []


async def test_a_partition_leaves_the_majority_serving_and_the_minority_leader_steps_down(tmp_path: Path) -> None:
    async with Cluster(size=3, seed=3) as cluster:
        members = Members(cluster, tmp_path, FAST).start_all()
        try:
            await members.commit(1)
            old = await wait(members.leader)
            majority = [name for name in members.groups if name != old]
            await cluster.partition([old], majority)
            new = await wait(lambda: members.leader(majority))
            await wait(lambda: not members.groups[old].is_leader and members.groups[old].leader is None)
            assert (None, members.groups[old].term) in members.counters[old].leaders  # it lost its quorum
            await members.commit(2, majority)
            with pytest.raises(NotLeader):
                await members.groups[old].propose(b"100")
            await wait(lambda: members.totals(majority) == {3})  # a follower applies once it hears of the commit
            assert members.counters[old].total == 1
            await cluster.heal()
            await wait(lambda: members.totals() == {3} and members.leader() == new)
        finally:
            members.stop_all()
        assert cluster.errors == []


async def test_the_state_machine_raising_is_a_server_error_and_the_group_goes_on(tmp_path: Path) -> None:
    async with Cluster(size=3, seed=4) as cluster:
        members = Members(cluster, tmp_path, FAST).start_all()
        try:
            leader = await wait(members.leader)
            await members.groups[leader].propose(b"boom")
            await members.commit(7)
            await wait(lambda: members.totals() == {7})
        finally:
            members.stop_all()
        failed = [error for server in cluster.servers for error in server.take_errors()]
        assert [error.where for error in failed] == [f"replicated group {GROUP}: state machine apply"] * 3


Run = tuple[float, list[list[tuple[str | None, int]]]]


async def run_on_a_manual_clock(seed: int) -> Run:
    """Elect, propose, hand leadership over: when the first leader was elected (virtual time), and every
    member's leaders and terms in the order it learnt them."""
    clock = ManualClock()
    async with Cluster(size=3, clock=clock, seed=seed) as cluster:
        members = Members(cluster, None, None).start_all()  # nats-server's timings: virtual time costs nothing
        try:
            await wait(lambda: meshed(members))
            await run_until(clock, members, lambda: members.leader() is not None)
            elected_at = clock.monotonic()
            leader = members.groups[members.leader() or ""]
            values = [leader.propose(str(value).encode()) for value in (1, 2, 3)]
            await settle(members)
            assert [value.result() for value in values] == [2, 3, 4]  # after the leader's membership entry
            preferred = min(peer for peer in members.peers if peer != leader.peer)
            leader.step_down(preferred)
            await run_until(clock, members, lambda: members.leader() == members.name_of(preferred))
            await run_until(clock, members, lambda: members.totals() == {6})
        finally:
            members.stop_all()
        return elected_at, [members.counters[server.broker.name].leaders for server in cluster.servers]


async def settle(members: Members) -> None:
    """Wait (real time) until every message a member sent was received: nothing is in flight."""

    def quiet() -> bool:
        groups = members.groups.values()
        sent = sum(group.counters.sent - group.counters.unreachable for group in groups)
        return sent == sum(group.counters.received for group in groups)

    await wait(quiet)


async def run_until(clock: Clock, members: Members, condition: Callable[[], bool], limit: float = 120.0) -> None:
    """Move the manual clock timer by timer, letting the messages settle after each, until ``condition()``."""
    assert isinstance(clock, ManualClock)
    start = clock.monotonic()
    await settle(members)
    while not condition():
        assert clock.monotonic() - start < limit, "not met within the virtual time given"
        clock.advance_to_next()
        await settle(members)


async def test_a_seed_and_a_manual_clock_elect_the_same_leaders_in_the_same_terms() -> None:
    first = await run_on_a_manual_clock(seed=5)
    assert first == await run_on_a_manual_clock(seed=5)
    elected_at, histories = first
    assert 4.0 <= elected_at < 9.0  # at the first election timeout (nats-server's): messages take no virtual time
    for history in histories:
        known = [(leader, term) for leader, term in history if leader is not None]
        assert [term for _, term in known] == [1, 2] and known[0][0] != known[1][0]
