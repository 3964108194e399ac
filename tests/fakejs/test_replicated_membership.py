"""Membership changes of a replicated group through its driver, on servers routed together: a server joining a
running group with no first peers is added by the leader and catches up, a follower asked to change the
membership names the leader, and a removed member no longer counts nor receives the log."""

from __future__ import annotations

import pytest

from fakejs.jetstream.replication import NotLeader, ProposalRefused, ReplicatedGroup, peer_id, start_group
from fakejs.server.local_cluster import Cluster
from tests.harness.replicated import FAST, wait
from tests.harness.replicated_groups import Counter, Members, meshed

pytestmark = pytest.mark.cluster


def joining(members: Members, name: str) -> ReplicatedGroup:
    """Start ``name``'s member with no first peers, as a server joining a running group does."""
    members.counters[name] = Counter()
    group = start_group(
        members.cluster.server(name).broker, "counter", [], members.counters[name], store_dir=None, settings=FAST
    )
    members.groups[name] = group
    return group


async def test_a_server_joining_with_no_peers_is_added_by_the_leader_and_catches_up() -> None:
    async with Cluster(size=4, seed=11) as cluster:
        members = Members(cluster, None, FAST)
        members.peers = members.peers[:3]
        for name in ("n1", "n2", "n3"):
            members.start(name)
        try:
            await members.commit(5)
            newcomer = joining(members, "n4")
            await wait(lambda: meshed(members))
            assert newcomer.leader is None and members.counters["n4"].total == 0  # nobody sends it the log yet
            leader = await wait(lambda: members.leader(["n1", "n2", "n3"]))
            index = await members.groups[leader].add_peer(newcomer.peer)
            assert index > 0 and newcomer.peer in members.groups[leader].voters
            await wait(lambda: members.totals() == {5} and newcomer.leader == members.groups[leader].peer)
            assert newcomer.voters == {peer_id(f"n{i}") for i in range(1, 5)}
            await members.commit(2)
            await wait(lambda: members.totals() == {7})
        finally:
            members.stop_all()


async def test_a_follower_names_the_leader_and_one_change_at_a_time() -> None:
    async with Cluster(size=4, seed=12) as cluster:
        members = Members(cluster, None, FAST)
        members.peers = members.peers[:3]
        for name in ("n1", "n2", "n3"):
            members.start(name)
        try:
            leader = await wait(members.leader)
            follower = next(name for name in ("n1", "n2", "n3") if name != leader)
            with pytest.raises(NotLeader) as redirect:
                await members.groups[follower].add_peer(peer_id("n4"))
            assert redirect.value.leader == members.groups[leader].peer
            with pytest.raises(NotLeader):
                await members.groups[follower].remove_peer(members.groups[leader].peer)
            await members.commit(1)  # the leader committed an entry of its term
            with pytest.raises(ProposalRefused):
                await members.groups[leader].add_peer(members.groups[follower].peer)  # already a voter
        finally:
            members.stop_all()


async def test_a_removed_member_no_longer_receives_the_log_nor_counts() -> None:
    async with Cluster(size=3, seed=13) as cluster:
        members = Members(cluster, None, FAST).start_all()
        try:
            await members.commit(3)
            leader = await wait(members.leader)
            removed = next(name for name in members.running() if name != leader)
            gone = members.groups[removed].peer
            await members.groups[leader].remove_peer(gone)
            assert gone not in members.groups[leader].voters
            await members.commit(4, among=[name for name in members.running() if name != removed])
            staying = [name for name in members.running() if name != removed]
            await wait(lambda: members.totals(staying) == {7})
            assert members.counters[removed].total == 3  # the log goes on without it
            # The two left are the whole group: one of them alone is no quorum, so a proposal needs both
            other = next(name for name in staying if name != leader)
            assert members.groups[other].voters == {members.groups[name].peer for name in staying}
        finally:
            members.stop_all()
