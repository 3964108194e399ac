"""ConsumerConfig: its fields and its JSON, as nats-server 2.15 reads and writes them.

Like :mod:`fakejs.jetstream.config.stream`, a config is a ``dict`` holding
every field (Go zero values where unset), typed by :class:`ConsumerConfig`.
:func:`from_request` builds one from decoded fields, :func:`to_json` writes
it in Go's field order, :func:`to_storable` / :func:`from_storable` carry it
through a JSON file.  Durations are integer nanoseconds, times
:class:`~fakejs.gocompat.gotime.GoTime` (``None`` when unset).  The rules
(defaults, validation, updates) are in :mod:`fakejs.jetstream.config.consumer_rules`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast

from fakejs.core.options import API_LEVEL, NATS_VERSION
from fakejs.gocompat import gotime
from fakejs.gocompat.gojson import Field, Struct
from fakejs.gocompat.gotime import GoTime
from fakejs.jetstream import enums

DeliverPolicy = Literal["all", "last", "last_per_subject", "new", "by_start_sequence", "by_start_time"]
AckPolicy = Literal["none", "all", "explicit", "flow_control"]
ReplayPolicy = Literal["instant", "original"]
PriorityPolicy = Literal["none", "overflow", "pinned_client", "prioritized"]

_GROUP_NAME = re.compile(r"^[a-zA-Z0-9/_=-]{1,16}$")


class ConsumerConfig(TypedDict):
    """nats-server's ``ConsumerConfig``, every field present."""

    durable_name: str
    name: str
    description: str
    deliver_policy: DeliverPolicy
    opt_start_seq: int
    opt_start_time: GoTime | None
    ack_policy: AckPolicy
    ack_wait: int
    max_deliver: int
    backoff: list[int]
    filter_subject: str
    filter_subjects: list[str]
    replay_policy: ReplayPolicy
    rate_limit_bps: int
    sample_freq: str
    max_waiting: int
    max_ack_pending: int
    flow_control: bool
    headers_only: bool
    max_batch: int
    max_expires: int
    max_bytes: int
    deliver_subject: str
    deliver_group: str
    idle_heartbeat: int
    inactive_threshold: int
    num_replicas: int
    mem_storage: bool
    direct: bool
    sourcing: bool
    metadata: dict[str, str] | None
    pause_until: GoTime | None
    priority_groups: list[str]
    priority_policy: PriorityPolicy
    priority_timeout: int


CONSUMER_CONFIG = Struct(
    "ConsumerConfig",
    (
        Field("durable_name", "string"),
        Field("name", "string"),
        Field("description", "string"),
        Field("deliver_policy", "any", enums.deliver_policy),
        Field("opt_start_seq", "uint64"),
        Field("opt_start_time", "time.Time"),
        Field("ack_policy", "any", enums.ack_policy),
        Field("ack_wait", "time.Duration"),
        Field("max_deliver", "int"),
        Field("backoff", "[]time.Duration"),
        Field("filter_subject", "string"),
        Field("filter_subjects", "[]string"),
        Field("replay_policy", "any", enums.replay_policy),
        Field("rate_limit_bps", "uint64"),
        Field("sample_freq", "string"),
        Field("max_waiting", "int"),
        Field("max_ack_pending", "int"),
        Field("flow_control", "bool"),
        Field("headers_only", "bool"),
        Field("max_batch", "int"),
        Field("max_expires", "time.Duration"),
        Field("max_bytes", "int"),
        Field("deliver_subject", "string"),
        Field("deliver_group", "string"),
        Field("idle_heartbeat", "time.Duration"),
        Field("inactive_threshold", "time.Duration"),
        Field("num_replicas", "int"),
        Field("mem_storage", "bool"),
        Field("direct", "bool"),
        Field("sourcing", "bool"),
        Field("metadata", "map[string]string"),
        Field("pause_until", "time.Time"),
        Field("priority_groups", "[]string"),
        Field("priority_policy", "any", enums.priority_policy),
        Field("priority_timeout", "time.Duration"),
    ),
)
CREATE_REQUEST = Struct(
    "CreateConsumerRequest",
    (
        Field("stream_name", "string"),
        Field("config", CONSUMER_CONFIG),
        Field("action", "any", enums.consumer_action),
        Field("pedantic", "bool"),
    ),
)

ZERO: ConsumerConfig = {
    "durable_name": "",
    "name": "",
    "description": "",
    "deliver_policy": "all",
    "opt_start_seq": 0,
    "opt_start_time": None,
    "ack_policy": "none",
    "ack_wait": 0,
    "max_deliver": 0,
    "backoff": [],
    "filter_subject": "",
    "filter_subjects": [],
    "replay_policy": "instant",
    "rate_limit_bps": 0,
    "sample_freq": "",
    "max_waiting": 0,
    "max_ack_pending": 0,
    "flow_control": False,
    "headers_only": False,
    "max_batch": 0,
    "max_expires": 0,
    "max_bytes": 0,
    "deliver_subject": "",
    "deliver_group": "",
    "idle_heartbeat": 0,
    "inactive_threshold": 0,
    "num_replicas": 0,
    "mem_storage": False,
    "direct": False,
    "sourcing": False,
    "metadata": None,
    "pause_until": None,
    "priority_groups": [],
    "priority_policy": "none",
    "priority_timeout": 0,
}

_TIMES = ("opt_start_time", "pause_until")


def from_request(fields: Mapping[str, Any] | None) -> ConsumerConfig:
    """A full config from decoded request fields (absent fields at their zero value)."""
    merged: dict[str, Any] = copy.deepcopy(dict(ZERO))
    for key, value in (fields or {}).items():
        if key in merged:
            merged[key] = value
    for key in ("backoff", "filter_subjects", "priority_groups"):
        if merged[key] is None:
            merged[key] = []
    # The request schema decoded every value to its field's type.
    return cast(ConsumerConfig, merged)


def is_valid_group_name(group: str) -> bool:
    return bool(_GROUP_NAME.match(group))


def filters(cfg: ConsumerConfig) -> list[str]:
    """``gatherSubjectFilters``: the filter subject plus filter subjects."""
    out = list(cfg["filter_subjects"] or [])
    if cfg["filter_subject"]:
        out.insert(0, cfg["filter_subject"])
    return out


def is_push(cfg: ConsumerConfig) -> bool:
    return bool(cfg["deliver_subject"])


def required_api_level(cfg: ConsumerConfig) -> int:
    level = 0
    if cfg["pause_until"] is not None and not cfg["pause_until"].is_zero:
        level = max(level, 1)
    if cfg["priority_policy"] != "none" or cfg["priority_timeout"] or cfg["priority_groups"]:
        level = max(level, 1)
    if cfg["ack_policy"] == "flow_control":
        level = max(level, 4)
    return level


def set_static_metadata(cfg: ConsumerConfig) -> None:
    """Record the required API level in the stored metadata (``setStaticConsumerMetadata``)."""
    metadata = dict(cfg["metadata"] or {})
    metadata.pop("_nats.ver", None)
    metadata.pop("_nats.level", None)
    metadata["_nats.req.level"] = str(required_api_level(cfg))
    cfg["metadata"] = metadata


def copy_static_metadata(cfg: ConsumerConfig, previous: ConsumerConfig) -> None:
    """Keep the stored required level of the existing consumer (``copyConsumerMetadata``)."""
    metadata = dict(cfg["metadata"] or {})
    metadata.pop("_nats.ver", None)
    metadata.pop("_nats.level", None)
    old = previous["metadata"] or {}
    if "_nats.req.level" in old:
        metadata["_nats.req.level"] = old["_nats.req.level"]
    else:
        metadata.pop("_nats.req.level", None)
    cfg["metadata"] = metadata or None


_ORDER = (
    "durable_name",
    "name",
    "description",
    "deliver_policy",
    "opt_start_seq",
    "opt_start_time",
    "ack_policy",
    "ack_wait",
    "max_deliver",
    "backoff",
    "filter_subject",
    "filter_subjects",
    "replay_policy",
    "rate_limit_bps",
    "sample_freq",
    "max_waiting",
    "max_ack_pending",
    "flow_control",
    "headers_only",
    "max_batch",
    "max_expires",
    "max_bytes",
    "deliver_subject",
    "deliver_group",
    "idle_heartbeat",
    "inactive_threshold",
    "num_replicas",
    "mem_storage",
    "direct",
    "sourcing",
    "metadata",
    "pause_until",
    "priority_groups",
    "priority_policy",
    "priority_timeout",
)
_ALWAYS = frozenset({"deliver_policy", "ack_policy", "replay_policy", "num_replicas"})


def to_storable(cfg: ConsumerConfig) -> dict[str, Any]:
    """The config with times as text, for JSON files."""
    out: dict[str, Any] = dict(cfg)
    for key in _TIMES:
        if out[key] is not None:
            out[key] = out[key].text()
    return out


def from_storable(stored: Mapping[str, Any]) -> ConsumerConfig:
    fields = dict(stored)
    for key in _TIMES:
        if isinstance(fields.get(key), str):
            fields[key] = gotime.parse_go_time(fields[key])
    return from_request(fields)


def to_json(cfg: ConsumerConfig, dynamic_metadata: bool = True) -> dict[str, Any]:
    """The config as nats-server marshals it (field order, omitempty, sorted metadata)."""
    values: Mapping[str, Any] = cfg
    out: dict[str, Any] = {}
    for key in _ORDER:
        value = values[key]
        if key == "metadata":
            metadata = dict(value or {})
            if dynamic_metadata:
                metadata["_nats.ver"] = NATS_VERSION
                metadata["_nats.level"] = str(API_LEVEL)
            if metadata:
                out["metadata"] = {k: metadata[k] for k in sorted(metadata)}
            continue
        if key in _TIMES:
            if value is not None:
                out[key] = value.text()
            continue
        if key == "priority_policy":
            if value != "none":
                out[key] = value
            continue
        if key in _ALWAYS or value not in ("", 0, False, None, [], {}):
            out[key] = list(value) if isinstance(value, list) else value
    return out
