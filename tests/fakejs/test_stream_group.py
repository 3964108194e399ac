"""A stream's group on three routed servers: each holds a replica of the stream, and publishes go through the
leader.  Every replica stores the same messages at the same sequences and times, a killed leader's successor
holds every acknowledged message and continues the sequence, and a restarted replica catches up."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from fakejs.jetstream.replication import NotLeader, ProposalFailed, ReplicatedGroup, peer_id, start_group
from fakejs.jetstream.storage.store import MessageStore
from fakejs.jetstream.stream.replica import StreamStateMachine
from fakejs.jetstream.stream.replicated import ReplicatedStream
from fakejs.jetstream.stream.stream import Stream
from fakejs.protocol import headers as hdrs
from fakejs.server.local_cluster import Cluster
from tests.harness.replicated import FAST, WAIT, wait
from tests.harness.replicated_groups import GroupMembers
from tests.harness.stream_host import SECOND, Host, config

pytestmark = pytest.mark.cluster

GROUP = "S-R3F-orders01"
SETTINGS: dict[str, Any] = {"duplicate_window": 120 * SECOND, "max_msgs_per_subject": 3}


class Replicas(GroupMembers):
    """A replica of stream ``S`` and a member of its group on each server of ``cluster``."""

    def __init__(self, cluster: Cluster, store: Path) -> None:
        super().__init__(cluster)
        self.store = store
        self.replicas: dict[str, ReplicatedStream] = {}

    def start(self, name: str) -> ReplicatedGroup:
        broker = self.cluster.server(name).broker
        host = Host()
        stream = Stream(host, config(**SETTINGS), host.clock.time_ns(), MessageStore())
        machine = StreamStateMachine(stream, record_error=broker.record_error)
        group: ReplicatedGroup = start_group(
            broker,
            GROUP,
            self.peers,
            machine,
            store_dir=str(self.store / name),
            settings=FAST,
            fsync=False,
            snapshot_every=4,
        )
        self.replicas[name] = ReplicatedStream(stream, machine, group)
        self.groups[name] = group
        return group

    async def publish(self, subject: str, payload: bytes, msg_id: str = "") -> bytes:
        """Publish through the leader (found again if leadership moves meanwhile)."""
        hdr = hdrs.build([("Nats-Msg-Id", msg_id)]) if msg_id else None
        deadline = asyncio.get_running_loop().time() + WAIT
        while True:
            leader = await wait(self.leader)
            try:
                return await self.replicas[leader].publish(subject, hdr, payload)
            except ProposalFailed:
                if asyncio.get_running_loop().time() > deadline:
                    raise

    def contents(self, name: str) -> list[tuple[int, str, bytes | None, bytes, int]]:
        store = self.replicas[name].stream.store
        return [(msg.seq, msg.subject, msg.hdr, msg.data, msg.ts) for msg in store]

    def level(self, names: list[str] | None = None) -> bool:
        """Every replica named holds the same messages (and the same duplicate window)."""
        names = names if names is not None else self.running()
        return len({self.replicas[name].machine.snapshot() for name in names}) == 1


def standalone_acks(publishes: list[tuple[str, bytes, str]]) -> list[bytes | None]:
    """The PubAcks a standalone stream of the same configuration gives the same publishes."""
    host = Host()
    stream = Stream(host, config(**SETTINGS), host.clock.time_ns(), MessageStore())
    return [
        stream.ingest(subject, "reply", hdrs.build([("Nats-Msg-Id", msg_id)]) if msg_id else None, payload)
        for subject, payload, msg_id in publishes
    ]


async def test_publishes_through_the_leader_are_stored_alike_on_every_replica(tmp_path: Path) -> None:
    async with Cluster(size=3, seed=21) as cluster:
        replicas = Replicas(cluster, tmp_path).start_all()
        try:
            publishes = [("s.a", b"one", "m1"), ("s.b", b"two", ""), ("s.a", b"three", "m3"), ("s.a", b"one", "m1")]
            publishes += [("s.a", b"%d" % index, "") for index in range(3)]  # past max_msgs_per_subject
            acks = [await replicas.publish(*publish) for publish in publishes]
            assert acks == standalone_acks(publishes)
            assert acks[3] == b'{"stream":"S","seq":1,"duplicate": true}'
            await wait(replicas.level)
            leader = await wait(replicas.leader)
            expected = replicas.contents(leader)
            assert [seq for seq, *_ in expected] == [2, 4, 5, 6]  # s.a keeps its newest three
            assert all(replicas.contents(name) == expected for name in replicas.running())

            follower = next(name for name in replicas.running() if name != leader)
            with pytest.raises(NotLeader) as refused:
                await replicas.replicas[follower].publish("s.a", None, b"no")
            assert refused.value.leader == peer_id(leader)
            await replicas.replicas[leader].delete_message(2)
            await replicas.replicas[leader].purge("s.a", keep=1)
            await wait(replicas.level)
            assert [seq for seq, *_ in replicas.contents(follower)] == [6]
        finally:
            replicas.stop_all()
        assert cluster.errors == []


async def test_a_new_leader_holds_every_acknowledged_message_and_a_restarted_replica_catches_up(
    tmp_path: Path,
) -> None:
    async with Cluster(size=3, seed=22) as cluster:
        replicas = Replicas(cluster, tmp_path).start_all()
        try:
            for index in range(6):  # past a snapshot (every 4 entries applied)
                await replicas.publish(f"s.{index % 2}", b"%d" % index, f"id{index}")
            old = await wait(replicas.leader)
            held = replicas.contents(old)
            replicas.replicas[old].group.stop()
            await cluster.kill(old)
            survivors = replicas.running()
            new = await wait(replicas.leader)
            assert new != old and replicas.contents(new) == held  # nothing acknowledged was lost
            assert await replicas.publish("s.0", b"again", "id0") == b'{"stream":"S","seq":1,"duplicate": true}'
            for index in range(6, 10):
                ack = await replicas.publish(f"s.{index % 2}", b"%d" % index)
                assert ack == b'{"stream":"S","seq":%d}' % (index + 1)  # the sequence goes on
            await wait(lambda: replicas.level(survivors))

            await cluster.restart(old)
            replicas.start(old)
            await wait(lambda: replicas.level() and replicas.leader() is not None)
            assert replicas.contents(old) == replicas.contents(new)
            assert [seq for seq, *_ in replicas.contents(old)][-1] == 10
        finally:
            replicas.stop_all()
        assert cluster.errors == []
