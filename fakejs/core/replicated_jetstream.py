"""The settings of a JetStream replicated across the servers of a cluster (set by code only).

Their own module: only a server given them (tests, an in-process cluster) reads them; a plain
start does not build the class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ReplicatedJetStream:
    """JetStream replicated across the servers of a cluster, each its own process or broker (fakejs's
    ``_meta_`` and stream groups over the routes).  Set only by code (tests): no configuration file or flag
    reaches it, and without it a JetStream cluster across processes is refused at start.

    ``peers`` are the server names of the meta group's first voters (this server among them), or none: the
    server learns them from its routes, as a nats-server does (see
    :mod:`fakejs.jetstream.service.meta_membership`); ``raft`` the groups'
    :class:`~fakejs.jetstream.raft.RaftSettings` (``None``: nats-server's timings).
    """

    peers: tuple[str, ...] = ()
    raft: Any = None
