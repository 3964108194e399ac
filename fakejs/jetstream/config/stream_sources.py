"""A stream's ``mirror`` and ``sources``: nats-server's configuration checks.

:func:`check` is the part of ``checkStreamCfg`` about them, run for creates
and updates after the feature checks and before the subjects (so the first
violated rule wins as on nats-server).  Some rules look at the streams the
mirror or sources name (maximum message size, direct gets, cycles, the
delivery prefixes of external origins): ``lookup`` gives the stored config
of a stream of the same account, or ``None``.  An origin need not exist:
nats-server creates the stream and keeps trying to reach it.

:func:`check_filters` is what a create alone adds, once the limits are
checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from fakejs.core.subject_transform import FWC, TransformError, validate_mapping
from fakejs.core.subjects import is_subset, is_valid_literal_subject, is_valid_subject, overlap
from fakejs.gocompat.goquote import quote_text
from fakejs.jetstream.config.stream import StreamConfig, is_valid_name
from fakejs.jetstream.errors import ApiError, api_error

Lookup = Callable[[str], StreamConfig | None]
JS_API_PREFIX = "$JS.API"


def _no_stream(name: str) -> StreamConfig | None:
    return None


def _invalid(text: str) -> ApiError:
    return api_error("JSStreamInvalidConfigF", err=text)


def _is_publish_subject(subject: str) -> bool:
    """``IsValidPublishSubject``: a valid subject without wildcards."""
    return is_valid_subject(subject) and is_valid_literal_subject(subject)


def _full(src: Mapping[str, Any]) -> dict[str, Any]:
    """A ``StreamSource`` with every field (Go's zero values), so that equal sources compare equal.

    ``subject_transforms`` stays ``None`` when absent: nats-server tells an
    absent list from an empty one when it compares mirrors.
    """
    external, consumer = src.get("external"), src.get("consumer")
    return {
        "name": src.get("name", ""),
        "opt_start_seq": src.get("opt_start_seq", 0),
        "opt_start_time": src.get("opt_start_time"),
        "filter_subject": src.get("filter_subject", ""),
        "subject_transforms": None
        if src.get("subject_transforms") is None
        else [{"src": (t or {}).get("src", ""), "dest": (t or {}).get("dest", "")} for t in src["subject_transforms"]],
        "external": None
        if external is None
        else {"api": external.get("api", ""), "deliver": external.get("deliver", "")},
        "consumer": None
        if consumer is None
        else {"name": consumer.get("name", ""), "deliver_subject": consumer.get("deliver_subject", "")},
    }


def _transforms(src: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(src.get("subject_transforms") or [])


def check(cfg: StreamConfig, pedantic: bool, lookup: Lookup | None = None) -> None:
    """Validate the mirror and the sources; ``mirror_direct`` follows a visible origin (``cfg`` changed in place)."""
    lookup = lookup or _no_stream
    if cfg["mirror"] is not None:
        cfg["mirror"] = _full(cfg["mirror"])
    if cfg["sources"]:
        cfg["sources"] = [None if src is None else _full(src) for src in cfg["sources"]]
    origin_subjects: list[str] = []
    deliver_prefixes: list[str] = []
    api_prefixes: list[str] = []
    if cfg["mirror"] is not None:
        _check_mirror(cfg, pedantic, lookup, origin_subjects)
        _collect_prefixes(cfg["mirror"], deliver_prefixes, api_prefixes)
    if cfg["sources"] and cfg["allow_msg_schedules"]:
        raise api_error("JSSourceWithMsgSchedulesErr")
    _check_sources(cfg, lookup, origin_subjects)
    for src in cfg["sources"] or []:
        _collect_prefixes(src, deliver_prefixes, api_prefixes)
    _check_prefixes(deliver_prefixes, api_prefixes, origin_subjects)
    _check_cycles(cfg, lookup)


def _check_mirror(cfg: StreamConfig, pedantic: bool, lookup: Lookup, origin_subjects: list[str]) -> None:
    """What a mirror may not have, its consumer and transforms, then what its origin says."""
    mirror = cfg["mirror"]
    assert mirror is not None
    if cfg["first_seq"] > 0:
        raise api_error("JSMirrorWithFirstSeqErr")
    if cfg["subjects"]:
        raise api_error("JSMirrorWithSubjectsErr")
    if cfg["sources"]:
        raise api_error("JSMirrorWithSourcesErr")
    for key, error in (
        ("allow_msg_counter", "JSMirrorWithCountersErr"),
        ("allow_atomic", "JSMirrorWithAtomicPublishErr"),
        ("allow_batched", "JSMirrorWithBatchPublishErr"),
        ("allow_msg_schedules", "JSMirrorWithMsgSchedulesErr"),
    ):
        if cfg[key]:  # type: ignore[literal-required]
            raise api_error(error)
    if not _consumer_ok(mirror):
        raise api_error("JSMirrorDurableConsumerCfgInvalid")
    transforms = _transforms(mirror)
    if mirror.get("filter_subject") and transforms:
        raise api_error("JSMirrorMultipleFiltersNotAllowed")
    if cfg["subject_delete_marker_ttl"] > 0:
        # Markers would use up sequence numbers the origin does not have.
        raise _invalid("subject delete markers forbidden on mirrors")
    for i, transform in enumerate(transforms):
        src = transform.get("src", "")
        if src and not is_valid_subject(src):
            raise api_error("JSMirrorInvalidSubjectFilter", err=f"invalid subject {src}")
        try:
            validate_mapping(src, transform.get("dest", ""))
        except TransformError as exc:
            raise api_error("JSMirrorInvalidTransformDestination", err=str(exc)) from None
        if any(j != i and overlap(src, other.get("src", "")) for j, other in enumerate(transforms)):
            raise api_error("JSMirrorOverlappingSubjectFilters")
    if mirror.get("external") is not None:
        return
    if not is_valid_name(mirror.get("name", "")):
        raise api_error("JSMirrorInvalidStreamName")
    origin = lookup(mirror["name"])
    if origin is None:
        return
    origin_subjects.extend(origin["subjects"])
    if _too_small(cfg, origin):
        raise api_error("JSMirrorMaxMessageSizeTooBigErr")
    if pedantic and cfg["mirror_direct"] != origin["allow_direct"]:
        raise api_error("JSPedanticErrF", err="origin stream has direct get set, mirror has it disabled")
    cfg["mirror_direct"] = origin["allow_direct"]


def _too_small(cfg: StreamConfig, origin: StreamConfig) -> bool:
    """A stream must take messages as large as its origin's (when both are limited)."""
    mine, theirs = cfg["max_msg_size"], origin["max_msg_size"]
    return 0 < mine < theirs


def _consumer_ok(src: Mapping[str, Any]) -> bool:
    """The durable sourcing consumer: a valid name, a literal deliver subject, no start or filter."""
    consumer = src.get("consumer")
    if consumer is None:
        return True
    deliver = consumer.get("deliver_subject", "")
    return (
        is_valid_name(consumer.get("name", ""))
        and _is_publish_subject(deliver)
        and not src.get("opt_start_seq")
        and src.get("opt_start_time") is None
        and not src.get("filter_subject")
    )


def source_key(src: Mapping[str, Any]) -> tuple[str, ...]:
    """What makes two sources the same (``composeIName``): name, external API, consumer, filters and destinations."""
    external, consumer = src.get("external"), src.get("consumer")
    transforms = _transforms(src)
    if transforms:
        filters = "\f".join(t.get("src") or FWC for t in transforms)
        destinations = "\f".join(t.get("dest") or FWC for t in transforms)
    else:
        filters, destinations = src.get("filter_subject") or FWC, FWC
    return (
        src.get("name", ""),
        "" if external is None else ":" + external.get("api", ""),
        "" if consumer is None else ":C=" + consumer.get("name", ""),
        filters,
        destinations,
    )


def _check_sources(cfg: StreamConfig, lookup: Lookup, origin_subjects: list[str]) -> None:
    seen: set[tuple[str, ...]] = set()
    consumers: set[tuple[str, str, str]] = set()
    for src in cfg["sources"] or []:
        if src is None or not is_valid_name(src.get("name", "")):
            raise api_error("JSSourceInvalidStreamName")
        key = source_key(src)
        if key in seen:
            raise api_error("JSSourceDuplicateDetected")
        seen.add(key)
        transforms = _transforms(src)
        if src.get("filter_subject") and transforms:
            raise api_error("JSSourceMultipleFiltersNotAllowed")
        _check_source_transforms(transforms)
        if not _consumer_ok(src):
            raise api_error("JSSourceDurableConsumerCfgInvalid")
        if src.get("consumer") is not None:
            consumer_key = (key[0], key[1], src["consumer"].get("name", ""))
            if consumer_key in consumers:
                raise api_error("JSSourceDurableConsumerDuplicateDetected")
            consumers.add(consumer_key)
        if src.get("external") is None:
            origin = lookup(src["name"])
            if origin is not None:
                origin_subjects.extend(origin["subjects"])
                if _too_small(cfg, origin):
                    raise api_error("JSSourceMaxMessageSizeTooBigErr")


def _check_source_transforms(transforms: list[Mapping[str, Any]]) -> None:
    for transform in transforms:
        src = transform.get("src", "")
        if src and not is_valid_subject(src):
            raise api_error("JSSourceInvalidSubjectFilter", err=f"invalid subject {src}")
        try:
            validate_mapping(src, transform.get("dest", ""))
        except TransformError as exc:
            raise api_error("JSSourceInvalidTransformDestination", err=str(exc)) from None
    for i, transform in enumerate(transforms):
        src = transform.get("src", "")
        if any(j != i and is_subset(src, other.get("src", "")) for j, other in enumerate(transforms)):
            raise api_error("JSSourceOverlappingSubjectFilters")


def _collect_prefixes(src: Mapping[str, Any] | None, deliver: list[str], api: list[str]) -> None:
    external = None if src is None else src.get("external")
    if external is None:
        return
    if external.get("deliver"):
        deliver.append(external["deliver"])
    if external.get("api"):
        api.append(external["api"])


def _check_prefixes(deliver_prefixes: list[str], api_prefixes: list[str], origin_subjects: list[str]) -> None:
    """External delivery prefixes must be literal and miss the origins' subjects; API prefixes miss ``$JS.API``."""
    for prefix in deliver_prefixes:
        if not _is_publish_subject(prefix):
            raise api_error("JSStreamInvalidExternalDeliverySubjErrF", prefix=prefix)
        for subject in origin_subjects:
            if overlap(subject, f"{prefix}.{subject}"):
                raise api_error("JSStreamExternalDelPrefixOverlapsErrF", prefix=prefix, subject=subject)
    for prefix in api_prefixes:
        if not _is_publish_subject(prefix):
            raise _invalid(f"stream external api prefix {quote_text(prefix)} must be a valid subject without wildcards")
        if overlap(prefix, JS_API_PREFIX):
            raise api_error("JSStreamExternalApiOverlapErrF", prefix=prefix, subject=JS_API_PREFIX)


def _check_cycles(cfg: StreamConfig, lookup: Lookup) -> None:
    """Walk the local streams sourced or mirrored: coming back to one already seen is a cycle.

    A source back to a seen stream only counts when its filter can match
    that stream's subjects; a mirror back to one always does.
    """
    to_visit = [cfg]
    visited: set[str] = set()
    while to_visit:
        current = to_visit.pop(0)
        visited.add(current["name"])
        for name, filter_subject in _local_origins(current):
            if name is None:
                continue
            if name in visited:
                if filter_subject is None or _overlaps(current["subjects"], filter_subject):
                    raise _invalid("detected cycle")
            else:
                origin = lookup(name)
                if origin is not None:
                    to_visit.append(origin)


def _local_origins(cfg: StreamConfig) -> Iterator[tuple[str | None, str | None]]:
    """The local sources' names and filters, then the local mirror's name (filter ``None``)."""
    for src in cfg["sources"] or []:
        if src.get("external") is None:
            yield src.get("name", ""), src.get("filter_subject", "")
    mirror = cfg["mirror"]
    if mirror is not None and mirror.get("external") is None:
        yield mirror.get("name", ""), None


def _overlaps(subjects: list[str], filter_subject: str) -> bool:
    return not filter_subject or any(overlap(subject, filter_subject) for subject in subjects)


def check_filters(cfg: StreamConfig) -> None:
    """A create checks the single filter of a mirror or source again, worded as an error of the create (10049).

    (The transforms' filters and destinations were checked by :func:`check`.)
    """
    mirror = cfg["mirror"]
    if mirror is not None and not _filter_ok(mirror):
        raise _create_error(f"subject filter '{mirror['filter_subject']}' for the mirror invalid subject")
    for src in cfg["sources"] or []:
        if not _filter_ok(src):
            raise _create_error(f"subject filter '{src['filter_subject']}' for the source: invalid subject")


def _filter_ok(src: Mapping[str, Any]) -> bool:
    filter_subject = src.get("filter_subject", "")
    return bool(_transforms(src)) or not filter_subject or is_valid_subject(filter_subject)


def _create_error(text: str) -> ApiError:
    return api_error("JSStreamCreateErrF", err=text)


def same_source(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """Go's ``reflect.DeepEqual`` of two mirrors: a start time must also be written with the same offset.

    (nats-server also tells ``Z`` from ``+00:00`` when its machine's zone is
    UTC; fakejs does not.)
    """
    return _comparable(a) == _comparable(b)


def _comparable(src: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if src is None:
        return None
    out = dict(src)
    start = out.get("opt_start_time")
    if start is not None:
        out["opt_start_time"] = (start.ns, start.offset)
    return out
