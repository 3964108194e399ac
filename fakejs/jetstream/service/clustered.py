"""What a JetStream does differently in a cluster: placement, leaders, offline assets, the ``cluster`` sections.

:class:`ClusterAssets` sits between an account's JetStream and the
cluster's :class:`~fakejs.jetstream.service.meta.Meta`: a new stream is
placed (or refused with nats-server's 10005) before it exists, a consumer
joins its stream's servers, a consumer whose leader moves answers its
waiting pulls, and the ``cluster`` sections of stream and consumer info
come from the groups.  A stream whose group has no running leader is
offline: it stores nothing, and requests about it get no answer (nats-server
has no leader to ask).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from fakejs.jetstream import advisories
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.service.meta import Group, Meta, PlacementError

if TYPE_CHECKING:
    from fakejs.jetstream.consumer.consumer import Consumer

__all__ = ["ClusterAssets"]


class ClusteredJetStream(advisories.Publisher, Protocol):
    """The account's JetStream, as the cluster layer announces leaders through it."""

    def after_answer(self, action: Callable[[], None]) -> None: ...


class ClusterAssets:
    """One account's streams and consumers as groups of the cluster's meta layer."""

    def __init__(self, meta: Meta, js: ClusteredJetStream) -> None:
        self.meta = meta
        self.js = js
        meta.on_elected = self._elected

    def _elected(self, group: Group, placing: bool) -> None:
        """A replicated stream or consumer has a new leader: its advisory, at once while it is being created,
        else after the answer to the request that moved it (nats-server's new leader speaks after the old one
        has answered)."""
        leader, peers = group.leader, self.meta.peers(group)

        def announce() -> None:
            if group.kind == "S":
                advisories.stream_leader_elected(self.js, group.name, leader, peers)
            else:
                stream, consumer = group.name.split(" ", 1)
                advisories.consumer_leader_elected(self.js, stream, consumer, leader, peers)

        if placing:
            announce()
        else:
            self.js.after_answer(announce)

    # -- streams -------------------------------------------------------------------------------

    def place_stream(self, name: str, config: Mapping[str, Any]) -> Group:
        """Servers and a leader for a new stream, or nats-server's placement error."""
        existing = self.meta.group("S", name)
        if existing is not None:
            return existing
        try:
            return self.meta.place_stream(name, config)
        except PlacementError as refused:
            raise api_error("JSClusterNoPeersErrF", err=refused.description) from None

    def stream_deleted(self, name: str, consumers: list[str]) -> None:
        self.meta.forget("S", name)
        for consumer in consumers:
            self.meta.forget("C", f"{name} {consumer}")

    def stream_group(self, name: str) -> Group | None:
        return self.meta.group("S", name)

    def online(self, stream: str, consumer: str = "") -> bool:
        """A stream, or a consumer, with a running leader (one the meta layer does not know is online)."""
        group = self.meta.group("C", f"{stream} {consumer}") if consumer else self.meta.group("S", stream)
        return group is None or self.meta.online(group)

    def known_offline(self, stream: str, consumer: str = "") -> bool:
        group = self.meta.group("C", f"{stream} {consumer}") if consumer else self.meta.group("S", stream)
        return group is not None and self.meta.known_offline(group)

    def stream_cluster(self, name: str) -> dict[str, Any] | None:
        group = self.meta.group("S", name)
        return None if group is None else self.meta.cluster_info(group)

    # -- consumers ------------------------------------------------------------------------------

    def consumer_created(self, consumer: Consumer, storage: str) -> None:
        """A new consumer: a group on its stream's servers; waiting pulls hear of its leader moving."""
        key = f"{consumer.stream.name} {consumer.name}"
        if self.meta.group("C", key) is not None:
            return
        if self.meta.group("S", consumer.stream.name) is None:
            return
        group = self.meta.place_consumer(consumer.stream.name, consumer.name, consumer.config["num_replicas"], storage)
        group.on_leader_change.append(consumer.leadership_changed)
        group.on_leader_lost.append(consumer.leader_lost)

    def consumer_deleted(self, stream: str, consumer: str) -> None:
        self.meta.forget("C", f"{stream} {consumer}")

    def consumer_group(self, stream: str, consumer: str) -> Group | None:
        return self.meta.group("C", f"{stream} {consumer}")

    def consumer_cluster(self, stream: str, consumer: str) -> dict[str, Any] | None:
        group = self.consumer_group(stream, consumer)
        return None if group is None else self.meta.cluster_info(group)

    def remove_peer(self, group: Group, peer: str) -> None:
        """``STREAM.PEER.REMOVE``: nats-server's checks, then another server replaces the peer."""
        member = self.meta.member(group, peer)
        if not member:
            raise api_error("JSClusterPeerNotMemberErr")
        if not self.meta.remove_peer(group, member):
            raise api_error("JSPeerRemapErr")

    def remove_consumer_peer(self, stream: str, consumer: str, peer: str) -> None:
        """``CONSUMER.PEER.REMOVE``: another server of the stream's replaces the peer in the consumer's group."""
        group, stream_group = self.consumer_group(stream, consumer), self.stream_group(stream)
        if group is None or stream_group is None:
            return
        member = self.meta.member(group, peer)
        if not member:
            raise api_error("JSClusterPeerNotMemberErr")
        if not self.meta.move_consumer_replica(group, stream_group, member):
            raise api_error("JSPeerRemapErr")

    def ha_assets(self) -> int:
        """``/jsz``'s ``ha_assets``: the replicated groups, the meta group included."""
        return 1 + sum(1 for group in self.meta.groups.values() if len(group.replicas) > 1)

    # -- leaders ----------------------------------------------------------------------------------

    def step_down(self, group: Group, preferred: str = "") -> None:
        self.meta.step_down(group, preferred)

    def preferred_problem(self, group: Group, preferred: str) -> str:
        """Why a step-down cannot go to ``preferred`` ("" when it can, or when none is named)."""
        if not preferred:
            return ""
        if preferred not in self.meta.nodes:
            return f'preferred server "{preferred}" not known'
        if preferred == group.leader:
            return f'preferred server "{preferred}" is already leader'
        return ""
