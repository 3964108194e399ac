"""ConsumerConfig: JSON fields, defaults, validation and update rules (nats-server 2.15).

Like :mod:`fakejs.jetstream.config.stream`, a config is a ``dict`` holding
every field (Go zero values where unset).  :func:`apply_defaults` is
``setConsumerConfigDefaults``, :func:`check` is ``checkConsumerCfg``,
:func:`check_update` is ``checkNewConsumerConfig``, :func:`to_json` writes
the config in Go's field order.  Durations are integer nanoseconds, times
Unix nanoseconds (``None`` when unset).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from fakejs.core.options import API_LEVEL, NATS_VERSION
from fakejs.core.subjects import has_wildcard, is_subset, is_valid_subject, matches
from fakejs.gocompat import gotime
from fakejs.gocompat.gojson import Field, Struct
from fakejs.jetstream import enums
from fakejs.jetstream.config.stream import MAX_DESCRIPTION_LEN, MAX_METADATA_LEN, is_valid_name
from fakejs.jetstream.errors import ApiError, api_error

MS = 1_000_000
SECOND = 1_000_000_000
DEFAULT_ACK_WAIT = 30 * SECOND
DEFAULT_MAX_ACK_PENDING = 1000
DEFAULT_MAX_WAITING = 512
DEFAULT_PINNED_TTL = 120 * SECOND
SOURCE_HEALTH_HEARTBEAT = SECOND
_GROUP_NAME = re.compile(r"^[a-zA-Z0-9/_=-]{1,16}$")

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

ZERO: dict[str, Any] = {
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


def from_request(fields: dict[str, Any]) -> dict[str, Any]:
    cfg = copy.deepcopy(ZERO)
    for key, value in (fields or {}).items():
        if key in cfg:
            cfg[key] = value
    for key in ("backoff", "filter_subjects", "priority_groups"):
        if cfg[key] is None:
            cfg[key] = []
    return cfg


def is_valid_group_name(group: str) -> bool:
    return bool(_GROUP_NAME.match(group))


def filters(cfg: dict[str, Any]) -> list[str]:
    """``gatherSubjectFilters``: the filter subject plus filter subjects."""
    out = list(cfg["filter_subjects"] or [])
    if cfg["filter_subject"]:
        out.insert(0, cfg["filter_subject"])
    return out


def is_push(cfg: dict[str, Any]) -> bool:
    return bool(cfg["deliver_subject"])


def _pedantic(text: str) -> ApiError:
    return api_error("JSPedanticErrF", err=text)


def _invalid(text: str) -> ApiError:
    return api_error("JSStreamInvalidConfigF", err=text)


def apply_defaults(cfg: dict[str, Any], stream_cfg: dict[str, Any], pedantic: bool = False) -> None:
    """Fill in what the server decides when the client leaves it out."""
    if cfg["max_deliver"] == 0 or cfg["max_deliver"] < -1:
        if pedantic and cfg["max_deliver"] < -1:
            raise _pedantic("max_deliver must be set to -1")
        cfg["max_deliver"] = -1
    for key, name in (("max_waiting", "max_waiting must not be negative"),):
        if cfg[key] < 0:
            if pedantic:
                raise _pedantic(name)
            cfg[key] = 0
    if cfg["max_ack_pending"] < -1:
        if pedantic:
            raise _pedantic("max_ack_pending must be set to -1")
        cfg["max_ack_pending"] = -1
    for key, text in (
        ("max_batch", "max_batch must not be negative"),
        ("max_expires", "max_expires must not be negative"),
        ("max_bytes", "max_bytes must not be negative"),
        ("idle_heartbeat", "idle_heartbeat must not be negative"),
        ("inactive_threshold", "inactive_threshold must not be negative"),
        ("priority_timeout", "priority_timeout must not be negative"),
    ):
        if cfg[key] < 0:
            if pedantic:
                raise _pedantic(text)
            cfg[key] = 0
    if not cfg["deliver_subject"] and cfg["max_waiting"] == 0:
        cfg["max_waiting"] = DEFAULT_MAX_WAITING
    if cfg["ack_wait"] == 0 and cfg["ack_policy"] in ("explicit", "all"):
        cfg["ack_wait"] = DEFAULT_ACK_WAIT
    if cfg["backoff"]:
        if pedantic and cfg["ack_wait"] != cfg["backoff"][0]:
            raise _pedantic("first backoff value has to equal batch AckWait")
        cfg["ack_wait"] = cfg["backoff"][0]
    limits = stream_cfg.get("consumer_limits") or {}
    if cfg["max_ack_pending"] == 0:
        if pedantic and limits.get("max_ack_pending", 0) > 0:
            raise _pedantic("max_ack_pending must be set if it's configured in stream limits")
        cfg["max_ack_pending"] = limits.get("max_ack_pending", 0)
    if cfg["inactive_threshold"] == 0:
        if pedantic and limits.get("inactive_threshold", 0) > 0:
            raise _pedantic("inactive_threshold must be set if it's configured in stream limits")
        cfg["inactive_threshold"] = limits.get("inactive_threshold", 0)
    if cfg["max_ack_pending"] == 0 and cfg["ack_policy"] != "none":
        cfg["max_ack_pending"] = DEFAULT_MAX_ACK_PENDING
    if cfg["priority_policy"] == "pinned_client" and cfg["priority_timeout"] == 0:
        cfg["priority_timeout"] = DEFAULT_PINNED_TTL
    if cfg["ack_policy"] == "flow_control" and not pedantic:
        cfg["flow_control"] = True
        cfg["idle_heartbeat"] = SOURCE_HEALTH_HEARTBEAT


def _delivery_forms_cycle(stream_cfg: dict[str, Any], subject: str) -> bool:
    for stream_subject in stream_cfg["subjects"] or []:
        if matches(stream_subject, subject):
            return True
    return False


def check(cfg: dict[str, Any], stream_cfg: dict[str, Any]) -> None:
    """``checkConsumerCfg``: raises :class:`ApiError` for the first violated rule."""
    if cfg["name"] and not is_valid_name(cfg["name"]):
        raise _invalid("consumer name can not contain '.', '*', '>', '\\', '/'")
    if cfg["durable_name"] and not is_valid_name(cfg["durable_name"]):
        raise _invalid("consumer durable name can not contain '.', '*', '>', '\\', '/'")
    replicas = cfg["num_replicas"]
    if replicas > 0 and replicas > stream_cfg["num_replicas"]:
        raise api_error("JSConsumerReplicasExceedsStream")
    if replicas < 0:
        raise api_error("JSReplicasCountCannotBeNegative")
    if (
        stream_cfg["retention"] in ("interest", "workqueue")
        and replicas != 0
        and replicas != stream_cfg["num_replicas"]
    ):
        raise api_error("JSConsumerReplicasShouldMatchStream")
    for value in cfg["backoff"]:
        if value < 0:
            raise api_error("JSConsumerBackOffNegativeErr")
    if cfg["ack_wait"] < 0:
        raise api_error("JSConsumerAckWaitNegativeErr")
    if cfg["ack_policy"] == "flow_control":
        if not cfg["deliver_subject"]:
            raise api_error("JSConsumerAckFCRequiresPushErr")
        if not cfg["flow_control"]:
            raise api_error("JSConsumerAckFCRequiresFCErr")
        if cfg["idle_heartbeat"] != SOURCE_HEALTH_HEARTBEAT:
            raise _invalid("flow control ack policy heartbeat needs to be 1s")
        if cfg["max_ack_pending"] <= 0:
            raise api_error("JSConsumerAckFCRequiresMaxAckPendingErr")
        if cfg["ack_wait"] != 0 or cfg["backoff"]:
            raise api_error("JSConsumerAckFCRequiresNoAckWaitErr")
        if cfg["max_deliver"] > 0:
            raise api_error("JSConsumerAckFCRequiresNoMaxDeliverErr")
    if cfg["backoff"] and cfg["max_deliver"] != -1 and len(cfg["backoff"]) > cfg["max_deliver"]:
        raise api_error("JSConsumerMaxDeliverBackoffErr")
    if len(cfg["description"]) > MAX_DESCRIPTION_LEN:
        raise api_error("JSConsumerDescriptionTooLongErrF", max=MAX_DESCRIPTION_LEN)
    deliver = cfg["deliver_subject"]
    if deliver:
        if has_wildcard(deliver):
            raise api_error("JSConsumerDeliverToWildcardsErr")
        if not is_valid_subject(deliver):
            raise api_error("JSConsumerInvalidDeliverSubject")
        if _delivery_forms_cycle(stream_cfg, deliver):
            raise api_error("JSConsumerDeliverCycleErr")
        if cfg["max_waiting"] != 0:
            raise api_error("JSConsumerPushMaxWaitingErr")
        if cfg["max_ack_pending"] > 0 and cfg["ack_policy"] == "none":
            raise api_error("JSConsumerMaxPendingAckPolicyRequiredErr")
        if 0 < cfg["idle_heartbeat"] < 100 * MS:
            raise api_error("JSConsumerSmallHeartbeatErr")
    else:
        if cfg["ack_policy"] == "none" and stream_cfg["retention"] == "workqueue":
            raise api_error("JSConsumerPullRequiresAckErr")
        if cfg["rate_limit_bps"] > 0:
            raise api_error("JSConsumerPullWithRateLimitErr")
        if cfg["max_waiting"] < 0:
            raise api_error("JSConsumerMaxWaitingNegativeErr")
        if cfg["idle_heartbeat"] > 0:
            raise api_error("JSConsumerHBRequiresPushErr")
        if cfg["flow_control"]:
            raise api_error("JSConsumerFCRequiresPushErr")
        if cfg["max_batch"] < 0:
            raise api_error("JSConsumerMaxRequestBatchNegativeErr")
        if cfg["max_expires"] != 0 and cfg["max_expires"] < MS:
            raise api_error("JSConsumerMaxRequestExpiresTooSmall")
    limits = stream_cfg.get("consumer_limits") or {}
    if limits.get("max_ack_pending", 0) > 0 and cfg["max_ack_pending"] > limits["max_ack_pending"]:
        raise api_error("JSConsumerMaxPendingAckExcessErrF", limit=limits["max_ack_pending"])
    if limits.get("inactive_threshold", 0) > 0 and cfg["inactive_threshold"] > limits["inactive_threshold"]:
        raise api_error("JSConsumerInactiveThresholdExcess", limit=gotime.format_duration(limits["inactive_threshold"]))
    if cfg["direct"]:
        if not deliver:
            raise api_error("JSConsumerDirectRequiresPushErr")
        if cfg["durable_name"]:
            raise api_error("JSConsumerDirectRequiresEphemeralErr")
    if cfg["filter_subject"] and cfg["filter_subjects"]:
        raise api_error("JSConsumerDuplicateFilterSubjects")
    if cfg["filter_subject"] and not is_valid_subject(cfg["filter_subject"]):
        raise _invalid("invalid subject")
    for subject in cfg["filter_subjects"]:
        if not subject:
            raise api_error("JSConsumerEmptyFilter")
    gathered = filters(cfg)
    for i, subject in enumerate(gathered):
        if not is_valid_subject(subject):
            raise _invalid("invalid subject")
        for j, other in enumerate(gathered):
            if i != j and is_subset(subject, other):
                raise api_error("JSConsumerOverlappingSubjectFilters")
    _check_deliver_policy(cfg)
    if cfg["sample_freq"]:
        text = cfg["sample_freq"].removesuffix("%")
        body = text[1:] if text[:1] in "+-" else text
        if not body.isdigit() or not body.isascii():
            raise api_error("JSConsumerInvalidSamplingErrF", err=f'strconv.Atoi: parsing "{text}": invalid syntax')
        if int(text) < 0:  # parsed fine: Go reports its nil error
            raise api_error("JSConsumerInvalidSamplingErrF", err="<nil>")
    if cfg["flow_control"] and cfg["idle_heartbeat"] == 0:
        raise api_error("JSConsumerWithFlowControlNeedsHeartbeats")
    if cfg["durable_name"] and cfg["name"] and cfg["name"] != cfg["durable_name"]:
        raise api_error("JSConsumerCreateDurableAndNameMismatch")
    metadata = cfg["metadata"] or {}
    if sum(len(k) + len(v) for k, v in metadata.items()) > MAX_METADATA_LEN:
        raise api_error("JSConsumerMetadataLengthErrF", limit=f"{MAX_METADATA_LEN // 1024}KB")
    if cfg["priority_policy"] != "none":
        if deliver:
            raise api_error("JSConsumerPushWithPriorityGroupErr")
        if not cfg["priority_groups"]:
            raise api_error("JSConsumerPriorityPolicyWithoutGroup")
        for group in cfg["priority_groups"]:
            if not group:
                raise api_error("JSConsumerEmptyGroupName")
            if not _GROUP_NAME.match(group):
                raise api_error("JSConsumerInvalidGroupNameErr")
    else:
        if cfg["priority_groups"]:
            raise api_error("JSConsumerPriorityGroupWithPolicyNone")
        if cfg["priority_timeout"] > 0:
            raise api_error("JSConsumerPinnedTTLWithoutPriorityPolicyNone")


def _check_deliver_policy(cfg: dict[str, Any]) -> None:
    policy = cfg["deliver_policy"]
    seq, time_ = cfg["opt_start_seq"], cfg["opt_start_time"]
    names = {
        "all": "all",
        "last": "last",
        "last_per_subject": "last per subject",
        "new": "new",
        "by_start_sequence": "by start sequence",
        "by_start_time": "by start time",
    }
    name = names[policy]

    def bad_start(start: str) -> ApiError:
        return api_error(
            "JSConsumerInvalidPolicyErrF",
            err=f"consumer delivery policy is deliver {name}, but optional start {start} is also set",
        )

    def not_set(what: str) -> ApiError:
        return api_error(
            "JSConsumerInvalidPolicyErrF",
            err=f"consumer delivery policy is deliver {name}, but optional {what} is not set",
        )

    if policy in ("all", "last", "last_per_subject", "new"):
        if seq > 0:
            raise bad_start("sequence")
        if time_ is not None:
            raise bad_start("time")
        if policy == "last_per_subject" and not filters(cfg):
            raise not_set("filter subject")
    elif policy == "by_start_sequence":
        if seq == 0:
            raise not_set("start sequence")
        if time_ is not None:
            raise bad_start("time")
    elif policy == "by_start_time":
        if time_ is None:
            raise not_set("start time")
        if seq != 0:
            raise bad_start("start sequence")


def check_update(old: dict[str, Any], new: dict[str, Any], deliver_has_interest: bool) -> None:
    """``checkNewConsumerConfig``: what an update may not change (10012 texts)."""
    if old == new:
        return
    rules = (
        ("deliver_policy", "deliver policy can not be updated"),
        ("mem_storage", "storage type can not be updated"),
        ("direct", "direct can not be updated"),
        ("sourcing", "sourcing can not be updated"),
        ("opt_start_seq", "start sequence can not be updated"),
        ("opt_start_time", "start time can not be updated"),
        ("ack_policy", "ack policy can not be updated"),
        ("replay_policy", "replay policy can not be updated"),
        ("idle_heartbeat", "heart beats can not be updated"),
        ("flow_control", "flow control can not be updated"),
    )
    for key, text in rules:
        if old[key] != new[key]:
            raise api_error("JSConsumerCreateErrF", err=text)
    if old["deliver_subject"] != new["deliver_subject"]:
        if not old["deliver_subject"]:
            raise api_error("JSConsumerCreateErrF", err="can not update pull consumer to push based")
        if not new["deliver_subject"]:
            raise api_error("JSConsumerCreateErrF", err="can not update push consumer to pull based")
        if deliver_has_interest:
            raise api_error("JSConsumerNameExistErr")
    if old["max_waiting"] != new["max_waiting"]:
        raise api_error("JSConsumerCreateErrF", err="max waiting can not be updated")
    if new["backoff"] and new["max_deliver"] != -1 and len(new["backoff"]) > new["max_deliver"]:
        raise api_error("JSConsumerMaxDeliverBackoffErr")


def required_api_level(cfg: dict[str, Any]) -> int:
    level = 0
    if cfg["pause_until"] is not None and not cfg["pause_until"].is_zero:
        level = max(level, 1)
    if cfg["priority_policy"] != "none" or cfg["priority_timeout"] or cfg["priority_groups"]:
        level = max(level, 1)
    if cfg["ack_policy"] == "flow_control":
        level = max(level, 4)
    return level


def set_static_metadata(cfg: dict[str, Any]) -> None:
    metadata = dict(cfg["metadata"] or {})
    metadata.pop("_nats.ver", None)
    metadata.pop("_nats.level", None)
    metadata["_nats.req.level"] = str(required_api_level(cfg))
    cfg["metadata"] = metadata


def copy_static_metadata(cfg: dict[str, Any], previous: dict[str, Any]) -> None:
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


def to_storable(cfg: dict[str, Any]) -> dict[str, Any]:
    """The config with times as text, for JSON files."""
    out = dict(cfg)
    for key in ("opt_start_time", "pause_until"):
        if out[key] is not None:
            out[key] = out[key].text()
    return out


def from_storable(stored: dict[str, Any]) -> dict[str, Any]:
    cfg = from_request(stored)
    for key in ("opt_start_time", "pause_until"):
        if isinstance(cfg[key], str):
            cfg[key] = gotime.parse_go_time(cfg[key])
    return cfg


def to_json(cfg: dict[str, Any], dynamic_metadata: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in _ORDER:
        value = cfg[key]
        if key == "metadata":
            metadata = dict(value or {})
            if dynamic_metadata:
                metadata["_nats.ver"] = NATS_VERSION
                metadata["_nats.level"] = str(API_LEVEL)
            if metadata:
                out["metadata"] = {k: metadata[k] for k in sorted(metadata)}
            continue
        if key in ("opt_start_time", "pause_until"):
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
