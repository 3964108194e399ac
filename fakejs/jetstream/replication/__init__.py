"""Replicated groups across the servers of a cluster: the replicated log (:mod:`fakejs.jetstream.raft`) driven
over the routes.

What lives here: ``group`` (:class:`ReplicatedGroup`: one member of one
group on a server, acting on its node's output), ``hosting``
(:func:`start_group`: a member built from a server's broker), ``transport``
(the member's subscription in the system account and its publishes to peers),
``exchange`` (the wire of the servers of one process: each message handed
over at once),
``timers`` (the node's timers on the server's clock), ``stores`` (where a
member's log lives: a directory under the store directory, or memory),
``compaction`` (when a member snapshots its state machine and compacts its log),
``proposals`` (futures waiting for their entries to be applied),
``state_machine`` (:class:`StateMachine`, what a group replicates into),
``subjects`` (peer ids, the members' subjects), ``errors`` (why a
proposal failed) and ``entry_codec`` (the ``[version, operation, body]`` frame
the meta, stream and consumer entries share, and their bodies' checks).

The JetStream replicated across a cluster's servers runs its meta, stream and
consumer groups on it (:mod:`fakejs.jetstream.service.replicated`), in
processes and in an in-process cluster (``fakejs.Cluster(jetstream=True)``,
whose nodes speak over an in-process exchange).  It sits in JetStream below
``service``, ``consumer`` and ``stream`` (whose groups drive it) and above ``raft``, ``storage`` and ``config``; it imports
:mod:`fakejs.jetstream.raft`, of :mod:`fakejs.core` the router, the clock,
the options and the log, and :mod:`fakejs.gocompat`'s ids (peer ids).  docs/contributing/replication.md tells how a group
runs.
"""

from __future__ import annotations

from fakejs.jetstream.replication.compaction import (
    CONSUMER_COMPACTION,
    META_COMPACTION,
    STREAM_COMPACTION,
    Compaction,
)
from fakejs.jetstream.replication.errors import GroupStopped, NotLeader, ProposalFailed, ProposalLost, ProposalRefused
from fakejs.jetstream.replication.group import ReplicatedGroup
from fakejs.jetstream.replication.hosting import group_random, remove_group_log, start_group, system_router
from fakejs.jetstream.replication.state_machine import StateMachine
from fakejs.jetstream.replication.stores import group_directory
from fakejs.jetstream.replication.subjects import SUBJECT_PREFIX, InvalidGroupName, member_subject, peer_id
from fakejs.jetstream.replication.transport import TransportCounters

__all__ = [
    "CONSUMER_COMPACTION",
    "META_COMPACTION",
    "STREAM_COMPACTION",
    "SUBJECT_PREFIX",
    "Compaction",
    "GroupStopped",
    "InvalidGroupName",
    "NotLeader",
    "ProposalFailed",
    "ProposalLost",
    "ProposalRefused",
    "ReplicatedGroup",
    "StateMachine",
    "TransportCounters",
    "group_directory",
    "group_random",
    "member_subject",
    "peer_id",
    "remove_group_log",
    "start_group",
    "system_router",
]
