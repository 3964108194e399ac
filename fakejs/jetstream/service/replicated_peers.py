"""Which servers hold a replicated stream or consumer: ``PEER.REMOVE`` and a stream's replicas changed by an update.

The meta leader carries these out by proposing the asset's assignment again
with other peers and the same group name; each group's leader then changes
the Raft membership to them, one server at a time
(:class:`~fakejs.jetstream.service.meta_membership.GroupMembership`): a new
server starts its member with an empty log and catches up from the leader,
a server that left the assignment stops its member (handing its leadership
over first) and removes its directory.

- ``STREAM.PEER.REMOVE``: the named server (by name, or by peer id) is
  replaced by a free one, drawn as a new stream's servers are (nats-server's
  ``removePeerFromStreamLocked``); the stream's consumers on that server get
  the same replacement.  10040 ``peer not a member``, 10075 ``peer remap
  failed`` when no server is free.
- ``CONSUMER.PEER.REMOVE``: the named server is replaced by one of the
  stream's servers the consumer is not on (10075 when it is on all of them).
- A stream update with another ``num_replicas``: more replicas take free
  servers (10005 ``no suitable peers for placement`` when too few are), fewer
  keep the stream's leader; the consumers that follow the stream (no
  ``num_replicas`` of their own) take its servers, the others lose the servers
  the stream left.  A scale-down drops one server at a time, each drop waiting
  until every group's leader took that server out of its membership (asked
  on ``$FJMETA.GM.<group>`` in the system account): a group that lost two of
  its three members at once could commit nothing more.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from fakejs.core.clock import sleep as clock_sleep
from fakejs.jetstream.cluster.placement import PlacementError
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.replication import ProposalFailed, peer_id, system_router
from fakejs.jetstream.service.replicated_infos import ask

if TYPE_CHECKING:
    from fakejs.core.broker import Broker
    from fakejs.core.router import Subscription
    from fakejs.jetstream.cluster import ConsumerAssignment, MetaLeader, StreamAssignment
    from fakejs.jetstream.replication import ReplicatedGroup
    from fakejs.jetstream.service.jetstream import JetStream
    from fakejs.jetstream.service.replicated_consumers import ConsumerReplicas
    from fakejs.jetstream.service.replicated_streams import StreamReplicas

__all__ = [
    "HANDOVER_PREFIX",
    "MEMBERS_PREFIX",
    "PeerChanges",
    "PeerShare",
    "consumer_replacement",
    "member_of",
    "stream_replacement",
    "within_heartbeats",
]


class Asked(NamedTuple):
    """The update request a change answers: its reply subject, its client's info and its subject (for the audit)."""

    reply: str
    client: Mapping[str, Any] | None
    subject: str


class PeerShare(Protocol):
    """What these changes need of a server's share of the replicated JetStream (``ReplicatedJetStream``)."""

    js: JetStream
    broker: Broker
    replicas: StreamReplicas
    consumers: ConsumerReplicas

    @property
    def group(self) -> ReplicatedGroup | None: ...

    @property
    def leader(self) -> MetaLeader | None: ...

    def assigned(self, name: str) -> StreamAssignment | None: ...

    def consumer_assignment(self, stream: str, name: str) -> ConsumerAssignment | None: ...

    def consumer_assignments(self, stream: str) -> list[ConsumerAssignment]: ...

    async def stream_infos(self, names: list[str]) -> dict[str, dict[str, Any]]: ...

    async def consumer_infos(self, stream: str, names: list[str]) -> dict[str, dict[str, Any]]: ...


MEMBERS_PREFIX = "$FJMETA.GM."  # fakejs's own: a group's Raft members, asked of its leader
HANDOVER_PREFIX = "$FJMETA.HO."  # fakejs's own: a group's leader hands over to the peer id the message names
MEMBERS_TIMEOUT = 0.5  # seconds the meta leader waits for a group leader's members
SETTLE_HEARTBEATS = 30  # a scale-down waits this many heartbeats at most for one server to leave every group


class PeerChanges:
    """The meta leader's changes of a stream's or consumer's servers (see the module docstring), and every
    server's answer about the groups it leads."""

    def __init__(self, share: PeerShare) -> None:
        self.share = share
        self._subscriptions: list[Subscription] = []

    def start(self) -> None:
        router = system_router(self.share.broker)
        self._subscriptions = [
            router.subscribe_internal(MEMBERS_PREFIX + "*", self._members_asked),
            router.subscribe_internal(HANDOVER_PREFIX + "*", self._handover_asked),
        ]

    def stop(self) -> None:
        router = system_router(self.share.broker)
        for subscription in self._subscriptions:
            router.unsubscribe(subscription)
        self._subscriptions = []

    @property
    def _leader(self) -> MetaLeader:
        leader = self.share.leader
        assert leader is not None
        return leader

    # -- STREAM.PEER.REMOVE ---------------------------------------------------------------------------

    async def remove_stream_peer(self, stream: str, named: str) -> None:
        """Replace the server ``named`` in ``stream``'s group by a free one."""
        share = self.share
        assignment, peer, replacement = stream_replacement(share, self._leader, stream, named)
        peers = tuple(replacement if member == peer else member for member in assignment.group.peers)
        await self._leader.update_stream(assignment.account, assignment.config, peers=peers)
        for consumer in share.consumer_assignments(stream):
            if peer in consumer.group.peers:
                moved = tuple(replacement if member == peer else member for member in consumer.group.peers)
                await self._leader.regroup_consumer(consumer, moved)

    # -- CONSUMER.PEER.REMOVE -------------------------------------------------------------------------

    async def remove_consumer_peer(self, stream: str, name: str, named: str) -> None:
        """Replace the server ``named`` in the consumer's group by another of its stream's servers."""
        consumer, peer, replacement = consumer_replacement(self.share, stream, name, named)
        moved = tuple(replacement if member == peer else member for member in consumer.group.peers)
        await self._leader.regroup_consumer(consumer, moved)

    # -- replicas changed by STREAM.UPDATE ----------------------------------------------------------

    async def rescale(
        self, config: Mapping[str, Any], reply: str, client: Mapping[str, Any] | None = None, subject: str = ""
    ) -> bool:
        """Carry out an update that changes the stream's replicas (False: it does not, nothing done); ``reply``,
        ``client`` and ``subject`` are the request's (its answer and audit)."""
        asked = Asked(reply, client, subject)
        share = self.share
        assignment = share.assigned(str(config["name"]))
        assert assignment is not None
        old = assignment.group.peers
        wanted = max(int(config.get("num_replicas") or 1), 1)
        if wanted == len(old):
            return False
        if wanted > len(old):
            try:
                added = self._leader.free_servers(config, old, wanted - len(old))
            except PlacementError as refused:
                raise api_error("JSClusterNoPeersErrF", err=refused.description) from None
            await self._scale_up(config, asked, old, (*old, *added))
        else:
            await self._scale_down(config, asked, wanted)
        return True

    async def _scale_up(
        self, config: Mapping[str, Any], asked: Asked, old: tuple[str, ...], peers: tuple[str, ...]
    ) -> None:
        leader, name = self._leader, str(config["name"])
        account = self.share.js.account_name
        await leader.update_stream(account, config, asked.reply, asked.client, asked.subject, peers=peers)
        for consumer in self.share.consumer_assignments(name):
            if _follows_stream(consumer) and set(consumer.group.peers) == set(old):
                await leader.regroup_consumer(consumer, peers)

    async def _scale_down(self, config: Mapping[str, Any], asked: Asked, wanted: int) -> None:
        share, name = self.share, str(config["name"])
        assignment = share.assigned(name)
        assert assignment is not None
        stream_leader = await self._stream_leader(name)
        ordered = sorted(assignment.group.peers, key=lambda member: (member != stream_leader, member))
        current = list(assignment.group.peers)
        departing = ordered[wanted:]
        for index, peer in enumerate(departing):
            last = index == len(departing) - 1
            current.remove(peer)
            answered = asked if last else Asked("", None, "")
            await self._leader.update_stream(
                share.js.account_name, config, answered.reply, answered.client, answered.subject, peers=tuple(current)
            )
            groups = [assignment.group.name]
            for consumer in share.consumer_assignments(name):
                if peer in consumer.group.peers:
                    kept = tuple(member for member in consumer.group.peers if member != peer) or (ordered[0],)
                    await self._leader.regroup_consumer(consumer, kept)
                    groups.append(consumer.group.name)
            if not last:
                await self._settled(groups, peer)

    # -- a consumer's replicas changed by its update ---------------------------------------------------

    async def rescale_consumer(self, existing: ConsumerAssignment, config: Mapping[str, Any], asked: Asked) -> bool:
        """Carry out an update that changes how many of its stream's servers a consumer is on (``num_replicas``;
        0: all of them); False when it does not, nothing done.  More take servers of the stream the consumer is
        not on, fewer keep its leader, one server leaving at a time."""
        stream = self.share.assigned(existing.stream)
        assert stream is not None
        servers = stream.group.peers
        wanted = min(int(config.get("num_replicas") or 0) or len(servers), len(servers))
        old = existing.group.peers
        if wanted == len(old):
            return False
        propose = partial(self._leader.create_consumer, existing.account, existing.stream, existing.name, config)
        if wanted > len(old):
            spare = [server for server in servers if server not in old]
            added = self.share.js.rng.sample(spare, wanted - len(old))
            await propose(asked.reply, asked.client, subject=asked.subject, peers=(*old, *added))
            return True
        leader = await self._consumer_leader(existing)
        departing = sorted(old, key=lambda member: (member != leader, member))[wanted:]
        current = list(old)
        for index, peer in enumerate(departing):
            current.remove(peer)
            if index < len(departing) - 1:
                await propose(peers=tuple(current))
                await self._settled([existing.group.name], peer)
            else:
                await propose(asked.reply, asked.client, subject=asked.subject, peers=tuple(current))
        return True

    async def _consumer_leader(self, consumer: ConsumerAssignment) -> str:
        """The peer id of the consumer's leader ("" when it did not answer)."""
        return _leader_in(await self.share.consumer_infos(consumer.stream, [consumer.name]), consumer.name)

    async def _stream_leader(self, name: str) -> str:
        """The peer id of the stream's leader ("" when it did not answer)."""
        return _leader_in(await self.share.stream_infos([name]), name)

    async def _settled(self, groups: list[str], peer: str) -> None:
        """Wait until the leader of each of ``groups`` took ``peer`` out of its membership (at most
        :data:`SETTLE_HEARTBEATS` heartbeats)."""
        share = self.share
        router = system_router(share.broker)
        subjects = [MEMBERS_PREFIX + group for group in groups]

        async def left_every_group() -> bool:
            answers = await ask(router, share.js.nuid(), subjects, len(subjects), MEMBERS_TIMEOUT)
            answered = {index for index, payload in answers if peer not in json.loads(payload)}
            return len(answered) == len(subjects)

        await within_heartbeats(share, SETTLE_HEARTBEATS, left_every_group)

    # -- every server: the members of the groups it leads -----------------------------------------------

    def _members_asked(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        group = self._led_group(subject.removeprefix(MEMBERS_PREFIX))
        if group is not None and reply:
            members = json.dumps(sorted(group.members)).encode()
            system_router(self.share.broker).publish(reply, "", None, members, None)
        return True

    def _handover_asked(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        """The leader of the group the subject names hands leadership over to the peer the payload names."""
        group = self._led_group(subject.removeprefix(HANDOVER_PREFIX))
        if group is not None:
            try:
                group.step_down(payload.decode("ascii", "replace"))
            except ProposalFailed:
                pass  # refused (a transfer under way, not a voter...): the asker waits, then goes on
        return True

    def _led_group(self, name: str) -> ReplicatedGroup | None:
        share = self.share
        groups = [replica.group for replica in share.replicas.replicas.values()]
        groups += [replica.group for replica in share.consumers.replicas.values()]
        for group in groups:
            if group is not None and group.name == name and group.is_leader and not group.stopped:
                return group
        return None


async def within_heartbeats(share: PeerShare, heartbeats: int, holds: Callable[[], Awaitable[bool]]) -> bool:
    """Whether ``holds`` came true within ``heartbeats`` heartbeats of the meta group: asked at once, then again
    after each heartbeat on the server's clock."""
    group = share.group
    heartbeat = group.node.settings.heartbeat_interval if group is not None else 1.0
    for _ in range(heartbeats):
        if await holds():
            return True
        await clock_sleep(share.js.clock, heartbeat)
    return False


def stream_replacement(
    share: PeerShare, leader: MetaLeader, stream: str, named: str
) -> tuple[StreamAssignment, str, str]:
    """The stream's assignment, the peer ``named`` names in its group, and a free server to take its place (the
    meta ``leader``'s placement); the API's error when one is missing: 10059 no stream, 10040 ``named`` not in
    the group, 10075 no free server."""
    assignment = share.assigned(stream)
    if assignment is None:
        raise api_error("JSStreamNotFoundErr")
    peer = member_of(assignment.group.peers, named)
    if peer is None:
        raise api_error("JSClusterPeerNotMemberErr")
    try:
        replacement = leader.free_servers(assignment.config, assignment.group.peers, 1)[0]
    except PlacementError:
        raise api_error("JSPeerRemapErr") from None
    return assignment, peer, replacement


def consumer_replacement(share: PeerShare, stream: str, name: str, named: str) -> tuple[ConsumerAssignment, str, str]:
    """The consumer's assignment, the peer ``named`` names in its group, and one of its stream's servers outside
    the group to take its place (drawn from the server's seeded generator); the API's error when one is missing:
    10059 no stream, 10014 no consumer, 10040 ``named`` not in the group, 10075 no server to take its place."""
    assignment = share.assigned(stream)
    if assignment is None:
        raise api_error("JSStreamNotFoundErr")
    consumer = share.consumer_assignment(stream, name)
    if consumer is None:
        raise api_error("JSConsumerNotFoundErr")
    peer = member_of(consumer.group.peers, named)
    if peer is None:
        raise api_error("JSClusterPeerNotMemberErr")
    spare = [member for member in assignment.group.peers if member not in consumer.group.peers]
    if not spare:
        raise api_error("JSPeerRemapErr")
    return consumer, peer, share.js.rng.choice(spare)


def member_of(peers: tuple[str, ...], named: str) -> str | None:
    """The peer of ``peers`` that ``named`` names: a server name (its peer id), or a peer id."""
    for candidate in (peer_id(named), named):
        if candidate in peers:
            return candidate
    return None


def _leader_in(infos: Mapping[str, Mapping[str, Any]], name: str) -> str:
    """The peer id of the leader the info of ``name`` names in its ``cluster`` section ("" for none)."""
    leader = str(infos.get(name, {}).get("cluster", {}).get("leader") or "")
    return peer_id(leader) if leader else ""


def _follows_stream(consumer: ConsumerAssignment) -> bool:
    """Whether a consumer takes its stream's servers (it asks for no number of replicas of its own)."""
    return not int(consumer.config.get("num_replicas") or 0)
