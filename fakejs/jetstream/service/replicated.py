"""JetStream replicated across the servers of a cluster: the server's ``_meta_`` member, its streams, their checks.

:class:`ReplicatedJetStream` runs on a server whose options carry
:class:`~fakejs.core.replicated_jetstream.ReplicatedJetStream` (set by code, or for a
server with JetStream and a cluster with routes started from a
configuration file or the command line).  When the account's JetStream starts it starts
the server's member of the meta group (``_meta_``, the configured servers
as first voters, its log under the store directory as
docs/contributing/replication.md describes), with a
:class:`~fakejs.jetstream.cluster.MetaStateMachine` and a
:class:`~fakejs.jetstream.cluster.MetaLeader`; the streams assigned to this
server run as :class:`~fakejs.jetstream.service.replicated_streams.StreamReplicas`, its consumers as
:class:`~fakejs.jetstream.service.replicated_consumers.ConsumerReplicas`.

**Joining.** Once a meta leader is known, the server asks for its own
``AddPeer`` (its name, cluster and tags): the leader proposes it for itself,
another server sends its record on ``$FJMETA.PEER`` in the system account,
where the leader proposes it; the request is sent again every few
heartbeats until the record is applied (nats-server's servers are added as
the meta leader hears of them).

**Requests** (for the ``$JS.API`` front of :mod:`fakejs.jetstream.api.replicated`):
a stream create or update is checked against the assignments as today's
handlers check it against the local streams, then carried out by the meta
leader; the stream's leader answers the request once the stream runs under
the new assignment (the assignment carries the reply subject).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgpack

from fakejs.core.subjects import overlap
from fakejs.gocompat.gojson import dumps
from fakejs.jetstream.cluster import (
    META_GROUP,
    ConsumerAssignment,
    MetaLeader,
    MetaObserver,
    MetaStateMachine,
    StreamAssignment,
)
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.replication import NotLeader, ProposalFailed, ReplicatedGroup, peer_id, start_group, system_router
from fakejs.jetstream.service import limits
from fakejs.jetstream.service.meta_membership import MetaBootstrap, next_change
from fakejs.jetstream.service.replicated_advisories import LeaderAdvisories
from fakejs.jetstream.service.replicated_consumer_rules import check_consumer, config_from_document
from fakejs.jetstream.service.replicated_consumers import ConsumerReplica, ConsumerReplicas
from fakejs.jetstream.service.replicated_infos import CONSUMER_INFO_PREFIX, INFO_PREFIX, USAGE_SUBJECT, MetaAnswers, ask
from fakejs.jetstream.service.replicated_peers import PeerChanges
from fakejs.jetstream.service.replicated_remove import ServerEvents
from fakejs.jetstream.service.replicated_sections import group_section, replica_entry
from fakejs.jetstream.service.replicated_streams import StreamReplica, StreamReplicas

if TYPE_CHECKING:
    from fakejs.core.replicated_jetstream import ReplicatedJetStream as ReplicatedOptions
    from fakejs.core.router import Subscription
    from fakejs.jetstream.config.consumer import ConsumerConfig
    from fakejs.jetstream.config.stream import StreamConfig
    from fakejs.jetstream.service.jetstream import JetStream

__all__ = ["PEER_SUBJECT", "ReplicatedJetStream", "not_built"]

PEER_SUBJECT = "$FJMETA.PEER"  # fakejs's own: a server's record for the meta leader to propose
LEADER_SUBJECT = "$FJMETA.LEADER"  # fakejs's own: a new meta leader tells every server (those not in _meta_ ask)
GONE_SUBJECT = "$FJMETA.CGONE"  # fakejs's own: a consumer's leader asks the meta leader to remove it (inactive)
LIST_TIMEOUT = 2.0  # seconds the meta leader waits for the stream leaders' infos of a STREAM.LIST
USAGE_TIMEOUT = 0.5  # seconds the meta leader waits for the servers' usage of a $JS.API.INFO
REPEAT_HEARTBEATS = 4  # an AddPeer not applied yet is asked for again after this many heartbeats


# Settings a replicated stream does not run yet (each replica would republish, write markers or fire
# schedules on its own; batches go through a single server's path only).
UNBUILT_SETTINGS = (
    ("allow_atomic", "atomic batch publishing"),
    ("allow_batched", "fast batch publishing"),
    ("republish", "republishing"),
    ("subject_delete_marker_ttl", "subject delete markers"),
    ("allow_msg_schedules", "message schedules"),
)


def not_built(feature: str) -> ApiError:
    """The refusal of what a JetStream replicated across servers cannot do yet (nats-server's 10036 code)."""
    error = api_error("JSClusterUnSupportFeatureErr")
    error.description = f"{feature} in a JetStream cluster across servers: not supported by fakejs yet"
    return error


class ReplicatedJetStream(MetaObserver):
    """One server's share of a JetStream replicated across the cluster (see the module docstring).

    ``answer`` is called with a replica that leads and the assignment request
    it should answer (``"create"`` or ``"update"``), by the API front.
    """

    def __init__(self, js: JetStream, options: ReplicatedOptions) -> None:
        self.js = js
        self.options = options
        self.broker = js.broker
        self.peer = peer_id(self.broker.name)
        self.cluster = self.broker.cluster_name
        self.machine = MetaStateMachine(self.peer, self.broker.record_error)
        self.answer: Callable[[StreamReplica, str], None] = lambda replica, kind: None
        self.replicas = StreamReplicas(js, options.raft, self._led)
        self.answer_consumer: Callable[[ConsumerReplica], None] = lambda replica: None
        self.consumers = ConsumerReplicas(js, self.replicas, options.raft, self._consumer_led)
        self.announcements = LeaderAdvisories(js, self, self.replicas, self.consumers)
        self.replicas.on_followed, self.consumers.on_followed = self._stream_followed, self._consumer_followed
        self.replicas.continuing = self._stream_continues
        self.consumers.continuing = self._consumer_continues
        self.peer_changes = PeerChanges(self)
        self._pending_consumers: set[tuple[str, str]] = set()  # consumers whose leader still has to answer
        self._gone_subscription: Subscription | None = None
        self._leader_subscription: Subscription | None = None
        self._heard_leader = False  # a meta leader told this server it leads (its membership is not to be learnt)
        self.group: ReplicatedGroup | None = None
        self.leader: MetaLeader | None = None
        self._pending: dict[str, str] = {}  # stream -> the request its leader still has to answer
        self._peer_subscription: Subscription | None = None
        self._answers: MetaAnswers | None = None
        self._replayed_to = 0  # the last entry of the meta log as read back at start
        self._asking: Any = None
        self._bootstrap: MetaBootstrap | None = None
        self.changing = False  # a membership change of _meta_ is under way (the meta leader's)
        self._events = ServerEvents(self)
        self._told_removed = False  # this server's removal was logged and advertised
        self._tasks: set[asyncio.Future[Any]] = set()

    # -- lifecycle ------------------------------------------------------------------------------------

    def start(self) -> None:
        self.machine.observe(self)
        self.machine.observe(self.announcements)  # before the replicas stop what it announces
        self.machine.observe(self.replicas)
        self.machine.observe(self.consumers)
        router = system_router(self.broker)
        self._peer_subscription = router.subscribe_internal(PEER_SUBJECT, self._peer_asked)
        self._gone_subscription = router.subscribe_internal(GONE_SUBJECT, self._consumer_gone)
        self._leader_subscription = router.subscribe_internal(LEADER_SUBJECT, self._leader_told)
        self._answers = MetaAnswers(router, self._led_info, self._usage, self._led_consumer_info)
        self._events.start()
        self.peer_changes.start()
        self._start_member([peer_id(name) for name in self.options.peers])
        assert self.group is not None
        self._replayed_to = self.group.node.log.last_index
        if not self.options.peers and not self._settled():  # the first voters come from the routes
            self._bootstrap = MetaBootstrap(self.broker, self.js.clock, self._settled, self._bootstrapped)
            self._bootstrap.start()
            self._ask_to_join()  # a running group's leader adds this server
        elif self.group.leader is not None:  # a sole voter led before start_group returned
            self._ask_to_join()

    def _start_member(self, peers: list[str]) -> None:
        self.group = start_group(
            self.broker, META_GROUP, peers, self.machine, store_dir=self.js.store_dir, settings=self.options.raft
        )
        self.leader = MetaLeader(self.group, self.machine, cluster=self.cluster, rng=self.js.rng, clock=self.js.clock)

    def _settled(self) -> bool:
        """Whether the meta member has a log, a vote or a leader: its membership is no longer to be learned."""
        group = self.group
        if group is None or self._heard_leader or group.leader is not None:
            return True
        return group.node.log.last_index > 0 or group.node.term > 0

    def _bootstrapped(self, peers: list[str]) -> None:
        """The routes named the first voters: the member (nothing stored yet) starts again with them."""
        if self.group is not None:
            self.group.stop()
        self._start_member(peers)
        assert self.group is not None
        self.group.campaign_soon()  # nats-server's bootstrapped meta group campaigns early too

    def stop(self) -> None:
        if self._asking is not None:
            self._asking.cancel()
        if self._bootstrap is not None:
            self._bootstrap.stop()
        self._events.stop()
        self.peer_changes.stop()
        for task in self._tasks:
            task.cancel()
        for subscription in (self._peer_subscription, self._gone_subscription, self._leader_subscription):
            if subscription is not None:
                system_router(self.broker).unsubscribe(subscription)
        self._peer_subscription = self._gone_subscription = self._leader_subscription = None
        if self._answers is not None:
            self._answers.stop()
            self._answers = None
        if self.group is not None:
            self.group.stop()
        self.consumers.stop()
        self.replicas.stop()

    @property
    def is_meta_leader(self) -> bool:
        return self.group is not None and self.group.is_leader

    def server_name(self, peer: str | None) -> str:
        """A peer id's server name (the id itself while its record is not in the meta state)."""
        record = self.machine.state.peers.get(peer or "")
        return record.name if record is not None else (peer or "")

    # -- joining: AddPeer ------------------------------------------------------------------------------

    def leader_changed(self, leader: str | None, term: int) -> None:
        if leader is not None:
            self._ask_to_join()
        if leader == self.peer:
            self._events.now_leading()
            self._change_membership()
            system_router(self.broker).publish(LEADER_SUBJECT, "", None, b"", None)
            if self.group is not None and not self.recovering():
                self.announcements.meta_elected(self.broker, self.group)

    def _leader_told(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        """A new meta leader's word: a server not in ``_meta_`` yet asks to join now (and learns no first voters)."""
        if not self.is_meta_leader:
            self._heard_leader = True
            self._ask_to_join()
        return True

    def peers_changed(self, peers: Any) -> None:
        self._change_membership()
        if self.group is not None and self.group.leader is not None and not self._joined() and not self._asking:
            self._ask_to_join()  # its record went offline (the log caught up after its restart): it runs again
        if self._removed() and not self._told_removed and not self.recovering():
            self._told_removed = True
            self._events.removed()
            self.consumers.stop()  # as nats-server's JetStream disabled: its assets lead and follow no more
            self.replicas.stop()

    def _joined(self) -> bool:
        record = self.machine.state.peers.get(self.peer)
        joined = record is not None and not record.removed and not record.offline and record.name == self.broker.name
        return joined and self.group is not None and self.peer in self.group.members

    def _removed(self) -> bool:
        """Whether ``SERVER.REMOVE`` took this server out (it no longer asks to join, as nats-server's disables
        its JetStream)."""
        record = self.machine.state.peers.get(self.peer)
        return record is not None and record.removed

    async def membership_settled(self, peer: str) -> None:
        """Wait until the meta leader's membership of ``_meta_`` no longer holds the removed ``peer``."""
        while (group := self.group) is not None and not group.stopped:
            if peer not in group.members and group.node.commit_index >= group.node.membership_index:
                return
            if not group.is_leader and group.peer != peer:
                raise NotLeader(group.leader)
            await asyncio.sleep(group.node.settings.heartbeat_interval)

    def _record(self) -> tuple[str, str, tuple[str, ...]]:
        return self.broker.name, self.cluster, tuple(self.broker.options.server_tags)

    def _ask_to_join(self) -> None:
        if self._asking is not None:
            self._asking.cancel()
            self._asking = None
        if self.is_meta_leader:
            self._change_membership()
        if self._joined() or self._removed() or self.group is None or self.group.stopped:
            return
        if self.is_meta_leader:
            self._spawn(self._add_peer(*self._record()))
        else:
            packed = msgpack.packb(list(self._record()), use_bin_type=True)
            system_router(self.broker).publish(PEER_SUBJECT, "", None, packed, None)
        heartbeat = self.group.node.settings.heartbeat_interval
        self._asking = self.js.clock.call_later(heartbeat * REPEAT_HEARTBEATS, self._ask_to_join)

    def _peer_asked(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        """Another server's record: proposed by the meta leader (others drop it)."""
        if not self.is_meta_leader:
            return True
        try:
            name, cluster, tags = msgpack.unpackb(payload, raw=False)
            record = (str(name), str(cluster), tuple(str(tag) for tag in tags))
        except (ValueError, TypeError, msgpack.UnpackException):
            return True
        known = self.machine.state.peers.get(peer_id(record[0]))
        if known is None or (known.name, known.cluster, known.tags) != record or known.offline:
            self._spawn(self._add_peer(*record))
        return True

    async def _add_peer(self, name: str, cluster: str, tags: tuple[str, ...]) -> None:
        assert self.leader is not None
        try:
            await self.leader.add_peer(name, cluster, tags)
        except ProposalFailed:
            pass  # asked again at its next turn

    def _change_membership(self) -> None:
        """On the meta leader: bring the group's membership one step closer to the meta state's servers."""
        group = self.group
        if self.changing or group is None or not group.is_leader:
            return
        change = next_change(self.machine.state, group)
        if change is None:
            return
        kind, peer = change
        self.changing = True
        future = group.add_peer(peer) if kind == "add" else group.remove_peer(peer)
        future.add_done_callback(self._membership_changed)

    def _membership_changed(self, future: asyncio.Future[int]) -> None:
        self.changing = False
        if future.cancelled() or future.exception() is None:
            self._change_membership()
        elif self.group is not None and not self.group.stopped:  # refused for now (a change under way...)
            self.js.clock.call_later(self.group.node.settings.heartbeat_interval, self._change_membership)

    def spawn(self, work: Any) -> None:
        """Run ``work`` on the server's loop; it is cancelled if the server stops first."""
        self._spawn(work)

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- the streams' answers -------------------------------------------------------------------------

    def recovering(self) -> bool:
        """Whether the meta member is still applying the log it had at start (nats-server answers no request
        then: the requests of a log read back were answered before)."""
        return self.group is None or self.group.applied_index < self._replayed_to

    def stream_assigned(self, assignment: StreamAssignment) -> None:
        """A request its leader answers: held until this server leads, dropped once another one does."""
        if assignment.reply and not self.recovering():
            known = self.replicas.replicas.get(assignment.name)
            if known is not None and _led_elsewhere(known.group):
                return
            self._pending[assignment.name] = "update" if known is not None else "create"

    def _led(self, replica: StreamReplica) -> None:
        kind = self._pending.pop(replica.name, "")
        if kind and replica.assignment.reply:
            self.answer(replica, kind)

    def consumer_assigned(self, assignment: ConsumerAssignment) -> None:
        if assignment.reply and not self.recovering():
            known = self.consumers.replicas.get((assignment.stream, assignment.name))
            if known is not None and known.assignment.group == assignment.group and _led_elsewhere(known.group):
                return
            self._pending_consumers.add((assignment.stream, assignment.name))

    def _stream_followed(self, replica: StreamReplica) -> None:
        self._pending.pop(replica.name, None)  # its leader answers

    def _consumer_followed(self, replica: ConsumerReplica) -> None:
        self._pending_consumers.discard((replica.assignment.stream, replica.name))

    def _consumer_led(self, replica: ConsumerReplica) -> None:
        key = (replica.assignment.stream, replica.name)
        if key in self._pending_consumers and replica.assignment.reply:
            self._pending_consumers.discard(key)
            self.answer_consumer(replica)

    def _stream_continues(self, old: StreamAssignment) -> tuple[str, ...]:
        """The peers a stream's group keeps after this server left its assignment (() when the group went)."""
        current = self.machine.state.stream(old.account, old.name)
        return current.group.peers if current is not None and current.group.name == old.group.name else ()

    def _consumer_continues(self, old: ConsumerAssignment) -> tuple[str, ...]:
        current = self.machine.state.consumer(old.account, old.stream, old.name)
        return current.group.peers if current is not None and current.group.name == old.group.name else ()

    # -- consumers going on their own (an ephemeral's inactivity) ----------------------------------------

    def consumer_gone(self, stream: str, name: str) -> None:
        """The consumer's leader removes it (inactive): the meta leader proposes its removal."""
        packed = msgpack.packb([stream, name], use_bin_type=True)
        system_router(self.broker).publish(GONE_SUBJECT, "", None, packed, None)

    def _consumer_gone(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        if not self.is_meta_leader or self.leader is None:
            return True
        try:
            stream, name = (str(value) for value in msgpack.unpackb(payload, raw=False))
        except (ValueError, TypeError, msgpack.UnpackException):
            return True
        if self.consumer_assignment(stream, name) is not None:
            self._spawn(self._remove_consumer(stream, name))
        return True

    async def _remove_consumer(self, stream: str, name: str) -> None:
        assert self.leader is not None
        try:
            await self.leader.delete_consumer(self.js.account_name, stream, name)
        except (ProposalFailed, ApiError):
            pass  # gone meanwhile, or leadership moved (its leader asks again when it next finds it inactive)

    # -- what the meta leader asks of the servers -------------------------------------------------------

    def _led_info(self, name: str) -> bytes | None:
        """A listed stream's info, if this server leads it (nats-server lists no dynamic metadata)."""
        replica = self.replicas.replicas.get(name)
        if replica is None or not replica.is_leader:
            return None
        return dumps(replica.stream.info(cluster=True, dynamic_metadata=False)).encode()

    def _led_consumer_info(self, stream: str, name: str) -> bytes | None:
        """A listed consumer's info, if this server leads it."""
        replica = self.consumers.replicas.get((stream, name))
        if replica is None or not replica.is_leader or replica.consumer is None:
            return None
        return dumps(replica.consumer.info(dynamic_metadata=False)).encode()

    async def consumer_infos(self, stream: str, names: list[str]) -> dict[str, dict[str, Any]]:
        """The infos of these consumers from their leaders (those that answered within :data:`LIST_TIMEOUT`)."""
        subjects = [f"{CONSUMER_INFO_PREFIX}{stream}.{name}" for name in names]
        answers = await ask(system_router(self.broker), self.js.nuid(), subjects, len(names), LIST_TIMEOUT)
        infos: dict[str, dict[str, Any]] = {}
        for index, payload in answers:
            infos.setdefault(names[index], json.loads(payload))
        return infos

    def _usage(self) -> bytes:
        packed: bytes = msgpack.packb(list(self.js.usage()))
        return packed

    async def stream_infos(self, names: list[str]) -> dict[str, dict[str, Any]]:
        """The infos of these streams from their leaders (those that answered within :data:`LIST_TIMEOUT`)."""
        subjects = [INFO_PREFIX + name for name in names]
        answers = await ask(system_router(self.broker), self.js.nuid(), subjects, len(names), LIST_TIMEOUT)
        infos: dict[str, dict[str, Any]] = {}
        for index, payload in answers:
            infos.setdefault(names[index], json.loads(payload))
        return infos

    async def usage(self) -> tuple[int, int]:
        """Memory and storage the account's streams take on every server the meta leader reaches (each
        replica counted, as nats-server sums the usage its servers report)."""
        assert self.group is not None
        group = self.group
        reached = [peer for peer in self.machine.state.active_peers() if group.reaches(peer.peer)]
        expected = len(reached) + (0 if any(peer.peer == self.peer for peer in reached) else 1)
        answers = await ask(system_router(self.broker), self.js.nuid(), [USAGE_SUBJECT], expected, USAGE_TIMEOUT)
        memory = storage = 0
        for _, payload in answers:
            try:
                used_memory, used_storage = msgpack.unpackb(payload)
            except (ValueError, TypeError, msgpack.UnpackException):
                continue
            memory, storage = memory + int(used_memory), storage + int(used_storage)
        return memory, storage

    # -- checks (the meta leader's, before it proposes) ----------------------------------------------

    def assigned(self, name: str) -> StreamAssignment | None:
        return self.machine.state.stream(self.js.account_name, name)

    def assignments(self) -> list[StreamAssignment]:
        account = self.js.account_name
        found = [sa for (owner, _), sa in self.machine.state.streams.items() if owner == account]
        return sorted(found, key=lambda sa: sa.name)

    def stream_config(self, name: str) -> StreamConfig | None:
        assignment = self.assigned(name)
        return None if assignment is None else dict(assignment.config)  # type: ignore[return-value]

    def check_create(self, config: StreamConfig, pedantic: bool) -> StreamConfig:
        """``STREAM.CREATE``'s checks against the assigned streams; the configuration to assign."""
        # The stream rules come with the first stream created
        from fakejs.jetstream.config import stream_rules, stream_sources
        from fakejs.jetstream.config.stream import copy_static_metadata

        checked = stream_rules.check_create(config, pedantic, self.stream_config, clustered=True)
        limits.stream_bytes_rules(self.js.limits, checked)
        existing = self.stream_config(checked["name"])
        if existing is not None:
            copy_static_metadata(checked, existing)
            return checked
        self._refuse_unbuilt(checked)
        unsupported = stream_rules.unsupported_feature(checked)
        if unsupported is not None:
            raise unsupported
        limits.new_stream(self.js.limits, checked, [sa.config for sa in self.assignments()])  # type: ignore[misc]
        stream_sources.check_filters(checked)
        if self._overlaps(checked["subjects"]):
            raise api_error("JSStreamSubjectOverlapErr")
        return checked

    def check_update(self, config: StreamConfig, pedantic: bool) -> StreamConfig:
        """``STREAM.UPDATE``'s checks against the stream's assignment; the configuration to assign."""
        # The update rules come with the first stream updated
        from fakejs.jetstream.config import stream_rules
        from fakejs.jetstream.config.stream import set_static_metadata

        old = self.stream_config(config["name"])
        if old is None:
            raise api_error("JSStreamNotFoundErr")
        set_static_metadata(config)
        checked = stream_rules.check_update(old, config, pedantic, self.stream_config, clustered=True)
        self._refuse_unbuilt(checked)
        unsupported = stream_rules.unsupported_feature(checked)
        if unsupported is not None:
            raise unsupported
        limits.stream_bytes_rules(self.js.limits, checked)
        if self._overlaps(checked["subjects"], exclude=checked["name"]):
            raise api_error("JSStreamSubjectOverlapErr")
        return checked

    def _refuse_unbuilt(self, config: StreamConfig) -> None:
        """What each replica would do on its own, or only a single server does yet, is refused by name."""
        for key, feature in UNBUILT_SETTINGS:
            if config.get(key):
                raise not_built(feature)

    # -- consumers: the meta leader's checks -----------------------------------------------------------

    def refuse_missing_consumer(self, stream: str, name: str) -> None:
        """On the meta leader: 10059 for a stream that does not exist, 10014 for a consumer that does not (a
        request about it its leader would answer)."""
        if self.is_meta_leader:
            if self.assigned(stream) is None:
                raise api_error("JSStreamNotFoundErr")
            if self.consumer_assignment(stream, name) is None:
                raise api_error("JSConsumerNotFoundErr")

    def all_offline(self, stream: str, consumer: str = "") -> bool:
        """Whether every server of the stream's (or consumer's) group is known offline."""
        assignment = self.consumer_assignment(stream, consumer) if consumer else self.assigned(stream)
        if assignment is None:
            return False
        records = [self.machine.state.peers.get(peer) for peer in assignment.group.peers]
        return all(record is not None and record.offline for record in records)

    def consumer_assignment(self, stream: str, name: str) -> ConsumerAssignment | None:
        return self.machine.state.consumer(self.js.account_name, stream, name)

    def consumer_assignments(self, stream: str) -> list[ConsumerAssignment]:
        account = self.js.account_name
        found = [ca for (owner, of, _), ca in self.machine.state.consumers.items() if (owner, of) == (account, stream)]
        return sorted(found, key=lambda ca: ca.name)

    def check_consumer(
        self, stream: str, config: ConsumerConfig, action: str, pedantic: bool
    ) -> tuple[str, ConsumerConfig, bool]:
        """``CONSUMER.CREATE``'s checks against the assignments: the name, the configuration, whether it is new."""
        stream_config = self.stream_config(stream)
        if stream_config is None:
            raise api_error("JSStreamNotFoundErr")
        assigned = {ca.name: ca for ca in self.consumer_assignments(stream)}

        def existing(name: str) -> ConsumerConfig | None:
            found = assigned.get(name)
            return None if found is None else config_from_document(found.config)

        others = {name: config_from_document(ca.config) for name, ca in assigned.items()}
        limits, rng, router = self.js.limits, self.js.rng, self.js.router
        return check_consumer(
            stream_config, config, action, pedantic, existing, others, limits, rng, not_built, router.has_exact_interest
        )

    def _overlaps(self, subjects: list[str], exclude: str = "") -> bool:
        others = [sa for sa in self.assignments() if sa.name != exclude]
        return any(
            overlap(mine, theirs) for other in others for mine in subjects for theirs in other.config["subjects"] or []
        )

    # -- the cluster section ----------------------------------------------------------------------------

    def cluster_section(self, stream: str, consumer: str = "") -> dict[str, Any] | None:
        """A stream's or consumer's ``cluster`` section as nats-server's leader fills it in
        (:mod:`~fakejs.jetstream.service.replicated_sections`)."""
        section: dict[str, Any] = {"name": self.cluster}
        state = self.machine.state
        if consumer:
            held = self.consumers.replicas.get((stream, consumer))
            if held is None or held.group is None:
                return section
            return group_section(section, held.group, held.assignment.group.peers, held.leader_since_ns, state)
        replica = self.replicas.replicas.get(stream)
        if replica is None or replica.group is None:
            return section
        return group_section(section, replica.group, replica.assignment.group.peers, replica.leader_since_ns, state)

    def replica_of(self, group: ReplicatedGroup, peer: str, leading: bool) -> dict[str, Any]:
        """A replica's entry of a ``cluster`` section (see :mod:`~fakejs.jetstream.service.replicated_sections`)."""
        return replica_entry(group, peer, leading, self.machine.state)


def _led_elsewhere(group: ReplicatedGroup | None) -> bool:
    """Whether another server leads ``group`` (it answers the requests of its assignments)."""
    return group is not None and group.leader is not None and group.leader != group.peer
