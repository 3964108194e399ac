"""A replicated group across three servers routed together: its members speak over the routes, in the system
account.  A leader is elected and serves, a killed leader is replaced and comes back caught up, a partition
leaves only the majority serving, and under a manual clock with a seed a run replays exactly."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fakejs.core.clock import Clock
from fakejs.jetstream.replication import (
    NotLeader,
    group_directory,
    member_subject,
    peer_id,
)
from fakejs.server.local_cluster import Cluster
from fakejs.testkit.clock import ManualClock
from tests.harness.replicated import FAST, wait
from tests.harness.replicated_groups import GROUP, Members, meshed

pytestmark = pytest.mark.cluster


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


async def test_a_member_restarted_alone_applies_what_it_had_applied_before_hearing_a_leader(tmp_path: Path) -> None:
    """A restarted member hands its state machine the entries it had applied at once, with no quorum around (as
    nats-server replays its log): a stream's replica is whole, and the meta group's assignments start their
    groups, before any leader is elected."""
    async with Cluster(size=3, seed=5) as cluster:
        members = Members(cluster, tmp_path, FAST).start_all()
        try:
            for value in (1, 2, 3):
                await members.commit(value)
            await wait(lambda: members.totals() == {6})
            for name in list(members.groups):
                await members.kill(name)
            restarted = await members.restart("n2")
            assert members.counters["n2"].total == 6
            assert restarted.leader is None and restarted.applied_index == restarted.node.log.last_index
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
