"""Hook points in a cluster running a scenario: an event fires the faults of the node that handles it.

From its start every server of a cluster hooks through a
:class:`NodeHooks`: besides the server's own faults, it fires the
scenario's faults for the node handling the event and those for every
node.  The handling node is the one the event names as ``node`` (a
replicated JetStream's answering server), else the server whose hooks
fired: each node runs its share of the cluster's JetStream, so a
consumer's events (``pull.request``, ``consumer.deliver``,
``consumer.heartbeat``) fire on the node leading the consumer, as
nats-server's consumer leader holds the waiting pulls and sends the
messages.

The event's context gains ``node`` (the handling node's name), so an
action a step for every node runs acts on that node's server.
"""

from __future__ import annotations

from typing import Any

from fakejs.server.server import Server
from fakejs.testkit.faults import Faults, Hit

__all__ = ["NodeHooks", "ScenarioFaults"]


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


class NodeHooks:
    """One server's hooks while a cluster scenario runs (see the module docstring)."""

    def __init__(self, server: Server, faults: ScenarioFaults) -> None:
        self.own = server.faults
        self.name = server.broker.name
        self.faults = faults

    def __bool__(self) -> bool:
        return bool(self.own) or bool(self.faults)

    def fire(self, point: str, **context: Any) -> Hit | None:
        context["node"] = context.get("node") or self.name
        own = self.own.fire(point, **context) if self.own else None
        scenario = self.faults.fire(context["node"], point, context) if self.faults else None
        return own or scenario

    def settle(self) -> None:
        self.own.settle()
        self.faults.settle()
