"""JetStream replicated across the servers of a cluster: one account's streams and consumers, their checks.

:class:`ReplicatedJetStream` runs on a server whose options carry
:class:`~fakejs.core.replicated_jetstream.ReplicatedJetStream` (set by code, or for a
server with JetStream and a cluster with routes started from a
configuration file or the command line), one for each account with
JetStream.  The server's member of the meta group (``_meta_``) is shared by
its accounts (:class:`~fakejs.jetstream.service.replicated_meta.MetaMember`),
as nats-server's; each account's share hears the assignments of its
account: the streams assigned to this server run as
:class:`~fakejs.jetstream.service.replicated_streams.StreamReplicas`, its consumers as
:class:`~fakejs.jetstream.service.replicated_consumers.ConsumerReplicas`.

**Requests** (for the ``$JS.API`` front of :mod:`fakejs.jetstream.api.replicated`):
a stream create or update is checked against the account's assignments as
today's handlers check it against the local streams, then carried out by the
meta leader; the stream's leader answers the request once the stream runs
under the new assignment (the assignment carries the reply subject).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgpack

from fakejs.core.subjects import overlap
from fakejs.gocompat.gojson import dumps
from fakejs.jetstream.cluster import ConsumerAssignment, MetaLeader, MetaObserver, MetaStateMachine, StreamAssignment
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.replication import ProposalFailed, ReplicatedGroup, system_router
from fakejs.jetstream.replication.hosting import system_account
from fakejs.jetstream.service import limits
from fakejs.jetstream.service.replicated_advisories import LeaderAdvisories
from fakejs.jetstream.service.replicated_consumer_rules import check_consumer, config_from_document
from fakejs.jetstream.service.replicated_consumers import ConsumerReplica, ConsumerReplicas
from fakejs.jetstream.service.replicated_infos import CONSUMER_INFO_PREFIX, INFO_PREFIX, USAGE_SUBJECT, MetaAnswers, ask
from fakejs.jetstream.service.replicated_moves import Moves
from fakejs.jetstream.service.replicated_peers import PeerChanges
from fakejs.jetstream.service.replicated_sections import group_section
from fakejs.jetstream.service.replicated_streams import StreamReplica, StreamReplicas

if TYPE_CHECKING:
    from fakejs.core.router import Subscription
    from fakejs.jetstream.config.consumer import ConsumerConfig
    from fakejs.jetstream.config.stream import StreamConfig
    from fakejs.jetstream.service.jetstream import JetStream
    from fakejs.jetstream.service.replicated_meta import MetaMember

__all__ = ["ReplicatedJetStream", "not_built", "with_consumer_count"]

GONE_SUBJECT = "$FJMETA.CGONE"  # fakejs's own (``.<account>``): a consumer's leader asks the meta leader to remove it
LIST_TIMEOUT = 2.0  # seconds the meta leader waits for the stream leaders' infos of a STREAM.LIST
USAGE_TIMEOUT = 0.5  # seconds the meta leader waits for the servers' usage of a $JS.API.INFO


def not_built(feature: str) -> ApiError:
    """The refusal of what a JetStream replicated across servers cannot do yet (nats-server's 10036 code)."""
    error = api_error("JSClusterUnSupportFeatureErr")
    error.description = f"{feature} in a JetStream cluster across servers: not supported by fakejs yet"
    return error


def with_consumer_count(info: object, count: int) -> None:
    """Set a stream info's ``consumer_count`` to the cluster's count of its consumers, when it has any: its
    leader counts only those it runs (nats-server's ``clusterWideConsCount``)."""
    if count and isinstance(info, dict) and isinstance(info.get("state"), dict):
        info["state"]["consumer_count"] = count


class ReplicatedJetStream(MetaObserver):
    """One account's share, on one server, of a JetStream replicated across the cluster (see the module docstring).

    ``member`` is the server's member of ``_meta_``, shared by its accounts
    (:class:`~fakejs.jetstream.service.replicated_meta.MetaMember`).
    ``answer`` is called with a replica that leads and the assignment request
    it should answer (``"create"`` or ``"update"``), by the API front.
    """

    def __init__(self, js: JetStream, member: MetaMember) -> None:
        self.js = js
        self.member = member
        self.options = member.options
        self.broker = js.broker
        self.peer = member.peer
        self.cluster = member.cluster
        self.answer: Callable[[StreamReplica, str], None] = lambda replica, kind: None
        self.replicas = StreamReplicas(js, self.options.raft, self._led)
        self.answer_consumer: Callable[[ConsumerReplica], None] = lambda replica: None
        self.consumers = ConsumerReplicas(js, self.replicas, self.options.raft, self._consumer_led)
        self.announcements = LeaderAdvisories(js, self, self.replicas, self.consumers)
        self.replicas.hooks.followed, self.consumers.hooks.followed = self._stream_followed, self._consumer_followed
        self.replicas.continuing = self._stream_continues
        self.consumers.continuing = self._consumer_continues
        self.peer_changes = PeerChanges(self)
        self.moves = Moves(self)
        self.observers: tuple[MetaObserver, ...] = (self, self.announcements, self.replicas, self.consumers)
        self._pending_consumers: set[tuple[str, str]] = set()  # consumers whose leader still has to answer
        self._gone_subscription: Subscription | None = None
        self._pending: dict[str, str] = {}  # stream -> the request its leader still has to answer
        self._answers: MetaAnswers | None = None

    # -- lifecycle ------------------------------------------------------------------------------------

    @property
    def account(self) -> str:
        return self.js.account_name

    def start(self) -> None:
        router = system_router(self.broker)
        self._gone_subscription = router.subscribe_internal(f"{GONE_SUBJECT}.{self.account}", self._consumer_gone)
        self._answers = MetaAnswers(router, self.account, self._led_info, self._usage, self._led_consumer_info)
        self.peer_changes.start()
        self.member.attach(self)

    def stop(self) -> None:
        self.member.detach(self)
        self.peer_changes.stop()
        if self._gone_subscription is not None:
            system_router(self.broker).unsubscribe(self._gone_subscription)
            self._gone_subscription = None
        if self._answers is not None:
            self._answers.stop()
            self._answers = None
        self.consumers.stop()
        self.replicas.stop()

    def server_removed(self) -> None:
        """``SERVER.REMOVE`` took this server out: as nats-server's JetStream disabled, the account's assets lead
        and follow no more, and the server no longer offers JetStream (its INFO, ``/jsz`` says ``disabled``)."""
        self.consumers.stop()
        self.replicas.stop()
        self.broker.jetstream_enabled = False

    # -- the server's member of _meta_ ------------------------------------------------------------------

    @property
    def machine(self) -> MetaStateMachine:
        return self.member.machine

    @property
    def group(self) -> ReplicatedGroup | None:
        return self.member.group

    @property
    def leader(self) -> MetaLeader | None:
        return self.member.leader

    @property
    def is_meta_leader(self) -> bool:
        return self.member.is_meta_leader

    def server_name(self, peer: str | None) -> str:
        """A peer id's server name (the id itself while its record is not in the meta state)."""
        return self.member.server_name(peer)

    def spawn(self, work: Any) -> asyncio.Task[None]:
        """Run ``work`` on the server's loop; it is cancelled if the server stops first."""
        return self.member.spawn(work)

    def recovering(self) -> bool:
        """Whether the meta member is still applying the log it had at start."""
        return self.member.recovering()

    # -- the streams' answers -------------------------------------------------------------------------

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
        system_router(self.broker).publish(f"{GONE_SUBJECT}.{self.account}", "", None, packed, None)

    def _consumer_gone(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        if not self.is_meta_leader or self.leader is None:
            return True
        try:
            stream, name = (str(value) for value in msgpack.unpackb(payload, raw=False))
        except (ValueError, TypeError, msgpack.UnpackException):
            return True
        if self.consumer_assignment(stream, name) is not None:
            self.spawn(self._remove_consumer(stream, name))
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
        return await self._infos(f"{CONSUMER_INFO_PREFIX}{self.account}.{stream}.", names)

    async def _infos(self, prefix: str, names: list[str]) -> dict[str, dict[str, Any]]:
        """The infos the leaders asked on ``prefix`` + each name gave within :data:`LIST_TIMEOUT` (the first, by
        name)."""
        subjects = [prefix + name for name in names]
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
        infos = await self._infos(f"{INFO_PREFIX}{self.account}.", names)
        for name, info in infos.items():
            with_consumer_count(info, self.consumer_count(name))
        return infos

    async def usage(self) -> tuple[int, int]:
        """Memory and storage the account's streams take on every server the meta leader reaches (each
        replica counted, as nats-server sums the usage its servers report)."""
        assert self.group is not None
        group = self.group
        reached = [peer for peer in self.machine.state.active_peers() if group.reaches(peer.peer)]
        expected = len(reached) + (0 if any(peer.peer == self.peer for peer in reached) else 1)
        answers = await ask(
            system_router(self.broker), self.js.nuid(), [f"{USAGE_SUBJECT}.{self.account}"], expected, USAGE_TIMEOUT
        )
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
        unsupported = stream_rules.unsupported_feature(checked)
        if unsupported is not None:
            raise unsupported
        limits.stream_bytes_rules(self.js.limits, checked)
        if self._overlaps(checked["subjects"], exclude=checked["name"]):
            raise api_error("JSStreamSubjectOverlapErr")
        return checked

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
        found = self.machine.state.consumers_of(self.js.account_name, stream)
        return sorted(found, key=lambda ca: ca.name)

    def consumer_count(self, stream: str) -> int:
        """How many consumers the stream has across the cluster (the meta group's assignments, nats-server's
        ``len(sa.consumers)``)."""
        return self.machine.state.consumer_count(self.js.account_name, stream)

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
        state, traffic = self.machine.state, system_account(self.broker)
        if consumer:
            held = self.consumers.replicas.get((stream, consumer))
            if held is None or held.group is None:
                return section
            return group_section(section, held.group, held.assignment.group.peers, held.leader_since_ns, state, traffic)
        replica = self.replicas.replicas.get(stream)
        if replica is None or replica.group is None:
            return section
        return group_section(
            section, replica.group, replica.assignment.group.peers, replica.leader_since_ns, state, traffic
        )

    def replica_of(self, group: ReplicatedGroup, peer: str, leading: bool) -> dict[str, Any]:
        """A replica's entry of a ``cluster`` section (see :mod:`~fakejs.jetstream.service.replicated_sections`)."""
        return self.member.replica_of(group, peer, leading)


def _led_elsewhere(group: ReplicatedGroup | None) -> bool:
    """Whether another server leads ``group`` (it answers the requests of its assignments)."""
    return group is not None and group.leader is not None and group.leader != group.peer
