"""ConsumerConfig: its fields and its JSON, as nats-server 2.15 reads and writes them.

Like :mod:`fakejs.jetstream.config.stream`, a config is a ``dict`` holding
every field (Go zero values where unset), typed by :class:`ConsumerConfig`.
The fields are declared once, as the rows of :data:`CONSUMER_FIELDS` in Go's
order; the request schema, :data:`ZERO` and the JSON form derive from them
(:class:`ConsumerConfig` names the same keys for mypy, a unit test keeps the
two equal).  :func:`from_request` builds a config from decoded fields,
:func:`to_json` writes it in Go's field order, :func:`to_storable` /
:func:`from_storable` carry it through a JSON file.  Durations are integer nanoseconds, times
:class:`~fakejs.gocompat.gotime.GoTime` (``None`` when unset).  The rules
(defaults, validation, updates) are in :mod:`fakejs.jetstream.config.consumer_rules`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast

from fakejs.gocompat.gojson import Field, Struct
from fakejs.gocompat.gotime import GoTime
from fakejs.jetstream import enums
from fakejs.jetstream.config.fields import (
    ConfigField,
    ConfigTable,
    always,
    metadata_json,
    omitempty,
    omitted_when,
    time_text,
)

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


CONSUMER_FIELDS = ConfigTable(
    "ConsumerConfig",
    (
        ConfigField("durable_name", "string", "", omitempty),
        ConfigField("name", "string", "", omitempty),
        ConfigField("description", "string", "", omitempty),
        ConfigField("deliver_policy", "any", "all", always, enums.deliver_policy),
        ConfigField("opt_start_seq", "uint64", 0, omitempty),
        ConfigField("opt_start_time", "time.Time", None, time_text),
        ConfigField("ack_policy", "any", "none", always, enums.ack_policy),
        ConfigField("ack_wait", "time.Duration", 0, omitempty),
        ConfigField("max_deliver", "int", 0, omitempty),
        ConfigField("backoff", "[]time.Duration", [], omitempty),
        ConfigField("filter_subject", "string", "", omitempty),
        ConfigField("filter_subjects", "[]string", [], omitempty),
        ConfigField("replay_policy", "any", "instant", always, enums.replay_policy),
        ConfigField("rate_limit_bps", "uint64", 0, omitempty),
        ConfigField("sample_freq", "string", "", omitempty),
        ConfigField("max_waiting", "int", 0, omitempty),
        ConfigField("max_ack_pending", "int", 0, omitempty),
        ConfigField("flow_control", "bool", False, omitempty),
        ConfigField("headers_only", "bool", False, omitempty),
        ConfigField("max_batch", "int", 0, omitempty),
        ConfigField("max_expires", "time.Duration", 0, omitempty),
        ConfigField("max_bytes", "int", 0, omitempty),
        ConfigField("deliver_subject", "string", "", omitempty),
        ConfigField("deliver_group", "string", "", omitempty),
        ConfigField("idle_heartbeat", "time.Duration", 0, omitempty),
        ConfigField("inactive_threshold", "time.Duration", 0, omitempty),
        ConfigField("num_replicas", "int", 0, always),
        ConfigField("mem_storage", "bool", False, omitempty),
        ConfigField("direct", "bool", False, omitempty),
        ConfigField("sourcing", "bool", False, omitempty),
        ConfigField("metadata", "map[string]string", None, metadata_json),
        ConfigField("pause_until", "time.Time", None, time_text),
        ConfigField("priority_groups", "[]string", [], omitempty),
        ConfigField("priority_policy", "any", "none", omitted_when("none"), enums.priority_policy),
        ConfigField("priority_timeout", "time.Duration", 0, omitempty),
    ),
)
CONSUMER_CONFIG = CONSUMER_FIELDS.struct
CREATE_REQUEST = Struct(
    "CreateConsumerRequest",
    (
        Field("stream_name", "string"),
        Field("config", CONSUMER_CONFIG),
        Field("action", "any", enums.consumer_action),
        Field("pedantic", "bool"),
    ),
)

# Go's zero values: what an absent field means.
ZERO: ConsumerConfig = cast(ConsumerConfig, CONSUMER_FIELDS.zero)


def from_request(fields: Mapping[str, Any] | None) -> ConsumerConfig:
    """A full config from decoded request fields (absent fields at their zero value)."""
    # The request schema decoded every value to its field's type.
    return cast(ConsumerConfig, CONSUMER_FIELDS.from_request(fields))


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


def to_storable(cfg: ConsumerConfig) -> dict[str, Any]:
    """The config with times as text, for JSON files."""
    return CONSUMER_FIELDS.to_storable(cfg)


def from_storable(stored: Mapping[str, Any]) -> ConsumerConfig:
    """:func:`to_storable` read back."""
    return cast(ConsumerConfig, CONSUMER_FIELDS.from_storable(stored))


def to_json(cfg: ConsumerConfig, dynamic_metadata: bool = True) -> dict[str, Any]:
    """The config as nats-server marshals it (field order, omitempty, sorted metadata)."""
    return CONSUMER_FIELDS.to_json(cfg, dynamic_metadata)
