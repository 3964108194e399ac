"""A cluster of fakejs servers in one process, that fails on cue: the same way every run.

::

    async with Cluster(size=3) as cluster:
        nc = await nats.connect(cluster.urls)     # every node's URL
        await cluster.kill("n2")                  # its routes drop, its clients reconnect elsewhere
        await cluster.partition(["n1"], ["n2", "n3"])
        await cluster.heal()

Each node is a full :class:`~fakejs.server.server.Server` with its own
client port and route port on 127.0.0.1; the nodes speak nats-server's
route protocol to each other (the first node is the seed the others are
routed to; gossip meshes the rest), so what a client sees is what a
cluster of nats-server nodes would show.  A shared clock (a
:class:`~fakejs.testkit.clock.ManualClock` for virtual time) drives every
node's timers, and seeds derived from one ``seed`` make every node's random
choices repeat.  What this adds to a real cluster:

* :meth:`Cluster.kill` and :meth:`Cluster.restart` (same ports, so clients and
  routes find the node where it was);
* :meth:`Cluster.partition` and :meth:`Cluster.heal`: nodes refuse routes
  across the cut until healed; healing dials at once, so it does not wait
  for a reconnect timer (on a manual clock, nothing would move it);
* :meth:`Cluster.start_scenario`: a scenario file whose steps kill,
  restart, partition nodes or move leaders on cue, on named nodes
  (:mod:`fakejs.server.cluster_scenarios`);
* :meth:`Cluster.wait_meshed`: every running node routed to every other
  running node it may reach, with full pools;
* :meth:`Cluster.timeline` and :meth:`Cluster.timeline_page`: what every node
  did, on one timeline (:mod:`fakejs.server.cluster_timeline`).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from fakejs.core.clock import Clock, SystemClock
from fakejs.core.clock import sleep as clock_sleep
from fakejs.core.cluster.cluster import Cluster as Routes
from fakejs.core.cluster_config import ClusterConfig
from fakejs.core.failures import ServerError
from fakejs.core.options import ServerOptions
from fakejs.gocompat import ids
from fakejs.server.cluster_scenarios import ClusterScenarios
from fakejs.server.cluster_timeline import ClusterRecorder, document, merged
from fakejs.server.port_holds import PortHolds
from fakejs.server.server import Server
from fakejs.testkit.scenarios import load_scenario, load_scenario_text
from fakejs.testkit.timeline import TimelineFilter

if TYPE_CHECKING:
    from fakejs.jetstream import JetStreamWithApi
    from fakejs.server.cluster_replication import Elections

__all__ = ["Cluster"]

# How long (real seconds) the nodes may take to mesh before a wait gives up.
MESH_TIMEOUT = 10.0
SHARED_REMOVED = (
    "replicated=False: the shared JetStream was removed; a cluster's JetStream is replicated across its nodes"
)
MESH_REDIAL_AFTER = 1.0  # seconds of real time without a mesh before the missing routes are dialled at once


class Cluster:
    """``size`` fakejs servers forming one cluster (see the module docstring).

    ``name`` is the cluster's name, nodes are named ``n1`` ... ``nN``
    (``node_prefix`` + index: ``node_prefix="web"`` names them ``web1`` ...);
    ``clock`` is shared by every node; ``seed`` seeds node ``i`` with
    ``seed + i``; other keyword arguments are
    :class:`~fakejs.core.options.ServerOptions` fields given to every node.
    ``jetstream=True`` gives the cluster a JetStream (off by default):
    each node runs its share of a JetStream replicated across them, the code
    of a cluster of processes (:mod:`fakejs.server.cluster_replication`).
    ``replicated=True`` is accepted and changes nothing; ``replicated=False``
    (the shared JetStream of earlier versions) is refused.
    ``tags`` are node ``i``'s ``server_tags``; ``election`` the seconds a
    JetStream group stays without a leader when its leader's node goes down.
    """

    def __init__(
        self,
        size: int = 3,
        *,
        name: str = "C",
        clock: Clock | None = None,
        seed: int | None = None,
        node_prefix: str = "n",
        tags: Sequence[Sequence[str]] = (),
        election: float = 0.0,
        replicated: bool = True,
        **settings: Any,
    ) -> None:
        if size < 1:
            raise ValueError("a cluster needs at least one node")
        if not replicated:
            raise ValueError(SHARED_REMOVED)
        self.name = name
        self.node_prefix = node_prefix
        self.clock: Clock = clock if clock is not None else SystemClock()
        if settings.pop("jetstream", False) and settings.get("jetstream_replicated") is None:
            # Only a cluster with JetStream loads the replicated JetStream, and the JetStream layer with it
            from fakejs.server.cluster_replication import replicated_settings

            names = [f"{node_prefix}{index + 1}" for index in range(size)]
            settings["jetstream_replicated"] = replicated_settings(names, election)
        # Each node runs its share of the JetStream replicated across them (``jetstream_replicated``).
        given = settings.get("jetstream_replicated")
        settings["jetstream"] = given is not None
        # Elections on cue for the servers that share an in-process exchange (each runs its share of the groups)
        self.on_cue = given is not None and given.exchange is not None
        # The in-process exchange asks whom a node reaches only while a node is down or the cluster is cut
        self._exchange = given.exchange if given is not None and self.on_cue else None
        settings.setdefault("port", 0)
        self._settings = settings
        self._tags = [list(node_tags) for node_tags in tags]  # node i's server_tags (placement.tags)
        self.election = election  # JetStream: seconds a group whose leader's server went down has no leader
        self._seed = seed
        self.elections: Elections | None = None  # the replicated JetStream's elections on cue
        self._own_store = ""  # the directory the cluster made for its nodes' stores (removed when it stops)
        self.servers: list[Server] = [self._node(i) for i in range(size)]
        numbering = itertools.count()  # one count for every node: the indexes order the merged timeline
        for server in self.servers:
            server.recorded.number_with(numbering)
            server.cluster_timeline = partial(document, self.servers)  # the control API's cluster timeline
        self.recorder = ClusterRecorder(self.servers, self._recording_node)
        self._down: set[int] = set()
        self._holds = PortHolds()  # the ports of the nodes down
        self._groups: list[set[int]] = []
        self._reach_cache: dict[str, frozenset[str]] = {}  # _reaches' answers until a node goes down, up or is cut
        self.scenarios: ClusterScenarios | None = None

    def _node(self, index: int) -> Server:
        routes = ClusterConfig(name=self.name, host="127.0.0.1", port=0)
        seed = None if self._seed is None else self._seed + index
        options = ServerOptions(**self._settings)
        options = replace(options, name=f"{self.node_prefix}{index + 1}", seed=seed, cluster=routes)
        if index < len(self._tags):
            options.server_tags = list(self._tags[index])
        return Server(options, clock=self.clock)

    # -- the nodes ------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self.servers)

    def index(self, node: int | str | Server) -> int:
        """A node's position: from its index, its name (``"n2"``) or its server."""
        if isinstance(node, Server):
            return self.servers.index(node)
        if isinstance(node, str):
            for i, server in enumerate(self.servers):
                if server.broker.name == node:
                    return i
            raise KeyError(f"no node named {node!r} (the nodes are n1 ... n{self.size})")
        if not 0 <= node < self.size:
            raise IndexError(f"no node {node} (the nodes are 0 ... {self.size - 1})")
        return node

    def server(self, node: int | str) -> Server:
        return self.servers[self.index(node)]

    def url(self, node: int | str) -> str:
        return self.server(node).url

    @property
    def urls(self) -> list[str]:
        """Every node's client URL (nats-py takes the list as its server pool)."""
        return [server.url for server in self.servers]

    @property
    def running(self) -> list[Server]:
        return [server for i, server in enumerate(self.servers) if i not in self._down]

    @property
    def errors(self) -> list[ServerError]:
        """What any node's handlers raised, oldest first per node."""
        return [error for server in self.servers for error in server.errors]

    def _routes(self, server: Server) -> Routes:
        routes = server.broker.cluster
        assert routes is not None, "a cluster node always has routes"
        return routes

    def _route_url(self, server: Server) -> str:
        assert server.routes is not None, "node not started"
        return f"nats-route://127.0.0.1:{server.routes.port}"

    # -- start and stop -----------------------------------------------------------------------

    async def start(self) -> Cluster:
        """Start the seed, then the others routed to it; returns once the nodes are meshed."""
        if self.on_cue:
            self._give_stores()
        seed = self.servers[0]
        await seed.start()
        for server in self.servers[1:]:
            config = server.options.cluster
            assert config is not None
            config.routes = [self._route_url(seed)]
            await server.start()
        await self.wait_meshed()
        self.scenarios = ClusterScenarios(self)
        self.scenarios.attach()
        if self.on_cue:
            # The replicated JetStream's module loads with the first cluster that runs one
            from fakejs.server.cluster_replication import Elections, ready

            rng = ids.new_random(None if self._seed is None else self._seed - 1)
            self.elections = Elections(self.servers, self.clock, rng, self.election)
            self.elections.start(self.running)
            await self.running[0].wait_for(
                lambda: ready(self.running), MESH_TIMEOUT
            )  # the meta leader known everywhere
        return self

    def _give_stores(self) -> None:
        """Each node keeps its JetStream in a directory of its own, kept over a restart, as a process's: under
        the ``store_dir`` given, else in one the cluster makes and removes when it stops."""
        if self._settings.get("store_dir"):
            base = str(self._settings["store_dir"])
        else:
            self._own_store = base = tempfile.mkdtemp(prefix="fakejs-cluster-")
        for server in self.servers:
            server.options.store_dir = os.path.join(base, server.broker.name)

    def _recording_node(self) -> str:
        """Where the cluster's own events (a scenario's steps for every node) are recorded."""
        if self.elections is not None and self.meta_leader:
            return self.meta_leader
        return next((server.broker.name for server in self.running), "")

    def timeline(self, node: str | None = None, **filters: Any) -> list[dict[str, Any]]:
        """What every node (or ``node``) did, oldest first, each event with its ``node``; the filters are
        :meth:`Server.timeline`'s (see docs/guide/timeline.md)."""
        return merged(self.servers, TimelineFilter(**filters), node)

    def timeline_document(self, node: str | None = None, **filters: Any) -> dict[str, Any]:
        """What the cluster's timeline page shows: every node's (or ``node``'s) events, merged."""
        return document(self.servers, TimelineFilter(**filters), node)

    def timeline_page(self, title: str = "", node: str | None = None, **filters: Any) -> str:
        """The cluster's timeline as one self-contained HTML page, a group of lanes per node."""
        # The page's template comes with the first page asked for
        from fakejs.testkit.timeline_page import render

        return render(self.timeline_document(node, **filters), title or f"cluster {self.name}")

    @property
    def jetstream(self) -> JetStreamWithApi | None:
        """The JetStream of the node leading the meta group (``jetstream=True``), for a look inside: every node
        runs its share, a stream's replicas hold the same messages."""
        if self.elections is None:
            return None
        leader = self.meta_leader
        return self.server(leader).jetstream if leader else None

    @property
    def meta_leader(self) -> str:
        """The name of the node leading the JetStream meta group ("" while none does, or without JetStream)."""
        if self.elections is None:
            return ""
        # The replicated JetStream's module loads with the first cluster that runs one
        from fakejs.server.cluster_replication import meta_leader

        return meta_leader(self.running)

    async def start_scenario(self, name_or_path: str | None = None, text: str | None = None) -> dict[str, Any]:
        """Start a scenario (a path, a shipped name, or TOML text) on the cluster (:mod:`fakejs.server.cluster_scenarios`)."""
        if self.scenarios is None:
            raise RuntimeError("start the cluster before its scenario")
        if name_or_path is not None:
            scenario = load_scenario(name_or_path)
        else:
            scenario = load_scenario_text(text or "", "<request>")
        return await self.scenarios.start(scenario)

    async def stop(self) -> None:
        if self.scenarios is not None:
            self.scenarios.stop()
        for i, server in reversed(list(enumerate(self.servers))):
            if i not in self._down:
                await server.stop()
        self._down = set(range(self.size))
        self._holds.release_all()
        self._reach_changed()
        if self._own_store:
            shutil.rmtree(self._own_store, ignore_errors=True)
            self._own_store = ""

    async def __aenter__(self) -> Cluster:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- failures on cue ---------------------------------------------------------------------

    async def kill(self, node: int | str, orderly: bool = False) -> None:
        """Take a node down: its clients and routes drop; it keeps its ports for :meth:`restart`.

        A crash (nats-server's SIGKILL) unless ``orderly`` (its SIGTERM: the
        cluster is told, so requests about a single-replica stream or
        consumer there are answered "offline" rather than not at all).
        Returns once the other nodes have dropped their routes to it.
        """
        i = self.index(node)
        if i in self._down:
            return
        server = self.servers[i]
        server.listeners.pin_ports(server.port)
        config = server.options.cluster
        if server.routes is not None and config is not None:
            config.port = server.routes.port
        self._down.add(i)
        self._reach_changed()
        await server.stop(crash=not orderly)
        self._holds.hold(i, server.options)  # nobody else takes its ports before the restart
        await self.wait_meshed()
        self._after_failure()

    async def shutdown(self, node: int | str) -> None:
        """An orderly stop of a node (see :meth:`kill`)."""
        await self.kill(node, orderly=True)

    async def restart(self, node: int | str, down_for: float = 0.0) -> None:
        """Bring a node back on its ports (after ``down_for`` seconds of cluster time); wait until meshed."""
        i = self.index(node)
        if i not in self._down:
            await self.kill(i)
        if down_for > 0:
            await self._sleep(down_for)
        self._down.discard(i)
        self._reach_changed()
        server = self.servers[i]
        self._holds.release(i)
        await server.start()
        self._apply_partition(i)
        await self.wait_meshed()
        elections = self.elections
        if elections is not None:
            await server.wait_for(lambda: elections.returned(server, self.running, self._reaches), MESH_TIMEOUT)

    def step_down(self, stream: str, consumer: str = "") -> str:
        """A JetStream stream's (or consumer's) leader steps down on cue; returns the new leader."""
        return self._move_leader(stream, consumer, "")

    def move_leader(self, stream: str, node: int | str, consumer: str = "") -> str:
        """Move a stream's (or consumer's) leader to ``node`` (one of its replicas); returns it."""
        return self._move_leader(stream, consumer, self.servers[self.index(node)].broker.name)

    def _move_leader(self, stream: str, consumer: str, to: str) -> str:
        if self.elections is None:
            raise RuntimeError("the cluster has no JetStream: start it with jetstream=True")
        # The replicated JetStream's module loads with the first cluster that runs one
        from fakejs.server.cluster_replication import move_leader

        return move_leader(self.running, stream, consumer, to)

    def _after_failure(self) -> None:
        """Servers went down or were cut off: a replicated JetStream's groups elect on cue (cluster_replication)."""
        if self.elections is not None:
            self.elections.after_failure(self.running, self._reaches)

    async def partition(self, *groups: Iterable[int | str]) -> None:
        """Cut the cluster into ``groups`` (nodes not named form one more): no routes across a cut."""
        named = [{self.index(node) for node in group} for group in groups]
        rest = set(range(self.size)) - set().union(*named)
        if rest:
            named.append(rest)
        seen: set[int] = set()
        for group in named:
            if group & seen:
                raise ValueError("a node may be in one group only")
            seen |= group
        self._groups = named
        self._reach_changed()
        for i in range(self.size):
            self._apply_partition(i)
        await self.wait_meshed()
        self._after_failure()

    async def heal(self) -> None:
        """End the partition: every node may reach every other again; the cut routes are dialled at once."""
        self._groups = []
        self._reach_changed()
        running = [i for i in range(self.size) if i not in self._down]
        for i in running:
            self._routes(self.servers[i]).unblock()
        self._dial_missing(force=True)
        await self.wait_meshed()

    # -- leaf links ---------------------------------------------------------------------

    def drop_leafs(
        self, node: int | str | None = None, remote: str = "*", until_restored: bool = False
    ) -> dict[str, dict[str, Any]]:
        """Drop the leaf links of ``node`` (of every running node with leaf connections when None).

        Each node runs its ``drop_leafs`` control action (``remote`` a pattern of the other
        server's name; ``until_restored``: the links stay down until :meth:`restore_leafs`).
        Returns what each node dropped, by node name.
        """
        return {
            server.broker.name: server.control.drop_leafs(remote, until_restored) for server in self._leaf_nodes(node)
        }

    def restore_leafs(self, node: int | str | None = None) -> dict[str, dict[str, Any]]:
        """Let the links :meth:`drop_leafs` keeps down come up again, on ``node`` (every node when None)."""
        chosen = self.servers if node is None else [self.servers[self.index(node)]]
        return {
            server.broker.name: server.control.restore_leafs() for server in chosen if server.broker.leafs is not None
        }

    def _leaf_nodes(self, node: int | str | None) -> list[Server]:
        if node is not None:
            return [self.servers[self.index(node)]]  # a node without leaf connections says so
        chosen = [server for server in self.running if server.broker.leafs is not None]
        if not chosen:
            from fakejs.testkit.control import ControlError  # loaded with the controller, as a server loads it

            raise ControlError("no running node of this cluster has leaf connections (leafnodes { } is not configured)")
        return chosen

    def _apply_partition(self, i: int) -> None:
        routes = self._routes(self.servers[i])
        routes.unblock()
        for group in self._groups:
            if i not in group:
                routes.block(self.servers[j].broker.name for j in group)

    def _reach_changed(self) -> None:
        """A node went down or came up, or the cut changed: forget what :meth:`_reaches` answered, and let the
        exchange skip asking while every node reaches every other."""
        self._reach_cache.clear()
        if self._exchange is not None:
            self._exchange.reaches = self._reaches if self._down or self._groups else None

    def _reaches(self, sender: str, receiver: str) -> bool:
        """Whether the node ``sender`` reaches the node ``receiver`` (both running, on one side of any cut)."""
        reach = self._reach_cache.get(sender)
        if reach is None:
            reach = self._reach_cache[sender] = frozenset(self._reach(sender))
        return receiver in reach

    def _reach(self, name: str) -> set[str]:
        """The running nodes the running node ``name`` reaches, itself included (none when it is down)."""
        i = next((j for j, server in enumerate(self.servers) if server.broker.name == name), -1)
        if i < 0 or i in self._down:
            return set()
        return self._reachable(i) | {name}

    def _reachable(self, i: int) -> set[str]:
        """The names of the running nodes node ``i`` should be routed to."""
        group = next((g for g in self._groups if i in g), set(range(self.size)))
        return {self.servers[j].broker.name for j in group if j != i and j not in self._down}

    # -- waiting ------------------------------------------------------------------------------

    def meshed(self) -> bool:
        """Every running node routed to every node it may reach (and to no other), its pools full.

        The routes dedicated to pinned accounts (the system account's) are there too.
        """
        for i, server in enumerate(self.servers):
            if i in self._down:
                continue
            peers = self._routes(server).peers.values()
            if {peer.name for peer in peers} != self._reachable(i):
                return False
            if not all(peer.full for peer in peers):
                return False
            if any(self._routes(server).dedicated_missing(peer.server_id) for peer in peers):
                return False
        return True

    async def wait_meshed(self, timeout: float = MESH_TIMEOUT) -> None:
        """Wait (real time) until :meth:`meshed`; raises ``TimeoutError`` naming what is missing.

        A route whose dial failed is dialled again after a delay on the
        cluster's clock, which a manual clock never moves while this waits:
        every :data:`MESH_REDIAL_AFTER` seconds without a mesh, the missing
        routes are dialled at once.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        redial_at = loop.time() + MESH_REDIAL_AFTER
        while not self.meshed():
            now = loop.time()
            if now > deadline:
                raise TimeoutError(f"cluster not meshed within {timeout}s: {self.describe()}")
            if now > redial_at:
                self._dial_missing(force=False)
                redial_at = now + MESH_REDIAL_AFTER
            await asyncio.sleep(0.005)

    def _dial_missing(self, force: bool) -> None:
        """Dial every route missing between running nodes that may reach each other (the lower index dials)."""
        running = [i for i in range(self.size) if i not in self._down]
        for i in running:
            routes = self._routes(self.servers[i])
            known = {peer.name: peer.server_id for peer in routes.peers.values()}
            for j in running:
                other = self.servers[j]
                if j <= i or other.broker.name not in self._reachable(i):
                    continue
                url, name = self._route_url(other), other.broker.name
                if name in known:
                    accounts = routes.dedicated_missing(known[name])
                else:
                    routes.solicit(url, explicit=False, force=force)
                    accounts = list(routes.pinned)
                for account in accounts:  # the routes dedicated to pinned accounts (the system account's)
                    routes.solicit(url, explicit=False, force=force, account=account)

    def describe(self) -> str:
        """Each node's state and peers, for error messages."""
        parts = []
        for i, server in enumerate(self.servers):
            if i in self._down:
                parts.append(f"{server.broker.name}: down")
                continue
            peers = sorted(peer.name for peer in self._routes(server).peers.values())
            parts.append(f"{server.broker.name}: {', '.join(peers) or 'no routes'}")
        return "; ".join(parts)

    async def _sleep(self, seconds: float) -> None:
        await clock_sleep(self.clock, seconds)

    def __repr__(self) -> str:
        return f"<Cluster {self.name!r} {self.describe()}>"
