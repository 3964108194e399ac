"""The ``cluster`` section of a replicated stream's or consumer's info, as nats-server's leader fills it in.

``leader``, ``leader_since`` (on the leader), ``raft_group``, and the other
replicas sorted by name, each ``current`` when the leader knows it holds every
entry, else with its ``lag`` (entries behind), ``offline`` when its server shut
down; ``traffic_account`` names the system account the groups' traffic goes through; ``active`` the
nanoseconds since the replica last answered the leader (0 if never), and a replica unheard for longer than
nats-server's ``lostQuorumInterval`` is not current, whatever it holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakejs.gocompat import gotime

if TYPE_CHECKING:
    from fakejs.jetstream.cluster import MetaState
    from fakejs.jetstream.replication import ReplicatedGroup

__all__ = ["LOST_QUORUM_INTERVAL", "group_section", "replica_entry"]

LOST_QUORUM_INTERVAL = 10.0  # seconds: nats-server's lostQuorumInterval, beyond which an unheard replica is not current


def group_section(
    section: dict[str, Any],
    group: ReplicatedGroup,
    peers: tuple[str, ...],
    leader_since_ns: int,
    state: MetaState,
    traffic_account: str,
) -> dict[str, Any]:
    """``section`` (holding the cluster's name) filled in for ``group`` of ``peers``, whose traffic goes through
    ``traffic_account`` (the server's system account)."""
    leading = group.is_leader
    if len(peers) == 1:
        section["leader"] = state.server_name(group.leader)
        return section
    section["raft_group"] = group.name
    if group.leader is not None:
        section["leader"] = state.server_name(group.leader)
        if leading:
            section["leader_since"] = gotime.rfc3339(leader_since_ns)
    section["system_account"] = True
    section["traffic_account"] = traffic_account
    replicas = [replica_entry(group, peer, leading, state) for peer in peers if peer != group.leader]
    section["replicas"] = sorted(replicas, key=lambda replica: replica["name"])  # nats-server sorts them by name
    return section


def replica_entry(group: ReplicatedGroup, peer: str, leading: bool, state: MetaState) -> dict[str, Any]:
    """A replica's entry of a ``cluster`` section: current when this leader knows it holds every entry."""
    last = group.node.log.last_index
    progress = group.node.progress.get(peer) if leading else None
    lag = last - progress.match_index if progress is not None else 0
    heard = group.last_heard(peer) if leading else None
    current = progress is not None and lag <= 0 and (heard is None or heard <= LOST_QUORUM_INTERVAL)
    entry: dict[str, Any] = {"name": state.server_name(peer), "current": current}
    record = state.peers.get(peer)
    if record is not None and record.offline:
        entry["offline"] = True
    entry["active"] = 0 if heard is None else int(heard * 1_000_000_000)
    if not current and progress is not None:
        entry["lag"] = lag
    entry["peer"] = peer
    return entry
