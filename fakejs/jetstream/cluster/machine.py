"""The meta group's state machine: entries applied to a :class:`~fakejs.jetstream.cluster.state.MetaState`,
and what changed for this server told to its observers.

:class:`MetaStateMachine` is what a server's member of the ``_meta_`` group
replicates into (it is a :class:`~fakejs.jetstream.replication.StateMachine`).
It never raises into the group: an entry that does not decode is counted and
recorded as a server error, and skipped, so that every member goes on with
the same state; an observer that raises is recorded and the others are
still told.

Observers (:class:`MetaObserver`) hear, in log order, what a server acts
on: a stream or consumer assigned to a group this server is in (new, or its
assignment changed), one removed (deleted, or this server left its group),
the meta group's servers changed, and the meta group's leader.  A snapshot
restored is told as the difference between the state before and after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fakejs.core.clock import ErrorSink
from fakejs.core.log import get_logger
from fakejs.jetstream.cluster.assignments import ConsumerAssignment, MalformedEntry, MetaPeer, StreamAssignment
from fakejs.jetstream.cluster.entries import decode_entry
from fakejs.jetstream.cluster.state import ConsumerKey, MetaState, StreamKey
from fakejs.jetstream.raft import Entry

__all__ = ["MetaCounters", "MetaObserver", "MetaStateMachine"]


class MetaObserver:
    """What a server hears from its meta member; every method does nothing unless overridden."""

    def stream_assigned(self, assignment: StreamAssignment) -> None:
        """A stream whose group includes this server: new, or its assignment changed."""

    def stream_removed(self, assignment: StreamAssignment) -> None:
        """A stream this server held: deleted, or this server is no longer in its group."""

    def consumer_assigned(self, assignment: ConsumerAssignment) -> None:
        """A consumer whose group includes this server: new, or its assignment changed."""

    def consumer_removed(self, assignment: ConsumerAssignment) -> None:
        """A consumer this server held: deleted (with its stream, or alone), or moved off this server."""

    def peers_changed(self, peers: Sequence[MetaPeer]) -> None:
        """The meta group's servers (all of them, removed ones included) after a change."""

    def leader_changed(self, leader: str | None, term: int) -> None:
        """The meta group's leader (a peer id, ``None``: none known), in ``term``."""


@dataclass
class MetaCounters:
    """Entries applied, skipped (they did not fit the state) and malformed (they did not decode)."""

    applied: int = 0
    skipped: int = 0
    malformed: int = 0


def _log_error(where: str, exc: BaseException) -> None:
    get_logger().error("%s failed", where, exc_info=exc)


class MetaStateMachine:
    """The meta state of the server whose peer id is ``local_peer`` (see the module docstring)."""

    def __init__(self, local_peer: str, record_error: ErrorSink | None = None) -> None:
        self.local_peer = local_peer
        self.state = MetaState()
        self.observers: list[MetaObserver] = []
        self.leader: str | None = None
        self.term = 0
        self.counters = MetaCounters()
        self.last_skipped = ""  # why the last entry that changed nothing was skipped
        self._record_error = record_error or _log_error

    def observe(self, observer: MetaObserver) -> MetaObserver:
        self.observers.append(observer)
        return observer

    def leader_name(self) -> str | None:
        """The meta leader's server name, if it is known and in the state."""
        peer = self.state.peers.get(self.leader or "")
        return None if peer is None else peer.name

    # -- the StateMachine interface -----------------------------------------------------------------

    def apply(self, entries: Sequence[Entry]) -> None:
        for entry in entries:
            try:
                decoded = decode_entry(entry.data)
            except MalformedEntry as exc:
                self.counters.malformed += 1
                self._record_error(f"meta group: entry {entry.index}", exc)
                continue
            before = self._mine()
            peers_before = list(self.state.peers.values())
            reason = self.state.apply(decoded)
            if reason:
                self.counters.skipped += 1
                self.last_skipped = reason
                continue
            self.counters.applied += 1
            self._tell_changes(before, peers_before)

    def snapshot(self) -> bytes:
        return self.state.snapshot()

    def restore(self, data: bytes) -> None:
        try:
            restored = MetaState.from_snapshot(data)
        except MalformedEntry as exc:
            self.counters.malformed += 1
            self._record_error("meta group: restoring a snapshot", exc)
            return
        before = self._mine()
        peers_before = list(self.state.peers.values())
        self.state = restored
        self._tell_changes(before, peers_before)

    def leader_changed(self, leader: str | None, term: int) -> None:
        self.leader, self.term = leader, term
        self._tell("leader_changed", leader, term)

    # -- telling observers ---------------------------------------------------------------------------

    def _mine(self) -> tuple[dict[StreamKey, StreamAssignment], dict[ConsumerKey, ConsumerAssignment]]:
        """The assignments whose groups include this server."""
        streams = {key: sa for key, sa in self.state.streams.items() if self.local_peer in sa.group.peers}
        consumers = {key: ca for key, ca in self.state.consumers.items() if self.local_peer in ca.group.peers}
        return streams, consumers

    def _tell_changes(
        self,
        before: tuple[dict[StreamKey, StreamAssignment], dict[ConsumerKey, ConsumerAssignment]],
        peers_before: list[MetaPeer],
    ) -> None:
        """Tell the observers how this server's assignments and the peers differ from ``before``."""
        streams_before, consumers_before = before
        streams_after, consumers_after = self._mine()
        for consumer_key, consumer in consumers_before.items():  # consumers go before their streams
            if consumer_key not in consumers_after:
                self._tell("consumer_removed", consumer)
        for stream_key, stream in streams_before.items():
            if stream_key not in streams_after:
                self._tell("stream_removed", stream)
        for stream_key, stream in streams_after.items():  # streams come before their consumers
            if streams_before.get(stream_key) != stream:
                self._tell("stream_assigned", stream)
        for consumer_key, consumer in consumers_after.items():
            if consumers_before.get(consumer_key) != consumer:
                self._tell("consumer_assigned", consumer)
        peers = list(self.state.peers.values())
        if peers != peers_before:
            self._tell("peers_changed", peers)

    def _tell(self, method: str, *args: object) -> None:
        """Call ``method`` of every observer with ``args``; what one raises is recorded and the others are told."""
        for observer in list(self.observers):
            try:
                getattr(observer, method)(*args)
            except Exception as exc:  # noqa: BLE001 - recorded on the server; the others are still told
                self._record_error(f"meta group: observer {method}", exc)
