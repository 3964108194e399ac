"""``STREAM.PEER.EVACUATE``, ``CONSUMER.PEER.EVACUATE`` and ``STREAM.CANCEL_MOVE`` in a JetStream replicated
across servers: the meta leader moves an asset off a server without losing what it holds.

As nats-server 2.15.1's (the meta leader answers; checked against its processes):

- ``STREAM.PEER.EVACUATE`` has ``PEER.REMOVE``'s checks (10003 for an empty
  request or ``peer``, 10059, 10040 ``peer not a member``, 10075 ``peer remap
  failed`` when no server is free) and answers ``{"success": true}`` once the
  move is proposed.  Where a removal puts the free server in the named one's
  place at once (an R1 stream then starts there empty), an evacuation migrates:
  the free server joins the group first and catches up from its leader, and
  only once the stream's leader reports it ``current`` does the named server
  leave the assignment (handing its leadership over when it leads), so an R1
  stream keeps its messages.  The stream's consumers on the named server then
  take the free server, as a removal's do.
- ``CONSUMER.PEER.EVACUATE`` has ``CONSUMER.PEER.REMOVE``'s checks (and 10014;
  10075 when the consumer is on every server of its stream) and moves the
  consumer the same way: one of its stream's servers it is not on joins its
  group, catches up, then the named server leaves.
- ``STREAM.CANCEL_MOVE``: 10059 for a stream that does not exist, else 10129
  ``stream reconfiguration not in progress``: fakejs keeps no reconfiguration
  to roll back (an evacuation under way is not cancelled).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from fakejs.core.clock import sleep as clock_sleep
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.replication import ProposalFailed, system_router
from fakejs.jetstream.service.replicated_peers import (
    HANDOVER_PREFIX,
    PeerShare,
    consumer_replacement,
    stream_replacement,
)

if TYPE_CHECKING:
    from fakejs.jetstream.cluster import ConsumerAssignment, MetaLeader, StreamAssignment

__all__ = ["CATCH_UP_HEARTBEATS", "EvacuationShare", "Evacuations"]

CATCH_UP_HEARTBEATS = 120  # an evacuation waits this many heartbeats at most for the new replica to catch up


class EvacuationShare(PeerShare, Protocol):
    """What an evacuation needs of a server's share of the replicated JetStream (``ReplicatedJetStream``)."""

    def spawn(self, work: Any) -> None: ...

    def server_name(self, peer: str | None) -> str: ...

    async def consumer_infos(self, stream: str, names: list[str]) -> dict[str, dict[str, Any]]: ...


class Evacuations:
    """The meta leader's evacuations of a stream's or consumer's server (see the module docstring)."""

    def __init__(self, share: EvacuationShare) -> None:
        self.share = share

    @property
    def _leader(self) -> MetaLeader:
        leader = self.share.leader
        assert leader is not None
        return leader

    def evacuate_stream(self, stream: str, named: str) -> None:
        """Start moving ``stream`` off the server ``named`` (the checks raise nats-server's errors)."""
        assignment, peer, replacement = stream_replacement(self.share, self._leader, stream, named)
        self.share.spawn(_quietly(self._move_stream(assignment, peer, replacement)))

    def cancel_move(self, stream: str) -> None:
        """``STREAM.CANCEL_MOVE``: nothing fakejs could roll back (the errors nats-server answers then)."""
        self._stream(stream)
        raise api_error("JSStreamReconfigureNotInProgressErr")

    def evacuate_consumer(self, stream: str, name: str, named: str) -> None:
        """Start moving the consumer off the server ``named`` to another of its stream's servers."""
        consumer, peer, replacement = consumer_replacement(self.share, stream, name, named)
        self.share.spawn(_quietly(self._move_consumer(consumer, peer, replacement)))

    def _stream(self, stream: str) -> StreamAssignment:
        assignment = self.share.assigned(stream)
        if assignment is None:
            raise api_error("JSStreamNotFoundErr")
        return assignment

    # -- the moves ----------------------------------------------------------------------------------------

    async def _move_stream(self, assignment: StreamAssignment, peer: str, replacement: str) -> None:
        leader, peers = self._leader, assignment.group.peers
        await leader.update_stream(assignment.account, assignment.config, peers=(*peers, replacement))

        async def cluster() -> dict[str, Any]:
            info = (await self.share.stream_infos([assignment.name])).get(assignment.name, {})
            return dict(info.get("cluster") or {})

        if not await self._migrated(assignment.group.name, cluster, peer, replacement):
            return  # the new replica did not catch up: the group keeps both servers
        moved = self.share.assigned(assignment.name)
        if moved is None:
            return  # deleted meanwhile
        swapped = tuple(replacement if member == peer else member for member in peers)
        await leader.update_stream(moved.account, moved.config, peers=swapped)
        for consumer in self.share.consumer_assignments(assignment.name):
            if peer in consumer.group.peers:
                regrouped = tuple(replacement if member == peer else member for member in consumer.group.peers)
                await leader.regroup_consumer(consumer, regrouped)

    async def _move_consumer(self, consumer: ConsumerAssignment, peer: str, replacement: str) -> None:
        leader, peers = self._leader, consumer.group.peers
        await leader.regroup_consumer(consumer, (*peers, replacement))

        async def cluster() -> dict[str, Any]:
            infos = await self.share.consumer_infos(consumer.stream, [consumer.name])
            return dict(infos.get(consumer.name, {}).get("cluster") or {})

        if not await self._migrated(consumer.group.name, cluster, peer, replacement):
            return
        moved = self.share.consumer_assignment(consumer.stream, consumer.name)
        if moved is not None:
            await leader.regroup_consumer(moved, tuple(replacement if m == peer else m for m in peers))

    async def _migrated(
        self, group: str, cluster: Callable[[], Awaitable[dict[str, Any]]], peer: str, replacement: str
    ) -> bool:
        """Wait until the ``replacement`` server is current in the group (its leader's ``cluster`` section), then,
        when the evacuated ``peer`` leads, until it handed leadership over to it: a group of two whose leader
        left could commit nothing more.  False when either did not come to pass."""
        name, evacuated = self.share.server_name(replacement), self.share.server_name(peer)

        async def caught_up() -> bool:
            return _current(await cluster(), name)

        async def handed_over() -> bool:
            leader = (await cluster()).get("leader")
            if leader == evacuated:
                router = system_router(self.share.broker)
                router.publish(HANDOVER_PREFIX + group, "", None, replacement.encode(), None)
            return bool(leader) and leader != evacuated

        return await self._wait(caught_up) and await self._wait(handed_over)

    async def _wait(self, caught_up: Callable[[], Awaitable[bool]]) -> bool:
        """Whether ``caught_up`` held within :data:`CATCH_UP_HEARTBEATS` heartbeats (asked each heartbeat)."""
        group = self.share.group
        heartbeat = group.node.settings.heartbeat_interval if group is not None else 1.0
        for _ in range(CATCH_UP_HEARTBEATS):
            if await caught_up():
                return True
            await clock_sleep(self.share.js.clock, heartbeat)
        return False


async def _quietly(move: Awaitable[None]) -> None:
    """A move that the meta leader's change (or the asset's removal) cut short stops where it is."""
    try:
        await move
    except (ApiError, ProposalFailed):
        pass


def _current(cluster: dict[str, Any], name: str) -> bool:
    """Whether the ``cluster`` section of an info shows the server ``name`` leading, or as a current replica."""
    if cluster.get("leader") == name:
        return True
    return any(replica.get("name") == name and replica.get("current") for replica in cluster.get("replicas") or [])
