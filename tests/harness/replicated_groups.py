"""A replicated group's member on each server of an in-process cluster, with a state machine adding up integers.

:class:`GroupMembers` is what every such set of members shares: started and
stopped on every server, the running ones and their leader.  :class:`Members`
starts, kills and restarts the members and commits through their leader;
:class:`Counter` is the state machine, and :func:`meshed` says whether the
running members reach one another over the routes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

from fakejs.jetstream.raft import Entry, RaftSettings
from fakejs.jetstream.replication import ProposalFailed, ReplicatedGroup, peer_id, start_group
from fakejs.server.local_cluster import Cluster
from tests.harness.replicated import WAIT, wait

GROUP = "counter"


class Counter:
    """A state machine adding up the integers proposed, remembering every leader it was told of."""

    def __init__(self) -> None:
        self.total = 0
        self.leaders: list[tuple[str | None, int]] = []
        self.restored: list[int] = []  # the totals snapshots brought

    def apply(self, entries: Sequence[Entry]) -> None:
        for entry in entries:
            if entry.data == b"boom":
                raise RuntimeError("boom")
            self.total += int(entry.data)

    def snapshot(self) -> bytes:
        return str(self.total).encode()

    def restore(self, data: bytes) -> None:
        self.total = int(data or b"0")
        self.restored.append(self.total)

    def leader_changed(self, leader: str | None, term: int) -> None:
        self.leaders.append((leader, term))


class GroupMembers:
    """A member of one replicated group on each server of ``cluster`` (by server name), started by :meth:`start`."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.peers = [peer_id(server.broker.name) for server in cluster.servers]
        self.groups: dict[str, ReplicatedGroup] = {}

    def start(self, name: str) -> ReplicatedGroup:
        """Start the member on the server ``name`` (and whatever it applies to)."""
        raise NotImplementedError

    def start_all(self) -> Self:
        for server in self.cluster.servers:
            self.start(server.broker.name)
        return self

    def stop_all(self) -> None:
        for group in self.groups.values():
            group.stop()

    def running(self) -> list[str]:
        return [name for name, group in self.groups.items() if not group.stopped]

    def leader(self, among: Sequence[str] | None = None) -> str | None:
        """The server whose member leads, once every member of ``among`` (the running ones) knows it."""
        names = list(among) if among is not None else self.running()
        leaders = {self.groups[name].leader for name in names}
        if len(leaders) != 1 or None in leaders:
            return None
        return next((name for name in names if self.groups[name].is_leader), None)


class Members(GroupMembers):
    """The member of the group on each server of ``cluster``, its counter, and failures on cue."""

    def __init__(self, cluster: Cluster, store: Path | None, settings: RaftSettings | None, **options: Any) -> None:
        super().__init__(cluster)
        self.store = store
        self.settings = settings
        self.options = options
        self.counters: dict[str, Counter] = {}

    def start(self, name: str) -> ReplicatedGroup:
        self.counters[name] = Counter()
        store = None if self.store is None else str(self.store / name)
        self.groups[name] = start_group(
            self.cluster.server(name).broker,
            GROUP,
            self.peers,
            self.counters[name],
            store_dir=store,
            settings=self.settings,
            fsync=False,
            **self.options,
        )
        return self.groups[name]

    async def kill(self, name: str) -> None:
        """The server crashes, and its member with it."""
        self.groups[name].stop()
        await self.cluster.kill(name)

    async def restart(self, name: str) -> ReplicatedGroup:
        await self.cluster.restart(name)
        return self.start(name)

    def name_of(self, peer: str | None) -> str:
        return next(name for name, group in self.groups.items() if group.peer == peer)

    def totals(self, names: Sequence[str] | None = None) -> set[int]:
        return {self.counters[name].total for name in (names if names is not None else self.running())}

    async def commit(self, value: int, among: Sequence[str] | None = None) -> int:
        """Propose ``value`` through the leader (found again if it changes meanwhile); its index once applied."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT
        while True:
            leader = await wait(lambda: self.leader(among))
            try:
                return await self.groups[leader].propose(str(value).encode())
            except ProposalFailed:
                if loop.time() > deadline:
                    raise


def meshed(members: Members) -> bool:
    """Every running member reaches every other running member (their subscriptions crossed the routes)."""
    running = members.running()
    return all(members.groups[a].reaches(members.groups[b].peer) for a in running for b in running if a != b)
