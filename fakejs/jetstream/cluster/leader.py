"""The meta group's leader: the checks and placement behind each request, and the proposal that carries it.

:class:`MetaLeader` stands beside a server's member of the ``_meta_`` group
and its :class:`~fakejs.jetstream.cluster.machine.MetaStateMachine`.  Each
request (what a ``$JS.API`` handler will ask) is checked against the state
as applied so far, turned into an entry (a new stream placed by
:mod:`~fakejs.jetstream.cluster.placement`'s rules among the servers of the
meta group), proposed, and resolves once the entry is applied on this
member, with the assignment as the state holds it.

A member that does not lead refuses at once with
:class:`~fakejs.jetstream.replication.NotLeader` (naming the leader's peer
id); the checks refuse with nats-server's API errors
(:func:`~fakejs.jetstream.errors.api_error`: 10005 for placement, 10058,
10059, 10014, 10044); a proposal that fails later fails with the group's
:class:`~fakejs.jetstream.replication.ProposalFailed`.  When two requests
race for one name, the entry applied first wins and the other request is
refused as if it had come after.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from fakejs.core.clock import Clock
from fakejs.jetstream.cluster.assignments import ConsumerAssignment, MetaPeer, RaftGroup, StreamAssignment
from fakejs.jetstream.cluster.entries import (
    AddPeer,
    AssignConsumer,
    AssignStream,
    MetaEntry,
    RemoveConsumer,
    RemovePeer,
    RemoveStream,
    UpdateStream,
    encode_entry,
)
from fakejs.jetstream.cluster.machine import MetaStateMachine
from fakejs.jetstream.cluster.placement import (
    Candidate,
    PlacementError,
    group_name,
    new_group_id,
    place_consumer_replicas,
    place_stream_replicas,
    storage_letter,
)
from fakejs.jetstream.cluster.state import MetaState
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.replication import NotLeader, ReplicatedGroup

__all__ = ["META_GROUP", "MetaLeader"]

META_GROUP = "_meta_"  # nats-server's name of the meta group


class MetaLeader:
    """The requests a server's meta member serves while it leads (see the module docstring).

    ``cluster`` is this server's cluster (where a stream without ``placement.cluster`` goes),
    ``rng`` the generator placement draws from, ``clock`` what dates an assignment.
    """

    def __init__(
        self,
        group: ReplicatedGroup,
        machine: MetaStateMachine,
        *,
        cluster: str,
        rng: random.Random,
        clock: Clock,
    ) -> None:
        self.group = group
        self.machine = machine
        self.cluster = cluster
        self.rng = rng
        self.clock = clock

    @property
    def state(self) -> MetaState:
        return self.machine.state

    # -- streams ------------------------------------------------------------------------------------

    async def create_stream(
        self,
        account: str,
        config: Mapping[str, Any],
        reply: str = "",
        client: Mapping[str, Any] | None = None,
        subject: str = "",
    ) -> StreamAssignment:
        """Place a new stream and assign it; an existing one of the same configuration is returned as it is."""
        self._check_leader()
        config = dict(config)
        existing = self.state.stream(account, str(config.get("name", "")))
        if existing is not None:
            return self._same_stream(existing, config)
        peers = self._place_stream(config)
        storage = "memory" if config.get("storage") == "memory" else "file"
        name = group_name("S", len(peers), storage_letter(storage), new_group_id(self.rng))
        group = RaftGroup(
            name, tuple(peers), storage, cluster=self._cluster_of(config), preferred=self.rng.choice(peers)
        )
        created = self.clock.time_ns()
        proposed = StreamAssignment(account, config, group, created, dict(client or {}), reply, subject)
        await self._propose(AssignStream(proposed))
        applied = self.state.stream(account, proposed.name)
        if applied is None:
            raise api_error("JSStreamNotFoundErr")  # deleted as soon as it was made
        return applied if applied.group == group else self._same_stream(applied, config)

    async def update_stream(
        self,
        account: str,
        config: Mapping[str, Any],
        reply: str = "",
        client: Mapping[str, Any] | None = None,
        subject: str = "",
        peers: tuple[str, ...] | None = None,
    ) -> StreamAssignment:
        """A stream's new configuration, on the group it has (``peers``: with these servers, the group's name
        kept: its leader changes the Raft membership to them, one server at a time)."""
        self._check_leader()
        config = dict(config)
        existing = self._stream(account, str(config.get("name", "")))
        group = existing.group if peers is None else replace(existing.group, peers=tuple(sorted(peers)), preferred="")
        proposed = StreamAssignment(account, config, group, existing.created_ns, dict(client or {}), reply, subject)
        await self._propose(UpdateStream(proposed))
        return self._stream(account, proposed.name)

    async def regroup_consumer(self, existing: ConsumerAssignment, peers: tuple[str, ...]) -> ConsumerAssignment:
        """A consumer on other servers of its stream, its group's name kept (its leader changes the membership)."""
        self._check_leader()
        group = replace(existing.group, peers=tuple(sorted(peers)), preferred="")
        await self._propose(AssignConsumer(replace(existing, group=group, reply="")))
        applied = self.state.consumer(existing.account, existing.stream, existing.name)
        if applied is None:
            raise api_error("JSConsumerNotFoundErr")
        return applied

    def free_servers(self, config: Mapping[str, Any], taken: tuple[str, ...], count: int) -> list[str]:
        """``count`` running servers for a stream of ``config`` that are not in ``taken`` (its placement's cluster
        and tags, drawn as a new stream's are); raises :class:`PlacementError` when too few are free."""
        candidates = [
            Candidate(peer.peer, peer.cluster, peer.tags)
            for peer in self.state.active_peers()
            if not peer.offline and peer.peer not in taken and self._reachable(peer.peer)
        ]
        return place_stream_replicas({**config, "num_replicas": count}, candidates, self.cluster, self.rng)

    async def delete_stream(self, account: str, name: str) -> StreamAssignment:
        """Remove a stream and its consumers; the assignment it had."""
        self._check_leader()
        existing = self._stream(account, name)
        await self._propose(RemoveStream(account, name))
        return existing

    # -- consumers ----------------------------------------------------------------------------------

    async def create_consumer(
        self,
        account: str,
        stream: str,
        name: str,
        config: Mapping[str, Any],
        reply: str = "",
        client: Mapping[str, Any] | None = None,
        replicas: int | None = None,
        subject: str = "",
        peers: tuple[str, ...] | None = None,
    ) -> ConsumerAssignment:
        """Place a new consumer on its stream's servers, or give an existing one its new configuration
        (``replicas``: how many servers a new one takes, else its configuration's ``num_replicas``; ``peers``:
        an existing one's new servers, its group's name kept: its leader changes the Raft membership)."""
        self._check_leader()
        stream_assignment = self._stream(account, stream)
        existing = self.state.consumer(account, stream, name)
        if existing is not None:
            group = (
                existing.group if peers is None else replace(existing.group, peers=tuple(sorted(peers)), preferred="")
            )
        else:
            count = int(config.get("num_replicas") or 0) if replicas is None else replicas
            placed = place_consumer_replicas(stream_assignment.group.peers, count, self.rng)
            storage = "memory" if config.get("mem_storage") else stream_assignment.group.storage
            gname = group_name("C", len(placed), storage_letter(storage), new_group_id(self.rng))
            cluster, preferred = stream_assignment.group.cluster, self.rng.choice(placed)
            group = RaftGroup(gname, tuple(placed), storage, cluster=cluster, preferred=preferred)
        created = existing.created_ns if existing is not None else self.clock.time_ns()
        client_info = dict(client or {})
        proposed = ConsumerAssignment(account, stream, name, dict(config), group, created, client_info, reply, subject)
        await self._propose(AssignConsumer(proposed))
        applied = self.state.consumer(account, stream, name)
        if applied is None:
            raise api_error("JSStreamNotFoundErr")  # its stream went meanwhile
        return applied

    async def delete_consumer(self, account: str, stream: str, name: str) -> ConsumerAssignment:
        """Remove a consumer; the assignment it had."""
        self._check_leader()
        self._stream(account, stream)
        existing = self.state.consumer(account, stream, name)
        if existing is None:
            raise api_error("JSConsumerNotFoundErr")
        await self._propose(RemoveConsumer(account, stream, name))
        return existing

    # -- peers --------------------------------------------------------------------------------------

    async def add_peer(self, name: str, cluster: str, tags: tuple[str, ...] = (), offline: bool = False) -> MetaPeer:
        """A JetStream server joins the meta group's state (or its record changes)."""
        self._check_leader()
        peer = MetaPeer(name, cluster, tuple(tags), offline)
        await self._propose(AddPeer(peer))
        return self.state.peers[peer.peer]

    async def remove_peer(self, server: str) -> MetaPeer:
        """``SERVER.REMOVE``: the server (a name or peer id) is taken out of the meta group's state."""
        self._check_leader()
        peer = self.state.find_peer(server)
        if peer is None or peer.removed:
            raise api_error("JSClusterServerNotMemberErr")
        await self._propose(RemovePeer(peer.peer))
        return self.state.peers[peer.peer]

    async def move_off(self, peer: str) -> list[StreamAssignment]:
        """Each stream on ``peer`` (a removed server) gets another server in its place, one that carries the
        placement's cluster and tags and is not in the group yet, or loses it when there is none and other
        peers remain (nats-server's ``removePeerFromStreamLocked``), its consumers on ``peer`` the same; the
        stream assignments changed."""
        moved: list[StreamAssignment] = []
        for existing in [sa for sa in self.state.streams.values() if peer in sa.group.peers]:
            self._check_leader()
            staying = [other for other in existing.group.peers if other != peer]
            replacement = self._replacement(existing.config, existing.group.peers)
            if replacement is None and not staying:
                continue
            peers = tuple(sorted([*staying, *([replacement] if replacement else [])]))
            group = replace(existing.group, peers=peers, preferred="")
            proposed = replace(existing, group=group, reply="")
            await self._propose(UpdateStream(proposed))
            moved.append(self._stream(existing.account, existing.name))
            await self._consumers_follow(existing, peer, peers)
        return moved

    async def _consumers_follow(self, stream: StreamAssignment, peer: str, peers: tuple[str, ...]) -> None:
        """The stream's consumers on ``peer`` take the server that replaced it in the stream's ``peers`` (or
        lose it; one left on no server takes the stream's first)."""
        added = [other for other in peers if other not in stream.group.peers]
        for consumer in list(self.state.consumers_of(stream.account, stream.name)):
            if peer not in consumer.group.peers:
                continue
            staying = [other for other in consumer.group.peers if other != peer]
            await self.regroup_consumer(consumer, tuple(staying + added) or peers[:1])

    def _replacement(self, config: Mapping[str, Any], taken: tuple[str, ...]) -> str | None:
        try:
            return self.free_servers(config, taken, 1)[0]
        except PlacementError:
            return None

    # -- helpers ------------------------------------------------------------------------------------

    def _check_leader(self) -> None:
        if not self.group.is_leader:
            raise NotLeader(self.group.leader)

    async def _propose(self, entry: MetaEntry) -> int:
        return await self.group.propose(encode_entry(entry))

    def _stream(self, account: str, name: str) -> StreamAssignment:
        existing = self.state.stream(account, name)
        if existing is None:
            raise api_error("JSStreamNotFoundErr")
        return existing

    def _same_stream(self, existing: StreamAssignment, config: Mapping[str, Any]) -> StreamAssignment:
        if existing.config != config:
            raise api_error("JSStreamNameExistErr")
        return existing

    def _reachable(self, peer: str) -> bool:
        """Whether the leader's messages find the server now (one whose routes are down is not placed on:
        its group could not start)."""
        return peer == self.group.peer or self.group.reaches(peer)

    def _cluster_of(self, config: Mapping[str, Any]) -> str:
        return str((config.get("placement") or {}).get("cluster") or self.cluster)

    def _place_stream(self, config: Mapping[str, Any]) -> list[str]:
        candidates = [
            Candidate(peer.peer, peer.cluster, peer.tags)
            for peer in self.state.active_peers()
            if not peer.offline and self._reachable(peer.peer)
        ]
        try:
            return place_stream_replicas(config, candidates, self.cluster, self.rng)
        except PlacementError as refused:
            raise api_error("JSClusterNoPeersErrF", err=refused.description) from None
