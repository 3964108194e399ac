"""StreamConfig: JSON fields, defaults, validation and update rules (nats-server 2.15).

A config is a plain ``dict`` keyed by JSON field name, always holding every
field (Go's zero value where unset).  :func:`decode` reads a request body,
:func:`check` applies nats-server's defaults and validation for a create,
:func:`check_update` adds the rules for changing an existing stream, and
:func:`to_json` writes the config back in Go's field order with its
``omitempty`` rules.  Durations are integer nanoseconds.
"""

from __future__ import annotations

import copy
from typing import Any

from fakejs.core.options import API_LEVEL, NATS_VERSION
from fakejs.core.subjects import is_subset, is_valid_subject, overlap
from fakejs.gocompat.gojson import Field, Struct
from fakejs.jetstream import enums
from fakejs.jetstream.errors import ApiError, api_error

MAX_NAME_LEN = 255
MAX_DESCRIPTION_LEN = 4 * 1024
MAX_METADATA_LEN = 128 * 1024
MAX_REPLICAS = 5
DEFAULT_DUPLICATE_WINDOW = 120 * 1_000_000_000
MS = 1_000_000
SECOND = 1_000_000_000

PLACEMENT = Struct("Placement", (Field("cluster", "string"), Field("tags", "[]string"), Field("preferred", "string")))
SUBJECT_TRANSFORM = Struct("SubjectTransformConfig", (Field("src", "string"), Field("dest", "string")))
EXTERNAL = Struct("ExternalStream", (Field("api", "string"), Field("deliver", "string")))
SOURCE_CONSUMER = Struct("StreamConsumerSource", (Field("name", "string"), Field("deliver_subject", "string")))
STREAM_SOURCE = Struct(
    "StreamSource",
    (
        Field("name", "string"),
        Field("opt_start_seq", "uint64"),
        Field("opt_start_time", "any"),
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
        Field("sources", ("[]", STREAM_SOURCE)),
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
ZERO: dict[str, Any] = {
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
UNSUPPORTED: tuple[tuple[str, Any], ...] = (
    ("mirror", None),
    ("sources", None),
    ("subject_transform", None),
    ("republish", None),
    ("allow_msg_counter", False),
    ("allow_atomic", False),
    ("allow_msg_schedules", False),
    ("allow_batched", False),
)


def from_request(fields: dict[str, Any]) -> dict[str, Any]:
    """A full config from decoded request fields (absent fields at their zero value)."""
    cfg = copy.deepcopy(ZERO)
    for key, value in fields.items():
        if key in cfg:
            cfg[key] = value
    if cfg["subjects"] is None:
        cfg["subjects"] = []
    if cfg["consumer_limits"] is None:
        cfg["consumer_limits"] = {}
    return cfg


def _invalid(text: str) -> ApiError:
    return api_error("JSStreamInvalidConfigF", err=text)


def _pedantic(text: str) -> ApiError:
    return api_error("JSPedanticErrF", err=text)


def is_valid_name(name: str) -> bool:
    """nats-server's ``isValidAssetName`` for stream and consumer names."""
    if not name:
        return False
    return not any(ch in name for ch in " \t\r\n\f.*>\\/")


def unsupported_feature(cfg: dict[str, Any]) -> ApiError | None:
    """The error for the first configured feature fakejs does not implement."""
    for key, zero in UNSUPPORTED:
        value = cfg.get(key)
        if value not in (zero, None, [], {}):
            return api_error("JSStreamInvalidConfigF", err=f"{key} is not supported by fakejs")
    if cfg.get("compression") == "s2":
        return api_error("JSStreamInvalidConfigF", err="compression is not supported by fakejs")
    if cfg.get("persist_mode") == "async":
        return api_error("JSStreamInvalidConfigF", err="persist_mode is not supported by fakejs")
    return None


def check(config: dict[str, Any], pedantic: bool = False, other_subjects: Any = None) -> dict[str, Any]:
    """Defaults and validation for a stream config, as ``checkStreamCfg`` does.

    Returns the normalised copy; raises :class:`ApiError`.
    """
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
    cfg = copy.deepcopy(config)
    if not cfg["storage"]:
        cfg["storage"] = "file"
    if cfg["num_replicas"] == 0:
        cfg["num_replicas"] = 1
    if cfg["num_replicas"] > MAX_REPLICAS:
        raise _invalid(f"maximum replicas is {MAX_REPLICAS}")
    if cfg["num_replicas"] < 0:
        raise api_error("JSReplicasCountCannotBeNegative")
    for key in ("max_msgs", "max_msgs_per_subject", "max_bytes", "max_msg_size", "max_consumers"):
        value = cfg[key]
        if value == 0 or value < -1:
            if pedantic and value < -1:
                raise _pedantic(f"{key} must be set to -1")
            cfg[key] = -1
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
    marker_ttl = cfg["subject_delete_marker_ttl"]
    if marker_ttl > 0:
        if marker_ttl < SECOND:
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
    if cfg["mirror"] is not None:
        if cfg["first_seq"] > 0:
            raise api_error("JSMirrorWithFirstSeqErr")
        if cfg["subjects"]:
            raise api_error("JSMirrorWithSubjectsErr")
        if cfg["sources"]:
            raise api_error("JSMirrorWithSourcesErr")
    subjects = cfg["subjects"]
    if not subjects:
        if cfg["mirror"] is None and not cfg["sources"]:
            cfg["subjects"] = [name]
    else:
        seen: set[str] = set()
        for i, subject in enumerate(subjects):
            if not is_valid_subject(subject):
                raise _invalid("invalid subject")
            if subject in seen:
                raise _invalid("duplicate subjects detected")
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
            for later in subjects[i + 1 :]:
                if overlap(later, subject):
                    raise _invalid(f'subject "{subject}" overlaps with "{later}"')
            seen.add(subject)
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
    return cfg


def check_update(old: dict[str, Any], new: dict[str, Any], pedantic: bool = False) -> dict[str, Any]:
    """``configUpdateCheck``: validation plus what an update may not change."""
    cfg = check(new, pedantic)
    if cfg["name"] != old["name"]:
        raise _invalid("stream configuration name must match original")
    if cfg["num_replicas"] > 1:
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
    if cfg["mirror"] is not None and cfg["mirror"] != old["mirror"]:
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


def required_api_level(cfg: dict[str, Any]) -> int:
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


def set_static_metadata(cfg: dict[str, Any]) -> None:
    """Record the required API level in the stored metadata (``setStaticStreamMetadata``)."""
    metadata = dict(cfg["metadata"] or {})
    for key in DYNAMIC_METADATA:
        metadata.pop(key, None)
    metadata["_nats.req.level"] = str(required_api_level(cfg))
    cfg["metadata"] = metadata


def copy_static_metadata(cfg: dict[str, Any], previous: dict[str, Any]) -> None:
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


def _sorted(mapping: dict[str, Any]) -> dict[str, Any]:
    return {k: mapping[k] for k in sorted(mapping)}


def _source_json(src: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in src.items() if not _omit(v)}


def to_json(cfg: dict[str, Any], dynamic_metadata: bool = True) -> dict[str, Any]:
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
    if cfg["placement"] is not None:
        out["placement"] = _source_json(cfg["placement"])
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
        out["republish"] = _source_json(cfg["republish"])
    out["allow_direct"] = cfg["allow_direct"]
    out["mirror_direct"] = cfg["mirror_direct"]
    if cfg["discard_new_per_subject"]:
        out["discard_new_per_subject"] = True
    out["sealed"] = cfg["sealed"]
    out["deny_delete"] = cfg["deny_delete"]
    out["deny_purge"] = cfg["deny_purge"]
    out["allow_rollup_hdrs"] = cfg["allow_rollup_hdrs"]
    limits = cfg["consumer_limits"] or {}
    out["consumer_limits"] = {k: limits[k] for k in ("inactive_threshold", "max_ack_pending") if limits.get(k)}
    out["allow_msg_ttl"] = cfg["allow_msg_ttl"]
    if cfg["subject_delete_marker_ttl"]:
        out["subject_delete_marker_ttl"] = cfg["subject_delete_marker_ttl"]
    for key in ("allow_msg_counter", "allow_atomic", "allow_msg_schedules"):
        if cfg[key]:
            out[key] = True
    if cfg["persist_mode"] == "async":
        out["persist_mode"] = "async"
    if cfg["allow_batched"]:
        out["allow_batched"] = True
    metadata = dict(cfg["metadata"] or {})
    if dynamic_metadata:
        metadata["_nats.ver"] = NATS_VERSION
        metadata["_nats.level"] = str(API_LEVEL)
    if metadata:
        out["metadata"] = _sorted(metadata)
    return out
