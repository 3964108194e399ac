"""A clustered JetStream's meta layer, simulated: which servers hold each stream and consumer, and who leads.

nats-server runs Raft groups: a meta group for the cluster's assets, one
group per stream and per consumer.  fakejs keeps every stream and consumer
once (:mod:`fakejs.core.mount`) and simulates only what clients can see of
the groups, with nats-server's names and rules:

* placement: ``num_replicas`` servers of the cluster, all running, matching
  ``placement.cluster`` and every ``placement.tags`` entry, else 10005 "no
  suitable peers for placement" (with the unmatched tags): the rules of
  :mod:`fakejs.jetstream.cluster.placement`, which the meta group's leader
  follows too;
* leaders: one per stream and consumer, chosen among its running replicas
  by the cluster's seeded generator; a step-down moves it (to the
  ``preferred`` server if asked); a server going down moves the leadership
  of every group it led to another running replica;
* what a group with no running replica left looks like: *offline* -- a
  single-replica stream whose server is down stores nothing and answers no
  request until the server is back;
* the ``cluster`` section of stream and consumer info: ``raft_group`` names
  (``S-R3F-...``, ``C-R3F-...``), the leader, ``leader_since``, and the other
  replicas with ``current``, ``active`` and ``peer`` (nats-server's 8-character
  hash of the server name).

Every choice comes from the cluster's generator and every time from its
clock, so a run repeats.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fakejs.core.clock import Clock
from fakejs.gocompat import gotime, ids
from fakejs.jetstream.cluster.placement import (
    Candidate,
    PlacementError,
    group_name,
    new_group_id,
    place_consumer_replicas,
    place_stream_replicas,
    storage_letter,
)

__all__ = ["Group", "Meta", "NodeInfo", "PlacementError"]


@dataclass
class NodeInfo:
    """A server of the cluster as the meta layer sees it."""

    name: str
    tags: tuple[str, ...] = ()
    running: bool = True
    # Stopped in order (it told the cluster): its single-replica assets are known to be offline.
    shut_down: bool = False
    # Taken out of the meta group (``$JS.API.SERVER.REMOVE``): its JetStream is disabled.
    removed: bool = False

    @property
    def peer(self) -> str:
        """nats-server's peer id: the 8-character hash of the server name."""
        return ids.get_hash(self.name)


@dataclass
class Group:
    """One stream's or consumer's simulated Raft group: its servers and its leader."""

    kind: str  # "S" (stream) or "C" (consumer)
    name: str
    replicas: list[str]
    storage: str  # "F" (file) or "M" (memory)
    leader: str = ""
    leader_since_ns: int = 0
    raft_id: str = ""
    # Told when the leader changes (``stepped_down``: asked for, else a failover); a consumer
    # answers its waiting pulls.
    on_leader_change: list[Callable[[bool], None]] = field(default_factory=list)
    # Told when its leader's server crashed: a consumer's waiting pulls fall silent until the election.
    on_leader_lost: list[Callable[[], None]] = field(default_factory=list)

    @property
    def raft_group(self) -> str:
        return group_name(self.kind, len(self.replicas), self.storage, self.raft_id)


class Meta:
    """The cluster's assets and leaders (see the module docstring)."""

    def __init__(
        self, cluster: str, nodes: Iterable[NodeInfo], clock: Clock, rng: random.Random, election: float = 0.0
    ) -> None:
        self.cluster = cluster
        # Seconds (on the clock) a group whose leader's server went down stays without a leader:
        # nats-server's election, during which nobody answers for it. 0: elected at once.
        self.election = election
        self.nodes = {node.name: node for node in nodes}
        self.clock = clock
        self.rng = rng
        self.groups: dict[tuple[str, str], Group] = {}
        # Told (group, placing) each time a replicated group has a new leader; ``placing``: its first,
        # while the stream or consumer is being created.
        self.on_elected: Callable[[Group, bool], None] | None = None
        # Told the name of each new leader of the meta group after the first.
        self.on_meta_elected: Callable[[str], None] | None = None
        running = self.running()
        self.leader = self.rng.choice(running) if running else ""

    # -- servers -----------------------------------------------------------------------------

    def running(self) -> list[str]:
        """The servers that serve the JetStream: running, and members of the meta group."""
        return [name for name, node in self.nodes.items() if node.running and not node.removed]

    def members(self) -> list[str]:
        """The meta group's servers: all but those taken out with ``SERVER.REMOVE``."""
        return [name for name, node in self.nodes.items() if not node.removed]

    def remove_server(self, name: str) -> None:
        """``SERVER.REMOVE``: the server leaves the meta group (its JetStream is disabled); if it led, another leads."""
        self.nodes[name].removed = True
        if self.leader == name:
            running = self.running()
            self.elect_meta_leader(self.rng.choice(running) if running else "")

    def is_removed(self, name: str) -> bool:
        node = self.nodes.get(name)
        return node is not None and node.removed

    def node_down(self, name: str, orderly: bool = False) -> None:
        """A server went down (``orderly``: it said so): the groups it led move to another running replica."""
        self.nodes[name].running = False
        self.nodes[name].shut_down = orderly
        if self.leader == name:
            running = self.running()
            self.elect_meta_leader(self.rng.choice(running) if running else "")
        for group in list(self.groups.values()):
            if group.leader == name:
                if orderly:
                    self._step_aside(group, name)
                else:
                    self._fail_over(group, name)

    def node_up(self, name: str) -> None:
        """A server is back: groups left without a leader elect one again."""
        self.nodes[name].running = True
        self.nodes[name].shut_down = False
        if not self.leader and not self.nodes[name].removed:
            self.elect_meta_leader(name)
        for group in self.groups.values():
            if name in group.replicas and not self.is_running(group.leader):
                self._elect(group, exclude="", stepped_down=False)

    def elect_meta_leader(self, name: str) -> None:
        """The meta group is led by ``name`` (``""``: by nobody); a new leader is told to :attr:`on_meta_elected`."""
        elected = bool(name) and name != self.leader
        self.leader = name
        if elected and self.on_meta_elected is not None:
            self.on_meta_elected(name)

    def is_running(self, name: str) -> bool:
        node = self.nodes.get(name)
        return node is not None and node.running

    # -- placement ------------------------------------------------------------------------------

    def place_stream(self, name: str, config: Mapping[str, Any]) -> Group:
        """Choose a new stream's servers and leader; raises :class:`PlacementError`."""
        candidates = [Candidate(node, self.cluster, self.nodes[node].tags) for node in self.running()]
        chosen = place_stream_replicas(config, candidates, self.cluster, self.rng)
        return self._new_group("S", name, chosen, storage_letter(str(config.get("storage") or "")))

    def place_consumer(self, stream: str, name: str, replicas: int, storage: str) -> Group:
        """A consumer's group: the stream's servers (or as many of them as asked)."""
        stream_group = self.groups[("S", stream)]
        chosen = place_consumer_replicas(stream_group.replicas, replicas, self.rng)
        return self._new_group("C", f"{stream} {name}", chosen, storage_letter(storage))

    def _new_group(self, kind: str, name: str, replicas: list[str], storage: str) -> Group:
        group = Group(kind, name, replicas, storage, raft_id=new_group_id(self.rng))
        self._elect(group, exclude="", stepped_down=False)
        self.groups[(kind, name)] = group
        return group

    def forget(self, kind: str, name: str) -> None:
        self.groups.pop((kind, name), None)

    def group(self, kind: str, name: str) -> Group | None:
        return self.groups.get((kind, name))

    # -- leaders ------------------------------------------------------------------------------------

    def _fail_over(self, group: Group, gone: str) -> None:
        """The leader's server crashed: its waiting pulls fall silent; once the election is over (the window, if
        any), another replica leads and they hear "409 Leadership Change" (a single replica's, though it stays down).
        """
        for listener in list(group.on_leader_lost):
            listener()
        if self.election > 0 and len(group.replicas) > 1:
            group.leader = ""

        def elected() -> None:
            if self.groups.get((group.kind, group.name)) is not group:
                return
            if len(group.replicas) > 1:
                self._elect(group, exclude=gone, stepped_down=False, announce=False)
            for listener in list(group.on_leader_change):
                listener(False)

        if self.election > 0:
            self.clock.call_later(self.election, elected)
        else:
            elected()

    def _step_aside(self, group: Group, gone: str) -> None:
        """The leader's server shut down in order: another replica leads, after the election window if any."""
        if self.election <= 0 or len(group.replicas) == 1:
            self._elect(group, exclude=gone, stepped_down=False)
            return
        group.leader = ""

        def elected() -> None:
            if not group.leader and self.groups.get((group.kind, group.name)) is group:
                self._elect(group, exclude=gone, stepped_down=False)

        self.clock.call_later(self.election, elected)

    def remove_peer(self, group: Group, peer: str) -> bool:
        """``PEER.REMOVE``: another running server replaces ``peer`` in the group; False when none can."""
        spare = [n for n in self.running() if n not in group.replicas]
        if not spare:
            return False
        replacement = self.rng.choice(spare)
        group.replicas = sorted(replacement if n == peer else n for n in group.replicas)
        if group.leader == peer:
            self._elect(group, exclude=peer, stepped_down=True)
        return True

    def move_consumer_replica(self, group: Group, stream: Group, peer: str) -> bool:
        """``CONSUMER.PEER.REMOVE``: another server of the stream's replaces ``peer`` in the consumer's group;
        False when the consumer is on all of them."""
        spare = [n for n in stream.replicas if n not in group.replicas]
        if not spare:
            return False
        replacement = self.rng.choice(spare)
        group.replicas = sorted(replacement if n == peer else n for n in group.replicas)
        if group.leader == peer:
            self._elect(group, exclude=peer, stepped_down=True)
        return True

    def member(self, group: Group, peer: str) -> str:
        """The group's server ``peer`` names (a server name or its peer id), or ""."""
        for name in group.replicas:
            if peer in (name, ids.get_hash(name)):
                return name
        return ""

    def step_down(self, group: Group, preferred: str = "") -> None:
        """A leader step-down: another running replica leads (``preferred`` if it is one)."""
        if preferred and preferred in group.replicas and self.is_running(preferred) and preferred != group.leader:
            self._set_leader(group, preferred, stepped_down=True)
            return
        self._elect(group, exclude=group.leader, stepped_down=True)

    def _elect(self, group: Group, exclude: str, stepped_down: bool, announce: bool = True) -> None:
        candidates = [n for n in group.replicas if n != exclude and self.is_running(n)]
        if not candidates:
            if len(group.replicas) == 1:
                return  # a single replica keeps its server, offline until it returns
            candidates = [n for n in group.replicas if self.is_running(n)]
            if not candidates:
                group.leader = ""
                return
        self._set_leader(group, self.rng.choice(candidates), stepped_down, announce)

    def _set_leader(self, group: Group, leader: str, stepped_down: bool, announce: bool = True) -> None:
        changed = announce and bool(group.leader) and group.leader != leader
        group.leader = leader
        group.leader_since_ns = self.clock.time_ns()
        if self.on_elected is not None and len(group.replicas) > 1:
            self.on_elected(group, self.groups.get((group.kind, group.name)) is not group)
        if changed:
            for listener in list(group.on_leader_change):
                listener(stepped_down)

    def online(self, group: Group) -> bool:
        """Whether the group's leader runs (a single-replica asset on a stopped server does not)."""
        return bool(group.leader) and self.is_running(group.leader)

    def known_offline(self, group: Group) -> bool:
        """Offline because its server shut down in order (the cluster answers "offline" for it)."""
        node = self.nodes.get(group.leader)
        return not self.online(group) and node is not None and node.shut_down

    # -- info ---------------------------------------------------------------------------------------

    def cluster_info(self, group: Group) -> dict[str, Any]:
        """The ``cluster`` section of a stream's or consumer's info, in nats-server's field order."""
        if len(group.replicas) == 1:
            return {"name": self.cluster, "leader": group.leader}
        info: dict[str, Any] = {"name": self.cluster, "raft_group": group.raft_group}
        leading = self.online(group)
        if leading:
            info["leader"] = group.leader
            info["leader_since"] = gotime.rfc3339(group.leader_since_ns)
        info["system_account"] = True
        info["traffic_account"] = "$SYS"
        replicas = []
        for name in group.replicas:
            if leading and name == group.leader:
                continue
            running = self.is_running(name)
            node = self.nodes.get(name)
            shut_down = node is not None and node.shut_down
            replica: dict[str, Any] = {"name": name, "current": running or shut_down}
            if shut_down:
                replica["offline"] = True
            replica["active"] = 0
            if not running and not shut_down:
                replica["lag"] = 0
            replica["peer"] = self.nodes[name].peer if name in self.nodes else ids.get_hash(name)
            replicas.append(replica)
        info["replicas"] = replicas
        return info

    def peers(self, group: Group) -> list[dict[str, Any]]:
        """nats-server's ``PeerInfo`` of every server of the group, the leader included (as its election
        advisories list them; ``active``, nanoseconds since last heard, is 0: every replica is current)."""
        return self.peer_infos(group.replicas)

    def peer_infos(self, names: Iterable[str]) -> list[dict[str, Any]]:
        """nats-server's ``PeerInfo`` of these servers (for the meta group: every server of the cluster)."""
        peers = []
        for name in names:
            node = self.nodes.get(name)
            peer: dict[str, Any] = {"name": name, "current": self.is_running(name)}
            if node is not None and node.shut_down:
                peer["offline"] = True
            peer["active"] = 0
            peer["peer"] = node.peer if node is not None else ids.get_hash(name)
            peers.append(peer)
        return peers

    def meta_cluster(self, server: str) -> dict[str, Any]:
        """``/jsz``'s ``meta_cluster`` as server ``server`` reports it.

        As nats-server: ``peer`` is the meta leader's id; the replicas are the
        servers other than ``server``, current as this one knows them (the
        leader hears from everyone, a follower only from the leader).
        """
        info: dict[str, Any] = {"name": self.cluster}
        if self.leader:
            info["leader"] = self.leader
            info["peer"] = ids.get_hash(self.leader)
        replicas = []
        members = self.members()
        for name in members:
            if name == server:
                continue
            node = self.nodes[name]
            current = node.running and (server == self.leader or name == self.leader)
            replicas.append({"name": name, "current": current, "active": 0, "peer": node.peer})
        info["replicas"] = replicas
        info["cluster_size"] = len(members)
        info["quorum_needed"] = len(members) // 2 + 1
        return info
