"""Hook points in a cluster running a scenario: an event fires the faults of the node that handles it.

A cluster's shared JetStream fires its hook points (a pull arrived, a
delivery or an idle heartbeat is due, an API request arrived) on one
server's hooks, whichever node the event concerns (its consumers keep the
hooks they were made with).  So from its start every server of a cluster
hooks through a :class:`NodeHooks`: it works out
which node handles the event and fires, besides the server's own faults,
the scenario's faults for that node and those for every node:

* a consumer's events (``pull.request``, ``consumer.deliver``,
  ``consumer.heartbeat``): the node leading the consumer (nats-server's
  consumer leader holds the waiting pulls and sends the messages);
* anything else: the node the message being handled arrived on (an API
  request, a client's ``PING``; a replicated JetStream's answering server
  names it as ``node``), else the server whose hooks fired.

The event's context gains ``node`` (the handling node's name), so an
action a step for every node runs acts on that node's server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fakejs.server.server import Server
from fakejs.testkit.faults import Faults, Hit

if TYPE_CHECKING:
    from fakejs.server.cluster_jetstream import ClusterJetStream

__all__ = ["CONSUMER_POINTS", "NodeHooks", "ScenarioFaults", "handling_node"]

CONSUMER_POINTS = frozenset({"pull.request", "consumer.deliver", "consumer.heartbeat"})


class ScenarioFaults:
    """A cluster scenario's faults: one set per node (steps naming a node) and one for every node."""

    def __init__(self, per_node: dict[str, Faults], everywhere: Faults) -> None:
        self.per_node = per_node
        self.everywhere = everywhere

    def replace(self, per_node: dict[str, Faults], everywhere: Faults) -> None:
        """Another scenario's faults (the servers' hooks keep pointing here)."""
        self.clear()
        self.per_node = per_node
        self.everywhere = everywhere

    def __bool__(self) -> bool:
        return bool(self.everywhere) or any(self.per_node.values())

    def all(self) -> list[Faults]:
        return [*self.per_node.values(), self.everywhere]

    def fire(self, node: str, point: str, context: dict[str, Any]) -> Hit | None:
        """Fire the faults of ``node`` and those of every node; the first event change asked for."""
        hit: Hit | None = None
        for faults in (self.per_node.get(node), self.everywhere):
            if faults:
                found = faults.fire(point, **context)
                hit = hit or found
        return hit

    def settle(self) -> None:
        for faults in self.all():
            faults.settle()

    def clear(self) -> None:
        for faults in self.all():
            faults.clear()


def handling_node(shared: ClusterJetStream | None, servers: list[Server], point: str, context: dict[str, Any]) -> str:
    """The name of the node handling an event ("" when the cluster cannot tell)."""
    if shared is None:
        return ""
    jetstream = shared.jetstream
    if point in CONSUMER_POINTS and jetstream is not None and jetstream.clustered is not None:
        group = jetstream.clustered.consumer_group(str(context.get("stream", "")), str(context.get("consumer", "")))
        if group is not None and group.leader:
            return group.leader
    arrival = shared.router.arrival if shared.router is not None else None
    for server in servers:
        if arrival is not None and shared.account_of(server).router is arrival:
            return server.broker.name
    return ""


class NodeHooks:
    """One server's hooks while a cluster scenario runs (see the module docstring)."""

    def __init__(self, server: Server, faults: ScenarioFaults, locate: Callable[[str, dict[str, Any]], str]) -> None:
        self.own = server.faults
        self.name = server.broker.name
        self.faults = faults
        self.locate = locate

    def __bool__(self) -> bool:
        return bool(self.own) or bool(self.faults)

    def fire(self, point: str, **context: Any) -> Hit | None:
        context["node"] = self.locate(point, context) or context.get("node") or self.name
        own = self.own.fire(point, **context) if self.own else None
        scenario = self.faults.fire(context["node"], point, context) if self.faults else None
        return own or scenario

    def settle(self) -> None:
        self.own.settle()
        self.faults.settle()
