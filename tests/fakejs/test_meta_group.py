"""The meta group on three routed servers: each runs a member of ``_meta_`` replicating the stream and consumer
assignments.  What the leader assigns appears on every server with the same group, a follower refuses with
NotLeader, a killed leader's successor holds every assignment, and a restarted server catches up."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

import pytest

from fakejs.jetstream.cluster import (
    META_GROUP,
    MetaLeader,
    MetaObserver,
    MetaStateMachine,
    StreamAssignment,
)
from fakejs.jetstream.errors import ApiError
from fakejs.jetstream.replication import NotLeader, ProposalFailed, ReplicatedGroup, peer_id, start_group
from fakejs.server.local_cluster import Cluster
from tests.harness.replicated import FAST, WAIT, wait
from tests.harness.replicated_groups import GroupMembers

pytestmark = pytest.mark.cluster

CLUSTER = "c1"
T = TypeVar("T")


class Assigned(MetaObserver):
    """The streams assigned to this server, as its observer hears of them."""

    def __init__(self) -> None:
        self.streams: dict[str, str] = {}  # stream name -> group name

    def stream_assigned(self, assignment: StreamAssignment) -> None:
        self.streams[assignment.name] = assignment.group.name

    def stream_removed(self, assignment: StreamAssignment) -> None:
        self.streams.pop(assignment.name, None)


class MetaMembers(GroupMembers):
    """A member of the meta group on each server of ``cluster``, with its state machine and leader API."""

    def __init__(self, cluster: Cluster, store: Path) -> None:
        super().__init__(cluster)
        self.store = store
        self.machines: dict[str, MetaStateMachine] = {}
        self.leaders: dict[str, MetaLeader] = {}
        self.assigned: dict[str, Assigned] = {}

    def start(self, name: str) -> ReplicatedGroup:
        broker = self.cluster.server(name).broker
        machine = self.machines[name] = MetaStateMachine(peer_id(name), record_error=broker.record_error)
        self.assigned[name] = Assigned()
        machine.observe(self.assigned[name])
        store = str(self.store / name)
        group = start_group(
            broker, META_GROUP, self.peers, machine, store_dir=store, settings=FAST, fsync=False, snapshot_every=4
        )
        self.groups[name] = group
        self.leaders[name] = MetaLeader(group, machine, cluster=CLUSTER, rng=random.Random(name), clock=broker.clock)
        return group

    async def at_leader(self, request: Callable[[MetaLeader], Awaitable[T]]) -> T:
        """Make ``request`` of the leader (found again if leadership moves meanwhile)."""
        deadline = asyncio.get_running_loop().time() + WAIT
        while True:
            leader = await wait(self.leader)
            try:
                return await request(self.leaders[leader])
            except ProposalFailed:
                if asyncio.get_running_loop().time() > deadline:
                    raise

    def snapshots(self, names: Sequence[str] | None = None) -> set[bytes]:
        return {self.machines[name].snapshot() for name in (names if names is not None else self.running())}


async def join_every_server(members: MetaMembers) -> None:
    for server in members.cluster.servers:
        await members.at_leader(lambda leader, name=server.broker.name: leader.add_peer(name, CLUSTER))


async def test_assignments_made_at_the_leader_appear_on_every_server(tmp_path: Path) -> None:
    async with Cluster(size=3, seed=11) as cluster:
        members = MetaMembers(cluster, tmp_path).start_all()
        try:
            await join_every_server(members)
            config = {"name": "ORDERS", "subjects": ["orders.>"], "num_replicas": 3, "storage": "file"}
            stream = await members.at_leader(lambda leader: leader.create_stream("A", config, reply="_INBOX.1"))
            assert stream.group.name.startswith("S-R3F-") and sorted(stream.group.peers) == sorted(members.peers)
            consumer = await members.at_leader(
                lambda leader: leader.create_consumer("A", "ORDERS", "D", {"durable_name": "D", "num_replicas": 1})
            )
            assert consumer.group.name.startswith("C-R1F-") and consumer.group.peers[0] in stream.group.peers
            await wait(lambda: len(members.snapshots()) == 1 and members.machines["n1"].state.consumers)
            for name in members.running():
                state = members.machines[name].state
                assert state.stream("A", "ORDERS") == stream and state.consumer("A", "ORDERS", "D") == consumer
                assert members.assigned[name].streams == {"ORDERS": stream.group.name}
                assert [peer.name for peer in state.active_peers()] == ["n1", "n2", "n3"]

            leader = await wait(members.leader)
            follower = next(name for name in members.running() if name != leader)
            with pytest.raises(NotLeader) as refused:
                await members.leaders[follower].create_stream("A", {"name": "OTHER", "subjects": ["other"]})
            assert refused.value.leader == peer_id(leader)
            assert members.machines[follower].leader_name() == leader

            same = await members.at_leader(lambda leader: leader.create_stream("A", config))
            assert same == stream  # the same configuration again: the stream as it is
            with pytest.raises(ApiError) as exists:
                await members.at_leader(lambda leader: leader.create_stream("A", {**config, "max_msgs": 5}))
            assert (exists.value.err_code, exists.value.description) == (
                10058,
                "stream name already in use with a different configuration",
            )
            with pytest.raises(ApiError) as placement:
                await members.at_leader(lambda leader: leader.create_stream("A", {"name": "BIG", "num_replicas": 5}))
            assert (placement.value.err_code, placement.value.description) == (10005, "no suitable peers for placement")

            await members.at_leader(lambda leader: leader.delete_stream("A", "ORDERS"))
            await wait(lambda: all(not members.assigned[name].streams for name in members.running()))
            assert all(not members.machines[name].state.consumers for name in members.running())
            with pytest.raises(ApiError) as missing:
                await members.at_leader(lambda leader: leader.delete_stream("A", "ORDERS"))
            assert missing.value.err_code == 10059
        finally:
            members.stop_all()
        assert cluster.errors == []


async def test_a_new_leader_holds_every_assignment_and_a_restarted_server_catches_up(tmp_path: Path) -> None:
    async with Cluster(size=3, seed=12) as cluster:
        members = MetaMembers(cluster, tmp_path).start_all()
        try:
            await join_every_server(members)
            for index in range(6):  # past a snapshot (every 4 entries applied)
                config = {"name": f"S{index}", "subjects": [f"s{index}"], "num_replicas": 1 + index % 3}
                await members.at_leader(lambda leader, config=config: leader.create_stream("A", config))
            old = await wait(members.leader)
            held = members.machines[old].snapshot()
            members.groups[old].stop()
            await cluster.kill(old)
            survivors = members.running()
            new = await wait(members.leader)
            assert new != old and members.machines[new].snapshot() == held  # nothing assigned was lost

            await members.at_leader(lambda leader: leader.delete_stream("A", "S0"))
            await members.at_leader(lambda leader: leader.create_stream("A", {"name": "LATE", "subjects": ["late"]}))
            await members.at_leader(lambda leader: leader.remove_peer(old))
            assert members.groups[new].snapshot_index > members.groups[old].applied_index
            await wait(lambda: len(members.snapshots(survivors)) == 1)

            await cluster.restart(old)
            members.start(old)
            await wait(lambda: len(members.snapshots()) == 1 and members.leader() is not None)
            state = members.machines[old].state
            assert state.stream("A", "S0") is None and state.stream("A", "LATE") is not None
            assert state.peers[peer_id(old)].removed
            mine = {name for (_, name), sa in state.streams.items() if peer_id(old) in sa.group.peers}
            assert set(members.assigned[old].streams) == mine
        finally:
            members.stop_all()
        assert cluster.errors == []
