"""A server's member of the meta group ``_meta_``, shared by the JetStream of every account it serves.

As nats-server's, a server runs one meta group member whatever the number of
accounts with JetStream: :class:`MetaMember` holds the member (the
configured servers as first voters, its log under the server's store
directory as docs/contributing/replication.md describes), its
:class:`~fakejs.jetstream.cluster.MetaStateMachine` and its
:class:`~fakejs.jetstream.cluster.MetaLeader`, the server's joining, the meta
group's membership, and the server events
(:mod:`~fakejs.jetstream.service.replicated_remove`) and the account purges
(:mod:`~fakejs.jetstream.service.replicated_purge`).  Each account's share
(:class:`~fakejs.jetstream.service.replicated.ReplicatedJetStream`) attaches
itself, and hears the assignments of its account only; an account attached
once the member runs hears the assignments the meta state holds for it.

**Joining.** Once a meta leader is known, the server asks for its own
``AddPeer`` (its name, cluster and tags): the leader proposes it for itself,
another server sends its record on ``$FJMETA.PEER`` in the system account,
where the leader proposes it; the request is sent again every few
heartbeats until the record is applied (nats-server's servers are added as
the meta leader hears of them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import msgpack

from fakejs.core.clock import sleep as clock_sleep
from fakejs.jetstream.cluster import (
    META_GROUP,
    ConsumerAssignment,
    MetaLeader,
    MetaObserver,
    MetaPeer,
    MetaStateMachine,
    StreamAssignment,
)
from fakejs.jetstream.replication import (
    META_COMPACTION,
    NotLeader,
    ProposalFailed,
    ReplicatedGroup,
    peer_id,
    start_group,
    system_router,
)
from fakejs.jetstream.service.meta_membership import MetaBootstrap, next_change
from fakejs.jetstream.service.replicated_advisories import meta_elected
from fakejs.jetstream.service.replicated_purge import AccountPurge
from fakejs.jetstream.service.replicated_remove import ServerEvents
from fakejs.jetstream.service.replicated_sections import replica_entry

if TYPE_CHECKING:
    from fakejs.core.broker import Broker
    from fakejs.core.replicated_jetstream import ReplicatedJetStream as ReplicatedOptions
    from fakejs.core.router import Subscription
    from fakejs.jetstream.service.jetstream import JetStream

__all__ = ["LEADER_SUBJECT", "PEER_SUBJECT", "AccountShare", "MetaMember"]

PEER_SUBJECT = "$FJMETA.PEER"  # fakejs's own: a server's record for the meta leader to propose
LEADER_SUBJECT = "$FJMETA.LEADER"  # fakejs's own: a new meta leader tells every server (those not in _meta_ ask)
REPEAT_HEARTBEATS = 4  # an AddPeer not applied yet is asked for again after this many heartbeats


class AccountShare(Protocol):
    """What the member needs of an account's share: its account, what hears its assignments, its stop."""

    @property
    def account(self) -> str: ...

    @property
    def js(self) -> JetStream: ...

    @property
    def observers(self) -> Sequence[MetaObserver]: ...

    def server_removed(self) -> None: ...


class MetaMember(MetaObserver):
    """A server's member of ``_meta_`` for every account's share (see the module docstring); its log is kept
    under ``store_dir``, the server's store directory."""

    def __init__(self, broker: Broker, options: ReplicatedOptions, store_dir: str) -> None:
        self.options = options
        self.store_dir = store_dir
        self.broker = broker
        self._publisher: JetStream | None = None  # the JetStream the server's advisories go through
        self.peer = peer_id(self.broker.name)
        self.cluster = self.broker.cluster_name
        self.machine = MetaStateMachine(self.peer, self.broker.record_error)
        self.shares: dict[str, AccountShare] = {}
        self.group: ReplicatedGroup | None = None
        self.leader: MetaLeader | None = None
        self.changing = False  # a membership change of _meta_ is under way (the meta leader's)
        self._heard_leader = False  # a meta leader told this server it leads (its membership is not to be learnt)
        self._peer_subscription: Subscription | None = None
        self._leader_subscription: Subscription | None = None
        self._replayed_to = 0  # the last entry of the meta log as read back at start
        self._asking: Any = None
        self._bootstrap: MetaBootstrap | None = None
        self._events = ServerEvents(self)
        self._purges = AccountPurge(self)
        self._told_removed = False  # this server's removal was logged and advertised
        self._tasks: set[asyncio.Future[Any]] = set()

    # -- the accounts' shares ---------------------------------------------------------------------------

    @property
    def js(self) -> JetStream:
        """The JetStream the meta advisories go through (the first account's: what they take is the server's)."""
        assert self._publisher is not None, "no account's JetStream attached"
        return self._publisher

    def attach(self, share: AccountShare) -> None:
        """An account's share hears its assignments from now on (those already held, at once)."""
        self.shares[share.account] = share
        if self._publisher is None:
            self._publisher = share.js
        if self.group is None:
            return  # the log read back at start tells it
        state = self.machine.state
        for (account, _), stream in list(state.streams.items()):
            if account == share.account and self.peer in stream.group.peers:
                for observer in share.observers:
                    observer.stream_assigned(stream)
        for (account, _, _), consumer in list(state.consumers.items()):
            if account == share.account and self.peer in consumer.group.peers:
                for observer in share.observers:
                    observer.consumer_assigned(consumer)

    def detach(self, share: AccountShare) -> None:
        if self.shares.get(share.account) is share:
            del self.shares[share.account]
        if self._publisher is share.js and self.shares:
            self._publisher = next(iter(self.shares.values())).js

    def _observers(self, account: str) -> Sequence[MetaObserver]:
        share = self.shares.get(account)
        return () if share is None else share.observers

    def stream_assigned(self, assignment: StreamAssignment) -> None:
        for observer in self._observers(assignment.account):
            observer.stream_assigned(assignment)

    def stream_removed(self, assignment: StreamAssignment) -> None:
        for observer in self._observers(assignment.account):
            observer.stream_removed(assignment)

    def consumer_assigned(self, assignment: ConsumerAssignment) -> None:
        for observer in self._observers(assignment.account):
            observer.consumer_assigned(assignment)

    def consumer_removed(self, assignment: ConsumerAssignment) -> None:
        for observer in self._observers(assignment.account):
            observer.consumer_removed(assignment)

    # -- lifecycle ------------------------------------------------------------------------------------

    def start(self) -> None:
        self.machine.observe(self)
        router = system_router(self.broker)
        self._peer_subscription = router.subscribe_internal(PEER_SUBJECT, self._peer_asked)
        self._leader_subscription = router.subscribe_internal(LEADER_SUBJECT, self._leader_told)
        self._events.start()
        self._purges.start()
        self._start_member([peer_id(name) for name in self.options.peers])
        assert self.group is not None
        self._replayed_to = self.group.node.log.last_index
        if not self.options.peers and not self._settled():  # the first voters come from the routes
            self._bootstrap = MetaBootstrap(self.broker, self.broker.clock, self._settled, self._bootstrapped)
            self._bootstrap.start()
            self._ask_to_join()  # a running group's leader adds this server
        elif self.group.leader is not None:  # a sole voter led before start_group returned
            self._ask_to_join()

    def _start_member(self, peers: list[str]) -> None:
        self.group = start_group(
            self.broker,
            META_GROUP,
            peers,
            self.machine,
            store_dir=self.store_dir,
            settings=self.options.raft,
            compaction=META_COMPACTION,
        )
        self.leader = MetaLeader(
            self.group, self.machine, cluster=self.cluster, rng=self.broker.random, clock=self.broker.clock
        )

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
        self._purges.stop()
        for task in self._tasks:
            task.cancel()
        for subscription in (self._peer_subscription, self._leader_subscription):
            if subscription is not None:
                system_router(self.broker).unsubscribe(subscription)
        self._peer_subscription = self._leader_subscription = None
        if self.group is not None:
            self.group.stop()

    @property
    def is_meta_leader(self) -> bool:
        return self.group is not None and self.group.is_leader

    def server_name(self, peer: str | None) -> str:
        """A peer id's server name (the id itself while its record is not in the meta state)."""
        return self.machine.state.server_name(peer)

    def replica_of(self, group: ReplicatedGroup, peer: str, leading: bool) -> dict[str, Any]:
        """A replica's entry of a ``cluster`` section (see :mod:`~fakejs.jetstream.service.replicated_sections`)."""
        return replica_entry(group, peer, leading, self.machine.state)

    def recovering(self) -> bool:
        """Whether the meta member is still applying the log it had at start (nats-server answers no request
        then: the requests of a log read back were answered before)."""
        return self.group is None or self.group.applied_index < self._replayed_to

    # -- joining: AddPeer ------------------------------------------------------------------------------

    def leader_changed(self, leader: str | None, term: int) -> None:
        if leader is not None:
            self._ask_to_join()
        if leader == self.peer:
            self._events.now_leading()
            self._change_membership()
            system_router(self.broker).publish(LEADER_SUBJECT, "", None, b"", None)
            if self.group is not None and not self.recovering():
                meta_elected(self.js, self, self.broker, self.group)

    def _leader_told(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        """A new meta leader's word: a server not in ``_meta_`` yet asks to join now (and learns no first voters)."""
        if not self.is_meta_leader:
            self._heard_leader = True
            self._ask_to_join()
        return True

    def peers_changed(self, peers: Sequence[MetaPeer]) -> None:
        self._change_membership()
        if self.group is not None and self.group.leader is not None and not self._joined() and not self._asking:
            self._ask_to_join()  # its record went offline (the log caught up after its restart): it runs again
        if self._removed() and not self._told_removed and not self.recovering():
            self._told_removed = True
            self._events.removed()
            for share in list(self.shares.values()):
                share.server_removed()

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
            await clock_sleep(group.clock, group.node.settings.heartbeat_interval)

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
            self.spawn(self._add_peer(*self._record()))
        else:
            packed = msgpack.packb(list(self._record()), use_bin_type=True)
            system_router(self.broker).publish(PEER_SUBJECT, "", None, packed, None)
        heartbeat = self.group.node.settings.heartbeat_interval
        self._asking = self.broker.clock.call_later(heartbeat * REPEAT_HEARTBEATS, self._ask_to_join)

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
            self.spawn(self._add_peer(*record))
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
            self.broker.clock.call_later(self.group.node.settings.heartbeat_interval, self._change_membership)

    def spawn(self, work: Any) -> asyncio.Task[None]:
        """Run ``work`` on the server's loop; it is cancelled if the server stops first."""
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
