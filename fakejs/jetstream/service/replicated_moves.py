"""A stream's group moved to other servers without losing what it holds: ``STREAM.PEER.EVACUATE``, an update
that changes the stream's ``placement``, ``STREAM.CANCEL_MOVE``, and ``CONSUMER.PEER.EVACUATE``.

As nats-server 2.15.1's (the meta leader answers; checked against its processes):

- ``STREAM.PEER.EVACUATE`` has ``PEER.REMOVE``'s checks (10003 for an empty
  request or ``peer``, 10059, 10040 ``peer not a member``, 10075 ``peer remap
  failed`` when no server is free) and answers ``{"success": true}`` once the
  move is proposed: the named server's place goes to a free one.
- A ``STREAM.UPDATE`` whose ``placement`` is given and differs from the
  stream's moves it to servers drawn for the new placement as a new stream's
  are (nats-server's ``createGroupForStream``; 10005 when too few match); with
  another ``num_replicas`` too it is refused (10123 ``can not move and scale a
  stream in a single update``), and while a move is under way (10124 ``stream
  move already in progress``, also for a change of replicas).  The stream's
  leader answers the update once it runs under the configuration.
- Either move migrates: the new servers join the group first and catch up
  from its leader, and only once the stream's leader reports each ``current``
  do the servers that go leave the assignment (a leader among them handing its
  leadership over first), so an R1 stream keeps its messages.  The stream's
  consumers on the servers that left then take the new ones.
- ``STREAM.CANCEL_MOVE``: 10059 for a stream that does not exist, 10129
  ``stream reconfiguration not in progress`` when no move is under way; else
  the move stops and the stream goes back to the servers and the placement it
  had, its leader answering with the stream's info
  (``stream_cancel_move_response``).
- ``CONSUMER.PEER.EVACUATE`` has ``CONSUMER.PEER.REMOVE``'s checks (and
  10014; 10075 when the consumer is on every server of its stream) and moves
  the consumer the same way: one of its stream's servers it is not on joins
  its group, catches up, then the named server leaves.

Where nats-server records a move in the stream's assignment (its ``desired``
group, shown in the infos' ``cluster`` section meanwhile), the meta leader
that started a move keeps it: a change of meta leader leaves the group with
both sets of servers, and the infos show no ``desired``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from fakejs.jetstream.cluster.placement import PlacementError
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.replication import ProposalFailed, system_router
from fakejs.jetstream.service.replicated_peers import (
    HANDOVER_PREFIX,
    Asked,
    PeerShare,
    consumer_replacement,
    stream_replacement,
    within_heartbeats,
)

if TYPE_CHECKING:
    from fakejs.jetstream.cluster import ConsumerAssignment, MetaLeader, StreamAssignment

__all__ = ["CANCEL_MOVE_PREFIX", "CATCH_UP_HEARTBEATS", "MoveShare", "Moves"]

CATCH_UP_HEARTBEATS = 120  # a move waits this many heartbeats at most for a new replica to catch up
CANCEL_MOVE_PREFIX = "$JS.API.STREAM.CANCEL_MOVE."


class MoveShare(PeerShare, Protocol):
    """What a move needs of a server's share of the replicated JetStream (``ReplicatedJetStream``)."""

    def spawn(self, work: Any) -> asyncio.Task[None]: ...

    def server_name(self, peer: str | None) -> str: ...


@dataclass
class _Move:
    """A stream's move under way: the servers and the placement it had, and the meta leader's task."""

    origin_peers: tuple[str, ...]
    origin_placement: Any
    task: asyncio.Task[None] | None = None


class Moves:
    """The meta leader's moves of streams and consumers to other servers (see the module docstring)."""

    def __init__(self, share: MoveShare) -> None:
        self.share = share
        self._under_way: dict[str, _Move] = {}

    @property
    def _leader(self) -> MetaLeader:
        leader = self.share.leader
        assert leader is not None
        return leader

    def moving(self, stream: str) -> bool:
        """Whether a move of ``stream`` started here is under way."""
        return stream in self._under_way

    # -- starting a stream's move ---------------------------------------------------------------------

    async def evacuate_stream(self, stream: str, named: str) -> None:
        """Start moving ``stream`` off the server ``named`` (the checks raise nats-server's errors)."""
        assignment, peer, replacement = stream_replacement(self.share, self._leader, stream, named)
        if self.moving(stream):
            raise api_error("JSStreamMoveInProgressErr")
        target = tuple(replacement if member == peer else member for member in assignment.group.peers)
        await self._start(assignment, assignment.config, target, Asked("", None, ""))

    async def move_by_placement(self, config: Mapping[str, Any], asked: Asked) -> bool:
        """Carry out an update that changes the stream's placement (False: it does not, nothing done)."""
        name = str(config["name"])
        assignment = self.share.assigned(name)
        assert assignment is not None
        placement = config.get("placement")
        if not placement or placement == assignment.config.get("placement"):
            if self.moving(name) and _replicas(config) != _replicas(assignment.config):
                raise api_error("JSStreamMoveInProgressErr")
            return False
        if _replicas(config) != _replicas(assignment.config):
            raise api_error("JSStreamMoveAndScaleErr")
        if self.moving(name):
            raise api_error("JSStreamMoveInProgressErr")
        try:
            target = tuple(self._leader.free_servers(config, (), _replicas(config)))
        except PlacementError as refused:
            raise api_error("JSClusterNoPeersErrF", err=refused.description) from None
        await self._start(assignment, config, target, asked)
        return True

    async def _start(
        self, assignment: StreamAssignment, config: Mapping[str, Any], target: tuple[str, ...], asked: Asked
    ) -> None:
        """Add the target's new servers to the group (answering ``asked``), then migrate in a task."""
        origin = assignment.group.peers
        move = _Move(origin, assignment.config.get("placement"))
        self._under_way[assignment.name] = move
        try:
            added = tuple(peer for peer in target if peer not in origin)
            await self._leader.update_stream(
                assignment.account, config, asked.reply, asked.client, asked.subject, peers=(*origin, *added)
            )
        except BaseException:
            self._under_way.pop(assignment.name, None)
            raise
        move.task = self.share.spawn(_quietly(self._migrate(assignment, target, move)))

    # -- cancelling it ----------------------------------------------------------------------------------

    async def cancel_move(self, stream: str, asked: Asked) -> None:
        """``STREAM.CANCEL_MOVE``: the move under way stopped and the stream back where it was (its leader
        answers ``asked``), or nats-server's errors."""
        assignment = self._stream(stream)
        move = self._under_way.pop(stream, None)
        if move is None:
            raise api_error("JSStreamReconfigureNotInProgressErr")
        if move.task is not None:
            move.task.cancel()
        config = dict(assignment.config)
        if move.origin_placement is None:
            config.pop("placement", None)
        else:
            config["placement"] = move.origin_placement
        await self._leader.update_stream(
            assignment.account, config, asked.reply, asked.client, asked.subject, peers=move.origin_peers
        )

    def _stream(self, stream: str) -> StreamAssignment:
        assignment = self.share.assigned(stream)
        if assignment is None:
            raise api_error("JSStreamNotFoundErr")
        return assignment

    # -- the migration ------------------------------------------------------------------------------------

    async def _migrate(self, assignment: StreamAssignment, target: tuple[str, ...], move: _Move) -> None:
        """Wait until each new server is current, then leave the servers that go (the stream's consumers on
        them taking the new ones)."""
        try:
            origin, name = move.origin_peers, assignment.name
            added = [peer for peer in target if peer not in origin]
            leaving = [peer for peer in origin if peer not in target]

            async def cluster() -> dict[str, Any]:
                info = (await self.share.stream_infos([name])).get(name, {})
                return dict(info.get("cluster") or {})

            if self._under_way.get(name) is not move:
                return  # cancelled while it was being started
            if not await self._migrated(assignment.group.name, cluster, leaving, added):
                return  # a new replica did not catch up: the group keeps both sets of servers
            if self._under_way.get(name) is not move:
                return  # cancelled meanwhile
            taking = dict(zip(leaving, added, strict=True))
            consumers = [
                consumer
                for consumer in self.share.consumer_assignments(name)
                if any(peer in taking for peer in consumer.group.peers)
            ]
            await asyncio.gather(*(self._move_consumer(consumer, taking) for consumer in consumers))
            moved = self.share.assigned(name)
            if moved is None or self._under_way.get(name) is not move:
                return  # deleted, or cancelled, meanwhile
            del self._under_way[name]
            await self._leader.update_stream(moved.account, moved.config, peers=target)
        finally:
            if self._under_way.get(assignment.name) is move:
                del self._under_way[assignment.name]

    # -- a consumer's evacuation ----------------------------------------------------------------------

    def evacuate_consumer(self, stream: str, name: str, named: str) -> None:
        """Start moving the consumer off the server ``named`` (the checks raise nats-server's errors)."""
        consumer, peer, replacement = consumer_replacement(self.share, stream, name, named)
        self.share.spawn(_quietly(self._move_consumer(consumer, {peer: replacement})))

    async def _move_consumer(self, consumer: ConsumerAssignment, taking: Mapping[str, str]) -> None:
        """Move the consumer off the servers ``taking`` names onto the servers it gives for each: those join its
        group and catch up from its leader first, so that it keeps what it delivered and what was acknowledged."""
        leader, peers = self._leader, consumer.group.peers
        leaving = [peer for peer in peers if peer in taking]
        added = [taking[peer] for peer in leaving]
        await leader.regroup_consumer(consumer, (*peers, *added))

        async def cluster() -> dict[str, Any]:
            infos = await self.share.consumer_infos(consumer.stream, [consumer.name])
            return dict(infos.get(consumer.name, {}).get("cluster") or {})

        if not await self._migrated(consumer.group.name, cluster, leaving, added):
            return
        moved = self.share.consumer_assignment(consumer.stream, consumer.name)
        if moved is not None:
            await leader.regroup_consumer(moved, tuple(taking.get(member, member) for member in peers))

    # -- waiting for the new servers ------------------------------------------------------------------

    async def _migrated(
        self, group: str, cluster: Callable[[], Awaitable[dict[str, Any]]], leaving: list[str], added: list[str]
    ) -> bool:
        """Wait until each ``added`` server is current in the group (its leader's ``cluster`` section), then, when
        one of the ``leaving`` servers leads, until it handed leadership over to a new one: a group whose leader
        left could commit nothing more.  False when either did not come to pass."""
        names = [self.share.server_name(peer) for peer in added]
        going = {self.share.server_name(peer) for peer in leaving}

        async def caught_up() -> bool:
            section = await cluster()
            return all(_current(section, name) for name in names)

        async def handed_over() -> bool:
            leader = (await cluster()).get("leader")
            if leader in going and added:
                router = system_router(self.share.broker)
                router.publish(HANDOVER_PREFIX + group, "", None, added[0].encode(), None)
            return bool(leader) and leader not in going

        waiting = partial(within_heartbeats, self.share, CATCH_UP_HEARTBEATS)
        return await waiting(caught_up) and await waiting(handed_over)


async def _quietly(move: Awaitable[None]) -> None:
    """A move that the meta leader's change (or the asset's removal) cut short stops where it is."""
    try:
        await move
    except (ApiError, ProposalFailed):
        pass


def _replicas(config: Mapping[str, Any]) -> int:
    return max(int(config.get("num_replicas") or 1), 1)


def _current(cluster: dict[str, Any], name: str) -> bool:
    """Whether the ``cluster`` section of an info shows the server ``name`` leading, or as a current replica."""
    if cluster.get("leader") == name:
        return True
    return any(replica.get("name") == name and replica.get("current") for replica in cluster.get("replicas") or [])
