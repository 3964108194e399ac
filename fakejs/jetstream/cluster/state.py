"""The meta group's state: its servers, stream assignments and consumer assignments, as the log built them.

:class:`MetaState` applies one entry at a time, the same way on every
member (so every member holds the same state after the same entries), and
makes and loads snapshots of the whole: ``MetaState.from_snapshot(state.snapshot())``
holds the same state and makes the same bytes again.

An entry that does not fit the state (a stream assigned twice, a stream
unknown) changes nothing; :meth:`MetaState.apply` says why.  Two proposals
for one name can both pass the leader's checks before either is applied; the
first applied wins, as in nats-server.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fakejs.jetstream.cluster.assignments import ConsumerAssignment, MalformedEntry, MetaPeer, StreamAssignment
from fakejs.jetstream.cluster.entries import (
    AddPeer,
    AssignConsumer,
    AssignStream,
    MetaEntry,
    RemoveConsumer,
    RemovePeer,
    RemoveStream,
    UpdateStream,
    pack,
    unpack,
)

__all__ = ["SNAPSHOT_VERSION", "ConsumerKey", "MetaState", "StreamKey"]

SNAPSHOT_VERSION = 1
StreamKey = tuple[str, str]  # account, stream
ConsumerKey = tuple[str, str, str]  # account, stream, consumer


class MetaState:
    """Every JetStream server of the meta group (by peer id) and every assignment (see the module docstring).

    ``consumers`` is read-only outside this class: the consumers are held by stream too, so that a stream's
    consumers (:meth:`consumers_of`, :meth:`consumer_count`) are found without walking every account's.
    """

    def __init__(self) -> None:
        self.peers: dict[str, MetaPeer] = {}
        self.streams: dict[StreamKey, StreamAssignment] = {}
        self.consumers: dict[ConsumerKey, ConsumerAssignment] = {}
        self._by_stream: dict[StreamKey, dict[str, ConsumerAssignment]] = {}  # the same consumers, by stream

    # -- reading -----------------------------------------------------------------------------------

    def stream(self, account: str, name: str) -> StreamAssignment | None:
        return self.streams.get((account, name))

    def consumer(self, account: str, stream: str, name: str) -> ConsumerAssignment | None:
        return self.consumers.get((account, stream, name))

    def consumers_of(self, account: str, stream: str) -> Iterator[ConsumerAssignment]:
        """The stream's consumers, in the order they were first assigned."""
        return iter(self._by_stream.get((account, stream), {}).values())

    def consumer_count(self, account: str, stream: str) -> int:
        """How many consumers the stream has (nats-server's ``len(sa.consumers)``)."""
        return len(self._by_stream.get((account, stream), ()))

    def active_peers(self) -> list[MetaPeer]:
        """The servers not removed, in the order they joined."""
        return [peer for peer in self.peers.values() if not peer.removed]

    def server_name(self, peer: str | None) -> str:
        """A peer id's server name (the id itself while its record is not here)."""
        record = self.peers.get(peer or "")
        return record.name if record is not None else (peer or "")

    def find_peer(self, server: str) -> MetaPeer | None:
        """The peer a server name or peer id names, if it is one of the meta group's."""
        peer = self.peers.get(server)
        if peer is not None:
            return peer
        return next((peer for peer in self.peers.values() if peer.name == server), None)

    # -- applying ----------------------------------------------------------------------------------

    def apply(self, entry: MetaEntry) -> str:
        """Apply ``entry``: "" once applied, else why it changed nothing."""
        match entry:
            case AddPeer(peer):
                self.peers[peer.peer] = peer
            case RemovePeer(peer_id):
                return self._remove_peer(peer_id)
            case AssignStream(assignment):
                return self._assign_stream(assignment)
            case UpdateStream(assignment):
                key = (assignment.account, assignment.name)
                if key not in self.streams:
                    return "stream not found"
                self.streams[key] = assignment
            case RemoveStream(account, name):
                return self._remove_stream(account, name)
            case AssignConsumer(assignment):
                if (assignment.account, assignment.stream) not in self.streams:
                    return "stream not found"
                self._put_consumer(assignment)
            case RemoveConsumer(account, stream, name):
                return self._remove_consumer(account, stream, name)
        return ""

    def _put_consumer(self, assignment: ConsumerAssignment) -> None:
        """Assign the consumer (again), in both the flat and the by-stream index."""
        self.consumers[(assignment.account, assignment.stream, assignment.name)] = assignment
        self._by_stream.setdefault((assignment.account, assignment.stream), {})[assignment.name] = assignment

    def _remove_consumer(self, account: str, stream: str, name: str) -> str:
        if self.consumers.pop((account, stream, name), None) is None:
            return "consumer not found"
        of_stream = self._by_stream[(account, stream)]
        del of_stream[name]
        if not of_stream:
            del self._by_stream[(account, stream)]
        return ""

    def _remove_peer(self, peer_id: str) -> str:
        peer = self.peers.get(peer_id)
        if peer is None or peer.removed:
            return "peer not a member"
        self.peers[peer_id] = MetaPeer(peer.name, peer.cluster, peer.tags, peer.offline, removed=True)
        return ""

    def _assign_stream(self, assignment: StreamAssignment) -> str:
        key = (assignment.account, assignment.name)
        if key in self.streams:
            return "stream name already in use"
        self.streams[key] = assignment
        return ""

    def _remove_stream(self, account: str, name: str) -> str:
        if self.streams.pop((account, name), None) is None:
            return "stream not found"
        for consumer in self._by_stream.pop((account, name), {}):
            del self.consumers[(account, name, consumer)]
        return ""

    # -- snapshots ---------------------------------------------------------------------------------

    def snapshot(self) -> bytes:
        """The whole state as msgpack: ``{"v": 1, "peers": [...], "streams": [...], "consumers": [...]}``."""
        document: dict[str, Any] = {
            "v": SNAPSHOT_VERSION,
            "peers": [peer.to_wire() for peer in self.peers.values()],
            "streams": [assignment.to_wire() for assignment in self.streams.values()],
            "consumers": [assignment.to_wire() for assignment in self.consumers.values()],
        }
        return pack(document)

    @classmethod
    def from_snapshot(cls, data: bytes) -> MetaState:
        """The state a snapshot holds (an empty one for empty bytes); raises :class:`MalformedEntry` (only)."""
        state = cls()
        if not data:
            return state
        document = unpack(data, "meta snapshot")
        if not isinstance(document, dict) or document.get("v") != SNAPSHOT_VERSION:
            raise MalformedEntry(f"meta snapshot: not a version {SNAPSHOT_VERSION} snapshot")
        for item in _items(document, "peers"):
            peer = MetaPeer.from_wire(item)
            _unique(state.peers, peer.peer, "peer")
            state.peers[peer.peer] = peer
        for item in _items(document, "streams"):
            stream = StreamAssignment.from_wire(item)
            _unique(state.streams, (stream.account, stream.name), "stream")
            state.streams[(stream.account, stream.name)] = stream
        for item in _items(document, "consumers"):
            consumer = ConsumerAssignment.from_wire(item)
            if (consumer.account, consumer.stream) not in state.streams:
                raise MalformedEntry(f"meta snapshot: consumer {consumer.name} of an unknown stream {consumer.stream}")
            _unique(state.consumers, (consumer.account, consumer.stream, consumer.name), "consumer")
            state._put_consumer(consumer)
        return state

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MetaState):
            return NotImplemented
        return (
            list(self.peers.items()) == list(other.peers.items())
            and list(self.streams.items()) == list(other.streams.items())
            and list(self.consumers.items()) == list(other.consumers.items())
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<MetaState peers={len(self.peers)} streams={len(self.streams)} consumers={len(self.consumers)}>"


def _items(document: dict[str, Any], key: str) -> list[Any]:
    items = document.get(key, [])
    if not isinstance(items, list):
        raise MalformedEntry(f"meta snapshot: {key} is not a list")
    return items


def _unique(held: dict[Any, Any], key: object, what: str) -> None:
    if key in held:
        raise MalformedEntry(f"meta snapshot: {what} {key} twice")
