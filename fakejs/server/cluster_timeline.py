"""One timeline for the servers of an in-process cluster: each node records its own, the cluster merges them.

Every node keeps its own timeline (its clients, its faults, the clock, its
share of the cluster's JetStream).  A JetStream node names the server of a
client of another one (``client_node``; its ``client`` is 0 or none, that
server's ids are not known here).  What belongs to no node -- a cluster
scenario's step for every node -- records through a
:class:`ClusterRecorder`, on the meta leader's timeline (else the first
running node's).

The nodes share one clock and number their events from one count
(:meth:`~fakejs.testkit.timeline.Timeline.number_with`), so :func:`merged`
orders the events of every node by server time, then by the order they were
recorded in, each with its ``node`` (the server's name).  A clock advance,
which every running node records, is kept once, without a node.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fakejs.core.recorder import EVENT_KINDS
from fakejs.server.server import Server
from fakejs.testkit.timeline import Timeline, TimelineFilter

__all__ = ["ClusterRecorder", "document", "merged"]


class ClusterRecorder:
    """The recorder of what belongs to no node: ``fallback`` names the node that records it (the meta leader,
    a running node)."""

    def __init__(self, servers: Sequence[Server], fallback: Callable[[], str]) -> None:
        self._timelines: dict[str, Timeline] = {server.broker.name: server.recorded for server in servers}
        self._on = any(self._timelines.values())
        self._first = servers[0].broker.name
        self.fallback = fallback

    def __bool__(self) -> bool:
        return self._on

    def record(self, kind: str, **fields: Any) -> None:
        node = self.fallback() or self._first
        timeline = self._timelines.get(node)
        if timeline is not None:
            timeline.record(kind, **fields)

    def record_values(self, kind: str, values: tuple[Any, ...]) -> None:
        self.record(kind, **dict(zip(EVENT_KINDS[kind][1], values)))  # named: the node is chosen by them


def merged(servers: Sequence[Server], where: TimelineFilter, node: str | None = None) -> list[dict[str, Any]]:
    """The events of every node (or of ``node``) that ``where`` keeps, oldest first, each with its ``node``."""
    chosen = [server for server in servers if node is None or server.broker.name == node]
    every = [_with_node(event, server.broker.name) for server in chosen for event in server.recorded.events(where)]
    events: list[dict[str, Any]] = []
    advanced: tuple[int, Any] | None = None  # the clock advance being kept, and the nodes that recorded it
    recorded_by: set[str] = set()
    for event in sorted(every, key=lambda event: (event["time_ns"], event["index"])):
        if event["kind"] == "clock.advance":
            moment, by = (event["time_ns"], event["seconds"]), event.pop("node")  # the clock is the cluster's
            if moment == advanced and by not in recorded_by and events[-1]["kind"] == "clock.advance":
                recorded_by.add(by)  # another node's record of the same advance
                continue
            advanced, recorded_by = moment, {by}
        events.append(event)
    return events


def _with_node(event: dict[str, Any], node: str) -> dict[str, Any]:
    """An event with its node, and with a client the node that client is connected to (its own unless it says)."""
    if event.get("client") is not None and "client_node" not in event:
        return {**event, "node": node, "client_node": node}
    return {**event, "node": node}


def document(servers: Sequence[Server], where: TimelineFilter, node: str | None = None) -> dict[str, Any]:
    """The merged events with the size of the nodes' rings together and how many they let go of."""
    return {
        "size": sum(server.recorded.size for server in servers),
        "dropped": sum(server.recorded.dropped for server in servers),
        "events": merged(servers, where, node),
    }
