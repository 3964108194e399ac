"""A clustered JetStream's meta group: its replicated state, its entries, its leader's requests, and placement.

What lives here: ``placement`` (nats-server's placement rules, the meta
leader's), ``assignments`` (the meta group's servers, stream and consumer
assignments and their groups), ``entries`` (the operations the leader
proposes, msgpack-encoded and versioned), ``state`` (:class:`MetaState`:
the entries applied, snapshots), ``machine`` (:class:`MetaStateMachine`: the
state a member of the ``_meta_`` group replicates into, and its observers)
and ``leader`` (:class:`MetaLeader`: requests checked, placed and proposed).

It sits in JetStream below ``service`` and above ``consumer``; it imports :mod:`fakejs.jetstream.replication` (the
group it proposes through), :mod:`fakejs.jetstream.raft` (entries),
:mod:`fakejs.jetstream.errors` (the API errors it refuses with), of
:mod:`fakejs.core` the clock and the log, :mod:`fakejs.gocompat`'s ids, and
msgpack.

The servers of a replicated JetStream run it
(:mod:`fakejs.jetstream.service.replicated`: servers started with JetStream
and routes, the nodes of ``fakejs.Cluster(jetstream=True)``, or servers
given ``ReplicatedJetStream`` by code).  docs/contributing/replication.md
tells what is left.
"""

from __future__ import annotations

from fakejs.jetstream.cluster.assignments import (
    ConsumerAssignment,
    MalformedEntry,
    MetaPeer,
    RaftGroup,
    StreamAssignment,
)
from fakejs.jetstream.cluster.entries import (
    ENTRY_VERSION,
    AddPeer,
    AssignConsumer,
    AssignStream,
    MetaEntry,
    MetaOp,
    RemoveConsumer,
    RemovePeer,
    RemoveStream,
    UpdateStream,
    decode_entry,
    encode_entry,
)
from fakejs.jetstream.cluster.leader import META_GROUP, MetaLeader
from fakejs.jetstream.cluster.machine import MetaCounters, MetaObserver, MetaStateMachine
from fakejs.jetstream.cluster.placement import (
    Candidate,
    PlacementError,
    group_name,
    new_group_id,
    place_consumer_replicas,
    place_stream_replicas,
    storage_letter,
)
from fakejs.jetstream.cluster.state import MetaState

__all__ = [
    "ENTRY_VERSION",
    "META_GROUP",
    "AddPeer",
    "AssignConsumer",
    "AssignStream",
    "Candidate",
    "ConsumerAssignment",
    "MalformedEntry",
    "MetaCounters",
    "MetaEntry",
    "MetaLeader",
    "MetaObserver",
    "MetaOp",
    "MetaPeer",
    "MetaState",
    "MetaStateMachine",
    "PlacementError",
    "RaftGroup",
    "RemoveConsumer",
    "RemovePeer",
    "RemoveStream",
    "StreamAssignment",
    "UpdateStream",
    "decode_entry",
    "encode_entry",
    "group_name",
    "new_group_id",
    "place_consumer_replicas",
    "place_stream_replicas",
    "storage_letter",
]
