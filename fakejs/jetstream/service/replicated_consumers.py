"""The consumers a server replicates: started and stopped as the meta group assigns them, led by their group's leader.

:class:`ConsumerReplicas` is a :class:`~fakejs.jetstream.cluster.MetaObserver`
on a server running JetStream replicated across the cluster
(:mod:`fakejs.jetstream.service.replicated`).  For each consumer assigned to
a group this server is in, it starts a :class:`ConsumerReplica` on the
server's replica of the stream: the
:class:`~fakejs.jetstream.consumer.consumer.Consumer` (registered with the
stream, which asks it about interest), the
:class:`~fakejs.jetstream.consumer.replica.ConsumerStateMachine` its group
applies to, the server's member of the consumer's group and the
:class:`~fakejs.jetstream.consumer.replicated.ReplicatedConsumer` joining
them.  Only the group's leader starts its consumer: its subscriptions to pull
requests and acks are the only interest in them, so they reach it across the
routes from any server, as with nats-server.

An interest or work-queue stream gets an
:class:`~fakejs.jetstream.consumer.retention.AckRetention` watching its
consumers' replicas: the stream's leader removes what their replicated acks
released.  A consumer removed (deleted, its stream deleted, or moved off this
server) is stopped and its group's directory removed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING

from fakejs.jetstream.cluster import ConsumerAssignment, MetaObserver, StreamAssignment
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.consumer.consumer import Consumer
from fakejs.jetstream.consumer.entries import ConsumerEntry
from fakejs.jetstream.consumer.replica import ConsumerStateMachine
from fakejs.jetstream.consumer.replicated import ReplicatedConsumer, replica_state
from fakejs.jetstream.consumer.retention import AckRetention
from fakejs.jetstream.raft import RaftSettings
from fakejs.jetstream.replication import CONSUMER_COMPACTION, ReplicatedGroup, remove_group_log
from fakejs.jetstream.service.meta_membership import GroupMembership, Retiring
from fakejs.jetstream.service.replicated_consumer_rules import config_from_document
from fakejs.jetstream.service.replicated_streams import LeaderHooks, start_member
from fakejs.jetstream.storage.consumer_state import ConsumerState

if TYPE_CHECKING:
    from fakejs.jetstream.service.jetstream import JetStream
    from fakejs.jetstream.service.replicated_streams import StreamReplica, StreamReplicas

__all__ = ["ConsumerReplica", "ConsumerReplicas"]

ConsumerKey = tuple[str, str]  # stream, consumer


class AnsweringMachine(ConsumerStateMachine):
    """A consumer's state machine whose leader takes up inside :meth:`JetStream.answering`: what the new leader
    delivers waits until the create's answer is out, as on a single server (nats-server answers first)."""

    def __init__(self, js: JetStream, name: str, state: ConsumerState) -> None:
        super().__init__(name, state, record_error=js.broker.record_error)
        self.js = js

    def leader_changed(self, leader: str | None, term: int) -> None:
        with self.js.answering():
            super().leader_changed(leader, term)


class ConsumerReplica:
    """One server's replica of a consumer: its state machine, its group member and the replicated consumer."""

    def __init__(
        self, stream: StreamReplica, assignment: ConsumerAssignment, hooks: LeaderHooks[ConsumerReplica]
    ) -> None:
        self.stream = stream
        self.assignment = assignment
        self.hooks = hooks
        self.announced = False  # its CONSUMER.CREATED advisory went out (from this server)
        self.leader_since_ns = 0
        self.config: ConsumerConfig = config_from_document(assignment.config)
        self.machine = AnsweringMachine(
            stream.js, f"{assignment.stream} > {assignment.name}", replica_state(self.config)
        )
        self.group: ReplicatedGroup | None = None
        self.replicated: ReplicatedConsumer | None = None
        self.membership: GroupMembership | None = None
        self._leading = False

    @property
    def name(self) -> str:
        return self.assignment.name

    @property
    def is_leader(self) -> bool:
        return self.replicated is not None and self.replicated.leading and self.replicated.is_leader

    @property
    def consumer(self) -> Consumer | None:
        return None if self.replicated is None else self.replicated.consumer

    def start(self, store_dir: str, settings: RaftSettings | None) -> None:
        js = self.stream.js
        self.group = start_member(
            js.broker, self.assignment.group, self.machine, store_dir, settings, CONSUMER_COMPACTION
        )
        self.group.on_quorum_lost = lambda: self.hooks.quorum_lost(self)
        self.membership = GroupMembership(self.group, js.clock)
        self.membership.wanted = frozenset(self.assignment.group.peers)
        with js.answering():  # a sole voter led before start_group returned: it delivers once it answered
            self.replicated = ReplicatedConsumer(self._make_consumer, self.machine, self.group)
            self.machine.observers.append(self)
            self.leader_changed(self.group.leader, self.group.term)

    def _make_consumer(self) -> Consumer:
        stream = self.stream.stream
        return Consumer(stream, self.name, copy.deepcopy(self.config), self.assignment.created_ns)

    def reconfigure(self) -> None:
        """The assignment's new configuration (an update), applied to the consumer this replica runs; its
        leader delivers what the update lets through once the update is answered."""
        self.config = config_from_document(self.assignment.config)
        consumer = self.consumer
        if consumer is not None:
            paused_until = self.config["pause_until"]
            if paused_until != consumer.config["pause_until"]:
                consumer.pause(paused_until)  # CONSUMER.PAUSE: held back, or resumed
            consumer.reconfigure(copy.deepcopy(self.config))
            consumer.js.after_answer(consumer.kick)

    def stop(self, remove: bool) -> None:
        """Stop the member and the consumer (``remove``: for good, its group's directory too)."""
        if self.replicated is not None:
            self.replicated.stop()
        if remove:
            js = self.stream.js
            remove_group_log(js.broker, js.store_dir, self.assignment.group.name)

    # -- what the state machine tells (after the replicated consumer) --------------------------------

    def entry_applied(self, entry: ConsumerEntry, released: list[int]) -> None:
        pass

    def restored(self) -> None:
        pass

    def leader_changed(self, leader: str | None, term: int) -> None:
        leads = self.is_leader
        if leader is not None and self.group is not None and leader != self.group.peer:
            self.hooks.followed(self)
        if leads and not self._leading:
            self.leader_since_ns = self.stream.js.clock.time_ns()
            self._leading = True
            self.hooks.elected(self)
            if self.membership is not None:
                self.membership.step()
            self.hooks.led(self)
        self._leading = leads


class ConsumerReplicas(MetaObserver):
    """The consumers assigned to this server, each a :class:`ConsumerReplica` (see the module docstring).

    Every replica tells ``hooks`` of its group's leader (``led`` given, the others set by the owners).
    """

    def __init__(
        self,
        js: JetStream,
        streams: StreamReplicas,
        settings: RaftSettings | None,
        on_led: Callable[[ConsumerReplica], None],
    ) -> None:
        self.js = js
        self.streams = streams
        self.settings = settings
        self.hooks: LeaderHooks[ConsumerReplica] = LeaderHooks(on_led)
        self.replicas: dict[ConsumerKey, ConsumerReplica] = {}
        # The peers a removed consumer's group keeps (its server left the assignment), () when it went.
        self.continuing: Callable[[ConsumerAssignment], tuple[str, ...]] = lambda assignment: ()
        self.retiring: Retiring[ConsumerKey, ConsumerReplica] = Retiring(js.clock)
        self.retentions: dict[str, tuple[StreamReplica, AckRetention]] = {}

    def of_stream(self, stream: str) -> list[ConsumerReplica]:
        return [replica for (owner, _), replica in self.replicas.items() if owner == stream]

    def consumer_assigned(self, assignment: ConsumerAssignment) -> None:
        key = (assignment.stream, assignment.name)
        existing = self.replicas.get(key)
        if existing is not None and existing.assignment.group.name == assignment.group.name:
            updated = existing.assignment.config != assignment.config
            existing.assignment = assignment  # a new request, and maybe a new configuration or other peers
            if existing.membership is not None:
                existing.membership.want(assignment.group.peers)  # its leader follows
            with self.js.answering():  # an update's answer goes out before what it lets through
                if updated:
                    existing.reconfigure()
                    stream_replica = self.streams.replicas.get(assignment.stream)
                    if stream_replica is not None:
                        self._watch(stream_replica, existing)  # its filters may have changed
                if existing.is_leader:
                    self.hooks.led(existing)
            return
        if existing is not None:
            self.consumer_removed(existing.assignment)
        self.retiring.assigned_again(key)
        stream = self.streams.replicas.get(assignment.stream)
        if stream is None:
            return  # its stream is not on this server (placement keeps consumers on their stream's servers)
        replica = ConsumerReplica(stream, assignment, self.hooks)
        self.replicas[key] = replica
        replica.start(self.js.store_dir, self.settings)
        self._watch(stream, replica)

    def _watch(self, stream: StreamReplica, replica: ConsumerReplica) -> None:
        """An interest or work-queue stream's leader removes what the consumer's replicated acks release."""
        if stream.stream.config["retention"] == "limits":
            return
        known = self.retentions.get(stream.name)
        if known is None or known[0] is not stream:
            known = (stream, AckRetention(stream.replicated))
            self.retentions[stream.name] = known
        known[1].watch(replica.name, replica.machine, consumerconfig.filters(replica.config))

    def consumer_removed(self, assignment: ConsumerAssignment) -> None:
        replica = self.replicas.pop((assignment.stream, assignment.name), None)
        if replica is None:
            return
        known = self.retentions.get(assignment.stream)
        if known is not None:
            known[1].forget(assignment.name)
        self.retiring.remove((assignment.stream, assignment.name), replica, self.continuing(assignment))

    def stream_removed(self, assignment: StreamAssignment) -> None:
        name = assignment.name
        for replica in self.of_stream(name):  # the meta group told of its consumers first; whatever is left goes
            self.consumer_removed(replica.assignment)
        self.retentions.pop(name, None)

    def stop(self) -> None:
        """The server stops: every member stops as a crash would, and the directories stay."""
        for replica in self.replicas.values():
            replica.stop(remove=False)
        self.retiring.stop()
        self.replicas.clear()
        self.retentions.clear()
