"""Which server of a JetStream replicated across servers sends which advisory, as nats-server's servers do.

- a stream's or consumer's **new leader** (of a group of more than one
  server): ``STREAM.LEADER_ELECTED.<stream>`` or
  ``CONSUMER.LEADER_ELECTED.<stream>.<consumer>``, in the account and in its
  system account (nats-server's ``sendStreamLeaderElectAdvisory``,
  ``sendConsumerLeaderElectAdvisory``); an R1 asset has no Raft group in
  nats-server and announces no leader;
- a replica whose group **lost its quorum** (it stopped leading, or its
  election timer fired, reaching no quorum of the group's servers; see
  :class:`~fakejs.jetstream.replication.ReplicatedGroup`), once its group
  has run for five seconds: ``STREAM.QUORUM_LOST.<stream>`` or
  ``CONSUMER.QUORUM_LOST.<stream>.<consumer>``, in the account and in its
  system account, at most once each ten seconds per group
  (``sendStreamLostQuorumAdvisory``, ``shouldSendLostQuorum``);
- the **leader of a deleted stream or consumer** (not one moved off this
  server, nor while the meta log is read back at start):
  ``STREAM.DELETED.<stream>``, ``CONSUMER.DELETED.<stream>.<consumer>``, the
  consumers before their stream;
- the **meta leader** once elected: ``DOMAIN.LEADER_ELECTED`` in its system
  account, naming itself by peer id and every server of ``_meta_``.

The elections and lost quorums name the group's servers as ``PeerInfo``
(name, current, offline, active, lag, peer) as this member sees them.  The
created and updated advisories and the API audit are sent where the
requests are answered: :mod:`fakejs.jetstream.api.replicated`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from fakejs.jetstream import advisories
from fakejs.jetstream.cluster import ConsumerAssignment, MetaObserver, StreamAssignment
from fakejs.jetstream.quorum_advisories import consumer_quorum_lost, stream_quorum_lost
from fakejs.jetstream.replication import system_router

if TYPE_CHECKING:
    from fakejs.core.broker import Broker
    from fakejs.jetstream.replication import ReplicatedGroup
    from fakejs.jetstream.service.jetstream import JetStream
    from fakejs.jetstream.service.replicated_consumers import ConsumerReplica, ConsumerReplicas
    from fakejs.jetstream.service.replicated_streams import StreamReplica, StreamReplicas

__all__ = ["LeaderAdvisories", "meta_elected", "peer_infos"]

QUORUM_LOST_AFTER = 5.0  # seconds a group runs before it says it lost its quorum (nats-server's)
QUORUM_LOST_INTERVAL = 10.0  # seconds between two quorum-lost advisories of a group (lostQuorumAdvInterval)


class PeerNames(Protocol):
    """What the advisories need of a server's share of the replicated JetStream."""

    def server_name(self, peer: str | None) -> str: ...

    def recovering(self) -> bool: ...

    def assigned(self, name: str) -> StreamAssignment | None: ...

    def consumer_assignment(self, stream: str, name: str) -> ConsumerAssignment | None: ...

    def replica_of(self, group: ReplicatedGroup, peer: str, leading: bool) -> dict[str, Any]: ...


class LeaderAdvisories(MetaObserver):
    """The leader-elected and quorum-lost advisories of one server (see the module docstring); it hooks itself to the
    server's stream and consumer replicas."""

    def __init__(self, js: JetStream, names: PeerNames, streams: StreamReplicas, consumers: ConsumerReplicas) -> None:
        self.js = js
        self.names = names
        self.streams, self.consumers = streams, consumers
        streams.hooks.elected, streams.hooks.quorum_lost = self.stream_elected, self.stream_quorum_lost
        consumers.hooks.elected, consumers.hooks.quorum_lost = self.consumer_elected, self.consumer_quorum_lost
        self._quorum_lost_sent: dict[str, float] = {}  # group -> when its last quorum-lost advisory went out

    def stream_removed(self, assignment: StreamAssignment) -> None:
        """Told before the replicas are: a deleted stream's leader announces it."""
        replica = self.streams.replicas.get(assignment.name)
        if replica is None or not replica.is_leader or self.names.recovering():
            return
        if self.names.assigned(assignment.name) is None:  # deleted, not moved off this server
            advisories.stream_action(self.js, assignment.name, "delete")

    def consumer_removed(self, assignment: ConsumerAssignment) -> None:
        """Told before the replicas are: a deleted consumer's leader announces it."""
        replica = self.consumers.replicas.get((assignment.stream, assignment.name))
        if replica is None or not replica.is_leader or self.names.recovering():
            return
        if self.names.consumer_assignment(assignment.stream, assignment.name) is None:
            advisories.named_consumer_action(self.js, assignment.stream, assignment.name, "delete")

    def peer_infos(self, group: ReplicatedGroup, peers: tuple[str, ...] | list[str]) -> list[dict[str, Any]]:
        """Every server of ``group`` as nats-server's ``PeerInfo``, as this member sees them."""
        return peer_infos(self.names, group, peers)

    def stream_elected(self, replica: StreamReplica) -> None:
        """This server leads a stream: announced when its group has more than one server."""
        group, peers = replica.group, replica.assignment.group.peers
        if group is not None and len(peers) > 1:
            leader = self.names.server_name(group.leader)
            advisories.stream_leader_elected(self.js, replica.name, leader, self.peer_infos(group, peers))

    def consumer_elected(self, replica: ConsumerReplica) -> None:
        """This server leads a consumer: announced when its group has more than one server."""
        group, assignment = replica.group, replica.assignment
        if group is not None and len(assignment.group.peers) > 1:
            leader = self.names.server_name(group.leader)
            infos = self.peer_infos(group, assignment.group.peers)
            advisories.consumer_leader_elected(self.js, assignment.stream, assignment.name, leader, infos)

    def stream_quorum_lost(self, replica: StreamReplica) -> None:
        group, peers = replica.group, replica.assignment.group.peers
        if group is not None and self._quorum_lost_due(group, peers):
            routers = (self.js.router, self.js.system_router)
            stream_quorum_lost(self.js, routers, replica.name, self.peer_infos(group, peers))

    def consumer_quorum_lost(self, replica: ConsumerReplica) -> None:
        group, assignment = replica.group, replica.assignment
        if group is not None and self._quorum_lost_due(group, assignment.group.peers):
            routers = (self.js.router, self.js.system_router)
            infos = self.peer_infos(group, assignment.group.peers)
            consumer_quorum_lost(self.js, routers, assignment.stream, assignment.name, infos)

    def _quorum_lost_due(self, group: ReplicatedGroup, peers: tuple[str, ...]) -> bool:
        """Whether a group that lost its quorum says so now (see the module docstring)."""
        now = group.clock.monotonic()
        if len(peers) < 2 or now - group.created <= QUORUM_LOST_AFTER:
            return False
        last = self._quorum_lost_sent.get(group.name)
        if last is not None and now - last < QUORUM_LOST_INTERVAL:
            return False
        self._quorum_lost_sent[group.name] = now
        return True


class ServerNames(Protocol):
    """What a server's ``PeerInfo`` entries need: the servers' names, a replica's entry as its leader sees it."""

    def server_name(self, peer: str | None) -> str: ...

    def replica_of(self, group: ReplicatedGroup, peer: str, leading: bool) -> dict[str, Any]: ...


def peer_infos(names: ServerNames, group: ReplicatedGroup, peers: tuple[str, ...] | list[str]) -> list[dict[str, Any]]:
    """Every server of ``group`` as nats-server's ``PeerInfo``, as this member sees them."""
    leading = group.is_leader
    infos = []
    for peer in peers:
        if peer == group.peer:
            infos.append({"name": names.server_name(peer), "current": True, "active": 0, "peer": peer})
        else:
            infos.append(names.replica_of(group, peer, leading))
    return infos


def meta_elected(js: JetStream, names: ServerNames, broker: Broker, group: ReplicatedGroup) -> None:
    """This server leads ``_meta_``: the domain leader elected advisory, in the system account."""
    infos = peer_infos(names, group, sorted(group.members))
    advisories.domain_leader_elected(js, system_router(broker), group.peer, infos, broker.cluster_name)
