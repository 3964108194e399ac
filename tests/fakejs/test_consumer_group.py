"""A consumer's group on three routed servers, beside its work-queue stream's group.

Each server holds a replica of the stream and of its consumer; the consumer's leader delivers and its deliveries
and acks are applied to every replica's consumer state; an ack asking for an answer is answered once stored by a
quorum; the stream's leader removes what the replicated acks released, on every replica.  A killed leader's
successor redelivers exactly what was delivered and not acknowledged, its delivery count going on, and a
restarted replica catches up.  On a manual clock, a seed gives the same leaders, deliveries and state.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from fakejs.gocompat.gotime import NS
from fakejs.jetstream import status
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.consumer.consumer import Consumer
from fakejs.jetstream.consumer.entries import ConsumerAck, ConsumerDelivered, ConsumerEntry, decode_entry
from fakejs.jetstream.consumer.replica import ConsumerStateMachine
from fakejs.jetstream.consumer.replicated import ReplicatedConsumer, replica_state
from fakejs.jetstream.consumer.retention import AckRetention
from fakejs.jetstream.replication import ProposalFailed, ReplicatedGroup, peer_id, start_group
from fakejs.jetstream.storage.store import MessageStore
from fakejs.jetstream.stream.replica import StreamStateMachine
from fakejs.jetstream.stream.replicated import ReplicatedStream
from fakejs.jetstream.stream.stream import Stream
from fakejs.server.local_cluster import Cluster
from fakejs.testkit.clock import ManualClock
from tests.harness.consumer_host import Client, ConsumerHost, consumer_config
from tests.harness.replicated import FAST, wait
from tests.harness.stream_host import T0, config

pytestmark = pytest.mark.cluster

ACK_WAIT = 5 * NS


class Replica:
    """One server's replicas: the stream ``S`` and its group, the consumer ``C`` and its group, the retention."""

    def __init__(self, cluster: Cluster, store: Path | None, name: str, clock: ManualClock | None = None) -> None:
        broker = cluster.server(name).broker
        peers = [peer_id(server.broker.name) for server in cluster.servers]
        self.host = ConsumerHost(clock)
        self.stream = Stream(self.host, config(retention="workqueue"), T0, MessageStore())
        stream_machine = StreamStateMachine(self.stream, record_error=broker.record_error)
        # On a manual clock, nats-server's timings (virtual time costs nothing) and the log in memory.
        common: dict[str, Any] = {"settings": None if clock else FAST, "fsync": False, "snapshot_every": 4}
        common["store_dir"] = str(store / name) if store is not None else None
        stream_group = start_group(broker, "S-R3F-work01", peers, stream_machine, **common)
        self.replicated_stream = ReplicatedStream(self.stream, stream_machine, stream_group)
        consumer = consumer_config(self.stream.config, durable_name="C", ack_policy="explicit", ack_wait=ACK_WAIT)
        self.machine = ConsumerStateMachine("S > C", replica_state(consumer), record_error=broker.record_error)
        consumer_group = start_group(broker, "C-R3F-work01", peers, self.machine, **common)
        self.consumer = ReplicatedConsumer(
            lambda: Consumer(self.stream, "C", copy.deepcopy(consumer), T0), self.machine, consumer_group
        )
        self.retention = AckRetention(self.replicated_stream)
        self.retention.watch("C", self.machine, consumerconfig.filters(consumer))

    def stop(self) -> None:
        self.replicated_stream.group.stop()
        self.consumer.stop()

    def sequences(self) -> list[int]:
        return [msg.seq for msg in self.stream.store]


class Replicas:
    def __init__(self, cluster: Cluster, store: Path | None, clock: ManualClock | None = None) -> None:
        self.cluster = cluster
        self.store = store
        self.clock = clock
        self.replicas: dict[str, Replica] = {}

    def start(self, name: str) -> Replica:
        self.replicas[name] = Replica(self.cluster, self.store, name, self.clock)
        return self.replicas[name]

    def groups(self) -> list[ReplicatedGroup]:
        running = self.running()
        return [replica.consumer.group for replica in running] + [
            replica.replicated_stream.group for replica in running
        ]

    def name_of(self, replica: Replica | None) -> str:
        return next(name for name, value in self.replicas.items() if value is replica)

    def start_all(self) -> Replicas:
        for server in self.cluster.servers:
            self.start(server.broker.name)
        return self

    def stop_all(self) -> None:
        for replica in self.replicas.values():
            replica.stop()

    def running(self) -> list[Replica]:
        return [replica for replica in self.replicas.values() if not replica.consumer.group.stopped]

    def consumer_leader(self) -> Replica | None:
        leaders = [replica for replica in self.running() if replica.consumer.leading and replica.consumer.is_leader]
        return leaders[0] if len(leaders) == 1 else None

    def stream_leader(self) -> Replica | None:
        return next((replica for replica in self.running() if replica.replicated_stream.is_leader), None)

    async def publish(self, count: int) -> None:
        for index in range(count):
            while True:
                leader = await wait(self.stream_leader)
                try:
                    await leader.replicated_stream.publish(f"s.{index}", None, b"%d" % index)
                    break
                except ProposalFailed:
                    continue

    def consumer_level(self) -> bool:
        """Every running replica holds the same consumer state."""
        return len({replica.machine.snapshot() for replica in self.running()}) == 1

    def stream_holds(self, sequences: list[int]) -> bool:
        return all(replica.sequences() == sequences for replica in self.running())


def acked_parts(ack_reply: str) -> tuple[int, int, int]:
    """(delivery count, stream sequence, delivery sequence) of a delivery's ack subject."""
    tokens = ack_reply.split(".")
    return int(tokens[4]), int(tokens[5]), int(tokens[6])


async def test_deliveries_and_acks_reach_every_replica_and_acked_messages_leave_the_stream(tmp_path: Path) -> None:
    async with Cluster(size=3, seed=31) as cluster:
        replicas = Replicas(cluster, tmp_path).start_all()
        try:
            await replicas.publish(5)
            await wait(lambda: replicas.stream_holds([1, 2, 3, 4, 5]))
            leader = await wait(replicas.consumer_leader)
            client = Client(leader.host.router, "in")
            client.pull("S", "C", 3)
            assert [acked_parts(reply) for _, reply, _ in client.received] == [(1, 1, 1), (1, 2, 2), (1, 3, 3)]
            await wait(lambda: all(list(replica.machine.state.pending) == [1, 2, 3] for replica in replicas.running()))
            assert replicas.consumer_level()

            client.ack(client.received[0][1], sync="one")
            assert client.answers == []  # answered only once a quorum stored the ack
            client.ack(client.received[1][1])
            await wait(lambda: client.answers == ["in.ack.one"])
            await wait(lambda: replicas.consumer_level() and replicas.stream_holds([3, 4, 5]))
            for replica in replicas.running():
                state = replica.machine.state
                assert (state.delivered, state.ack_floor, list(state.pending)) == ([3, 3], [2, 2], [3])

            stream_leader = await wait(replicas.stream_leader)
            await stream_leader.replicated_stream.purge()  # the consumer's leader acks the pending 3 it took away
            await wait(
                lambda: replicas.stream_holds([]) and all(not r.machine.state.pending for r in replicas.running())
            )
            await wait(replicas.consumer_level)
            assert leader.machine.state.ack_floor == [3, 3]
        finally:
            replicas.stop_all()
        assert cluster.errors == []


async def test_what_a_leader_does_in_one_pass_is_proposed_as_one_append(monkeypatch: pytest.MonkeyPatch) -> None:
    async with Cluster(size=3, seed=31) as cluster:
        replicas = Replicas(cluster, None).start_all()
        try:
            await replicas.publish(3)
            await wait(lambda: replicas.stream_holds([1, 2, 3]))
            leader = await wait(replicas.consumer_leader)
            node = leader.consumer.group.node
            appended: list[list[ConsumerEntry]] = []
            propose_many = node.propose_many

            def counted(items: Sequence[bytes]) -> object:
                appended.append([decode_entry(item) for item in items])
                return propose_many(items)

            monkeypatch.setattr(node, "propose_many", counted)
            client = Client(leader.host.router, "in")
            client.pull("S", "C", 3)
            await wait(lambda: all(list(replica.machine.state.pending) == [1, 2, 3] for replica in replicas.running()))
            assert len(appended) == 1  # the pull's deliveries, and the pull waiting, then not
            assert [entry.sseq for entry in appended[0] if isinstance(entry, ConsumerDelivered)] == [1, 2, 3]
            for _, reply, _ in client.received:
                client.ack(reply, sync=reply.split(".")[5])
            assert client.answers == []
            await wait(lambda: len(client.answers) == 3)  # each answered once stored by a quorum
            assert appended[1:] == [[ConsumerAck(1, 1), ConsumerAck(2, 2), ConsumerAck(3, 3)]]
            await wait(lambda: replicas.consumer_level() and replicas.stream_holds([]))
            assert leader.machine.state.ack_floor == [3, 3]
        finally:
            replicas.stop_all()
        assert cluster.errors == []


async def test_a_new_leader_redelivers_what_was_not_acknowledged_and_a_restarted_replica_catches_up(
    tmp_path: Path,
) -> None:
    async with Cluster(size=3, seed=32) as cluster:
        replicas = Replicas(cluster, tmp_path).start_all()
        try:
            await replicas.publish(5)
            await wait(lambda: replicas.stream_holds([1, 2, 3, 4, 5]))
            old = await wait(replicas.consumer_leader)
            client = Client(old.host.router, "in")
            client.pull("S", "C", 3)
            for _, reply, _ in client.received[:2]:
                client.ack(reply)
            client.pull("S", "C", 3)  # gets 4 and 5, and waits for one more
            assert [acked_parts(reply) for _, reply, _ in client.received][3:] == [(1, 4, 4), (1, 5, 5)]
            followers = [replica for replica in replicas.running() if replica is not old]
            await wait(lambda: all(list(replica.machine.pending_requests) == ["in.pull"] for replica in followers))
            await wait(lambda: replicas.consumer_level() and replicas.stream_holds([3, 4, 5]))

            name = replicas.name_of(old)
            old.stop()
            await cluster.kill(name)
            new = await wait(replicas.consumer_leader)
            assert new.host.replies[0] == ("in.pull", status.leadership_change(), b"")  # its predecessor's pull
            client = Client(new.host.router, "in2")
            client.pull("S", "C", 3)
            assert client.received == []  # 3, 4 and 5 wait for their ack wait to end
            new.host.clock.advance(ACK_WAIT / NS + 1)  # redelivered, each its second delivery, delivery sequence on
            assert [acked_parts(reply) for _, reply, _ in client.received] == [(2, 3, 6), (2, 4, 7), (2, 5, 8)]
            for _, reply, _ in client.received:
                client.ack(reply)
            await wait(lambda: replicas.consumer_level() and replicas.stream_holds([]))
            survivor_state = new.machine.state
            assert (survivor_state.delivered, survivor_state.ack_floor, survivor_state.pending) == ([8, 5], [8, 5], {})

            await cluster.restart(name)
            back = replicas.start(name)
            await wait(lambda: replicas.consumer_level() and replicas.stream_holds([]) and replicas.consumer_leader())
            assert back.machine.snapshot() == new.machine.snapshot()
            assert back.consumer.group.snapshot_index > 0  # caught up past a snapshot
        finally:
            replicas.stop_all()
        assert cluster.errors == []


Run = tuple[str, str, bytes, list[str]]


async def run_on_a_manual_clock(seed: int) -> Run:
    """Elect, publish, deliver and acknowledge on one virtual time: the consumer's and the stream's leaders, the
    consumer state every replica holds, and the deliveries' ack subjects (delivery times among them)."""
    clock = ManualClock(start_ns=T0)
    async with Cluster(size=3, clock=clock, seed=seed) as cluster:
        replicas = Replicas(cluster, None, clock).start_all()
        try:
            await wait(
                lambda: all(
                    a.reaches(b.peer)
                    for a in replicas.groups()
                    for b in replicas.groups()
                    if a is not b and a.name == b.name
                )
            )
            await run_until(clock, replicas, lambda: replicas.consumer_leader() and replicas.stream_leader())
            await replicas.publish(3)
            await run_until(clock, replicas, lambda: replicas.stream_holds([1, 2, 3]))
            leader = replicas.consumer_leader()
            assert leader is not None
            client = Client(leader.host.router, "in")
            client.pull("S", "C", 3)
            client.ack(client.received[1][1])
            await run_until(clock, replicas, lambda: replicas.consumer_level() and replicas.stream_holds([1, 3]))
            deliveries = [reply for _, reply, _ in client.received]
            return (
                replicas.name_of(leader),
                replicas.name_of(replicas.stream_leader()),
                leader.machine.snapshot(),
                deliveries,
            )
        finally:
            replicas.stop_all()


async def settle(replicas: Replicas) -> None:
    """Wait (real time) until every message a member sent was received: nothing is in flight."""

    def quiet() -> bool:
        groups = replicas.groups()
        sent = sum(group.counters.sent - group.counters.unreachable for group in groups)
        return sent == sum(group.counters.received for group in groups)

    await wait(quiet)


async def run_until(
    clock: ManualClock, replicas: Replicas, condition: Callable[[], object], limit: float = 120.0
) -> None:
    """Move the manual clock timer by timer, letting the messages settle after each, until ``condition()``."""
    start = clock.monotonic()
    await settle(replicas)
    while not condition():
        assert clock.monotonic() - start < limit, "not met within the virtual time given"
        clock.advance_to_next()
        await settle(replicas)


async def test_a_seed_and_a_manual_clock_give_the_same_leaders_deliveries_and_state() -> None:
    first = await run_on_a_manual_clock(seed=7)
    assert first == await run_on_a_manual_clock(seed=7)
    _, _, _, deliveries = first
    assert [acked_parts(reply) for reply in deliveries] == [(1, 1, 1), (1, 2, 2), (1, 3, 3)]
    assert int(deliveries[0].split(".")[7]) >= T0 + 4 * NS  # delivered on virtual time, after an election
