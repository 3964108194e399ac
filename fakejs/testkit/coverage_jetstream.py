"""The coverage page's JetStream details: config fields, pull request fields, status lines, error codes.

The facts of :mod:`fakejs.testkit.coverage`, for what a client puts inside
its JetStream requests and what it can hear back.  Status lines name the
:mod:`fakejs.jetstream.status` function that writes them (the test calls
it); error codes are sorted by whether fakejs answers with them anywhere
(the test looks for each error's name in fakejs's source).
"""

from __future__ import annotations

from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.config.stream import UNSUPPORTED, StreamConfig
from fakejs.jetstream.errors import BY_ERR_CODE
from fakejs.testkit.coverage import DIFFERS, REFUSED, SERVED, Feature

__all__ = [
    "ACKS",
    "ADVISORIES",
    "CONSUMER_FIELDS",
    "DIRECT_GET_FIELDS",
    "PULL_FIELDS",
    "STATUS_LINES",
    "STREAM_FIELDS",
    "UNANSWERED_ERRORS",
    "error_features",
]

_UNSUPPORTED = {key for key, _ in UNSUPPORTED}
REPLICAS = "more than 1 replica: 10074 on one server, as nats-server; served in [clusters](clusters.md)"
STREAM_NOTES = {
    "num_replicas": REPLICAS,
    "placement": "checked; placed, and moved by an update, in [clusters](clusters.md)",
}
CONSUMER_NOTES = {"num_replicas": REPLICAS}

STREAM_FIELDS: tuple[Feature, ...] = tuple(
    Feature(key, REFUSED, f"{key} is not supported by fakejs")
    if key in _UNSUPPORTED
    else Feature(key, SERVED, STREAM_NOTES.get(key, ""))
    for key in StreamConfig.__annotations__
)
CONSUMER_FIELDS: tuple[Feature, ...] = tuple(
    Feature(key, SERVED, CONSUMER_NOTES.get(key, "")) for key in ConsumerConfig.__annotations__
)
PULL_FIELDS: tuple[Feature, ...] = tuple(
    Feature(key, SERVED)
    for key in (
        "batch",
        "expires",
        "max_bytes",
        "no_wait",
        "idle_heartbeat",
        "group",
        "min_pending",
        "min_ack_pending",
        "id",
        "priority",
    )
)


DIRECT_GET_FIELDS: tuple[Feature, ...] = tuple(
    Feature(key, SERVED)
    for key in (
        "seq",
        "last_by_subj",
        "next_by_subj",
        "batch",
        "max_bytes",
        "multi_last",
        "up_to_seq",
        "up_to_time",
        "start_time",
        "no_hdr",
    )
)

# What a client sends on a delivered message's ``$JS.ACK.`` reply subject, and other JetStream replies.
ACKS: tuple[Feature, ...] = (
    Feature("empty, +ACK", SERVED, "with a reply subject: an empty confirmation, as nats-server"),
    Feature('-NAK, -NAK {"delay": <ns>}, -NAK <duration>', SERVED),
    Feature("+WPI", SERVED),
    Feature("+NXT [pull request]", SERVED),
    Feature("+TERM [reason]", SERVED, "the reason in the `MSG_TERMINATED` advisory"),
    Feature("$JS.FC. flow control replies", SERVED),
    Feature("<prefix>.<batch>.<flow>.<ok or fail>.<seq>.<op>.$FI reply subjects (fast batches)", SERVED),
    Feature(
        "$JS.SNAPSHOT.ACK., $JS.SNAPSHOT.RESTORE.",
        DIFFERS,
        "nobody listens: snapshots and restores are refused at the API (10064, 10062)",
    ),
)


NOT_PUBLISHED = "not published"
ADVISORY_NOTES = {
    "STREAM.SNAPSHOT_CREATE.<stream>": NOT_PUBLISHED + ": snapshots are refused",
    "STREAM.SNAPSHOT_COMPLETE.<stream>": NOT_PUBLISHED + ": snapshots are refused",
    "STREAM.RESTORE_CREATE.<stream>": NOT_PUBLISHED + ": restores are refused",
    "STREAM.RESTORE_COMPLETE.<stream>": NOT_PUBLISHED + ": restores are refused",
    "SERVER.OUT_OF_STORAGE": NOT_PUBLISHED + ": fakejs's store does not run out of disk space",
    "SERVER.META_RESCUE": NOT_PUBLISHED + ": fakejs does not model quorum",
}
CLUSTER_ADVISORY = "in clusters, for replicated assets"
QUORUM_ADVISORY = "in clusters, from a replica without quorum: 10 s after, then every 20 s (cluster clock)"
# Subjects under $JS.EVENT.ADVISORY. (and the ack metric): what a client subscribing hears.
ADVISORIES: tuple[Feature, ...] = tuple(
    Feature(name, DIFFERS, ADVISORY_NOTES[name]) if name in ADVISORY_NOTES else Feature(name, SERVED, how)
    for name, how in (
        ("API", ""),
        ("API.LIMIT_REACHED", "in the system account, at `request_queue_limit` / `info_queue_limit` 1"),
        ("STREAM.CREATED.<stream>", ""),
        ("STREAM.UPDATED.<stream>", ""),
        ("STREAM.DELETED.<stream>", ""),
        ("STREAM.SNAPSHOT_CREATE.<stream>", ""),
        ("STREAM.SNAPSHOT_COMPLETE.<stream>", ""),
        ("STREAM.RESTORE_CREATE.<stream>", ""),
        ("STREAM.RESTORE_COMPLETE.<stream>", ""),
        ("STREAM.LEADER_ELECTED.<stream>", CLUSTER_ADVISORY),
        ("STREAM.QUORUM_LOST.<stream>", QUORUM_ADVISORY),
        ("STREAM.BATCH_ABANDONED.<stream>", ""),
        ("CONSUMER.CREATED.<stream>.<consumer>", ""),
        ("CONSUMER.DELETED.<stream>.<consumer>", ""),
        ("CONSUMER.PAUSE.<stream>.<consumer>", ""),
        ("CONSUMER.PINNED.<stream>.<consumer>", ""),
        ("CONSUMER.UNPINNED.<stream>.<consumer>", ""),
        ("CONSUMER.MAX_DELIVERIES.<stream>.<consumer>", ""),
        ("CONSUMER.MSG_NAKED.<stream>.<consumer>", ""),
        ("CONSUMER.MSG_TERMINATED.<stream>.<consumer>", ""),
        ("CONSUMER.LEADER_ELECTED.<stream>.<consumer>", CLUSTER_ADVISORY),
        ("CONSUMER.QUORUM_LOST.<stream>.<consumer>", QUORUM_ADVISORY),
        ("DOMAIN.LEADER_ELECTED", "in the system account, in clusters, from a new meta leader"),
        ("SERVER.OUT_OF_STORAGE", ""),
        ("SERVER.REMOVED", "in the system account, in clusters, after `$JS.API.SERVER.REMOVE`"),
        ("SERVER.META_RESCUE", ""),
        ("$JS.EVENT.METRIC.CONSUMER.ACK.<stream>.<consumer>", "with `sample_freq`"),
    )
)


def _line(text: str, writer: str, *arguments: object) -> tuple[Feature, str, tuple[object, ...]]:
    return Feature(text, SERVED), writer, arguments


NEVER_FULL = "never sent: fakejs takes each message as it comes, its queue is never full"
# (row, the status module's function writing it, arguments to call it with); "" for no function.
STATUS_LINES: tuple[tuple[Feature, str, tuple[object, ...]], ...] = (
    _line("100 Idle Heartbeat", "idle_heartbeat", 1, 1),
    _line("100 FlowControl Request", "flow_control_request"),
    _line("204 EOB", "end_of_batch", 0, 0),
    _line("400 Bad Request - <reason>", "bad_request", "x"),
    _line("404 No Messages", "no_messages"),
    _line("404 Message Not Found", "message_not_found"),
    _line("404 No Results", "no_results"),
    _line("408 Request Timeout", "request_timeout", 0, 0),
    _line("408 Requests Pending", "requests_pending"),
    _line("408 Interest Expired", "interest_expired", 0, 0),
    _line("408 Empty Request", "empty_request"),
    _line("408 Malformed Request", "malformed_request"),
    _line("408 Bad Request", "direct_bad_request"),
    _line("409 Exceeded MaxWaiting", "exceeded_max_waiting"),
    _line("409 Exceeded MaxRequestBatch of <n>", "exceeded_max_request_batch", 1),
    _line("409 Exceeded MaxRequestExpires of <duration>", "exceeded_max_request_expires", 10**9),
    _line("409 Exceeded MaxRequestMaxBytes of <n>", "exceeded_max_request_max_bytes", 1),
    _line("409 Message Size Exceeds MaxBytes", "message_size_exceeds_max_bytes", 0, 0),
    _line("409 Batch Completed", "batch_completed", 0, 0),
    _line("409 Consumer Deleted", "consumer_deleted"),
    _line("409 Consumer is push based", "consumer_is_push_based"),
    _line("409 Leadership Change", "leadership_change"),
    _line("409 Server Shutdown", "server_shutdown", 0, 0),
    _line("412 Required Api Level", "required_api_level"),
    _line("413 Too Many Results", "too_many_results"),
    _line("423 Nats-Pin-Id mismatch", "pin_id_mismatch"),
    _line("423 Nats-Wrong-Pin-Id", "wrong_pin_id", 0, 0),
    (Feature("429 Too Many Requests", DIFFERS, NEVER_FULL), "", ()),
    (Feature("500 <store error>", DIFFERS, "never sent: fakejs's store does not fail"), "", ()),
    (
        Feature(
            "204 (snapshot end), 408 No Interest, 408 No Flow Response", DIFFERS, "never sent: snapshots are refused"
        ),
        "",
        (),
    ),
    (Feature("503 (no responders)", SERVED, "the core server's, with `Nats-Subject`"), "", ()),
)

CLUSTER_ONLY = "about clusters, placement or moves: answered where fakejs has the situation, or never"
# Errors fakejs never answers with, by why (the rest it answers with where nats-server does).
UNANSWERED_ERRORS: dict[int, str] = {
    **dict.fromkeys((10066, 10067, 10068, 10073), "templates were removed in nats-server 2.14: it never answers them either"),
    **dict.fromkeys((10015, 10042, 10072, 10130), "snapshots and restores are refused (10064, 10062)"),
    **dict.fromkeys(
        (10004, 10006, 10007, 10009, 10011, 10029, 10041, 10045, 10048, 10061,
         10194, 10195, 10224, 10226, 10228),
        CLUSTER_ONLY,
    ),
    10167: NEVER_FULL,
    10158: "never: fakejs stores a message before it reads the next, no duplicate is ever in process",
    10163: "never: fakejs knows each subject's last sequence at once",
    **dict.fromkeys(
        (10016, 10019, 10032, 10033, 10035, 10050, 10053, 10063, 10076, 10078, 10085, 10092, 10093,
         10096, 10104, 10105, 10106, 10117, 10125, 10180, 10181, 10182),
        "never answered by fakejs",
    ),
}  # fmt: skip


def error_features() -> tuple[Feature, ...]:
    """One row per JetStream API error code."""
    rows = []
    for code, spec in sorted(BY_ERR_CODE.items()):
        name = f"{code} {spec.description}"
        reason = UNANSWERED_ERRORS.get(code)
        rows.append(Feature(name, DIFFERS, reason) if reason else Feature(name, SERVED))
    return tuple(rows)
