"""StreamConfig: its fields and its JSON, as nats-server 2.15 reads and writes them.

A config is a plain ``dict`` keyed by JSON field name, always holding every
field (Go's zero value where unset); :class:`StreamConfig` types it so that
key names and value types are checked.  The fields are declared once, as the
rows of :data:`STREAM_FIELDS` in Go's order, with the writers of the nested
parts (mirror, sources, republish...); the request schema, :data:`ZERO` and
the JSON form derive from them (a unit test keeps :class:`StreamConfig`'s
keys equal to the rows).  :func:`from_request` builds one
from a decoded request body, :func:`to_json` writes it back in Go's field
order with its ``omitempty`` rules.  Durations are integer nanoseconds.
The rules (defaults, validation, updates) are in
:mod:`fakejs.jetstream.config.stream_rules`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast

from fakejs.gocompat.gojson import Field, Struct
from fakejs.gocompat.gotime import parse_go_time
from fakejs.jetstream import enums
from fakejs.jetstream.config.fields import (
    OMIT,
    ConfigField,
    ConfigTable,
    TextForm,
    always,
    metadata_json,
    omitempty,
)

Retention = Literal["limits", "interest", "workqueue"]
Discard = Literal["old", "new"]
Storage = Literal["", "memory", "file"]  # "" until defaulted to "file"
Compression = Literal["none", "s2"]
PersistMode = Literal["default", "async"]


class ConsumerLimits(TypedDict, total=False):
    """``StreamConsumerLimits``: defaults and ceilings for the stream's consumers (ns, count)."""

    inactive_threshold: int
    max_ack_pending: int


class StreamConfig(TypedDict):
    """nats-server's ``StreamConfig``, every field present."""

    name: str
    description: str
    subjects: list[str]
    retention: Retention
    max_consumers: int
    max_msgs: int
    max_bytes: int
    max_age: int
    max_msgs_per_subject: int
    max_msg_size: int
    discard: Discard
    storage: Storage
    num_replicas: int
    no_ack: bool
    duplicate_window: int
    placement: dict[str, Any] | None
    mirror: dict[str, Any] | None
    sources: list[dict[str, Any]] | None
    compression: Compression
    first_seq: int
    subject_transform: dict[str, Any] | None
    republish: dict[str, Any] | None
    allow_direct: bool
    mirror_direct: bool
    discard_new_per_subject: bool
    sealed: bool
    deny_delete: bool
    deny_purge: bool
    allow_rollup_hdrs: bool
    consumer_limits: ConsumerLimits
    allow_msg_ttl: bool
    subject_delete_marker_ttl: int
    allow_msg_counter: bool
    allow_atomic: bool
    allow_msg_schedules: bool
    persist_mode: PersistMode
    allow_batched: bool
    metadata: dict[str, str] | None


PLACEMENT = Struct("Placement", (Field("cluster", "string"), Field("tags", "[]string"), Field("preferred", "string")))
SUBJECT_TRANSFORM = Struct("SubjectTransformConfig", (Field("src", "string"), Field("dest", "string")))
EXTERNAL = Struct("ExternalStream", (Field("api", "string"), Field("deliver", "string")))
SOURCE_CONSUMER = Struct("StreamConsumerSource", (Field("name", "string"), Field("deliver_subject", "string")))
STREAM_SOURCE = Struct(
    "StreamSource",
    (
        Field("name", "string"),
        Field("opt_start_seq", "uint64"),
        Field("opt_start_time", "time.Time"),
        Field("filter_subject", "string"),
        Field("subject_transforms", ("[]", SUBJECT_TRANSFORM)),
        Field("external", EXTERNAL),
        Field("consumer", SOURCE_CONSUMER),
    ),
)
REPUBLISH = Struct("RePublish", (Field("src", "string"), Field("dest", "string"), Field("headers_only", "bool")))
CONSUMER_LIMITS = Struct(
    "StreamConsumerLimits", (Field("inactive_threshold", "time.Duration"), Field("max_ack_pending", "int"))
)


def _omit(value: Any) -> bool:
    return value in (None, "", 0, False, [], {})


def _placement_json(placement: Mapping[str, Any] | None) -> Any:
    """``*Placement``: its non-empty members, left out when nil."""
    if placement is None:
        return OMIT
    return {k: v for k, v in placement.items() if not _omit(v)}


def transforms_json(transforms: list[Mapping[str, Any]]) -> list[dict[str, str]]:
    """``[]SubjectTransformConfig`` as nats-server writes it: both sides of each, even empty."""
    return [{"src": t.get("src", ""), "dest": t.get("dest", "")} for t in transforms]


def _source_json(src: Mapping[str, Any]) -> dict[str, Any]:
    """``StreamSource``: ``name`` always, ``external`` with both prefixes (even empty), transforms with both sides."""
    out: dict[str, Any] = {"name": src.get("name", "")}
    if src.get("opt_start_seq"):
        out["opt_start_seq"] = src["opt_start_seq"]
    start = src.get("opt_start_time")
    if start is not None:
        out["opt_start_time"] = start.text()
    if src.get("filter_subject"):
        out["filter_subject"] = src["filter_subject"]
    if src.get("subject_transforms"):
        out["subject_transforms"] = transforms_json(src["subject_transforms"])
    external = src.get("external")
    if external is not None:
        out["external"] = {"api": external.get("api", ""), "deliver": external.get("deliver", "")}
    consumer = src.get("consumer")
    if consumer is not None:
        out["consumer"] = {"name": consumer.get("name", ""), "deliver_subject": consumer.get("deliver_subject", "")}
    return out


def _mirror_json(mirror: Mapping[str, Any] | None) -> Any:
    """``Mirror`` (a ``*StreamSource``): left out when nil."""
    return OMIT if mirror is None else _source_json(mirror)


def _sources_json(sources: list[Mapping[str, Any]] | None) -> Any:
    """``Sources`` (``[]*StreamSource``): left out when empty."""
    return [_source_json(s) for s in sources] if sources else OMIT


def _transform_json(transform: Mapping[str, Any] | None) -> Any:
    """``*SubjectTransformConfig``: both sides, even empty; left out when nil."""
    if transform is None:
        return OMIT
    return {"src": transform.get("src", ""), "dest": transform.get("dest", "")}


def _republish_json(republish: Mapping[str, Any] | None) -> Any:
    """``*RePublish``: ``src`` and ``headers_only`` are omitempty, ``dest`` is always written; left out when nil."""
    if republish is None:
        return OMIT
    out: dict[str, Any] = {}
    if republish.get("src"):
        out["src"] = republish["src"]
    out["dest"] = republish.get("dest", "")
    if republish.get("headers_only"):
        out["headers_only"] = True
    return out


def _consumer_limits_json(limits: ConsumerLimits | None) -> ConsumerLimits:
    """``StreamConsumerLimits``: always written, its members omitempty, in Go's order."""
    limits = limits or {}
    shown: ConsumerLimits = {}
    if limits.get("inactive_threshold"):
        shown["inactive_threshold"] = limits["inactive_threshold"]
    if limits.get("max_ack_pending"):
        shown["max_ack_pending"] = limits["max_ack_pending"]
    return shown


def _persist_mode_json(mode: PersistMode) -> Any:
    """``PersistMode``: written only when ``async`` (the default is its Go zero value)."""
    return mode if mode == "async" else OMIT


def _time_as_text(src: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(src)
    if out.get("opt_start_time") is not None:
        out["opt_start_time"] = out["opt_start_time"].text()
    return out


def _time_from_text(src: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(src)
    if isinstance(out.get("opt_start_time"), str):
        out["opt_start_time"] = parse_go_time(out["opt_start_time"])
    return out


# The start time of a mirror, and of each source, as text in JSON files.
MIRROR_TEXT = TextForm(
    to_text=lambda mirror: None if mirror is None else _time_as_text(mirror),
    from_text=lambda mirror: None if mirror is None else _time_from_text(mirror),
)
SOURCES_TEXT = TextForm(
    to_text=lambda sources: [None if s is None else _time_as_text(s) for s in sources] if sources else sources,
    from_text=lambda sources: [None if s is None else _time_from_text(s) for s in sources] if sources else sources,
)


STREAM_FIELDS = ConfigTable(
    "StreamConfig",
    (
        ConfigField("name", "string", "", always),
        ConfigField("description", "string", "", omitempty),
        ConfigField("subjects", "[]string", [], omitempty),
        ConfigField("retention", "any", "limits", always, enums.retention),
        ConfigField("max_consumers", "int", 0, always),
        ConfigField("max_msgs", "int64", 0, always),
        ConfigField("max_bytes", "int64", 0, always),
        ConfigField("max_age", "time.Duration", 0, always),
        ConfigField("max_msgs_per_subject", "int64", 0, always),
        ConfigField("max_msg_size", "int32", 0, omitempty),
        ConfigField("discard", "any", "old", always, enums.discard),
        ConfigField("storage", "any", "", always, enums.storage),
        ConfigField("num_replicas", "int", 0, always),
        ConfigField("no_ack", "bool", False, omitempty),
        ConfigField("duplicate_window", "time.Duration", 0, omitempty),
        ConfigField("placement", PLACEMENT, None, _placement_json),
        ConfigField("mirror", STREAM_SOURCE, None, _mirror_json, stored=MIRROR_TEXT),
        ConfigField("sources", ("[]*", STREAM_SOURCE), None, _sources_json, stored=SOURCES_TEXT),
        ConfigField("compression", "any", "none", always, enums.compression),
        ConfigField("first_seq", "uint64", 0, omitempty),
        ConfigField("subject_transform", SUBJECT_TRANSFORM, None, _transform_json),
        ConfigField("republish", REPUBLISH, None, _republish_json),
        ConfigField("allow_direct", "bool", False, always),
        ConfigField("mirror_direct", "bool", False, always),
        ConfigField("discard_new_per_subject", "bool", False, omitempty),
        ConfigField("sealed", "bool", False, always),
        ConfigField("deny_delete", "bool", False, always),
        ConfigField("deny_purge", "bool", False, always),
        ConfigField("allow_rollup_hdrs", "bool", False, always),
        ConfigField("consumer_limits", CONSUMER_LIMITS, {}, _consumer_limits_json),
        ConfigField("allow_msg_ttl", "bool", False, always),
        ConfigField("subject_delete_marker_ttl", "time.Duration", 0, omitempty),
        ConfigField("allow_msg_counter", "bool", False, omitempty),
        ConfigField("allow_atomic", "bool", False, omitempty),
        ConfigField("allow_msg_schedules", "bool", False, omitempty),
        ConfigField("persist_mode", "any", "default", _persist_mode_json, enums.persist_mode),
        ConfigField("allow_batched", "bool", False, omitempty),
        ConfigField("metadata", "map[string]string", None, metadata_json),
    ),
)
STREAM_CONFIG = STREAM_FIELDS.struct
STREAM_CONFIG_REQUEST = STREAM_CONFIG.extend("StreamConfigRequest", Field("pedantic", "bool"))

# Go's zero values: what an absent field means.
ZERO: StreamConfig = cast(StreamConfig, STREAM_FIELDS.zero)

# Features fakejs does not implement yet: refused by name, never ignored.
UNSUPPORTED: tuple[tuple[str, Any], ...] = ()


def is_valid_name(name: str) -> bool:
    """nats-server's ``isValidAssetName`` for stream and consumer names (and the streams a stream sources)."""
    if not name:
        return False
    return not any(ch in name for ch in " \t\r\n\f.*>\\/")


def from_request(fields: Mapping[str, Any]) -> StreamConfig:
    """A full config from decoded request fields (absent fields at their zero value)."""
    # The request schema decoded every value to its field's type.
    return cast(StreamConfig, STREAM_FIELDS.from_request(fields))


def to_storable(cfg: StreamConfig) -> dict[str, Any]:
    """The config with the start times of its mirror and sources as text, for JSON files."""
    return STREAM_FIELDS.to_storable(cfg)


def from_storable(stored: Mapping[str, Any]) -> StreamConfig:
    """:func:`to_storable` read back."""
    return cast(StreamConfig, STREAM_FIELDS.from_storable(stored))


def to_json(cfg: StreamConfig, dynamic_metadata: bool = True) -> dict[str, Any]:
    """The config as nats-server marshals it (field order, omitempty, sorted metadata)."""
    return STREAM_FIELDS.to_json(cfg, dynamic_metadata)


def required_api_level(cfg: StreamConfig) -> int:
    """The API level a stream's features need (stored as ``_nats.req.level``)."""
    level = 0
    if cfg["allow_msg_ttl"] or cfg["subject_delete_marker_ttl"] > 0:
        level = max(level, 1)
    if cfg["allow_msg_counter"] or cfg["allow_atomic"] or cfg["allow_msg_schedules"] or cfg["persist_mode"] == "async":
        level = max(level, 2)
    if cfg["allow_batched"]:
        level = max(level, 4)
    return level


DYNAMIC_METADATA = ("_nats.ver", "_nats.level")


def set_static_metadata(cfg: StreamConfig) -> None:
    """Record the required API level in the stored metadata (``setStaticStreamMetadata``)."""
    metadata = dict(cfg["metadata"] or {})
    for key in DYNAMIC_METADATA:
        metadata.pop(key, None)
    metadata["_nats.req.level"] = str(required_api_level(cfg))
    cfg["metadata"] = metadata


def copy_static_metadata(cfg: StreamConfig, previous: StreamConfig) -> None:
    """On update, keep the stored required level of the existing stream (``copyStreamMetadata``)."""
    metadata = dict(cfg["metadata"] or {})
    for key in DYNAMIC_METADATA:
        metadata.pop(key, None)
    old = previous["metadata"] or {}
    if "_nats.req.level" in old:
        metadata["_nats.req.level"] = old["_nats.req.level"]
    else:
        metadata.pop("_nats.req.level", None)
    cfg["metadata"] = metadata or None
