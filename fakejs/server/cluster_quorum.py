"""Replicated streams and consumers that lost their quorum, and the advisories their stranded replicas send.

A stream's or consumer's group of ``num_replicas`` servers needs a majority
of them to make progress.  When servers crash or a partition cuts the
cluster, a running replica that reaches fewer of its group's servers than
that (itself included) has lost its quorum.  nats-server's Raft notices
after ``lostQuorumInterval`` (10 s without hearing a quorum of peers) and
its JetStream publishes ``STREAM.QUORUM_LOST`` / ``CONSUMER.QUORUM_LOST``
from that server, then again at most every ``lostQuorumSignal`` (20 s) while
the quorum stays lost (:mod:`fakejs.jetstream.quorum_advisories`), with
nats-server's warning log line.  :class:`QuorumWatch` does the same on the
cluster's clock: the first advisory 10 s after the quorum went, a repeat
every 20 s, none once the quorum is back.  nats-server's come at its
candidate's next election timeout (4-9 s, random) after those points.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fakejs.core.clock import Clock, TimerHandle
from fakejs.gocompat import ids
from fakejs.jetstream import quorum_advisories
from fakejs.jetstream.service.meta import Group, Meta
from fakejs.server.cluster_meta_api import system_router
from fakejs.server.server import Server

if TYPE_CHECKING:
    from fakejs.jetstream import JetStreamWithApi

__all__ = ["LOST_QUORUM_INTERVAL", "LOST_QUORUM_SIGNAL", "QuorumWatch"]

LOST_QUORUM_INTERVAL = 10.0  # seconds: nats-server's lostQuorumInterval, a quorum unheard for that long is lost
LOST_QUORUM_SIGNAL = 20.0  # seconds: nats-server's lostQuorumSignal, between two signals of a lost quorum

# The servers a running server reaches, itself included (empty when it is down).
Reach = Callable[[str], set[str]]


class QuorumWatch:
    """The timers of every (group, server) whose replica has no quorum (see the module docstring)."""

    def __init__(self, meta: Meta, js: JetStreamWithApi, servers: list[Server], clock: Clock) -> None:
        self.meta = meta
        self.js = js
        self.servers = {server.broker.name: server for server in servers}
        self.clock = clock
        self._timers: dict[tuple[tuple[str, str], str], TimerHandle] = {}

    def check(self, reach: Reach) -> None:
        """The cluster changed: start the timers of replicas that lost their quorum, stop those that have it."""
        stranded = {
            ((group.kind, group.name), name)
            for group in self.meta.groups.values()
            if len(group.replicas) > 1
            for name in group.replicas
            if self._lost(group, name, reach)
        }
        for key in set(self._timers) - stranded:
            self._timers.pop(key).cancel()
        for key in stranded - set(self._timers):
            self._timers[key] = self.clock.call_later(LOST_QUORUM_INTERVAL, self._signal, key, reach)

    def stop(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    @staticmethod
    def _lost(group: Group, name: str, reach: Reach) -> bool:
        reached = reach(name)
        return bool(reached) and len(reached & set(group.replicas)) < len(group.replicas) // 2 + 1

    def _signal(self, key: tuple[tuple[str, str], str], reach: Reach) -> None:
        """The replica on server ``key[1]`` still has no quorum: its advisory now, the next one later."""
        group_key, name = key
        group = self.meta.groups.get(group_key)
        server = self.servers.get(name)
        if group is None or server is None or not self._lost(group, name, reach):
            self._timers.pop(key, None)
            return
        self._timers[key] = self.clock.call_later(LOST_QUORUM_SIGNAL, self._signal, key, reach)
        self._announce(group, server, self._peers(group, reach(name), name))

    def _peers(self, group: Group, reached: set[str], name: str) -> list[dict[str, Any]]:
        """The group's servers as the stranded replica sees them: itself and those it reaches current."""
        peers = []
        for replica in group.replicas:
            node = self.meta.nodes.get(replica)
            peer: dict[str, Any] = {"name": replica, "current": replica == name or replica in reached}
            if node is not None and node.shut_down:
                peer["offline"] = True
            peer["active"] = 0
            peer["peer"] = ids.get_hash(replica)
            peers.append(peer)
        return peers

    def _announce(self, group: Group, server: Server, peers: list[dict[str, Any]]) -> None:
        own = server.broker.accounts.get(self.js.account_name)
        if own is None:
            return
        routers = (own.router, system_router(server))
        account = self.js.account_name
        if group.kind == "S":
            server.broker.log.warning("JetStream cluster stream '%s > %s' has NO quorum, stalled", account, group.name)
            quorum_advisories.stream_quorum_lost(self.js, routers, group.name, peers)
            return
        stream, consumer = group.name.split(" ", 1)
        server.broker.log.warning(
            "JetStream cluster consumer '%s > %s > %s' has NO quorum, stalled.", account, stream, consumer
        )
        quorum_advisories.consumer_quorum_lost(self.js, routers, stream, consumer, peers)
