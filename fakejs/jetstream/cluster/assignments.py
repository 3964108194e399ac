"""What the meta group holds: its JetStream servers, and the streams and consumers assigned to groups of them.

The shapes follow nats-server's ``streamAssignment``, ``consumerAssignment``
and ``raftGroup``: an assignment carries the asset's configuration as the
JSON document the API stores, its group (name, peers, storage, cluster,
preferred leader), when it was created, and the client and reply subject of
the request it answers (the group's leader answers it once the asset runs).
Peers are named by nats-server's peer id, the 8-character hash of the
server's name.

Each class turns into a plain document (:meth:`to_wire`) that msgpack
encodes, and back (``from_wire``), checking every field: a document that
does not fit raises :class:`MalformedEntry` and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fakejs.gocompat import ids

__all__ = ["ConsumerAssignment", "MalformedEntry", "MetaPeer", "RaftGroup", "StreamAssignment"]

STORAGE_TYPES = ("file", "memory")


class MalformedEntry(ValueError):
    """Bytes or a document that is no meta entry or snapshot of this version."""


@dataclass(frozen=True)
class MetaPeer:
    """A JetStream server of the meta group: its name, cluster and tags, and whether it is offline or removed."""

    name: str
    cluster: str
    tags: tuple[str, ...] = ()
    offline: bool = False
    removed: bool = False

    @property
    def peer(self) -> str:
        """nats-server's peer id: the 8-character hash of the server name."""
        return ids.get_hash(self.name)

    def to_wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "cluster": self.cluster,
            "tags": list(self.tags),
            "offline": self.offline,
            "removed": self.removed,
        }

    @classmethod
    def from_wire(cls, document: object) -> MetaPeer:
        body = _mapping(document, "peer")
        return cls(
            name=_text(body, "name", "peer", required=True),
            cluster=_text(body, "cluster", "peer"),
            tags=_texts(body, "tags", "peer"),
            offline=_flag(body, "offline", "peer"),
            removed=_flag(body, "removed", "peer"),
        )


@dataclass(frozen=True)
class RaftGroup:
    """A stream's or consumer's group: its name (``S-R3F-...``), peers (peer ids), storage, cluster, preferred leader."""

    name: str
    peers: tuple[str, ...]
    storage: str = "file"
    cluster: str = ""
    preferred: str = ""

    def to_wire(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "peers": list(self.peers),
            "store": self.storage,
            "cluster": self.cluster,
            "preferred": self.preferred,
        }

    @classmethod
    def from_wire(cls, document: object) -> RaftGroup:
        body = _mapping(document, "group")
        storage = _text(body, "store", "group", required=True)
        if storage not in STORAGE_TYPES:
            raise MalformedEntry(f"group: storage {storage!r} is neither file nor memory")
        peers = _texts(body, "peers", "group")
        if not peers:
            raise MalformedEntry("group: no peers")
        return cls(
            name=_text(body, "name", "group", required=True),
            peers=peers,
            storage=storage,
            cluster=_text(body, "cluster", "group"),
            preferred=_text(body, "preferred", "group"),
        )


@dataclass(frozen=True)
class StreamAssignment:
    """A stream of ``account`` assigned to a group: its configuration (the API's JSON document) and request."""

    account: str
    config: dict[str, Any]
    group: RaftGroup
    created_ns: int = 0
    client: dict[str, Any] = field(default_factory=dict)  # the requester's ClientInfo, as JSON
    reply: str = ""  # where the leader answers the request
    subject: str = ""  # the request's subject (for its audit advisory)

    @property
    def name(self) -> str:
        return str(self.config["name"])

    def to_wire(self) -> dict[str, Any]:
        return {
            "account": self.account,
            "stream": self.config,
            "group": self.group.to_wire(),
            "created": self.created_ns,
            "client": self.client,
            "reply": self.reply,
            "subject": self.subject,
        }

    @classmethod
    def from_wire(cls, document: object) -> StreamAssignment:
        body = _mapping(document, "stream assignment")
        config = _json_document(body, "stream", "stream assignment")
        if not isinstance(config.get("name"), str) or not config["name"]:
            raise MalformedEntry("stream assignment: the configuration has no name")
        return cls(
            account=_text(body, "account", "stream assignment", required=True),
            config=config,
            group=RaftGroup.from_wire(body.get("group")),
            created_ns=_integer(body, "created", "stream assignment"),
            client=_json_document(body, "client", "stream assignment"),
            reply=_text(body, "reply", "stream assignment"),
            subject=_text(body, "subject", "stream assignment"),
        )


@dataclass(frozen=True)
class ConsumerAssignment:
    """A consumer ``name`` of a stream of ``account`` assigned to a group: its configuration and request."""

    account: str
    stream: str
    name: str
    config: dict[str, Any]
    group: RaftGroup
    created_ns: int = 0
    client: dict[str, Any] = field(default_factory=dict)
    reply: str = ""
    subject: str = ""

    def to_wire(self) -> dict[str, Any]:
        return {
            "account": self.account,
            "stream": self.stream,
            "name": self.name,
            "consumer": self.config,
            "group": self.group.to_wire(),
            "created": self.created_ns,
            "client": self.client,
            "reply": self.reply,
            "subject": self.subject,
        }

    @classmethod
    def from_wire(cls, document: object) -> ConsumerAssignment:
        where = "consumer assignment"
        body = _mapping(document, where)
        return cls(
            account=_text(body, "account", where, required=True),
            stream=_text(body, "stream", where, required=True),
            name=_text(body, "name", where, required=True),
            config=_json_document(body, "consumer", where),
            group=RaftGroup.from_wire(body.get("group")),
            created_ns=_integer(body, "created", where),
            client=_json_document(body, "client", where),
            reply=_text(body, "reply", where),
            subject=_text(body, "subject", where),
        )


# -- checking documents ------------------------------------------------------------------------------


def _mapping(document: object, where: str) -> Mapping[str, Any]:
    if not isinstance(document, dict):
        raise MalformedEntry(f"{where}: a map was expected, not {type(document).__name__}")
    return document


def _text(body: Mapping[str, Any], key: str, where: str, required: bool = False) -> str:
    value = body.get(key, "")
    if not isinstance(value, str):
        raise MalformedEntry(f"{where}: {key} is not a string")
    if required and not value:
        raise MalformedEntry(f"{where}: {key} is missing")
    return value


def _texts(body: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = body.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise MalformedEntry(f"{where}: {key} is not a list of strings")
    return tuple(value)


def _flag(body: Mapping[str, Any], key: str, where: str) -> bool:
    value = body.get(key, False)
    if not isinstance(value, bool):
        raise MalformedEntry(f"{where}: {key} is not a boolean")
    return value


def _integer(body: Mapping[str, Any], key: str, where: str) -> int:
    value = body.get(key, 0)
    if not isinstance(value, int) or isinstance(value, bool):
        raise MalformedEntry(f"{where}: {key} is not an integer")
    return value


def _json_document(body: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    value = body.get(key, {})
    if not isinstance(value, dict) or not _is_json(value):
        raise MalformedEntry(f"{where}: {key} is not a JSON object")
    return value


def _is_json(value: object, depth: int = 0) -> bool:
    """Whether ``value`` is what JSON decodes to (maps with string keys, lists, strings, numbers, booleans, null)."""
    if depth > 64:
        return False
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, list):
        return all(_is_json(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _is_json(item, depth + 1) for key, item in value.items())
    return False
