"""The JetStream the servers of an in-process cluster share (``replicated=False``), and what happens when servers fail.

nats-server replicates each stream and consumer with Raft; a
:class:`~fakejs.server.local_cluster.Cluster` with JetStream keeps them
once, in one :class:`~fakejs.jetstream.JetStreamWithApi` (for one account)
whose router is mounted on every running server
(:mod:`fakejs.core.mount`), and simulates the groups in
:class:`~fakejs.jetstream.service.meta.Meta`: placement, leaders,
step-downs, fail-over when a server goes down, offline single-replica
assets.  Clients see a clustered JetStream: publish and fetch through any
server, ``cluster`` sections with leaders and replicas, ``409 Leadership
Change`` when a consumer's leader moves.

What is simulated rather than replicated: every replica is always
current (the groups agree at once), an election takes no time unless the
cluster is given an election window (``election`` seconds on its clock,
during which a group whose leader's server went down has no leader), and
the messages live in one store, kept when a server goes down.  When a
consumer's leader crashes, the pulls waiting on it hear nothing (no
heartbeats either) until the election window is over; then the new leader
answers them ``409 Leadership Change`` (nats-server 2.15.1 does the same,
some seconds after the crash).  Its timeline events go on the timeline of
the node leading the stream or consumer (:mod:`fakejs.server.cluster_timeline`).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from fakejs.core.accounts import Account
from fakejs.core.broker import Broker
from fakejs.core.clock import Clock
from fakejs.core.mount import MountedRouter
from fakejs.core.msgtrace_route import hand_over
from fakejs.core.options import SYSTEM_ACCOUNT
from fakejs.core.router import Router, Subscription
from fakejs.gocompat import ids
from fakejs.jetstream import JetStreamWithApi, advisories
from fakejs.jetstream.api.disabled import serve_disabled
from fakejs.jetstream.service.clustered import ClusterAssets
from fakejs.jetstream.service.meta import Meta, NodeInfo
from fakejs.server.cluster_meta_api import MetaRequests, system_router
from fakejs.server.cluster_quorum import QuorumWatch, Reach
from fakejs.server.cluster_timeline import ClusterRecorder
from fakejs.server.server import Server

if TYPE_CHECKING:
    from fakejs.core.imports import Imports
    from fakejs.core.msgtrace import MessageTrace
    from fakejs.jetstream.consumer.view import ConsumerName
    from fakejs.jetstream.stream.traced import Handover

__all__ = ["ClusterJetStream"]


class ClusterJetStream:
    """One shared JetStream for the servers of a cluster (one account's: the global account's by default)."""

    def __init__(
        self,
        name: str,
        servers: list[Server],
        clock: Clock,
        rng: random.Random,
        election: float = 0.0,
        account: str = "",
        recorder: ClusterRecorder | None = None,
    ) -> None:
        self.name = name
        self.recorder = recorder  # the cluster's timeline of what the nodes share (None: none kept)
        self.account_name = account  # whose JetStream it is ("": the global account's)
        self.election = election
        self.servers = servers
        self.clock = clock
        self.rng = rng
        self.jetstream: JetStreamWithApi | None = None
        self.meta: Meta | None = None
        self.meta_requests: MetaRequests | None = None
        self.router: MountedRouter | None = None
        self.quorum: QuorumWatch | None = None
        # Each server's answers to the accounts without JetStream (its broker -> (router, subscription)).
        self._disabled: dict[Broker, list[tuple[Router, Subscription]]] = {}

    def start(self, running: list[Server]) -> JetStreamWithApi:
        """Make the shared JetStream, mounted on the running servers (the first one hosts its settings)."""
        host = self.servers[0].broker
        self.router = MountedRouter(self.rng, host.record_error)
        self.router.home = self._home
        nodes = [NodeInfo(s.broker.name, tuple(s.options.server_tags), s in running) for s in self.servers]
        self.meta = Meta(self.name, nodes, self.clock, self.rng, self.election)
        js = JetStreamWithApi(
            host, host.options.store_dir, account=self.account_of(self.servers[0]), router=self.router
        )
        js.clustered = ClusterAssets(self.meta, js)
        js.trace_handover = self._trace_handover
        js.leader_imports = self._leader_imports
        if self.recorder is not None:
            self.recorder.leader_of, self.recorder.arrival = self._leader_of, self._arrival
            js.recorder = self.recorder
        self.meta_requests = MetaRequests(self.meta, js)
        self.meta.on_meta_elected = self._meta_elected
        self.quorum = QuorumWatch(self.meta, js, self.servers, self.clock)
        self.jetstream = js
        for server in running:
            self.node_up(server)
        js.start()
        return js

    def _trace_handover(
        self, stream: str, trace: MessageTrace, subject: str, hdr: bytes | None, payload: bytes
    ) -> Handover | None:
        """A traced message reached a stream led on another server: that server traces the ``js`` event.

        nats-server routes the message to the stream leader's server; the
        servers here share the stream, so the handover only does what the
        route would have: an ``eg`` event on the arrival server, the
        leader's own trace (see :func:`~fakejs.core.msgtrace_route.hand_over`).
        """
        assert self.jetstream is not None and self.jetstream.clustered is not None
        group = self.jetstream.clustered.stream_group(stream)
        servers = {server.broker.name: server for server in self.servers}
        arrival = next((s for s in self.servers if self.account_of(s) is trace.account), None)
        leader = servers.get(group.leader) if group is not None else None
        if arrival is None or leader is None or arrival is leader:
            return None
        out, back = self._route_to(arrival, leader.broker.name), self._route_to(leader, arrival.broker.name)
        if out is None or back is None:
            return None
        broker = leader.broker
        account = self.account_of(leader)
        leader_trace, routed = hand_over(trace, broker, (out, back), account, (subject, hdr, payload))

        def send() -> None:
            if leader_trace is not None:
                leader_trace.send(broker.trace_server_info())

        return leader_trace, routed, send

    def _leader_of(self, stream: str | None, consumer: str | None) -> str:
        """The node leading a consumer (else its stream), for the timeline ("" when none does)."""
        clustered = self.jetstream.clustered if self.jetstream is not None else None
        if clustered is None or stream is None:
            return ""
        group = clustered.consumer_group(stream, consumer) if consumer is not None else None
        group = group or clustered.stream_group(stream)
        return group.leader if group is not None else ""

    def _arrival(self) -> str:
        """The node the message being handled arrived on, for the timeline ("" outside one)."""
        arrival = self.router.arrival if self.router is not None else None
        found = (server.broker.name for server in self.servers if self.account_of(server).router is arrival)
        return next(found, "") if arrival is not None else ""

    def _serve_others(self, server: Server) -> None:
        """With a named account's JetStream, the server's other accounts (not the system account's) hear 10039."""
        if not self.account_name or server.broker in self._disabled:
            return
        system = server.options.system_account or SYSTEM_ACCOUNT
        others = [a for a in server.broker.accounts if a.name not in (self.account_name, system)]
        self._disabled[server.broker] = [(a.router, serve_disabled(a.router, local_only=True)) for a in others]

    def account_of(self, server: Server) -> Account:
        """The JetStream's account on one of the servers."""
        if not self.account_name:
            return server.broker.accounts.default
        account = server.broker.accounts.get(self.account_name)
        assert account is not None, self.account_name
        return account

    def _route_to(self, server: Server, name: str) -> Any:
        """The route ``server`` sends the account's messages to server ``name`` on (``None``: not connected)."""
        cluster = server.broker.cluster
        if cluster is None:
            return None
        links = cluster.routes_for(self.account_of(server).name)
        return next((link for link in links if getattr(link, "remote_name", "") == name), None)

    def _leader_imports(self, consumer: ConsumerName) -> tuple[Imports, Account] | None:
        """The imports and the JetStream's account on the server ``consumer`` leads on, if it runs and has imports.

        nats-server tracks a pull's reply through the service imports of the
        consumer leader's server only (``trackDownAccountAndInterest``).
        """
        assert self.jetstream is not None and self.jetstream.clustered is not None
        group = self.jetstream.clustered.consumer_group(consumer.stream, consumer.consumer)
        leader = next((s for s in self.servers if group is not None and s.broker.name == group.leader), None)
        if leader is None or leader.broker.imports is None:
            return None
        return leader.broker.imports, self.account_of(leader)

    def _home(self) -> Router | None:
        """Where the JetStream's own messages leave when no request is being handled: the meta leader."""
        assert self.router is not None and self.meta is not None
        for server in self.servers:
            if server.broker.name == self.meta.leader:
                router = self.account_of(server).router
                if router in self.router.nodes:
                    return router
        return self.router.nodes[0] if self.router.nodes else None

    def _meta_elected(self, leader: str) -> None:
        """A new meta leader announces itself in its system account (``DOMAIN.LEADER_ELECTED``), after the
        answer to the request that moved it."""
        assert self.meta is not None
        server = next((s for s in self.servers if s.broker.name == leader), None)
        system = system_router(server) if server is not None else None
        if system is None or server is None or self.jetstream is None:
            return
        peers = self.meta.peer_infos(self.meta.members())
        cluster = server.broker.cluster_name
        self.clock.call_soon(
            advisories.domain_leader_elected, self.jetstream, system, ids.get_hash(leader), peers, cluster
        )

    def node_up(self, server: Server) -> None:
        """A server runs (again), or rejoins the majority: it serves the JetStream, and its groups may lead."""
        assert self.router is not None and self.meta is not None
        router = self.account_of(server).router
        if self.meta.is_running(server.broker.name) and router in self.router.nodes:
            return
        self.router.mount(router)
        self._serve_others(server)
        server.broker.jetstream_enabled = not self.meta.is_removed(server.broker.name)
        server.shared_jetstream = self.jetstream
        if self.meta_requests is not None:
            self.meta_requests.serve(server)
        self.meta.node_up(server.broker.name)

    def node_down(self, server: Server, orderly: bool = False) -> None:
        """A server goes down (or is cut off from the majority): the groups it led move, single replicas go offline.

        ``orderly``: it said so (a shutdown), and the others know its assets are offline.
        """
        assert self.router is not None and self.meta is not None
        if not self.meta.is_running(server.broker.name):
            return
        self.meta.node_down(server.broker.name, orderly)
        self.router.unmount(self.account_of(server).router)

    def check_quorum(self, reach: Reach) -> None:
        """Servers went down, came back or were cut off: replicas without a quorum announce it, on the clock."""
        if self.quorum is not None:
            self.quorum.check(reach)

    def set_election(self, seconds: float) -> None:
        """How long a group whose leader's server crashed stays without a leader (seconds of the cluster's clock)."""
        self.election = seconds
        if self.meta is not None:
            self.meta.election = seconds

    def move_leader(self, stream: str, consumer: str = "", to: str = "") -> str:
        """Step a stream's (or consumer's) leader down on cue, to the server ``to`` if named; the new leader."""
        assert self.meta is not None and self.jetstream is not None and self.jetstream.clustered is not None
        clustered = self.jetstream.clustered
        group = clustered.consumer_group(stream, consumer) if consumer else clustered.stream_group(stream)
        if group is None:
            raise KeyError(f"no clustered {'consumer ' + consumer + ' of ' if consumer else ''}stream {stream!r}")
        problem = clustered.preferred_problem(group, to)
        if problem:
            raise ValueError(problem)
        clustered.step_down(group, to)
        return group.leader

    def stop(self) -> None:
        if self.quorum is not None:
            self.quorum.stop()
        if self.meta_requests is not None:
            self.meta_requests.stop()
        if self.jetstream is not None:
            self.jetstream.stop()
            self.jetstream = None
        if self.router is not None:
            for node in list(self.router.nodes):
                self.router.unmount(node)
        for answers in self._disabled.values():
            for router, subscription in answers:
                router.unsubscribe(subscription)
        self._disabled.clear()
