"""Stream configuration rules: nats-server's defaults, validation, create and update checks.

:func:`check` is ``checkStreamCfg`` (defaults and validation, on a copy),
:func:`check_create` adds what only a create refuses, :func:`check_update`
is ``configUpdateCheck``.  Each raises the :class:`ApiError` nats-server
answers with, checking in nats-server's order so the first violated rule
wins.  Names and size ceilings shared with consumers live here too.
"""

from __future__ import annotations

import copy
from typing import Literal

from fakejs.core.subjects import is_subset, is_valid_subject, overlap
from fakejs.gocompat.gotime import NS
from fakejs.jetstream.config import stream_sources, stream_transforms
from fakejs.jetstream.config.stream import UNSUPPORTED, StreamConfig, is_valid_name, set_static_metadata
from fakejs.jetstream.config.stream_sources import Lookup
from fakejs.jetstream.errors import ApiError, api_error

MAX_NAME_LEN = 255
MAX_DESCRIPTION_LEN = 4 * 1024
MAX_METADATA_LEN = 128 * 1024
MAX_REPLICAS = 5
MS = NS // 1_000
DEFAULT_DUPLICATE_WINDOW = 120 * NS

_LIMITS: tuple[Literal["max_msgs", "max_msgs_per_subject", "max_bytes", "max_msg_size", "max_consumers"], ...] = (
    "max_msgs",
    "max_msgs_per_subject",
    "max_bytes",
    "max_msg_size",
    "max_consumers",
)


def _invalid(text: str) -> ApiError:
    return api_error("JSStreamInvalidConfigF", err=text)


def _pedantic(text: str) -> ApiError:
    return api_error("JSPedanticErrF", err=text)


def unsupported_feature(cfg: StreamConfig) -> ApiError | None:
    """The error for the first configured feature fakejs does not implement."""
    for key, zero in UNSUPPORTED:
        value = cfg.get(key)
        if value not in (zero, None, [], {}):
            return api_error("JSStreamInvalidConfigF", err=f"{key} is not supported by fakejs")
    return None


def check(config: StreamConfig, pedantic: bool = False, lookup: Lookup | None = None) -> StreamConfig:
    """Defaults and validation for a stream config, as ``checkStreamCfg`` does.

    ``lookup`` finds the account's other streams (by name) for the rules
    about a mirror's or source's origin.  Returns the normalised copy;
    raises :class:`ApiError`.
    """
    _check_identity(config)
    cfg = copy.deepcopy(config)
    _check_storage_and_limits(cfg, pedantic)
    _check_age_and_window(cfg, pedantic)
    _check_features(cfg, pedantic)
    stream_sources.check(cfg, pedantic, lookup)
    _check_subjects(cfg)
    stream_transforms.check(cfg, pedantic)
    _check_placement(cfg)
    return cfg


def check_create(
    config: StreamConfig, pedantic: bool, lookup: Lookup | None = None, clustered: bool = False
) -> StreamConfig:
    """What a create checks on its own config, before looking at other streams.

    Records the required API level in the metadata first (it counts towards
    the metadata size limit) and refuses what single-server fakejs cannot run.
    """
    set_static_metadata(config)
    name = config["name"]
    if "\\" in name or "/" in name:
        raise api_error("JSStreamNameContainsPathSeparatorsErr")
    if config["sealed"]:
        raise _invalid("stream configuration for create can not be sealed")
    if config["mirror_direct"] and config["mirror"] is None:
        raise _invalid("stream has no mirror but does have mirror direct")
    checked = check(config, pedantic, lookup)
    if checked["num_replicas"] > 1 and not clustered:
        raise api_error("JSStreamReplicasNotSupportedErr")
    return checked


def _check_identity(config: StreamConfig) -> None:
    name = config["name"]
    if not is_valid_name(name):
        raise _invalid("stream name is required and can not contain '.', '*', '>', '\\', '/'")
    if len(name.encode()) > MAX_NAME_LEN:
        raise _invalid(f"stream name is too long, maximum allowed is {MAX_NAME_LEN}")
    if len(config["description"].encode()) > MAX_DESCRIPTION_LEN:
        raise _invalid(f"stream description is too long, maximum allowed is {MAX_DESCRIPTION_LEN}")
    metadata = config["metadata"] or {}
    if sum(len(k.encode()) + len(v.encode()) for k, v in metadata.items()) > MAX_METADATA_LEN:
        raise _invalid(f"stream metadata exceeds maximum size of {MAX_METADATA_LEN} bytes")


def _check_storage_and_limits(cfg: StreamConfig, pedantic: bool) -> None:
    if not cfg["storage"]:
        cfg["storage"] = "file"
    if cfg["num_replicas"] == 0:
        cfg["num_replicas"] = 1
    if cfg["num_replicas"] > MAX_REPLICAS:
        raise _invalid(f"maximum replicas is {MAX_REPLICAS}")
    if cfg["num_replicas"] < 0:
        raise api_error("JSReplicasCountCannotBeNegative")
    for key in _LIMITS:
        value = cfg[key]
        if value == 0 or value < -1:
            if pedantic and value < -1:
                raise _pedantic(f"{key} must be set to -1")
            cfg[key] = -1


def _check_age_and_window(cfg: StreamConfig, pedantic: bool) -> None:
    max_age = cfg["max_age"]
    if max_age < 0:
        raise _invalid("max age can not be negative")
    if max_age and max_age < 100 * MS:
        raise _invalid("max age needs to be >= 100ms")
    if cfg["duplicate_window"] == 0 and cfg["mirror"] is None and not cfg["sources"]:
        if max_age and max_age < DEFAULT_DUPLICATE_WINDOW:
            if pedantic:
                raise _pedantic("duplicate window cannot be bigger than max age")
            cfg["duplicate_window"] = max_age
        else:
            cfg["duplicate_window"] = DEFAULT_DUPLICATE_WINDOW
    window = cfg["duplicate_window"]
    if window < 0:
        raise _invalid("duplicates window can not be negative")
    if max_age and window > max_age:
        raise _invalid("duplicates window can not be larger then max age")
    if 0 < window < 100 * MS:
        raise _invalid("duplicates window needs to be >= 100ms")


def _check_features(cfg: StreamConfig, pedantic: bool) -> None:
    """Roll-ups, counters, per-subject discard, delete markers, schedules and the persist mode."""
    if cfg["deny_purge"] and cfg["allow_rollup_hdrs"]:
        raise _invalid("roll-ups require the purge permission")
    if cfg["allow_msg_counter"]:
        if cfg["discard"] == "new":
            raise _invalid("counter stream cannot use discard new")
        if cfg["allow_msg_ttl"]:
            raise _invalid("counter stream cannot use message TTLs")
        if cfg["allow_msg_schedules"]:
            raise _invalid("counter stream cannot use message schedules")
        if cfg["retention"] != "limits":
            raise _invalid("counter stream can only use limits retention")
    if cfg["discard_new_per_subject"]:
        if cfg["discard"] != "new":
            raise _invalid("discard new per subject requires discard new policy to be set")
        if cfg["max_msgs_per_subject"] <= 0:
            raise _invalid("discard new per subject requires max msgs per subject > 0")
    _check_delete_markers(cfg, pedantic)
    if cfg["allow_msg_schedules"]:
        if cfg["discard"] == "new":
            raise _invalid("message scheduling cannot use discard new")
        if not cfg["allow_rollup_hdrs"]:
            if pedantic:
                raise _invalid("message scheduling cannot be set if roll-ups are disabled")
            cfg["allow_rollup_hdrs"], cfg["deny_purge"] = True, False
    if cfg["persist_mode"] == "async":
        if cfg["storage"] != "file":
            raise _invalid("async persist mode is only supported on file storage")
        if cfg["num_replicas"] > 1:
            raise _invalid("async persist mode is not supported on replicated streams")
        if cfg["allow_atomic"]:
            raise _invalid("async persist mode is not supported with atomic batch publish")


def _check_delete_markers(cfg: StreamConfig, pedantic: bool) -> None:
    """Subject delete markers need message TTLs and roll-ups (turned on unless pedantic)."""
    marker_ttl = cfg["subject_delete_marker_ttl"]
    if marker_ttl > 0:
        if marker_ttl < NS:
            raise _invalid("subject delete marker TTL must be at least 1 second")
        if not cfg["allow_msg_ttl"]:
            if pedantic:
                raise _invalid("subject delete marker cannot be set if message TTLs are disabled")
            cfg["allow_msg_ttl"] = True
        if not cfg["allow_rollup_hdrs"]:
            if pedantic:
                raise _invalid("subject delete marker cannot be set if roll-ups are disabled")
            cfg["allow_rollup_hdrs"], cfg["deny_purge"] = True, False
    elif marker_ttl < 0:
        raise _invalid("subject delete marker TTL must not be negative")


def _check_subjects(cfg: StreamConfig) -> None:
    """The default subject (none for a mirror or a stream with sources), each subject's validity and overlaps."""
    subjects = cfg["subjects"]
    if not subjects:
        if cfg["mirror"] is None and not cfg["sources"]:
            cfg["subjects"] = [cfg["name"]]
        return
    seen: set[str] = set()
    for i, subject in enumerate(subjects):
        if not is_valid_subject(subject):
            raise _invalid("invalid subject")
        if subject in seen:
            raise _invalid("duplicate subjects detected")
        _check_reserved_subject(cfg, subject)
        for later in subjects[i + 1 :]:
            if overlap(later, subject):
                raise _invalid(f'subject "{subject}" overlaps with "{later}"')
        seen.add(subject)


def _check_reserved_subject(cfg: StreamConfig, subject: str) -> None:
    """Capturing everything, or the JetStream and system APIs, needs ``no_ack``."""
    if subject == ">":
        if not cfg["no_ack"]:
            raise _invalid("capturing all subjects requires no-ack to be true")
        if cfg["num_replicas"] != 1:
            raise _invalid("capturing all subjects requires replicas of 1")
    if not cfg["no_ack"]:
        for namespace in ("$JS.>", "$JSC.>", "$NRG.>"):
            if overlap(subject, namespace) and not is_subset(subject, "$JS.EVENT.>"):
                raise _invalid("subjects that overlap with jetstream api require no-ack to be true")
        if overlap(subject, "$SYS.>") and not is_subset(subject, "$SYS.ACCOUNT.>"):
            raise _invalid("subjects that overlap with system api require no-ack to be true")


def _check_placement(cfg: StreamConfig) -> None:
    placement = cfg["placement"]
    # Only a placement equal to Go's zero value is dropped: "tags": [] is not.
    if (
        placement is not None
        and not placement.get("cluster")
        and not placement.get("preferred")
        and placement.get("tags") is None
    ):
        cfg["placement"] = None
    elif placement is not None and placement.get("preferred"):
        raise _invalid("preferred server not permitted in placement")


def check_update(
    old: StreamConfig, new: StreamConfig, pedantic: bool = False, lookup: Lookup | None = None, clustered: bool = False
) -> StreamConfig:
    """``configUpdateCheck``: validation plus what an update may not change.

    Removing the mirror promotes the stream to a normal one (the defaults of
    :func:`check` then give it a duplicate window, and its name as subject
    when it has none); changing or adding one is refused.
    """
    cfg = check(new, pedantic, lookup)
    if cfg["name"] != old["name"]:
        raise _invalid("stream configuration name must match original")
    if cfg["num_replicas"] > 1 and not clustered:
        raise api_error("JSStreamReplicasNotSupportedErr")
    if cfg["storage"] != old["storage"]:
        raise _invalid("stream configuration update can not change storage type")
    if cfg["retention"] != old["retention"] and "workqueue" in (cfg["retention"], old["retention"]):
        raise _invalid("stream configuration update can not change retention policy to/from workqueue")
    if not cfg["sealed"] and old["sealed"]:
        raise _invalid("stream configuration update can not unseal a sealed stream")
    if not cfg["deny_delete"] and old["deny_delete"]:
        raise _invalid("stream configuration update can not cancel deny message deletes")
    if not cfg["deny_purge"] and old["deny_purge"]:
        raise _invalid("stream configuration update can not cancel deny purge")
    if cfg["mirror"] is not None and not stream_sources.same_source(cfg["mirror"], old["mirror"]):
        raise api_error("JSStreamMirrorNotUpdatableErr")
    if old["allow_msg_ttl"] and not cfg["allow_msg_ttl"]:
        raise _invalid("message TTL status can not be disabled")
    if cfg["allow_msg_counter"] != old["allow_msg_counter"]:
        raise _invalid("stream configuration update can not change message counter setting")
    if old["allow_msg_schedules"] and not cfg["allow_msg_schedules"]:
        raise _invalid("message schedules can not be disabled")
    if old["persist_mode"] != cfg["persist_mode"]:
        raise _invalid("stream configuration update can not change persist mode")
    if cfg["sealed"]:
        cfg["max_age"] = 0
        cfg["discard"] = "new"
        cfg["deny_delete"] = cfg["deny_purge"] = True
        cfg["allow_rollup_hdrs"] = False
    return cfg
