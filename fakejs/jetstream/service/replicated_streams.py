"""The streams a server replicates: started and stopped as the meta group assigns them, captured on their leader.

:class:`StreamReplicas` is a :class:`~fakejs.jetstream.cluster.MetaObserver`
on a server running JetStream replicated across the cluster
(:mod:`fakejs.jetstream.service.replicated`).  For each stream assigned to a
group this server is in, it starts a :class:`StreamReplica`: the server's
:class:`~fakejs.jetstream.stream.stream.Stream` (in the account's
JetStream, so that ``$JS.API.INFO`` and Direct Get see it), the
:class:`~fakejs.jetstream.stream.replica.StreamStateMachine` the group
applies to, and the server's member of the stream's group; a stream
removed, or moved off this server, is stopped and its group's directory
removed.

The stream's subjects are captured on the group's leader only
(:class:`LedStream`): a publish there goes through
:class:`~fakejs.jetstream.stream.replicated.ReplicatedStream` and its PubAck
is sent to the client's reply once a quorum stored it.  A publish the leader
could not see committed (it lost its leadership meanwhile) is not answered:
the client times out and retries, as with nats-server.

Each replica runs its own expiry (``max_age``, TTLs), as nats-server's do,
except with subject delete markers: the leader then proposes the removals and
the markers, as it proposes a due schedule's message, and it alone republishes
(:mod:`fakejs.jetstream.stream.replicated_effects`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from fakejs.core.log import get_logger
from fakejs.jetstream.cluster import MetaObserver, RaftGroup, StreamAssignment
from fakejs.jetstream.raft import RaftSettings
from fakejs.jetstream.replication import (
    STREAM_COMPACTION,
    Compaction,
    ProposalFailed,
    ReplicatedGroup,
    StateMachine,
    remove_group_log,
    start_group,
)
from fakejs.jetstream.service.meta_membership import GroupMembership, Retiring
from fakejs.jetstream.storage.store import MessageStore
from fakejs.jetstream.stream.replica import StreamStateMachine
from fakejs.jetstream.stream.replicated import ReplicatedStream
from fakejs.jetstream.stream.replicated_batches import Replies
from fakejs.jetstream.stream.replicated_effects import LeaderEffects
from fakejs.jetstream.stream.replicated_feed import FeedProposals, LeaderLinks
from fakejs.jetstream.stream.schedules import Produced
from fakejs.jetstream.stream.stream import Stream
from fakejs.jetstream.stream.traced import traced_inbound
from fakejs.jetstream.stream.transforms import Republisher

if TYPE_CHECKING:
    from fakejs.core.broker import Broker
    from fakejs.jetstream.service.jetstream import JetStream

__all__ = ["LeaderHooks", "LedStream", "StreamReplica", "StreamReplicas", "start_member"]

Capture = Callable[[str, str, "bytes | None", bytes, object], bool]


class LedStream(Stream):
    """A stream that captures its subjects only while ``capture`` is set (while its replica leads), and runs
    its mirror or sources only then, proposing what they receive (``proposals``).  Only then does it
    republish what it applies, and propose its delete markers and due schedules (``effects``)."""

    capture: Capture | None = None
    proposals: FeedProposals | None = None
    effects: LeaderEffects | None = None
    _republisher: Republisher | None = None

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.links = LeaderLinks(self, lambda: self.capture is not None)

    @property
    def republisher(self) -> Republisher | None:
        """The republish, on the leader only (nats-server's ``republish := tsubj != "" && isLeader``)."""
        return self._republisher if self.capture is not None else None

    @republisher.setter
    def republisher(self, republisher: Republisher | None) -> None:
        self._republisher = republisher

    def _expire(self) -> None:
        if self.effects is None or self.config["subject_delete_marker_ttl"] <= 0:
            super()._expire()  # each replica removes its own expired messages
        else:
            self.effects.expire()

    def _scheduled(self, out: Produced) -> None:
        if self.effects is not None:
            self.effects.produce(out)

    @property
    def mirrored_last_seq(self) -> int:
        return self.store.last_seq if self.proposals is None else self.proposals.last_seq

    def skip_mirrored(self, next_seq: int) -> None:
        if self.proposals is not None:
            self.proposals.skip_mirrored(next_seq)

    def store_mirrored(self, subject: str, hdr: bytes | None, payload: bytes, seq: int, ts: int) -> bool:
        return self.proposals is not None and self.proposals.store_mirrored(subject, hdr, payload, seq, ts)

    def store_sourced(self, subject: str, hdr: bytes | None, payload: bytes) -> bool:
        return self.proposals is not None and self.proposals.store_sourced(subject, hdr, payload)

    def restart_links(self) -> None:
        """Start the mirror or sources over from the store (a proposal of theirs failed)."""
        self.links.close()
        self.links.sync()

    def attach(self) -> None:
        router = self.js.router
        if self.capture is not None:
            for subject in self.config["subjects"]:
                capture = router.subscribe_internal(subject, self.capture)
                capture.owner.trace_hop = partial(traced_inbound, self)  # a traced message: the js event here
                self.subscriptions.append(capture)
        self._sync_direct()
        self.expiry.rearm()

    def inbound(
        self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object, trace_only: bool = False
    ) -> bool:
        """A traced message on the leader (:func:`~fakejs.jetstream.stream.traced.traced_inbound`): checked here
        (what refuses it is the trace's), then, unless trace-only, proposed as any publish."""
        if trace_only:
            return super().inbound(subject, reply, hdr, payload, origin, trace_only=True)
        if self.capture is None:
            return False
        super().inbound(subject, "", hdr, payload, origin, trace_only=True)  # the checks alone: the trace's verdict
        return self.capture(subject, reply, hdr, payload, origin)


def start_member(
    broker: Broker,
    group: RaftGroup,
    machine: StateMachine,
    store_dir: str,
    settings: RaftSettings | None,
    compaction: Compaction = STREAM_COMPACTION,
) -> ReplicatedGroup:
    """The server's member of an assigned stream's or consumer's ``group``: its log under ``store_dir`` when the
    group stores to files (in memory otherwise), campaigning at once when it is the preferred leader, compacted
    as ``compaction`` says."""
    on_disk = store_dir if group.storage == "file" else None
    return start_group(
        broker,
        group.name,
        group.peers,
        machine,
        store_dir=on_disk,
        settings=settings,
        preferred=group.preferred,
        compaction=compaction,
    )


Replica = TypeVar("Replica")


def _unheard(replica: object) -> None:
    pass


@dataclass
class LeaderHooks(Generic[Replica]):
    """What a server's replicas of streams (or of consumers) tell their owners of their groups' leaders: ``led``
    when a group elects this server, or when an asset it leads is assigned again (to answer the assignment's
    request); ``elected`` only when elected (to announce it); ``followed`` when it learns that another server
    leads (which answers instead); ``quorum_lost`` when its group lost its quorum."""

    led: Callable[[Replica], None]
    elected: Callable[[Replica], None] = _unheard
    followed: Callable[[Replica], None] = _unheard
    quorum_lost: Callable[[Replica], None] = _unheard


class StreamReplica:
    """One server's replica of a stream: the stream, its state machine, its group member, its assignment."""

    def __init__(self, js: JetStream, assignment: StreamAssignment, hooks: LeaderHooks[StreamReplica]) -> None:
        self.js = js
        self.assignment = assignment
        self.hooks = hooks
        self.leader_since_ns = 0
        self.publishing: set[asyncio.Task[None]] = set()
        config: Any = dict(assignment.config)
        self.stream = LedStream(js, config, assignment.created_ns, MessageStore(config["storage"], config["first_seq"]))
        self.machine = StreamStateMachine(self.stream, record_error=js.broker.record_error)
        self.machine.leader_observers.append(lambda leader, term: self._leader_changed(leader))
        self.group: ReplicatedGroup | None = None
        self.membership: GroupMembership | None = None

    @property
    def name(self) -> str:
        return self.stream.name

    @property
    def is_leader(self) -> bool:
        return self.group is not None and self.group.is_leader

    def start(self, store_dir: str, settings: RaftSettings | None) -> None:
        self.stream.attach()
        self.group = start_member(self.js.broker, self.assignment.group, self.machine, store_dir, settings)
        self.group.on_quorum_lost = lambda: self.hooks.quorum_lost(self)
        self.replicated = ReplicatedStream(self.stream, self.machine, self.group)
        self.stream.proposals = FeedProposals(self.replicated, self.stream.restart_links)
        self.stream.effects = LeaderEffects(self.replicated, self.js.broker.record_error)
        self.membership = GroupMembership(self.group, self.js.clock)
        self.membership.wanted = frozenset(self.assignment.group.peers)
        self._leader_changed(self.group.leader)  # a sole voter led before start_group returned

    def update(self, assignment: StreamAssignment) -> None:
        """A new configuration from the meta group (its subjects captured again if they changed)."""
        self.assignment = assignment
        config: Any = dict(assignment.config)
        if config != self.stream.config:
            self.stream.update(config)
        if self.membership is not None:  # its peers may have changed (a server removed): the leader follows
            self.membership.want(assignment.group.peers)

    def stop(self, remove: bool) -> None:
        """Stop the member and the stream (``remove``: for good, its group's directory too)."""
        for task in self.publishing:
            task.cancel()
        if self.stream.proposals is not None:
            self.stream.proposals.reset()
        if self.stream.effects is not None:
            self.stream.effects.stop()
        if self.group is not None:
            self.group.stop()
        self.stream.detach()
        self.stream.close(deleted=remove)
        if remove:
            remove_group_log(self.js.broker, self.js.store_dir, self.assignment.group.name)

    # -- leading ------------------------------------------------------------------------------------

    def _leader_changed(self, leader: str | None) -> None:
        leads = self.group is not None and leader == self.group.peer
        if leader is not None and self.group is not None and not leads:
            self.hooks.followed(self)
        stream = self.stream
        if leads == (stream.capture is not None):
            return
        stream.detach()
        stream.capture = self._captured if leads else None
        stream.attach()
        stream.schedules.clear_inflight()  # nats-server's ResetState: the leader fires what is due
        if stream.proposals is not None:
            stream.proposals.reset()
        if self.group is not None:
            self.replicated.batches.reset(leads)  # staged batches go with the leadership, fast ones carry on
        stream.links.sync()  # the mirror or sources run on the leader only, from what its store holds
        if leads:
            self.leader_since_ns = self.js.clock.time_ns()
            if self.membership is not None:
                self.membership.step()
            self.hooks.elected(self)
            self.hooks.led(self)

    def _captured(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        """A publish on the stream's subjects, on its leader: proposed, answered once stored by a quorum."""
        client, client_node = 0, ""
        if self.stream.timeline:  # who published, for the timeline: a client here, or another server's
            client_node = getattr(origin, "remote_name", "") or ""
            client = 0 if client_node else getattr(origin, "cid", 0)
        if not self.publishing:  # nothing ahead of it: taken now, with no task, when the stream's turn is free
            try:
                if self.replicated.answer_at_once(subject, reply, hdr, payload, self._send, client, client_node):
                    return True
            except ProposalFailed as failed:
                get_logger().debug("stream %s: publish not stored (%s)", self.name, failed)
                return True
        task = asyncio.get_running_loop().create_task(self._publish(subject, reply, hdr, payload, client, client_node))
        self.publishing.add(task)
        task.add_done_callback(self.publishing.discard)
        return True

    def _send(self, replies: Replies) -> None:
        for to, answer in replies:
            self.js.router.publish(to, "", None, answer, None)

    async def _publish(
        self, subject: str, reply: str, hdr: bytes | None, payload: bytes, client: int, client_node: str
    ) -> None:
        try:
            replies = await self.replicated.answer(subject, reply, hdr, payload, client, client_node)
        except ProposalFailed as failed:
            get_logger().debug("stream %s: publish not stored (%s)", self.name, failed)
            return
        self._send(replies)


class StreamReplicas(MetaObserver):
    """The streams assigned to this server, each a :class:`StreamReplica` (see the module docstring).

    Every replica tells ``hooks`` of its group's leader (``led`` given, the others set by the owners);
    ``settings`` are the groups' Raft timings.
    """

    def __init__(self, js: JetStream, settings: RaftSettings | None, on_led: Callable[[StreamReplica], None]) -> None:
        self.js = js
        self.settings = settings
        self.hooks: LeaderHooks[StreamReplica] = LeaderHooks(on_led)
        self.replicas: dict[str, StreamReplica] = {}
        # The peers a removed stream's group keeps (its server left the assignment), () when it went.
        self.continuing: Callable[[StreamAssignment], tuple[str, ...]] = lambda assignment: ()
        self.retiring: Retiring[str, StreamReplica] = Retiring(js.clock)

    def stream_assigned(self, assignment: StreamAssignment) -> None:
        existing = self.replicas.get(assignment.name)
        if existing is not None and existing.assignment.group.name == assignment.group.name:  # its peers may change
            existing.update(assignment)
            if existing.is_leader:
                self.hooks.led(existing)
            return
        if existing is not None:
            self.stream_removed(existing.assignment)
        self.retiring.assigned_again(assignment.name)
        replica = StreamReplica(self.js, assignment, self.hooks)
        self.replicas[assignment.name] = replica
        self.js.streams[assignment.name] = replica.stream
        replica.start(self.js.store_dir, self.settings)

    def stream_removed(self, assignment: StreamAssignment) -> None:
        replica = self.replicas.pop(assignment.name, None)
        if replica is None:
            return
        self.js.streams.pop(assignment.name, None)
        self.retiring.remove(assignment.name, replica, self.continuing(assignment))

    def stop(self) -> None:
        """The server stops: every member stops as a crash would, and the directories stay."""
        for name, replica in list(self.replicas.items()):
            self.js.streams.pop(name, None)
            replica.stop(remove=False)
        self.retiring.stop()
        self.replicas.clear()
