"""Who votes in ``_meta_``: its first voters learned from the routes, and the Raft membership kept to the meta state.

**Learning the first voters** (:class:`MetaBootstrap`).  A server whose
options name no first voters (``ReplicatedJetStream(peers=())``, as a server
started from a configuration file or flags would be) starts its member of
``_meta_`` with no peers: it votes for nobody and campaigns never, but takes
the log of a leader that adds it.  As nats-server's ``bootstrapRaftNode`` does
when it does not know all its peers, it expects a meta group of the size its
configured routes give (at least two); once it is routed to that many servers
(itself counted), has seen the same servers at two checks in a row (a
quarter second apart) and has heard of no leader, it starts its member again
with those servers as first voters (its log is still empty, so nothing is
lost) and campaigns after a campaign timeout, as nats-server's bootstrapped
meta group does.  A server that hears of a leader first (a running group
that added it, or a new meta leader's word on ``$FJMETA.LEADER``) keeps the
membership the log gives it; a restarted server takes its membership from its
stored log.

**Keeping the Raft membership to the meta state** (:func:`next_change`).  The
meta leader adds to the group, as a voter, each server whose ``AddPeer`` is
applied and that is not a member yet (nats-server's leader proposes a peer it
hears from and does not know), and takes out each server marked removed
(``$JS.API.SERVER.REMOVE``), one change at a time.

**A stream's or consumer's group membership** (:class:`GroupMembership`).
When the meta leader moves a stream off a removed server, removes a peer
(``PEER.REMOVE``) or changes its replicas, the assignment keeps its group
and changes its peers; the group's leader adds the new peers and removes
the others, one change at a time.  A member whose server left the
assignment stops at once, but hands its leadership over first when it
leads (:func:`retire`); :class:`Retiring` holds a server's streams or
consumers doing so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from fakejs.jetstream.replication import peer_id

if TYPE_CHECKING:
    from fakejs.core.broker import Broker
    from fakejs.core.clock import Clock
    from fakejs.jetstream.cluster import MetaState
    from fakejs.jetstream.replication import ReplicatedGroup

__all__ = [
    "ROUTES_CHECK_INTERVAL",
    "GroupMembership",
    "MetaBootstrap",
    "Retiring",
    "expected_size",
    "next_change",
    "retire",
    "routed_servers",
]

RETIRE_HEARTBEATS = 10  # a retiring leader waits this many heartbeats at most for another member to lead
ROUTES_CHECK_INTERVAL = 0.25  # seconds between two looks at the routed servers while the first voters are unknown


def expected_size(broker: Broker) -> int:
    """The size of meta group a server expects when it knows none of its peers (nats-server: its configured
    routes, at least two)."""
    config = broker.options.cluster
    routes = len(config.routes) if config is not None else 0
    return max(2, routes)


def routed_servers(broker: Broker) -> set[str]:
    """The names of the servers this one has a route to, and its own."""
    names = {broker.name}
    cluster = broker.cluster
    if cluster is not None:
        names.update(peer.name for peer in cluster.peers.values() if any(True for _ in peer.live_links()))
    return names


def next_change(state: MetaState, group: ReplicatedGroup) -> tuple[str, str] | None:
    """The membership change the meta leader makes next: ``("add", peer)`` for a server of the meta state
    that is not a member, ``("remove", peer)`` for a removed server that still is; ``None``: they agree."""
    members = group.members
    for record in state.peers.values():
        if record.removed and record.peer in members:
            return "remove", record.peer
    for record in state.peers.values():
        if not record.removed and record.peer not in members:
            return "add", record.peer
    return None


class MetaBootstrap:
    """Waits, on a server that knows no first voters, until the routes say who they are (see the module
    docstring); ``settled()`` tells whether the member has a log or a leader already, ``restart(peers)``
    starts it again with these first voters (peer ids)."""

    def __init__(
        self,
        broker: Broker,
        clock: Clock,
        settled: Callable[[], bool],
        restart: Callable[[list[str]], None],
        interval: float = ROUTES_CHECK_INTERVAL,
    ) -> None:
        self.broker = broker
        self.clock = clock
        self.interval = interval
        self.expected = expected_size(broker)
        self._settled = settled
        self._restart = restart
        self._seen: set[str] = set()
        self._timer: Any = None
        self.bootstrapped = False

    def start(self) -> None:
        self._timer = self.clock.call_later(self.interval, self._check)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        self._timer = None
        if self._settled():
            return
        known = routed_servers(self.broker)
        if len(known) >= self.expected and known == self._seen:
            self.bootstrapped = True
            self._restart(sorted(peer_id(name) for name in known))
            return
        self._seen = known
        self.start()


class GroupMembership:
    """Keeps the Raft membership of a stream's group to its assignment's peers, on the group's leader: one
    change at a time, the new peers added first (as voters), then those no longer assigned removed; a change
    refused for now (another under way...) is tried again a heartbeat later."""

    def __init__(self, group: ReplicatedGroup, clock: Clock) -> None:
        self.group = group
        self.clock = clock
        self.wanted: frozenset[str] = frozenset()
        self._changing = False

    def want(self, peers: Iterable[str]) -> None:
        self.wanted = frozenset(peers)
        self.step()

    def step(self) -> None:
        group = self.group
        if self._changing or group.stopped or not group.is_leader or not self.wanted:
            return
        members = group.members
        added = sorted(self.wanted - members)
        removed = sorted(members - self.wanted)
        if added:
            future = group.add_peer(added[0])
        elif removed:
            future = group.remove_peer(removed[0])
        else:
            return
        self._changing = True
        future.add_done_callback(self._changed)

    def _changed(self, future: asyncio.Future[int]) -> None:
        self._changing = False
        if future.cancelled() or future.exception() is None:
            self.step()
        elif not self.group.stopped:
            self.clock.call_later(self.group.node.settings.heartbeat_interval, self.step)


def retire(group: ReplicatedGroup, clock: Clock, remaining: Iterable[str], done: Callable[[], None]) -> None:
    """A member whose server left the group's assignment: when it leads, it hands leadership to one of the
    ``remaining`` peers first (a group that loses its leader and all but one member could elect nobody), and
    ``done`` is called once another member leads, or after :data:`RETIRE_HEARTBEATS` heartbeats at most."""
    others = sorted(peer for peer in remaining if peer in group.voters and peer != group.peer)
    if group.stopped or not group.is_leader or not others:
        done()
        return
    try:
        group.step_down(others[0])
    except Exception:  # noqa: BLE001 - refused (a transfer under way...): it stops as it is
        done()
        return
    left = [RETIRE_HEARTBEATS]

    def check() -> None:
        left[0] -= 1
        if group.stopped or not group.is_leader or left[0] <= 0:
            done()
        else:
            clock.call_later(group.node.settings.heartbeat_interval, check)

    clock.call_later(group.node.settings.heartbeat_interval, check)


class Retirable(Protocol):
    """A server's replica of a stream or consumer: its group's member, stopped for a while or for good."""

    @property
    def group(self) -> ReplicatedGroup | None: ...

    def stop(self, remove: bool) -> None: ...


Key = TypeVar("Key", bound=Hashable)
Replica = TypeVar("Replica", bound=Retirable)


class Retiring(Generic[Key, Replica]):
    """The replicas removed from this server whose groups go on elsewhere, each handing its leadership over
    (:func:`retire`) before it stops for good; ``len()`` counts them."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._replicas: dict[Key, Replica] = {}

    def __len__(self) -> int:
        return len(self._replicas)

    def remove(self, key: Key, replica: Replica, remaining: tuple[str, ...]) -> None:
        """Stop ``replica`` for good: once it handed over when its group goes on with the ``remaining`` peers,
        at once otherwise."""
        group = replica.group
        if not remaining or group is None:
            replica.stop(remove=True)
            return
        self._replicas[key] = replica
        retire(group, self._clock, remaining, lambda: self._retired(key, replica))

    def assigned_again(self, key: Key) -> None:
        """The asset is assigned to this server again: its old member, if still handing over, stops now."""
        leaving = self._replicas.pop(key, None)
        if leaving is not None:
            leaving.stop(remove=True)

    def _retired(self, key: Key, replica: Replica) -> None:
        if self._replicas.get(key) is replica:
            del self._replicas[key]
            replica.stop(remove=True)

    def stop(self) -> None:
        """The server stops: every one still handing over stops as a crash would, its directory kept."""
        for replica in self._replicas.values():
            replica.stop(remove=False)
        self._replicas.clear()
