"""What a replicated log holds: entries, the group's membership, and snapshots.

An :class:`Entry` is one position of the log: its index, the term of the
leader that wrote it, its kind and its bytes.  A ``PEER_STATE`` entry carries
a whole :class:`Membership` (nats-server's ``EntryPeerState``, also what its
``EntryAddPeer``/``EntryRemovePeer`` change): each new leader writes one as the
first entry of its term, and a membership change is one more.  The membership
in force is the one in the newest such entry of the log, committed or not.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

import msgpack

UNPACK_ERRORS = (ValueError, TypeError, msgpack.UnpackException)  # what msgpack raises for bytes it cannot read


class EntryKind(enum.IntEnum):
    """What an entry carries (nats-server's ``EntryType``): the state machine's bytes, or the group's peers."""

    NORMAL = 0
    PEER_STATE = 1


ENTRY_OVERHEAD = 16  # what an entry weighs in an append's byte budget beyond its data


@dataclass(frozen=True, slots=True)
class Entry:
    """One log position (nats-server's ``Entry`` inside an ``appendEntry``); ``index`` counts from 1."""

    index: int
    term: int
    kind: EntryKind
    data: bytes

    @property
    def size(self) -> int:
        """What the entry weighs in an append's byte budget."""
        return len(self.data) + ENTRY_OVERHEAD


class InvalidMembership(ValueError):
    """Bytes that do not decode as a membership."""


@dataclass(frozen=True, slots=True)
class Membership:
    """The peers of one group: ``voters`` elect and make quorums; ``observers`` (non-voting) only follow the log."""

    voters: frozenset[str]
    observers: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, voters: Iterable[str], observers: Iterable[str] = ()) -> Membership:
        voter_set = frozenset(voters)
        return cls(voter_set, frozenset(observers) - voter_set)

    @property
    def quorum(self) -> int:
        """Votes or stored copies that make a majority of the voters."""
        return len(self.voters) // 2 + 1

    @property
    def members(self) -> frozenset[str]:
        return self.voters | self.observers

    def with_voter(self, peer: str) -> Membership:
        return Membership(self.voters | {peer}, self.observers - {peer})

    def with_observer(self, peer: str) -> Membership:
        return Membership(self.voters - {peer}, self.observers | {peer})

    def without(self, peer: str) -> Membership:
        return Membership(self.voters - {peer}, self.observers - {peer})

    def encode(self) -> bytes:
        packed: bytes = msgpack.packb([sorted(self.voters), sorted(self.observers)], use_bin_type=True)
        return packed

    @classmethod
    def decode(cls, data: bytes) -> Membership:
        """The membership ``data`` holds; :class:`InvalidMembership` if it holds none."""
        try:
            value = msgpack.unpackb(data, raw=False, use_list=True)
        except UNPACK_ERRORS as error:
            raise InvalidMembership(f"membership does not unpack: {error}") from None
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(part, list) for part in value)):
            raise InvalidMembership("membership is not [voters, observers]")
        voters, observers = value
        if not all(isinstance(peer, str) and peer for peer in voters + observers):
            raise InvalidMembership("a peer id is not a non-empty string")
        return cls.of(voters, observers)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The state machine's state at ``index`` (made by it, or received from a leader), and the log position it
    replaces: the ``term`` of entry ``index`` and the membership in force there (``None`` before any was logged)."""

    index: int
    term: int
    membership: Membership | None
    data: bytes


EMPTY_SNAPSHOT = Snapshot(0, 0, None, b"")
