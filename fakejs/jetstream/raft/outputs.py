"""What a node hands back after each input: a :class:`Ready`, and the types it is made of.

A driver acts on a ``Ready`` in this order:

1. ``writes``: apply them to the log storage, in order, and make them durable;
   then call ``node.persisted(ready.ticket)`` (at once for a synchronous store,
   later for an asynchronous one).  Messages that must not leave before those
   writes are durable (a granted vote, a follower's acknowledgement) are kept
   by the node and come out of that call, never before;
2. ``messages``: send each to its peer; they may be sent at once;
3. ``timers``: arm each (replacing the timer of the same kind), or cancel it
   when ``seconds`` is ``None``; when one fires, pass the same object back to
   ``node.timer_fired``;
4. ``restore`` then ``committed``: restore the state machine from the snapshot,
   then apply the entries in index order;
5. ``leader_change`` and ``outcome``: report them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from fakejs.jetstream.raft.entries import Entry, Snapshot
from fakejs.jetstream.raft.messages import Message


@dataclass(frozen=True, slots=True)
class SaveHardState:
    """Store the current term and the vote cast in it (nats-server's ``tav.idx``)."""

    term: int
    vote: str | None


@dataclass(frozen=True, slots=True)
class WriteEntries:
    """Drop every stored entry from ``first_index`` on, then append ``entries`` (which start there)."""

    first_index: int
    entries: tuple[Entry, ...]


@dataclass(frozen=True, slots=True)
class SaveSnapshot:
    """Store ``snapshot`` and drop the entries it covers: those up to its index, or every entry when the log's
    entry at its index has another term (see :func:`~fakejs.jetstream.raft.log.entries_after`)."""

    snapshot: Snapshot


Write = SaveHardState | WriteEntries | SaveSnapshot


@dataclass(frozen=True, slots=True)
class Envelope:
    """A message and the peer it goes to."""

    to: str
    message: Message


class TimerKind(enum.StrEnum):
    """The node's timers: one of each kind at most is armed (a ``StrEnum``: keyed in dicts at a string's cost)."""

    ELECTION = "election"
    HEARTBEAT = "heartbeat"
    QUORUM_CHECK = "quorum_check"
    TRANSFER = "transfer"
    LEASE = "lease"


@dataclass(frozen=True, slots=True)
class Timer:
    """Arm the ``kind`` timer to fire after ``seconds`` (``None``: cancel it); ``token`` tells a stale firing."""

    kind: TimerKind
    seconds: float | None
    token: int


@dataclass(frozen=True, slots=True)
class LeaderChange:
    """Who this node now knows as the group's leader (``None``: no leader), in ``term``."""

    leader: str | None
    term: int


@dataclass(frozen=True, slots=True)
class Accepted:
    """Proposed entries took indexes ``first_index``..``last_index`` in ``term``.  They are the ones committed at
    those indexes if committed in that term; committed in another term, they were lost (propose again)."""

    first_index: int
    last_index: int
    term: int


@dataclass(frozen=True, slots=True)
class NotLeader:
    """Only the leader takes this request; ``leader`` is the one this node knows of, if any."""

    leader: str | None


@dataclass(frozen=True, slots=True)
class Refused:
    """The leader cannot take this request now (a membership change under way, an unknown peer...)."""

    reason: str


Outcome = Accepted | NotLeader | Refused


@dataclass(slots=True)
class Ready:
    """Everything one input produced; see the module docstring for the order to act on it."""

    writes: list[Write] = field(default_factory=list)
    ticket: int | None = None
    messages: list[Envelope] = field(default_factory=list)
    timers: list[Timer] = field(default_factory=list)
    restore: Snapshot | None = None
    committed: list[Entry] = field(default_factory=list)
    leader_change: LeaderChange | None = None
    outcome: Outcome | None = None

    @property
    def empty(self) -> bool:
        return not (self.writes or self.messages or self.timers or self.committed) and (
            self.restore is None and self.leader_change is None and self.outcome is None
        )
