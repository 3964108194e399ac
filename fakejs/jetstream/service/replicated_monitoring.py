"""``/jsz`` of a server in a JetStream replicated across servers: its ``meta_cluster`` and ``ha_assets``.

As nats-server's: ``meta_cluster`` names the cluster, the meta leader (and its
peer id), the other members as this server knows them (the meta leader hears
from each; a follower knows the leader current and the others not), the
group's size and quorum, the proposals not applied yet (``pending``), and the
entries and bytes of the meta log since its last snapshot (``snapshot``: the
meta log is not compacted here, so its ``last_time`` is Go's zero time);
``ha_assets`` counts the meta group and every stream and consumer group of
more than one server.  ``active`` is 0 and ``pending_requests`` and
``pending_infos`` are 0 (nothing here is queued that way).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakejs.gocompat import gotime

if TYPE_CHECKING:
    from fakejs.jetstream.service.replicated import ReplicatedJetStream

__all__ = ["ha_assets", "meta_cluster"]


def ha_assets(share: ReplicatedJetStream) -> int:
    """The meta group and every stream and consumer group of more than one server."""
    state = share.machine.state
    groups = [assignment.group for assignment in state.streams.values()]
    groups += [assignment.group for assignment in state.consumers.values()]
    return 1 + sum(1 for group in groups if len(group.peers) > 1)


def meta_cluster(share: ReplicatedJetStream) -> dict[str, Any] | None:
    """``meta_cluster`` as this server reports it (``None`` before its meta member runs)."""
    group = share.group
    if group is None:
        return None
    info: dict[str, Any] = {"name": share.cluster}
    if group.leader is not None:
        info["leader"] = share.server_name(group.leader)
        info["peer"] = group.leader
    leading = group.is_leader
    replicas = []
    for peer in sorted(group.members - {share.peer}, key=share.server_name):
        if leading:
            replicas.append(share.replica_of(group, peer, leading=True))
        else:
            replicas.append(
                {"name": share.server_name(peer), "current": peer == group.leader, "active": 0, "peer": peer}
            )
    info["replicas"] = replicas
    size = len(group.members)
    info["cluster_size"] = size
    info["quorum_needed"] = size // 2 + 1
    info["pending"] = group.pending
    info["pending_requests"] = 0
    info["pending_infos"] = 0
    log = group.node.log
    unsnapshotted = [entry for entry in log.entries if entry.index > log.snapshot.index]
    info["snapshot"] = {  # the meta log is not compacted here: no snapshot time to show
        "pending_entries": len(unsnapshotted),
        "pending_size": sum(len(entry.data) for entry in unsnapshotted),
        "last_time": gotime.ZERO_TIME,
    }
    return info
