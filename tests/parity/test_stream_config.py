"""Stream configuration on both targets: defaults, validation, and update rules.

Every expectation here is what nats-server 2.15.1 answers, checked against the
binary (not the source snapshot, which differs in places -- see the notes on
check order).  Replies are compared whole: a create/update echo is compared
as the normalised response (``created``/``ts`` become ``"<ts>"``), an error as
``{"type": ..., "error": {"code", "err_code", "description"}}``.

Mirror and sources configuration is checked on both targets in
``test_stream_sources_config.py``, their running in ``test_mirrors.py`` and
``test_sources.py``; atomic and fast batches in ``test_atomic_batch.py`` and
``test_fast_batch.py``; message schedules in ``test_message_schedules.py``.
Subject transforms and republish are checked on both targets in
``test_stream_transforms.py``; counters, s2 compression and async persistence
in ``test_stream_counters.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from nats.errors import TimeoutError as NatsTimeoutError

from tests.harness.js import MS, SEC, api, normalize
from tests.harness.stream_config import CREATE, UPDATE, create, created, error, invalid, update, updated
from tests.harness.streams import EMPTY_STATE, OMIT, meta
from tests.harness.streams import stream_config as config
from tests.harness.wait import WAIT

MIN = 60 * SEC
HOUR = 60 * MIN
HUGE = 2**62  # more bytes than any machine's JetStream store or memory

NAME_CHARS = "stream name is required and can not contain '.', '*', '>', '\\', '/'"


def renamed(value: Any, name: str) -> Any:
    """A body, config or reply written for stream "S", for a stream called ``name``.

    Loops use a new name per case and keep every stream: nats-server removes
    an account's emptied streams directory in the background after a delete,
    and a create racing that fails with 10049 "error creating store for
    stream".
    """
    if isinstance(value, dict):
        out = {key: renamed(item, name) for key, item in value.items()}
        if out.get("name") == "S":
            out["name"] = name
        if out.get("subjects") == ["S"]:
            out["subjects"] = [name]
        return out
    if isinstance(value, list):
        return [renamed(item, name) for item in value]
    return value


def pedantic(description: str, kind: str = CREATE) -> dict[str, Any]:
    return error(400, 10157, f"pedantic mode: {description}", kind)


def bad_json(description: str, kind: str = CREATE) -> dict[str, Any]:
    return error(400, 10025, f"invalid JSON: {description}", kind)


async def must_create(nc, body: dict) -> dict:
    reply = await create(nc, body)
    assert "error" not in reply, reply
    return reply


async def info(nc, name: str) -> dict:
    return normalize(await api(nc, f"$JS.API.STREAM.INFO.{name}", b""))


async def state(nc, name: str) -> dict:
    return (await info(nc, name))["state"]


async def publish(nc, subject: str, payload: bytes = b"") -> dict:
    return json.loads((await nc.request(subject, payload, timeout=WAIT)).data)


# ---------------------------------------------------------------------------
# Defaults: what the server echoes for minimal configurations.
# ---------------------------------------------------------------------------

DEFAULT_CASES = {
    "name_only": ({"name": "S"}, config()),
    "subjects": ({"name": "S", "subjects": ["orders.*", "events.>"]}, config(subjects=["orders.*", "events.>"])),
    "empty_subjects_list": ({"name": "S", "subjects": []}, config()),
    "memory_storage": ({"name": "S", "storage": "memory"}, config(storage="memory")),
    "interest_retention": ({"name": "S", "retention": "interest"}, config(retention="interest")),
    "workqueue_retention": ({"name": "S", "retention": "workqueue"}, config(retention="workqueue")),
    # discard is parsed case-insensitively (the only enum that is) and echoed lower-case
    "discard_new_any_case": ({"name": "S", "discard": "NEW"}, config(discard="new")),
    # duplicate_window defaults to 2m, or to max_age when max_age is smaller
    "max_age_below_2m_sets_window": ({"name": "S", "max_age": SEC}, config(max_age=SEC, duplicate_window=SEC)),
    "max_age_minimum_100ms": ({"name": "S", "max_age": 100 * MS}, config(max_age=100 * MS, duplicate_window=100 * MS)),
    "max_age_above_2m_keeps_2m": ({"name": "S", "max_age": HOUR}, config(max_age=HOUR)),
    "window_explicit_without_max_age": ({"name": "S", "duplicate_window": 3 * HOUR}, config(duplicate_window=3 * HOUR)),
    # 0 and anything below -1 become -1; replicas 0 becomes 1
    "limits_normalised": (
        {
            "name": "S",
            "max_msgs": 0,
            "max_bytes": -5,
            "max_msgs_per_subject": -2,
            "max_msg_size": -9,
            "max_consumers": -100,
            "num_replicas": 0,
        },
        config(),
    ),
    "limits_kept": (
        {
            "name": "S",
            "max_msgs": 10,
            "max_bytes": 4096,
            "max_msgs_per_subject": 2,
            "max_msg_size": 2**31 - 1,
            "max_consumers": 2**31,
        },
        config(max_msgs=10, max_bytes=4096, max_msgs_per_subject=2, max_msg_size=2**31 - 1, max_consumers=2**31),
    ),
    # every optional feature spelled out with its "off" value is the same as leaving it out
    "explicit_off_values": (
        {
            "name": "S",
            "description": "",
            "subjects": None,
            "max_msgs": None,
            "no_ack": False,
            "duplicate_window": 0,
            "placement": None,
            "mirror": None,
            "sources": [],
            "compression": "none",
            "first_seq": 0,
            "subject_transform": None,
            "republish": None,
            "allow_direct": False,
            "mirror_direct": False,
            "discard_new_per_subject": False,
            "sealed": False,
            "consumer_limits": None,
            "allow_msg_ttl": False,
            "subject_delete_marker_ttl": 0,
            "allow_msg_counter": False,
            "allow_atomic": False,
            "allow_msg_schedules": False,
            "persist_mode": "default",
            "allow_batched": False,
            "metadata": {},
            "pedantic": False,
        },
        config(),
    ),
    "consumer_limits_not_validated": (
        {"name": "S", "consumer_limits": {"inactive_threshold": -1, "max_ack_pending": -5}},
        config(consumer_limits={"inactive_threshold": -1, "max_ack_pending": -5}),
    ),
    "consumer_limits_zero_omitted": (
        {"name": "S", "consumer_limits": {"inactive_threshold": 0, "max_ack_pending": 0}},
        config(),
    ),
    # user keys are kept; _nats.ver/_nats.level/_nats.req.level sent by the client are replaced
    "metadata": (
        {
            "name": "S",
            "metadata": {
                "team": "a",
                "_nats.custom": "kept",
                "_nats.ver": "1.0",
                "_nats.level": "9",
                "_nats.req.level": "7",
            },
        },
        config(metadata=meta(0, team="a", **{"_nats.custom": "kept"})),
    ),
    "allow_msg_ttl_requires_level_1": (
        {"name": "S", "allow_msg_ttl": True},
        config(allow_msg_ttl=True, metadata=meta(1)),
    ),
    # a subject delete marker TTL turns on message TTLs and roll-ups, and silently drops deny_purge
    "marker_ttl_forces_ttl_and_rollup": (
        {"name": "S", "subject_delete_marker_ttl": SEC, "deny_purge": True},
        config(subject_delete_marker_ttl=SEC, allow_msg_ttl=True, allow_rollup_hdrs=True, metadata=meta(1)),
    ),
    # an all-zero placement is dropped; an empty (non-null) tags list makes it a kept, empty object
    "placement_empty_dropped": ({"name": "S", "placement": {"cluster": ""}}, config()),
    "placement_empty_tags_kept": ({"name": "S", "placement": {"tags": []}}, config(placement={})),
    "placement_kept": (
        {"name": "S", "placement": {"cluster": "east", "tags": ["ssd"]}},
        config(placement={"cluster": "east", "tags": ["ssd"]}),
    ),
    "flags": (
        {
            "name": "S",
            "description": "d",
            "no_ack": True,
            "deny_delete": True,
            "deny_purge": True,
            "allow_direct": True,
        },
        config(description="d", no_ack=True, deny_delete=True, deny_purge=True, allow_direct=True),
    ),
    "rollups_and_per_subject_discard": (
        {
            "name": "S",
            "allow_rollup_hdrs": True,
            "discard": "new",
            "discard_new_per_subject": True,
            "max_msgs_per_subject": 1,
        },
        config(allow_rollup_hdrs=True, discard="new", discard_new_per_subject=True, max_msgs_per_subject=1),
    ),
    # names: 255 bytes is the limit (bytes, not characters); '$', '-', '_' and non-ASCII are fine
    "name_255_bytes": ({"name": "é" * 127 + "x"}, config("é" * 127 + "x")),
    "name_other_characters": ({"name": "$a-b_c%#"}, config("$a-b_c%#")),
}


@pytest.mark.parametrize("body,expected", list(DEFAULT_CASES.values()), ids=list(DEFAULT_CASES))
async def test_create_echoes_defaults(nc, body: dict, expected: dict) -> None:
    assert await create(nc, body) == created(expected)
    assert (await info(nc, expected["name"]))["config"] == expected


async def test_first_seq_sets_initial_state(nc) -> None:
    reply = await create(nc, {"name": "S", "first_seq": 5})
    assert reply == created(config(first_seq=5), {**EMPTY_STATE, "first_seq": 5, "last_seq": 4})
    assert await publish(nc, "S") == {"stream": "S", "seq": 5}


async def test_allow_direct_is_never_turned_on_by_the_server(nc) -> None:
    # Settings that look like a KV bucket, TTLs, markers and $KV subjects all
    # leave allow_direct false: only the client turns it on.
    bodies = [
        {
            "name": "KV",
            "subjects": ["$KV.KV.>"],
            "max_msgs_per_subject": 1,
            "allow_rollup_hdrs": True,
            "deny_delete": True,
            "discard": "new",
        },
        {"name": "T", "allow_msg_ttl": True, "subject_delete_marker_ttl": SEC},
        {"name": "D", "discard": "new", "discard_new_per_subject": True, "max_msgs_per_subject": 1},
        {"name": "W", "retention": "workqueue", "storage": "memory"},
    ]
    for body in bodies:
        reply = await must_create(nc, body)
        assert (reply["config"]["allow_direct"], reply["config"]["mirror_direct"]) == (False, False), body
    # ... and it can be switched on and off by an update.
    assert (await update(nc, {"name": "W", "retention": "workqueue", "storage": "memory", "allow_direct": True}))[
        "config"
    ]["allow_direct"] is True
    assert (await update(nc, {"name": "W", "retention": "workqueue", "storage": "memory"}))["config"][
        "allow_direct"
    ] is False


async def test_create_is_idempotent_for_the_same_config(nc) -> None:
    first = await api(nc, "$JS.API.STREAM.CREATE.S", {"name": "S", "subjects": ["s.>"]})
    assert "error" not in first
    # identical, or identical once defaults are applied, or differing only in server-set metadata
    for body in (
        {"name": "S", "subjects": ["s.>"]},
        {"name": "S", "subjects": ["s.>"], "max_msgs": 0, "num_replicas": 0},
        {"name": "S", "subjects": ["s.>"], "metadata": {"_nats.ver": "0.1"}},
    ):
        again = await api(nc, "$JS.API.STREAM.CREATE.S", body)
        assert normalize(again) == created(config(subjects=["s.>"])), body
        assert again["created"] == first["created"]
    for body in (
        {"name": "S", "subjects": ["s.>"], "max_msgs": 5},
        {"name": "S", "subjects": ["s.>"], "metadata": {"team": "a"}},
        {"name": "S", "subjects": ["t.>"]},
    ):
        assert await create(nc, body) == error(
            400, 10058, "stream name already in use with a different configuration"
        ), body


# ---------------------------------------------------------------------------
# Validation on create: one rule per case.
# ---------------------------------------------------------------------------

LONG_DESCRIPTION = "x" * 4097
PEDANTIC_FIELDS = ("max_msgs", "max_bytes", "max_msgs_per_subject", "max_msg_size", "max_consumers")

# rule -> (bodies, the error every body gets, or one error per body)
REJECT_CASES: dict[str, tuple[list[dict], dict | list[dict]]] = {
    # names
    "name_characters": ([{"name": "a*"}, {"name": "a>"}, {"name": "a\fb"}], invalid(NAME_CHARS)),
    "name_too_long": (
        [{"name": "n" * 256}, {"name": "é" * 128}],
        invalid("stream name is too long, maximum allowed is 255"),
    ),
    "name_path_separators": (
        [{"name": "a/b"}, {"name": "a\\b"}],
        error(400, 10128, "Stream name can not contain path separators"),
    ),
    # subjects
    "subject_invalid": (
        [{"name": "S", "subjects": [s]} for s in ("a..b", "", "a b", "a.>.b", ".a", "a.")],
        invalid("invalid subject"),
    ),
    # a duplicate is reported as an overlap; the first subject (in list order) that overlaps a later one is named first
    "subject_overlap_within_stream": (
        [
            *(
                {"name": "S", "subjects": subjects}
                for subjects in (["a", "a"], ["a.*", "a.b"], ["x", "a.b", "a.>"], ["a", "a.*", "a.b"])
            ),
            {"name": "S", "subjects": [">", ">"], "no_ack": True},
        ],
        [
            invalid('subject "a" overlaps with "a"'),
            invalid('subject "a.*" overlaps with "a.b"'),
            invalid('subject "a.b" overlaps with "a.>"'),
            invalid('subject "a.*" overlaps with "a.b"'),
            invalid('subject ">" overlaps with ">"'),
        ],
    ),
    "capture_all_needs_no_ack": (
        [{"name": "S", "subjects": [">"]}],
        invalid("capturing all subjects requires no-ack to be true"),
    ),
    "capture_all_needs_r1": (
        [{"name": "S", "subjects": [">"], "no_ack": True, "num_replicas": 3}],
        invalid("capturing all subjects requires replicas of 1"),
    ),
    "jetstream_api_subjects_need_no_ack": (
        [{"name": "S", "subjects": [s]} for s in ("$JS.API.>", "$JS.>", "$JS.*.x", "$JSC.>", "$NRG.x", "*.>", "*.*")],
        invalid("subjects that overlap with jetstream api require no-ack to be true"),
    ),
    "system_subjects_need_no_ack": (
        [{"name": "S", "subjects": [s]} for s in ("$SYS.>", "$SYS.x", "$SYS.REQ.*")],
        invalid("subjects that overlap with system api require no-ack to be true"),
    ),
    # ages and windows
    "max_age_negative": ([{"name": "S", "max_age": -1}], invalid("max age can not be negative")),
    "max_age_below_100ms": (
        [{"name": "S", "max_age": 99 * MS}, {"name": "S", "max_age": 1}],
        invalid("max age needs to be >= 100ms"),
    ),
    "window_negative": ([{"name": "S", "duplicate_window": -1}], invalid("duplicates window can not be negative")),
    "window_below_100ms": (
        [{"name": "S", "duplicate_window": 99 * MS}, {"name": "S", "duplicate_window": 1}],
        invalid("duplicates window needs to be >= 100ms"),
    ),
    "window_above_max_age": (
        [{"name": "S", "max_age": SEC, "duplicate_window": SEC + 1}],
        invalid("duplicates window can not be larger then max age"),
    ),
    # replicas and resources
    "replicas_negative": ([{"name": "S", "num_replicas": -1}], error(400, 10133, "replicas count cannot be negative")),
    "replicas_above_5": ([{"name": "S", "num_replicas": 6}], invalid("maximum replicas is 5")),
    "replicas_need_cluster": (
        [{"name": "S", "num_replicas": n} for n in (2, 3, 5)],
        error(500, 10074, "replicas > 1 not supported in non-clustered mode"),
    ),
    "max_bytes_above_store": (
        [{"name": "S", "max_bytes": HUGE}, {"name": "S", "max_bytes": 2**63 - 1}],
        error(500, 10047, "insufficient storage resources available"),
    ),
    "max_bytes_above_memory": (
        [{"name": "S", "max_bytes": HUGE, "storage": "memory"}],
        error(500, 10028, "insufficient memory resources available"),
    ),
    # combinations
    "rollups_need_purge": (
        [{"name": "S", "deny_purge": True, "allow_rollup_hdrs": True}],
        invalid("roll-ups require the purge permission"),
    ),
    "per_subject_discard_needs_discard_new": (
        [
            {"name": "S", "discard_new_per_subject": True},
            {"name": "S", "discard_new_per_subject": True, "max_msgs_per_subject": 5},
        ],
        invalid("discard new per subject requires discard new policy to be set"),
    ),
    "per_subject_discard_needs_per_subject_limit": (
        [{"name": "S", "discard": "new", "discard_new_per_subject": True, "max_msgs_per_subject": m} for m in (0, -1)],
        invalid("discard new per subject requires max msgs per subject > 0"),
    ),
    "marker_ttl_below_1s": (
        [{"name": "S", "subject_delete_marker_ttl": SEC - 1}],
        invalid("subject delete marker TTL must be at least 1 second"),
    ),
    "marker_ttl_negative": (
        [{"name": "S", "subject_delete_marker_ttl": -1}],
        invalid("subject delete marker TTL must not be negative"),
    ),
    "sealed_on_create": ([{"name": "S", "sealed": True}], invalid("stream configuration for create can not be sealed")),
    "mirror_direct_without_mirror": (
        [{"name": "S", "mirror_direct": True}],
        invalid("stream has no mirror but does have mirror direct"),
    ),
    "placement_preferred": (
        [
            {"name": "S", "placement": {"preferred": "n1"}},
            {"name": "S", "placement": {"cluster": "c", "preferred": "n1"}},
        ],
        invalid("preferred server not permitted in placement"),
    ),
    "description_above_4096_bytes": (
        [{"name": "S", "description": LONG_DESCRIPTION}, {"name": "S", "description": "é" * 2049}],
        invalid("stream description is too long, maximum allowed is 4096"),
    ),
    # the server adds _nats.req.level ("0": 16 bytes) before checking, so 131056 bytes are left for user keys+values
    "metadata_above_limit": (
        [{"name": "S", "metadata": {"k": "v" * 131056}}],
        invalid("stream metadata exceeds maximum size of 131072 bytes"),
    ),
    # pedantic mode turns silent fixes into errors
    "pedantic_limits": (
        [{"name": "S", field: -2, "pedantic": True} for field in PEDANTIC_FIELDS],
        [pedantic(f"{field} must be set to -1") for field in PEDANTIC_FIELDS],
    ),
    "pedantic_window_above_max_age": (
        [{"name": "S", "max_age": SEC, "pedantic": True}],
        pedantic("duplicate window cannot be bigger than max age"),
    ),
    # ...but these two pedantic errors are plain 10052 errors
    "pedantic_marker_ttl": (
        [
            {"name": "S", "subject_delete_marker_ttl": SEC, "pedantic": True},
            {"name": "S", "subject_delete_marker_ttl": SEC, "allow_rollup_hdrs": True, "pedantic": True},
            {"name": "S", "subject_delete_marker_ttl": SEC, "allow_msg_ttl": True, "pedantic": True},
        ],
        [
            invalid("subject delete marker cannot be set if message TTLs are disabled"),
            invalid("subject delete marker cannot be set if message TTLs are disabled"),
            invalid("subject delete marker cannot be set if roll-ups are disabled"),
        ],
    ),
}


@pytest.mark.parametrize("bodies,expected", list(REJECT_CASES.values()), ids=list(REJECT_CASES))
async def test_create_rejected(nc, bodies: list[dict], expected: dict | list[dict]) -> None:
    wanted = expected if isinstance(expected, list) else [expected] * len(bodies)
    assert [await create(nc, body) for body in bodies] == wanted
    assert (await api(nc, "$JS.API.STREAM.NAMES", b""))["streams"] is None


ACCEPTED_SUBJECTS = [
    {"subjects": ["$JS.EVENT.>"]},
    {"subjects": ["$JS.EVENT.ADVISORY.>"]},
    {"subjects": ["$SYS.ACCOUNT.>"]},
    {"subjects": ["$SYS.ACCOUNT.x"]},
    {"subjects": ["*"]},
    {"subjects": ["a.*x"]},
    {"subjects": [">"], "no_ack": True},
    {"subjects": ["$JS.API.>"], "no_ack": True},
    {"subjects": ["$SYS.x"], "no_ack": True},
]


@pytest.mark.parametrize("extra", ACCEPTED_SUBJECTS, ids=[",".join(e["subjects"]) for e in ACCEPTED_SUBJECTS])
async def test_subjects_accepted(nc, extra: dict) -> None:
    # One server per case: several cases overlap (">" with everything), and
    # deleting a stream to make room races nats-server's removal of the
    # then-empty streams directory (10049 "error creating store for stream").
    reply = await create(nc, {"name": "S", **extra})
    # (state is not compared: streams on $JS.EVENT.> may already hold advisories)
    assert (reply.get("config"), reply.get("did_create")) == (config("S", **extra), True), reply


async def test_pedantic_still_fixes_zero_values(nc) -> None:
    body = {
        "name": "S",
        "max_msgs": 0,
        "max_bytes": 0,
        "max_consumers": 0,
        "num_replicas": 0,
        "max_age": SEC,
        "duplicate_window": SEC,
        "pedantic": True,
    }
    assert await create(nc, body) == created(config(max_age=SEC, duplicate_window=SEC))


async def test_name_in_subject_must_match_body(nc) -> None:
    mismatch = error(400, 10056, "stream name in subject does not match request")
    assert await create(nc, {"name": "OTHER"}, name="S") == mismatch
    assert await create(nc, {"subjects": ["x"]}, name="S") == mismatch
    assert await create(nc, {"name": ""}, name="S") == mismatch
    assert await create(nc, b"", name="S") == mismatch
    assert await create(nc, b"null", name="S") == mismatch


async def test_an_update_checks_its_configuration_before_its_name(nc) -> None:
    assert "error" not in await create(nc, {"name": "S", "subjects": ["s"]})
    body = {"name": "OTHER", "subjects": ["s"], "discard": "new", "discard_new_per_subject": True}
    assert await update(nc, body, name="S") == invalid(
        "discard new per subject requires max msgs per subject > 0", UPDATE
    )
    mismatch = error(400, 10056, "stream name in subject does not match request", UPDATE)
    assert await update(nc, {"name": "OTHER", "subjects": ["s"]}, name="S") == mismatch


async def test_dotted_name_reaches_no_handler(nc) -> None:
    # "$JS.API.STREAM.CREATE.a.b" has one token too many: nothing answers.
    with pytest.raises(NatsTimeoutError):
        await nc.request("$JS.API.STREAM.CREATE.a.b", b'{"name":"a.b"}', timeout=0.5)


async def test_name_rules_via_update(nc) -> None:
    # UPDATE validates the body before comparing names, so names that cannot
    # appear in a subject token still reach the name check.
    for name in ("", "a b", "a\tb", "a\rb", "a\nb", "a.b", "a/b", "a\\b"):
        assert await update(nc, {"name": name}, name="X") == invalid(NAME_CHARS, UPDATE), repr(name)
    assert await update(nc, b"", name="X") == invalid(NAME_CHARS, UPDATE)


ENUM_CASES = {
    "storage": ({"storage": "disk"}, bad_json('can not unmarshal "\\"disk\\""')),
    "storage_case": ({"storage": "File"}, bad_json('can not unmarshal "\\"File\\""')),
    "storage_number": ({"storage": 5}, bad_json('can not unmarshal "5"')),
    "retention": ({"retention": "limit"}, bad_json('can not unmarshal "\\"limit\\""')),
    "retention_case": ({"retention": "Limits"}, bad_json('can not unmarshal "\\"Limits\\""')),
    "retention_null": ({"retention": None}, bad_json('can not unmarshal "null"')),
    "discard": ({"discard": "newest"}, bad_json('can not unmarshal "\\"newest\\""')),
    "discard_empty": ({"discard": ""}, bad_json('can not unmarshal "\\"\\""')),
    "persist_mode": ({"persist_mode": "sync"}, bad_json('can not unmarshal "\\"sync\\""')),
    "persist_mode_case": ({"persist_mode": "Async"}, bad_json('can not unmarshal "\\"Async\\""')),
    "compression": ({"compression": "gzip"}, bad_json("unknown compression algorithm")),
    "compression_case": ({"compression": "S2"}, bad_json("unknown compression algorithm")),
    "compression_null": ({"compression": None}, bad_json("unknown compression algorithm")),
    "compression_number": ({"compression": 5}, bad_json("json: cannot unmarshal number into Go value of type string")),
    "first_enum_wins": ({"retention": "x", "storage": "y"}, bad_json('can not unmarshal "\\"x\\""')),
    "unknown_field": ({"bogus_field": 1}, bad_json('json: unknown field "bogus_field"')),
    "unknown_nested_field": ({"consumer_limits": {"bogus": 1}}, bad_json('json: unknown field "bogus"')),
    "wrong_type": (
        {"num_replicas": "1"},
        bad_json("json: cannot unmarshal string into Go struct field StreamConfigRequest.num_replicas of type int"),
    ),
    "wrong_type_list": (
        {"subjects": "a"},
        bad_json("json: cannot unmarshal string into Go struct field StreamConfigRequest.subjects of type []string"),
    ),
    "wrong_type_duration": (
        {"max_age": "1s"},
        bad_json(
            "json: cannot unmarshal string into Go struct field StreamConfigRequest.max_age of type time.Duration"
        ),
    ),
    "wrong_type_metadata": (
        {"metadata": {"a": 1}},
        bad_json("json: cannot unmarshal number into Go struct field StreamConfigRequest.metadata.a of type string"),
    ),
    "int32_overflow": (
        {"max_msg_size": 2**31},
        bad_json(
            "json: cannot unmarshal number 2147483648 into Go struct field StreamConfigRequest.max_msg_size of type int32"
        ),
    ),
    "int64_overflow": (
        {"max_msgs": 2**63},
        bad_json(
            "json: cannot unmarshal number 9223372036854775808 into Go struct field StreamConfigRequest.max_msgs of type int64"
        ),
    ),
    "unsigned_negative": (
        {"first_seq": -1},
        bad_json("json: cannot unmarshal number -1 into Go struct field StreamConfigRequest.first_seq of type uint64"),
    ),
    "fraction": (
        {"max_msgs": 1.5},
        bad_json("json: cannot unmarshal number 1.5 into Go struct field StreamConfigRequest.max_msgs of type int64"),
    ),
}


async def test_invalid_values_and_enum_texts(nc) -> None:
    got = {key: await create(nc, {"name": "S", **body}) for key, (body, _) in ENUM_CASES.items()}
    assert got == {key: want for key, (_, want) in ENUM_CASES.items()}
    # JSON errors come before the name check
    assert await create(nc, {"name": "OTHER", "bogus": 1}, name="S") == bad_json('json: unknown field "bogus"')
    assert await create(nc, b"{", name="S") == bad_json("unexpected EOF")
    assert await create(nc, b"[]", name="S") == bad_json(
        "json: cannot unmarshal array into Go value of type server.StreamConfigRequest"
    )


# When a config breaks several rules, the first check in this order answers:
# JSON -> name in subject (10056) -> path separators (10128) -> sealed -> mirror_direct
# -> name chars -> name length -> description -> metadata -> replicas > 5 -> replicas < 0
# -> pedantic limits (max_msgs, max_msgs_per_subject, max_bytes, max_msg_size, max_consumers)
# -> max_age -> duplicate window -> rollups/purge -> (counter) -> discard_new_per_subject
# -> marker TTL -> (schedules, persist mode, mirror, sources) -> subjects, each subject in turn:
#    valid, '>' rules, API overlaps, overlap with later subjects -> (subject_transform, republish)
# -> placement preferred -> replicas > 1 (10074) -> existing stream (10058)
# -> resources (10047/10028) -> other streams (10065).   (parenthesised: the newer features)
ORDER_CASES = {
    "json_before_name_match": ({"name": "X", "bogus": 1}, "S", bad_json('json: unknown field "bogus"')),
    "name_match_before_sealed": (
        {"name": "X", "sealed": True},
        "S",
        error(400, 10056, "stream name in subject does not match request"),
    ),
    "path_separator_before_sealed": (
        {"name": "a/b", "sealed": True},
        "a/b",
        error(400, 10128, "Stream name can not contain path separators"),
    ),
    "sealed_before_name_chars": (
        {"name": "a*", "sealed": True},
        "a*",
        invalid("stream configuration for create can not be sealed"),
    ),
    "sealed_before_mirror_direct": (
        {"name": "S", "sealed": True, "mirror_direct": True},
        "S",
        invalid("stream configuration for create can not be sealed"),
    ),
    "mirror_direct_before_config": (
        {"name": "S", "mirror_direct": True, "max_age": -1},
        "S",
        invalid("stream has no mirror but does have mirror direct"),
    ),
    "name_before_description": ({"name": "a*", "description": LONG_DESCRIPTION}, "a*", invalid(NAME_CHARS)),
    "name_length_before_description": (
        {"name": "n" * 256, "description": LONG_DESCRIPTION},
        "n" * 256,
        invalid("stream name is too long, maximum allowed is 255"),
    ),
    "description_before_metadata": (
        {"name": "S", "description": LONG_DESCRIPTION, "metadata": {"k": "v" * 200_000}},
        "S",
        invalid("stream description is too long, maximum allowed is 4096"),
    ),
    "metadata_before_replicas": (
        {"name": "S", "metadata": {"k": "v" * 200_000}, "num_replicas": 6},
        "S",
        invalid("stream metadata exceeds maximum size of 131072 bytes"),
    ),
    "replicas_before_pedantic": (
        {"name": "S", "num_replicas": 6, "max_msgs": -2, "pedantic": True},
        "S",
        invalid("maximum replicas is 5"),
    ),
    "negative_replicas_before_max_age": (
        {"name": "S", "num_replicas": -1, "max_age": -1},
        "S",
        error(400, 10133, "replicas count cannot be negative"),
    ),
    "pedantic_limit_order": (
        {
            "name": "S",
            "max_consumers": -2,
            "max_msg_size": -2,
            "max_bytes": -2,
            "max_msgs_per_subject": -2,
            "pedantic": True,
        },
        "S",
        pedantic("max_msgs_per_subject must be set to -1"),
    ),
    "pedantic_limits_before_max_age": (
        {"name": "S", "max_msgs": -2, "max_age": -1, "pedantic": True},
        "S",
        pedantic("max_msgs must be set to -1"),
    ),
    "max_age_before_window": (
        {"name": "S", "max_age": -1, "duplicate_window": -1},
        "S",
        invalid("max age can not be negative"),
    ),
    "pedantic_window_before_rollups": (
        {"name": "S", "max_age": SEC, "deny_purge": True, "allow_rollup_hdrs": True, "pedantic": True},
        "S",
        pedantic("duplicate window cannot be bigger than max age"),
    ),
    "window_before_rollups": (
        {"name": "S", "duplicate_window": 50 * MS, "deny_purge": True, "allow_rollup_hdrs": True},
        "S",
        invalid("duplicates window needs to be >= 100ms"),
    ),
    "rollups_before_per_subject_discard": (
        {"name": "S", "deny_purge": True, "allow_rollup_hdrs": True, "discard_new_per_subject": True},
        "S",
        invalid("roll-ups require the purge permission"),
    ),
    "rollups_before_marker_fix": (
        {"name": "S", "deny_purge": True, "allow_rollup_hdrs": True, "subject_delete_marker_ttl": SEC},
        "S",
        invalid("roll-ups require the purge permission"),
    ),
    "per_subject_discard_before_marker": (
        {"name": "S", "discard_new_per_subject": True, "subject_delete_marker_ttl": 5},
        "S",
        invalid("discard new per subject requires discard new policy to be set"),
    ),
    "marker_before_subjects": (
        {"name": "S", "subject_delete_marker_ttl": 5, "subjects": ["a..b"]},
        "S",
        invalid("subject delete marker TTL must be at least 1 second"),
    ),
    "subjects_checked_in_order": (
        {"name": "S", "subjects": ["a", "a", "a..b"]},
        "S",
        invalid('subject "a" overlaps with "a"'),
    ),
    "api_overlap_before_later_duplicate": (
        {"name": "S", "subjects": ["$JS.API.x", "a", "a"]},
        "S",
        invalid("subjects that overlap with jetstream api require no-ack to be true"),
    ),
    "capture_all_no_ack_before_replicas": (
        {"name": "S", "subjects": [">"], "num_replicas": 3},
        "S",
        invalid("capturing all subjects requires no-ack to be true"),
    ),
    "subjects_before_placement": (
        {"name": "S", "subjects": ["a..b"], "placement": {"preferred": "x"}},
        "S",
        invalid("invalid subject"),
    ),
    "placement_before_replicas_cluster": (
        {"name": "S", "placement": {"preferred": "x"}, "num_replicas": 2},
        "S",
        invalid("preferred server not permitted in placement"),
    ),
    "config_before_resources": (
        {"name": "S", "max_bytes": HUGE, "max_age": -1},
        "S",
        invalid("max age can not be negative"),
    ),
    "replicas_cluster_before_resources": (
        {"name": "S", "max_bytes": HUGE, "num_replicas": 2},
        "S",
        error(500, 10074, "replicas > 1 not supported in non-clustered mode"),
    ),
}


async def test_create_check_order(nc) -> None:
    got = {key: await create(nc, body, name=name) for key, (body, name, _) in ORDER_CASES.items()}
    assert got == {key: want for key, (_, _, want) in ORDER_CASES.items()}


async def test_create_check_order_with_existing_streams(nc) -> None:
    await must_create(nc, {"name": "P", "subjects": ["p.>"]})
    # replicas > 1 before "already in use"
    assert await create(nc, {"name": "P", "subjects": ["zz"], "num_replicas": 2}) == error(
        500, 10074, "replicas > 1 not supported in non-clustered mode"
    )
    # "already in use" before resources
    assert await create(nc, {"name": "P", "subjects": ["zz"], "max_bytes": HUGE}) == error(
        400, 10058, "stream name already in use with a different configuration"
    )
    # resources before overlap
    assert await create(nc, {"name": "A", "subjects": ["p.x"], "max_bytes": HUGE}) == error(
        500, 10047, "insufficient storage resources available"
    )
    # config errors before overlap
    assert await create(nc, {"name": "A", "subjects": ["p.x", "p.x"]}) == invalid('subject "p.x" overlaps with "p.x"')


# ---------------------------------------------------------------------------
# Subjects shared with other streams.
# ---------------------------------------------------------------------------

OVERLAP = error(400, 10065, "subjects overlap with an existing stream")


async def test_subjects_overlapping_another_stream(nc) -> None:
    await must_create(nc, {"name": "A", "subjects": ["a.>", "A"]})
    bodies = [
        {"name": "B", "subjects": ["a.b"]},
        {"name": "B", "subjects": ["a.*"]},
        {"name": "B", "subjects": ["x", "a.>"]},
        {"name": "B", "subjects": [">"], "no_ack": True},
        {"name": "B", "subjects": ["A"]},
    ]
    assert [await create(nc, body) for body in bodies] == [OVERLAP] * len(bodies)
    assert (await info(nc, "B"))["error"] == {"code": 404, "err_code": 10059, "description": "stream not found"}


async def test_default_subject_overlap(nc) -> None:
    # A stream without subjects listens on its name, which counts for overlaps too.
    await must_create(nc, {"name": "A", "subjects": ["B"]})
    assert await create(nc, {"name": "B"}) == OVERLAP
    assert await create(nc, {"name": "C", "subjects": ["b.>"]}) == created(config("C", subjects=["b.>"]))


# ---------------------------------------------------------------------------
# Metadata size accounting.
# ---------------------------------------------------------------------------


async def test_metadata_size_limit(nc) -> None:
    too_big = invalid("stream metadata exceeds maximum size of 131072 bytes")
    too_big_update = invalid("stream metadata exceeds maximum size of 131072 bytes", UPDATE)
    # create: user keys + values up to 131056 bytes (16 are taken by "_nats.req.level":"0")
    assert await create(nc, {"name": "S", "metadata": {"k": "v" * 131055}}) == created(
        config(metadata=meta(0, k="v" * 131055))
    )
    assert await create(nc, {"name": "T", "metadata": {"ab": "v" * 131055}}) == too_big
    # server keys sent by the client are dropped before the check on create
    assert (await create(nc, {"name": "T", "metadata": {"_nats.ver": "v" * 200_000}}))["config"]["metadata"] == meta()
    # update: checked once as sent (server keys included, 131072 max) and once as stored
    assert await update(nc, {"name": "S", "metadata": {"k": "v" * 131055}}) == updated(
        config(metadata=meta(0, k="v" * 131055))
    )
    assert await update(nc, {"name": "S", "metadata": {"k": "v" * 131056}}) == too_big_update
    assert await update(nc, {"name": "S", "metadata": {"_nats.ver": "v" * 131063}}) == updated(config())
    assert await update(nc, {"name": "S", "metadata": {"_nats.ver": "v" * 131064}}) == too_big_update


# ---------------------------------------------------------------------------
# Updates.
# ---------------------------------------------------------------------------

UPDATABLE = {
    "description": "d",
    "subjects": ["u.>", "v"],
    "max_consumers": 5,
    "max_msgs": 10,
    "max_bytes": 1000,
    "max_age": HOUR,
    "max_msgs_per_subject": 3,
    "max_msg_size": 100,
    "discard": "new",
    "no_ack": True,
    "duplicate_window": 10 * SEC,
    "allow_direct": True,
    "allow_rollup_hdrs": True,
    "consumer_limits": {"max_ack_pending": 5, "inactive_threshold": SEC},
    "metadata": {"team": "a"},
    "retention": "interest",
    "first_seq": 100,
}


async def test_update_changes_fields_and_replaces_the_whole_config(nc) -> None:
    await must_create(nc, {"name": "S"})
    expected = config(**{**UPDATABLE, "metadata": meta(0, team="a")})
    assert await update(nc, {"name": "S", **UPDATABLE}) == updated(expected)
    assert (await info(nc, "S"))["config"] == expected
    # an update is a whole config, not a patch: what is left out returns to its default
    assert await update(nc, {"name": "S"}) == updated(config())
    # first_seq is accepted and echoed on update, but does not move the stream
    assert await update(nc, {"name": "S", "first_seq": 7}) == updated(config(first_seq=7))
    # limits <-> interest is allowed both ways; the window follows a new max_age
    assert await update(nc, {"name": "S", "retention": "interest", "max_age": SEC}) == updated(
        config(retention="interest", max_age=SEC, duplicate_window=SEC)
    )
    assert await update(nc, {"name": "S", "max_age": HOUR}) == updated(config(max_age=HOUR))


async def test_update_enables_ttl_and_marker(nc) -> None:
    await must_create(nc, {"name": "S"})
    assert await update(nc, {"name": "S", "allow_msg_ttl": True}) == updated(
        config(allow_msg_ttl=True, metadata=meta(1))
    )
    with_marker = config(allow_msg_ttl=True, subject_delete_marker_ttl=SEC, allow_rollup_hdrs=True, metadata=meta(1))
    assert await update(nc, {"name": "S", "subject_delete_marker_ttl": SEC}) == updated(with_marker)
    # dropping the marker keeps TTLs only if they are still asked for; roll-ups go back off
    assert await update(nc, {"name": "S", "allow_msg_ttl": True}) == updated(
        config(allow_msg_ttl=True, metadata=meta(1))
    )


async def test_update_mirror_direct_without_mirror_is_accepted(nc) -> None:
    # create refuses it, update does not
    await must_create(nc, {"name": "S"})
    assert await update(nc, {"name": "S", "mirror_direct": True}) == updated(config(mirror_direct=True))


UPDATE_REJECT_CASES = {
    "storage": (
        {"name": "S"},
        {"name": "S", "storage": "memory"},
        "stream configuration update can not change storage type",
    ),
    "storage_back": (
        {"name": "S", "storage": "memory"},
        {"name": "S"},
        "stream configuration update can not change storage type",
    ),
    "to_workqueue": (
        {"name": "S"},
        {"name": "S", "retention": "workqueue"},
        "stream configuration update can not change retention policy to/from workqueue",
    ),
    "interest_to_workqueue": (
        {"name": "S", "retention": "interest"},
        {"name": "S", "retention": "workqueue"},
        "stream configuration update can not change retention policy to/from workqueue",
    ),
    "from_workqueue": (
        {"name": "S", "retention": "workqueue"},
        {"name": "S", "retention": "interest"},
        "stream configuration update can not change retention policy to/from workqueue",
    ),
    "deny_delete_cancel": (
        {"name": "S", "deny_delete": True},
        {"name": "S"},
        "stream configuration update can not cancel deny message deletes",
    ),
    "deny_purge_cancel": (
        {"name": "S", "deny_purge": True},
        {"name": "S"},
        "stream configuration update can not cancel deny purge",
    ),
    "ttl_disable": ({"name": "S", "allow_msg_ttl": True}, {"name": "S"}, "message TTL status can not be disabled"),
    "ttl_disable_by_dropping_marker": (
        {"name": "S", "subject_delete_marker_ttl": SEC},
        {"name": "S"},
        "message TTL status can not be disabled",
    ),
    "per_subject_discard": (
        {"name": "S"},
        {"name": "S", "discard_new_per_subject": True},
        "discard new per subject requires discard new policy to be set",
    ),
    "placement_preferred": (
        {"name": "S"},
        {"name": "S", "placement": {"preferred": "n1"}},
        "preferred server not permitted in placement",
    ),
    # order: storage -> retention -> unseal -> deny_delete -> deny_purge -> (mirror) -> message TTL
    "storage_before_retention": (
        {"name": "S", "storage": "memory", "retention": "workqueue", "deny_delete": True},
        {"name": "S", "retention": "interest"},
        "stream configuration update can not change storage type",
    ),
    "retention_before_deny_delete": (
        {"name": "S", "retention": "workqueue", "deny_delete": True},
        {"name": "S"},
        "stream configuration update can not change retention policy to/from workqueue",
    ),
    "deny_delete_before_deny_purge": (
        {"name": "S", "deny_delete": True, "deny_purge": True},
        {"name": "S"},
        "stream configuration update can not cancel deny message deletes",
    ),
    "deny_purge_before_ttl": (
        {"name": "S", "deny_purge": True, "allow_msg_ttl": True},
        {"name": "S"},
        "stream configuration update can not cancel deny purge",
    ),
}


async def test_update_rejected(nc) -> None:
    got, unchanged = {}, {}
    for i, (key, (base, change, _)) in enumerate(UPDATE_REJECT_CASES.items()):
        name = f"U{i}"
        before = (await must_create(nc, renamed(base, name)))["config"]
        got[key] = await update(nc, renamed(change, name))
        unchanged[key] = (await info(nc, name))["config"] == before
    assert got == {key: invalid(description, UPDATE) for key, (_, _, description) in UPDATE_REJECT_CASES.items()}
    assert all(unchanged.values()), unchanged


async def test_update_replicas(nc) -> None:
    await must_create(nc, {"name": "S"})
    assert await update(nc, {"name": "S", "num_replicas": 3}) == error(
        500, 10074, "replicas > 1 not supported in non-clustered mode", UPDATE
    )
    assert await update(nc, {"name": "S", "num_replicas": -1}) == error(
        400, 10133, "replicas count cannot be negative", UPDATE
    )
    assert await update(nc, {"name": "S", "num_replicas": 6}) == invalid("maximum replicas is 5", UPDATE)
    # replicas are checked before storage
    assert await update(nc, {"name": "S", "num_replicas": 2, "storage": "memory"}) == error(
        500, 10074, "replicas > 1 not supported in non-clustered mode", UPDATE
    )
    assert await update(nc, {"name": "S", "num_replicas": 0}) == updated(config())


async def test_update_lookup_errors_and_their_order(nc) -> None:
    await must_create(nc, {"name": "S"})
    not_found = error(404, 10059, "stream not found", UPDATE)
    mismatch = error(400, 10056, "stream name in subject does not match request", UPDATE)
    assert await update(nc, {"name": "Q"}) == not_found
    assert await update(nc, {"name": "S"}, name="Q") == mismatch
    # the body is validated first, before the name comparison and the lookup
    assert await update(nc, {"name": "Q", "max_age": -1}) == invalid("max age can not be negative", UPDATE)
    assert await update(nc, {"name": "S", "max_age": -1}, name="Q") == invalid("max age can not be negative", UPDATE)
    assert await update(nc, {"name": "S", "max_msgs": -2, "pedantic": True}) == pedantic(
        "max_msgs must be set to -1", UPDATE
    )
    assert await update(nc, {"name": "S", "bogus": 1}) == bad_json('json: unknown field "bogus"', UPDATE)
    # storage/retention rules come before resource limits
    assert await update(nc, {"name": "S", "max_bytes": HUGE, "storage": "memory"}) == invalid(
        "stream configuration update can not change storage type", UPDATE
    )
    assert await update(nc, {"name": "S", "max_bytes": HUGE}) == error(
        500, 10047, "insufficient storage resources available", UPDATE
    )


async def test_update_subjects_overlapping_another_stream(nc) -> None:
    await must_create(nc, {"name": "A", "subjects": ["a.>"]})
    await must_create(nc, {"name": "B", "subjects": ["b.>"]})
    assert await update(nc, {"name": "B", "subjects": ["b.>", "a.q"]}) == error(
        400, 10065, "subjects overlap with an existing stream", UPDATE
    )
    # resources are checked before the overlap; config errors before both
    assert await update(nc, {"name": "B", "subjects": ["a.q"], "max_bytes": HUGE}) == error(
        500, 10047, "insufficient storage resources available", UPDATE
    )
    assert await update(nc, {"name": "B", "subjects": ["a..b", "a.q"]}) == invalid("invalid subject", UPDATE)
    assert (await info(nc, "B"))["config"] == config("B", subjects=["b.>"])
    # moving onto subjects nobody else has is fine, and the old ones are free again
    assert await update(nc, {"name": "B", "subjects": ["c.>"]}) == updated(config("B", subjects=["c.>"]))
    assert await create(nc, {"name": "C", "subjects": ["b.>"]}) == created(config("C", subjects=["b.>"]))


async def test_update_seal(nc) -> None:
    await must_create(nc, {"name": "S", "max_age": SEC})
    sealed = config(sealed=True, discard="new", deny_delete=True, deny_purge=True, duplicate_window=SEC)
    # sealing forces max_age 0, discard new, deny delete/purge and no roll-ups (the window was fixed before)
    body = {"name": "S", "sealed": True, "max_age": SEC, "allow_rollup_hdrs": True, "discard": "old"}
    assert await update(nc, body) == updated(sealed)
    # the stored deny flags must be repeated on later updates
    assert await update(nc, {"name": "S", "sealed": True}) == invalid(
        "stream configuration update can not cancel deny message deletes", UPDATE
    )
    assert await update(nc, {"name": "S", "deny_delete": True, "deny_purge": True}) == invalid(
        "stream configuration update can not unseal a sealed stream", UPDATE
    )
    keep = {"name": "S", "sealed": True, "deny_delete": True, "deny_purge": True}
    assert await update(nc, {**keep, "max_msgs": 5, "description": "x"}) == updated(
        config(sealed=True, discard="new", deny_delete=True, deny_purge=True, max_msgs=5, description="x")
    )
    assert await update(nc, {**keep, "deny_delete": False}) == invalid(
        "stream configuration update can not cancel deny message deletes", UPDATE
    )


async def test_update_seal_overrides_marker_rollups(nc) -> None:
    await must_create(nc, {"name": "S"})
    body = {"name": "S", "sealed": True, "subject_delete_marker_ttl": SEC}
    assert await update(nc, body) == updated(
        config(
            sealed=True,
            discard="new",
            deny_delete=True,
            deny_purge=True,
            allow_msg_ttl=True,
            subject_delete_marker_ttl=SEC,
            metadata=meta(1),
        )
    )


def _state(messages: int, size: int, first: int, last: int, subjects: int) -> dict:
    return {
        "messages": messages,
        "bytes": size,
        "first_seq": first,
        "first_ts": "<ts>",
        "last_seq": last,
        "last_ts": "<ts>",
        "num_subjects": subjects,
        "consumer_count": 0,
    }


async def test_update_lowering_limits_drops_messages(nc) -> None:
    await must_create(nc, {"name": "L", "subjects": ["l.*"]})
    for i in range(10):
        assert await publish(nc, f"l.{i % 3}", b"x" * 10) == {"stream": "L", "seq": i + 1}
    assert await state(nc, "L") == _state(10, 430, 1, 10, 3)
    body = {"name": "L", "subjects": ["l.*"]}
    reply = await update(nc, {**body, "max_msgs": 6})
    assert reply == updated(config("L", subjects=["l.*"], max_msgs=6), _state(6, 258, 5, 10, 3))
    reply = await update(nc, {**body, "max_msgs_per_subject": 1})
    assert reply == updated(config("L", subjects=["l.*"], max_msgs_per_subject=1), _state(3, 129, 8, 10, 3))
    reply = await update(nc, {**body, "max_bytes": 100})
    assert reply == updated(config("L", subjects=["l.*"], max_bytes=100), _state(2, 86, 9, 10, 2))
    assert await state(nc, "L") == _state(2, 86, 9, 10, 2)


async def test_update_lowering_limits_with_discard_new_keeps_messages(nc) -> None:
    await must_create(nc, {"name": "N", "subjects": ["n"], "max_msgs": 2, "discard": "new"})
    assert await publish(nc, "n") == {"stream": "N", "seq": 1}
    assert await publish(nc, "n") == {"stream": "N", "seq": 2}
    assert await publish(nc, "n") == {
        "error": {"code": 503, "err_code": 10077, "description": "maximum messages exceeded"},
        "stream": "N",
        "seq": 0,
    }
    reply = await update(nc, {"name": "N", "subjects": ["n"], "max_msgs": 1, "discard": "new"})
    assert reply == updated(config("N", subjects=["n"], max_msgs=1, discard="new"), _state(2, 62, 1, 2, 1))


async def test_update_removing_a_subject_keeps_messages(nc) -> None:
    await must_create(nc, {"name": "M", "subjects": ["m"], "max_msg_size": 5})
    assert await publish(nc, "m", b"123456") == {
        "error": {"code": 400, "err_code": 10054, "description": "message size exceeds maximum allowed"},
        "stream": "M",
        "seq": 0,
    }
    assert await publish(nc, "m", b"12345") == {"stream": "M", "seq": 1}
    assert await update(nc, {"name": "M", "subjects": ["m2"]}) == updated(
        config("M", subjects=["m2"]), _state(1, 36, 1, 1, 1)
    )


async def test_update_consumer_limits_checked_against_consumers(nc) -> None:
    await must_create(nc, {"name": "Q"})
    reply = await api(
        nc,
        "$JS.API.CONSUMER.CREATE.Q.C1",
        {"stream_name": "Q", "config": {"durable_name": "C1", "ack_policy": "explicit", "inactive_threshold": MIN}},
    )
    assert reply["config"]["max_ack_pending"] == 1000, reply
    violates = error(500, 10069, "change to limits violates consumers: C1", UPDATE)
    assert await update(nc, {"name": "Q", "consumer_limits": {"max_ack_pending": 10}}) == violates
    assert await update(nc, {"name": "Q", "consumer_limits": {"inactive_threshold": SEC}}) == violates
    limits = {"max_ack_pending": 1000, "inactive_threshold": MIN}
    reply = await update(nc, {"name": "Q", "consumer_limits": limits})
    assert reply == updated(config("Q", consumer_limits=limits), {**EMPTY_STATE, "consumer_count": 1})


# ---------------------------------------------------------------------------
# The 2.10-2.14 stream features: what the create and update replies say
# ---------------------------------------------------------------------------

FEATURE_ECHO_CASES = {
    "mirror": (
        {"name": "S", "mirror": {"name": "ORIGIN"}},
        config(subjects=OMIT, duplicate_window=OMIT, mirror={"name": "ORIGIN"}),
        {"mirror": {"name": "ORIGIN", "lag": 0, "active": -1}},
    ),
    "sources": (
        {"name": "S", "sources": [{"name": "ORIGIN"}]},
        config(subjects=OMIT, duplicate_window=OMIT, sources=[{"name": "ORIGIN"}]),
        {"sources": [{"name": "ORIGIN", "lag": 0, "active": -1}]},
    ),
    "sources_with_subjects": (
        {"name": "S", "subjects": ["s"], "sources": [{"name": "ORIGIN"}]},
        config(subjects=["s"], duplicate_window=OMIT, sources=[{"name": "ORIGIN"}]),
        {"sources": [{"name": "ORIGIN", "lag": 0, "active": -1}]},
    ),
    "republish": (
        {"name": "S", "republish": {"src": "S", "dest": "rp.x", "headers_only": True}},
        config(republish={"src": "S", "dest": "rp.x", "headers_only": True}),
        {},
    ),
    "republish_empty_source": (
        {"name": "S", "republish": {"dest": "rp.>"}},
        config(republish={"src": ">", "dest": "rp.>"}),
        {},
    ),
    "subject_transform": (
        {"name": "S", "subjects": ["a.*"], "subject_transform": {"src": "a.*", "dest": "b.{{wildcard(1)}}"}},
        config(subjects=["a.*"], subject_transform={"src": "a.*", "dest": "b.{{wildcard(1)}}"}),
        {},
    ),
    "allow_msg_counter": (
        {"name": "S", "allow_msg_counter": True},
        config(allow_msg_counter=True, metadata=meta(2)),
        {},
    ),
    "allow_atomic": ({"name": "S", "allow_atomic": True}, config(allow_atomic=True, metadata=meta(2)), {}),
    "allow_msg_schedules": (
        {"name": "S", "allow_msg_schedules": True},
        config(allow_msg_schedules=True, allow_rollup_hdrs=True, metadata=meta(2)),
        {},
    ),
    "allow_batched": ({"name": "S", "allow_batched": True}, config(allow_batched=True, metadata=meta(4)), {}),
    "persist_mode_async": ({"name": "S", "persist_mode": "async"}, config(persist_mode="async", metadata=meta(2)), {}),
    "compression_s2": ({"name": "S", "compression": "s2"}, config(compression="s2"), {}),
}


async def test_feature_echo(nc) -> None:
    got, wanted = {}, {}
    for i, (key, (body, expected, extra)) in enumerate(FEATURE_ECHO_CASES.items()):
        name = f"F{i}"
        got[key] = await create(nc, renamed(body, name))
        wanted[key] = renamed(created(expected, **extra), name)
    assert got == wanted


FEATURE_ERROR_CASES = {
    "mirror_first_seq": (
        {"mirror": {"name": "X"}, "first_seq": 3},
        error(400, 10143, "stream mirrors can not have first sequence configured"),
    ),
    "mirror_subjects": (
        {"mirror": {"name": "X"}, "subjects": ["x"]},
        error(400, 10034, "stream mirrors can not contain subjects"),
    ),
    "mirror_sources": (
        {"mirror": {"name": "X"}, "sources": [{"name": "Y"}]},
        error(400, 10031, "stream mirrors can not also contain other sources"),
    ),
    "mirror_counter": (
        {"mirror": {"name": "X"}, "allow_msg_counter": True},
        error(400, 10173, "stream mirrors can not also calculate counters"),
    ),
    "mirror_atomic": (
        {"mirror": {"name": "X"}, "allow_atomic": True},
        error(400, 10198, "stream mirrors can not also use atomic publishing"),
    ),
    "mirror_batched": (
        {"mirror": {"name": "X"}, "allow_batched": True},
        error(400, 10209, "stream mirrors can not also use batch publishing"),
    ),
    "mirror_schedules": (
        {"mirror": {"name": "X"}, "allow_msg_schedules": True},
        error(400, 10186, "stream mirrors can not also schedule messages"),
    ),
    "mirror_marker_ttl": (
        {"mirror": {"name": "X"}, "subject_delete_marker_ttl": SEC},
        invalid("subject delete markers forbidden on mirrors"),
    ),
    "mirror_name": ({"mirror": {"name": "a.b"}}, error(400, 10142, "mirrored stream name is invalid")),
    "mirror_of_itself": ({"mirror": {"name": "S"}}, invalid("detected cycle")),
    "sources_duplicate": (
        {"sources": [{"name": "X"}, {"name": "X"}]},
        error(400, 10140, "duplicate source configuration detected"),
    ),
    "sources_name": ({"sources": [{"name": ""}]}, error(400, 10141, "sourced stream name is invalid")),
    "sources_schedules": (
        {"sources": [{"name": "X"}], "allow_msg_schedules": True},
        error(400, 10187, "stream source can not also schedule messages"),
    ),
    "sources_filter": (
        {"sources": [{"name": "X", "filter_subject": "a..b"}]},
        error(500, 10049, "subject filter 'a..b' for the source: invalid subject"),
    ),
    "source_of_itself": ({"sources": [{"name": "S"}]}, invalid("detected cycle")),
    "counter_discard_new": (
        {"allow_msg_counter": True, "discard": "new"},
        invalid("counter stream cannot use discard new"),
    ),
    "counter_ttl": (
        {"allow_msg_counter": True, "allow_msg_ttl": True},
        invalid("counter stream cannot use message TTLs"),
    ),
    "counter_schedules": (
        {"allow_msg_counter": True, "allow_msg_schedules": True},
        invalid("counter stream cannot use message schedules"),
    ),
    "counter_retention": (
        {"allow_msg_counter": True, "retention": "interest"},
        invalid("counter stream can only use limits retention"),
    ),
    "schedules_discard_new": (
        {"allow_msg_schedules": True, "discard": "new"},
        invalid("message scheduling cannot use discard new"),
    ),
    "schedules_pedantic_rollups": (
        {"allow_msg_schedules": True, "pedantic": True},
        invalid("message scheduling cannot be set if roll-ups are disabled"),
    ),
    "async_memory": (
        {"persist_mode": "async", "storage": "memory"},
        invalid("async persist mode is only supported on file storage"),
    ),
    "async_atomic": (
        {"persist_mode": "async", "allow_atomic": True},
        invalid("async persist mode is not supported with atomic batch publish"),
    ),
    "republish_cycle": (
        {"republish": {"src": "S", "dest": "S"}},
        invalid("stream configuration for republish destination forms a cycle"),
    ),
    "republish_transform": (
        {"republish": {"src": "*", "dest": "r.>"}},
        invalid("stream configuration for republish with transform from '*' to 'r.>' not valid"),
    ),
    "republish_pedantic_source": (
        {"republish": {"dest": "r.>"}, "pedantic": True},
        pedantic("republish source can not be empty"),
    ),
    "transform_source": (
        {"subject_transform": {"src": "a..b", "dest": "x"}},
        error(400, 10155, "stream transform source: invalid subject a..b"),
    ),
    "transform_destination": (
        {"subjects": ["a.*"], "subject_transform": {"src": "a.*", "dest": "b.{{wildcard(2)}}"}},
        error(
            400,
            10156,
            "stream transform: invalid mapping destination: wildcard index out of range in {{wildcard(2)}}: [2]",
        ),
    ),
}


async def test_feature_errors(nc) -> None:
    got = {key: await create(nc, {"name": "S", **body}) for key, (body, _) in FEATURE_ERROR_CASES.items()}
    assert got == {key: want for key, (_, want) in FEATURE_ERROR_CASES.items()}


async def test_mirror_direct_follows_origin(nc) -> None:
    await must_create(nc, {"name": "ORIGIN", "allow_direct": True})
    assert await create(nc, {"name": "M", "mirror": {"name": "ORIGIN"}, "pedantic": True}) == pedantic(
        "origin stream has direct get set, mirror has it disabled"
    )
    reply = await create(nc, {"name": "M", "mirror": {"name": "ORIGIN"}})
    assert reply["config"]["mirror_direct"] is True and reply["config"]["allow_direct"] is False


async def test_feature_update_rules(nc) -> None:
    def rejected(description: str) -> dict:
        return invalid(description, UPDATE)

    cases = [
        (
            {"name": "S", "allow_msg_counter": True},
            {"name": "S"},
            rejected("stream configuration update can not change message counter setting"),
        ),
        (
            {"name": "S", "persist_mode": "async"},
            {"name": "S"},
            rejected("stream configuration update can not change persist mode"),
        ),
        (
            {"name": "S", "allow_msg_schedules": True},
            {"name": "S", "allow_rollup_hdrs": True},
            rejected("message schedules can not be disabled"),
        ),
        (
            {"name": "S", "deny_purge": True},
            {"name": "S", "mirror": {"name": "X"}},
            rejected("stream configuration update can not cancel deny purge"),
        ),
        # message TTL -> counter -> schedules -> persist mode
        (
            {"name": "S", "allow_msg_ttl": True},
            {"name": "S", "allow_msg_counter": True},
            rejected("message TTL status can not be disabled"),
        ),
        (
            {"name": "S", "allow_msg_counter": True},
            {"name": "S", "persist_mode": "async"},
            rejected("stream configuration update can not change message counter setting"),
        ),
        (
            {"name": "S", "allow_msg_schedules": True},
            {"name": "S", "persist_mode": "async"},
            rejected("message schedules can not be disabled"),
        ),
        (
            {"name": "S"},
            {"name": "S", "allow_msg_schedules": True},
            updated(config(allow_msg_schedules=True, allow_rollup_hdrs=True, metadata=meta(2))),
        ),
        (
            {"name": "S"},
            {"name": "S", "compression": "s2", "allow_atomic": True, "allow_batched": True},
            updated(config(compression="s2", allow_atomic=True, allow_batched=True, metadata=meta(4))),
        ),
        # sources without subjects: the stream stops listening on its name
        (
            {"name": "S"},
            {"name": "S", "sources": [{"name": "X"}]},
            updated(config(subjects=OMIT, duplicate_window=OMIT, sources=[{"name": "X"}])),
        ),
    ]
    for i, (base, change, want) in enumerate(cases):
        name = f"U{i}"
        await must_create(nc, renamed(base, name))
        got = await update(nc, renamed(change, name))
        got.pop("sources", None)  # source info (lag/active) of the sources case
        assert got == renamed(want, name), (base, change)


async def test_update_cannot_add_mirror_counter_or_async_persist(nc) -> None:
    await must_create(nc, {"name": "S"})
    assert await update(nc, {"name": "S", "mirror": {"name": "X"}}) == error(
        400, 10055, "stream mirror configuration can not be updated", UPDATE
    )
    assert await update(nc, {"name": "S", "allow_msg_counter": True}) == invalid(
        "stream configuration update can not change message counter setting", UPDATE
    )
    assert await update(nc, {"name": "S", "persist_mode": "async"}) == invalid(
        "stream configuration update can not change persist mode", UPDATE
    )
    assert (await info(nc, "S"))["config"] == config()
