"""Scenarios on a cluster: setup through the cluster's JetStream, steps on cue on named nodes, cluster actions.

:meth:`fakejs.Cluster.start_scenario` (and ``fakejs --cluster_size N -js
--scenario NAME``) runs a scenario file (:mod:`fakejs.testkit.scenarios`)
on a cluster:

* its ``cluster = { size, jetstream }`` must match the cluster, and every
  node a step names (``node``, or in its ``args``) must be one of its nodes;
  its ``election`` sets the cluster's election window;
* the setup streams and consumers are created through the cluster's
  JetStream (through the first running node);
* a step with ``node = "n2"`` waits on that node: a hook-point step fires
  for the events that node handles (:mod:`fakejs.server.cluster_hooks`),
  a server action (``disconnect``, ``stall``...) runs on that node's server;
  a step without ``node`` waits on every node, a server action it runs acts
  on the node that handled the event, or, for a timed step, on every
  running node;
* the cluster actions: ``kill``, ``shutdown`` (``{node}``), ``restart``
  (``{node, down_for}``), ``partition`` (``{groups = [["n1"], ["n2",
  "n3"]]}``), ``heal``, ``step_down`` (``{stream, consumer?}``),
  ``move_leader`` (``{stream, node, consumer?}``, nothing to do when
  ``node`` leads already).  ``kill``, ``shutdown`` and ``restart`` take
  ``leader_of = { stream, consumer? }`` instead of ``node``: the node
  leading that stream or consumer when the step fires; without either they
  act on the step's ``node``, else on the node that handled the event;
* timed steps (``at``) run on the cluster's clock, counted from the start.

Starting another scenario replaces the one running; :meth:`ClusterScenarios.stop`
removes its faults.  :meth:`ClusterScenarios.attach` hooks every server
through the scenarios when the cluster starts, so a consumer made before
a scenario starts still fires its steps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from fakejs.core.clock import Clock
from fakejs.server.cluster_hooks import NodeHooks, ScenarioFaults
from fakejs.server.cluster_timeline import ClusterRecorder
from fakejs.server.server import Server
from fakejs.testkit.arguments import ACTION_NAMES
from fakejs.testkit.faults import CLUSTER_ACTION_NAMES, Faults
from fakejs.testkit.scenarios import Scenario, ScenarioError

if TYPE_CHECKING:
    from fakejs.server.cluster_replication import Elections

__all__ = ["ClusterHandle", "ClusterScenarios"]


class ClusterHandle(Protocol):
    """What running a scenario needs of a :class:`~fakejs.server.local_cluster.Cluster`."""

    servers: list[Server]
    elections: Elections | None  # a replicated JetStream's elections on cue
    clock: Clock
    recorder: ClusterRecorder  # the timeline of what the nodes share

    @property
    def running(self) -> list[Server]: ...

    def index(self, node: int | str | Server) -> int: ...

    async def kill(self, node: int | str, orderly: bool = False) -> None: ...

    async def restart(self, node: int | str, down_for: float = 0.0) -> None: ...

    async def partition(self, *groups: Iterable[int | str]) -> None: ...

    async def heal(self) -> None: ...

    def step_down(self, stream: str, consumer: str = "") -> str: ...

    def move_leader(self, stream: str, node: int | str, consumer: str = "") -> str: ...


class ClusterScenarios:
    """The scenario running on a cluster (see the module docstring)."""

    def __init__(self, cluster: ClusterHandle) -> None:
        self.cluster = cluster
        self.scenario: Scenario | None = None
        self.faults = ScenarioFaults({}, self._faults(""))
        self._tasks: set[asyncio.Task[Any]] = set()

    def attach(self) -> None:
        """Hook every server through a :class:`NodeHooks` (before anything captures its hooks: at start)."""
        for server in self.cluster.servers:
            server.broker.faults = NodeHooks(server, self.faults)

    @property
    def names(self) -> list[str]:
        return [server.broker.name for server in self.cluster.servers]

    # -- starting and stopping ------------------------------------------------------------------

    async def start(self, scenario: Scenario) -> dict[str, Any]:
        """Check the scenario against the cluster, create its setup, install its steps (on the cluster's loop)."""
        self._check(scenario)
        self.stop()
        if "election" in scenario.cluster and self.cluster.elections is not None:
            self.cluster.elections.election = float(scenario.cluster["election"])
        for subject, body, refused in scenario.setup_requests():
            refused(await self._api(subject, body))
        faults = self.faults
        faults.replace({name: self._faults(name) for name in self.names}, self._faults(""))
        installed = []
        for index, node in zip(range(len(scenario.steps)), scenario.nodes, strict=True):
            fault = (faults.per_node[node] if node else faults.everywhere).add(scenario.step_fault(index))
            installed.append({"id": fault.id, "node": node or "*"})
        self.scenario = scenario
        return {"scenario": scenario.name, "faults": installed}

    def stop(self) -> None:
        """Remove the running scenario's faults."""
        self.faults.clear()
        self.scenario = None

    def _check(self, scenario: Scenario) -> None:
        wanted = scenario.cluster
        size = len(self.cluster.servers)
        if "size" in wanted and wanted["size"] != size:
            raise ScenarioError(f"{scenario.source}: the scenario needs {wanted['size']} nodes, the cluster has {size}")
        has_jetstream = self.cluster.elections is not None
        if (wanted.get("jetstream") or "election" in wanted) and not has_jetstream:
            raise ScenarioError(f"{scenario.source}: the scenario needs the cluster's JetStream (jetstream=True, -js)")
        if (scenario.streams or scenario.consumers) and not has_jetstream:
            raise ScenarioError(f"{scenario.source}: setup streams need the cluster's JetStream (jetstream=True, -js)")
        for index, step in enumerate(scenario.steps):
            if step.do == "partition":
                groups = step.args.get("groups")
                if not isinstance(groups, list) or not all(isinstance(group, list) for group in groups):
                    raise ScenarioError(
                        f"{scenario.source}: steps[{index}]: 'partition' needs args.groups, lists of node names"
                    )
        scenario.check_nodes(self.names)

    async def _api(self, subject: str, body: Any = None) -> dict[str, Any]:
        running = self.cluster.running
        if not running:
            raise ScenarioError("no node of the cluster is running")
        return await running[0].control.api_answered(subject, body)

    def _faults(self, node: str) -> Faults:
        faults = Faults(self.cluster.clock)
        faults.actions = ACTION_NAMES | CLUSTER_ACTION_NAMES
        faults.run_action = lambda action, args, context: self.run(action, args, context, node)
        faults.soon = lambda callback, *args: asyncio.get_running_loop().call_soon(callback, *args)
        faults.record_error = self.cluster.servers[0].broker.record_error
        # A step for one node is recorded on its timeline; one for every node where the cluster records its own.
        faults.recorder = self.cluster.servers[self.cluster.index(node)].recorded if node else self.cluster.recorder
        return faults

    # -- running actions --------------------------------------------------------------------------

    def run(self, action: str, args: dict[str, Any], context: dict[str, Any], node: str = "") -> Any:
        """Run a step's action: a cluster action once, a server action on its node(s)."""
        cluster_action = CLUSTER_ACTIONS.get(action)
        if cluster_action is not None:
            try:
                return cluster_action(self, node or str(context.get("node", "")), **args)
            except TypeError as exc:
                raise ScenarioError(f"bad arguments for {action!r}: {exc}") from None
        if node:
            targets = [self.cluster.servers[self.cluster.index(node)]]
        elif "node" in context:
            targets = [self.cluster.servers[self.cluster.index(str(context["node"]))]]
        else:
            targets = list(self.cluster.running)
        return [server.control.run(action, args, context) for server in targets]

    def _spawn(self, action: str, coro: Coroutine[Any, Any, None]) -> dict[str, Any]:
        """Run a cluster action in the background (it waits for the nodes to mesh); a failure is recorded."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._finished(action, done))
        return {action: True}

    def _finished(self, action: str, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            assert error is not None
            self.cluster.servers[0].broker.record_error(f"cluster action {action!r}", error)

    def _target(self, default: str, node: str = "", leader_of: dict[str, str] | None = None) -> str:
        """The node an action names: ``node``, else the leader of ``leader_of``, else the step's (or event's)."""
        if node:
            return node
        if leader_of is not None:
            return self._leader(str(leader_of.get("stream", "")), str(leader_of.get("consumer", "")))
        if not default:
            raise ScenarioError("the action needs a node: give args.node, args.leader_of or the step's node")
        return default

    def _leader(self, stream: str, consumer: str = "") -> str:
        if self.cluster.elections is None:
            raise ScenarioError("leader_of needs the cluster's JetStream")
        # The replicated JetStream's module loads with the first cluster that runs one
        from fakejs.server.cluster_replication import leader_name

        leader = leader_name(self.cluster.running, stream, consumer)
        if not leader:
            raise ScenarioError(f"no leader for {stream!r}{' > ' + consumer if consumer else ''}")
        return leader

    def kill(self, default: str, node: str = "", leader_of: dict[str, str] | None = None) -> dict[str, Any]:
        return self._spawn("kill", self.cluster.kill(self._target(default, node, leader_of)))

    def shutdown(self, default: str, node: str = "", leader_of: dict[str, str] | None = None) -> dict[str, Any]:
        return self._spawn("shutdown", self.cluster.kill(self._target(default, node, leader_of), orderly=True))

    def restart(
        self, default: str, node: str = "", down_for: float = 0.0, leader_of: dict[str, str] | None = None
    ) -> dict[str, Any]:
        return self._spawn("restart", self.cluster.restart(self._target(default, node, leader_of), float(down_for)))

    def partition(self, default: str, groups: list[list[str]]) -> dict[str, Any]:
        return self._spawn("partition", self.cluster.partition(*groups))

    def heal(self, default: str) -> dict[str, Any]:
        return self._spawn("heal", self.cluster.heal())

    def step_down(self, default: str, stream: str, consumer: str = "") -> dict[str, Any]:
        return {"leader": self.cluster.step_down(stream, consumer)}

    def move_leader(self, default: str, stream: str, node: str, consumer: str = "") -> dict[str, Any]:
        if self._leader(stream, consumer) == node:
            return {"leader": node}
        return {"leader": self.cluster.move_leader(stream, node, consumer)}


CLUSTER_ACTIONS: dict[str, Callable[..., Any]] = {
    "kill": ClusterScenarios.kill,
    "shutdown": ClusterScenarios.shutdown,
    "restart": ClusterScenarios.restart,
    "partition": ClusterScenarios.partition,
    "heal": ClusterScenarios.heal,
    "step_down": ClusterScenarios.step_down,
    "move_leader": ClusterScenarios.move_leader,
}
