"""A replicated log (Raft), sans-IO: one member of one group takes inputs and returns what to do.

What lives here: ``node`` (:class:`RaftNode`, the public face: each input
method returns a :class:`Ready`), built in layers by role on ``core`` (state,
the step's output, timers), ``leading`` (proposals, replication, commit,
lost quorum, leader transfer, membership changes), ``following`` (appends and
snapshots from the leader) and ``electing`` (pre-vote and vote); ``progress``
(the leader's view of each follower), ``durability`` (tickets of writes under
way and the messages held behind them); ``entries`` (:class:`Entry`,
:class:`Membership`, :class:`Snapshot`), ``log`` (the log in memory),
``messages`` and ``codec`` (the peers' messages and their versioned msgpack
form), ``outputs`` (:class:`Ready` and what it holds), ``settings``
(:class:`RaftSettings`: nats-server's timings), ``storage`` (the
:class:`LogStorage` interface, :class:`MemoryStorage`) and ``directory``
(:class:`DirectoryStorage`, files that survive a crash).

Nothing here reads a clock, sleeps, or opens a socket; only the directory
store touches files, and only when its driver calls it.  The package sits at
the bottom of JetStream beside ``storage`` and ``config``, and imports only
the standard library and msgpack.  docs/contributing/replication.md tells how
a driver uses it.
"""

from __future__ import annotations

from fakejs.jetstream.raft.codec import WIRE_VERSION, MalformedMessage, decode, encode
from fakejs.jetstream.raft.core import RaftCounters, Role
from fakejs.jetstream.raft.directory import CorruptStorage, DirectoryStorage
from fakejs.jetstream.raft.entries import ENTRY_OVERHEAD, Entry, EntryKind, Membership, Snapshot
from fakejs.jetstream.raft.messages import (
    AppendEntries,
    AppendResponse,
    InstallSnapshot,
    Message,
    TimeoutNow,
    VoteRequest,
    VoteResponse,
)
from fakejs.jetstream.raft.node import RaftNode
from fakejs.jetstream.raft.outputs import (
    Accepted,
    Envelope,
    LeaderChange,
    NotLeader,
    Outcome,
    Ready,
    Refused,
    SaveHardState,
    SaveSnapshot,
    Timer,
    TimerKind,
    Write,
    WriteEntries,
)
from fakejs.jetstream.raft.settings import RaftSettings
from fakejs.jetstream.raft.storage import LogStorage, MemoryStorage, PersistentState

__all__ = [
    "ENTRY_OVERHEAD",
    "WIRE_VERSION",
    "Accepted",
    "AppendEntries",
    "AppendResponse",
    "CorruptStorage",
    "DirectoryStorage",
    "Entry",
    "EntryKind",
    "Envelope",
    "InstallSnapshot",
    "LeaderChange",
    "LogStorage",
    "MalformedMessage",
    "Membership",
    "MemoryStorage",
    "Message",
    "NotLeader",
    "Outcome",
    "PersistentState",
    "RaftCounters",
    "RaftNode",
    "RaftSettings",
    "Ready",
    "Refused",
    "Role",
    "SaveHardState",
    "SaveSnapshot",
    "Snapshot",
    "TimeoutNow",
    "Timer",
    "TimerKind",
    "VoteRequest",
    "VoteResponse",
    "Write",
    "WriteEntries",
    "decode",
    "encode",
]
