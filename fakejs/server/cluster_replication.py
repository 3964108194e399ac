"""The JetStream the servers of an in-process cluster replicate across them, and elections on cue.

Each server of a :class:`~fakejs.server.local_cluster.Cluster` started with
``jetstream=True`` (``replicated`` by default) runs its share of the replicated JetStream, as a process
of a cluster does (:mod:`fakejs.jetstream.service.replicated`): the meta
group, and a Raft group for each stream and consumer, with the same code.
Only the wire differs: the groups' messages go through one
:class:`~fakejs.jetstream.replication.exchange.LocalExchange`, handed over
at once, so a cluster on a :class:`~fakejs.testkit.clock.ManualClock` keeps
its leaders however far time moves, and a seeded cluster replays.

What a real cluster learns from its timers, the cluster knows at once: it
caused the failure.  When a server goes down or a partition cuts the
cluster, :class:`Elections` tells every member of every group which peers it
lost (a follower forgets a leader it no longer reaches, a leader without a
quorum steps down) and, on each side holding a quorum of a group's voters
with no leader, the member with the most complete log (seeded choice among
equals) campaigns: the group has a new leader before the call returns, or,
with an ``election`` window, that many seconds of the cluster's clock later
(during which the group has no leader, as while nats-server's election
timeouts run).  The Raft timings are nats-server's, scaled up to stay longer
than the window, so that no timer elects before it ends.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from fakejs.core.clock import Clock
from fakejs.core.replicated_jetstream import ReplicatedJetStream
from fakejs.jetstream.raft import RaftSettings
from fakejs.jetstream.replication import ReplicatedGroup
from fakejs.jetstream.replication.exchange import LocalExchange
from fakejs.jetstream.replication.subjects import peer_id

if TYPE_CHECKING:
    from fakejs.jetstream.service.replicated import ReplicatedJetStream as Domain
    from fakejs.server.server import Server

__all__ = [
    "Elections",
    "leader_name",
    "leading_group",
    "meta_leader",
    "move_leader",
    "ready",
    "recovered",
    "replicated_settings",
]

Reach = Callable[[str, str], bool]  # whether the server named first reaches the one named second


def raft_settings(election: float) -> RaftSettings:
    """nats-server's timings, with every election timeout longer than twice the ``election`` window."""
    shortest = max(4.0, 2 * election)
    return RaftSettings(election_timeout_min=shortest, election_timeout_max=shortest * 9 / 4)


def replicated_settings(names: list[str], election: float) -> ReplicatedJetStream:
    """What every server of an in-process cluster of the servers ``names`` is given: the meta group's voters,
    the timings, and the exchange they share."""
    return ReplicatedJetStream(tuple(names), raft_settings(election), LocalExchange())


def shares_of(server: Server, account: str = "") -> list[Domain]:
    """The server's shares of the replicated JetStream, one per account with JetStream (``account``'s only, when
    named); none while it is down."""
    shares = [js.replicated_api.domain for js in server.account_jetstreams if js.replicated_api is not None]
    return [share for share in shares if not account or share.account == account]


def domain_of(server: Server) -> Domain | None:
    """A share of the server's replicated JetStream, for what its accounts share (the meta group); ``None`` while
    it is down or has none."""
    shares = shares_of(server)
    return shares[0] if shares else None


def groups_of(server: Server) -> Iterator[ReplicatedGroup]:
    """Every group member the server runs: the meta group's, and every account's streams' and consumers'."""
    domain = domain_of(server)
    if domain is None:
        return
    if domain.group is not None:
        yield domain.group
    for share in shares_of(server):
        for stream in share.replicas.replicas.values():
            if stream.group is not None:
                yield stream.group
        for consumer in share.consumers.replicas.values():
            if consumer.group is not None:
                yield consumer.group


class Elections:
    """The elections that follow a failure on cue (see the module docstring)."""

    def __init__(self, servers: list[Server], clock: Clock, rng: random.Random, election: float) -> None:
        self.servers = servers
        self.clock = clock
        self.rng = rng
        self.election = election

    def start(self, running: list[Server]) -> None:
        """The meta group's first election: its first voter campaigns."""
        domain = domain_of(running[0])
        if domain is not None and domain.group is not None and domain.group.leader is None:
            domain.group.campaign()

    def after_failure(self, running: list[Server], reach: Reach) -> None:
        """Servers went down or were cut off: every group finds out, and elects on cue (see the module docstring)."""
        members = self._members(running)
        for named in members.values():
            for server, group in named:
                lost = {
                    peer_id(other.broker.name)
                    for other in self.servers
                    if not reach(server.broker.name, other.broker.name)
                }
                group.peers_lost(lost)
        if self.election > 0:
            self.clock.call_later(self.election, self._elect, running, reach)
        else:
            self._elect(running, reach)

    def returned(self, server: Server, running: list[Server], reach: Reach) -> bool:
        """Whether a server that came back has its share back (:func:`recovered`); until then, the groups without
        a leader on a side holding a quorum of their voters elect on cue, as a real cluster's timers would make
        them (a lost quorum found again)."""
        if recovered(server):
            return True
        self._elect(running, reach)
        return False

    def _elect(self, running: list[Server], reach: Reach) -> None:
        for named in self._members(running).values():
            for side in self._sides(named, reach):
                self._campaign(side)

    @staticmethod
    def _members(running: list[Server]) -> dict[str, list[tuple[Server, ReplicatedGroup]]]:
        members: dict[str, list[tuple[Server, ReplicatedGroup]]] = {}
        for server in running:
            for group in groups_of(server):
                if not group.stopped:
                    members.setdefault(group.name, []).append((server, group))
        return members

    @staticmethod
    def _sides(named: list[tuple[Server, ReplicatedGroup]], reach: Reach) -> list[list[tuple[Server, ReplicatedGroup]]]:
        """The group's members, by the side of the cut they are on."""
        sides: list[list[tuple[Server, ReplicatedGroup]]] = []
        for member in named:
            side = next((s for s in sides if reach(s[0][0].broker.name, member[0].broker.name)), None)
            if side is None:
                sides.append([member])
            else:
                side.append(member)
        return sides

    def _campaign(self, side: list[tuple[Server, ReplicatedGroup]]) -> None:
        """A side without a leader that holds a quorum of the group's voters elects the best placed of them."""
        groups = [group for _, group in side]
        if any(group.node.is_leader for group in groups):
            return
        membership = groups[0].node.membership
        voters = membership.voters
        if len({group.peer for group in groups} & voters) < membership.quorum:
            return
        candidates = [group for group in groups if group.peer in voters]
        best = max((group.node.log.last_term, group.node.log.last_index) for group in candidates)
        ablest = sorted(
            (group for group in candidates if (group.node.log.last_term, group.node.log.last_index) == best),
            key=lambda group: group.peer,
        )
        self.rng.choice(ablest).campaign()


def meta_leader(servers: list[Server]) -> str:
    """The name of the server leading the meta group, as its members know it ("" while none does)."""
    for server in servers:
        domain = domain_of(server)
        if domain is not None and domain.is_meta_leader:
            return server.broker.name
    return ""


def ready(running: list[Server]) -> bool:
    """Whether every running server knows the meta leader and every running server joined the meta group."""
    peers = {peer_id(server.broker.name) for server in running}
    for server in running:
        domain = domain_of(server)
        if domain is None or domain.group is None or domain.group.leader is None:
            return False
        if not peers <= set(domain.machine.state.peers):
            return False
    return True


def recovered(server: Server) -> bool:
    """Whether a server (re)started has its share back: the meta log applied as far as it is committed, and a
    leader known for the meta group and for each of its streams and consumers."""
    domain = domain_of(server)
    if domain is None or domain.group is None or domain.group.leader is None:
        return False
    if domain.group.applied_index < domain.group.node.commit_index:
        return False
    return all(group.leader is not None for group in groups_of(server))


def leading_group(running: list[Server], stream: str, consumer: str = "", account: str = "") -> ReplicatedGroup:
    """The group member that leads a stream (or one of its consumers), of ``account`` when named (else of any);
    ``KeyError`` when no running server does."""
    for server in running:
        group = _led_by(server, stream, consumer, account)
        if group is not None:
            return group
    what = f"consumer {consumer!r} of stream {stream!r}" if consumer else f"stream {stream!r}"
    raise KeyError(f"no running server leads the {what}")


def _led_by(server: Server, stream: str, consumer: str, account: str) -> ReplicatedGroup | None:
    for domain in shares_of(server, account):
        if consumer:
            replica = domain.consumers.replicas.get((stream, consumer))
            group = None if replica is None else replica.group
        else:
            found = domain.replicas.replicas.get(stream)
            group = None if found is None else found.group
        if group is not None and group.is_leader:
            return group
    return None


def leader_name(running: list[Server], stream: str, consumer: str = "") -> str:
    """The name of the running server leading a stream (or one of its consumers); "" when none does."""
    try:
        group = leading_group(running, stream, consumer)
    except KeyError:
        return ""
    return next(server.broker.name for server in running if peer_id(server.broker.name) == group.peer)


def move_leader(running: list[Server], stream: str, consumer: str = "", to: str = "") -> str:
    """The leader of a stream (or consumer) hands over, to the server named ``to`` if any; the new leader."""
    group = leading_group(running, stream, consumer)
    names = {peer_id(server.broker.name): server.broker.name for server in running}
    preferred = None
    if to:
        preferred = peer_id(to)
        if preferred == group.peer:
            raise ValueError(f'preferred server "{to}" is already leader')
        if preferred not in group.members:
            raise ValueError(f'preferred server "{to}" not known')
    group.step_down(preferred)
    return names.get(leading_group(running, stream, consumer).peer, "")
