"""The settings of a JetStream replicated across the servers of a cluster.

Their own module: only a server given them, or one with JetStream in a cluster, reads them; a
plain start does not build the class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ReplicatedJetStream:
    """JetStream replicated across the servers of a cluster, each its own process or broker (fakejs's
    ``_meta_`` and stream groups over the routes).  Set by code; a server with JetStream and a cluster with
    routes (a configuration file or flags) runs ``ReplicatedJetStream()`` when it is not set
    (:func:`fakejs.core.cluster_checks.replicated_jetstream`).

    ``peers`` are the server names of the meta group's first voters (this server among them), or none: the
    server learns them from its routes, as a nats-server does (see
    :mod:`fakejs.jetstream.service.meta_membership`); ``raft`` the groups'
    :class:`~fakejs.jetstream.raft.RaftSettings` (``None``: nats-server's timings); ``exchange`` the
    :class:`~fakejs.jetstream.replication.exchange.LocalExchange` the servers of one process share to carry the
    groups' messages (``None``: the routes carry them); ``compaction`` when every group's log is compacted (a
    :class:`~fakejs.jetstream.replication.compaction.Compaction`; ``None``: nats-server's thresholds, by kind of
    group).
    """

    peers: tuple[str, ...] = ()
    raft: Any = None
    exchange: Any = None
    compaction: Any = None
