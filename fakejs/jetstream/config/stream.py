"""StreamConfig: its fields and its JSON, as nats-server 2.15 reads and writes them.

A config is a plain ``dict`` keyed by JSON field name, always holding every
field (Go's zero value where unset); :class:`StreamConfig` types it so that
key names and value types are checked.  :func:`from_request` builds one
from a decoded request body, :func:`to_json` writes it back in Go's field
order with its ``omitempty`` rules.  Durations are integer nanoseconds.
The rules (defaults, validation, updates) are in
:mod:`fakejs.jetstream.config.stream_rules`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast

from fakejs.core.options import API_LEVEL, NATS_VERSION
from fakejs.gocompat.gojson import Field, Struct
from fakejs.gocompat.gotime import parse_go_time
from fakejs.jetstream import enums

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

STREAM_CONFIG = Struct(
    "StreamConfig",
    (
        Field("name", "string"),
        Field("description", "string"),
        Field("subjects", "[]string"),
        Field("retention", "any", enums.retention),
        Field("max_consumers", "int"),
        Field("max_msgs", "int64"),
        Field("max_bytes", "int64"),
        Field("max_age", "time.Duration"),
        Field("max_msgs_per_subject", "int64"),
        Field("max_msg_size", "int32"),
        Field("discard", "any", enums.discard),
        Field("storage", "any", enums.storage),
        Field("num_replicas", "int"),
        Field("no_ack", "bool"),
        Field("duplicate_window", "time.Duration"),
        Field("placement", PLACEMENT),
        Field("mirror", STREAM_SOURCE),
        Field("sources", ("[]*", STREAM_SOURCE)),
        Field("compression", "any", enums.compression),
        Field("first_seq", "uint64"),
        Field("subject_transform", SUBJECT_TRANSFORM),
        Field("republish", REPUBLISH),
        Field("allow_direct", "bool"),
        Field("mirror_direct", "bool"),
        Field("discard_new_per_subject", "bool"),
        Field("sealed", "bool"),
        Field("deny_delete", "bool"),
        Field("deny_purge", "bool"),
        Field("allow_rollup_hdrs", "bool"),
        Field("consumer_limits", CONSUMER_LIMITS),
        Field("allow_msg_ttl", "bool"),
        Field("subject_delete_marker_ttl", "time.Duration"),
        Field("allow_msg_counter", "bool"),
        Field("allow_atomic", "bool"),
        Field("allow_msg_schedules", "bool"),
        Field("persist_mode", "any", enums.persist_mode),
        Field("allow_batched", "bool"),
        Field("metadata", "map[string]string"),
    ),
)
STREAM_CONFIG_REQUEST = STREAM_CONFIG.extend("StreamConfigRequest", Field("pedantic", "bool"))

# Go's zero values: what an absent field means.
ZERO: StreamConfig = {
    "name": "",
    "description": "",
    "subjects": [],
    "retention": "limits",
    "max_consumers": 0,
    "max_msgs": 0,
    "max_bytes": 0,
    "max_age": 0,
    "max_msgs_per_subject": 0,
    "max_msg_size": 0,
    "discard": "old",
    "storage": "",
    "num_replicas": 0,
    "no_ack": False,
    "duplicate_window": 0,
    "placement": None,
    "mirror": None,
    "sources": None,
    "compression": "none",
    "first_seq": 0,
    "subject_transform": None,
    "republish": None,
    "allow_direct": False,
    "mirror_direct": False,
    "discard_new_per_subject": False,
    "sealed": False,
    "deny_delete": False,
    "deny_purge": False,
    "allow_rollup_hdrs": False,
    "consumer_limits": {},
    "allow_msg_ttl": False,
    "subject_delete_marker_ttl": 0,
    "allow_msg_counter": False,
    "allow_atomic": False,
    "allow_msg_schedules": False,
    "persist_mode": "default",
    "allow_batched": False,
    "metadata": None,
}

# Features fakejs does not implement yet: refused by name, never ignored.
UNSUPPORTED: tuple[tuple[str, Any], ...] = ()


def is_valid_name(name: str) -> bool:
    """nats-server's ``isValidAssetName`` for stream and consumer names (and the streams a stream sources)."""
    if not name:
        return False
    return not any(ch in name for ch in " \t\r\n\f.*>\\/")


def from_request(fields: Mapping[str, Any]) -> StreamConfig:
    """A full config from decoded request fields (absent fields at their zero value)."""
    merged: dict[str, Any] = copy.deepcopy(dict(ZERO))
    for key, value in fields.items():
        if key in merged:
            merged[key] = value
    if merged["subjects"] is None:
        merged["subjects"] = []
    if merged["consumer_limits"] is None:
        merged["consumer_limits"] = {}
    # The request schema decoded every value to its field's type.
    return cast(StreamConfig, merged)


def to_storable(cfg: StreamConfig) -> dict[str, Any]:
    """The config with the start times of its mirror and sources as text, for JSON files."""
    out: dict[str, Any] = dict(cfg)
    if out["mirror"] is not None:
        out["mirror"] = _time_as_text(out["mirror"])
    if out["sources"]:
        out["sources"] = [None if src is None else _time_as_text(src) for src in out["sources"]]
    return out


def from_storable(stored: Mapping[str, Any]) -> StreamConfig:
    """:func:`to_storable` read back."""
    fields = dict(stored)
    if fields.get("mirror") is not None:
        fields["mirror"] = _time_from_text(fields["mirror"])
    if fields.get("sources"):
        fields["sources"] = [None if src is None else _time_from_text(src) for src in fields["sources"]]
    return from_request(fields)


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


def _omit(value: Any) -> bool:
    return value in (None, "", 0, False, [], {})


def _omitempty(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if not _omit(v)}


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


def to_json(cfg: StreamConfig, dynamic_metadata: bool = True) -> dict[str, Any]:
    """The config as nats-server marshals it (field order, omitempty, sorted metadata)."""
    out: dict[str, Any] = {"name": cfg["name"]}
    if cfg["description"]:
        out["description"] = cfg["description"]
    if cfg["subjects"]:
        out["subjects"] = list(cfg["subjects"])
    out["retention"] = cfg["retention"]
    out["max_consumers"] = cfg["max_consumers"]
    out["max_msgs"] = cfg["max_msgs"]
    out["max_bytes"] = cfg["max_bytes"]
    out["max_age"] = cfg["max_age"]
    out["max_msgs_per_subject"] = cfg["max_msgs_per_subject"]
    if cfg["max_msg_size"]:
        out["max_msg_size"] = cfg["max_msg_size"]
    out["discard"] = cfg["discard"]
    out["storage"] = cfg["storage"]
    out["num_replicas"] = cfg["num_replicas"]
    if cfg["no_ack"]:
        out["no_ack"] = True
    if cfg["duplicate_window"]:
        out["duplicate_window"] = cfg["duplicate_window"]
    _sources_json(cfg, out)
    out["allow_direct"] = cfg["allow_direct"]
    out["mirror_direct"] = cfg["mirror_direct"]
    if cfg["discard_new_per_subject"]:
        out["discard_new_per_subject"] = True
    out["sealed"] = cfg["sealed"]
    out["deny_delete"] = cfg["deny_delete"]
    out["deny_purge"] = cfg["deny_purge"]
    out["allow_rollup_hdrs"] = cfg["allow_rollup_hdrs"]
    _features_json(cfg, out)
    metadata = dict(cfg["metadata"] or {})
    if dynamic_metadata:
        metadata["_nats.ver"] = NATS_VERSION
        metadata["_nats.level"] = str(API_LEVEL)
    if metadata:
        out["metadata"] = {k: metadata[k] for k in sorted(metadata)}
    return out


def _sources_json(cfg: StreamConfig, out: dict[str, Any]) -> None:
    """Placement, mirror, sources, compression, first sequence, transform and republish."""
    if cfg["placement"] is not None:
        out["placement"] = _omitempty(cfg["placement"])
    if cfg["mirror"] is not None:
        out["mirror"] = _source_json(cfg["mirror"])
    if cfg["sources"]:
        out["sources"] = [_source_json(s) for s in cfg["sources"]]
    out["compression"] = cfg["compression"]
    if cfg["first_seq"]:
        out["first_seq"] = cfg["first_seq"]
    if cfg["subject_transform"] is not None:
        out["subject_transform"] = {
            "src": cfg["subject_transform"].get("src", ""),
            "dest": cfg["subject_transform"].get("dest", ""),
        }
    if cfg["republish"] is not None:
        out["republish"] = _republish_json(cfg["republish"])


def _republish_json(republish: Mapping[str, Any]) -> dict[str, Any]:
    """``RePublish``: ``src`` and ``headers_only`` are omitempty, ``dest`` is always written."""
    out: dict[str, Any] = {}
    if republish.get("src"):
        out["src"] = republish["src"]
    out["dest"] = republish.get("dest", "")
    if republish.get("headers_only"):
        out["headers_only"] = True
    return out


def _features_json(cfg: StreamConfig, out: dict[str, Any]) -> None:
    """Consumer limits, TTLs, counters, atomic batches, schedules and the persist mode."""
    limits = cfg["consumer_limits"] or {}
    shown: ConsumerLimits = {}
    if limits.get("inactive_threshold"):
        shown["inactive_threshold"] = limits["inactive_threshold"]
    if limits.get("max_ack_pending"):
        shown["max_ack_pending"] = limits["max_ack_pending"]
    out["consumer_limits"] = shown
    out["allow_msg_ttl"] = cfg["allow_msg_ttl"]
    if cfg["subject_delete_marker_ttl"]:
        out["subject_delete_marker_ttl"] = cfg["subject_delete_marker_ttl"]
    if cfg["allow_msg_counter"]:
        out["allow_msg_counter"] = True
    if cfg["allow_atomic"]:
        out["allow_atomic"] = True
    if cfg["allow_msg_schedules"]:
        out["allow_msg_schedules"] = True
    if cfg["persist_mode"] == "async":
        out["persist_mode"] = "async"
    if cfg["allow_batched"]:
        out["allow_batched"] = True
