"""Consumer configuration rules: nats-server's defaults, validation and update checks.

:func:`apply_defaults` is ``setConsumerConfigDefaults``, :func:`check` is
``checkConsumerCfg``, :func:`check_update` is ``checkNewConsumerConfig``,
:func:`new_consumer_name` is how a new consumer is named, and
:func:`consumers_over_limits` is the check a stream update makes against
its consumers when it changes their limits.  Each raises the
:class:`ApiError` nats-server answers with, in nats-server's order.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Literal

from fakejs.core.subjects import has_wildcard, is_subset, is_valid_subject, matches
from fakejs.gocompat import gotime, ids
from fakejs.gocompat.gotime import NS
from fakejs.jetstream.config.consumer import ConsumerConfig, filters, is_valid_group_name
from fakejs.jetstream.config.stream import StreamConfig, is_valid_name
from fakejs.jetstream.config.stream_rules import MAX_DESCRIPTION_LEN, MAX_METADATA_LEN, MAX_NAME_LEN, MS
from fakejs.jetstream.errors import ApiError, api_error

DEFAULT_ACK_WAIT = 30 * NS
DEFAULT_MAX_ACK_PENDING = 1000
DEFAULT_MAX_WAITING = 512
DEFAULT_PINNED_TTL = 120 * NS
SOURCE_HEALTH_HEARTBEAT = NS
EPHEMERAL_INACTIVE_THRESHOLD = 5 * NS  # ephemeral consumers go after 5 seconds without activity

_NON_NEGATIVE: tuple[
    tuple[
        Literal["max_batch", "max_expires", "max_bytes", "idle_heartbeat", "inactive_threshold", "priority_timeout"],
        str,
    ],
    ...,
] = (
    ("max_batch", "max_batch must not be negative"),
    ("max_expires", "max_expires must not be negative"),
    ("max_bytes", "max_bytes must not be negative"),
    ("idle_heartbeat", "idle_heartbeat must not be negative"),
    ("inactive_threshold", "inactive_threshold must not be negative"),
    ("priority_timeout", "priority_timeout must not be negative"),
)


def _pedantic(text: str) -> ApiError:
    return api_error("JSPedanticErrF", err=text)


def _invalid(text: str) -> ApiError:
    return api_error("JSStreamInvalidConfigF", err=text)


def apply_defaults(
    cfg: ConsumerConfig, stream_cfg: StreamConfig, pedantic: bool = False, account_max_ack_pending: int = -1
) -> None:
    """Fill in what the server decides when the client leaves it out (``account_max_ack_pending``: the account's limit)."""
    if cfg["max_deliver"] == 0 or cfg["max_deliver"] < -1:
        if pedantic and cfg["max_deliver"] < -1:
            raise _pedantic("max_deliver must be set to -1")
        cfg["max_deliver"] = -1
    if cfg["max_waiting"] < 0:
        if pedantic:
            raise _pedantic("max_waiting must not be negative")
        cfg["max_waiting"] = 0
    if cfg["max_ack_pending"] < -1:
        if pedantic:
            raise _pedantic("max_ack_pending must be set to -1")
        cfg["max_ack_pending"] = -1
    for key, text in _NON_NEGATIVE:
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
    _apply_stream_limits(cfg, stream_cfg, pedantic, account_max_ack_pending)
    if cfg["priority_policy"] == "pinned_client" and cfg["priority_timeout"] == 0:
        cfg["priority_timeout"] = DEFAULT_PINNED_TTL
    if cfg["ack_policy"] == "flow_control" and not pedantic:
        cfg["flow_control"] = True
        cfg["idle_heartbeat"] = SOURCE_HEALTH_HEARTBEAT


def _apply_stream_limits(cfg: ConsumerConfig, stream_cfg: StreamConfig, pedantic: bool, account_max: int) -> None:
    """Unset max_ack_pending and inactive_threshold come from the stream's consumer limits.

    Left unset there too, max_ack_pending is the default, lowered to the
    account's limit when that is smaller.
    """
    limits = stream_cfg["consumer_limits"] or {}
    if cfg["max_ack_pending"] == 0:
        if pedantic and limits.get("max_ack_pending", 0) > 0:
            raise _pedantic("max_ack_pending must be set if it's configured in stream limits")
        cfg["max_ack_pending"] = limits.get("max_ack_pending", 0)
    if cfg["inactive_threshold"] == 0:
        if pedantic and limits.get("inactive_threshold", 0) > 0:
            raise _pedantic("inactive_threshold must be set if it's configured in stream limits")
        cfg["inactive_threshold"] = limits.get("inactive_threshold", 0)
    if cfg["max_ack_pending"] == 0 and cfg["ack_policy"] != "none":
        default = DEFAULT_MAX_ACK_PENDING
        if 0 < account_max < default:
            default = account_max
        cfg["max_ack_pending"] = default


def check(cfg: ConsumerConfig, stream_cfg: StreamConfig, account_max_ack_pending: int = -1) -> None:
    """``checkConsumerCfg``: raises :class:`ApiError` for the first violated rule."""
    _check_names_and_replicas(cfg, stream_cfg)
    _check_acks(cfg)
    if len(cfg["description"]) > MAX_DESCRIPTION_LEN:
        raise api_error("JSConsumerDescriptionTooLongErrF", max=MAX_DESCRIPTION_LEN)
    if cfg["deliver_subject"]:
        _check_push(cfg, stream_cfg)
    else:
        _check_pull(cfg, stream_cfg)
    if 0 < account_max_ack_pending < cfg["max_ack_pending"]:
        raise api_error("JSConsumerMaxPendingAckExcessErrF", limit=account_max_ack_pending)
    _check_against_stream_limits(cfg, stream_cfg)
    if cfg["direct"]:
        if not cfg["deliver_subject"]:
            raise api_error("JSConsumerDirectRequiresPushErr")
        if cfg["durable_name"]:
            raise api_error("JSConsumerDirectRequiresEphemeralErr")
    _check_filters(cfg)
    _check_deliver_policy(cfg)
    _check_sampling(cfg)
    if cfg["flow_control"] and cfg["idle_heartbeat"] == 0:
        raise api_error("JSConsumerWithFlowControlNeedsHeartbeats")
    if cfg["durable_name"] and cfg["name"] and cfg["name"] != cfg["durable_name"]:
        raise api_error("JSConsumerCreateDurableAndNameMismatch")
    metadata = cfg["metadata"] or {}
    if sum(len(k) + len(v) for k, v in metadata.items()) > MAX_METADATA_LEN:
        raise api_error("JSConsumerMetadataLengthErrF", limit=f"{MAX_METADATA_LEN // 1024}KB")
    _check_priority(cfg)


def _check_names_and_replicas(cfg: ConsumerConfig, stream_cfg: StreamConfig) -> None:
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


def _check_acks(cfg: ConsumerConfig) -> None:
    """Back-off, ack wait, and what the flow-control ack policy requires."""
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


def _delivery_forms_cycle(stream_cfg: StreamConfig, subject: str) -> bool:
    return any(matches(stream_subject, subject) for stream_subject in stream_cfg["subjects"] or [])


def _check_push(cfg: ConsumerConfig, stream_cfg: StreamConfig) -> None:
    deliver = cfg["deliver_subject"]
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


def _check_pull(cfg: ConsumerConfig, stream_cfg: StreamConfig) -> None:
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


def _check_against_stream_limits(cfg: ConsumerConfig, stream_cfg: StreamConfig) -> None:
    limits = stream_cfg["consumer_limits"] or {}
    max_ack = limits.get("max_ack_pending", 0)
    if max_ack > 0 and cfg["max_ack_pending"] > max_ack:
        raise api_error("JSConsumerMaxPendingAckExcessErrF", limit=max_ack)
    threshold = limits.get("inactive_threshold", 0)
    if threshold > 0 and cfg["inactive_threshold"] > threshold:
        raise api_error("JSConsumerInactiveThresholdExcess", limit=gotime.format_duration(threshold))


def _check_filters(cfg: ConsumerConfig) -> None:
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


def _check_sampling(cfg: ConsumerConfig) -> None:
    if not cfg["sample_freq"]:
        return
    text = cfg["sample_freq"].removesuffix("%")
    body = text[1:] if text[:1] in "+-" else text
    if not body.isdigit() or not body.isascii():
        raise api_error("JSConsumerInvalidSamplingErrF", err=f'strconv.Atoi: parsing "{text}": invalid syntax')
    if int(text) < 0:  # parsed fine: Go reports its nil error
        raise api_error("JSConsumerInvalidSamplingErrF", err="<nil>")


def _check_priority(cfg: ConsumerConfig) -> None:
    if cfg["priority_policy"] != "none":
        if cfg["deliver_subject"]:
            raise api_error("JSConsumerPushWithPriorityGroupErr")
        if not cfg["priority_groups"]:
            raise api_error("JSConsumerPriorityPolicyWithoutGroup")
        for group in cfg["priority_groups"]:
            if not group:
                raise api_error("JSConsumerEmptyGroupName")
            if not is_valid_group_name(group):
                raise api_error("JSConsumerInvalidGroupNameErr")
    else:
        if cfg["priority_groups"]:
            raise api_error("JSConsumerPriorityGroupWithPolicyNone")
        if cfg["priority_timeout"] > 0:
            raise api_error("JSConsumerPinnedTTLWithoutPriorityPolicyNone")


_POLICY_NAMES = {
    "all": "all",
    "last": "last",
    "last_per_subject": "last per subject",
    "new": "new",
    "by_start_sequence": "by start sequence",
    "by_start_time": "by start time",
}


def _check_deliver_policy(cfg: ConsumerConfig) -> None:
    policy = cfg["deliver_policy"]
    seq, time_ = cfg["opt_start_seq"], cfg["opt_start_time"]
    name = _POLICY_NAMES[policy]

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


_FIXED: tuple[tuple[str, str], ...] = (
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


def new_consumer_name(name: str, cfg: ConsumerConfig, taken: Callable[[str], bool], rng: random.Random) -> str:
    """A new consumer's name: its durable name, the name given, or one generated from ``rng`` that ``taken``
    says no consumer of the stream has (a generated name does not enter the configuration)."""
    if cfg["durable_name"]:
        if len(cfg["durable_name"]) > MAX_NAME_LEN:
            raise api_error("JSConsumerNameTooLongErrF", max=MAX_NAME_LEN)
        name = cfg["durable_name"]
    elif not name:
        name = ids.consumer_name(rng)
        while taken(name):
            name = ids.consumer_name(rng)
    if not is_valid_name(name):
        raise api_error("JSConsumerBadDurableNameErr")
    return name


def check_update(old: ConsumerConfig, new: ConsumerConfig, deliver_has_interest: bool) -> None:
    """``checkNewConsumerConfig``: what an update may not change (10012 texts)."""
    if old == new:
        return
    for key, text in _FIXED:
        if old.get(key) != new.get(key):
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


def consumers_over_limits(
    old: StreamConfig, new: StreamConfig, consumers: Iterable[tuple[str, ConsumerConfig]]
) -> list[str]:
    """Consumers whose settings exceed a stream's new consumer limits (checked only when those change)."""
    old_limits = old["consumer_limits"] or {}
    new_limits = new["consumer_limits"] or {}
    threshold, max_ack = new_limits.get("inactive_threshold", 0), new_limits.get("max_ack_pending", 0)
    changed = (threshold > 0 and threshold != old_limits.get("inactive_threshold", 0)) or (
        max_ack > 0 and max_ack != old_limits.get("max_ack_pending", 0)
    )
    if not changed:
        return []
    return [
        name
        for name, cfg in consumers
        if (threshold > 0 and cfg["inactive_threshold"] > threshold)
        or (max_ack > 0 and cfg["max_ack_pending"] > max_ack)
    ]
