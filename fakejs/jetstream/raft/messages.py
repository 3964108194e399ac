"""The messages members of a group exchange; each names its ``sender`` and the sender's ``term``.

Elections use :class:`VoteRequest` and :class:`VoteResponse` (with ``pre_vote``
set for the pre-vote round that precedes a real one); the leader replicates
with :class:`AppendEntries` (empty ones are heartbeats) and
:class:`InstallSnapshot`, followers answer both with :class:`AppendResponse`;
:class:`TimeoutNow` hands leadership to a chosen follower.
"""

from __future__ import annotations

from dataclasses import dataclass

from fakejs.jetstream.raft.entries import Entry, Snapshot


@dataclass(frozen=True, slots=True)
class VoteRequest:
    """A candidate asking for a vote (nats-server's ``voteRequest``); in a pre-vote, ``term`` is the term it
    would campaign in, and nothing changes on the receiver; ``transfer`` marks a campaign a leader asked for."""

    sender: str
    term: int
    last_index: int
    last_term: int
    pre_vote: bool = False
    transfer: bool = False


@dataclass(frozen=True, slots=True)
class VoteResponse:
    """A vote granted or refused (nats-server's ``voteResponse``); ``term`` is the voter's, or the proposed one
    when a pre-vote is granted."""

    sender: str
    term: int
    granted: bool
    pre_vote: bool = False


@dataclass(frozen=True, slots=True)
class AppendEntries:
    """Entries after ``prev_index`` (of term ``prev_term``) and the leader's commit index (nats-server's
    ``appendEntry``); with no entries, a heartbeat."""

    sender: str
    term: int
    prev_index: int
    prev_term: int
    commit: int
    entries: tuple[Entry, ...] = ()


@dataclass(frozen=True, slots=True)
class AppendResponse:
    """A follower's answer to an append or a snapshot (nats-server's ``appendEntryResponse``): on success its log
    matches the leader's up to ``match_index``; on refusal ``match_index`` is where the leader should look
    next and ``rejected_prev`` the ``prev_index`` refused."""

    sender: str
    term: int
    success: bool
    match_index: int
    rejected_prev: int = 0


@dataclass(frozen=True, slots=True)
class InstallSnapshot:
    """The leader's snapshot, for a follower that needs entries the leader no longer keeps (nats-server sends an
    ``EntrySnapshot`` in an ``appendEntry``)."""

    sender: str
    term: int
    snapshot: Snapshot


@dataclass(frozen=True, slots=True)
class TimeoutNow:
    """The leader asking an up-to-date follower to campaign at once (nats-server's ``EntryLeaderTransfer``)."""

    sender: str
    term: int


Message = VoteRequest | VoteResponse | AppendEntries | AppendResponse | InstallSnapshot | TimeoutNow
